// Programs that use <hwprof/regions.hpp> or <hwprof/regions.h> (examples/mlp_regions.cpp and
// examples/mlp_regions.c, linked with hwprof::regions only), run as a user runs them: the
// environment decides what happens (docs/regions.md, "The environment"). Without a variable nothing is written or said;
// HWPROF_OUTPUT writes the reports at exit with every region once, its work from set_work and
// a roofline point on the calibration; HWPROF_DISABLE, MPI ranks, bad variables, a missing
// report module and a missing calibration each do what docs/regions.md says.
#include <algorithm>
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
#include "run_process.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ::hwprof::test::contains;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RegionsEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hwprof-regions-env-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cwd");
    fs::create_directories(dir_ / "data");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // A calibration of this CPU (made_up_calibration.hpp), checked to load.
  std::string calibration() {
    const Machine m = test::made_up_calibration(describe_this_cpu());
    const fs::path file = dir_ / "machine.json";
    std::ofstream(file) << machine_to_json(m);
    const auto loaded = load_machine(file.string());
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return file.string();
  }

  // The program with only these variables (and PATH, HOME, an empty XDG_DATA_HOME, one
  // OpenBLAS thread), in an empty working folder.
  test::ProcessResult run(const std::string& program, const std::vector<std::string>& variables, const std::vector<std::string>& args = {"20"}) {
    std::vector<std::string> env = {"PATH=/usr/bin:/bin", "HOME=" + (dir_ / "cwd").string(), "XDG_DATA_HOME=" + (dir_ / "data").string(),
                                    "OPENBLAS_NUM_THREADS=1"};
    if (const char* asan = std::getenv("ASAN_OPTIONS")) env.push_back(std::string("ASAN_OPTIONS=") + asan);
    env.insert(env.end(), variables.begin(), variables.end());
    std::vector<std::string> argv = {program};
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv, &env, (dir_ / "cwd").string());
  }

  static json layers_by_name(const json& profile) {
    json out = json::object();
    for (const json& l : profile.at("layers")) {
      EXPECT_FALSE(out.contains(l.at("name").get<std::string>())) << "twice: " << l.at("name");
      out[l.at("name").get<std::string>()] = l;
    }
    return out;
  }

  fs::path dir_;
};

const std::string kMlp = HWPROF_EXAMPLE_MLP;
const std::string kC = HWPROF_EXAMPLE_C;

TEST_F(RegionsEnv, WithoutVariablesTheProgramRunsAsBeforeAndWritesNothing) {
  for (const std::string& program : {kMlp, kC}) {
    const test::ProcessResult r = run(program, {});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "20 steps")) << r.out;
    EXPECT_EQ(r.err, "") << program << " said something without being asked";
    EXPECT_TRUE(fs::is_empty(dir_ / "cwd")) << program << " wrote into its working folder";
    EXPECT_TRUE(fs::is_empty(dir_ / "data"));
  }
}

TEST_F(RegionsEnv, OutputWritesEveryReportWithEachRegionOnceItsWorkAndARooflinePoint) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kMlp, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_CALIBRATION=" + calibration(), "HWPROF_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "hwprof: wrote")) << r.err;
  for (const char* file : {"profile.json", "profile.txt", "profile.csv", "roofline.svg", "report.html", "trace.json"}) {
    EXPECT_TRUE(fs::is_regular_file(out / file)) << file << " missing; stderr: " << r.err;
  }
  const json profile = json::parse(slurp(out / "profile.json"));
  EXPECT_EQ(profile.at("phase"), "regions");
  EXPECT_EQ(profile.at("model"), "hwprof_example_mlp_regions") << "the program's name, not its 15-character comm";
  const json layers = layers_by_name(profile);
  for (const char* name : {"train_step", "fc1", "relu", "fc2", "loss", "backward", "sgd"}) {
    ASSERT_TRUE(layers.contains(name)) << name << " not in profile.json";
    EXPECT_EQ(layers[name].at("time_ms").at("n"), 20) << name;
  }
  EXPECT_EQ(layers.size(), 7u);
  // fc1: a 64×784 by 784×512 SGEMM, as set_work gave it.
  EXPECT_EQ(layers["fc1"].at("flops"), 2LL * 64 * 512 * 784);
  EXPECT_EQ(layers["fc1"].at("bytes").at("value"), 4.0 * (64.0 * 784 + 784.0 * 512 + 2.0 * 64 * 512));
  for (const char* name : {"fc1", "relu", "fc2", "backward", "sgd"}) {
    EXPECT_FALSE(layers[name].at("roofline").is_null()) << name << ": " << layers[name].dump();
  }
  for (const char* name : {"train_step", "loss"}) {
    EXPECT_TRUE(layers[name].at("roofline").is_null()) << name << " has no work, so no point";
  }
  // The table, the call paths and the per-thread rows.
  const std::string table = slurp(out / "profile.txt");
  EXPECT_TRUE(contains(table, "fc1")) << table;
  EXPECT_TRUE(contains(table, "train_step/fc1")) << table;
  // The timeline: the user's regions as complete events on the thread's lane.
  const json trace = json::parse(slurp(out / "trace.json"));
  std::map<std::string, int> spans;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") ++spans[e.at("name").get<std::string>()];
  }
  EXPECT_EQ(spans["fc1"], 20);
  EXPECT_EQ(spans["train_step"], 20);
}

TEST_F(RegionsEnv, TheCProgramWorksTheSameWay) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_CALIBRATION=" + calibration(), "HWPROF_THREADS=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json layers = layers_by_name(json::parse(slurp(out / "profile.json")));
  EXPECT_EQ(layers.size(), 3u);
  for (const char* name : {"step", "triad", "reduce"}) {
    ASSERT_TRUE(layers.contains(name)) << name;
    EXPECT_EQ(layers[name].at("time_ms").at("n"), 20) << name;
  }
  EXPECT_EQ(layers["triad"].at("flops"), 2 * 65536);
  EXPECT_EQ(layers["triad"].at("bytes").at("value"), 12.0 * 65536);
  EXPECT_FALSE(layers["triad"].at("roofline").is_null());
  EXPECT_FALSE(layers["reduce"].at("roofline").is_null());
  EXPECT_TRUE(layers["step"].at("roofline").is_null());
}

TEST_F(RegionsEnv, WithoutACalibrationTheReportSaysHowToMakeOne) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_BACKEND=timer"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json profile = json::parse(slurp(out / "profile.json"));
  bool said = false;
  for (const json& h : profile.at("hints")) said = said || contains(h.get<std::string>(), "hwprof calibrate");
  EXPECT_TRUE(said) << profile.at("hints").dump();
  for (const json& l : profile.at("layers")) EXPECT_TRUE(l.at("roofline").is_null());
}

TEST_F(RegionsEnv, ACalibrationOfAnotherCpuIsRefusedWithTheReason) {
  Machine other;
  other.cpu.vendor = "GenuineOther";
  other.cpu.brand = "Another CPU";
  other.cpu.family = 99;
  other.host = "elsewhere";
  const fs::path file = dir_ / "other.json";
  std::ofstream(file) << machine_to_json(other);
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_CALIBRATION=" + file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string hints = json::parse(slurp(out / "profile.json")).at("hints").dump();
  EXPECT_TRUE(contains(hints, "HWPROF_CALIBRATION")) << hints;
}

TEST_F(RegionsEnv, DisableMeasuresNothingAndWritesNothing) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kMlp, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_DISABLE=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RegionsEnv, EachMpiRankWritesItsOwnFolder) {
  const fs::path out = dir_ / "out";
  for (const char* rank : {"0", "3"}) {
    const test::ProcessResult r =
        run(kC, {"HWPROF_OUTPUT=" + out.string(), "OMPI_COMM_WORLD_RANK=" + std::string(rank), "OMPI_COMM_WORLD_SIZE=4"}, {"2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // torchrun's RANK counts with its WORLD_SIZE; Slurm's SLURM_PROCID alone.
  ASSERT_EQ(run(kC, {"HWPROF_OUTPUT=" + out.string(), "RANK=1", "WORLD_SIZE=4"}, {"2"}).exit_code, 0);
  ASSERT_EQ(run(kC, {"HWPROF_OUTPUT=" + out.string(), "SLURM_PROCID=2"}, {"2"}).exit_code, 0);
  for (const char* folder : {"rank-00000", "rank-00001", "rank-00002", "rank-00003"}) {
    EXPECT_TRUE(fs::is_regular_file(out / folder / "profile.json")) << folder;
  }
  const json p3 = json::parse(slurp(out / "rank-00003" / "profile.json"));
  EXPECT_EQ(p3.at("rank").at("rank"), 3);
  EXPECT_EQ(p3.at("rank").at("size"), 4);
  EXPECT_EQ(p3.at("rank").at("from"), "OMPI_COMM_WORLD_RANK");
  EXPECT_FALSE(fs::exists(out / "profile.json"));
}

TEST_F(RegionsEnv, ProfileUnderALauncherWritesItsRankFolder) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r =
      run(HWPROF_CLI_PATH, {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_SIZE=2"},
          {"profile", "lenet5", "--iterations", "3", "--warmup", "1", "--backend", "timer", "--calibration", calibration(), "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::is_regular_file(out / "rank-00001" / "profile.json")) << r.err;
  EXPECT_FALSE(fs::exists(out / "profile.json"));
  const json p = json::parse(slurp(out / "rank-00001" / "profile.json"));
  EXPECT_EQ(p.at("rank").at("rank"), 1);
  EXPECT_EQ(p.at("rank").at("size"), 2);
}

TEST_F(RegionsEnv, MergeNamesTheRankThatDidTheMostWork) {
  // Three ranks of one "launch": rank 2 runs 8x the steps of the others.
  const fs::path out = dir_ / "out";
  for (const auto& [rank, steps] : {std::pair{"0", "5"}, {"1", "5"}, {"2", "40"}}) {
    const test::ProcessResult r =
        run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_BACKEND=timer", "OMPI_COMM_WORLD_RANK=" + std::string(rank), "OMPI_COMM_WORLD_SIZE=3"},
            {steps});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const test::ProcessResult merged = test::run_hwprof({"merge", out.string(), "-f", "json"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const json m = json::parse(merged.out);
  ASSERT_EQ(m.at("ranks").size(), 3u);
  EXPECT_EQ(m.at("ranks")[2].at("rank"), 2);
  // What each rank spent in "step", read from its own profile.json (the merge's input, not its
  // output): its threads' inclusive times, as docs/merge.md defines a rank's time.
  std::vector<double> spent;
  for (const char* folder : {"rank-00000", "rank-00001", "rank-00002"}) {
    const json rank = json::parse(slurp(out / folder / "profile.json"));
    double ms = 0;
    for (const json& row : rank.at("region_threads")) {
      if (row.at("region") == "step") ms += row.at("inclusive_ms").get<double>();
    }
    ASSERT_GT(ms, 0.0) << folder;
    spent.push_back(ms);
  }
  const std::size_t slowest = static_cast<std::size_t>(std::max_element(spent.begin(), spent.end()) - spent.begin());
  const double mean = (spent[0] + spent[1] + spent[2]) / 3.0;
  bool step = false;
  for (const json& r : m.at("regions")) {
    if (r.at("name") != "step") continue;
    step = true;
    // The work is in the calls, exactly as the ranks were told: rank 2 did the most of it.
    EXPECT_EQ(r.at("rank_calls"), json::array({5, 5, 40}));
    // The times are each rank's own, carried over; the straggler is the rank whose profile says
    // it spent the most (a busy machine may make that rank 0's 5 steps rather than rank 2's 40),
    // and the imbalance is (max - mean) / max of those times.
    ASSERT_EQ(r.at("rank_ms").size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(r.at("rank_ms")[k].get<double>(), spent[k], 1e-9 * spent[k]) << "rank " << k;
    EXPECT_EQ(r.at("straggler_rank").get<std::size_t>(), slowest);
    EXPECT_NEAR(r.at("imbalance").get<double>(), (spent[slowest] - mean) / spent[slowest], 1e-9);
  }
  EXPECT_TRUE(step);
  EXPECT_TRUE(m.at("warnings").empty()) << m.at("warnings").dump();
  const test::ProcessResult table = test::run_hwprof({"merge", out.string()});
  EXPECT_TRUE(contains(table.out, "3 ranks")) << table.out;
  EXPECT_TRUE(contains(table.out, "imbalance")) << table.out;
  // The merge's JSON renders again, the same table; the HTML has the per-rank view.
  const fs::path saved = dir_ / "merge.json";
  const fs::path page = dir_ / "merge.html";
  ASSERT_EQ(test::run_hwprof({"merge", out.string(), "-f", "json", "-o", saved.string(), "--html", page.string()}).exit_code, 0);
  EXPECT_TRUE(contains(slurp(page), "<th>rank 2</th>"));
  const test::ProcessResult again = test::run_hwprof({"merge", saved.string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, table.out);
  // A merge file that lies is refused with its name and the field.
  std::string lie = slurp(saved);
  lie.replace(lie.find("\"imbalance\": "), 13, "\"imbalance\": 7");
  std::ofstream(saved) << lie;
  const test::ProcessResult refused = test::run_hwprof({"merge", saved.string()});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(contains(refused.err, "merge.json:")) << refused.err;
  EXPECT_TRUE(contains(refused.err, ": /total/imbalance: 7")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "disagrees with its rank_ms")) << refused.err;
  // A rank that did not write is said.
  fs::remove_all(out / "rank-00001");
  const test::ProcessResult two = test::run_hwprof({"merge", out.string()});
  EXPECT_TRUE(contains(two.out, "2 of 3 ranks are here; missing: rank 1")) << two.out;
  EXPECT_NE(test::run_hwprof({"merge", (dir_ / "nothing").string()}).exit_code, 0);
}

TEST_F(RegionsEnv, BadVariablesAreSaidAndTheProgramStillRunsAndReports) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r =
      run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_BACKEND=fast", "HWPROF_EVENTS=no-such-event-xyz", "HWPROF_THREADS=many"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "HWPROF_BACKEND=fast")) << r.err;
  EXPECT_TRUE(contains(r.err, "no-such-event-xyz")) << r.err;
  const json profile = json::parse(slurp(out / "profile.json"));
  EXPECT_EQ(profile.at("layers").size(), 3u);
  EXPECT_TRUE(contains(profile.at("hints").dump(), "no-such-event-xyz")) << profile.at("hints").dump();
  EXPECT_TRUE(contains(profile.at("warnings").dump(), "HWPROF_THREADS=many")) << profile.at("warnings").dump();
}

TEST_F(RegionsEnv, AnUnwritableOutputIsSaidAndTheProgramsExitCodeKept) {
  std::ofstream(dir_ / "file") << "x";
  const test::ProcessResult r = run(kC, {"HWPROF_OUTPUT=" + (dir_ / "file" / "out").string()}, {"2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "HWPROF_OUTPUT=")) << r.err;
}

TEST_F(RegionsEnv, WithoutTheReportModuleRegionsTxtSaysWhyAndHasTheTimes) {
  const fs::path out = dir_ / "out";
  const test::ProcessResult r = run(kC, {"HWPROF_OUTPUT=" + out.string(), "HWPROF_REPORT_MODULE=/nonexistent/libhwprof-report.so"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::is_regular_file(out / "regions.txt")) << r.err;
  EXPECT_FALSE(fs::exists(out / "profile.json"));
  const std::string text = slurp(out / "regions.txt");
  EXPECT_TRUE(contains(text, "/nonexistent/libhwprof-report.so")) << text;
  EXPECT_TRUE(contains(text, "triad")) << text;
}

}  // namespace
}  // namespace hwprof
