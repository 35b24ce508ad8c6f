// The pieces of roofline placement as free functions, so that tests check the classification
// rule and the choice of ceilings on synthetic numbers.
#pragma once

#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/roofline.hpp"

namespace hwprof::placement {

struct BoundDecision {
  Bound bound = Bound::overhead;
  std::string why;
};

// The rule, in order:
//   1. no work at all (0 FLOPs and 0 bytes): overhead — the time is fixed cost only;
//   2. efficiency < rule.overhead_efficiency and seconds < rule.overhead_seconds: overhead —
//      far below both roofs in a call short enough for per-call fixed costs to dominate (the
//      torch.profiler guide's small-matrix case, where the time goes to fixed costs around the
//      work rather than to the work);
//   3. intensity ≥ ridge (or FLOPs but no bytes): compute; else memory.
// A long layer far below its roof is still placed by its intensity: that is a slow kernel,
// not fixed cost, and its headroom says how slow.
// The memory roof at a working set of `bytes`: the best triad bandwidth the calibration's
// sweep reached at that size or any larger one (so the roof never rises with size, and a
// noisy point cannot make a larger set look slower than a smaller one), and never below the
// DRAM ceiling. A run without sweep points uses its levels' bands the same way.
double bandwidth_at(const CalibrationRun& run, double bytes);

// The smallest level that holds `bytes`: "l1", "l2", "l3", "dram", or "unknown" where a
// cache's end is unknown. The run's own levels decide (where the calibration's sweep put each
// knee); a run from before that, by the CPU's cache description for `threads` workers
// (cache_capacities).
std::string level_holding(const CalibrationRun& run, const MachineCpu& cpu, int threads, double bytes);

BoundDecision classify_bound(double flops, double bytes, double intensity, double ridge, double efficiency, double seconds, const BoundRule& rule);

}  // namespace hwprof::placement
