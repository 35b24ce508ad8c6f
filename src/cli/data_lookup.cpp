#include "cli/data_lookup.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string_view>

#include "common/data_paths.hpp"
#include "common/stages.hpp"
#include "common/suggest.hpp"

namespace hwprof::cli {
namespace fs = std::filesystem;

std::vector<std::string> model_directories() {
  return common::data_directories("HWPROF_MODEL_PATH", "models");
}

std::vector<std::string> counter_directories() {
  return common::data_directories("HWPROF_COUNTERS_PATH", "counters");
}

std::vector<std::string> builtin_model_names() {
  std::set<std::string> names;
  for (const std::string& dir : model_directories()) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".json") names.insert(it->path().stem().string());
    }
  }
  return {names.begin(), names.end()};
}

Result<std::string> resolve_model(const std::string& argument) {
  std::error_code ec;
  const bool looks_like_path = argument.find('/') != std::string::npos || fs::path(argument).extension() == ".json";
  if (looks_like_path || fs::exists(argument, ec)) {
    if (!fs::exists(argument, ec)) return Error{argument + ": no such model spec file"};
    return argument;
  }
  for (const std::string& dir : model_directories()) {
    const fs::path candidate = fs::path(dir) / (argument + ".json");
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  const std::vector<std::string> names = builtin_model_names();
  const std::vector<std::string_view> views(names.begin(), names.end());
  return Error{"'" + argument + "' is neither a spec file nor a built-in model" + common::did_you_mean(argument, views) +
               "; built-in models: " + (names.empty() ? std::string("none found") : common::join(views))};
}

}  // namespace hwprof::cli
