// `hwprof merge DIR...`: the profiles of the ranks of one parallel run, merged (the data in
// report/merged_ranks.hpp), and the merged run's renderings: a table, JSON and an HTML page
// with a per-rank view and a roofline with the spread across the ranks.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/machine.hpp"
#include "hwprof/profile.hpp"
#include "hwprof/result.hpp"
#include "report/merged_ranks.hpp"

namespace hwprof::detail {

struct RankProfile {
  std::string file;
  Profile profile;
};

struct RankProfiles {
  std::vector<RankProfile> ranks;
  std::vector<std::string> empty_folders;  // rank-NNNNN folders without a profile.json
};

// Every rank profile under `paths`: a folder holding rank-NNNNN/profile.json folders (as
// HWPROF_OUTPUT writes them), a rank folder itself, or a profile.json. Errors: nothing found; a
// rank entry or profile that cannot be read (a FIFO, a device, a link loop, a directory where
// profile.json should be, no permission, a profile that does not load), each with its reason;
// two profiles of one rank, ranks that disagree on the size, ranked and unranked profiles
// together; a time no rank can spend (docs/merge.md).
Result<RankProfiles> load_rank_profiles(const std::vector<std::string>& paths);
MergedRanks merge_ranks(std::vector<RankProfile> ranks, const std::vector<std::string>& empty_folders = {});

// A region's min, median, mean, max, imbalance, straggler and missing ranks, from its rank_ms.
void summarize_merged_region(MergedRegion& region);
// Regions by their max time, largest first (ties by name).
void sort_merged_regions(MergedRanks& merged);
// A calibration run's roofs, for the merged roofline.
MergedCeilings merged_ceilings(const CalibrationRun& run, const std::string& source);

std::string merged_table(const MergedRanks& m, std::size_t top = 20);
std::string merged_json(const MergedRanks& m);
std::string merged_html(const MergedRanks& m);

// A merge's JSON read back (to render it again): refuses another kind of file, a newer
// schema, and malformed fields, naming `source_name` and the field.
Result<MergedRanks> merged_from_json(std::string_view text, const std::string& source_name);
Result<MergedRanks> load_merged(const std::string& path);
// The text read as a merge when it is one (its kind says so), parsed once; nullopt otherwise.
std::optional<Result<MergedRanks>> merged_if_merge(std::string_view text, const std::string& source_name);

}  // namespace hwprof::detail
