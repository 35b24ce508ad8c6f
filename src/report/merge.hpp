// The profiles of the ranks of one parallel run, merged (`hwprof merge DIR...`): per region (or
// layer) what each rank spent in it, the spread across the ranks, the imbalance and the
// straggler, and each rank's machine.
//
// Per rank, a region's time is the whole time that rank spent in it: its mean per call × its
// kept calls. That is what makes the other ranks wait at the next collective, whether the
// straggler's calls were slower or more. Imbalance = (max − mean) / max over the ranks (the
// share of the slowest rank's time the average rank spends waiting: 0 when balanced; LIKWID
// and Score-P report the same load-imbalance figure).
#pragma once

#include <string>
#include <vector>

#include "hwprof/profile.hpp"
#include "hwprof/result.hpp"

namespace hwprof::detail {

struct RankProfile {
  std::string file;
  Profile profile;
};

struct MergedRegion {
  std::string name;
  std::vector<double> rank_ms;  // per rank, in MergedRanks::ranks order; NaN where a rank lacks it
  double min_ms = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
  double imbalance = 0;         // (max − mean) / max
  int straggler = -1;           // the rank with the max
  int missing = 0;              // ranks without this region
};

struct MergedRanks {
  std::vector<RankProfile> ranks;  // sorted by rank
  std::vector<MergedRegion> regions;  // by max time, largest first
  MergedRegion total;                 // the ranks' totals
  std::vector<std::string> warnings;  // missing ranks, duplicate ranks, mixed models, ...
};

// Every rank profile under `paths`: a folder holding rank-NNNNN/profile.json folders (as
// HWPROF_OUTPUT writes them), a rank folder itself, or a profile.json. Errors: nothing found,
// a profile that does not load (with its file and place), two profiles of one rank.
Result<std::vector<RankProfile>> load_rank_profiles(const std::vector<std::string>& paths);
MergedRanks merge_ranks(std::vector<RankProfile> ranks);

std::string merged_table(const MergedRanks& m, std::size_t top = 20);
std::string merged_json(const MergedRanks& m);

}  // namespace hwprof::detail
