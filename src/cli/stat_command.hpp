// hwprof stat -- CMD ARGS...: counts a whole program like `perf stat`.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct StatCommandOptions {
  std::string group;                // -g: a group name of this CPU's family, or a group file
  std::vector<std::string> events;  // -e
  std::string backend = "perf";
  std::string format = "table";
  std::string output;  // report file; default: standard error
  std::vector<std::string> command;
};

std::shared_ptr<StatCommandOptions> setup_stat(CLI::App& app, int& exit_code);
int run_stat(const StatCommandOptions& options);

}  // namespace hwprof::cli
