// hwprof bench MODEL: whole-model latency and throughput on the engine's real kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct BenchCommandOptions {
  std::string model;
  std::int64_t batch = 1;
  bool train = false;
  int threads = 0;  // 0: one per online CPU
  int warmup = 3;
  int iterations = 10;
  std::string input_shape;
  std::string optimizer = "sgd";
  std::uint64_t seed = 0;
  std::string format = "table";
  std::string output;
};

// Adds the subcommand; when it runs, its exit code is stored in `exit_code`.
std::shared_ptr<BenchCommandOptions> setup_bench(CLI::App& app, int& exit_code);
int run_bench(const BenchCommandOptions& options);

}  // namespace hwprof::cli
