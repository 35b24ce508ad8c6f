// hwprof info: what this machine lets hwprof count, and how to fix what it does not.
#pragma once

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace hwprof::cli {

struct InfoCommandOptions {
  std::string format = "table";
  std::string output;
};

std::shared_ptr<InfoCommandOptions> setup_info(CLI::App& app, int& exit_code);
int run_info(const InfoCommandOptions& options);

}  // namespace hwprof::cli
