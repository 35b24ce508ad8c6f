// hwprof calibrate: measure this machine's ceilings and keep the report where profiles find it.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct CalibrateCommandOptions {
  std::vector<int> threads;
  bool quick = false;
  std::vector<std::string> precision = {"sp", "dp"};
  std::string output;  // the JSON report; default: the machine store
  std::string svg;     // the ceilings chart; default: beside the report
  std::string format = "table";
  bool allow_contended = false;  // keep (and exit 0 with) a calibration that other processes disturbed
};

std::shared_ptr<CalibrateCommandOptions> setup_calibrate(CLI::App& app, int& exit_code);
int run_calibrate(const CalibrateCommandOptions& options);

}  // namespace hwprof::cli
