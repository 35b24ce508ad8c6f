// Data files: MODEL arguments (a path to a spec, or the name of a built-in model,
// models/NAME.json) and the counters/ directory of event groups.
#pragma once

#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::cli {

// Directories searched for built-in models, in order: $HWPROF_MODEL_PATH (colon-separated),
// <prefix>/share/hwprof/models beside the installed library or binary, the source tree's models/, the
// configured prefix's.
std::vector<std::string> model_directories();
// Directories holding counters/<family>/*.txt, in order: $HWPROF_COUNTERS_PATH,
// <prefix>/share/hwprof/counters beside the installed library or binary, the source tree's counters/,
// the configured prefix's (common/data_paths.hpp).
std::vector<std::string> counter_directories();
std::vector<std::string> builtin_model_names();
Result<std::string> resolve_model(const std::string& argument);

}  // namespace hwprof::cli
