// Statistical samples attributed to the regions (layers, library regions, PyTorch modules and
// ops) that were open when they were taken, and each region's samples divided among the
// functions they landed in, with a confidence interval per share (docs/sampling.md,
// "Attribution"). Pure: the spans come from the session's timeline, the samples from the
// sampler, the function of each sample from the symbolizer.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/session.hpp"
#include "session/region_spans.hpp"  // RegionSpan, spans_of

namespace hwprof::placement {

// One sample: the thread it was taken on and when (CLOCK_MONOTONIC).
struct TakenSample {
  std::int64_t tid = 0;
  std::uint64_t time_ns = 0;
};

enum class Attribution {
  own_thread,        // a region was open on the sample's own thread
  launching_thread,  // none was; exactly one other thread had one open: the thread that ran
                     // the parallel section a pool worker (BLAS, OpenMP, intra-op) was working for
  ambiguous,         // none on its own thread, and several other threads had regions open
  outside,           // no region was open anywhere
};

struct AttributedSample {
  int region = -1;  // the innermost region open (own_thread, launching_thread); -1 otherwise
  Attribution how = Attribution::outside;
  std::int64_t tid = 0;  // the OS thread whose region it is (own_thread: the sample's; launching_thread: the launcher's)
};

// The region each sample belongs to, in the samples' order. Spans of one thread are taken to
// nest (as the session's regions do); a span whose end precedes its start is ignored.
std::vector<AttributedSample> attribute_samples(std::span<const RegionSpan> spans, std::span<const TakenSample> samples);

// A share of a region's samples with its 95 % Wilson score interval (wilson_interval, common/statistics.hpp: it stays
// inside [0, 1] and is honest for small counts, where the normal approximation is not).
struct Share {
  std::uint64_t samples = 0;
  std::uint64_t of = 0;
  double share = 0.0;
  double low = 0.0;
  double high = 0.0;
};
Share share_of(std::uint64_t samples, std::uint64_t of) noexcept;

// Fewer samples than this in a region and its shares say nothing useful (a 95 % interval wider
// than about ±18 points): such a region is marked, not broken down.
inline constexpr std::uint64_t kFewSamples = 30;

struct FunctionShare {
  int function = -1;  // an index into the names given
  Share share;
};

struct RegionBreakdown {
  int region = -1;  // -1: the samples outside every region (and the ambiguous ones)
  std::uint64_t samples = 0;
  std::uint64_t by_launching_thread = 0;  // of them, taken on pool workers (Attribution::launching_thread)
  bool enough = false;                    // samples >= kFewSamples
  std::vector<FunctionShare> top;         // most samples first, at most `top` of them
  std::uint64_t rest = 0;                 // samples in functions not listed
};

// Per region (and one row for the samples outside every region), its samples divided among the
// functions given per sample (`function_of[i]`: an index into the caller's names, the leaf
// frame's function, or -1 when unknown; listed as "[unknown]" by the caller), most first.
// Regions in ascending id, the outside row last; regions without samples are left out.
std::vector<RegionBreakdown> break_down(std::span<const AttributedSample> attributed, std::span<const int> function_of, std::size_t top);

}  // namespace hwprof::placement
