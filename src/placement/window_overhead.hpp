// What sampling costs a regions program (docs/sampling.md, "What sampling costs a regions
// program"): its run alternates windows with sampling on and off, and a region's calls that
// lie wholly inside windows of each kind are compared, median against median.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "common/stages.hpp"
#include "placement/sample_attribution.hpp"
#include "session/session_sampling.hpp"

namespace hwprof::placement {

// Calls of a region needed in each kind of window for its medians to be compared.
inline constexpr std::size_t kWindowCallsToCompare = 5;

struct WindowOverhead {
  double overhead = 0.0;  // Σ weight (median sampled / median unsampled - 1) / Σ weight; NaN: see reason
  double noise = 0.0;     // the same comparison between the two halves of the unsampled windows; NaN where they had too few calls
  int sampled_windows = 0;
  int unsampled_windows = 0;
  std::size_t regions_compared = 0;
  std::string reason;  // why overhead is NaN
};

// `windows` in time order. A region's weight is the time of its calls inside the windows.
WindowOverhead window_overhead(std::span<const RegionSpan> spans, std::span<const SampleWindow> windows);

}  // namespace hwprof::placement
