// The machine report: JSON round trip, every malformed file with its message, foreign CPUs,
// where reports are kept, and the ceilings chart.
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fstream>
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/report.hpp"

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
  m.cpu.caches = {{1, "Data", 48 * 1024, 1, "sysfs"}, {2, "Unified", 1 << 20, 1, "sysfs"}, {3, "Unified", 32 << 20, 2, "sysfs"}};
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
    run.bandwidth["l1"] = {4096, 32768, {{"triad", ceiling(200 * t, 190 * t, 24576)}, {"copy", ceiling(180 * t, 170 * t, 24576)}}, true, 0, "",
                           0,    ""};
    run.bandwidth["l2"] = {65536, 786432, {{"triad", ceiling(90 * t, 85 * t, 524288)}}, /*plateau=*/false, 0, "", 0, ""};
    run.bandwidth["dram"] = {
        134217728, 536870912, {{"triad", ceiling(15 * t, 14 * t, 536870912)}, {"triad_nt", ceiling(20 * t, 19 * t, 536870912, "nontemporal")}},
        true,      0,         "",
        0,         ""};
    run.compute["fma_sp"] = ceiling(120 * t, 118 * t, 0, "avx512f");
    run.compute["fma_dp"] = ceiling(60 * t, 59 * t, 0, "avx512f");
    run.compute["gemm_sp"] = ceiling(100 * t, 98 * t, 2048, "openblas");
    run.compute["gemm_sp"].note = "1 of 5 repetitions shared a worker's CPU with another process";
    run.sweep = {{4096, "triad", 199, 190}, {536870912, "triad_nt", 20, 19}};
    run.bandwidth["l1"].capacity_bytes = 48 * 1024 * threads;
    run.bandwidth["l1"].capacity_source = "sweep";
    run.bandwidth["l1"].reported_bytes = 48 * 1024 * threads;
    run.bandwidth["l2"].capacity_bytes = threads << 20;
    run.bandwidth["l2"].capacity_source = "sysfs";
    run.bandwidth["l2"].note = "the sweep shows no knee for this level";
    run.notes = {"2 sweep points lie past the last knee"};
    m.runs.push_back(run);
  }
  m.cpu.cache_sources = {{"sysfs", "/sys/devices/system/cpu/cpu*/cache/index*", m.cpu.caches, "", {}},
                         {"cpuid", "", {}, "leaves 0x8000001D and 0x80000005/6 describe no cache", {}}};
  m.cpu.cache_notes = {"the sources disagree on L3"};
  m.contention.others_cpus = 0.04;
  m.contention.steal_percent = 0.1;
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
  // The transcendental kernels' ceilings are G evaluations per second, and say so in their keys.
  Machine with_tanh = m;
  with_tanh.runs[0].compute["tanh_sp"].best = 0.71;
  with_tanh.runs[0].compute["tanh_sp"].median = 0.65;
  with_tanh.runs[0].compute["tanh_sp"].repetitions = 5;
  const std::string tanh_json = machine_to_json(with_tanh);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(tanh_json)["runs"][0]["compute"]["tanh_sp_gevals"].get<double>(), 0.71);
  auto tanh_back = machine_from_json(tanh_json, "m.json");
  ASSERT_TRUE(tanh_back.ok()) << tanh_back.error().message;
  EXPECT_DOUBLE_EQ(tanh_back->runs[0].compute.at("tanh_sp").best, 0.71);
  EXPECT_EQ(machine_to_json(*tanh_back), tanh_json);
  // Where each level ends and who says so; every cache source, the disagreements, contention.
  EXPECT_EQ(run["bandwidth"]["l1"]["capacity_bytes"], 96 * 1024);
  EXPECT_EQ(run["bandwidth"]["l1"]["capacity_source"], "sweep");
  EXPECT_EQ(run["bandwidth"]["l2"]["capacity_source"], "sysfs");
  EXPECT_FALSE(run["bandwidth"]["dram"].contains("capacity_bytes")) << "DRAM has no end";
  EXPECT_EQ(run["notes"][0], "2 sweep points lie past the last knee");
  EXPECT_EQ(j["cpu"]["cache_sources"].size(), 2u);
  EXPECT_EQ(j["cpu"]["cache_sources"][1]["absent"], "leaves 0x8000001D and 0x80000005/6 describe no cache");
  EXPECT_EQ(j["cpu"]["caches"][0]["source"], "sysfs");
  EXPECT_EQ(j["contended"], false);
  EXPECT_TRUE(j["contention"]["evidence"].empty());
  EXPECT_EQ(back->cpu.cache_notes, m.cpu.cache_notes);
  EXPECT_EQ(back->run_for(1)->bandwidth.at("l2").note, "the sweep shows no knee for this level");
}

TEST(MachineReport, AReportFromBeforeLevelsAndContentionStillReads) {
  auto j = nlohmann::json::parse(machine_to_json(sample_machine()));
  j.erase("contended");
  j.erase("contention");
  j["cpu"].erase("cache_sources");
  j["cpu"].erase("cache_notes");
  for (auto& c : j["cpu"]["caches"]) c.erase("source");
  for (auto& run : j["runs"]) {
    run.erase("notes");
    for (auto& [level, b] : run["bandwidth"].items()) {
      for (const char* key : {"capacity_bytes", "capacity_source", "reported_bytes", "note"}) b.erase(key);
    }
  }
  auto back = machine_from_json(j.dump(), "old.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->contention.contended);
  EXPECT_EQ(back->run_for(1)->bandwidth.at("l1").capacity_bytes, 0) << "then the CPU's caches decide";
}

TEST(MachineReport, ImplausibleCeilingsAreNamedField) {
  const auto problems = [](const std::function<void(Machine&)>& edit) {
    Machine m = sample_machine();
    edit(m);
    return implausible_fields(m);
  };
  EXPECT_TRUE(problems([](Machine&) {}).empty());
  const auto dram = problems([](Machine& m) { m.runs[1].bandwidth["dram"].kernels["triad"].best = 500; });
  ASSERT_EQ(dram.size(), 1u) << "each level against the nearer one beside it";
  EXPECT_THAT(dram[0], HasSubstr("/runs/1/bandwidth/dram/triad_gbps (500.0 GB/s) exceeds /runs/1/bandwidth/l2/triad_gbps"));
  EXPECT_THAT(dram[0], HasSubstr("L1 >= L2 >= L3 >= DRAM"));
  EXPECT_TRUE(problems([](Machine& m) { m.runs[1].bandwidth["l2"].kernels["triad"].best = 410; }).empty()) << "within 5 % of L1 (400) is noise";
  const auto dp = problems([](Machine& m) { m.runs[0].compute["fma_dp"].best = 200; });
  ASSERT_FALSE(dp.empty());
  EXPECT_THAT(dp[0], HasSubstr("/runs/0/compute/fma_dp_gflops (200.0) exceeds /runs/0/compute/fma_sp_gflops"));
  const auto gemm = problems([](Machine& m) { m.runs[0].compute["gemm_sp"].best = 130; });
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_THAT(gemm[0], HasSubstr("GEMM <= FMA"));
  const auto peak = problems([](Machine& m) {
    m.runs[0].compute["fma_sp"].best = 400;   // one core: the theoretical SP figure for 1 of 2 cores is 166.4
    m.runs[0].compute["gemm_sp"].best = 300;  // under twice the theoretical: not flagged
  });
  ASSERT_EQ(peak.size(), 1u) << testing::PrintToString(peak);
  EXPECT_THAT(peak[0], HasSubstr("/runs/0/compute/fma_sp_gflops (400.0) is more than twice the theoretical 166.4"));
}

TEST(MachineReport, AnImplausibleReportIsRefusedAtItsField) {
  Machine m = sample_machine();
  m.runs[0].bandwidth["dram"].kernels["triad"].best = 1000;
  m.runs[0].bandwidth["dram"].kernels["triad"].median = 900;
  auto read = machine_from_json(machine_to_json(m), "m.json");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error().message, MatchesRegex("m\\.json:[0-9]+:[0-9]+: /runs/0/bandwidth/dram/triad_gbps: .*"));
  EXPECT_THAT(read.error().message, HasSubstr("an implausible machine report"));
  EXPECT_THAT(read.error().message, HasSubstr("run `hwprof calibrate` again on a quiet machine"));
}

TEST(MachineReport, DoubtsAProfileMustShowFirst) {
  Machine m = sample_machine();
  EXPECT_TRUE(calibration_doubts(m, 1).empty());
  m.contention.contended = true;
  m.contention.evidence = {"1 thread, memory sweep: other processes used 1.96 CPUs"};
  m.runs[0].bandwidth["dram"].plateau = false;
  m.runs[0].bandwidth["dram"].note = "no flat tail: bandwidth was still falling at 2 GiB";
  m.runs[0].bandwidth["l2"].capacity_bytes = 0;
  m.runs[0].bandwidth["l2"].capacity_source = "";
  m.runs[0].bandwidth["l2"].note = "the sweep ended before this level did";
  const auto doubts = calibration_doubts(m, 1);
  ASSERT_EQ(doubts.size(), 3u) << testing::PrintToString(doubts);
  EXPECT_THAT(doubts[0], HasSubstr("while other processes ran (1 thread, memory sweep: other processes used 1.96 CPUs)"));
  EXPECT_THAT(doubts[1], HasSubstr("not from a flat tail (no flat tail: bandwidth was still falling at 2 GiB)"));
  EXPECT_THAT(doubts[2], HasSubstr("where l2 ends is unknown"));
  EXPECT_EQ(calibration_doubts(m, 2).size(), 1u) << "the 2-thread run has a flat DRAM tail";
  m.runs[1].bandwidth.erase("dram");
  EXPECT_THAT(calibration_doubts(m, 2).back(), HasSubstr("no DRAM ceiling"));
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
        Broken{"AProfile",
               [](auto& j) {
                 j["layers"] = nlohmann::json::array();
                 j["total"] = nlohmann::json::object();
               },
               "m.json:1:1: this is a profile (`hwprof profile`; `hwprof report` renders it), not a machine report"},
        Broken{"MissingRuns", [](auto& j) { j.erase("runs"); }, "missing \"runs\""},
        Broken{"EmptyRuns", [](auto& j) { j["runs"] = nlohmann::json::array(); }, "non-empty list of runs"},
        Broken{"NegativeBandwidth", [](auto& j) { j["runs"][0]["bandwidth"]["dram"]["triad_gbps"] = -3; },
               "/runs/0/bandwidth/dram/triad_gbps: expected a positive finite number, got -3"},
        Broken{"ZeroCompute", [](auto& j) { j["runs"][1]["compute"]["fma_sp_gflops"] = 0; }, "/runs/1/compute/fma_sp_gflops"},
        Broken{"StringForNumber", [](auto& j) { j["runs"][0]["bandwidth"]["l1"]["copy_gbps"] = "fast"; }, "expected a number, got string"},
        Broken{"MedianAboveBest", [](auto& j) { j["runs"][0]["bandwidth"]["l1"]["triad_median_gbps"] = 1000; }, "the median exceeds the best value"},
        Broken{"UnknownLevel", [](auto& j) { j["runs"][0]["bandwidth"]["l4"] = j["runs"][0]["bandwidth"]["l1"]; }, "unknown memory level \"l4\""},
        Broken{"PlateauNotBoolean", [](auto& j) { j["runs"][0]["bandwidth"]["l2"]["plateau"] = "no"; },
               "/bandwidth/l2/plateau: expected true or false"},
        Broken{"LevelWithoutTriad", [](auto& j) { j["runs"][0]["bandwidth"]["l2"].erase("triad_gbps"); }, "missing \"triad_gbps\""},
        Broken{"DuplicateThreads", [](auto& j) { j["runs"][1]["threads"] = 1; }, "a second run with 1 threads"},
        Broken{"ZeroThreads", [](auto& j) { j["runs"][0]["threads"] = 0; }, "expected an integer >= 1"},
        Broken{"FlagsNotStrings", [](auto& j) { j["cpu"]["flags"][1] = 7; }, "/cpu/flags/1: expected a string"},
        Broken{"MissingCpuModel", [](auto& j) { j["cpu"].erase("model"); }, "/cpu: missing \"model\""},
        Broken{"NegativeCacheSize", [](auto& j) { j["cpu"]["caches"][0]["size_bytes"] = -1; }, "/cpu/caches/0/size_bytes"},
        Broken{"NotAnObject",
               [](auto& j) {
                 j = nlohmann::json::array({1, 2});
               },
               "a machine report is a JSON object"}),
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
    dir_ = std::filesystem::temp_directory_path() /
           ("hwprof-store-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    for (Saved& s : saved_) {
      const char* old = std::getenv(s.name);
      s.had = old != nullptr;
      s.value = s.had ? old : "";
    }
    ::setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (const Saved& s : saved_) {
      if (s.had) {
        ::setenv(s.name, s.value.c_str(), 1);
      } else {
        ::unsetenv(s.name);
      }
    }
    std::filesystem::remove_all(dir_);
  }
  struct Saved {
    const char* name;
    std::string value;
    bool had = false;
  };
  std::filesystem::path dir_;
  Saved saved_[2] = {{"XDG_DATA_HOME", "", false}, {"HOME", "", false}};
};

TEST_F(MachineStore, ReportsLiveUnderXdgDataHomeNamedByHostAndCpu) {
  EXPECT_EQ(machine_store_dir(), dir_.string() + "/hwprof/machines");
  const std::string path = machine_store_path("my host", sample_machine().cpu);
  EXPECT_EQ(path, dir_.string() + "/hwprof/machines/my-host--AMD-EPYC-test-f26m2-2cpu.json");
  ::setenv("XDG_DATA_HOME", "relative/dir", 1);  // the XDG spec ignores relative paths
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(machine_store_dir(), "/home/someone/.local/share/hwprof/machines");
}

TEST_F(MachineStore, WithoutHomeTheStoreIsInThePasswordDatabasesHome) {
  ::unsetenv("XDG_DATA_HOME");
  ::unsetenv("HOME");
  const struct passwd* entry = ::getpwuid(::getuid());
  if (entry == nullptr || entry->pw_dir == nullptr || entry->pw_dir[0] != '/') {
    EXPECT_EQ(machine_store_dir(), "") << "no home anywhere: no store, never the working directory";
    return;
  }
  const std::string expected = std::string(entry->pw_dir) + "/.local/share/hwprof/machines";
  EXPECT_EQ(machine_store_dir(), expected);  // under ASan this also checks the copy outlives getpwuid_r's buffer
  ::setenv("HOME", "relative", 1);           // a relative HOME is not a home either
  EXPECT_EQ(machine_store_dir(), expected);
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

TEST_F(MachineStore, AnInProcessCalibrationIsStoredUnlessContendedOrImplausible) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  Machine m = sample_machine();
  m.cpu = describe_this_cpu();
  m.host = host;

  Machine busy = m;
  busy.contention.contended = true;
  const auto refused = store_machine(busy);
  ASSERT_TRUE(refused.has_value());
  EXPECT_THAT(refused->message, HasSubstr("disturbed"));
  EXPECT_FALSE(load_stored_machine().ok()) << "nothing was stored";

  Machine inverted = m;
  inverted.runs[0].bandwidth["dram"].kernels["triad"].best = 1e4;  // DRAM above L1
  const auto implausible = store_machine(inverted);
  ASSERT_TRUE(implausible.has_value());
  EXPECT_THAT(implausible->message, HasSubstr("implausible"));
  EXPECT_FALSE(load_stored_machine().ok());

  std::string path;
  const auto stored = store_machine(m, false, &path);
  ASSERT_FALSE(stored.has_value()) << stored->message;
  EXPECT_EQ(path, machine_store_path(host, m.cpu));
  auto found = load_stored_machine();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->runs.size(), m.runs.size());
  EXPECT_FALSE(store_machine(busy, /*allow_contended=*/true).has_value()) << "kept, marked, when the caller says so";

  Machine unreadable = m;
  unreadable.theoretical.cores = 0;  // the loader refuses it, so it is not written
  const auto not_stored = store_machine(unreadable);
  ASSERT_TRUE(not_stored.has_value());
  EXPECT_THAT(not_stored->message, HasSubstr("/theoretical/cores"));
}

TEST_F(MachineStore, OneCalibrationAtATimeHoldsTheStoresLock) {
  std::vector<std::string> said;
  auto first = CalibrationLock::acquire([&](const std::string& line) { said.push_back(line); });
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(said.empty());
  EXPECT_TRUE(std::filesystem::exists(machine_store_dir() + "/.calibrating.lock"));
  // Another process wanting it waits, and says so, until this one lets go. It tells us through
  // a pipe once it has said so (and so found the lock held): only then is the lock let go, so
  // the child is seen waiting however slowly it starts.
  int said_waiting[2];
  ASSERT_EQ(::pipe(said_waiting), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    // A process of its own: not the descriptors, and so not the lock, fork() shares with us;
    // only the pipe's write end, moved to descriptor 3.
    ::dup2(said_waiting[1], 3);
    ::close_range(4, ~0U, 0);
    bool waited = false;
    auto second = CalibrationLock::acquire([&](const std::string& line) {
      waited = line.find("waiting") != std::string::npos;
      if (waited) (void)!::write(3, "w", 1);
    });
    ::_exit(second.ok() && waited ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  ::close(said_waiting[1]);
  char byte = 0;
  ssize_t got = 0;
  while ((got = ::read(said_waiting[0], &byte, 1)) < 0 && errno == EINTR) {
  }
  ::close(said_waiting[0]);
  EXPECT_EQ(got, 1) << "the child ended without saying it waited";
  { CalibrationLock released = std::move(*first); }  // moved out, then dropped: the lock goes
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the second calibration waited, then had the lock";
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
