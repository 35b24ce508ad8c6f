// hwprof profile MODEL: every layer measured around its own kernels, with statistics and
// counters, joined with its analytic cost and placed on this machine's roofline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/report_command.hpp"
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct ProfileCommandOptions {
  std::string model;
  std::int64_t batch = 1;
  std::string input_shape;
  bool train = false;
  std::string optimizer = "sgd";
  double learning_rate = 0.01;
  int threads = 0;
  int warmup = -1;
  int iterations = 0;
  double min_seconds = 1.0;
  std::string backend = "auto";
  std::string group;
  std::vector<std::string> events;
  std::string calibration;
  TableArguments table;
  std::string format = "table";
  std::string output_dir;
  std::uint64_t seed = 0;
  std::string sample;  // --sample [EVENT[@RATE]]: empty when not asked for
};

std::shared_ptr<ProfileCommandOptions> setup_profile(CLI::App& app, int& exit_code);
int run_profile(const ProfileCommandOptions& given);

}  // namespace hwprof::cli
