// A region's report: the statistics of its kept samples, its counters summed over every call
// (with their status: a counter that could not count says why, never 0), and its group
// metrics per call.
#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <utility>

#include "session/session_state.hpp"

namespace hwprof {

// Long: one region's report, field by field in RegionReport's order (hwprof/session.hpp), so that
// none is missed.
RegionReport Session::State::report(int id, bool count_open) const {
  RegionReport out;
  const session::RegionRecord* r = record(id);
  if (r == nullptr || r->hidden) return out;
  out.id = id;
  out.name = r->name;
  out.calls = r->calls.load();
  out.unmatched = r->unmatched.load();
  out.inclusive_samples_ns = r->samples.inclusive(out.calls);
  out.dropped_samples = out.calls - out.inclusive_samples_ns.size();
  out.inclusive_ns = summarize(out.inclusive_samples_ns);
  out.exclusive_ns = summarize(r->samples.exclusive(out.calls));
  out.total_inclusive_ns = r->samples.total_inclusive();
  out.total_exclusive_ns = r->samples.total_exclusive();
  if (out.dropped_samples > 0) {  // a sample of the calls: the mean and the extremes of them all
    const double calls = static_cast<double>(out.calls);
    out.inclusive_ns.mean = out.total_inclusive_ns / calls;
    out.inclusive_ns.min = r->samples.min_inclusive();
    out.inclusive_ns.max = r->samples.max_inclusive();
    out.exclusive_ns.mean = out.total_exclusive_ns / calls;
    out.exclusive_ns.min = r->samples.min_exclusive();
    out.exclusive_ns.max = r->samples.max_exclusive();
  }
  if (const std::uint64_t epoch = steps.load(); epoch > 0 && r->after_epoch.load(std::memory_order_acquire) == epoch) {
    const std::uint64_t from = r->after_from_call.load() + r->after_straddling_calls.load();
    out.after_steps_calls = out.calls > from ? out.calls - from : 0;
    out.after_steps_ns = std::clamp(out.total_inclusive_ns - r->after_from_ns.load() - r->after_straddling_ns.load(), 0.0, out.total_inclusive_ns);
    if (out.after_steps_calls == 0) out.after_steps_ns = 0.0;
  }
  const double time_only = out.calls > 0 ? std::min(1.0, static_cast<double>(r->time_only_calls.load()) / static_cast<double>(out.calls)) : 0.0;
  out.own_cost_ns = reading ? time_only * overhead.time_only_pair_ns + (1.0 - time_only) * overhead.pair_ns : overhead.pair_ns;
  out.below_resolution = !out.inclusive_samples_ns.empty() && out.own_cost_ns > 0 && out.inclusive_ns.median < 100.0 * out.own_cost_ns;
  for (std::size_t e = 0; e < event_count; ++e) {
    const session::EventSums& s = r->events[e];
    CounterTotal c;
    c.name = events[e].name;
    c.unit = events[e].unit;
    c.kind = events[e].kind;
    c.samples = s.samples.load();
    c.inclusive = s.inclusive.load();
    c.exclusive = s.exclusive.load();
    c.reason = events[e].reason;
    if (events[e].status != CounterStatus::ok) {
      c.status = events[e].status;
    } else if (c.samples == 0) {
      c.status = CounterStatus::not_counted;
      if (c.reason.empty() && r->time_only_calls.load() > 0) {
        c.reason = "timed only: entered inside a region that reads counters (enter_time_only), whose counts include it";
      } else if (c.reason.empty() && out.calls > 0) {
        c.reason = "no read of this event succeeded during the region";
      }
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
  for (std::size_t i = 0; i < options.max_threads && count_open; ++i) {
    const session::ThreadSlot& t = slots[i];
    if (t.owner.load(std::memory_order_acquire) == 0) continue;
    for (std::size_t k = 0; k < t.depth && k < options.max_depth; ++k) out.open += t.frames[k].id == id ? 1 : 0;
  }
  if (count_open) {
    const std::lock_guard<std::mutex> lock(session::live_sessions_mutex());
    for (std::size_t i = retired_before_fork; i < retired.size(); ++i) {
      for (const auto& open : retired[i].open) out.open += open.first == id ? 1 : 0;
    }
  }
  if (const std::uint64_t n = r->work_calls.load(); n > 0) {
    // add_work(): the mean over the calls that gave their work, exact for calls that differ.
    out.work_flops = r->work_flops_sum.load() / static_cast<double>(n);
    out.work_bytes = r->work_bytes_sum.load() / static_cast<double>(n);
  } else if (r->has_work.load()) {
    out.work_flops = r->work_flops.load();
    out.work_bytes = r->work_bytes.load();
  }
  out.role = r->role.load(std::memory_order_relaxed);
  if (const char* note = r->work_note.load(std::memory_order_relaxed)) out.work_note = note;
  out.roof = session::unpack_roof(r->roof.load(std::memory_order_relaxed));
  out.threads_min = r->threads_min.load(std::memory_order_relaxed);
  out.threads_max = r->threads_max.load(std::memory_order_relaxed);
  out.params = r->params.load(std::memory_order_relaxed);
  out.continued = r->continued.load(std::memory_order_relaxed);
  if (const session::VariantTable* v = r->variants.load(std::memory_order_acquire)) out.variants = variants_of(*v);
  return out;
}

// The calls of the timeline to report, as ranges of their indices: the first ones and, with a
// tail, the latest ones, each cut at step boundaries so that both hold whole steps.
std::vector<std::pair<std::uint64_t, std::uint64_t>> Session::State::timeline_kept(SessionSnapshot& out) const {
  const std::uint64_t next = timeline_next.load();
  const std::uint64_t tail = options.timeline_tail;
  const std::uint64_t head = options.timeline_events - tail;
  if (tail == 0 || next <= options.timeline_events) return {{0, std::min<std::uint64_t>(next, options.timeline_events)}};
  // The steps' ends, as timeline indices (calls ended before them).
  const std::uint64_t marks = std::min<std::uint64_t>(steps.load(), kMaxStepMarks);
  std::vector<std::uint64_t> ends;
  for (std::uint64_t i = 0; i < marks; ++i) ends.push_back(std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(step_calls[i])).load());
  std::uint64_t head_end = head;  // without steps: the first calls, as they are
  std::uint64_t first_steps = 0;
  for (std::uint64_t i = 0; i < ends.size() && ends[i] <= head; ++i) {
    head_end = ends[i];
    first_steps = i + 1;
  }
  std::uint64_t tail_start = next - tail;  // the oldest call the ring still holds
  std::uint64_t last_from = 0;
  for (std::uint64_t i = 0; i < ends.size(); ++i) {
    if (ends[i] >= tail_start && ends[i] >= head_end) {
      tail_start = ends[i];
      last_from = i + 2;  // the step after the one that ended here
      break;
    }
  }
  if (last_from > ends.size() + 1) last_from = 0;
  out.timeline_first_steps = first_steps;
  out.timeline_last_from = last_from;
  out.timeline_cut = tail_start > head_end;
  return {{0, head_end}, {std::max(tail_start, head_end), next}};
}

// A region's variants, labelled, most time first, `other` last.
std::vector<RegionVariant> Session::State::variants_of(const session::VariantTable& table) const {
  std::vector<RegionVariant> out;
  std::optional<RegionVariant> other;
  const std::lock_guard<std::mutex> lock(labels_mutex);
  for (const session::VariantTable::Entry& e : table.entries()) {
    RegionVariant v{"", e.calls, e.ns, e.flops, e.bytes, e.key == 0};
    if (v.other) {
      v.label = "other shapes";
      other = v;
      continue;
    }
    const auto it = variant_labels.find(e.key);
    v.label = it != variant_labels.end() ? it->second : "variant " + std::to_string(e.key);
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const RegionVariant& a, const RegionVariant& b) { return a.total_ns > b.total_ns; });
  if (other) out.push_back(std::move(*other));
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
    out.push_back({m.name, m.unit, v.value, v.reason, false, m.role});
  }
  return out;
}

namespace {

// A thread's totals per region from its call paths; a region nested in itself adds its
// inclusive time once (at its outermost path).
std::vector<ThreadRegionTotal> totals_of(const std::vector<CallPath>& paths) {
  std::map<int, ThreadRegionTotal> by_region;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const CallPath& p = paths[i];
    ThreadRegionTotal& t = by_region[p.region];
    t.region = p.region;
    t.calls += p.calls;
    t.exclusive_ns += p.exclusive_ns;
    bool nested_in_itself = false;
    for (int a = p.parent; a >= 0 && !nested_in_itself; a = paths[static_cast<std::size_t>(a)].parent) {
      nested_in_itself = paths[static_cast<std::size_t>(a)].region == p.region;
    }
    if (!nested_in_itself) t.inclusive_ns += p.inclusive_ns;
  }
  std::vector<ThreadRegionTotal> out;
  for (auto& [id, t] : by_region) out.push_back(t);
  return out;
}

// Call paths without the session's hidden regions (and what hangs under them), re-indexed.
std::vector<CallPath> visible_paths(const std::vector<CallPath>& nodes, const Session::State& s) {
  std::vector<int> new_index(nodes.size(), -1);
  std::vector<CallPath> out;
  // Parents come before their children: a path is added when it is first entered.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const CallPath& n = nodes[i];
    const session::RegionRecord* r = s.record(n.region);
    if (r == nullptr || r->hidden) continue;
    if (n.parent >= 0 && (static_cast<std::size_t>(n.parent) >= i || new_index[static_cast<std::size_t>(n.parent)] < 0)) continue;
    new_index[i] = static_cast<int>(out.size());
    out.push_back({n.parent >= 0 ? new_index[static_cast<std::size_t>(n.parent)] : -1, n.region, n.depth, n.calls, n.inclusive_ns, n.exclusive_ns,
                   n.flops, n.bytes});
  }
  return out;
}

// Adds one thread's paths into the merged tree (keyed by parent and region).
void merge_paths(const std::vector<CallPath>& paths, std::vector<CallPath>& tree, std::map<std::pair<int, int>, int>& index) {
  std::vector<int> mapped(paths.size(), -1);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const CallPath& p = paths[i];
    const int parent = p.parent >= 0 ? mapped[static_cast<std::size_t>(p.parent)] : -1;
    auto [it, added] = index.try_emplace({parent, p.region}, static_cast<int>(tree.size()));
    if (added) tree.push_back({parent, p.region, p.depth, 0, 0.0, 0.0, 0.0, 0.0});
    CallPath& t = tree[static_cast<std::size_t>(it->second)];
    t.calls += p.calls;
    t.inclusive_ns += p.inclusive_ns;
    t.exclusive_ns += p.exclusive_ns;
    t.flops += p.flops;
    t.bytes += p.bytes;
    mapped[i] = it->second;
  }
}

}  // namespace

std::vector<std::string> Session::State::hints_now() const {
  std::vector<std::string> out;
  {
    const std::lock_guard<std::mutex> lock(hints_mutex);
    out = hints;
  }
  if (const pid_t parent = forked_from.load(); parent != 0) {
    out.push_back("this process was forked from process " + std::to_string(parent) +
                  ": its report holds what it measured after the fork, and times only (its counters would count the parent)");
  }
  return out;
}

// Long: the whole session at one moment, in SessionSnapshot's order (hwprof/session.hpp): the
// threads' paths (retired and live), the regions, the open calls, the timeline and the steps.
SessionSnapshot Session::State::snapshot() const {
  SessionSnapshot out;
  const std::uint64_t now_tick = const_cast<State*>(this)->now();
  auto ns_between = [&](std::uint64_t from, std::uint64_t to) { return to > from ? static_cast<double>(to - from) * ns_per_tick : 0.0; };
  if (const char* name = observer.load(std::memory_order_relaxed)) out.observer = name;
  out.backend = std::string(backend_name(reading ? counters->backend() : BackendKind::timer));
  out.clock_source = clock_name();
  out.events = events;
  if (group) out.group = group->name;
  out.overhead = overhead;
  out.hints = hints_now();
  out.elapsed_ns = ns_between(open_tick, now_tick);
  out.opened_monotonic_ns = open_monotonic_ns;
  const int count = record_count.load();
  auto note_open = [&](int region, int thread, std::uint64_t since, std::uint64_t until, bool ended) {
    const session::RegionRecord* r = record(region);
    if (r == nullptr || r->hidden) return;
    out.open_regions.push_back({thread, region, ns_between(since, until), ended});
  };
  {
    const std::lock_guard<std::mutex> lock(session::live_sessions_mutex());
    for (std::size_t i = retired_before_fork; i < retired.size(); ++i) {
      const session::RetiredThread& r = retired[i];
      SessionThread t;
      t.number = static_cast<int>(r.number);
      t.tid = r.tid;
      t.name = r.name;
      t.ended = true;
      t.paths = visible_paths(r.paths, *this);
      t.paths_dropped = r.paths_dropped;
      if (r.after_epoch == steps.load() && r.after_epoch > 0) out.after_steps_root_ns += r.after_root_ns;
      for (const auto& [region, start] : r.open) note_open(region, t.number, start, r.ended_tick, true);
      out.threads.push_back(std::move(t));
    }
  }
  for (std::size_t i = 0; i < options.max_threads; ++i) {
    const session::ThreadSlot& slot = slots[i];
    const pid_t tid = slot.owner.load(std::memory_order_acquire);
    if (tid == 0) continue;
    SessionThread t;
    t.number = static_cast<int>(slot.number);
    t.tid = tid;
    t.name = session::name_of_thread(tid);
    t.paths = visible_paths(std::vector<CallPath>(slot.paths.get(), slot.paths.get() + slot.path_count), *this);
    t.paths_dropped = slot.paths_dropped;
    if (const std::uint64_t epoch = slot.after_epoch.load(std::memory_order_relaxed); epoch > 0 && epoch == steps.load()) {
      out.after_steps_root_ns += slot.after_root_ns.load(std::memory_order_relaxed);
    }
    for (std::size_t k = 0; k < slot.depth && k < options.max_depth; ++k)
      note_open(slot.frames[k].id, t.number, slot.frames[k].start, now_tick, false);
    if (t.paths.empty() && t.paths_dropped == 0 && slot.depth == 0) continue;
    out.threads.push_back(std::move(t));
  }
  std::sort(out.threads.begin(), out.threads.end(), [](const SessionThread& a, const SessionThread& b) { return a.number < b.number; });
  std::map<std::pair<int, int>, int> index;
  for (SessionThread& t : out.threads) {
    t.regions = totals_of(t.paths);
    merge_paths(t.paths, out.call_tree, index);
  }
  for (int id = first_user_id; id < count; ++id) {
    if (RegionReport r = report(id, false); r.id >= 0) out.regions.push_back(std::move(r));  // not the hidden ones
  }
  for (const OpenRegion& o : out.open_regions) {  // each region's open calls, from the list above
    for (RegionReport& r : out.regions) r.open += r.id == o.region ? 1 : 0;
  }
  for (const auto& [from, to] : timeline_kept(out)) {
    for (std::uint64_t i = from; i < to; ++i) {
      const std::uint64_t head = options.timeline_events - options.timeline_tail;
      const session::TimelineEntry& e = timeline[i < head ? i : head + (i - head) % options.timeline_tail];
      const session::RegionRecord* r = record(e.region);
      if (r == nullptr || r->hidden) continue;
      out.timeline.push_back(
          {static_cast<int>(e.thread), e.region, static_cast<int>(e.depth), ns_between(open_tick, e.start), ns_between(e.start, e.end)});
    }
  }
  std::sort(out.timeline.begin(), out.timeline.end(), [](const TimelineEvent& a, const TimelineEvent& b) { return a.start_ns < b.start_ns; });
  // Once the timeline is full, calls are not counted there (the measured path does one load):
  // what it lacks is every completed call it does not hold.
  std::uint64_t calls = 0;
  for (const RegionReport& r : out.regions) calls += r.calls;
  out.timeline_dropped = calls > out.timeline.size() ? calls - out.timeline.size() : 0;
  out.dropped_threads = dropped_threads.load();
  out.dropped_depth = dropped_depth.load();
  out.steps = steps.load();
  const std::uint64_t marks = std::min<std::uint64_t>(out.steps, kMaxStepMarks);
  for (std::uint64_t i = 0; i < marks; ++i) {
    const std::uint64_t tick = std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(step_ticks[i])).load(std::memory_order_acquire);
    out.step_ends_ns.push_back(ns_between(open_tick, tick));
  }
  if (const std::uint64_t first = first_step_tick.load(); first != 0) out.first_step_start_ns = ns_between(open_tick, first);
  return out;
}

SessionSnapshot Session::snapshot() const {
  return state_->snapshot();
}

std::vector<RegionReport> Session::report() const {
  std::vector<RegionReport> out;
  const int count = state_->record_count.load();
  for (int id = state_->first_user_id; id < count; ++id) {
    if (RegionReport r = state_->report(id); r.id >= 0) out.push_back(std::move(r));  // not the hidden ones
  }
  return out;
}

RegionReport Session::report(int id) const {
  return state_->report(id);
}

}  // namespace hwprof
