#include "placement/sample_attribution.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "common/stages.hpp"
#include "common/statistics.hpp"

namespace hwprof::placement {

// One sweep over every span edge and sample in time order, keeping each thread's stack of open
// regions: a sample reads its own thread's innermost region, else, where exactly one thread has
// regions open, that thread's. An edge and a sample at the same nanosecond: a span's start comes
// first and its end last, so that a sample taken on an edge belongs to the span.
std::vector<AttributedSample> attribute_samples(std::span<const RegionSpan> spans, std::span<const TakenSample> samples) {
  struct Event {
    std::uint64_t time = 0;
    int order = 0;  // 0 start, 1 sample, 2 end
    std::size_t index = 0;
  };
  std::vector<Event> events;
  events.reserve(2 * spans.size() + samples.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].end_ns < spans[i].start_ns) continue;
    events.push_back({spans[i].start_ns, 0, i});
    events.push_back({spans[i].end_ns, 2, i});
  }
  for (std::size_t i = 0; i < samples.size(); ++i) events.push_back({samples[i].time_ns, 1, i});
  // At one time: starts, outer before inner; then samples; then ends, inner before outer.
  std::stable_sort(events.begin(), events.end(), [&](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.order != b.order) return a.order < b.order;
    if (a.order == 0) return spans[a.index].depth < spans[b.index].depth;
    if (a.order == 2) return spans[a.index].depth > spans[b.index].depth;
    return false;
  });
  std::unordered_map<std::int64_t, std::vector<std::size_t>> open;  // per thread: its open spans, innermost last
  std::size_t threads_open = 0;                                     // threads with at least one
  std::vector<AttributedSample> out(samples.size());
  for (const Event& e : events) {
    if (e.order == 0) {
      auto& stack = open[spans[e.index].tid];
      if (stack.empty()) ++threads_open;
      stack.push_back(e.index);
      continue;
    }
    if (e.order == 2) {
      auto& stack = open[spans[e.index].tid];
      // Spans nest; one that does not (a timeline cut short) is taken out wherever it is.
      const auto it = std::find(stack.rbegin(), stack.rend(), e.index);
      if (it == stack.rend()) continue;
      stack.erase(std::next(it).base());
      if (stack.empty()) --threads_open;
      continue;
    }
    AttributedSample& a = out[e.index];
    const auto own = open.find(samples[e.index].tid);
    if (own != open.end() && !own->second.empty()) {
      a = {spans[own->second.back()].region, Attribution::own_thread, samples[e.index].tid};
    } else if (threads_open == 1) {
      for (const auto& [tid, stack] : open) {
        if (!stack.empty()) a = {spans[stack.back()].region, Attribution::launching_thread, tid};
      }
    } else {
      a = {-1, threads_open > 1 ? Attribution::ambiguous : Attribution::outside};
    }
  }
  return out;
}

Share share_of(std::uint64_t samples, std::uint64_t of) noexcept {
  Share s;
  s.samples = samples;
  s.of = of;
  if (of == 0) return s;
  s.share = static_cast<double>(samples) / static_cast<double>(of);
  const ProportionInterval interval = wilson_interval(samples, of);  // the statistics module's
  s.low = interval.low;
  s.high = interval.high;
  return s;
}

std::vector<RegionBreakdown> break_down(std::span<const AttributedSample> attributed, std::span<const int> function_of, std::size_t top) {
  struct Tally {
    std::uint64_t samples = 0, launched = 0;
    std::map<int, std::uint64_t> functions;
  };
  std::map<int, Tally> regions;  // ascending id; -1 (outside) sorts first and is moved last
  for (std::size_t i = 0; i < attributed.size(); ++i) {
    Tally& t = regions[attributed[i].region];
    ++t.samples;
    if (attributed[i].how == Attribution::launching_thread) ++t.launched;
    ++t.functions[i < function_of.size() ? function_of[i] : -1];
  }
  std::vector<RegionBreakdown> out;
  for (const auto& [region, tally] : regions) {
    RegionBreakdown b;
    b.region = region;
    b.samples = tally.samples;
    b.by_launching_thread = tally.launched;
    b.enough = tally.samples >= kFewSamples;
    std::vector<std::pair<std::uint64_t, int>> ranked;
    for (const auto& [function, n] : tally.functions) ranked.emplace_back(n, function);
    // Most samples first; ties by the function's index, so that the order never depends on a hash.
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
    for (std::size_t k = 0; k < ranked.size(); ++k) {
      if (k < top) {
        b.top.push_back({ranked[k].second, share_of(ranked[k].first, tally.samples)});
      } else {
        b.rest += ranked[k].first;
      }
    }
    out.push_back(std::move(b));
  }
  if (!out.empty() && out.front().region == -1) std::rotate(out.begin(), out.begin() + 1, out.end());
  return out;
}

}  // namespace hwprof::placement
