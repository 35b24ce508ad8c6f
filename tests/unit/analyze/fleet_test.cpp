// Machine calibrations side by side: the rows, the ratios to the first, the JSON and the SVG.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/fleet.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

analysis::FleetMachine machine(const std::string& host, double scale) {
  Machine m;
  m.host = host;
  m.created = "2026-11-26T10:00:00Z";
  m.cpu.brand = host + " CPU";
  m.cpu.cores = 2;
  m.cpu.logical_cpus = 2;
  m.cpu.caches = {{1, "Data", 32 * 1024, 1, "sysfs"}, {3, "Unified", 32 << 20, 2, "sysfs"}};
  for (int threads : {1, 2}) {
    CalibrationRun run = test::synthetic_run(threads);
    for (auto& [name, level] : run.bandwidth) level.kernels["triad"].best *= scale * threads;
    for (auto& [name, c] : run.compute) c.best *= scale * threads;
    m.runs.push_back(run);
  }
  return {host + ".json", m};
}

TEST(Fleet, TableGivesEveryCeilingWithItsRatioToTheFirst) {
  const analysis::FleetComparison fleet = analysis::compare_machines({machine("alpha", 1.0), machine("beta", 1.5), machine("gamma", 0.5)});
  const std::string table = report::fleet_table(fleet);
  EXPECT_THAT(table, HasSubstr("3 machine calibrations"));
  EXPECT_THAT(table, HasSubstr("A: alpha"));
  EXPECT_THAT(table, HasSubstr("C: gamma"));
  EXPECT_THAT(table, HasSubstr("1.50x"));
  EXPECT_THAT(table, HasSubstr("0.50x"));
  EXPECT_THAT(table, HasSubstr("All cores"));
  EXPECT_THAT(table, HasSubstr("DRAM triad"));
  EXPECT_THAT(table, Not(HasSubstr("tanh kernel"))) << "a row no machine measured is left out";
  const auto j = nlohmann::json::parse(report::fleet_json(fleet));
  ASSERT_EQ(j.size(), 3u);
  EXPECT_DOUBLE_EQ(j[1]["all_cores"]["fma_sp"]["ratio_to_first"].get<double>(), 1.5);
  EXPECT_EQ(j[1]["all_cores"]["threads"], 2);
  EXPECT_DOUBLE_EQ(j[2]["one_thread"]["dram"]["value"].get<double>(), 15 * 0.5);
  EXPECT_TRUE(j[0]["one_thread"]["tanh_sp"]["value"].is_null());
}

TEST(Fleet, SvgDrawsOneRooflinePerMachine) {
  const std::string svg = report::fleet_svg(analysis::compare_machines({machine("alpha", 1.0), machine("b<&>", 2.0)}));
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  std::size_t lines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_THAT(svg, HasSubstr("b&lt;&amp;&gt;"));
  EXPECT_THAT(svg, Not(HasSubstr("nan")));
}

}  // namespace
}  // namespace hwprof
