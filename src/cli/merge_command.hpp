// hwprof merge: the profiles of the ranks of one parallel run, merged.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct MergeCommandOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output;
  std::string html;
  std::size_t top = 20;
  bool all = false;
};

std::shared_ptr<MergeCommandOptions> setup_merge(CLI::App& app, int& exit_code);
int run_merge(const MergeCommandOptions& options);

}  // namespace hwprof::cli
