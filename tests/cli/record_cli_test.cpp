// `hwprof record -- CMD` as a user runs it: a program without hwprof sampled and its functions
// named, a regions program's rows, its exit status passed through, a program that cannot be run,
// and a spec refused before anything runs. cpu-clock: a software event, so no PMU is needed.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using test::run_hwprof;

fs::path record_scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("hwprof-record-cli-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  return p;
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Where this machine refuses perf_event_open to this user, sampling cannot be tested here.
bool sampling_refused(const test::ProcessResult& r) {
  return r.exit_code == 1 && (r.err.find("perf_event_paranoid") != std::string::npos || r.err.find("not permitted") != std::string::npos);
}

TEST(RecordCli, AProgramWithoutHwprofHasItsFunctionsNamedInTheTableAndTheFiles) {
  const fs::path out = record_scratch("spin");
  auto r = run_hwprof({"record", "-o", out.string(), "--", HWPROF_RECORD_SPIN, "0.3", "0"});
  if (sampling_refused(r)) GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("hwprof record '" + std::string(HWPROF_RECORD_SPIN) + " 0.3 0': cpu-clock@1000 at 1000 Hz"));
  EXPECT_THAT(r.err, HasSubstr("record_spin_alpha"));
  EXPECT_THAT(r.err, HasSubstr("record_spin_beta"));
  EXPECT_THAT(r.err, HasSubstr("(the whole program)"));  // no regions: one row
  EXPECT_THAT(r.err, HasSubstr("lost 0, throttled"));
  const std::string folded = file_text(out / "samples.folded");
  EXPECT_THAT(folded, HasSubstr("record_spin_alpha"));
  EXPECT_THAT(folded, HasSubstr("record_spin_beta"));
  const auto j = nlohmann::json::parse(file_text(out / "sampling.json"));
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["command"][0], HWPROF_RECORD_SPIN);
  EXPECT_GT(j["sampling"]["samples"].get<std::uint64_t>(), 0u);
  ASSERT_FALSE(j["sampling"]["layers"].empty());
  EXPECT_THAT(j["sampling"]["layers"][0]["name"].get<std::string>(), HasSubstr("(the whole program)"));
  EXPECT_TRUE(fs::is_regular_file(out / "flamegraph.svg"));
  EXPECT_THAT(file_text(out / "samples.speedscope.json"), HasSubstr("record_spin_beta"));
  fs::remove_all(out);
}

TEST(RecordCli, AProgramWithRegionsHasARowPerRegion) {
  const fs::path out = record_scratch("regions");
  auto r = run_hwprof({"record", "-o", out.string(), "--", HWPROF_RECORD_REGIONS, "0.3", "0"});
  if (sampling_refused(r)) GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(file_text(out / "sampling.json"));
  std::vector<std::string> rows;
  for (const auto& l : j["sampling"]["layers"]) rows.push_back(l["name"]);
  EXPECT_THAT(rows, ::testing::Contains("alpha")) << r.err;
  EXPECT_THAT(rows, ::testing::Contains("beta")) << r.err;
  // Each region's leading function is its own spinning function.
  for (const auto& l : j["sampling"]["layers"]) {
    if (l["name"] != "alpha" && l["name"] != "beta") continue;
    ASSERT_FALSE(l["top"].empty());
    EXPECT_THAT(l["top"][0]["function"].get<std::string>(), HasSubstr(l["name"] == "alpha" ? "record_spin_alpha" : "record_spin_beta"));
  }
  // The program left its spans: none of its rows is the whole program. (Another process's may
  // be, prefixed with its pid: under AddressSanitizer, LeakSanitizer's helper task at exit.)
  for (const std::string& row : rows) {
    if (row.rfind("pid ", 0) != 0) {
      EXPECT_THAT(row, Not(HasSubstr("(the whole program)"))) << r.err;
    }
  }
  EXPECT_THAT(file_text(out / "samples.folded"), HasSubstr("alpha;"));
  fs::remove_all(out);
}

TEST(RecordCli, TheProgramsExitStatusIsHwprofs) {
  auto r = run_hwprof({"record", "--", HWPROF_RECORD_SPIN, "0.01", "3"});
  if (sampling_refused(r)) GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  EXPECT_EQ(r.exit_code, 3) << r.err;
  r = run_hwprof({"record", "--", "/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.exit_code, 128 + 15) << r.err;
}

TEST(RecordCli, AProgramThatCannotBeRunExits127WithTheReason) {
  auto r = run_hwprof({"record", "--", "/nonexistent/hwprof-no-such-program", "x"});
  if (sampling_refused(r)) GTEST_SKIP() << "perf_event_open refused here: " << r.err;
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_THAT(r.err, HasSubstr("cannot run '/nonexistent/hwprof-no-such-program': No such file or directory"));
  r = run_hwprof({"record"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no program given"));
}

TEST(RecordCli, ASpecThatCannotBeSampledIsRefusedBeforeTheProgramRuns) {
  const fs::path marker = record_scratch("marker");
  for (const std::string spec : {"no-such-event", "cpu-clock:pp", "cpu-clock@0", "cpu-clock@999999999"}) {
    auto r = run_hwprof({"record", "-e", spec, "--", "/usr/bin/touch", marker.string()});
    EXPECT_EQ(r.exit_code, 2) << spec << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("record: -e " + spec + ": ")) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << spec << ": the program ran";
  }
}

}  // namespace
}  // namespace hwprof
