#include "placement/sampled_regions.hpp"

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "common/stages.hpp"
#include "placement/process_samples.hpp"
#include "placement/window_overhead.hpp"

namespace hwprof::placement {

SamplingProfile sampled_regions(const SessionSnapshot& snapshot, const SessionSamples& samples) {
  std::unordered_map<int, SampledRow> rows;
  for (const RegionReport& r : snapshot.regions) rows[r.id] = SampledRow{r.name, r.id};
  rows[kOutsideRegion] = SampledRow{"(outside every region)", -1};
  const RowOfRegion row_of = [&](int region) -> std::optional<SampledRow> {
    const auto it = rows.find(region);
    return it == rows.end() ? std::nullopt : std::optional<SampledRow>(it->second);
  };
  const std::vector<RegionSpan> spans = spans_of(snapshot);
  ProcessSamples taken{&samples.store, &samples.stats, samples.warnings, samples.spec, samples.pid};
  // trace.json's instants: the regions' trace is the session's timeline, from its opening, one
  // lane per session thread (TimelineEvent::thread); every sample in the run may be placed.
  TraceWindow window;
  window.origin_ns = snapshot.opened_monotonic_ns;
  window.passes = {{snapshot.opened_monotonic_ns, std::numeric_limits<std::uint64_t>::max()}};
  std::unordered_map<std::int64_t, int> lanes;
  for (const SessionThread& t : snapshot.threads) lanes.emplace(t.tid, t.number);
  window.lane_of = [&lanes](std::int64_t tid) {
    const auto it = lanes.find(tid);
    return it == lanes.end() ? 0 : it->second;
  };
  if (!snapshot.timeline.empty()) taken.window = &window;
  taken.attribute_until_ns = timeline_full_since(snapshot, spans);
  taken.timeline_calls = snapshot.timeline.size();
  SamplingProfile out = sampling_of_process(taken, spans, row_of);
  const WindowOverhead cost = window_overhead(spans, samples.windows);
  out.cost_from = "windows";
  out.overhead = cost.overhead;
  out.overhead_noise = cost.noise;
  out.overhead_reason = cost.reason;
  out.sampled_passes = cost.sampled_windows;
  out.unsampled_passes = cost.unsampled_windows;
  return out;
}

}  // namespace hwprof::placement
