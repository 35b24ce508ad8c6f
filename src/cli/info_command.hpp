// hwprof info: what this machine lets hwprof count, and how to fix what it does not.
#pragma once

#include <memory>
#include <string>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct InfoCommandOptions {
  std::string format = "table";
  std::string output;
  bool self_test = false;                       // --self-test: run the known-count kernels under the FLOP/DRAM groups
  std::size_t self_test_iterations = 1u << 22;  // loop iterations of each FLOP kernel (8 FP instructions each)
  std::size_t self_test_stream_mib = 512;       // the DRAM stream's array
};

std::shared_ptr<InfoCommandOptions> setup_info(CLI::App& app, int& exit_code);
int run_info(const InfoCommandOptions& options);

}  // namespace hwprof::cli
