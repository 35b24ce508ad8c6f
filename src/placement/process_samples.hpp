// A sampler's output for one process, named by that process's symbolizer and joined with the
// regions that were open (docs/sampling.md, "Attribution"): the part that `hwprof profile
// --sample` and the regions library's HWPROF_SAMPLE share. The callers say what a row is (a
// layer, a region, a PyTorch module or op) and fill the cost of sampling, which each measures
// its own way.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "placement/sample_attribution.hpp"
#include "placement/sampled_layers.hpp"
#include "sampling/sample_records.hpp"
#include "sampling/sampler.hpp"
#include "symbols/symbols.hpp"

namespace hwprof::placement {

struct ProcessSamples {
  const SampleStore* store = nullptr;
  const SamplerStats* stats = nullptr;
  std::vector<std::string> warnings;  // the sampler's
  std::string spec;                   // as the user gave it
  int pid = 0;                        // the process sampled: its maps and perf map name the addresses
  // Samples after this time are not attributed: the session's timeline held no calls past it
  // (timeline_full_since). The maximum: it held them all.
  std::uint64_t attribute_until_ns = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t timeline_calls = 0;     // the calls the timeline held, for the message
  const TraceWindow* window = nullptr;  // the traced passes, whose samples become trace.json's instants
};

// Spec, rate, the counts, the warnings, every row with samples and the stacks; at most five
// functions a row. overhead, overhead_noise and the passes are left for the caller.
SamplingProfile sampling_of_process(const ProcessSamples& taken, std::span<const RegionSpan> spans, const RowOfRegion& row_of);

// The frame of code in anonymous executable memory that no perf map entry names.
inline constexpr std::string_view kAnonymousCodeFrame = "[anonymous code: JIT without a perf map]";

// A symbolized address as a frame of the profile: a function's name; "libfoo.so [no symbol]"
// for a mapped file's code no symbol covers; kAnonymousCodeFrame for anonymous executable
// memory; "[unknown] 0x..." outside every mapping.
FrameName frame_name_of(const Symbol& sym);

// A warning where at least 1 % of the samples landed in such code (from the stacks' leaves),
// with the fix; empty otherwise.
std::string anonymous_code_hint(const SamplingProfile& s);

// When a full timeline stopped holding calls (docs/sampling.md, "The timeline in a regions
// program"): the end of the last call it holds, or the maximum where it held every call.
std::uint64_t timeline_full_since(const SessionSnapshot& snapshot, std::span<const RegionSpan> spans);

}  // namespace hwprof::placement
