#include "session/region_spans.hpp"

#include <cmath>
#include <unordered_map>
#include "common/stages.hpp"

namespace hwprof::session {

std::vector<RegionSpan> spans_of(const SessionSnapshot& snapshot) {
  std::unordered_map<int, std::int64_t> tids;
  for (const SessionThread& t : snapshot.threads) tids[t.number] = t.tid;
  std::vector<RegionSpan> spans;
  spans.reserve(snapshot.timeline.size());
  const auto base = static_cast<double>(snapshot.opened_monotonic_ns);
  for (const TimelineEvent& e : snapshot.timeline) {
    const auto tid = tids.find(e.thread);
    if (tid == tids.end()) continue;
    const double start = base + e.start_ns;
    spans.push_back({tid->second, e.region, e.depth, static_cast<std::uint64_t>(std::llround(start)),
                     static_cast<std::uint64_t>(std::llround(start + e.duration_ns))});
  }
  return spans;
}

}  // namespace hwprof::session
