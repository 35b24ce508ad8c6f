// `hwprof report` as a user runs it on a saved profile, and write_profile_outputs (what
// `hwprof profile -o DIR` writes): exit codes, messages and the files.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/report.hpp"
#include "run_process.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ReportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hwprof-report-cli-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    profile_ = (dir_ / "profile.json").string();
    std::ofstream(profile_) << profile_to_json(test::synthetic_profile());
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
  std::string profile_;
};

TEST_F(ReportCli, PrintsTheTableAndWritesTheFilesAskedFor) {
  const fs::path svg = dir_ / "r.svg", trace = dir_ / "t.json", html = dir_ / "r.html";
  auto r = test::run_hwprof({"report", profile_, "--svg", svg.string(), "--trace", trace.string(), "--html", html.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("hwprof profile: synthetic-net, batch 4, train"));
  EXPECT_THAT(r.out, HasSubstr("n/a[2]"));
  EXPECT_THAT(r.err, HasSubstr("wrote trace " + trace.string() + " ("));
  EXPECT_THAT(r.err, HasSubstr("2 sampled iterations of 20)"));
  EXPECT_THAT(read(svg), StartsWith("<svg xmlns="));
  EXPECT_TRUE(nlohmann::json::accept(read(trace)));
  EXPECT_THAT(read(html), StartsWith("<!DOCTYPE html>"));
  // No temporary files left beside them.
  for (const auto& entry : fs::directory_iterator(dir_)) EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos);
}

TEST_F(ReportCli, JsonAndCsvFormatsSortAndTop) {
  auto json = test::run_hwprof({"report", profile_, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out, read(profile_));  // re-rendered, byte for byte
  auto csv = test::run_hwprof({"report", profile_, "-f", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, StartsWith("index,name,op,phase,"));
  auto top = test::run_hwprof({"report", profile_, "--sort", "name", "--top", "2"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("... 14 more layers"));
  auto bad_sort = test::run_hwprof({"report", profile_, "--sort", "speed"});
  EXPECT_EQ(bad_sort.exit_code, 2);
}

TEST_F(ReportCli, ABadProfileExitsWithOneAndThePlace) {
  const fs::path bad = dir_ / "bad.json";
  std::ofstream(bad) << "{\n  \"schema\": 1,\n  \"created\": 7\n}\n";
  auto r = test::run_hwprof({"report", bad.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(bad.string() + ":3:14: /created: expected a string, got number"));
  EXPECT_TRUE(r.out.empty());

  std::string newer = read(profile_);
  const std::string current = "\"schema\": " + std::to_string(kProfileSchema);
  newer.replace(newer.find(current), current.size(), "\"schema\": 99");
  std::ofstream(bad) << newer;
  r = test::run_hwprof({"report", bad.string(), "--html", (dir_ / "x.html").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("newer hwprof"));
  EXPECT_FALSE(fs::exists(dir_ / "x.html"));

  r = test::run_hwprof({"report", (dir_ / "missing.json").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.json: cannot open the profile"));
}

TEST_F(ReportCli, AnUnwritableOutputFailsWithoutPartialFiles) {
  auto r = test::run_hwprof({"report", profile_, "--svg", (dir_ / "no" / "such" / "dir" / "r.svg").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("r.svg: cannot create a temporary file"));
}

TEST_F(ReportCli, CompareFindsTheSlowerLayerAndGatesOnIt) {
  // B: the synthetic profile with its second layer 40% slower in every kept call.
  Profile b = test::synthetic_profile();
  for (double& s : b.layers[1].samples_ms) s *= 1.4;
  b.layers[1].time_ms = summarize(b.layers[1].samples_ms);
  const std::string after = (dir_ / "after.json").string();
  std::ofstream(after) << profile_to_json(b);
  auto table = test::run_hwprof({"compare", profile_, after});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("1 slower"));
  EXPECT_THAT(table.out, HasSubstr("slower"));
  const std::string page = (dir_ / "compare.html").string();
  ASSERT_EQ(test::run_hwprof({"compare", profile_, after, "--html", page}).exit_code, 0);
  EXPECT_THAT(read(page), HasSubstr("Roofline: each layer from A"));
  auto gate = test::run_hwprof({"compare", profile_, after, "--fail-if-slower", "20", "-f", "json"});
  EXPECT_EQ(gate.exit_code, 3) << "40% slower trips a 20% gate";
  const auto j = nlohmann::json::parse(gate.out);
  EXPECT_EQ(j["layers"][1]["verdict"], "slower");
  EXPECT_EQ(test::run_hwprof({"compare", profile_, after, "--fail-if-slower", "50"}).exit_code, 0);
  EXPECT_EQ(test::run_hwprof({"compare", profile_, profile_, "--fail-if-slower", "0"}).exit_code, 0) << "a profile against itself";
  auto missing = test::run_hwprof({"compare", profile_, (dir_ / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nope.json"));
}

TEST_F(ReportCli, CompareSetsMachinesSideBySide) {
  Machine a;
  a.host = "alpha";
  a.created = "2026-11-26T10:00:00Z";
  a.cpu = test::synthetic_profile().machine.cpu;
  a.theoretical = test::synthetic_profile().machine.theoretical;
  a.runs = {test::synthetic_run(1), test::synthetic_run(2)};
  Machine b = a;
  b.host = "beta";
  for (CalibrationRun& run : b.runs) run.compute["fma_sp"].best *= 1.25;
  const std::string fa = (dir_ / "a.json").string(), fb = (dir_ / "b.json").string(), svg = (dir_ / "fleet.svg").string();
  std::ofstream(fa) << machine_to_json(a);
  std::ofstream(fb) << machine_to_json(b);
  auto r = test::run_hwprof({"compare", fa, fb, "--svg", svg});
  ASSERT_EQ(r.exit_code, 0) << r.err << test::run_hwprof({"report", fa}).err;
  EXPECT_THAT(r.out, HasSubstr("2 machine calibrations"));
  EXPECT_THAT(r.out, HasSubstr("1.25x"));
  EXPECT_EQ(read(svg).rfind("<svg", 0), 0u);
  auto mixed = test::run_hwprof({"compare", fa, profile_});
  EXPECT_EQ(mixed.exit_code, 1);
  EXPECT_THAT(mixed.err, HasSubstr("machine reports and profiles together"));
  auto three_profiles = test::run_hwprof({"compare", profile_, profile_, profile_});
  EXPECT_EQ(three_profiles.exit_code, 1);
  EXPECT_THAT(three_profiles.err, HasSubstr("two profiles"));
}

// A PyTorch program's run (tests/fixtures/profiles/torch: 20 steps of a small transformer, one
// row made impossible, rows whose count is partial, op rows with their shapes) as a user reads it.
class TorchReportCli : public ReportCli {
 protected:
  const std::string fixture_ = std::string(HWPROF_FIXTURES_DIR) + "/profiles/torch/lm-steps.json";
};

TEST_F(TorchReportCli, TheTableAnswersPerStepAndNeverSumsNestedShares) {
  auto r = test::run_hwprof({"report", fixture_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("hwprof profile: lm.py, PyTorch (hwprof::torch), 20 steps: "));
  EXPECT_THAT(r.out, HasSubstr(" ms per step in its rows (steps: median "));
  EXPECT_THAT(r.out, HasSubstr("\nThreads: PyTorch ran its ops on 1 thread (of 2 cores)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("batch")));
  EXPECT_THAT(r.out, HasSubstr("Calls/step  ms/step  Call ms"));
  EXPECT_THAT(r.out, HasSubstr("1 row with an impossible rate"));
  EXPECT_THAT(r.out, HasSubstr("... 14 more rows, each at most "));
  EXPECT_THAT(r.out, HasSubstr("(rows nest: their shares overlap); --all shows every row"));
  EXPECT_THAT(r.out, Not(HasSubstr("more rows hold")));
  EXPECT_THAT(r.out, HasSubstr("≥"));
}

TEST_F(TorchReportCli, EveryRowShowsTheImpossibleOneAndTheShapes) {
  auto r = test::run_hwprof({"report", fixture_, "--all"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string impossible_row;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("aten::linear (backward) ", 0) == 0) impossible_row = line;
  }
  EXPECT_THAT(impossible_row, HasSubstr(" impossible "));
  EXPECT_THAT(impossible_row, HasSubstr("impossible rate"));
  EXPECT_THAT(r.out, HasSubstr("\nimpossible: the row's rate is above anything this machine can do"));
  EXPECT_THAT(r.out, HasSubstr("\nShapes of the op rows shown (most time first; calls and time over the whole run)\n"));
  EXPECT_THAT(r.out, HasSubstr("  other shapes (not kept apart)"));
}

TEST_F(TorchReportCli, CsvHtmlAndSvgSayTheSame) {
  auto csv = test::run_hwprof({"report", fixture_, "-f", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out.substr(0, csv.out.find('\n')),
              HasSubstr(",why_text,calls,total_ms,basis_ms,threads,threads_min,work_note,work_partial,impossible,impossible_reason"));
  EXPECT_THAT(csv.out, HasSubstr(",true,\"")) << "the impossible row, with its reason";
  const fs::path svg = dir_ / "r.svg", html = dir_ / "r.html";
  auto files = test::run_hwprof({"report", fixture_, "--svg", svg.string(), "--html", html.string()});
  ASSERT_EQ(files.exit_code, 0) << files.err;
  EXPECT_THAT(read(svg), HasSubstr("Not drawn: 1 row with an impossible rate: aten::linear (backward)"));
  const std::string page = read(html);
  EXPECT_THAT(page, HasSubstr("<h2>Program totals</h2>"));
  EXPECT_THAT(page, Not(HasSubstr("forward pass")));
  EXPECT_THAT(page, HasSubstr(">impossible</td>"));
}

TEST(WriteProfileOutputs, WritesEveryFileIntoANewFolder) {
  const fs::path dir = fs::temp_directory_path() / ("hwprof-outputs-" + std::to_string(::getpid())) / "nested" / "run";
  fs::remove_all(dir.parent_path().parent_path());
  std::vector<std::string> written;
  const Profile p = test::synthetic_profile();
  ASSERT_FALSE(write_profile_outputs(p, dir.string(), &written).has_value());
  ASSERT_EQ(written.size(), 6u);
  for (const char* name : {"profile.txt", "profile.json", "profile.csv", "roofline.svg", "trace.json", "report.html"}) {
    EXPECT_TRUE(fs::is_regular_file(dir / name)) << name;
    EXPECT_GT(fs::file_size(dir / name), 100u) << name;
  }
  EXPECT_EQ(written[0], (dir / "profile.txt").string());
  // The folder's table has every row (the terminal's shows the top 15).
  ProfileTableOptions all;
  all.top = 0;
  std::ifstream table(dir / "profile.txt");
  std::stringstream text;
  text << table.rdbuf();
  EXPECT_EQ(text.str(), profile_table(p, all));
  auto back = load_profile((dir / "profile.json").string());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(profile_to_json(*back), profile_to_json(p));
  // A file where the folder should be is an error, not a crash.
  const fs::path blocked = dir / "profile.csv" / "sub";
  auto error = write_profile_outputs(p, blocked.string(), nullptr);
  ASSERT_TRUE(error.has_value());
  EXPECT_THAT(error->message, HasSubstr("cannot create the output folder"));
  fs::remove_all(dir.parent_path().parent_path());
}

}  // namespace
}  // namespace hwprof
