// `hwprof calibrate` as a user runs it: a quick calibration's ceilings are positive and
// ordered, its files are whole, and bad requests are clear errors.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <spawn.h>
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::run_hwprof;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("hwprof-calibrate-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(CalibrateCli, AQuickCalibrationGivesPositiveOrderedCeilings) {
  const fs::path json = scratch("machine.json");
  const fs::path svg = scratch("machine.svg");
  // Kept even if a neighbour disturbs it (then marked): this test is about the report's shape.
  auto r = run_hwprof({"calibrate", "--quick", "--allow-contended", "-o", json.string(), "--svg", svg.string()});
  // Under heavy load (CI running other builds beside it) the ceilings can come out in an
  // impossible order even after measuring again; hwprof then refuses to write them, rightly,
  // and says other processes disturbed it. This test cannot judge the report's shape then.
  if (r.exit_code == 1 && r.err.find("stayed implausible") != std::string::npos && r.err.find("Other processes disturbed it") != std::string::npos) {
    GTEST_SKIP() << "the machine was too busy for a plausible calibration: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FMA peak SP"));
  EXPECT_THAT(r.out, HasSubstr("Caches, as each source describes them"));
  std::ifstream in(json);
  const auto m = nlohmann::json::parse(in);
  EXPECT_EQ(m["schema"], 1);
  EXPECT_TRUE(m["quick"].get<bool>());
  ASSERT_TRUE(m.contains("contended"));
  ASSERT_TRUE(m["contention"].contains("evidence"));
  // Contended means evidence; evidence without contention is only of phases measured again
  // once quiet, or of a machine busy before measuring began (each phase is then watched).
  const auto& evidence = m["contention"]["evidence"];
  if (m["contended"].get<bool>())
    EXPECT_FALSE(evidence.empty());
  else
    for (const auto& e : evidence) {
      const std::string line = e.get<std::string>();
      EXPECT_TRUE(line.starts_with("before: ") || line.find("quiet when measured again") != std::string::npos) << line;
    }
  // Every source consulted is kept, with why it said nothing.
  ASSERT_EQ(m["cpu"]["cache_sources"].size(), 3u);
  for (const auto& source : m["cpu"]["cache_sources"]) {
    EXPECT_TRUE(!source["levels"].empty() || source.contains("absent")) << source.dump();
  }
  ASSERT_FALSE(m["runs"].empty());
  for (const auto& run : m["runs"]) {
    SCOPED_TRACE("threads " + run["threads"].dump());
    const auto& bw = run["bandwidth"];
    ASSERT_TRUE(bw.contains("l1") && bw.contains("dram")) << bw.dump();
    for (const auto& [level, values] : bw.items()) EXPECT_GT(values["triad_gbps"].get<double>(), 0.0) << level;
    EXPECT_GT(bw["l1"]["triad_gbps"].get<double>(), bw["dram"]["triad_gbps"].get<double>());
    // Where the caches end comes from the sweep (or, without a knee, from a named source),
    // and DRAM starts above every cache.
    std::int64_t largest_end = 0;
    for (const auto& [level, values] : bw.items()) {
      if (level == "dram") continue;
      EXPECT_TRUE(values.contains("capacity_source")) << level << ": " << values.dump();
      if (values.contains("capacity_bytes")) largest_end = std::max(largest_end, values["capacity_bytes"].get<std::int64_t>());
    }
    EXPECT_GT(bw["dram"]["from_bytes"].get<std::int64_t>(), largest_end);
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
  EXPECT_EQ(run_hwprof({"calibrate", "--threads", "0"}).exit_code, 2);
  EXPECT_EQ(run_hwprof({"calibrate", "--precision", "fp8"}).exit_code, 2);
  auto too_many = run_hwprof({"calibrate", "--quick", "--threads", "4096", "-o", "/tmp/never.json"});
  EXPECT_EQ(too_many.exit_code, 1);
  EXPECT_THAT(too_many.err, HasSubstr("physical cores"));
  EXPECT_FALSE(fs::exists("/tmp/never.json"));
}

// A busy neighbour for the length of a test: spinning threads in a process of their own.
class Neighbour {
 public:
  Neighbour(int threads, double seconds) {
    const std::string t = std::to_string(threads);
    const std::string s = std::to_string(seconds);
    char* argv[] = {const_cast<char*>(HWPROF_SPIN_PATH), const_cast<char*>(t.c_str()), const_cast<char*>(s.c_str()), nullptr};
    if (posix_spawn(&pid_, HWPROF_SPIN_PATH, nullptr, nullptr, argv, environ) != 0) pid_ = -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // running before the calibration looks
  }
  ~Neighbour() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  Neighbour(const Neighbour&) = delete;
  Neighbour& operator=(const Neighbour&) = delete;
  bool running() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

TEST(CalibrateCli, ACalibrationBesideABusyNeighbourIsContendedAndNotKept) {
  const fs::path json = scratch("contended.json");
  Neighbour busy(2, 60.0);  // both cores of this project's VMs, longer than the calibration
  ASSERT_TRUE(busy.running());
  auto refused = run_hwprof({"calibrate", "--quick", "--threads", "1", "-o", json.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.out, HasSubstr("CONTENDED"));
  EXPECT_THAT(refused.err, HasSubstr("--allow-contended"));
  EXPECT_FALSE(fs::exists(json)) << "a contended calibration is not written without --allow-contended";

  auto kept = run_hwprof({"calibrate", "--quick", "--threads", "1", "--allow-contended", "-o", json.string()});
  if (kept.exit_code != 0) {
    // Neighbours on both cores can disturb a point so much that the levels come out in an
    // impossible order (seen once: L2 at 0.2 GB/s under L3's 23.7). --allow-contended keeps a
    // contended calibration, never an implausible one, which no reader would accept: the run
    // refuses to write it and says the neighbours are why.
    EXPECT_EQ(kept.exit_code, 1) << kept.err;
    EXPECT_THAT(kept.err, HasSubstr("stayed implausible"));
    EXPECT_THAT(kept.err, HasSubstr("Other processes disturbed it too"));
    EXPECT_FALSE(fs::exists(json)) << "an implausible calibration is never written";
    fs::remove_all(json.parent_path());
    return;
  }
  std::ifstream in(json);
  const auto m = nlohmann::json::parse(in);
  EXPECT_TRUE(m["contended"].get<bool>());
  ASSERT_FALSE(m["contention"]["evidence"].empty());
  EXPECT_GT(m["contention"]["others_cpus"].get<double>(), 0.25);
  EXPECT_THAT(m["contention"]["evidence"].dump(), HasSubstr("hwprof_spin_thr")) << "the neighbour is named";
  fs::remove_all(json.parent_path());
}

}  // namespace
}  // namespace hwprof
