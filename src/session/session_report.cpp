// A region's report: the statistics of its kept samples, its counters summed over every call
// (with their status: a counter that could not count says why, never 0), and its group
// metrics per call.
#include <algorithm>

#include "session/session_state.hpp"

namespace hwprof {

RegionReport Session::State::report(int id) const {
  RegionReport out;
  const detail::RegionRecord* r = record(id);
  if (r == nullptr || r->hidden) return out;
  out.id = id;
  out.name = r->name;
  out.calls = r->calls.load();
  out.unmatched = r->unmatched.load();
  const auto kept = static_cast<std::size_t>(std::min<std::uint64_t>(out.calls, r->capacity));
  out.dropped_samples = out.calls - kept;
  out.inclusive_ns = summarize(r->inclusive.get(), kept);
  out.exclusive_ns = summarize(r->exclusive.get(), kept);
  out.total_inclusive_ns = r->dropped_inclusive.load();
  out.total_exclusive_ns = r->dropped_exclusive.load();
  for (std::size_t i = 0; i < kept; ++i) {
    out.total_inclusive_ns += r->inclusive[i];
    out.total_exclusive_ns += r->exclusive[i];
  }
  out.below_resolution = kept > 0 && overhead.pair_ns > 0 && out.inclusive_ns.median < 100.0 * overhead.pair_ns;
  for (std::size_t e = 0; e < event_count; ++e) {
    const detail::EventSums& s = r->events[e];
    CounterTotal c;
    c.name = events[e].name;
    c.unit = events[e].unit;
    c.samples = s.samples.load();
    c.inclusive = s.inclusive.load();
    c.exclusive = s.exclusive.load();
    c.reason = events[e].reason;
    if (events[e].status != CounterStatus::ok) {
      c.status = events[e].status;
    } else if (c.samples == 0) {
      c.status = CounterStatus::not_counted;
      if (c.reason.empty() && out.calls > 0) c.reason = "no read of this event succeeded during the region";
    } else {
      c.status = s.multiplexed.load() > 0 ? CounterStatus::multiplexed : CounterStatus::ok;
      c.min_running_fraction = s.min_fraction.load();
      const double resolution = e < overhead.sample_counts.size() ? overhead.sample_counts[e] : 0.0;
      c.below_resolution = c.per_call() < resolution || c.inclusive < 0;
      c.inclusive = std::max(0.0, c.inclusive);
      c.exclusive = std::max(0.0, c.exclusive);
    }
    out.counters.push_back(std::move(c));
  }
  if (group) out.metrics = metrics(out);
  if (r->has_work.load()) {
    out.work_flops = r->work_flops.load();
    out.work_bytes = r->work_bytes.load();
  }
  return out;
}

// The group's events are the first of the session's, in the group's order; "time" is the mean
// inclusive time per call, so that every metric is per call.
std::vector<RegionMetric> Session::State::metrics(const RegionReport& region) const {
  std::vector<RegionMetric> out;
  const double seconds = region.calls > 0 ? 1e-9 * region.total_inclusive_ns / static_cast<double>(region.calls) : 0.0;
  auto lookup = [&](std::string_view id) -> std::optional<double> {
    if (id == "time") return seconds > 0 ? std::optional<double>(seconds) : std::nullopt;
    for (std::size_t i = 0; i < group->events.size() && i < region.counters.size(); ++i) {
      if (group->events[i].id == id) {
        return region.counters[i].has_value() ? std::optional<double>(region.counters[i].per_call()) : std::nullopt;
      }
    }
    return std::nullopt;
  };
  for (const Metric& m : group->metrics) {
    MetricValue v = evaluate_metric(m, lookup);
    out.push_back({m.name, m.unit, v.value, v.reason});
  }
  return out;
}

std::vector<RegionReport> Session::report() const {
  std::vector<RegionReport> out;
  const int count = state_->record_count.load();
  for (int id = state_->first_user_id; id < count; ++id) out.push_back(state_->report(id));
  return out;
}

RegionReport Session::report(int id) const { return state_->report(id); }

}  // namespace hwprof
