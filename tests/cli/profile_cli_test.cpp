// `hwprof profile` as a user runs it, on LeNet-5 and the tiny transformer, forward and
// --train: the table and the JSON carry every layer once per phase with its documented
// fields, -o DIR writes every output file, unavailable counters are n/a with a reason (never
// 0), and bad input exits 1, bad usage 2. No speed is asserted: these machines are shared.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ProfileCli : public ::testing::Test {
 protected:
  // One quick calibration of this machine for every test (its ceilings are the roofline's):
  // ctest makes it alone before them (profile_cli.calibration, tests/CMakeLists.txt); run by
  // hand, the suite makes its own. A scratch XDG_DATA_HOME keeps the user's store out of it.
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("hwprof-profile-cli-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    ::setenv("XDG_DATA_HOME", (*dir_ / "data").c_str(), 1);
    std::error_code ec;
    if (fs::copy_file(HWPROF_PROFILE_CLI_MACHINE, *dir_ / "machine.json", ec)) {
      setup_ = new test::ProcessResult{0, "", ""};
      return;
    }
    const auto r = test::run_hwprof({"calibrate", "--quick", "--allow-contended", "--threads", "1", "-o", (*dir_ / "machine.json").string()});
    setup_ = new test::ProcessResult(r);
  }
  // A failed set-up fails every test (an assertion in SetUpTestSuite would only skip them).
  void SetUp() override { ASSERT_EQ(setup_->exit_code, 0) << "hwprof calibrate --quick failed: " << setup_->err; }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete setup_;
  }
  static std::string calibration() { return (*dir_ / "machine.json").string(); }
  static fs::path dir() { return *dir_; }

  static test::ProcessResult profile(std::vector<std::string> args) {
    std::vector<std::string> all = {"profile"};
    all.insert(all.end(), args.begin(), args.end());
    for (const char* a : {"--threads", "1", "--warmup", "1", "--iterations", "3", "--calibration"}) all.emplace_back(a);
    all.push_back(calibration());
    return test::run_hwprof(all);
  }

  static fs::path* dir_;
  static test::ProcessResult* setup_;
};
fs::path* ProfileCli::dir_ = nullptr;
test::ProcessResult* ProfileCli::setup_ = nullptr;

void expect_layers_once_per_phase(const nlohmann::json& j, bool train) {
  std::map<std::string, std::multiset<std::string>> seen;
  for (const auto& layer : j["layers"]) {
    for (const char* key : {"name", "op", "params", "macs", "flops", "bytes", "time_ms", "gflops_per_s", "gbytes_per_s", "intensity",
                            "attainable_gflops_per_s", "efficiency", "bound", "counters"}) {
      EXPECT_TRUE(layer.contains(key)) << layer.value("name", "?") << ": " << key;
    }
    seen[layer.value("phase", "forward")].insert(layer.value("name", std::string()));
  }
  for (const auto& [phase, names] : seen) {
    for (const std::string& n : names) EXPECT_EQ(names.count(n), 1u) << phase << ": " << n;
  }
  EXPECT_FALSE(seen["forward"].empty());
  EXPECT_EQ(seen.count("backward") == 1, train);
  EXPECT_EQ(seen.count("optimizer") == 1, train);
}

TEST_F(ProfileCli, LenetForwardTableAndJson) {
  const auto table = profile({"lenet5", "--batch", "2"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* layer : {"conv1", "pool1", "conv2", "fc1", "fc3"}) EXPECT_THAT(table.out, HasSubstr(layer));
  EXPECT_THAT(table.out, HasSubstr("model total"));
  const auto json = profile({"lenet5", "--batch", "2", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["model"], "lenet5");
  EXPECT_EQ(j["batch"], 2);
  EXPECT_EQ(j["phase"], "forward");
  ASSERT_EQ(j["layers"].size(), 12u);
  expect_layers_once_per_phase(j, false);
}

TEST_F(ProfileCli, TinyTransformerTrainingStep) {
  for (const char* optimizer : {"sgd", "adam"}) {
    const auto r = profile({"tiny_transformer", "--train", "--optimizer", optimizer, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["phase"], "train");
    expect_layers_once_per_phase(j, true);
  }
}

TEST_F(ProfileCli, LenetTrainingCsvAndTinyTransformerForward) {
  const auto csv = profile({"lenet5", "--train", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_THAT(header, HasSubstr("name"));
  int rows = 0;
  for (std::string line; std::getline(lines, line);) rows += !line.empty();
  EXPECT_GT(rows, 12);  // forward, backward and optimizer rows
  const auto fwd = profile({"tiny_transformer", "--format", "json"});
  ASSERT_EQ(fwd.exit_code, 0) << fwd.err;
  expect_layers_once_per_phase(nlohmann::json::parse(fwd.out), false);
}

TEST_F(ProfileCli, OutputDirectoryGetsEveryFile) {
  const fs::path out = dir() / "out";
  const auto r = profile({"lenet5", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"profile.txt", "profile.json", "profile.csv", "roofline.svg", "trace.json", "report.html"}) {
    EXPECT_TRUE(fs::exists(out / file)) << file;
    EXPECT_GT(fs::file_size(out / file), 0u) << file;
  }
  const auto j = nlohmann::json::parse(slurp(out / "profile.json"));
  EXPECT_EQ(j["model"], "lenet5");
  const auto trace = nlohmann::json::parse(slurp(out / "trace.json"));
  EXPECT_TRUE(trace.contains("traceEvents"));
  // `hwprof report` renders the same profile again.
  const auto again = test::run_hwprof({"report", (out / "profile.json").string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("conv1"));
}

// --sample (cpu-clock works without a PMU, wherever perf_event_open is allowed): the table's
// section of where inside each layer the time went, the JSON's sampling object with its counts
// and measured cost, and the flame graph, folded stacks and speedscope files in -o DIR.
TEST_F(ProfileCli, SampleShowsWhereInsideTheLayersAndWritesTheFlameGraph) {
  const fs::path out = dir() / "sampled";
  const auto r = profile({"resnet18", "--sample", "cpu-clock@2000", "-o", out.string()});
  if (r.exit_code != 0 && r.err.find("--sample:") != std::string::npos) GTEST_SKIP() << "this machine refuses sampling: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Where inside the layers the time went (sampled: cpu-clock@2000, 2000 Hz;"));
  EXPECT_THAT(r.out, HasSubstr("Sampling cost: the sampled passes' median was"));
  const auto j = nlohmann::json::parse(slurp(out / "profile.json"));
  ASSERT_TRUE(j.contains("sampling"));
  const auto& s = j["sampling"];
  EXPECT_EQ(s["spec"], "cpu-clock@2000");
  EXPECT_GT(s["samples"].get<int>(), 0);
  EXPECT_EQ(s["sampled_passes"].get<int>() + s["unsampled_passes"].get<int>(), 3);
  ASSERT_FALSE(s["layers"].empty());
  // The convolutions run their GEMMs: the sgemm kernel is among conv1's functions where it
  // has samples enough to say.
  for (const auto& l : s["layers"]) {
    EXPECT_LE(l["samples"].get<int>(), s["samples"].get<int>());
    for (const auto& f : l["top"]) EXPECT_LE(f["low"].get<double>(), f["share"].get<double>());
  }
  for (const char* file : {"flamegraph.svg", "samples.folded", "samples.speedscope.json"}) EXPECT_TRUE(fs::is_regular_file(out / file)) << file;
  EXPECT_THAT(slurp(out / "flamegraph.svg"), HasSubstr("<svg"));
  EXPECT_EQ(nlohmann::json::parse(slurp(out / "samples.speedscope.json"))["profiles"][0]["type"], "sampled");
  // An event that cannot sample is refused with its reason, exit 1.
  const auto bad = profile({"lenet5", "--sample", "no-such-event"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--sample:"));
}

TEST_F(ProfileCli, UnavailableCountersAreNeverZero) {
  const auto r = profile({"lenet5", "--backend", "perf", "--events", "task-clock,cycles", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& layer : j["layers"]) {
    ASSERT_TRUE(layer["counters"].contains("cycles")) << layer.dump();
    const auto& cycles = layer["counters"]["cycles"];
    if (cycles["status"] == "ok" || cycles["status"] == "multiplexed") continue;  // a machine with a PMU
    EXPECT_TRUE(cycles["value"].is_null()) << cycles.dump();
    EXPECT_FALSE(cycles.value("reason", "").empty()) << cycles.dump();
  }
}

TEST_F(ProfileCli, BadInputAndUsage) {
  const auto missing = profile({"no_such_model"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no_such_model"));
  const fs::path broken = dir() / "broken.json";
  std::ofstream(broken) << R"({"name": "x", "input": {"shape": [4]}, "layers": [{"name": "a", "op": "linear"}]})";
  const auto bad_spec = profile({broken.string()});
  EXPECT_EQ(bad_spec.exit_code, 1);
  EXPECT_THAT(bad_spec.err, HasSubstr("broken.json"));
  const fs::path bad_calibration = dir() / "bad_machine.json";
  std::ofstream(bad_calibration) << "{\"schema\": 1,";
  const auto truncated = test::run_hwprof({"profile", "lenet5", "--iterations", "1", "--calibration", bad_calibration.string()});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_THAT(truncated.err, HasSubstr("bad_machine.json"));
  EXPECT_EQ(test::run_hwprof({"profile", "lenet5", "--batch", "0"}).exit_code, 2);
  EXPECT_EQ(test::run_hwprof({"profile", "lenet5", "--sort", "colour"}).exit_code, 2);
  EXPECT_EQ(test::run_hwprof({"profile"}).exit_code, 2);
  const auto unknown_group = profile({"lenet5", "--group", "no_such_group"});
  EXPECT_EQ(unknown_group.exit_code, 1);
  EXPECT_THAT(unknown_group.err, HasSubstr("no_such_group"));
}

}  // namespace
}  // namespace hwprof
