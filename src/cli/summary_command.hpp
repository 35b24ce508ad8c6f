// hwprof summary MODEL: the analytic cost of every layer (no execution, no counters).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct SummaryCommandOptions {
  std::string model;
  std::int64_t batch = 1;
  std::string input_shape;
  std::string optimizer = "adam";
  std::string format = "table";
  int depth = 0;
  std::string output;
};

// Adds the subcommand; when it runs, its exit code is stored in `exit_code`.
std::shared_ptr<SummaryCommandOptions> setup_summary(CLI::App& app, int& exit_code);
int run_summary(const SummaryCommandOptions& options);

}  // namespace hwprof::cli
