// hwprof compare: two profiles side by side, per layer with a significance test.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct CompareCommandOptions {
  std::vector<std::string> files;  // two profiles, or two or more machine reports
  std::string svg;                 // machine reports: their rooflines in one SVG
  std::string html;                // profiles: the comparison page with its roofline
  std::string format = "table";
  std::string output;
  double alpha = 0.05;
  double fail_if_slower = -1;  // percent; < 0: off
  std::size_t top = 20;
  bool all = false;
};

// Exit code when --fail-if-slower finds a significant slowdown beyond its threshold.
inline constexpr int kExitSlower = 3;

std::shared_ptr<CompareCommandOptions> setup_compare(CLI::App& app, int& exit_code);
int run_compare(const CompareCommandOptions& options);

}  // namespace hwprof::cli
