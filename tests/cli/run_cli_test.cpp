// `hwprof run` as a user runs it: an ONNX model's output for an .npy input, written as .npy and
// compared with PyTorch's (the fixture's y.npy) by NumPy's rules; the JSON says where the
// weights came from; bad input exits 1 naming the file and what to do, bad usage 2.
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/npy.hpp"
#include "run_process.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::run_hwprof;

const std::string kFixtures = HWPROF_ONNX_FIXTURES;

TEST(RunCli, AnOnnxModelsOutputIsWrittenAsNpyAndMatchesPyTorch) {
  const fs::path out = fs::temp_directory_path() / ("hwprof-run-" + std::to_string(::getpid()) + ".npy");
  const auto r = run_hwprof({"run", kFixtures + "/tiny_vit/model.onnx", "-i", kFixtures + "/tiny_vit/x.npy", "-o", out.string(), "-t", "1"});
  if (r.exit_code == 1 && r.err.find("without ONNX support") != std::string::npos) GTEST_SKIP() << "built without libonnx-dev";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("weights: the model file's"));
  EXPECT_THAT(r.out, HasSubstr("output [2, 10] float32, written to"));
  auto got = detail::parse_npy(test::read_file(out.string()), out.string());
  auto want = detail::parse_npy(test::read_file(kFixtures + "/tiny_vit/y.npy"), "y.npy");
  fs::remove(out);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(got->shape, want->shape);
  EXPECT_LE(test::max_relative_difference(reinterpret_cast<const float*>(got->data.data()),
                                          reinterpret_cast<const float*>(want->data.data()), got->data.size() / 4),
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
