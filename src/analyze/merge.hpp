// The ranks of one parallel run merged (`hwprof merge DIR...`, and hwprof::mpi at
// MPI_Finalize): the data is session/merged_ranks.hpp; the renderings are report/merge.hpp.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/profile.hpp"
#include "session/merged_ranks.hpp"

namespace hwprof::analysis {

struct RankProfile {
  std::string file;
  Profile profile;
};

struct RankProfiles {
  std::vector<RankProfile> ranks;
  std::vector<std::string> empty_folders;  // rank-NNNNN folders without a profile.json
};

// Why these profiles are not the ranks of one run (docs/merge.md): two profiles of one rank,
// ranks that disagree on the size, ranked and unranked profiles together, a time no rank can
// spend. nullopt when they can be merged.
std::optional<std::string> rank_set_problem(const std::vector<RankProfile>& ranks);

MergedRanks merge_ranks(std::vector<RankProfile> ranks, const std::vector<std::string>& empty_folders = {});

// A region's min, median, mean, max, imbalance, straggler and missing ranks, from its rank_ms.
void summarize_merged_region(MergedRegion& region);
// Regions by their max time, largest first (ties by name).
void sort_merged_regions(MergedRanks& merged);
// A calibration run's roofs, for the merged roofline.
MergedCeilings merged_ceilings(const CalibrationRun& run, const std::string& source);
// Marks the regions where a rank's rate is above the most the ranks' machine can do (the largest
// measured compute ceiling, times placement/rate_guard.hpp's kClockSlack), or where a rank's own
// profile found the row's rate impossible: the same guard as every profile's (docs/profile.md,
// "Impossible rates"). Returns how many it marked; a warning says which.
int guard_merged_rates(MergedRanks& merged);
// A rank's GFLOP/s in a region: its work over its time (absent without work or time).
std::optional<double> rank_gflops(const MergedRegion& region, std::size_t rank_index);
// Every rank's GFLOP/s in a region that has one, as (GFLOP/s, rank index), slowest first, and
// their median: the spread the merged roofline draws.
struct RankRates {
  std::vector<std::pair<double, std::size_t>> by_rate;
  double median = 0;
};
RankRates rank_rates(const MergedRegion& region);

}  // namespace hwprof::analysis
