// `hwprof` as a user runs it: exit codes, messages and the files it writes.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using test::run_process;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using test::run_hwprof;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hwprof-cli-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(Cli, VersionAndHelp) {
  auto version = run_hwprof({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, StartsWith("hwprof 0."));
  auto help = run_hwprof({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("summary"));
  auto summary_help = run_hwprof({"summary", "--help"});
  EXPECT_EQ(summary_help.exit_code, 0);
  EXPECT_THAT(summary_help.out, HasSubstr("Counting convention"));
  EXPECT_THAT(summary_help.out, HasSubstr("--input-shape"));
}

TEST_F(Cli, UsageErrorsExitWithTwo) {
  auto none = run_hwprof({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("subcommand"));
  auto bad_optimizer = run_hwprof({"summary", "resnet18", "--optimizer", "rmsprop"});
  EXPECT_EQ(bad_optimizer.exit_code, 2);
  EXPECT_THAT(bad_optimizer.err, HasSubstr("rmsprop"));
  EXPECT_EQ(run_hwprof({"summary", "resnet18", "--batch", "0"}).exit_code, 2);
  auto huge = run_hwprof({"summary", "resnet18", "--batch", "99999999999999999999"});
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_THAT(huge.err, HasSubstr("--batch"));
  auto overflowing = run_hwprof({"summary", "resnet18", "--batch", "999999999999999999"});
  EXPECT_EQ(overflowing.exit_code, 1);
  EXPECT_THAT(overflowing.err, HasSubstr("smaller batch"));
  EXPECT_EQ(run_hwprof({"summary", "resnet18", "--format", "xml"}).exit_code, 2);
  EXPECT_EQ(run_hwprof({"summary"}).exit_code, 2);
}

TEST_F(Cli, ResNet18JsonHasExactTotalsAndEveryLayer) {
  auto r = run_hwprof({"summary", "resnet18", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"], "resnet18");
  EXPECT_EQ(j["batch"], 1);
  EXPECT_EQ(j["totals"]["params"], 11'689'512);
  EXPECT_EQ(j["totals"]["macs"], 1'814'073'344);
  ASSERT_EQ(j["layers"].size(), 69u);
  EXPECT_EQ(j["layers"][0]["name"], "conv1");
  EXPECT_EQ(j["layers"][0]["output_shape"], nlohmann::json::array({64, 112, 112}));
  EXPECT_EQ(j["layers"][0]["macs"], 118'013'952);  // 64·112·112 outputs × 3·7·7
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(Cli, MobileNetAndGpt2Totals) {
  auto m = run_hwprof({"summary", "mobilenet_v2", "-f", "json"});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto mj = nlohmann::json::parse(m.out);
  EXPECT_EQ(mj["totals"]["params"], 3'504'872);
  EXPECT_EQ(mj["totals"]["macs"], 300'774'272);
  auto g = run_hwprof({"summary", "gpt2_small", "-f", "json"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(nlohmann::json::parse(g.out)["totals"]["params"], 124'439'808);
}

TEST_F(Cli, BatchInputShapeAndOptimizerChangeWhatTheyShould) {
  auto r = run_hwprof({"summary", "resnet18", "-f", "json", "--batch", "8", "--optimizer", "momentum"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["totals"]["macs"], 1'814'073'344);  // per sample
  EXPECT_EQ(j["totals"]["per_batch"]["macs"], 8LL * 1'814'073'344);
  EXPECT_EQ(j["memory"]["optimizer"], "momentum");
  EXPECT_EQ(j["memory"]["optimizer_bytes"], 4LL * 11'689'512);

  auto small = run_hwprof({"summary", "resnet18", "-f", "json", "--input-shape", "3x160x160"});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  const auto sj = nlohmann::json::parse(small.out);
  EXPECT_EQ(sj["input"]["shape"], nlohmann::json::array({3, 160, 160}));
  EXPECT_EQ(sj["layers"][0]["output_shape"], nlohmann::json::array({64, 80, 80}));

  auto bad = run_hwprof({"summary", "resnet18", "--input-shape", "3,abc"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("unexpected character 'a'; expected e.g. 3,224,224"));
  EXPECT_THAT(bad.err, HasSubstr("--input-shape"));
  auto wrong_rank = run_hwprof({"summary", "resnet18", "--input-shape", "224,224"});
  EXPECT_EQ(wrong_rank.exit_code, 1);
  EXPECT_THAT(wrong_rank.err, HasSubstr("conv1"));
}

TEST_F(Cli, TableCsvAndDepth) {
  auto table = run_hwprof({"summary", "lenet5"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("Total params:"));
  EXPECT_THAT(table.out, HasSubstr("61,706"));
  EXPECT_THAT(table.out, HasSubstr("analytic"));

  auto csv = run_hwprof({"summary", "lenet5", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 13);  // header + 12 layers

  auto folded = run_hwprof({"summary", "gpt2_small", "-f", "json", "--depth", "1"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  const auto fj = nlohmann::json::parse(folded.out);
  // wte, wpe, drop, h (12 blocks folded), ln_f, lm_head
  ASSERT_EQ(fj["layers"].size(), 6u);
  EXPECT_EQ(fj["layers"][3]["name"], "h");
  EXPECT_EQ(fj["totals"]["params"], 124'439'808);
}

TEST_F(Cli, OutputFileIsWrittenWholeOrNotAtAll) {
  const fs::path out = dir_ / "summary.json";
  auto r = run_hwprof({"summary", "lenet5", "-f", "json", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(nlohmann::json::parse(read(out))["totals"]["params"], 61'706);

  const fs::path missing_dir = dir_ / "no" / "such" / "dir" / "s.json";
  auto bad = run_hwprof({"summary", "lenet5", "-o", missing_dir.string()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(missing_dir.string()));
  EXPECT_FALSE(fs::exists(missing_dir));
  std::size_t leftovers = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) leftovers += entry.path().filename() != "summary.json";
  EXPECT_EQ(leftovers, 0u);
}

TEST_F(Cli, BadModelsGetClearErrors) {
  auto unknown = run_hwprof({"summary", "resnet19"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean 'resnet18'"));
  EXPECT_THAT(unknown.err, HasSubstr("mobilenet_v2"));

  auto missing = run_hwprof({"summary", (dir_ / "absent.json").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("absent.json"));

  const std::string spec = write("bad.json",
                                 "{\n"
                                 "  \"input\": {\"shape\": [3, 8, 8]},\n"
                                 "  \"layers\": [\n"
                                 "    {\"name\": \"c\", \"op\": \"conv2d\", \"out_channels\": 4, \"kernal\": 3}\n"
                                 "  ]\n"
                                 "}\n");
  auto bad = run_hwprof({"summary", spec});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr(spec + ":4:"));
  EXPECT_THAT(bad.err, HasSubstr("did you mean 'kernel'"));
  EXPECT_TRUE(bad.out.empty());
}

}  // namespace
}  // namespace hwprof
