#include "profile/sampled_regions.hpp"

#include <unordered_map>
#include <vector>

#include "profile/process_samples.hpp"
#include "profile/window_overhead.hpp"

namespace hwprof::detail {

SamplingProfile sampled_regions(const SessionSnapshot& snapshot, const SessionSamples& samples) {
  std::unordered_map<int, SampledRow> rows;
  for (const RegionReport& r : snapshot.regions) rows[r.id] = SampledRow{r.name, r.id};
  const RowOfRegion row_of = [&](int region) -> std::optional<SampledRow> {
    const auto it = rows.find(region);
    return it == rows.end() ? std::nullopt : std::optional<SampledRow>(it->second);
  };
  const std::vector<RegionSpan> spans = spans_of(snapshot);
  ProcessSamples taken{&samples.store, &samples.stats, samples.warnings, samples.spec, samples.pid};
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

}  // namespace hwprof::detail
