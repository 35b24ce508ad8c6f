// The profile table and CSV: sources stated in the header, unavailable counters as "n/a"
// with one footnote each (never 0), sorting, top K, the model total, and a CSV whose every
// row has the header's columns.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/engine/report.hpp"
#include "hwprof/session.hpp"
#include "synthetic_profile.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using test::lines_of;

// The line of the main table whose first column is `name`.
std::string row_of(const std::string& table, const std::string& name) {
  for (const std::string& line : lines_of(table)) {
    if (line.rfind(name + " ", 0) == 0) return line;
  }
  return {};
}

// The line of the main table whose first column is `name`, and the note line "[k] kind: ...".
std::size_t line_index(const std::vector<std::string>& lines, const std::string& start) {
  return static_cast<std::size_t>(std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; }) -
                                  lines.begin());
}

TEST(ProfileTable, HeaderSaysWhereEveryNumberComesFrom) {
  const std::string t = profile_table(test::synthetic_profile());
  EXPECT_THAT(t, HasSubstr("hwprof profile: synthetic-net, batch 4, train (sgd), 2 threads: "));
  EXPECT_THAT(t, HasSubstr("Measured: Time = median of 20 iterations after 5 warm-up runs"));
  EXPECT_THAT(t, HasSubstr("Analytic: FLOPs"));
  EXPECT_THAT(t, HasSubstr("Bytes: analytic minimum traffic (all 16 layers)"));
  EXPECT_THAT(t, HasSubstr("ceilings measured by `hwprof calibrate` 2026-11-20T10:00:00Z"));
  EXPECT_THAT(t, HasSubstr("Eff. = achieved / attainable"));
  EXPECT_THAT(t, HasSubstr("Roof ms = Time x Eff."));
}

TEST(ProfileTable, TheFirstLineSaysTheTimeAndTheTimeToWin) {
  const Profile p = test::synthetic_profile({.train = false});
  const std::string first = lines_of(profile_table(p)).front();
  const double total = p.total.time_ms.median;
  const double win = total * (1 - p.total.roofline->efficiency);
  EXPECT_THAT(first, HasSubstr(fmt::format("{:.3f} ms per pass", total)));
  EXPECT_THAT(first, HasSubstr(fmt::format("{:.3f} ms of it", win).substr(0, 6))) << first;
  EXPECT_THAT(first, HasSubstr("to win at the roofs"));
}

TEST(ProfileTable, WarningsHintsAndUnavailableCountersAreNumberedOnceBeforeTheTable) {
  Profile p = test::synthetic_profile();
  p.warnings = {"the calibration was measured while other processes ran", "2 memory-side layers run above 110% of their memory roof"};
  p.hints = {"unset OPENBLAS_CORETYPE", std::string(kUnavailableEventsHint) + "LLC-load-misses (unsupported: no PMU)"};
  const std::string t = profile_table(p);
  const std::vector<std::string> lines = lines_of(t);
  EXPECT_LT(line_index(lines, "[1] WARNING: the calibration was measured while other processes ran"), line_index(lines, "Layer "));
  EXPECT_LT(line_index(lines, "[2] WARNING: 2 memory-side layers"), line_index(lines, "Layer "));
  EXPECT_LT(line_index(lines, "[3] hint: unset OPENBLAS_CORETYPE"), line_index(lines, "Layer "));
  EXPECT_LT(line_index(lines, "[4] not counted: LLC-load-misses: unsupported - this virtual machine exposes no hardware PMU"),
            line_index(lines, "Layer "));
  EXPECT_EQ(test::occurrences(t, "unset OPENBLAS_CORETYPE"), 1u) << "said once";
  EXPECT_EQ(test::occurrences(t, "exposes no hardware PMU"), 1u) << "the reason is said once, and the session's own list of it is not repeated";
  // The counter table refers to the note by its number.
  const std::string counters = t.substr(t.find("Counters per call"));
  EXPECT_EQ(test::occurrences(counters, "n/a[4]"), 16u) << "the 15 layers shown by default (and the total) point at note 4";
}

TEST(ProfileTable, RowsAreTheLayersWithTheMostTimeToWinWithHeadroomAndWhy) {
  const Profile p = test::synthetic_profile({.train = false});
  const std::string t = profile_table(p);
  EXPECT_THAT(t, HasSubstr("most time to win first"));
  // conv1: 2.0 ms at 80% of the GEMM roof → 1.6 ms at the roof, 0.4 ms to win.
  const std::string conv = row_of(t, "conv1");
  EXPECT_THAT(conv, HasSubstr("2.000"));
  EXPECT_THAT(conv, HasSubstr("±0.0500"));
  EXPECT_THAT(conv, HasSubstr("80.0%"));
  EXPECT_THAT(conv, HasSubstr("1.600"));
  EXPECT_THAT(conv, HasSubstr("0.4000"));
  EXPECT_THAT(conv, HasSubstr("compute below roof"));
  // Sorted by time to win: every shown row's Win ms is at least the next one's.
  std::vector<double> wins;
  for (const LayerProfile& l : p.layers) {
    if (l.roofline) wins.push_back(l.time_ms.median * (1 - std::min(1.0, l.roofline->efficiency)));
  }
  std::sort(wins.rbegin(), wins.rend());
  const std::vector<std::string> lines = lines_of(t);
  const std::size_t first_row = line_index(lines, "Layer ") + 2;
  EXPECT_THAT(lines[first_row], HasSubstr(fmt::format("{:.3f}", wins[0]).substr(0, 4))) << lines[first_row];
  // The cause of every row shown, with what to try, once per cause.
  EXPECT_THAT(t, HasSubstr("Why, and what to try"));
  EXPECT_EQ(test::occurrences(t, "- compute below roof: "), 1u);
  EXPECT_THAT(t, HasSubstr("Try: a better kernel for this shape"));
  EXPECT_THAT(row_of(t, "model total"), HasSubstr("100.0%"));
}

TEST(ProfileTable, ShowsFifteenRowsByDefaultAndEveryRowWithTopZero) {
  const Profile p = test::synthetic_profile({.train = false, .extra_layers = 20});
  const std::string t = profile_table(p);
  EXPECT_THAT(t, HasSubstr("Top 15 of 29 layers"));
  EXPECT_THAT(t, HasSubstr("... 14 more layers hold"));
  EXPECT_THAT(t, HasSubstr("--all shows every row"));
  const std::string all = profile_table(p, {.top = 0});
  EXPECT_THAT(all, HasSubstr("All 29 of 29 layers"));
  for (const LayerProfile& l : p.layers) {
    if (l.name.find('<') != std::string::npos) continue;
    EXPECT_THAT(all, HasSubstr("\n" + l.name + " "));
  }
}

TEST(ProfileTable, UnavailableCountersReadNaPointingAtTheirNoteNeverZero) {
  const Profile p = test::synthetic_profile();
  const std::string t = profile_table(p, {.top = 0});
  const std::size_t counters_at = t.find("Counters per call");
  ASSERT_NE(counters_at, std::string::npos) << "cycles counted: a hardware counter, so the table is shown";
  const std::string counters = t.substr(counters_at);
  // note [1] is the hint, [2] the unavailable LLC misses
  EXPECT_EQ(test::occurrences(counters, "n/a[2]"), p.layers.size() + 1);
  EXPECT_EQ(test::occurrences(t, "[2] not counted: LLC-load-misses: unsupported - this virtual machine exposes no hardware PMU"), 1u);
  EXPECT_EQ(test::occurrences(t, "DRAM GB/s: not available - needs the uncore CAS events"), 1u);
  EXPECT_THAT(counters, HasSubstr("*"));
  EXPECT_THAT(t, HasSubstr("* instructions: multiplexed, counted 50.0% of the time at worst"));
  for (const std::string& line : lines_of(counters)) {
    if (line.find("n/a") == std::string::npos) continue;
    EXPECT_THAT(line, Not(HasSubstr(" 0 "))) << line;
  }
  EXPECT_THAT(t, HasSubstr("[1] hint: counters are limited in this VM"));
}

TEST(ProfileTable, SoftwareCountersAloneStayOutOfTheWayUnlessAskedFor) {
  Profile p = test::synthetic_profile({.train = false});
  const auto software_only = [](LayerProfile& l) {
    l.counters = {{"task-clock", "ns", l.time_ms.mean * 1e6, CounterStatus::ok, 1.0, ""}};
    l.counters[0].kind = EventKind::task_clock;
    l.metrics.clear();
  };
  for (LayerProfile& l : p.layers) software_only(l);
  software_only(p.total);
  p.events = {{"task-clock", "ns", CounterStatus::ok, "", EventKind::task_clock},
              {"cycles", "count", CounterStatus::unsupported, "no PMU", EventKind::core_cycles}};
  p.group.clear();  // a group asked for shows its table
  const std::string t = profile_table(p);
  EXPECT_THAT(t, Not(HasSubstr("Counters per call")));
  EXPECT_THAT(t, HasSubstr("--counters shows it"));
  EXPECT_THAT(profile_table(p, {.counters = true}), HasSubstr("Counters per call"));
}

TEST(ProfileTable, ImpossibleAndBelowResolutionCountersAreMarkedNotPrintedAsFacts) {
  Profile p = test::synthetic_profile({.train = false});
  LayerCounter& cycles = p.layers[0].counters[0];
  cycles.impossible = true;
  cycles.impossible_reason = "cycles 9.9e9 per call is 660x what 2 CPUs at 3.75 GHz can run in the layer's 2 ms of wall time";
  p.layers[1].counters[0].below_resolution = true;
  const std::string t = profile_table(p, {.top = 0});
  const std::string counters = t.substr(t.find("Counters per call"));
  EXPECT_THAT(row_of(counters, "conv1"), HasSubstr("!1"));
  EXPECT_THAT(row_of(counters, "conv1"), Not(HasSubstr("5.20 M"))) << "the impossible value is not printed as a number";
  EXPECT_THAT(t, HasSubstr("!1 impossible: conv1: cycles 9.9e9 per call is 660x"));
  EXPECT_THAT(row_of(counters, "bn1"), HasSubstr("~"));
  EXPECT_THAT(t, HasSubstr("~ below the counter's resolution"));
}

TEST(ProfileTable, MarksLayersBelowResolution) {
  const std::string t = profile_table(test::synthetic_profile(), {.top = 0});
  EXPECT_THAT(row_of(t, "flatten"), HasSubstr("~0.00080"));
  EXPECT_THAT(t, HasSubstr("~ below resolution"));
}

TEST(ProfileTable, FewSamplesShowTheRangeInsteadOfAnInterval) {
  const std::string t = profile_table(test::synthetic_profile({.train = false, .samples = 4}));
  EXPECT_THAT(row_of(t, "conv1"), HasSubstr("±0.3500†"));  // (1.3 − 0.95) / 2 × 2.0 ms
  EXPECT_THAT(t, HasSubstr("† fewer than 6 samples"));
}

TEST(ProfileTable, SortsAndKeepsTheTopRows) {
  const Profile p = test::synthetic_profile({.train = false});
  const auto order = [](const std::string& table, const std::vector<std::string>& names) {
    std::vector<std::size_t> at;
    for (const auto& n : names) at.push_back(table.find("\n" + n + " "));
    return at;
  };
  const std::string by_time = profile_table(p, {.sort = ProfileSort::time});
  auto at = order(by_time, {"layer1.0.conv1", "conv1", "attn", "bn1", "relu"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_time;
  const std::string by_flops = profile_table(p, {.sort = ProfileSort::flops});
  at = order(by_flops, {"layer1.0.conv1", "conv1", "attn", "bn1", "pool"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_flops;
  const std::string by_name = profile_table(p, {.sort = ProfileSort::name});
  at = order(by_name, {"attn", "bn1", "conv1", "fc", "flatten", "layer1.0.conv1", "pool", "relu"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_name;

  const std::string top = profile_table(p, {.sort = ProfileSort::time, .top = 3});
  EXPECT_THAT(top, HasSubstr("\nlayer1.0.conv1 "));
  EXPECT_THAT(top, HasSubstr("\nattn "));
  EXPECT_THAT(top, Not(HasSubstr("\nbn1 ")));
  EXPECT_THAT(top, HasSubstr("... 6 more layers"));
  EXPECT_THAT(top, HasSubstr("model total"));
}

TEST(ProfileTable, GroupsByOpAndByBlock) {
  const Profile p = test::synthetic_profile({.train = false});
  const std::string by_op = profile_table(p, {.by = ProfileGrouping::op});
  EXPECT_THAT(by_op, HasSubstr("by op"));
  // conv1 (2.0 ms) and layer1.0.conv1 (3.2 ms): one conv2d row of 2 layers, 5.2 ms.
  const std::string conv = row_of(by_op, "conv2d");
  EXPECT_THAT(conv, HasSubstr(" 2 "));
  EXPECT_THAT(conv, HasSubstr("5.200"));
  EXPECT_THAT(conv, HasSubstr("compute below roof"));
  const std::string by_block = profile_table(p, {.by = ProfileGrouping::block, .depth = 1});
  EXPECT_THAT(by_block, HasSubstr("Block (depth 1)"));
  EXPECT_THAT(row_of(by_block, "layer1"), HasSubstr("3.200"));
  const std::string deeper = profile_table(p, {.by = ProfileGrouping::block, .depth = 2});
  EXPECT_THAT(row_of(deeper, "layer1.0"), HasSubstr("3.200"));
}

TEST(ProfileTable, WithoutCalibrationSaysSoAndShowsNoBound) {
  const std::string t = profile_table(test::synthetic_profile({.train = false, .calibrated = false}));
  EXPECT_THAT(t, HasSubstr("no calibration for 2 threads"));
  EXPECT_THAT(t, HasSubstr("longest first")) << "no time to win without roofs: sorted by time";
  const std::string conv = row_of(t, "conv1");
  EXPECT_THAT(conv, HasSubstr("80.0"));  // achieved GFLOP/s still shown
  EXPECT_THAT(conv, Not(HasSubstr("compute ")));
}

TEST(ProfileCsv, OneRowPerLayerWithTheHeadersColumns) {
  const Profile p = test::synthetic_profile();
  const auto rows = test::parse_csv(profile_csv(p));
  ASSERT_EQ(rows.size(), p.layers.size() + 1);
  const auto& header = rows[0];
  const std::vector<std::string> fixed = {"index", "name",  "op",           "phase",        "output_shape",   "params",        "macs",
                                          "flops", "bytes", "bytes_source", "bytes_origin", "analytic_bytes", "time_median_ms"};
  ASSERT_GE(header.size(), fixed.size());
  EXPECT_TRUE(std::equal(fixed.begin(), fixed.end(), header.begin()));
  for (const auto& row : rows) EXPECT_EQ(row.size(), header.size());
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t llc = column("LLC-load-misses");
  const std::size_t name = column("name");
  ASSERT_LT(llc, header.size());
  for (std::size_t r = 1; r < rows.size(); ++r) {
    EXPECT_EQ(rows[r][name], p.layers[r - 1].name);  // quoting survives commas and quotes
    EXPECT_EQ(rows[r][llc], "");                     // unavailable: empty, not 0
    EXPECT_EQ(rows[r][llc + 1], "unsupported");
    EXPECT_NE(rows[r][column("cycles")], "");
  }
  EXPECT_EQ(rows[1][column("bound")], "compute");
  EXPECT_EQ(rows[1][column("time_median_ms")], "2");
  EXPECT_EQ(rows[1][column("output_shape")], "16x32x32");
}

}  // namespace
}  // namespace hwprof
