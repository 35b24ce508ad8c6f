// The measured path: begin and end touch only memory allocated before they run (the thread
// slots when the session opened, the region's records when it was registered), take no lock
// except around the reads of a backend that cannot be read from two threads at once (PAPI),
// and never throw.
#include <algorithm>

#include <sys/syscall.h>
#include <unistd.h>

#include "session/session_state.hpp"

namespace hwprof {
namespace {

using detail::Frame;
using detail::RegionRecord;
using detail::ThreadSlot;

pid_t this_thread_id() noexcept { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// C++20 atomic<double>::fetch_add is a compare-exchange loop; so is this minimum.
void atomic_min(std::atomic<double>& target, double value) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (value < current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

struct SlotCacheEntry {
  std::uint64_t serial = 0;
  ThreadSlot* slot = nullptr;
};
// A thread that uses more sessions than this at once finds its slot by a scan instead.
constexpr std::size_t kSlotCacheEntries = 4;
thread_local SlotCacheEntry slot_cache[kSlotCacheEntries];
thread_local std::size_t slot_cache_next = 0;

}  // namespace

ThreadSlot* Session::State::slot_for_this_thread() noexcept {
  for (const SlotCacheEntry& e : slot_cache) {
    if (e.serial == serial) return e.slot;
  }
  const pid_t tid = this_thread_id();
  ThreadSlot* found = nullptr;
  for (std::size_t i = 0; i < options.max_threads && found == nullptr; ++i) {
    if (slots[i].owner.load(std::memory_order_acquire) == tid) found = &slots[i];
  }
  // A thread id is unique among live threads; a slot left by a thread that ended is taken
  // over by the next thread the kernel gives the same id.
  for (std::size_t i = 0; i < options.max_threads && found == nullptr; ++i) {
    pid_t expected = 0;
    if (slots[i].owner.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) found = &slots[i];
  }
  if (found == nullptr) return nullptr;
  slot_cache[slot_cache_next % kSlotCacheEntries] = {serial, found};
  ++slot_cache_next;
  return found;
}

void Session::State::read_counters(CounterSnapshot& out) noexcept {
  if (serialise_reads) {
    while (read_lock.test_and_set(std::memory_order_acquire)) {
    }
    counters->read(out);
    read_lock.clear(std::memory_order_release);
  } else {
    counters->read(out);
  }
}

void Session::State::begin(int id, std::uint64_t reuse_gap_ticks) noexcept {
  if (record(id) == nullptr) return;
  ThreadSlot* t = slot_for_this_thread();
  if (t == nullptr) {
    dropped_threads.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint64_t last_end = t->last_end_tick;
  t->last_end_tick = 0;
  if (t->depth >= options.max_depth) {
    ++t->overflow;
    dropped_depth.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::size_t d = t->depth;
  Frame& f = t->frames[d];
  f.id = id;
  f.children = 0;
  f.child_reads = 0;
  f.children_ns = 0.0;
  if (reading) {
    // The last end()'s reading, when it is recent enough, instead of a new one.
    bool reuse = false;
    if (reuse_gap_ticks > 0 && last_end > 0) {
      const std::uint64_t tick = now();
      reuse = tick >= last_end && tick - last_end <= reuse_gap_ticks;
    }
    const CounterSnapshot* start = t->after.get();
    if (!reuse) {
      read_counters(*t->before);
      start = t->before.get();
      if (d > 0) ++t->frames[d - 1].child_reads;
    }
    const std::size_t base = d * event_count;
    for (std::size_t e = 0; e < event_count; ++e) {
      t->start_value[base + e] = start->value[e];
      t->start_enabled[base + e] = start->time_enabled[e];
      t->start_running[base + e] = start->time_running[e];
      t->start_valid[base + e] = start->valid[e];
      t->children_counts[base + e] = 0.0;
    }
  }
  t->depth = d + 1;
  f.start = now();  // last: the reads above are not part of the sample
}

void Session::State::end(int id) noexcept {
  const std::uint64_t stop = now();  // first: what follows is not part of the sample
  RegionRecord* r = record(id);
  if (r == nullptr) return;
  ThreadSlot* t = slot_for_this_thread();
  if (t == nullptr) return;  // its begin was counted as dropped
  t->last_end_tick = 0;
  if (t->overflow > 0) {
    --t->overflow;
    return;
  }
  std::size_t d = t->depth;
  while (d > 0 && t->frames[d - 1].id != id) --d;
  if (d == 0) {  // not open on this thread
    r->unmatched.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  for (std::size_t k = d; k < t->depth; ++k) {  // left open inside it: abandoned
    if (RegionRecord* inner = record(t->frames[k].id)) inner->unmatched.fetch_add(1, std::memory_order_relaxed);
  }
  const std::size_t depth = d - 1;
  t->depth = depth;
  const Frame& f = t->frames[depth];
  if (reading) read_counters(*t->after);

  const double raw = stop >= f.start ? static_cast<double>(stop - f.start) * ns_per_tick : 0.0;
  const double inclusive = std::max(0.0, raw - overhead.sample_ns - static_cast<double>(f.children) * overhead.pair_ns);
  const double exclusive = std::max(0.0, inclusive - f.children_ns);
  const std::uint64_t index = r->calls.fetch_add(1, std::memory_order_relaxed);
  if (index < r->capacity) {
    r->inclusive[index] = inclusive;
    r->exclusive[index] = exclusive;
  } else {
    r->dropped_inclusive.fetch_add(inclusive, std::memory_order_relaxed);
    r->dropped_exclusive.fetch_add(exclusive, std::memory_order_relaxed);
  }
  Frame* parent = depth > 0 ? &t->frames[depth - 1] : nullptr;
  if (parent != nullptr) {
    ++parent->children;
    parent->children_ns += inclusive;
  }
  if (reading) {
    if (parent != nullptr) ++parent->child_reads;
    account_counters(*t, *r, depth, f.child_reads, parent != nullptr);
    t->last_end_tick = now();
  }
}

void Session::State::account_counters(ThreadSlot& t, RegionRecord& r, std::size_t depth, std::uint32_t child_reads,
                                      bool has_parent) noexcept {
  const std::size_t base = depth * event_count;
  CounterSnapshot& before = *t.before;
  for (std::size_t e = 0; e < event_count; ++e) {
    before.value[e] = t.start_value[base + e];
    before.time_enabled[e] = t.start_enabled[base + e];
    before.time_running[e] = t.start_running[base + e];
    before.valid[e] = t.start_valid[base + e];
  }
  readings_between(*counters, before, *t.after, t.readings.get());
  for (std::size_t e = 0; e < event_count; ++e) {
    const CounterReading& delta = t.readings[e];
    if (!delta.has_value()) continue;
    // Not clamped per sample: the noise of the subtracted overhead averages out over the
    // samples, where clamping each at 0 would bias a short region's sum upwards. The report
    // says when what is left is below the counter's resolution.
    const double inclusive =
        delta.value - overhead.sample_counts[e] - 0.5 * static_cast<double>(child_reads) * overhead.pair_counts[e];
    const double exclusive = inclusive - t.children_counts[base + e];
    detail::EventSums& sums = r.events[e];
    sums.inclusive.fetch_add(inclusive, std::memory_order_relaxed);
    sums.exclusive.fetch_add(exclusive, std::memory_order_relaxed);
    sums.samples.fetch_add(1, std::memory_order_relaxed);
    if (delta.status == CounterStatus::multiplexed) sums.multiplexed.fetch_add(1, std::memory_order_relaxed);
    atomic_min(sums.min_fraction, delta.running_fraction);
    if (has_parent) t.children_counts[base - event_count + e] += inclusive;
  }
}

// ---- the public face ------------------------------------------------------------------------

int Session::region(std::string_view name) {
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.registry_mutex);
  if (auto it = s.ids.find(name); it != s.ids.end()) return it->second;
  const int id = s.add_record(std::string(name), false, s.options.samples_per_region);
  if (id < 0) {
    s.hint("more than " + std::to_string(s.options.max_regions) + " regions: '" + std::string(name) +
           "' and later ones are not measured; raise SessionOptions::max_regions");
    return -1;
  }
  s.ids.emplace(std::string(name), id);
  return id;
}

int Session::region(RegionSite& site) noexcept {
  const std::uint64_t serial = state_->serial;
  const std::uint64_t bound = site.binding.load(std::memory_order_acquire);
  if ((bound >> 32) == serial) return static_cast<int>(bound & 0xffffffffU) - 1;
  int id = -1;
  try {
    id = region(std::string_view(site.name));
  } catch (...) {
    return -1;  // out of memory while registering: this entry is not measured
  }
  site.binding.store((serial << 32) | static_cast<std::uint64_t>(id + 1), std::memory_order_release);
  return id;
}

void Session::begin(int id) noexcept { state_->begin(id); }
void Session::end(int id) noexcept { state_->end(id); }
void Session::begin_after_end(int id, std::uint64_t max_gap_ns) noexcept {
  const double ticks = static_cast<double>(max_gap_ns) / state_->ns_per_tick;
  state_->begin(id, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ticks)));
}

void Session::set_work(int id, double flops, double bytes) noexcept {
  RegionRecord* r = state_->record(id);
  if (r == nullptr || r->hidden) return;
  r->work_flops.store(flops);
  r->work_bytes.store(bytes);
  r->has_work.store(true);
}

void Session::measure_overhead(std::size_t pairs) {
  state_->measure_overhead(std::max<std::size_t>(pairs, 1));
}

void Session::reset() noexcept {
  const int count = state_->record_count.load();
  for (int id = state_->first_user_id; id < count; ++id) state_->record(id)->clear(state_->event_count);
}

BackendKind Session::backend() const noexcept {
  return state_->reading ? state_->counters->backend() : BackendKind::timer;
}
bool Session::time_only() const noexcept { return !state_->reading; }
std::string_view Session::clock_source() const noexcept {
  return state_->options.clock != nullptr ? "injected" : state_->tsc ? "tsc" : "CLOCK_MONOTONIC";
}
const std::vector<EventInfo>& Session::events() const noexcept { return state_->events; }
const EventGroup* Session::group() const noexcept { return state_->group ? &*state_->group : nullptr; }
const SessionOverhead& Session::overhead() const noexcept { return state_->overhead; }
const std::vector<std::string>& Session::hints() const noexcept { return state_->hints; }
std::uint64_t Session::dropped_threads() const noexcept { return state_->dropped_threads.load(); }
std::uint64_t Session::dropped_depth() const noexcept { return state_->dropped_depth.load(); }

}  // namespace hwprof
