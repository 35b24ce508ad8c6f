// hwprof run MODEL: one forward pass of the model on a given input (a NumPy .npy file), with
// the model's own weights where its file carries them; the output written as .npy, so that it
// can be compared with the framework the model came from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct RunCommandOptions {
  std::string model;
  std::string input;       // .npy; empty: a synthetic input (seeded)
  std::string output;      // .npy of the model's output; empty: none written
  std::int64_t batch = 1;  // synthetic input only
  std::string input_shape;
  int threads = 0;
  std::uint64_t seed = 0;
  std::string format = "table";
};

std::shared_ptr<RunCommandOptions> setup_run(CLI::App& app, int& exit_code);
int run_run(const RunCommandOptions& options);

}  // namespace hwprof::cli
