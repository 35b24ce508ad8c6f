// Memory levels from a bandwidth-versus-working-set sweep. The sweep itself decides where
// each level ends: its plateaus are the levels, the knees between them are where caches end,
// and DRAM is the flat tail past every knee. What the caches' sources (cache_topology.hpp)
// report only names the levels and is compared with the knees; it never puts a level where
// the sweep shows none. One rule from the sources is absolute: DRAM never starts below the
// largest cache any source reports, because calling a cache "DRAM" is the worst mistake a
// roofline can make (every memory-bound layer would look faster than DRAM allows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "machine/cache_topology.hpp"  // LevelEvidence

namespace hwprof::calibration {

using Curve = std::vector<std::pair<std::int64_t, double>>;  // (working-set bytes, GB/s)

// A plateau of a curve sorted by size: the indices of its points (ascending) and their median.
struct FlatRun {
  std::vector<std::size_t> points;
  double median = 0.0;
};
// Walking the points by size, a point joins the current run when within 10 % of its median;
// a run of 3 or more points whose ends are trimmed of the start of a transition and which then
// spans at most 15 % is a plateau; two plateaus with only outliers between them and medians
// within 10 % are one (plateau.cpp).
std::vector<FlatRun> flat_runs(const Curve& sorted_curve);

struct DetectedLevel {
  std::string level;                // "l1", "l2", "l3" or "dram"
  std::vector<std::int64_t> sizes;  // the sweep points that measure it, ascending
  std::int64_t capacity_bytes = 0;  // caches: where the level ends (its knee, else the reported size; 0: unknown); dram: 0
  std::string capacity_source;      // "sweep" (a knee), a source name (no knee: the reported size), or "" (unknown)
  std::int64_t reported_bytes = 0;  // the chosen description's capacity for this level (0: none)
  bool flat = true;                 // its points form a plateau; false: the best that could be had, less certain
  std::string note;                 // disagreement with the sources, or what makes the level uncertain
};

struct LevelDetection {
  std::vector<DetectedLevel> levels;  // by size; "dram" last when the curve reaches it
  std::vector<std::int64_t> knees;    // every knee the curve shows (sizes where a level ends)
  bool dram_flat = false;             // DRAM is a flat tail past every knee and every reported cache
  std::int64_t extend_to = 0;         // > 0: no such tail yet; sweeping on to this size would show one
  std::vector<std::string> notes;     // what the caller should pass on (points that belong to no level, ...)
};

// A drop of this fraction or more between two plateaus is a knee; a smaller one (or a rise:
// a prefetcher warming up within a level) joins them into one level.
inline constexpr double kKneeDrop = 0.20;
// DRAM's tail: the longest suffix of the curve whose points lie within this fraction of its
// median, at least kTailPoints of them above every cache. DRAM is measured at the largest
// kTailPoints of those: bandwidth keeps easing a few percent per octave far into DRAM (TLB
// reach), and its far end is what a STREAM-sized array sees.
inline constexpr double kTailTolerance = 0.10;
inline constexpr std::size_t kTailPoints = 3;

LevelDetection detect_levels(const Curve& curve, const LevelEvidence& evidence);

}  // namespace hwprof::calibration
