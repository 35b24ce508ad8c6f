// hwprof record -- CMD ARGS...: samples a whole program like `perf record`, with hwprof's
// sampler and outputs (docs/sampling.md, "Using it: hwprof record").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace CLI {
class App;
}

namespace hwprof::cli {

struct RecordCommandOptions {
  std::string event;     // -e EVENT[@RATE]; empty: the default spec
  std::string output;    // -o DIR: sampling.json, flamegraph.svg, samples.folded, samples.speedscope.json
  std::size_t top = 10;  // rows shown in the table
  std::vector<std::string> command;
};

std::shared_ptr<RecordCommandOptions> setup_record(CLI::App& app, int& exit_code);
int run_record(const RecordCommandOptions& options);

}  // namespace hwprof::cli
