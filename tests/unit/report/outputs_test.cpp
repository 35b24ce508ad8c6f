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
void expect_unique(std::span<const report::Output<Subject>> outputs) {
  std::set<std::string_view> formats;
  std::set<std::string_view> files;
  for (const report::Output<Subject>& o : outputs) {
    EXPECT_TRUE(formats.insert(o.format).second) << o.format;
    EXPECT_TRUE(files.insert(o.file_name).second) << o.file_name;
    EXPECT_FALSE(o.file_name.empty()) << o.format;
    EXPECT_NE(o.render, nullptr) << o.format;
    EXPECT_EQ(report::find_output(outputs, o.format), &o);
  }
  EXPECT_EQ(report::find_output(outputs, "no-such-format"), nullptr);
}

TEST(Outputs, FormatsAndFileNamesAreUniquePerSubject) {
  expect_unique(report::profile_outputs());
  expect_unique(report::comparison_outputs());
  expect_unique(report::merge_outputs());
  expect_unique(report::fleet_outputs());
  expect_unique(report::record_outputs());
}

TEST(Outputs, PrintableFormatsAreWhatTheCommandsOffer) {
  EXPECT_THAT(report::printable_formats(report::profile_outputs()), ElementsAre("table", "json", "csv", "sampling-csv"));
  EXPECT_THAT(report::printable_formats(report::comparison_outputs()), ElementsAre("table", "json"));
  EXPECT_THAT(report::printable_formats(report::merge_outputs()), ElementsAre("table", "json", "html"));
  EXPECT_THAT(report::printable_formats(report::fleet_outputs()), ElementsAre("table", "json"));
}

TEST(Outputs, EachProfileEntryRendersItsWriter) {
  const Profile p = test::synthetic_profile();
  ProfileTableOptions table;
  table.top = 3;
  const report::ProfileSubject subject{p, table};
  const auto render = [&](std::string_view format) {
    return report::render_output(*report::find_output(report::profile_outputs(), format), subject);
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
  const report::ProfileSubject grouped{p, by_op};
  EXPECT_EQ(report::render_output(*report::find_output(report::profile_outputs(), "json"), grouped), profile_to_json(p, ProfileGrouping::op, 1));
  EXPECT_EQ(report::render_output(*report::find_output(report::profile_outputs(), "csv"), grouped), profile_groups_csv(p, ProfileGrouping::op, 1));
}

TEST(Outputs, ComparisonAndMergeEntriesRenderTheirWriters) {
  const Profile a = test::synthetic_profile();
  const Profile b = test::synthetic_profile();
  const analysis::ProfileComparison c = analysis::compare_profiles(a, b);
  const report::ComparisonSubject cs{c, b, 5};
  EXPECT_EQ(report::render_output(*report::find_output(report::comparison_outputs(), "table"), cs), report::comparison_table(c, 5));
  EXPECT_EQ(report::render_output(*report::find_output(report::comparison_outputs(), "json"), cs), report::comparison_json(c));
  EXPECT_EQ(report::render_output(*report::find_output(report::comparison_outputs(), "html"), cs), report::comparison_html(c, b));
  std::vector<analysis::RankProfile> ranks{{"r0.json", a}, {"r1.json", b}};
  ranks[0].profile.rank = 0;
  ranks[1].profile.rank = 1;
  const session::MergedRanks m = analysis::merge_ranks(std::move(ranks));
  const report::MergeSubject ms{m, 0};
  EXPECT_EQ(report::render_output(*report::find_output(report::merge_outputs(), "table"), ms), report::merged_table(m, 0));
  EXPECT_EQ(report::render_output(*report::find_output(report::merge_outputs(), "json"), ms), report::merged_json(m));
  EXPECT_EQ(report::render_output(*report::find_output(report::merge_outputs(), "html"), ms), report::merged_html(m));
}

}  // namespace
}  // namespace hwprof
