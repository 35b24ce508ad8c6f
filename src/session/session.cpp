// The measured path: begin and end touch only memory allocated before they run (the thread
// slots when the session opened, the region's records when it was registered), take no lock
// except around the reads of a backend that cannot be read from two threads at once (PAPI),
// and never throw.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <string>

#include <sys/syscall.h>
#include <unistd.h>

#include "common/stages.hpp"
#include "session/observer_hooks.hpp"
#include "session/session_state.hpp"

namespace hwprof {
namespace {

using session::atomic_min;
using session::Frame;
using session::RegionRecord;
using session::ThreadSlot;

// The innermost region below `depth` that reads counters: its counts and reads include a
// counted region's nested in time-only ones.
Frame* counted_parent(ThreadSlot& t, std::size_t depth) noexcept {
  for (std::size_t k = depth; k > 0; --k) {
    if (t.frames[k - 1].counted) return &t.frames[k - 1];
  }
  return nullptr;
}

// Work that no roofline can place: NaN, infinite, negative, or past 2^63 (what a count of
// operations or bytes can hold).
bool usable_work(double v) noexcept {
  constexpr double kMaxWork = 9.2e18;
  return std::isfinite(v) && v >= 0.0 && v <= kMaxWork;
}

pid_t this_thread_id() noexcept {
  return static_cast<pid_t>(::syscall(SYS_gettid));
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

namespace {

// The slots this thread claimed, given back when it ends (a thread_local destructor; its
// registration, once per thread, is the only allocation a thread's first region may make,
// and glibc makes it with calloc).
struct ThreadClaims {
  struct Claim {
    std::uint32_t serial = 0;
    ThreadSlot* slot = nullptr;
  };
  static constexpr std::size_t kMax = 16;  // sessions per thread whose slots go back at its end
  Claim claims[kMax];
  std::size_t count = 0;
  ~ThreadClaims();
};
thread_local ThreadClaims thread_claims;

// Sessions alive, by serial (a thread that ends looks its sessions up here).
std::map<std::uint32_t, Session::State*>& live_sessions() {
  static auto* sessions = new std::map<std::uint32_t, Session::State*>;  // outlives every thread
  return *sessions;
}

ThreadClaims::~ThreadClaims() {
  const std::lock_guard<std::mutex> lock(session::live_sessions_mutex());
  for (std::size_t i = 0; i < count; ++i) {
    auto it = live_sessions().find(claims[i].serial);
    if (it != live_sessions().end()) it->second->retire(*claims[i].slot);
  }
  count = 0;
}

}  // namespace

namespace session {
std::mutex& live_sessions_mutex() noexcept {
  // Outlives every thread. A failed allocation here, at the first session, ends the program.
  static auto* mutex = new std::mutex;  // NOLINT(bugprone-unhandled-exception-at-new)
  return *mutex;
}
void register_live_session(std::uint32_t serial, Session::State* state) {
  const std::lock_guard<std::mutex> lock(live_sessions_mutex());
  live_sessions()[serial] = state;
}
void unregister_live_session(std::uint32_t serial) {
  const std::lock_guard<std::mutex> lock(live_sessions_mutex());
  live_sessions().erase(serial);
}
std::string name_of_thread(pid_t tid) {
  std::FILE* f = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/comm").c_str(), "r");
  if (f == nullptr) return {};
  char name[64] = {};
  const bool read = std::fgets(name, sizeof name, f) != nullptr;
  std::fclose(f);
  std::string out = read ? name : "";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace session

ThreadSlot* Session::State::slot_for_this_thread(bool claim) noexcept {
  for (const SlotCacheEntry& e : slot_cache) {
    if (e.serial == serial) return e.slot;
  }
  const pid_t tid = this_thread_id();
  ThreadSlot* found = nullptr;
  for (std::size_t i = 0; i < options.max_threads && found == nullptr; ++i) {
    if (slots[i].owner.load(std::memory_order_acquire) == tid) found = &slots[i];
  }
  // A thread's slot goes back to the session when the thread ends (ThreadClaims); one that
  // could not be given back (a thread in more than ThreadClaims::kMax sessions) is taken over
  // by the next thread the kernel gives the same id.
  for (std::size_t i = 0; i < options.max_threads && found == nullptr && claim; ++i) {
    pid_t expected = 0;
    if (slots[i].owner.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) {
      found = &slots[i];
      found->number = next_thread_number.fetch_add(1, std::memory_order_relaxed) + 1;
      ThreadClaims& claims = thread_claims;
      if (claims.count < ThreadClaims::kMax) claims.claims[claims.count++] = {serial, found};
    }
  }
  if (found == nullptr) return nullptr;
  slot_cache[slot_cache_next % kSlotCacheEntries] = {serial, found};
  ++slot_cache_next;
  return found;
}

int Session::State::path_for(ThreadSlot& t, int parent, int region, std::size_t depth) noexcept {
  if (t.path_capacity == 0) return -1;
  std::size_t h = (static_cast<std::size_t>(parent + 1) * 0x9E3779B97F4A7C15ULL ^ static_cast<std::size_t>(region) * 0xC2B2AE3D27D4EB4FULL) >> 17;
  for (std::size_t probe = 0; probe <= t.index_mask; ++probe, ++h) {
    const std::size_t slot = h & t.index_mask;
    const std::uint32_t entry = t.path_index[slot];
    if (entry == 0) {
      if (t.path_count == t.path_capacity) break;
      const std::size_t n = t.path_count++;
      t.paths[n] = CallPath{parent, region, static_cast<int>(depth), 0, 0.0, 0.0, 0.0, 0.0};
      t.path_index[slot] = static_cast<std::uint32_t>(n + 1);
      return static_cast<int>(n);
    }
    const CallPath& node = t.paths[entry - 1];
    if (node.parent == parent && node.region == region) return static_cast<int>(entry - 1);
  }
  ++t.paths_dropped;
  return -1;
}

void Session::State::retire(ThreadSlot& t) {
  session::RetiredThread r;
  r.number = t.number;
  r.tid = t.owner.load();
  r.name = session::name_of_thread(r.tid);
  r.paths.assign(t.paths.get(), t.paths.get() + t.path_count);
  r.paths_dropped = t.paths_dropped;
  r.ended_tick = now();
  r.after_epoch = t.after_epoch.load(std::memory_order_relaxed);
  r.after_root_ns = t.after_root_ns.load(std::memory_order_relaxed);
  for (std::size_t k = 0; k < t.depth && k < options.max_depth; ++k) r.open.emplace_back(t.frames[k].id, t.frames[k].start);
  if (!r.paths.empty() || !r.open.empty()) retired.push_back(std::move(r));
  for (std::size_t i = 0; i <= t.index_mask && t.path_capacity > 0 && t.path_count > 0; ++i) t.path_index[i] = 0;
  t.path_count = 0;
  t.paths_dropped = 0;
  t.depth = 0;
  t.overflow = 0;
  t.last_end_tick = 0;
  t.after_epoch.store(0, std::memory_order_relaxed);
  t.after_root_ns.store(0.0, std::memory_order_relaxed);
  t.owner.store(0, std::memory_order_release);
}

// In the child of fork(): what the session holds is the parent's. The child starts afresh —
// its report is its own measurements since the fork — and measures time only, since the
// counters it inherited count the parent. Only the forking thread exists in the child: the
// other threads' slots go back (their open regions with them), and the forking thread's slot
// keeps its open regions under its new thread id. Runs in the child's atfork handler, with
// the session's locks held by this thread since the prepare handler: it frees nothing.
void Session::State::after_fork(pid_t forking_tid, pid_t parent) noexcept {
  forked_from.store(parent, std::memory_order_relaxed);
  reading = false;
  const int count = record_count.load();
  for (int id = first_user_id; id < count; ++id) record(id)->clear(event_count);
  const pid_t self = this_thread_id();
  for (std::size_t i = 0; i < options.max_threads; ++i) {
    ThreadSlot& t = slots[i];
    const pid_t owner = t.owner.load(std::memory_order_relaxed);
    if (owner == 0) continue;
    for (std::size_t n = 0; n < t.path_count; ++n)
      t.paths[n] = CallPath{t.paths[n].parent, t.paths[n].region, t.paths[n].depth, 0, 0.0, 0.0, 0.0, 0.0};
    t.paths_dropped = 0;
    t.last_end_tick = 0;
    if (owner == forking_tid) {
      t.owner.store(self, std::memory_order_relaxed);
      continue;
    }
    for (std::size_t k = 0; k <= t.index_mask && t.path_capacity > 0 && t.path_count > 0; ++k) t.path_index[k] = 0;
    t.path_count = 0;
    t.depth = 0;
    t.overflow = 0;
    t.owner.store(0, std::memory_order_relaxed);
  }
  retired_before_fork = retired.size();  // the parent's, left out of reports (not freed here)
  dropped_threads.store(0, std::memory_order_relaxed);
  dropped_depth.store(0, std::memory_order_relaxed);
  timeline_next.store(0, std::memory_order_relaxed);
  open_tick = now();
  open_monotonic_ns = common::monotonic_ns();
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

void Session::State::begin(int id, std::uint64_t reuse_gap_ticks, bool counted, bool continues) noexcept {
  const RegionRecord* r = record(id);
  if (closed.load(std::memory_order_relaxed) || r == nullptr) return;
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
  f.node = path_for(*t, d > 0 ? t->frames[d - 1].node : -1, id, d);
  f.children = 0;
  f.child_reads = 0;
  f.children_ns = 0.0;
  f.counted = counted;
  // A piece of the region's latest call; before its first call, a call of its own.
  const std::uint64_t calls_so_far = r->calls.load(std::memory_order_relaxed);
  f.continues = continues && calls_so_far > 0;
  f.continues_call = f.continues ? calls_so_far - 1 : 0;
  if (reading && counted) {
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
      if (Frame* parent = counted_parent(*t, d)) ++parent->child_reads;
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

// The calls after the latest step mark, for the time after the last step (SessionSnapshot::
// after_steps_root_ns, RegionReport::after_steps_ns): per region, what it had when the first
// call after the mark ended, and the calls open across the mark, which are the step's; per
// thread, its outermost calls' time. Before any mark, nothing: there is no step to be after.
void Session::State::note_after_steps(RegionRecord& r, ThreadSlot& t, std::uint64_t index, double total_before, double inclusive, std::uint64_t start,
                                      bool outermost) noexcept {
  const std::uint64_t epoch = steps.load(std::memory_order_relaxed);
  if (epoch == 0) return;
  const bool straddles = start < last_step_tick.load(std::memory_order_relaxed);
  if (r.after_epoch.load(std::memory_order_relaxed) != epoch) {
    r.after_from_call.store(index, std::memory_order_relaxed);
    r.after_from_ns.store(total_before, std::memory_order_relaxed);
    r.after_straddling_calls.store(0, std::memory_order_relaxed);
    r.after_straddling_ns.store(0.0, std::memory_order_relaxed);
    r.after_epoch.store(epoch, std::memory_order_release);
  }
  if (straddles) {
    r.after_straddling_calls.fetch_add(1, std::memory_order_relaxed);
    r.after_straddling_ns.fetch_add(inclusive, std::memory_order_relaxed);
  }
  if (!outermost) return;
  if (t.after_epoch.load(std::memory_order_relaxed) != epoch) {
    t.after_root_ns.store(0.0, std::memory_order_relaxed);
    t.after_epoch.store(epoch, std::memory_order_relaxed);
  }
  if (!straddles) t.after_root_ns.store(t.after_root_ns.load(std::memory_order_relaxed) + inclusive, std::memory_order_relaxed);
}

// Long: the measured path's second half in one body, read top to bottom as one call's end
// (time, samples, work, variant, call path, timeline, parent, counters), with no call between
// the clock read and the counter read that could move either.
double Session::State::end(int id, const CallDetail* detail) noexcept {
  const std::uint64_t stop = now();  // first: what follows is not part of the sample
  if (closed.load(std::memory_order_relaxed)) return -1.0;
  RegionRecord* r = record(id);
  if (r == nullptr) return -1.0;
  // Without a slot, its begin was counted as dropped (a slot freed since by a thread that
  // ended is not this region's).
  ThreadSlot* t = slot_for_this_thread(false);
  if (t == nullptr) return -1.0;
  t->last_end_tick = 0;
  if (t->overflow > 0) {
    --t->overflow;
    return -1.0;
  }
  std::size_t d = t->depth;
  while (d > 0 && t->frames[d - 1].id != id) --d;
  if (d == 0) {  // not open on this thread
    r->unmatched.fetch_add(1, std::memory_order_relaxed);
    hint_once(r->told_unmatched, "a region was ended that is not open on the thread that ended it (not timed; counted as unmatched):", r->name);
    return -1.0;
  }
  for (std::size_t k = d; k < t->depth; ++k) {  // left open inside it: abandoned
    if (RegionRecord* inner = record(t->frames[k].id)) {
      inner->unmatched.fetch_add(1, std::memory_order_relaxed);
      hint_once(inner->told_unmatched, "a region was left open when an outer region ended (not timed; counted as unmatched):", inner->name);
    }
  }
  const std::size_t depth = d - 1;
  t->depth = depth;
  const Frame& f = t->frames[depth];
  const bool reads = reading && f.counted;
  if (reads) read_counters(*t->after);
  if (reading && !f.counted) r->time_only_calls.fetch_add(1, std::memory_order_relaxed);
  // The measured cost of a pair is a counted pair's where counters are read: a time-only
  // region in such a session has none of it subtracted (docs/regions.md, "Cost").
  const bool measured_cost = reads || !reading;

  const double raw = stop >= f.start ? static_cast<double>(stop - f.start) * ns_per_tick : 0.0;
  const double own_cost = measured_cost ? overhead.sample_ns : 0.0;
  const double inclusive = std::max(0.0, raw - own_cost - static_cast<double>(f.children) * overhead.pair_ns);
  const double exclusive = std::max(0.0, inclusive - f.children_ns);
  if (f.continues) {
    // A piece of call `continues_call`: its time joins that call's (its kept sample, where no
    // other call of the region came since), and no call is counted.
    r->samples.extend(f.continues_call, r->calls.load(std::memory_order_relaxed), inclusive, exclusive);
    r->continued.fetch_add(1, std::memory_order_relaxed);
  } else {
    const std::uint64_t index = r->calls.fetch_add(1, std::memory_order_relaxed);
    const double before = r->samples.record(index, &arena, inclusive, exclusive);
    note_after_steps(*r, *t, index, before, inclusive, f.start, depth == 0);
  }
  const bool has_work = detail != nullptr && detail->flops >= 0.0 && add_call_work(*r, *detail, f.continues);
  if (detail != nullptr && detail->variant != 0) {
    if (session::VariantTable* v = r->variants.load(std::memory_order_acquire)) {
      if (f.continues) {
        v->extend(detail->variant, inclusive);
      } else {
        v->add(detail->variant, inclusive, has_work ? detail->flops : 0.0, has_work ? detail->bytes : 0.0);
      }
    }
  }
  if (f.node >= 0) {
    CallPath& node = t->paths[static_cast<std::size_t>(f.node)];
    node.calls += f.continues ? 0 : 1;
    node.inclusive_ns += inclusive;
    node.exclusive_ns += exclusive;
    if (has_work) {
      node.flops += detail->flops;
      node.bytes += detail->bytes;
    }
  }
  // The timeline keeps the session's first calls: once it is full, this is one load. With a
  // tail, the latest calls too, in a ring after the first ones.
  const std::uint64_t head = options.timeline_events - options.timeline_tail;
  if (options.timeline_tail > 0 || timeline_next.load(std::memory_order_relaxed) < options.timeline_events) {
    const std::uint64_t index = timeline_next.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t slot = index < head || options.timeline_tail == 0 ? index : head + (index - head) % options.timeline_tail;
    if (slot < options.timeline_events) {
      session::TimelineEntry& e = timeline[slot];
      e.start = f.start;
      e.end = stop;
      e.region = id;
      e.thread = t->number;
      e.depth = static_cast<std::uint32_t>(depth);
    }
  }
  Frame* parent = depth > 0 ? &t->frames[depth - 1] : nullptr;
  if (parent != nullptr) {
    if (measured_cost) ++parent->children;
    parent->children_ns += inclusive;
  }
  if (reads) {
    Frame* counted = counted_parent(*t, depth);
    if (counted != nullptr) ++counted->child_reads;
    account_counters(*t, *r, depth, f.child_reads, counted, f.continues);
    t->last_end_tick = now();
    // This end's read, twice for a pair, into the thread's running mean of the last ~8.
    const double pair = 2.0 * static_cast<double>(t->last_end_tick - stop) * ns_per_tick;
    t->read_pair_ns = t->read_pair_ns > 0.0 ? t->read_pair_ns + (pair - t->read_pair_ns) / 8.0 : pair;
    live_pair_ns.store(t->read_pair_ns, std::memory_order_relaxed);
  }
  return inclusive;
}

// A call's work, added up (observer::add_work); false where it is no usable number (said once).
bool Session::State::add_call_work(RegionRecord& r, const CallDetail& detail, bool continues) noexcept {
  if (!usable_work(detail.flops) || !usable_work(detail.bytes)) {
    hint_once(r.told_bad_work, "a call's work was not a number from 0 to 9.2e18: ignored for region", r.name);
    return false;
  }
  if (detail.flops > 0) r.work_flops_sum.fetch_add(detail.flops, std::memory_order_relaxed);  // a compare-exchange loop each
  if (detail.bytes > 0) r.work_bytes_sum.fetch_add(detail.bytes, std::memory_order_relaxed);
  if (!continues) r.work_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Session::State::account_counters(ThreadSlot& t, RegionRecord& r, std::size_t depth, std::uint32_t child_reads, Frame* counted_parent,
                                      bool continues) noexcept {
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
    const double inclusive = delta.value - overhead.sample_counts[e] - 0.5 * static_cast<double>(child_reads) * overhead.pair_counts[e];
    const double exclusive = inclusive - t.children_counts[base + e];
    session::EventSums& sums = r.events[e];
    sums.inclusive.fetch_add(inclusive, std::memory_order_relaxed);
    sums.exclusive.fetch_add(exclusive, std::memory_order_relaxed);
    if (!continues) sums.samples.fetch_add(1, std::memory_order_relaxed);  // a piece's counts are its call's
    if (delta.status == CounterStatus::multiplexed) sums.multiplexed.fetch_add(1, std::memory_order_relaxed);
    atomic_min(sums.min_fraction, delta.running_fraction);
    if (counted_parent != nullptr) t.children_counts[static_cast<std::size_t>(counted_parent - t.frames.get()) * event_count + e] += inclusive;
  }
}

// ---- the public face ------------------------------------------------------------------------

int Session::State::register_region(std::string_view name) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (auto it = ids.find(name); it != ids.end()) return it->second;
  if (ids.size() >= options.max_regions) return names_past_limit(name);
  const int id = add_record(std::string(name), false, options.samples_per_region);
  if (id < 0) return -1;
  ids.emplace(std::string(name), id);
  return id;
}

// Names past max_regions are not registered (each would cost memory): their calls are
// counted together in one region, said once.
int Session::State::names_past_limit(std::string_view first) {
  if (const int id = other_names.load(); id >= 0) return id;
  const int id = add_record(std::string(kOtherNamesRegion), false, options.samples_per_region);
  other_names.store(id);
  if (id >= 0) {
    hint("more than " + std::to_string(options.max_regions) + " region names: '" + std::string(first) +
         "' and every later new name are counted together as one region, '" + std::string(kOtherNamesRegion) +
         "' (raise SessionOptions::max_regions, or HWPROF_MAX_REGIONS for the regions library)");
  }
  return id;
}

int Session::State::region_of(RegionSite& site) noexcept {
  if (site.name == nullptr) return -1;
  const std::uint64_t bound = site.binding.load(std::memory_order_acquire);
  if ((bound >> 32) == serial) return static_cast<int>(bound & 0xffffffffU) - 1;
  int id = -1;
  try {
    id = register_region(std::string_view(site.name));
  } catch (...) {
    return -1;  // out of memory while registering: this entry is not measured
  }
  site.binding.store((static_cast<std::uint64_t>(serial) << 32) | static_cast<std::uint64_t>(id + 1), std::memory_order_release);
  return id;
}

namespace {
// Transient names: a small per-thread cache from the name's text to its id, checked against
// the registered name, before the registry's lock.
struct NameCacheEntry {
  std::uint32_t serial = 0;
  int id = -1;
  std::size_t hash = 0;
};
constexpr std::size_t kNameCacheEntries = 64;
thread_local NameCacheEntry name_cache[kNameCacheEntries];
}  // namespace

int Session::State::region_named(std::string_view name) noexcept {
  const std::size_t hash = std::hash<std::string_view>{}(name);
  NameCacheEntry& e = name_cache[hash % kNameCacheEntries];
  if (e.serial == serial && e.hash == hash) {
    if (const RegionRecord* r = record(e.id); r != nullptr && r->name == name) return e.id;
  }
  int id = -1;
  try {
    id = register_region(name);
  } catch (...) {
    return -1;
  }
  if (id >= 0) e = {serial, id, hash};
  return id;
}

int Session::region(std::string_view name) {
  return state_->register_region(name);
}
int Session::region(RegionSite& site) noexcept {
  return state_->region_of(site);
}

void Session::enter(State* state, int id) noexcept {
  if (state != nullptr) state->begin(id);
}
void observer::enter_time_only(Session::State* state, int id) noexcept {
  if (state != nullptr) state->begin(id, 0, false);
}
void Session::leave(State* state, int id) noexcept {
  if (state != nullptr) state->end(id);
}
int Session::site_region(State* state, RegionSite& site) noexcept {
  return state != nullptr ? state->region_of(site) : -1;
}
int Session::named_region(State* state, std::string_view name) noexcept {
  return state != nullptr ? state->region_named(name) : -1;
}

void Session::begin(int id) noexcept {
  state_->begin(id);
}
void Session::end(int id) noexcept {
  state_->end(id);
}
void Session::begin_after_end(int id, std::uint64_t max_gap_ns) noexcept {
  const double ticks = static_cast<double>(max_gap_ns) / state_->ns_per_tick;
  state_->begin(id, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(ticks)));
}

void Session::set_work(int id, double flops, double bytes) noexcept {
  set_work(state_.get(), id, flops, bytes);
}

namespace {

// The record of one of the program's own named regions, which may be given work and metadata:
// none for the session's hidden regions, nor for "[other names]" (the names past max_regions
// share it: no one work per call, role or note fits them all).
RegionRecord* own_record(Session::State* state, int id) noexcept {
  RegionRecord* r = state != nullptr ? state->record(id) : nullptr;
  return r == nullptr || r->hidden || id == state->other_names.load(std::memory_order_relaxed) ? nullptr : r;
}

}  // namespace

void Session::set_work(State* state, int id, double flops, double bytes) noexcept {
  RegionRecord* r = own_record(state, id);
  if (r == nullptr) return;
  if (!usable_work(flops) || !usable_work(bytes)) {  // said once and not kept
    state->hint_once(r->told_bad_work,
                     "set_work was given FLOPs or bytes that are not numbers from 0 to 9.2e18 (NaN, infinite, negative or too large): "
                     "ignored for region",
                     r->name);
    return;
  }
  r->work_flops.store(flops);
  r->work_bytes.store(bytes);
  r->has_work.store(true);
}

void observer::add_work(Session::State* state, int id, double flops, double bytes) noexcept {
  RegionRecord* r = own_record(state, id);
  if (r == nullptr) return;
  if (!usable_work(flops) || !usable_work(bytes)) {
    state->hint_once(r->told_bad_work, "add_work was given FLOPs or bytes that are not numbers from 0 to 9.2e18: ignored for region", r->name);
    return;
  }
  r->work_flops_sum.fetch_add(flops, std::memory_order_relaxed);
  r->work_bytes_sum.fetch_add(bytes, std::memory_order_relaxed);
  r->work_calls.fetch_add(1, std::memory_order_relaxed);
}

double observer::leave(Session::State* state, int id, const CallDetail& detail) noexcept {
  return state != nullptr ? state->end(id, &detail) : -1.0;
}

void observer::enter_continuing(Session::State* state, int id, bool counted) noexcept {
  if (state != nullptr) state->begin(id, 0, counted, true);
}

void observer::note_variant(Session::State* state, int id, std::uint64_t variant, std::string_view label) noexcept {
  RegionRecord* r = own_record(state, id);
  if (r == nullptr) return;
  try {
    if (r->variants.load(std::memory_order_acquire) == nullptr) {
      const std::lock_guard<std::mutex> lock(state->registry_mutex);
      if (r->variant_table == nullptr) {
        r->variant_table = std::make_unique<session::VariantTable>();
        r->variants.store(r->variant_table.get(), std::memory_order_release);
      }
    }
    if (variant == 0 || label.empty()) return;  // the table only: its variants are labelled by another region
    const std::lock_guard<std::mutex> lock(state->labels_mutex);
    if (state->variant_labels.size() < session::kMaxVariantLabels) state->variant_labels.try_emplace(variant, label);
  } catch (...) {
    // Out of memory: the variant's calls are counted, under its key instead of its label.
  }
}

void observer::note_threads(Session::State* state, int id, int threads) noexcept {
  RegionRecord* r = own_record(state, id);
  if (r == nullptr || threads <= 0) return;
  int low = r->threads_min.load(std::memory_order_relaxed);
  while ((low == 0 || threads < low) && !r->threads_min.compare_exchange_weak(low, threads, std::memory_order_relaxed)) {
  }
  int high = r->threads_max.load(std::memory_order_relaxed);
  while (threads > high && !r->threads_max.compare_exchange_weak(high, threads, std::memory_order_relaxed)) {
  }
}

void observer::set_params(Session::State* state, int id, std::int64_t params) noexcept {
  if (RegionRecord* r = own_record(state, id); r != nullptr && params >= 0) r->params.store(params, std::memory_order_relaxed);
}

void observer::mark_step(Session::State* state) noexcept {
  if (state == nullptr) return;
  const std::uint64_t tick = state->now();
  state->last_step_tick.store(tick, std::memory_order_relaxed);
  const std::uint64_t n = state->steps.fetch_add(1, std::memory_order_relaxed);
  if (n < kMaxStepMarks) {
    std::atomic_ref<std::uint64_t>(state->step_calls[n]).store(state->timeline_next.load(std::memory_order_relaxed), std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(state->step_ticks[n]).store(tick, std::memory_order_release);
  }
}

void observer::mark_step_start(Session::State* state) noexcept {
  if (state == nullptr) return;
  std::uint64_t none = 0;
  state->first_step_tick.compare_exchange_strong(none, state->now(), std::memory_order_relaxed);
}

double observer::mean_ns(Session::State* state, int id) noexcept {
  const RegionRecord* r = state != nullptr ? state->record(id) : nullptr;
  const std::uint64_t calls = r != nullptr ? r->calls.load(std::memory_order_relaxed) : 0;
  return calls > 0 ? r->samples.total_inclusive() / static_cast<double>(calls) : 0.0;
}

double observer::counted_pair_ns(Session::State* state) noexcept {
  if (state == nullptr || !state->reading) return 0.0;
  return std::max(state->overhead.pair_ns, state->live_pair_ns.load(std::memory_order_relaxed));
}

void observer::set_observer(Session::State* state, const char* name) noexcept {
  if (state != nullptr) state->observer.store(name, std::memory_order_relaxed);
}

void observer::set_role(Session::State* state, int id, RegionRole role) noexcept {
  if (RegionRecord* r = own_record(state, id)) r->role.store(role, std::memory_order_relaxed);
}

void observer::set_work_note(Session::State* state, int id, const char* note) noexcept {
  if (RegionRecord* r = own_record(state, id)) r->work_note.store(note, std::memory_order_relaxed);
}

namespace {

// The transcendental functions the calibration measures (their ceilings exp_sp, tanh_sp,
// erf_sp), by their place in a packed roof.
constexpr const char* kRoofFunctions[] = {"exp", "tanh", "erf"};

}  // namespace

namespace session {

// A compute roof in one word, so that a reader never sees half of one: the kind in the low
// byte, the function's place + 1 in the next, the FLOPs per evaluation (a float) above.
std::uint64_t pack_roof(const ComputeRoof& roof) noexcept {
  std::uint64_t function = 0;
  for (std::uint64_t i = 0; i < std::size(kRoofFunctions); ++i) {
    if (roof.function == kRoofFunctions[i]) function = i + 1;
  }
  if (roof.kind == ComputeRoof::Kind::transcendental && (function == 0 || !(roof.flops_per_evaluation > 0))) return 0;
  const float flops = roof.kind == ComputeRoof::Kind::transcendental ? static_cast<float>(roof.flops_per_evaluation) : 0.0f;
  return static_cast<std::uint64_t>(roof.kind) | function << 8 | static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(flops)) << 32;
}

ComputeRoof unpack_roof(std::uint64_t packed) {
  ComputeRoof roof;
  roof.kind = static_cast<ComputeRoof::Kind>(packed & 0xff);
  const std::uint64_t function = (packed >> 8) & 0xff;
  if (function >= 1 && function <= std::size(kRoofFunctions)) roof.function = kRoofFunctions[function - 1];
  roof.flops_per_evaluation = std::bit_cast<float>(static_cast<std::uint32_t>(packed >> 32));
  return roof;
}

}  // namespace session

void observer::set_compute_roof(Session::State* state, int id, const ComputeRoof& roof) noexcept {
  if (RegionRecord* r = own_record(state, id)) r->roof.store(session::pack_roof(roof), std::memory_order_relaxed);
}

void Session::measure_overhead(std::size_t pairs) {
  state_->measure_overhead(std::max<std::size_t>(pairs, 1));
}

void Session::reset() noexcept {
  State& s = *state_;
  const int count = s.record_count.load();
  for (int id = s.first_user_id; id < count; ++id) s.record(id)->clear(s.event_count);
  for (std::size_t i = 0; i < s.options.max_threads; ++i) {
    ThreadSlot& t = s.slots[i];
    for (std::size_t n = 0; n < t.path_count; ++n) {
      t.paths[n].calls = 0;
      t.paths[n].inclusive_ns = 0.0;
      t.paths[n].exclusive_ns = 0.0;
      t.paths[n].flops = 0.0;
      t.paths[n].bytes = 0.0;
    }
    t.paths_dropped = 0;
    t.after_epoch.store(0, std::memory_order_relaxed);
    t.after_root_ns.store(0.0, std::memory_order_relaxed);
  }
  s.timeline_next.store(0);
  s.open_tick = s.now();
  // The steps after it: the next one begins now.
  s.steps.store(0);
  s.last_step_tick.store(0);
  s.first_step_tick.store(s.open_tick);
  s.open_monotonic_ns = common::monotonic_ns();
  const std::lock_guard<std::mutex> lock(session::live_sessions_mutex());
  s.retired.clear();
  s.retired_before_fork = 0;
}

BackendKind Session::backend() const noexcept {
  return state_->reading ? state_->counters->backend() : BackendKind::timer;
}
bool Session::time_only() const noexcept {
  return !state_->reading;
}
std::string_view Session::clock_source() const noexcept {
  return state_->clock_name();
}
const std::vector<EventInfo>& Session::events() const noexcept {
  return state_->events;
}
const EventGroup* Session::group() const noexcept {
  return state_->group ? &*state_->group : nullptr;
}
const SessionOverhead& Session::overhead() const noexcept {
  return state_->overhead;
}
const std::vector<std::string>& Session::hints() const noexcept {
  return state_->hints;
}
std::uint64_t Session::dropped_threads() const noexcept {
  return state_->dropped_threads.load();
}
std::uint64_t Session::dropped_depth() const noexcept {
  return state_->dropped_depth.load();
}

}  // namespace hwprof
