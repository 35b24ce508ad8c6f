#include "report/file_kind.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "common/input_file.hpp"
#include "common/stages.hpp"
#include "session/merged_ranks.hpp"

namespace hwprof::report {
namespace {

bool has_all(const nlohmann::ordered_json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) return false;
  for (const char* k : keys) {
    if (!j.contains(k)) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> other_hwprof_file(const nlohmann::ordered_json& root, const std::string& path) {
  if (root.is_array() && !root.empty() && has_all(root.front(), {"label", "file", "cpu", "contended"})) {
    return std::string("machines compared (`hwprof compare -f json` of machine reports); `hwprof compare` of the reports themselves draws it again");
  }
  if (!root.is_object()) return std::nullopt;
  if (root.contains("kind") && root["kind"] == kMergedKind) {
    return fmt::format("a merge of ranks (`hwprof merge -f json`, or the merged.json hwprof::mpi writes); `hwprof merge {}` renders it", path);
  }
  if (has_all(root, {"runs", "theoretical", "cpu"}) && !root.contains("layers")) {
    return std::string("a machine report (`hwprof calibrate`); `hwprof compare` compares machine reports, `hwprof profile --calibration` uses one");
  }
  if (root.contains("schema") && root["schema"].is_string() && root["schema"].get<std::string>().rfind("hwprof.summary", 0) == 0) {
    return std::string("a model summary (`hwprof summary -f json`): analytic costs only; `hwprof profile` measures the model");
  }
  if (has_all(root, {"a", "b", "alpha", "test"})) {
    return std::string("a comparison of two profiles (`hwprof compare -f json`); `hwprof compare` of the two profiles makes it again");
  }
  if (has_all(root, {"command", "exit_code", "wall_seconds", "events"})) {
    return std::string("counter statistics of a command (`hwprof stat -f json`), not of a model's layers");
  }
  return std::nullopt;
}

std::optional<std::string> other_hwprof_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  auto text = read_input_file(path, "file", std::size_t{1} << 30);
  if (!text) return std::nullopt;
  const auto root = nlohmann::ordered_json::parse(*text, nullptr, false);
  if (root.is_discarded()) return std::nullopt;
  return other_hwprof_file(root, path);
}

}  // namespace hwprof::report
