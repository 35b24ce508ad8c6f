// `hwprof calibrate` as a user runs it: a quick calibration's ceilings are positive and
// ordered, its files are whole, and bad requests are clear errors.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

test::ProcessResult hwprof(const std::vector<std::string>& args) { return test::run_hwprof(args); }

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hwprof-calibrate-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(CalibrateCli, AQuickCalibrationGivesPositiveOrderedCeilings) {
  const fs::path json = scratch("machine.json");
  const fs::path svg = scratch("machine.svg");
  auto r = hwprof({"calibrate", "--quick", "-o", json.string(), "--svg", svg.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FMA peak SP"));
  std::ifstream in(json);
  const auto m = nlohmann::json::parse(in);
  EXPECT_EQ(m["schema"], 1);
  EXPECT_TRUE(m["quick"].get<bool>());
  ASSERT_FALSE(m["runs"].empty());
  for (const auto& run : m["runs"]) {
    SCOPED_TRACE("threads " + run["threads"].dump());
    const auto& bw = run["bandwidth"];
    ASSERT_TRUE(bw.contains("l1") && bw.contains("dram")) << bw.dump();
    for (const auto& [level, values] : bw.items()) EXPECT_GT(values["triad_gbps"].get<double>(), 0.0) << level;
    EXPECT_GT(bw["l1"]["triad_gbps"].get<double>(), bw["dram"]["triad_gbps"].get<double>());
    const auto& compute = run["compute"];
    const double fma = compute["fma_sp_gflops"];
    const double gemm = compute["gemm_sp_gflops"];
    EXPECT_GT(gemm, 0.0);
    EXPECT_LE(gemm, fma * 1.10) << "the FMA peak is at least the GEMM ceiling, within noise";
    EXPECT_GT(compute["fma_dp_gflops"].get<double>(), 0.0);
  }
  std::ifstream chart(svg);
  std::stringstream buffer;
  buffer << chart.rdbuf();
  const std::string text = buffer.str();
  EXPECT_THAT(text, HasSubstr("<svg"));
  EXPECT_THAT(text, HasSubstr("FMA peak"));
  fs::remove_all(json.parent_path());
}

TEST(CalibrateCli, BadRequestsAreClearErrors) {
  EXPECT_EQ(hwprof({"calibrate", "--threads", "0"}).exit_code, 2);
  EXPECT_EQ(hwprof({"calibrate", "--precision", "fp8"}).exit_code, 2);
  auto too_many = hwprof({"calibrate", "--quick", "--threads", "4096", "-o", "/tmp/never.json"});
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_THAT(too_many.err, HasSubstr("physical cores"));
  EXPECT_FALSE(fs::exists("/tmp/never.json"));
}

}  // namespace
}  // namespace hwprof
