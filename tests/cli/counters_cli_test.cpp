// `hwprof stat` and `hwprof info` as a user runs them.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::run_hwprof;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

fs::path scratch_file(const std::string& name) {
  return fs::temp_directory_path() / ("hwprof-counters-cli-" + std::to_string(::getpid()) + "-" + name);
}

TEST(StatCli, CountsEveryThreadOfTheProgramAndPassesItsExitCodeThrough) {
  const fs::path out = scratch_file("stat.json");
  auto r = run_hwprof({"stat", "-e", "task-clock,page-faults", "-f", "json", "-o", out.string(), "--", HWPROF_SPIN_PATH, "2", "0.4", "7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  const auto j = read_json(out);
  fs::remove(out);
  EXPECT_EQ(j["exit_code"], 7);
  EXPECT_EQ(j["command"][0], HWPROF_SPIN_PATH);
  ASSERT_EQ(j["events"].size(), 2u);
  const auto& clock = j["events"][0];
  EXPECT_EQ(clock["name"], "task-clock");
  EXPECT_EQ(clock["status"], "ok");
  EXPECT_EQ(clock["unit"], "ns");
  EXPECT_GT(j["events"][1]["value"].get<double>(), 0.0);
  // Each of the 2 threads spins until it has used 0.4 s of its own CPU time (spin_threads.cpp),
  // so the process used at least 0.8 s however busy the machine is; one thread counted alone
  // would show 0.4 s. No time is asserted, only how many threads were counted.
  const double cpu_seconds = clock["value"].get<double>() * 1e-9;
  EXPECT_GE(cpu_seconds, 0.95 * 2 * 0.4) << "task-clock of a 2-thread program that uses 0.4 s of CPU per thread";
  EXPECT_LT(cpu_seconds, 0.4 * 2 * 1.5 + 0.1) << "no more than both threads' time and the program's start";
}

TEST(StatCli, UnavailableEventsAreShownWithTheirReasonNeverAsZero) {
  const fs::path out = scratch_file("unsupported.json");
  auto r = run_hwprof({"stat", "-e", "task-clock,no-such-event", "-f", "json", "-o", out.string(), "--", HWPROF_SPIN_PATH, "1", "0.01"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json(out);
  fs::remove(out);
  const auto& missing = j["events"][1];
  EXPECT_EQ(missing["status"], "unsupported");
  EXPECT_TRUE(missing["value"].is_null());
  EXPECT_FALSE(missing["reason"].get<std::string>().empty());
}

TEST(StatCli, GroupsEvaluateTheirMetrics) {
  const fs::path out = scratch_file("group.json");
  auto r = run_hwprof({"stat", "-g", "software", "-f", "json", "-o", out.string(), "--", HWPROF_SPIN_PATH, "1", "0.05"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json(out);
  fs::remove(out);
  EXPECT_FALSE(j["events"].empty());
  EXPECT_FALSE(j["metrics"].empty());
  for (const auto& m : j["metrics"]) {
    EXPECT_EQ(m["source"], "derived");
    EXPECT_TRUE(!m["value"].is_null() || m.contains("reason")) << m.dump();
  }
}

TEST(StatCli, AProgramThatCannotStartIsAClearError) {
  auto r = run_hwprof({"stat", "--", "/nonexistent/program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_THAT(r.err, HasSubstr("cannot run '/nonexistent/program'"));
  auto no_command = run_hwprof({"stat", "-e", "task-clock"});
  EXPECT_EQ(no_command.exit_code, 2);
  auto unknown_group = run_hwprof({"stat", "-g", "no_such_group", "--", "true"});
  EXPECT_EQ(unknown_group.exit_code, 1);
  EXPECT_THAT(unknown_group.err, HasSubstr("no_such_group"));
}

TEST(StatCli, TheTimerBackendReportsWallAndCpuTime) {
  const fs::path out = scratch_file("timer.json");
  auto r = run_hwprof({"stat", "--backend", "timer", "-f", "json", "-o", out.string(), "--", HWPROF_SPIN_PATH, "1", "0.05"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = read_json(out);
  fs::remove(out);
  ASSERT_EQ(j["events"].size(), 3u);
  EXPECT_EQ(j["events"][0]["name"], "wall-time");
  EXPECT_GT(j["events"][1]["value"].get<double>(), 0.0);  // user time of a spinning program
}

TEST(InfoCli, ReportsTheMachineAndEveryGroupWithReasons) {
  auto r = run_hwprof({"info", "-f", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"kernel", "perf_event_paranoid", "cap_perfmon", "virtual_machine", "cpu", "counter_family", "pmus", "hardware_pmu", "rdpmc",
                          "papi", "groups", "fixes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_FALSE(j["groups"].empty());
  bool software_group = false;
  for (const auto& g : j["groups"]) {
    for (const auto& e : g["events"]) {
      if (e["status"] != "ok") {
        EXPECT_TRUE(e.contains("reason")) << e.dump();
      }
    }
    software_group = software_group || g["name"] == "software";
  }
  EXPECT_TRUE(software_group);
  if (!j["hardware_pmu"].get<bool>()) {
    // Here (a VM without a PMU) every hardware group is unavailable and the fix says why.
    bool explained = false;
    for (const auto& f : j["fixes"]) explained = explained || f.get<std::string>().find("no hardware PMU") != std::string::npos;
    EXPECT_TRUE(explained) << j["fixes"].dump();
  }
  auto table = run_hwprof({"info"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("perf_event_paranoid"));
  EXPECT_THAT(table.out, HasSubstr("Event groups"));
}

TEST(InfoCli, SelfTestChecksTheCountersOrSaysWhyItCannot) {
  auto r = run_hwprof({"info", "--self-test", "-f", "json"});
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("ran")) << r.out;
  if (!j["ran"].get<bool>()) {
    // This project's VMs: no PMU. It says so and succeeds.
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string reason = j["reason"];
    EXPECT_TRUE(reason.find("no hardware PMU") != std::string::npos || reason.find("no FLOP or DRAM group") != std::string::npos) << reason;
    EXPECT_TRUE(j["checks"].empty());
    auto table = run_hwprof({"info", "--self-test"});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_THAT(table.out, HasSubstr("counter self-test"));
    EXPECT_THAT(table.out, HasSubstr("Not run: "));
    return;
  }
  // A machine with a PMU: every check has what it expected, a result, and the exit code says
  // whether any failed.
  ASSERT_FALSE(j["checks"].empty());
  int failed = 0;
  for (const auto& c : j["checks"]) {
    EXPECT_TRUE(c["expected"].is_number()) << c.dump();
    const std::string result = c["result"];
    EXPECT_TRUE(result == "pass" || result == "fail" || result == "unavailable") << c.dump();
    if (result == "unavailable") {
      EXPECT_TRUE(c.contains("note")) << c.dump();
    }
    failed += result == "fail";
  }
  EXPECT_EQ(j["failed"].get<int>(), failed);
  EXPECT_EQ(r.exit_code, failed > 0 ? 1 : 0) << r.err;
}

// Broken data in a counters folder of the user's: `hwprof info` shows the family as unknown and
// why, and a group by name is an error that says so, never the generic groups of a known CPU.
TEST(InfoCli, SaysWhyTheCounterFamilyIsUnknown) {
  const fs::path dir = scratch_file("broken-counters");
  fs::create_directories(dir / "zen5");
  std::ofstream(dir / "zen5" / "cpus.match") << "vendor AuthenticAMD family 1A models 0x00-0x2F\n";
  std::vector<std::string> environment = {"HWPROF_COUNTERS_PATH=" + dir.string()};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("HWPROF_COUNTERS_PATH=", 0) != 0) environment.emplace_back(*e);
  }
  const std::string reason =
      (dir / "zen5" / "cpus.match").string() + ":1: family '1A' has no 0x; expected hexadecimal with 0x (0x1A if that was hexadecimal)";
  auto json = test::run_process({HWPROF_CLI_PATH, "info", "-f", "json"}, &environment);
  auto table = test::run_process({HWPROF_CLI_PATH, "info"}, &environment);
  auto stat = test::run_process({HWPROF_CLI_PATH, "stat", "-g", "ipc", "--", "true"}, &environment);
  fs::remove_all(dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["counter_family"], "unknown");
  EXPECT_EQ(j["counter_family_reason"], reason);
  EXPECT_FALSE(j.contains("counter_family_note"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("counter family       unknown\n"));
  EXPECT_THAT(table.out, HasSubstr("why: " + reason));
  EXPECT_NE(stat.exit_code, 0);
  EXPECT_THAT(stat.err, HasSubstr("event group 'ipc': this CPU's counter family is unknown: " + reason));
}

}  // namespace
}  // namespace hwprof
