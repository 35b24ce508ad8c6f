// The profile table and CSV: sources stated in the header, unavailable counters as "n/a"
// with one footnote each (never 0), sorting, top K, the model total, and a CSV whose every
// row has the header's columns.
#include <algorithm>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/report.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t i = text.find(what); i != std::string::npos; i = text.find(what, i + 1)) ++n;
  return n;
}

// The line of the main table whose first column is `name`.
std::string row_of(const std::string& table, const std::string& name) {
  for (const std::string& line : lines_of(table)) {
    if (line.rfind(name + " ", 0) == 0) return line;
  }
  return {};
}

TEST(ProfileTable, HeaderSaysWhereEveryNumberComesFrom) {
  const std::string t = profile_table(test::synthetic_profile());
  EXPECT_THAT(t, HasSubstr("hwprof profile: synthetic-net, batch 4, train (sgd), 2 threads"));
  EXPECT_THAT(t, HasSubstr("Measured: time per call (median of 20 iterations after 5 warm-up runs"));
  EXPECT_THAT(t, HasSubstr("Analytic: FLOPs"));
  EXPECT_THAT(t, HasSubstr("Bytes:    analytic minimum traffic (all 16 layers)"));
  EXPECT_THAT(t, HasSubstr("ceilings measured by `hwprof calibrate` 2026-11-20T10:00:00Z"));
  EXPECT_THAT(t, HasSubstr("Eff. = achieved / attainable"));
}

TEST(ProfileTable, WarningsComeFirstAndHintsBeforeTheTables) {
  Profile p = test::synthetic_profile();
  p.warnings = {"the calibration was measured while other processes ran", "2 memory-side layers run above 110% of their memory roof"};
  p.hints = {"unset OPENBLAS_CORETYPE"};
  const std::vector<std::string> lines = lines_of(profile_table(p));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_THAT(lines[0], HasSubstr("hwprof profile:"));
  EXPECT_EQ(lines[1], "WARNING: the calibration was measured while other processes ran");
  EXPECT_EQ(lines[2], "WARNING: 2 memory-side layers run above 110% of their memory roof");
  const auto at = [&](const std::string& start) {
    return std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; }) - lines.begin();
  };
  EXPECT_LT(at("hint: unset OPENBLAS_CORETYPE"), at("Layer ")) << "hints before the layer table";
  EXPECT_LT(at("hint: unset OPENBLAS_CORETYPE"), at("Counters per call")) << "and before the counter table";
  EXPECT_EQ(count(profile_table(p), "hint: unset OPENBLAS_CORETYPE"), 1u) << "said once";
}

TEST(ProfileTable, EveryLayerHasARowWithItsNumbers) {
  const Profile p = test::synthetic_profile({.train = false});
  const std::string t = profile_table(p);
  for (const LayerProfile& l : p.layers) {
    if (l.name.find('<') != std::string::npos) continue;
    EXPECT_THAT(t, HasSubstr(l.phase == "forward" ? l.name : l.name + " (" + l.phase + ")"));
  }
  const std::string conv = row_of(t, "conv1");
  EXPECT_THAT(conv, HasSubstr("conv2d"));
  EXPECT_THAT(conv, HasSubstr("2.000"));    // median ms
  EXPECT_THAT(conv, HasSubstr("±0.0500"));  // (1.03 − 0.98) × 2.0 ms / 2
  EXPECT_THAT(conv, HasSubstr("80.0"));     // 160 MFLOP in 2 ms
  EXPECT_THAT(conv, HasSubstr("compute"));
  EXPECT_THAT(conv, HasSubstr("80.0%"));    // of the 100 GFLOP/s GEMM roof
  EXPECT_THAT(row_of(t, "model total"), HasSubstr("100.0%"));
}

TEST(ProfileTable, UnavailableCountersReadNaWithOneFootnoteNeverZero) {
  const Profile p = test::synthetic_profile();
  const std::string t = profile_table(p);
  const std::size_t counters_at = t.find("Counters per call");
  ASSERT_NE(counters_at, std::string::npos);
  const std::string counters = t.substr(counters_at);
  // One n/a per row of the counters table (layers and the total), all pointing at note 1.
  EXPECT_EQ(count(counters, "n/a[1]"), p.layers.size() + 1);
  EXPECT_EQ(count(t, "[1] LLC-load-misses: unsupported - this virtual machine exposes no hardware PMU"), 1u);
  // The metric without a value has its own note, once.
  EXPECT_EQ(count(t, "DRAM GB/s: not available - needs the uncore CAS events"), 1u);
  // Multiplexed values are marked and explained.
  EXPECT_THAT(counters, HasSubstr("*"));
  EXPECT_THAT(t, HasSubstr("* instructions: multiplexed, counted 50.0% of the time at worst"));
  // No counter cell reads 0: the LLC column has no number at all.
  for (const std::string& line : lines_of(counters)) {
    if (line.find("n/a") == std::string::npos) continue;
    EXPECT_THAT(line, Not(HasSubstr(" 0 "))) << line;
  }
  EXPECT_THAT(t, HasSubstr("hint: counters are limited in this VM"));
}

TEST(ProfileTable, CounterColumnsNameTheirUnit) {
  Profile p = test::synthetic_profile({.train = false});
  p.events[0].unit = "ns";
  const std::string t = profile_table(p);
  EXPECT_THAT(t, HasSubstr("cycles (ns)"));
  EXPECT_THAT(t, Not(HasSubstr("instructions (count)")));
}

TEST(ProfileTable, MarksLayersBelowResolution) {
  const std::string t = profile_table(test::synthetic_profile());
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
  const std::string by_time = profile_table(p, ProfileSort::time);
  auto at = order(by_time, {"layer1.0.conv1", "conv1", "attn", "bn1", "relu"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_time;
  const std::string by_flops = profile_table(p, ProfileSort::flops);
  at = order(by_flops, {"layer1.0.conv1", "conv1", "attn", "bn1", "pool"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_flops;
  const std::string by_name = profile_table(p, ProfileSort::name);
  at = order(by_name, {"attn", "bn1", "conv1", "fc", "flatten", "layer1.0.conv1", "pool", "relu"});
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << by_name;

  const std::string top = profile_table(p, ProfileSort::time, 3);
  EXPECT_THAT(top, HasSubstr("\nlayer1.0.conv1 "));
  EXPECT_THAT(top, HasSubstr("\nattn "));
  EXPECT_THAT(top, Not(HasSubstr("\nbn1 ")));
  EXPECT_THAT(top, HasSubstr("... 6 more rows"));
  EXPECT_THAT(top, HasSubstr("model total"));
}

TEST(ProfileTable, WithoutCalibrationSaysSoAndShowsNoBound) {
  const std::string t = profile_table(test::synthetic_profile({.train = false, .calibrated = false}));
  EXPECT_THAT(t, HasSubstr("no calibration for 2 threads"));
  const std::string conv = row_of(t, "conv1");
  EXPECT_THAT(conv, HasSubstr("80.0"));  // achieved GFLOP/s still shown
  EXPECT_THAT(conv, Not(HasSubstr("compute")));
}

// A minimal RFC 4180 reader: fields, quoted fields with doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  bool row_open = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      row_open = false;
      continue;
    } else {
      field += c;
    }
    row_open = true;
  }
  if (row_open) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(ProfileCsv, OneRowPerLayerWithTheHeadersColumns) {
  const Profile p = test::synthetic_profile();
  const auto rows = parse_csv(profile_csv(p));
  ASSERT_EQ(rows.size(), p.layers.size() + 1);
  const auto& header = rows[0];
  const std::vector<std::string> fixed = {"index", "name", "op", "phase", "output_shape", "params", "macs", "flops", "bytes", "bytes_source",
                                          "bytes_origin", "analytic_bytes", "time_median_ms"};
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
