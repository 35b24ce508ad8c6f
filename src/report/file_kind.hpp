// What a JSON file hwprof wrote is, when it is not what a command reads: a merge of ranks, a
// machine report, a model summary, a comparison or `hwprof stat`'s output given to `report`
// or `compare` is named, with the command that reads it, instead of failing on its first
// missing field.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include "common/stages.hpp"

namespace hwprof::report {

// "a merge of ranks (`hwprof merge` or hwprof::mpi's merged.json): `hwprof merge FILE` renders
// it", with `path` as FILE; nullopt for a profile or anything else.
std::optional<std::string> other_hwprof_file(const nlohmann::ordered_json& root, const std::string& path);

// The same for a file on disk (a regular file only: a pipe is not read twice); nullopt when
// it is none of them, or cannot be read.
std::optional<std::string> other_hwprof_file(const std::string& path);

}  // namespace hwprof::report
