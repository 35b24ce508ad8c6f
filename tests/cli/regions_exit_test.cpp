// A program linked with hwprof::regions that calls one region 100,000 times and sets
// HWPROF_OUTPUT (tests/cli/many_region_calls.cpp): writing its reports at exit never changes
// its exit status, kills it or hangs it, also at an address-space limit where the reports do
// not fit; each file is then whole or absent, and stderr says why (docs/regions.md).
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/machine.hpp"
#include "made_up_calibration.hpp"
#include "run_process.hpp"
#include "text_support.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HWPROF_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define HWPROF_TEST_SANITIZED 1
#endif
#endif

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::hwprof::test::contains;

constexpr int kOwnStatus = 3;  // the program's own exit status, which must come back unchanged
constexpr const char* kCalls = "100000";
const char* const kReports[] = {"profile.json", "profile.txt", "profile.csv", "roofline.svg", "report.html", "trace.json"};

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

class RegionsExit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hwprof-regions-exit-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
    const Machine m = test::made_up_calibration(describe_this_cpu());
    std::ofstream(dir_ / "machine.json") << machine_to_json(m);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  test::ProcessResult run(const std::vector<std::string>& args, const std::string& program = HWPROF_MANY_REGION_CALLS) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin",
                                    "HOME=" + dir_.string(),
                                    "XDG_DATA_HOME=" + (dir_ / "data").string(),
                                    "HWPROF_OUTPUT=" + (dir_ / "out").string(),
                                    "HWPROF_CALIBRATION=" + (dir_ / "machine.json").string(),
                                    "HWPROF_THREADS=1",
                                    "HWPROF_BACKEND=timer"};  // counters change nothing here, and cost 100,000 reads
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env.push_back(std::string("ASAN_OPTIONS=") + asan);
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, &env);
  }

  fs::path dir_;
};

// (20,000 calls: the files are then checked whole, which is slow under a sanitizer.)
TEST_F(RegionsExit, ManyCallsWriteEveryReportAndKeepTheProgramsExitStatus) {
  const test::ProcessResult r = run({"20000", std::to_string(kOwnStatus)});
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_TRUE(contains(r.out, "20000 calls")) << r.out;
  for (const char* file : kReports) EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / file)) << file << " missing; stderr: " << r.err;
  // Every call is a span of the timeline, with its arguments; each file is one JSON document.
  const std::string trace = slurp(dir_ / "out" / "trace.json");
  EXPECT_EQ(count_of(trace, "\"cat\":\"layer\""), 20000u);
  EXPECT_TRUE(nlohmann::json::accept(trace));
  const nlohmann::json profile = nlohmann::json::parse(slurp(dir_ / "out" / "profile.json"));
  ASSERT_EQ(profile.at("layers").size(), 1u);
  ASSERT_EQ(profile.at("region_threads").size(), 1u);
  EXPECT_EQ(profile.at("region_threads")[0].at("calls"), 20000);
  EXPECT_EQ(profile.at("trace").size(), 20000u);
}

// Another thread of the program holds the session's labels lock for 300 ms while the main
// thread writes the reports: the snapshot waits for it before the writer is forked, and the
// writer, which has no such thread, never waits on it (it would, until stopped after 120 s,
// were the snapshot taken in the writer).
TEST_F(RegionsExit, ALockAnotherThreadHoldsAtTheWriteIsWaitedForBeforeTheWriterIsForked) {
  const test::ProcessResult r = run({std::to_string(kOwnStatus)}, HWPROF_LOCK_HELD_AT_WRITE);
  ASSERT_NE(r.exit_code, 124) << "the writer waited on the lock (the program's watchdog stopped it after 30 s); stderr: " << r.err;
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_TRUE(contains(r.out, "hwprof_write_output: 0")) << r.out << r.err;
  for (const char* file : kReports) EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / file)) << file << " missing; stderr: " << r.err;
}

// `prlimit --as=200000000`: the reports of 100,000 calls may not fit, and then the program
// still ends with its own status, a reason on one line of stderr, and only whole files.
TEST_F(RegionsExit, AnAddressSpaceLimitNeverChangesTheExitStatusNorHangs) {
#ifdef HWPROF_TEST_SANITIZED
  GTEST_SKIP() << "a sanitizer reserves terabytes of address space: a program under RLIMIT_AS cannot start";
#else
  const test::ProcessResult r = run({kCalls, std::to_string(kOwnStatus), "200000000"});
  ASSERT_NE(r.exit_code, 128 + SIGALRM) << "the program hung at exit (killed by its own 60 s alarm); stderr: " << r.err;
  ASSERT_EQ(r.exit_code, kOwnStatus) << r.err;
  EXPECT_FALSE(contains(r.err, "terminate called")) << r.err;
  const bool all_written = fs::is_regular_file(dir_ / "out" / "profile.json") && fs::is_regular_file(dir_ / "out" / "trace.json");
  if (!all_written) {
    EXPECT_TRUE(contains(r.err, "hwprof")) << "no report and no reason on stderr";
  }
  for (const char* file : {"profile.json", "trace.json"}) {
    const fs::path path = dir_ / "out" / file;
    if (fs::is_regular_file(path)) {
      EXPECT_TRUE(nlohmann::json::accept(slurp(path))) << file << " is not whole";
    }
  }
#endif
}

// A program given no module path (as one built against the installed package without CMake's
// hwprof::regions) looks for the module beside itself and in the configured prefix, never in
// the build tree that holds one (docs/regions.md, "Where the report module is loaded from").
TEST_F(RegionsExit, AProgramGivenNoModulePathNeverLoadsTheBuildTreesModule) {
  ASSERT_TRUE(fs::is_regular_file(HWPROF_BUILD_TREE_MODULE));
  const test::ProcessResult r = run({"10", "0"}, HWPROF_MANY_REGION_CALLS_UNHINTED);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (fs::is_regular_file(dir_ / "out" / "profile.json")) {
    GTEST_SKIP() << "a report module is installed in the prefix hwprof was configured for; stderr: " << r.err;
  }
  ASSERT_TRUE(fs::is_regular_file(dir_ / "out" / "regions.txt")) << r.err;
  const std::string text = slurp(dir_ / "out" / "regions.txt");
  EXPECT_FALSE(contains(text, HWPROF_BUILD_TREE_MODULE)) << text;
  EXPECT_TRUE(contains(text, "step")) << text;
}

}  // namespace
}  // namespace hwprof
