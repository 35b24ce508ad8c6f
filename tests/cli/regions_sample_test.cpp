// HWPROF_SAMPLE in a program linked with hwprof::regions (tests/cli/sampled_split.cpp): its
// profile.json gives each region's functions with their shares, and the known split of a
// region's CPU time lies inside the interval of the shares found; pool workers' samples go to
// the region of the thread that waits for them; a bad spec, a missing HWPROF_OUTPUT, a full
// timeline, a fork and a missing report module each say what happened and leave the program's
// exit status alone (docs/sampling.md, "Regions programs and PyTorch: HWPROF_SAMPLE").
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/machine.hpp"
#include "made_up_calibration.hpp"
#include "placement/sample_attribution.hpp"
#include "run_process.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::hwprof::test::contains;
using nlohmann::json;

constexpr int kOwnStatus = 7;  // sampled_split's

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

const json* row_named(const json& sampling, const std::string& name) {
  for (const json& row : sampling.at("layers")) {
    if (row.at("name") == name) return &row;
  }
  return nullptr;
}

std::uint64_t samples_in(const json& row, const std::string& function) {
  for (const json& f : row.at("top")) {
    if (contains(f.at("function").get<std::string>(), function)) return f.at("samples").get<std::uint64_t>();
  }
  return 0;
}

class RegionsSample : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hwprof-regions-sample-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
    const Machine m = test::made_up_calibration(describe_this_cpu());
    std::ofstream(dir_ / "machine.json") << machine_to_json(m);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  test::ProcessResult run(const std::vector<std::string>& extra_env, const std::vector<std::string>& args = {}, bool output = true) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + dir_.string(), "XDG_DATA_HOME=" + (dir_ / "data").string(),
                                    "HWPROF_CALIBRATION=" + (dir_ / "machine.json").string(), "HWPROF_THREADS=1"};
    if (output) env.push_back("HWPROF_OUTPUT=" + (dir_ / "out").string());
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env.push_back(std::string("ASAN_OPTIONS=") + asan);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<std::string> argv = {HWPROF_SAMPLED_SPLIT};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, &env);
  }

  // The profile's sampling object; skips where this machine refuses to sample.
  json sampling_of(const test::ProcessResult& r) {
    if (contains(r.err, "the program runs unsampled")) return json();
    const json profile = json::parse(slurp(dir_ / "out" / "profile.json"));
    return profile.contains("sampling") ? profile.at("sampling") : json();
  }

  fs::path dir_;
};

#define HWPROF_SKIP_IF_UNSAMPLED(r)                                                                            \
  if (contains((r).err, "the program runs unsampled")) {                                                       \
    GTEST_SKIP() << "this machine does not let the program sample itself (perf_event_paranoid?): " << (r).err; \
  }

TEST_F(RegionsSample, EachRegionsFunctionsGetTheirShareOfItsCpuTime) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock@2000"});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  HWPROF_SKIP_IF_UNSAMPLED(r);
  const json sampling = sampling_of(r);
  ASSERT_TRUE(sampling.is_object()) << r.err;
  EXPECT_EQ(sampling.at("spec"), "cpu-clock@2000");
  EXPECT_EQ(sampling.at("cost_from"), "windows");
  EXPECT_GE(sampling.at("sampled_passes").get<int>(), 1);
  EXPECT_EQ(sampling.at("timeline_full"), 0);
  const json* split = row_named(sampling, "split");
  ASSERT_NE(split, nullptr) << sampling.dump(2);
  // About 1.5 s of CPU sampled half the time at 2000 Hz: some 1,500 samples. 200 is the least
  // for intervals of about ±7 points; fewer means the samples were not attributed.
  ASSERT_GE(split->at("samples").get<std::uint64_t>(), 200u) << sampling.dump(2);
  const std::uint64_t seventy = samples_in(*split, "hwprof_test_seventy");
  const std::uint64_t thirty = samples_in(*split, "hwprof_test_thirty");
  ASSERT_GT(seventy, 0u) << split->dump(2);
  ASSERT_GT(thirty, 0u) << split->dump(2);
  // The truth: the first function's share of the two functions' CPU time, as the program
  // measured it on its thread's clock (about 70 %; the region's own code and the clock reads
  // take the rest of the region's samples, about 1 %). It lies within the 95 % interval of
  // the first function's share of the two functions' samples, widened by 2 points for what
  // the program's clock reads cannot see (the samples of the reads themselves, in the
  // kernel); a chance miss is then rarer than one run in a hundred.
  double cpu_seventy = 0.0, cpu_thirty = 0.0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "seventy %lf thirty %lf", &cpu_seventy, &cpu_thirty), 2) << r.out;
  const double truth = cpu_seventy / (cpu_seventy + cpu_thirty);
  EXPECT_NEAR(truth, 0.70, 0.05) << r.out;
  const placement::Share share = placement::share_of(seventy, seventy + thirty);
  EXPECT_LE(share.low - 0.02, truth) << seventy << " of " << seventy + thirty << "; " << r.out;
  EXPECT_GE(share.high + 0.02, truth) << seventy << " of " << seventy + thirty << "; " << r.out;
  // The region's own shares, as written, hold the same within their intervals' width.
  for (const json& f : split->at("top")) {
    EXPECT_LE(f.at("low").get<double>(), f.at("share").get<double>());
    EXPECT_GE(f.at("high").get<double>(), f.at("share").get<double>());
  }

  const json* pool = row_named(sampling, "pool");
  ASSERT_NE(pool, nullptr) << sampling.dump(2);
  EXPECT_GT(pool->at("by_pool_workers").get<std::uint64_t>(), 0u) << pool->dump(2);
  EXPECT_GT(samples_in(*pool, "hwprof_test_pool_worker"), 0u) << pool->dump(2);

  for (const char* file : {"flamegraph.svg", "samples.folded", "samples.speedscope.json", "profile.txt", "report.html"}) {
    EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / file)) << file << "; stderr: " << r.err;
  }
  const std::string table = slurp(dir_ / "out" / "profile.txt");
  EXPECT_TRUE(contains(table, "Where inside the regions the time went")) << table;
  EXPECT_TRUE(contains(table, "Sampling cost")) << table;
  EXPECT_TRUE(contains(slurp(dir_ / "out" / "samples.folded"), "split;")) << "the region is the stacks' root";

  // trace.json: the samples as instants on the lanes of the regions they belong to; the pool
  // workers' on the main thread's lane (the launching thread's), where "pool" was open.
  const json trace = json::parse(slurp(dir_ / "out" / "trace.json"));
  std::map<std::string, std::set<int>> lanes_of_region;  // the lanes each region's spans are on
  std::map<std::string, int> instants_in;                // instants per row
  for (const json& e : trace.at("traceEvents")) {
    if (e.value("ph", "") == "X") lanes_of_region[e.value("name", "")].insert(e.value("tid", -1));
  }
  for (const json& e : trace.at("traceEvents")) {
    if (e.value("ph", "") != "i") continue;
    EXPECT_EQ(e.value("s", ""), "t");
    const std::string row = e.at("args").value("layer", "");
    ++instants_in[row];
    EXPECT_TRUE(lanes_of_region[row].count(e.value("tid", -1)) > 0) << e.dump() << " is not on a lane of " << row;
  }
  EXPECT_GT(instants_in["split"], 0) << "no samples on trace.json's lanes";
  EXPECT_GT(instants_in["pool"], 0) << "the pool workers' samples go to the launching thread's lane";
}

TEST_F(RegionsSample, ABadSpecIsSaidAndTheProgramRunsUnsampled) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock@0"});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_EQ(count_of(r.err, "HWPROF_SAMPLE"), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "the program runs unsampled")) << r.err;
  const json profile = json::parse(slurp(dir_ / "out" / "profile.json"));
  EXPECT_FALSE(profile.contains("sampling"));
  EXPECT_EQ(profile.at("layers").size(), 2u);
}

TEST_F(RegionsSample, SampleWithoutOutputIsSaidOnce) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE="}, {}, false);
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_EQ(count_of(r.err, "HWPROF_SAMPLE is set but HWPROF_OUTPUT is not"), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(RegionsSample, ABadTimelineSizeIsSaid) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock", "HWPROF_TIMELINE_EVENTS=many"});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_TRUE(contains(r.err, "HWPROF_TIMELINE_EVENTS=many is not a number of timeline calls")) << r.err;
}

// Samples after the timeline's last call find no region: counted apart, never as outside.
TEST_F(RegionsSample, SamplesPastAFullTimelineAreCountedApart) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock@2000", "HWPROF_TIMELINE_EVENTS=20"});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  HWPROF_SKIP_IF_UNSAMPLED(r);
  const json sampling = sampling_of(r);
  ASSERT_TRUE(sampling.is_object()) << r.err;
  EXPECT_EQ(sampling.at("timeline_calls"), 20);
  EXPECT_GT(sampling.at("timeline_full").get<std::uint64_t>(), 0u) << sampling.dump(2);
  EXPECT_LE(sampling.at("timeline_full").get<std::uint64_t>(), sampling.at("samples").get<std::uint64_t>());
  EXPECT_TRUE(contains(slurp(dir_ / "out" / "profile.txt"), "raise HWPROF_TIMELINE_EVENTS"));
}

// A forked child does not sample (the sampler's threads are the parent's) and says nothing of
// it; the parent's samples are its own.
TEST_F(RegionsSample, AForkedChildDoesNotSample) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock@2000"}, {"fork"});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  HWPROF_SKIP_IF_UNSAMPLED(r);
  EXPECT_FALSE(contains(r.err, "terminate")) << r.err;
  EXPECT_TRUE(sampling_of(r).is_object()) << r.err;
  bool child_seen = false;
  for (const auto& entry : fs::directory_iterator(dir_ / "out")) {
    if (!entry.is_directory() || !fs::is_regular_file(entry.path() / "profile.json")) continue;
    const json child = json::parse(slurp(entry.path() / "profile.json"));
    child_seen = true;
    EXPECT_FALSE(child.contains("sampling")) << entry.path();
  }
  EXPECT_TRUE(child_seen) << "the child wrote no report of its own; stderr: " << r.err;
}

TEST_F(RegionsSample, WithoutTheReportModuleTheSamplesAreSaidToNeedIt) {
  const test::ProcessResult r = run({"HWPROF_SAMPLE=cpu-clock", "HWPROF_REPORT_MODULE=" + (dir_ / "no-such-module.so").string()});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  HWPROF_SKIP_IF_UNSAMPLED(r);
  EXPECT_TRUE(contains(r.err, "The sampling breakdown (HWPROF_SAMPLE) needs the report module")) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / "regions.txt"));
}

}  // namespace
}  // namespace hwprof
