// The samples of a profile run joined with its layers (docs/sampling.md, "Attribution"): each
// sample to the layer (row) that was running, each layer's samples divided among the functions
// they landed in, and the distinct stacks for the flame graph. The names of addresses come
// from the caller (the symbolizer), so that this is tested without one.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "placement/sample_attribution.hpp"
#include "sampling/sample_records.hpp"

namespace hwprof::placement {

// A region's row: its name ("conv1", "conv1 (backward)") and its layer (Graph::nodes index; -1
// for the pass's own region, the time between layers). nullopt: not a row of the profile.
struct SampledRow {
  std::string name;
  int layer = -1;
};
using RowOfRegion = std::function<std::optional<SampledRow>(int region)>;

// An address as a frame: how it is shown ("sgemm_kernel", "libfoo.so+0x1a2b") and its module.
struct FrameName {
  std::string label;
  std::string module;
  bool known = true;  // false: outside every mapping and perf map entry (unknown)
};
using NameOfAddress = std::function<FrameName(std::uint64_t address)>;

// The traced passes (Profile::trace) on CLOCK_MONOTONIC: the samples inside them are kept as
// instants for the trace's lanes (docs/sampling.md, "Outputs").
struct TraceWindow {
  std::uint64_t origin_ns = 0;                                  // the trace's time 0
  std::vector<std::pair<std::uint64_t, std::uint64_t>> passes;  // each traced pass's [start, end], in time order
  std::function<int(std::int64_t tid)> lane_of;                 // an OS thread's lane (TraceSpan::thread); empty: 0
  std::size_t most = kMostSampleInstants;
};

// The row of the samples taken outside every layer (and the ambiguous ones), last of the rows,
// unless `row_of(kOutsideRegion)` names it ("(outside every region)" where the rows are a
// program's regions rather than a model's layers).
inline constexpr const char* kOutsideEveryLayerRow = "(outside every layer)";
inline constexpr int kOutsideRegion = -1;

// The layers' rows of `samples` (this process's, `pid`; a forked child's are left out), from
// the session's spans (`row_of` is also asked for kOutsideRegion's name); at most `top` functions a row. Fills layers, stacks, frame_names,
// samples, ambiguous and outside of `out`, and with a `window`, its instants. Samples after
// `attribute_until_ns` (the session's timeline was full) are counted in samples and
// timeline_full, and attributed to no row.
void add_sampled_layers(const SampleStore& samples, int pid, std::span<const RegionSpan> spans, const RowOfRegion& row_of,
                        const NameOfAddress& name_of, std::size_t top, SamplingProfile& out, const TraceWindow* window = nullptr,
                        std::uint64_t attribute_until_ns = std::numeric_limits<std::uint64_t>::max());

}  // namespace hwprof::placement
