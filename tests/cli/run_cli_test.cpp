// `hwprof run` as a user runs it: an ONNX model's output for an .npy input, written as .npy and
// compared with PyTorch's (the fixture's y.npy) by NumPy's rules; the JSON says where the
// weights came from; bad input exits 1 naming the file and what to do, bad usage 2.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nn/npy.hpp"
#include "run_process.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using test::run_hwprof;
using ::testing::HasSubstr;

const std::string kFixtures = HWPROF_ONNX_FIXTURES;

TEST(RunCli, AnOnnxModelsOutputIsWrittenAsNpyAndMatchesPyTorch) {
  const fs::path out = fs::temp_directory_path() / ("hwprof-run-" + std::to_string(::getpid()) + ".npy");
  const auto r = run_hwprof({"run", kFixtures + "/tiny_vit/model.onnx", "-i", kFixtures + "/tiny_vit/x.npy", "-o", out.string(), "-t", "1"});
  if (r.exit_code == 1 && r.err.find("without ONNX support") != std::string::npos) GTEST_SKIP() << "built without libonnx-dev";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("weights: the model file's"));
  EXPECT_THAT(r.out, HasSubstr("output [2, 10] float32, written to"));
  auto got = nn::parse_npy(test::read_file(out.string()), out.string());
  auto want = nn::parse_npy(test::read_file(kFixtures + "/tiny_vit/y.npy"), "y.npy");
  fs::remove(out);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->shape, want->shape);
  EXPECT_LE(test::max_relative_difference(reinterpret_cast<const float*>(got->data.data()), reinterpret_cast<const float*>(want->data.data()),
                                          got->data.size() / 4),
            1e-4);
}

TEST(RunCli, TheJsonSaysWhereTheWeightsAndTheInputCameFrom) {
  const auto r = run_hwprof({"run", kFixtures + "/tiny_gpt/model.onnx", "-f", "json", "-b", "3", "-t", "1"});
  if (r.exit_code == 1 && r.err.find("without ONNX support") != std::string::npos) GTEST_SKIP() << "built without libonnx-dev";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights"], "model file");
  EXPECT_EQ(j["input"]["synthetic"], true);
  EXPECT_EQ(j["input"]["dtype"], "int32");
  EXPECT_EQ(j["output"]["shape"], nlohmann::json::array({3, 8, 50}));
  EXPECT_EQ(j["output"]["non_finite"], 0);
  EXPECT_EQ(j["wall_ms"]["source"].get<std::string>().rfind("measured", 0), 0u);
  const auto spec = run_hwprof({"run", "lenet5", "-f", "json", "-t", "1"});
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_EQ(nlohmann::json::parse(spec.out)["weights"], "initialised");
}

// Unsupported ONNX nodes as a user meets them (docs/onnx.md): summary counts what it can and says what it cannot,
// in each format; bench, profile and run refuse with every unsupported node listed at once.
TEST(RunCli, SummaryCountsAroundNodesItCannotMapAndTheOtherCommandsRefuseThem) {
  const std::string model = kFixtures + "/partial/model.onnx";
  const auto table = run_hwprof({"summary", model});
  if (table.exit_code == 1 && table.err.find("without ONNX support") != std::string::npos) GTEST_SKIP() << "built without libonnx-dev";
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::ContainsRegex("norm +InstanceNormalization +\\[4, 6, 6\\] +not counted +not counted +not counted"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("Total params: +≥ 1,490"));
  EXPECT_THAT(table.out, HasSubstr("Incomplete: 2 layers are not counted"));
  EXPECT_THAT(table.out, HasSubstr("logsoftmax  LogSoftmax (opset 17): no mapping onto hwprof's layers"));

  const auto json = run_hwprof({"summary", model, "-f", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["totals"]["complete"], false);
  EXPECT_EQ(j["totals"]["not_counted_layers"], 2);
  EXPECT_EQ(j["totals"]["params"], 1490);
  EXPECT_EQ(j["memory"]["complete"], false);
  const auto& norm = j["layers"][1];
  EXPECT_EQ(norm["name"], "norm");
  EXPECT_EQ(norm["op"], "unsupported");
  EXPECT_EQ(norm["counted"], false);
  EXPECT_EQ(norm["source_op"], "InstanceNormalization");
  EXPECT_TRUE(norm["params"].is_null() && norm["macs"].is_null() && norm["flops"].is_null() && norm["bytes"].is_null());
  EXPECT_EQ(norm["output_bytes"], 4 * 6 * 6 * 4);
  EXPECT_EQ(j["layers"][0]["counted"], true);

  const auto csv = run_hwprof({"summary", model, "-f", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_THAT(csv.out, HasSubstr(",not_counted_layers\n"));
  EXPECT_THAT(csv.out, HasSubstr("norm,unsupported,1,4x6x6,,,,,,,,576,576,,,,1\n"));

  for (const char* command : {"bench", "profile", "run"}) {
    const auto r = run_hwprof({command, model, "-t", "1"});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("2 nodes cannot be mapped onto hwprof's layers")) << command;
    EXPECT_THAT(r.err, HasSubstr("InstanceNormalization '/norm/InstanceNormalization' (opset 17)")) << command;
    EXPECT_THAT(r.err, HasSubstr("LogSoftmax '/LogSoftmax' (opset 17)")) << command;
  }
}

TEST(RunCli, BadInputsAreClearErrors) {
  struct Case {
    std::vector<std::string> args;
    int code;
    const char* says;
  };
  const std::string gpt = kFixtures + "/tiny_gpt/model.onnx";
  const std::vector<Case> cases = {
      {{"run", gpt, "-i", kFixtures + "/lenet5/x.npy"}, 1, "takes token ids"},
      {{"run", "lenet5", "-i", kFixtures + "/tiny_vit/x.npy"}, 1, "does not fit model 'lenet5'"},
      {{"run", "lenet5", "-i", kFixtures + "/lenet5/model.onnx"}, 1, "not a .npy file"},
      {{"run", "lenet5", "-i", "/nonexistent/x.npy"}, 1, "/nonexistent/x.npy"},
      {{"run", "lenet5", "-i", kFixtures + "/lenet5/x.npy", "-b", "4"}, 1, "synthetic input only"},
      {{"run", "lenet5", "-o", ""}, 2, ""},
      {{"run"}, 2, "model is required"},
  };
  for (const Case& c : cases) {
    const auto r = run_hwprof(c.args);
    if (r.exit_code == 1 && r.err.find("without ONNX support") != std::string::npos) continue;
    EXPECT_EQ(r.exit_code, c.code) << c.args[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
  }
}

}  // namespace
}  // namespace hwprof
