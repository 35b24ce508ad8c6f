// The machine report: JSON round trip, every malformed file with its message, foreign CPUs,
// where reports are kept, and the ceilings chart.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/machine.hpp"
#include "hwprof/report.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

Ceiling ceiling(double best, double median, std::int64_t size = 0, std::string variant = "") {
  Ceiling c;
  c.best = best;
  c.median = median;
  c.spread = 0.03;
  c.repetitions = 5;
  c.size = size;
  c.variant = std::move(variant);
  return c;
}

Machine sample_machine() {
  Machine m;
  m.created = "2026-11-21T20:00:00Z";
  m.host = "vm";
  m.hwprof_version = "0.1.0";
  m.cpu.vendor = "AuthenticAMD";
  m.cpu.brand = "AMD EPYC & <test>";
  m.cpu.family = 26;
  m.cpu.model = 2;
  m.cpu.flags = {"sse2", "avx2", "fma", "avx512f"};
  m.cpu.logical_cpus = 2;
  m.cpu.cores = 2;
  m.cpu.caches = {{1, "Data", 48 * 1024, 1}, {2, "Unified", 1 << 20, 1}, {3, "Unified", 32 << 20, 2}};
  m.cpu.frequency_ghz = 2.6;
  m.cpu.frequency_source = "/proc/cpuinfo cpu MHz";
  m.cpu.hypervisor = true;
  m.theoretical = {"avx512f", 2, 2.6, "/proc/cpuinfo cpu MHz", 64, 32, 332.8, 166.4, "Zen 5 row"};
  for (int threads : {1, 2}) {
    CalibrationRun run;
    run.threads = threads;
    run.cpus = threads == 1 ? std::vector<int>{0} : std::vector<int>{0, 1};
    run.seconds = 4.5;
    const double t = threads;
    run.bandwidth["l1"] = {4096, 32768, {{"triad", ceiling(200 * t, 190 * t, 24576)}, {"copy", ceiling(180 * t, 170 * t, 24576)}}};
    run.bandwidth["l2"] = {65536, 786432, {{"triad", ceiling(90 * t, 85 * t, 524288)}}, /*plateau=*/false};
    run.bandwidth["dram"] = {134217728, 536870912,
                             {{"triad", ceiling(15 * t, 14 * t, 536870912)}, {"triad_nt", ceiling(20 * t, 19 * t, 536870912, "nontemporal")}}};
    run.compute["fma_sp"] = ceiling(120 * t, 118 * t, 0, "avx512f");
    run.compute["fma_dp"] = ceiling(60 * t, 59 * t, 0, "avx512f");
    run.compute["gemm_sp"] = ceiling(100 * t, 98 * t, 2048, "openblas");
    run.compute["gemm_sp"].note = "1 of 5 repetitions shared a worker's CPU with another process";
    run.sweep = {{4096, "triad", 199, 190}, {536870912, "triad_nt", 20, 19}};
    m.runs.push_back(run);
  }
  return m;
}

TEST(MachineReport, RoundTripsThroughJson) {
  const Machine m = sample_machine();
  const std::string json = machine_to_json(m);
  auto back = machine_from_json(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(machine_to_json(*back), json);
  const auto j = nlohmann::json::parse(json);
  for (const char* key : {"schema", "created", "host", "cpu", "theoretical", "runs"}) EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"model", "flags", "cores", "caches", "frequency"}) EXPECT_TRUE(j["cpu"].contains(key)) << key;
  const auto& run = j["runs"][1];
  EXPECT_EQ(run["threads"], 2);
  EXPECT_DOUBLE_EQ(run["bandwidth"]["dram"]["triad_gbps"].get<double>(), 30.0);
  EXPECT_FALSE(run["bandwidth"]["dram"].contains("copy_nt_gbps"));  // not measured, so absent (never 0)
  EXPECT_TRUE(run["bandwidth"]["dram"].contains("spread"));
  EXPECT_EQ(run["bandwidth"]["l2"]["plateau"], false);  // a level the sweep found no flat run for says so
  EXPECT_EQ(run["bandwidth"]["l1"]["plateau"], true);
  EXPECT_FALSE(back->run_for(2)->bandwidth.at("l2").plateau);
  EXPECT_EQ(back->run_for(1)->compute.at("gemm_sp").note, "1 of 5 repetitions shared a worker's CPU with another process");
  EXPECT_EQ(run["compute"]["gemm_sp_note"], "1 of 5 repetitions shared a worker's CPU with another process");
  EXPECT_FALSE(run["compute"].contains("fma_sp_note"));  // no qualification, no field
  EXPECT_DOUBLE_EQ(run["compute"]["fma_sp_gflops"].get<double>(), 240.0);
  EXPECT_EQ(run["compute"]["gemm_sp_n"], 2048);
  EXPECT_EQ(back->run_for(2)->threads, 2);
  EXPECT_EQ(back->run_for(3), nullptr);
}

struct Broken {
  const char* label;
  std::function<void(nlohmann::json&)> mutate;
  const char* message;
};

class MalformedMachine : public ::testing::TestWithParam<Broken> {};

TEST_P(MalformedMachine, IsRefusedWithFilePlaceAndProblem) {
  auto j = nlohmann::json::parse(machine_to_json(sample_machine()));
  GetParam().mutate(j);
  auto m = machine_from_json(j.dump(2), "m.json");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message, MatchesRegex("m\\.json:[0-9]+:[0-9]+: .*")) << m.error().message;
  EXPECT_THAT(m.error().message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedMachine,
    ::testing::Values(
        Broken{"NewerSchema", [](auto& j) { j["schema"] = 2; }, "written by a newer hwprof"},
        Broken{"MissingRuns", [](auto& j) { j.erase("runs"); }, "missing \"runs\""},
        Broken{"EmptyRuns", [](auto& j) { j["runs"] = nlohmann::json::array(); }, "non-empty list of runs"},
        Broken{"NegativeBandwidth", [](auto& j) { j["runs"][0]["bandwidth"]["dram"]["triad_gbps"] = -3; },
               "/runs/0/bandwidth/dram/triad_gbps: expected a positive finite number, got -3"},
        Broken{"ZeroCompute", [](auto& j) { j["runs"][1]["compute"]["fma_sp_gflops"] = 0; }, "/runs/1/compute/fma_sp_gflops"},
        Broken{"StringForNumber", [](auto& j) { j["runs"][0]["bandwidth"]["l1"]["copy_gbps"] = "fast"; }, "expected a number, got string"},
        Broken{"MedianAboveBest", [](auto& j) { j["runs"][0]["bandwidth"]["l1"]["triad_median_gbps"] = 1000; },
               "the median exceeds the best value"},
        Broken{"UnknownLevel", [](auto& j) { j["runs"][0]["bandwidth"]["l4"] = j["runs"][0]["bandwidth"]["l1"]; }, "unknown memory level \"l4\""},
        Broken{"PlateauNotBoolean", [](auto& j) { j["runs"][0]["bandwidth"]["l2"]["plateau"] = "no"; }, "/bandwidth/l2/plateau: expected true or false"},
        Broken{"LevelWithoutTriad", [](auto& j) { j["runs"][0]["bandwidth"]["l2"].erase("triad_gbps"); }, "missing \"triad_gbps\""},
        Broken{"DuplicateThreads", [](auto& j) { j["runs"][1]["threads"] = 1; }, "a second run with 1 threads"},
        Broken{"ZeroThreads", [](auto& j) { j["runs"][0]["threads"] = 0; }, "expected an integer >= 1"},
        Broken{"FlagsNotStrings", [](auto& j) { j["cpu"]["flags"][1] = 7; }, "/cpu/flags/1: expected a string"},
        Broken{"MissingCpuModel", [](auto& j) { j["cpu"].erase("model"); }, "/cpu: missing \"model\""},
        Broken{"NegativeCacheSize", [](auto& j) { j["cpu"]["caches"][0]["size_bytes"] = -1; }, "/cpu/caches/0/size_bytes"},
        Broken{"NotAnObject", [](auto& j) { j = nlohmann::json::array({1, 2}); }, "a machine report is a JSON object"}),
    [](const auto& param_info) { return std::string(param_info.param.label); });

TEST(MachineReport, TruncatedAndEmptyFilesSaySo) {
  const std::string json = machine_to_json(sample_machine());
  auto truncated = machine_from_json(json.substr(0, json.size() / 2), "m.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(truncated.error().message, HasSubstr("m.json: not a valid machine report (corrupt or truncated JSON"));
  auto empty = machine_from_json("  \n", "m.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.error().message, HasSubstr("empty"));
  auto missing = load_machine("/nonexistent/m.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/m.json: cannot open"));
}

TEST(MachineReport, AnotherCpusReportIsRecognised) {
  const Machine m = sample_machine();
  EXPECT_FALSE(foreign_cpu(m.cpu, m.cpu).has_value());
  MachineCpu other = m.cpu;
  other.model = 17;
  other.brand = "AMD EPYC 9654";
  const auto why = foreign_cpu(m.cpu, other);
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("AMD EPYC 9654"));
  EXPECT_THAT(*why, HasSubstr("model 2"));
  MachineCpu resized = m.cpu;
  resized.logical_cpus = 4;  // the same VM given more CPUs: its ceilings no longer hold
  EXPECT_TRUE(foreign_cpu(m.cpu, resized).has_value());
}

class MachineStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hwprof-store-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    const char* old = std::getenv("XDG_DATA_HOME");
    saved_ = old != nullptr ? old : "";
    had_ = old != nullptr;
    ::setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) {
      ::setenv("XDG_DATA_HOME", saved_.c_str(), 1);
    } else {
      ::unsetenv("XDG_DATA_HOME");
    }
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string saved_;
  bool had_ = false;
};

TEST_F(MachineStore, ReportsLiveUnderXdgDataHomeNamedByHostAndCpu) {
  EXPECT_EQ(machine_store_dir(), dir_.string() + "/hwprof/machines");
  const std::string path = machine_store_path("my host", sample_machine().cpu);
  EXPECT_EQ(path, dir_.string() + "/hwprof/machines/my-host--AMD-EPYC-test-f26m2-2cpu.json");
  ::setenv("XDG_DATA_HOME", "relative/dir", 1);  // the XDG spec ignores relative paths
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(machine_store_dir(), "/home/someone/.local/share/hwprof/machines");
}

TEST_F(MachineStore, TheStoredReportIsFoundRefusedWhenForeignAndExplainedWhenAbsent) {
  auto absent = load_stored_machine();
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.error().message, HasSubstr("run `hwprof calibrate`"));

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  Machine m = sample_machine();
  m.cpu = describe_this_cpu();
  m.host = host;
  const std::string path = machine_store_path(host, m.cpu);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  ASSERT_FALSE(write_file_atomically(path, machine_to_json(m)).has_value());
  auto found = load_stored_machine();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->runs.size(), 2u);

  Machine foreign = m;
  foreign.cpu.logical_cpus += 2;
  ASSERT_FALSE(write_file_atomically(path, machine_to_json(foreign)).has_value());
  auto refused = load_stored_machine();
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("not used"));
}

// Tags open and close in order, and every attribute value is quoted: enough to catch a
// chart that no viewer would open.
bool well_formed(const std::string& xml) {
  std::vector<std::string> open;
  for (std::size_t i = xml.find('<'); i != std::string::npos; i = xml.find('<', i + 1)) {
    const std::size_t end = xml.find('>', i);
    if (end == std::string::npos) return false;
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

TEST(CeilingsSvg, IsWellFormedAndLabelsEveryCeiling) {
  const Machine m = sample_machine();
  const std::string svg = ceilings_svg(m, 2);
  EXPECT_TRUE(well_formed(svg));
  EXPECT_THAT(svg, HasSubstr("AMD EPYC &amp; &lt;test&gt;"));  // escaped
  EXPECT_THAT(svg, HasSubstr("L1 400 GB/s"));
  EXPECT_THAT(svg, HasSubstr("DRAM 30 GB/s"));
  EXPECT_THAT(svg, HasSubstr("FMA peak 240 GFLOP/s"));
  EXPECT_THAT(svg, HasSubstr("GEMM 200 GFLOP/s"));
  // Ridge points: FMA 240 / 400, / 180, / 30 GB/s.
  EXPECT_THAT(svg, HasSubstr("ridge at 0.6 FLOP/B"));
  EXPECT_THAT(svg, HasSubstr("ridge at 1.33 FLOP/B"));
  EXPECT_THAT(svg, HasSubstr("ridge at 8 FLOP/B"));
  std::size_t circles = 0;
  for (std::size_t i = svg.find("<circle"); i != std::string::npos; i = svg.find("<circle", i + 1)) ++circles;
  EXPECT_EQ(circles, 3u);
}

}  // namespace
}  // namespace hwprof
