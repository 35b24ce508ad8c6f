// The output registry (report/outputs.hpp): each subject's formats and file names are unique,
// every entry renders what its named writer renders, and the CLI's --format choices are the
// registry's printable formats.
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyze/merge.hpp"
#include "report/compare.hpp"
#include "report/fleet.hpp"
#include "report/merge.hpp"
#include "report/outputs.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::ElementsAre;

template <class Subject>
void expect_unique(std::span<const detail::Output<Subject>> outputs) {
  std::set<std::string_view> formats;
  std::set<std::string_view> files;
  for (const detail::Output<Subject>& o : outputs) {
    EXPECT_TRUE(formats.insert(o.format).second) << o.format;
    EXPECT_TRUE(files.insert(o.file_name).second) << o.file_name;
    EXPECT_FALSE(o.file_name.empty()) << o.format;
    EXPECT_NE(o.render, nullptr) << o.format;
    EXPECT_EQ(detail::find_output(outputs, o.format), &o);
  }
  EXPECT_EQ(detail::find_output(outputs, "no-such-format"), nullptr);
}

TEST(Outputs, FormatsAndFileNamesAreUniquePerSubject) {
  expect_unique(detail::profile_outputs());
  expect_unique(detail::comparison_outputs());
  expect_unique(detail::merge_outputs());
  expect_unique(detail::fleet_outputs());
  expect_unique(detail::record_outputs());
}

TEST(Outputs, PrintableFormatsAreWhatTheCommandsOffer) {
  EXPECT_THAT(detail::printable_formats(detail::profile_outputs()), ElementsAre("table", "json", "csv", "sampling-csv"));
  EXPECT_THAT(detail::printable_formats(detail::comparison_outputs()), ElementsAre("table", "json"));
  EXPECT_THAT(detail::printable_formats(detail::merge_outputs()), ElementsAre("table", "json", "html"));
  EXPECT_THAT(detail::printable_formats(detail::fleet_outputs()), ElementsAre("table", "json"));
}

TEST(Outputs, EachProfileEntryRendersItsWriter) {
  const Profile p = test::synthetic_profile();
  ProfileTableOptions table;
  table.top = 3;
  const detail::ProfileSubject subject{p, table};
  const auto render = [&](std::string_view format) {
    return detail::render_output(*detail::find_output(detail::profile_outputs(), format), subject);
  };
  EXPECT_EQ(render("table"), profile_table(p, table));
  EXPECT_EQ(render("json"), profile_to_json(p));
  EXPECT_EQ(render("csv"), profile_csv(p));
  EXPECT_EQ(render("svg"), roofline_svg(p));
  EXPECT_EQ(render("trace"), chrome_trace(p));
  EXPECT_EQ(render("html"), html_report(p));
  // Grouped: JSON and CSV follow the table's grouping.
  ProfileTableOptions by_op;
  by_op.by = ProfileGrouping::op;
  const detail::ProfileSubject grouped{p, by_op};
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::profile_outputs(), "json"), grouped), profile_to_json(p, ProfileGrouping::op, 1));
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::profile_outputs(), "csv"), grouped), profile_groups_csv(p, ProfileGrouping::op, 1));
}

TEST(Outputs, ComparisonAndMergeEntriesRenderTheirWriters) {
  const Profile a = test::synthetic_profile();
  const Profile b = test::synthetic_profile();
  const detail::ProfileComparison c = detail::compare_profiles(a, b);
  const detail::ComparisonSubject cs{c, b, 5};
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::comparison_outputs(), "table"), cs), detail::comparison_table(c, 5));
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::comparison_outputs(), "json"), cs), detail::comparison_json(c));
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::comparison_outputs(), "html"), cs), detail::comparison_html(c, b));
  std::vector<detail::RankProfile> ranks{{"r0.json", a}, {"r1.json", b}};
  ranks[0].profile.rank = 0;
  ranks[1].profile.rank = 1;
  const detail::MergedRanks m = detail::merge_ranks(std::move(ranks));
  const detail::MergeSubject ms{m, 0};
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::merge_outputs(), "table"), ms), detail::merged_table(m, 0));
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::merge_outputs(), "json"), ms), detail::merged_json(m));
  EXPECT_EQ(detail::render_output(*detail::find_output(detail::merge_outputs(), "html"), ms), detail::merged_html(m));
}

}  // namespace
}  // namespace hwprof
