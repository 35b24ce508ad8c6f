// `hwprof bench` as a user runs it: the JSON report carries every field and its numbers agree
// with each other (no speed is asserted: these machines are shared), the table says where its
// numbers come from, -o writes the file, and bad input exits 1, bad usage 2.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/profiler.hpp"
#include "run_process.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using test::run_hwprof;

// The fields every report has, and the relations between them.
void expect_consistent(const nlohmann::json& j) {
  for (const char* key :
       {"model", "source", "batch", "threads", "phase", "input", "warmup", "latency_ms", "latency_source", "samples_per_s", "memory"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  const auto& l = j["latency_ms"];
  for (const char* key : {"median", "mean", "min", "max", "p95", "n"}) ASSERT_TRUE(l.contains(key)) << key;
  const double min = l["min"], max = l["max"], median = l["median"], mean = l["mean"], p95 = l["p95"];
  EXPECT_GT(min, 0.0);
  EXPECT_LE(min, median);
  EXPECT_LE(median, p95);
  EXPECT_LE(p95, max);
  EXPECT_LE(min, mean);
  EXPECT_LE(mean, max);
  const double batch = j["batch"].get<double>();
  EXPECT_NEAR(j["samples_per_s"].get<double>(), batch / (median / 1e3), 1e-9 * batch / (median / 1e3));
  EXPECT_GE(j["threads"].get<int>(), 1);
  const auto& m = j["memory"];
  EXPECT_GT(m["parameter_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(m["peak_activation_bytes"]["source"], "measured");
  EXPECT_GT(m["peak_activation_bytes"]["value"].get<std::int64_t>(), 0);
  EXPECT_EQ(m["analytic_activation_bytes"]["source"], "analytic");
  const double measured = m["peak_activation_bytes"]["value"], analytic = m["analytic_activation_bytes"]["value"];
  EXPECT_NEAR(m["measured_over_analytic"].get<double>(), measured / analytic, 1e-9 * measured / analytic);
}

TEST(BenchCli, Lenet5JsonCarriesEveryField) {
  auto r = run_hwprof({"bench", "lenet5", "--format", "json", "--iterations", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_consistent(j);
  EXPECT_EQ(j["model"], "lenet5");
  EXPECT_EQ(j["batch"], 1);
  EXPECT_EQ(j["phase"], "forward");
  EXPECT_EQ(j["latency_ms"]["n"], 3);
  EXPECT_EQ(j["input"]["shape"], nlohmann::json::array({1, 32, 32}));
  EXPECT_EQ(j["input"]["dtype"], "float32");
  EXPECT_FALSE(j.contains("loss"));
  // LeNet-5: 61,706 parameters of 4 bytes.
  EXPECT_EQ(j["memory"]["parameter_bytes"], 61706 * 4);
}

TEST(BenchCli, TrainWritesTheReportFile) {
  const fs::path dir = fs::temp_directory_path() / ("hwprof-bench-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "bench.json";
  auto r = run_hwprof({"bench", "mlp_mnist", "--train", "--batch", "4", "--threads", "1", "--optimizer", "adam", "--warmup", "1", "--iterations", "2",
                       "--format", "json", "-o", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  fs::remove_all(dir);
  expect_consistent(j);
  EXPECT_EQ(j["phase"], "train");
  EXPECT_EQ(j["batch"], 4);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["optimizer"], "adam");
  EXPECT_EQ(j["latency_ms"]["n"], 2);
  ASSERT_TRUE(j.contains("loss"));
  EXPECT_TRUE(std::isfinite(j["loss"].get<double>()));
  EXPECT_GT(j["loss"].get<double>(), 0.0);
  EXPECT_THAT(j["memory"]["analytic_activation_bytes"]["note"].get<std::string>(), HasSubstr("training_activation_bytes"));
}

// bench reports the library's measure_latency: the figures that do not depend on time (the
// training loss, the allocator's peak, the parameters) are those the library gives.
TEST(BenchCli, ReportsWhatTheLibrarysLatencyMeasurementGives) {
  auto r = run_hwprof(
      {"bench", "mlp_mnist", "--train", "--batch", "2", "--threads", "1", "--warmup", "1", "--iterations", "2", "--seed", "7", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  auto graph = load_model(std::string(HWPROF_MODELS_DIR) + "/mlp_mnist.json");
  ASSERT_TRUE(graph) << graph.error().message;
  ProfileOptions o;
  o.batch = 2;
  o.train = true;
  o.threads = 1;
  o.warmup = 1;
  o.iterations = 2;
  o.seed = 7;
  const auto library = measure_latency(*graph, o);
  ASSERT_TRUE(library) << library.error().message;
  EXPECT_EQ(j["loss"].get<double>(), library->loss);
  EXPECT_EQ(j["memory"]["peak_activation_bytes"]["value"].get<std::int64_t>(), library->peak_activation_bytes);
  EXPECT_EQ(j["memory"]["parameter_bytes"].get<std::int64_t>(), library->parameter_bytes);
  EXPECT_EQ(j["warmup"].get<int>(), library->warmup_runs);
  EXPECT_EQ(j["latency_ms"]["n"].get<std::size_t>(), library->ms.n);
}

TEST(BenchCli, TableSaysLatenciesAreMeasuredWallTime) {
  auto r = run_hwprof({"bench", "tiny_transformer", "--input-shape", "8", "--batch", "2", "--iterations", "2", "--warmup", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("measured wall time"));
  EXPECT_THAT(r.out, HasSubstr("tiny_transformer"));
  EXPECT_THAT(r.out, HasSubstr("input [8] int32"));
  EXPECT_THAT(r.out, HasSubstr("samples/s"));
  EXPECT_THAT(r.out, HasSubstr("analytic"));
  auto help = run_hwprof({"bench", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("measured wall time"));
  EXPECT_THAT(help.out, HasSubstr("--train"));
}

TEST(BenchCli, BadInputExitsOneAndBadUsageTwo) {
  auto unknown = run_hwprof({"bench", "no_such_model"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no_such_model"));
  auto shape = run_hwprof({"bench", "lenet5", "--input-shape", "1,x4"});
  EXPECT_EQ(shape.exit_code, 2);  // malformed: the command line's fault
  EXPECT_THAT(shape.err, HasSubstr("--input-shape"));
  auto too_small = run_hwprof({"bench", "lenet5", "--input-shape", "1,4,4"});
  EXPECT_EQ(too_small.exit_code, 1);
  EXPECT_THAT(too_small.err, HasSubstr("conv1"));
  auto huge = run_hwprof({"bench", "resnet18", "--batch", "999999999999999999"});
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_THAT(huge.err, HasSubstr("batch"));

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"bench"},
           {"bench", "lenet5", "--batch", "0"},
           {"bench", "lenet5", "--batch", "-3"},
           {"bench", "lenet5", "--threads", "-1"},
           {"bench", "lenet5", "--threads", "many"},
           {"bench", "lenet5", "--threads", "100000"},
           {"bench", "lenet5", "--iterations", "0"},
           {"bench", "lenet5", "--warmup", "-1"},
           {"bench", "lenet5", "--format", "xml"},
           {"bench", "lenet5", "--optimizer", "rmsprop"},
       }) {
    auto r = run_hwprof(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("error")) << args.back();
  }
}

}  // namespace
}  // namespace hwprof
