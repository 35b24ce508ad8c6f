// A merge of ranks (analyze/merge.hpp) rendered — a table, JSON and an HTML page with a
// per-rank view and a roofline with the spread across the ranks — and its JSON read back.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "session/merged_ranks.hpp"

namespace hwprof::report {

std::string merged_table(const MergedRanks& m, std::size_t top = 20);
std::string merged_json(const MergedRanks& m);
std::string merged_html(const MergedRanks& m);

// A merge's JSON read back (to render it again): refuses another kind of file, a newer
// schema, and malformed fields, naming the file, line and column, and the field.
Result<MergedRanks> merged_from_json(std::string_view text, const std::string& source_name);
Result<MergedRanks> load_merged(const std::string& path);
// The text read as a merge when it is one (its kind says so), parsed once; nullopt otherwise.
std::optional<Result<MergedRanks>> merged_if_merge(std::string_view text, const std::string& source_name);

// The straggler's rank number, or "-" when the region has none.
inline std::string straggler_text(const MergedRanks& m, const MergedRegion& r) {
  return r.straggler >= 0 ? std::to_string(rank_number(m.ranks, static_cast<std::size_t>(r.straggler))) : "-";
}

}  // namespace hwprof::report
