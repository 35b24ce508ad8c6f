// Renders analytic summaries (and, later, profiles) for people and programs. Reports only
// format what they are given; they compute nothing new.
#pragma once

#include <optional>
#include <string>

#include "hwprof/cost.hpp"
#include "hwprof/machine.hpp"
#include "hwprof/result.hpp"

namespace hwprof {

struct SummaryOptions {
  // Fold layers whose dotted names have more than `depth` parts into one row per prefix
  // (consecutive layers only); 0 shows every layer.
  int depth = 0;
  std::string source_file;  // shown in the header and the JSON, if set
};

std::string summary_table(const ModelCost& cost, const SummaryOptions& options = {});
std::string summary_json(const ModelCost& cost, const SummaryOptions& options = {});
std::string summary_csv(const ModelCost& cost, const SummaryOptions& options = {});

// The ceilings chart of a calibration (SVG): a log–log roofline with each memory level's
// slope, the FMA and GEMM roofs and the ridge points, for the run with `threads` threads.
std::string ceilings_svg(const Machine& machine, int threads, bool single_precision = true);

// Writes the whole file or nothing: a temporary file beside `path`, flushed, then renamed.
std::optional<Error> write_file_atomically(const std::string& path, const std::string& content);

}  // namespace hwprof
