// The ranks of one parallel run, merged: per region what each rank spent in it, the spread
// across the ranks, the imbalance and the straggler, and each rank's machine. Plain data, made
// two ways — by `hwprof merge` from the ranks' profile.json files (analyze/merge.hpp), and by
// hwprof::mpi inside MPI_Finalize from reductions across the ranks (src/mpi/) — and rendered
// by one set of writers (report/merge.hpp: table, JSON, HTML). The JSON is documented in
// docs/merge.md.
//
// Per rank, a region's time is the whole time that rank spent in it (every call, every
// thread): that is what makes the other ranks wait at the next collective, whether the
// straggler's calls were slower or more. Imbalance = (max − mean) / max over the ranks (the
// share of the slowest rank's time the average rank spends waiting: 0 when balanced; LIKWID's
// and Score-P's load-imbalance figure).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::session {

inline constexpr int kMergedSchema = 1;
inline constexpr const char* kMergedKind = "hwprof-merge";
// More ranks than any launcher starts (the largest machines run about 10^7): a profile's
// /rank/size above it is refused as damaged.
inline constexpr int kMaxRanks = 1 << 24;
// The most a rank can spend in a region, in ms (about 30 years): beyond it a time is damage,
// and sums over 2^24 ranks of times below it stay finite.
inline constexpr double kMaxRankMs = 1e12;

struct MergedRankInfo {
  int rank = -1;     // as the launcher said; -1: the profile says none (counted by its place)
  int size = 0;      // ranks the launcher said there were; 0: not said
  std::string file;  // the profile it came from; empty when reduced in-process
  std::string host;
  std::string cpu;
  std::string model;  // the model or program profiled
  int threads = 0;
};

struct MergedRegion {
  std::string name;
  std::vector<double> rank_ms;           // per rank, in MergedRanks::ranks order; NaN where a rank lacks it
  std::vector<double> rank_calls;        // the same for the calls
  std::optional<double> flops_per_call;  // the analytic (or the program's own) work per call
  std::optional<double> bytes_per_call;
  double min_ms = 0;
  double median_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
  double imbalance = 0;  // (max − mean) / max
  int straggler = -1;    // index into ranks of the rank with the max
  int missing = 0;       // ranks without this region
  // A rank's rate here is above anything its machine can do (guard_merged_rates): why, with the
  // figures; such a region has no point on the merged roofline. Empty: possible.
  std::string impossible_reason;
};

// (max − mean) / max, never below 0: the mean of equal times can round one ulp above their
// max (3 × 0.1 / 3 > 0.1), which would print as "-0.0%".
inline double rank_imbalance(double max_ms, double mean_ms) {
  return max_ms > 0 && mean_ms < max_ms ? (max_ms - mean_ms) / max_ms : 0.0;
}

// The roofs one rank's calibration measured (for the roofline with the spread).
struct MergedCeiling {
  std::string label;
  double value = 0;  // GFLOP/s (compute) or GB/s (memory)
};
struct MergedCeilings {
  std::string source;                         // the calibration file, and which rank's machine it is
  std::vector<MergedCeiling> compute_gflops;  // FMA peak first
  std::vector<MergedCeiling> memory_gbps;     // L1 .. DRAM
};

struct MergedRanks {
  std::string made_by;                // "hwprof merge" or "hwprof::mpi at MPI_Finalize (...)"
  std::vector<MergedRankInfo> ranks;  // sorted by rank
  std::vector<MergedRegion> regions;  // by max time, largest first
  MergedRegion total;                 // the ranks' whole run
  std::vector<std::string> warnings;  // missing ranks, duplicate ranks, mixed models, ...
  MergedCeilings ceilings;            // empty when no rank had a calibration
};

// The rank number of ranks[index] (its place when it says none).
inline int rank_number(const std::vector<MergedRankInfo>& ranks, std::size_t index) {
  return ranks[index].rank >= 0 ? ranks[index].rank : static_cast<int>(index);
}

}  // namespace hwprof::session
