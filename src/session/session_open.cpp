// Opening a session: the event group and the counters, the thread slots, and the session's
// measurement of its own overhead.
//
// Overhead (after nanobench: measure it once, subtract it). The session times blocks of
// empty begin/end pairs, each block inside an outer region:
//   sample overhead: the median duration of an empty region — what one sample holds besides
//     the user's code (the tail of begin after its timestamp, the head of end before its
//     timestamp); subtracted from every sample;
//   pair overhead: the median cost of one whole pair as the outer region sees it — what a
//     nested region adds to its parent besides its own content; subtracted from a parent once
//     per child, and the yardstick of below_resolution.
// The same is done for every counter (medians over blocks of 10 pairs), so that a region's
// counts are its code's and not the measurement's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "common/data_paths.hpp"
#include "common/stages.hpp"
#include "common/statistics.hpp"
#include "counters/event_resolver.hpp"
#include "hwprof/cpu.hpp"
#include "session/report_writer.hpp"
#include "session/session_state.hpp"

namespace hwprof {

namespace session {

void EventSums::clear() noexcept {
  inclusive.store(0.0, std::memory_order_relaxed);
  exclusive.store(0.0, std::memory_order_relaxed);
  samples.store(0, std::memory_order_relaxed);
  multiplexed.store(0, std::memory_order_relaxed);
  min_fraction.store(1.0, std::memory_order_relaxed);
}

void RegionRecord::clear(std::size_t event_count) noexcept {
  calls.store(0, std::memory_order_relaxed);
  unmatched.store(0, std::memory_order_relaxed);
  samples.clear();
  work_flops_sum.store(0.0, std::memory_order_relaxed);
  work_bytes_sum.store(0.0, std::memory_order_relaxed);
  work_calls.store(0, std::memory_order_relaxed);
  time_only_calls.store(0, std::memory_order_relaxed);
  continued.store(0, std::memory_order_relaxed);
  after_epoch.store(0, std::memory_order_relaxed);
  if (VariantTable* v = variants.load(std::memory_order_acquire)) v->clear();
  for (std::size_t e = 0; e < event_count; ++e) events[e].clear();
}

namespace {
std::atomic<bool> hinted_on_stderr{false};
}  // namespace

void rearm_stderr_hint() noexcept {
  hinted_on_stderr.store(false);
}

}  // namespace session

namespace {

using common::median_of;
using session::hinted_on_stderr;
using session::RegionRecord;

std::atomic<std::uint32_t> next_serial{1};

// The calibration: pairs per block, and pairs run first to warm caches and branch predictors.
constexpr std::size_t kPairsPerBlock = 10;
constexpr std::size_t kWarmupPairs = 100;

std::vector<std::string> counters_dirs(const SessionOptions& options) {
  if (!options.counters_dirs.empty()) return options.counters_dirs;
  // $HWPROF_COUNTERS_PATH, then where an installed or built hwprof keeps its groups; for a
  // program outside the prefix it was built against, that prefix's (the report module's).
  return common::data_directories("HWPROF_COUNTERS_PATH", "counters", session::report_module_hint());
}

// The same search as `hwprof stat -g` (find_event_group), in SessionOptions::counters_dirs.
Result<EventGroup> find_group(const SessionOptions& options) {
  const std::string& name = options.group;
  const bool path = names_group_file(name);
  const std::vector<std::string> dirs = path ? std::vector<std::string>{} : counters_dirs(options);
  if (!path && dirs.empty()) {
    return Error{"event group '" + name +
                 "': no folder of group files to look in; set SessionOptions::counters_dirs "
                 "or $HWPROF_COUNTERS_PATH to the counters/ folder (installed under share/hwprof/counters), or give a "
                 "group file path"};
  }
  if (path || !options.family.empty()) return find_event_group(name, options.family, dirs);
  auto family = counter_family(detect_cpu(), dirs);
  if (!family) return Error{"event group '" + name + "': this CPU's counter family is unknown: " + family.error().message};
  return find_event_group(name, family->name, dirs);
}

// What runs for a request: automatic is perf_event (time only when nothing opens, decided later).
BackendKind counter_backend(BackendKind backend) {
  return backend == BackendKind::automatic ? BackendKind::perf : backend;
}

std::string describe(const EventInfo& e) {
  return e.name + " (" + std::string(counter_status_name(e.status)) + (e.reason.empty() ? "" : ": " + e.reason) + ")";
}

}  // namespace

// ---- setup ------------------------------------------------------------------------------------

int Session::State::add_record(std::string name, bool hidden, std::size_t capacity) {
  const int id = record_count.load(std::memory_order_relaxed);
  if (static_cast<std::size_t>(id) >= record_capacity) return -1;
  auto r = std::make_unique<RegionRecord>();
  r->name = std::move(name);
  r->hidden = hidden;
  // The session's own regions hold all their samples (they are few, and measured at open);
  // a user's region holds its first few, and claims more from the arena when it needs them.
  r->samples.allocate(capacity, static_cast<std::uint64_t>(id), hidden);
  r->events = std::make_unique<session::EventSums[]>(event_count);
  records[static_cast<std::size_t>(id)] = std::move(r);
  record_count.store(id + 1, std::memory_order_release);  // publishes the record to begin/end
  return id;
}

void Session::State::allocate_slots() {
  slots = std::make_unique<session::ThreadSlot[]>(options.max_threads);
  std::size_t index = 1;
  while (index < 2 * options.call_paths_per_thread) index <<= 1;
  const bool paths = options.call_paths_per_thread > 0 && path_index_pages.map(options.max_threads * index * sizeof(std::uint32_t));
  for (std::size_t i = 0; i < options.max_threads; ++i) {
    session::ThreadSlot& s = slots[i];
    s.frames = std::make_unique<session::Frame[]>(options.max_depth);
    if (paths) {
      // The paths are left uninitialised, untouched until used; the index (4 bytes an entry)
      // is fresh pages, zero.
      s.path_capacity = options.call_paths_per_thread;
      s.paths = std::make_unique_for_overwrite<CallPath[]>(s.path_capacity);
      s.path_index = static_cast<std::uint32_t*>(path_index_pages.data()) + i * index;
      s.index_mask = index - 1;
    }
    if (!reading) continue;
    const std::size_t n = options.max_depth * event_count;
    s.start_value = std::make_unique<std::uint64_t[]>(n);
    s.start_enabled = std::make_unique<std::uint64_t[]>(n);
    s.start_running = std::make_unique<std::uint64_t[]>(n);
    s.start_valid = std::make_unique<bool[]>(n);
    s.children_counts = std::make_unique<double[]>(n);
    s.before = std::make_unique<CounterSnapshot>();
    s.after = std::make_unique<CounterSnapshot>();
    s.readings = std::make_unique<CounterReading[]>(event_count);
  }
}

// A time-only pair's cost in a session that reads counters: the overhead blocks entered without
// reads (enter_time_only). Nothing is subtracted from such a call or from its parent for it, so
// a block is its pairs' time. Leaves both records cleared.
double Session::State::measure_time_only_pair(RegionRecord& c, RegionRecord& p, std::size_t blocks) {
  const int child = overhead_child;
  const int parent = overhead_parent;
  for (std::size_t b = 0; b < blocks; ++b) {
    begin(parent, 0, false);
    for (std::size_t k = 0; k < kPairsPerBlock; ++k) {
      begin(child, 0, false);
      end(child);
    }
    end(parent);
  }
  std::vector<double> time_only = p.samples.inclusive(p.calls.load());
  for (double& pair : time_only) pair /= static_cast<double>(kPairsPerBlock);
  const double out = time_only.empty() ? overhead.pair_ns : median_of(std::move(time_only));
  c.clear(event_count);
  p.clear(event_count);
  return out;
}

void Session::State::measure_overhead(std::size_t pairs) {
  overhead.sample_counts.assign(event_count, 0.0);
  overhead.pair_counts.assign(event_count, 0.0);
  if (pairs == 0) return;
  std::size_t blocks = std::max<std::size_t>(1, (pairs + kPairsPerBlock - 1) / kPairsPerBlock);
  // The two hidden regions are made once, at open; a later measurement reuses them (and
  // measures at most as many blocks as they hold).
  if (overhead_child < 0) {
    overhead_child = add_record("[hwprof overhead: pair]", true, blocks * kPairsPerBlock);
    overhead_parent = add_record("[hwprof overhead: block]", true, blocks);
  }
  const int child = overhead_child;
  const int parent = overhead_parent;
  RegionRecord* child_record = record(child);
  RegionRecord* parent_record = record(parent);
  if (child_record == nullptr || parent_record == nullptr) return;
  RegionRecord& c = *child_record;
  RegionRecord& p = *parent_record;
  blocks = std::min(blocks, p.samples.capacity());
  for (std::size_t i = 0; i < kWarmupPairs; ++i) {
    begin(child);
    end(child);
  }
  c.clear(event_count);
  std::vector<std::vector<double>> child_counts(event_count);
  std::vector<std::vector<double>> parent_counts(event_count);
  std::vector<double> c0(event_count);
  std::vector<double> p0(event_count);
  std::vector<std::uint64_t> cn(event_count);
  std::vector<std::uint64_t> pn(event_count);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t e = 0; e < event_count; ++e) {
      c0[e] = c.events[e].inclusive.load();
      p0[e] = p.events[e].inclusive.load();
      cn[e] = c.events[e].samples.load();
      pn[e] = p.events[e].samples.load();
    }
    begin(parent);
    for (std::size_t k = 0; k < kPairsPerBlock; ++k) {
      begin(child);
      end(child);
    }
    end(parent);
    for (std::size_t e = 0; e < event_count; ++e) {
      // Only blocks whose every read had a value: a partial block would understate the mean.
      if (c.events[e].samples.load() - cn[e] != kPairsPerBlock || p.events[e].samples.load() - pn[e] != 1) continue;
      child_counts[e].push_back((c.events[e].inclusive.load() - c0[e]) / static_cast<double>(kPairsPerBlock));
      parent_counts[e].push_back(p.events[e].inclusive.load() - p0[e]);
    }
  }
  overhead.sample_ns = median_of(c.samples.inclusive(c.calls.load()));
  std::vector<double> per_pair = p.samples.inclusive(p.calls.load());
  for (double& pair : per_pair) pair = std::max(0.0, (pair - overhead.sample_ns) / static_cast<double>(kPairsPerBlock));
  overhead.pair_ns = median_of(std::move(per_pair));
  for (std::size_t e = 0; e < event_count; ++e) {
    overhead.sample_counts[e] = median_of(child_counts[e]);
    std::vector<double> pair(parent_counts[e].size());
    for (std::size_t i = 0; i < pair.size(); ++i) {
      pair[i] = std::max(0.0, (parent_counts[e][i] - overhead.sample_counts[e]) / static_cast<double>(kPairsPerBlock));
    }
    overhead.pair_counts[e] = median_of(std::move(pair));
  }
  c.clear(event_count);
  p.clear(event_count);
  overhead.time_only_pair_ns = reading ? measure_time_only_pair(c, p, blocks) : overhead.pair_ns;
}

void Session::State::hint(const std::string& text) {
  {
    const std::lock_guard<std::mutex> lock(hints_mutex);
    hints.push_back(text);
  }
  if (options.on_hint) {
    options.on_hint(text);
  } else if (!hinted_on_stderr.exchange(true)) {
    std::fprintf(stderr, "hwprof: %s\n", text.c_str());
  }
}

void Session::State::hint_once(std::atomic<bool>& told, const char* what, std::string_view name) noexcept {
  if (told.exchange(true, std::memory_order_relaxed)) return;
  try {
    hint(std::string(what) + " '" + std::string(name) + "'");
  } catch (...) {
  }
}

// ---- opening ----------------------------------------------------------------------------------

Result<std::unique_ptr<Session>> Session::open(const SessionOptions& options) {
  std::optional<EventGroup> group;
  std::vector<std::string> names;
  if (!options.group.empty()) {
    auto g = find_group(options);
    if (!g) return g.error();
    group = std::move(*g);
    for (const GroupEvent& e : group->events) names.push_back(e.event);
  }
  const BackendKind kind = counter_backend(options.backend);
  // A name the caller typed must exist; a group chosen for this CPU may hold events this
  // machine does not expose (an uncore PMU in a VM), and those are reported unavailable.
  for (const std::string& name : options.events) {
    if (kind == BackendKind::perf) {
      // A misspelt name is an error; an event of another CPU (an Intel event on an AMD
      // machine) is reported unavailable with its reason, and the session still opens.
      auto resolved = counters::resolve_event(name);
      if (!resolved && !counters::event_of_another_cpu(name)) return Error{"event '" + name + "': " + resolved.error().message};
    }
    names.push_back(name);
  }
  if (names.empty()) {
    if (kind == BackendKind::perf) names = {"task-clock", "cycles", "instructions"};
    if (kind == BackendKind::papi) names = {"perf::TASK-CLOCK"};
  }
  std::unique_ptr<CounterSet> set;
  if (!names.empty()) {
    CounterOptions co;
    co.backend = kind;
    co.events = names;
    set = open_counters(co);
    if (kind == BackendKind::timer) {
      for (const EventInfo& e : set->events()) {
        if (e.status != CounterStatus::ok) return Error{"event '" + e.name + "': " + e.reason};
      }
    }
  }
  auto session = open(options, std::move(set));
  if (!session) return session;
  State& s = *(*session)->state_;
  s.group = std::move(group);
  if (s.group && !s.group->alias_note.empty()) s.hint(s.group->alias_note);
  if (!s.reading && !s.events.empty()) {
    std::string why;
    for (const EventInfo& e : s.events) why += (why.empty() ? "" : "; ") + describe(e);
    s.hint(options.backend == BackendKind::automatic ? "no counter could be opened with perf_event, so regions measure time only: " + why
                                                     : "no counter could be opened with the " + std::string(backend_name(kind)) + " backend: " + why);
  }
  return session;
}

Result<std::unique_ptr<Session>> Session::open(const SessionOptions& options, std::unique_ptr<CounterSet> counters) {
  if (options.max_threads == 0 || options.max_depth == 0) return Error{"a session needs max_threads ≥ 1 and max_depth ≥ 1"};
  auto s = std::make_unique<State>();
  s->serial = next_serial.fetch_add(1);
  s->options = options;
  if (options.clock != nullptr) {
    s->clock = options.clock;
  } else if (const session::TscClock& tsc = session::tsc_clock(); tsc.usable) {
    s->tsc = true;
    s->ns_per_tick = tsc.ns_per_tick;
  }
  if (counters) {
    s->events = counters->events();
    if (s->events.size() > kMaxCounterEvents) s->events.resize(kMaxCounterEvents);
    s->event_count = s->events.size();
    s->reading = std::any_of(s->events.begin(), s->events.end(), [](const EventInfo& e) { return e.status == CounterStatus::ok; });
    s->serialise_reads = counters->backend() == BackendKind::papi;
    s->counters = std::move(counters);
  }
  s->record_capacity = options.max_regions + 3;  // the two calibration regions, and the names past max_regions
  s->records = std::make_unique<std::unique_ptr<RegionRecord>[]>(s->record_capacity);
  // Room for every region's samples past its first few (address space, committed as used).
  // Without it (an address-space limit), regions keep their first samples and sample into those.
  if (options.samples_per_region > session::kInlineSamples && options.sample_budget > 0 && !s->arena.reserve(options.sample_budget)) {
    s->hint("could not reserve room for " + std::to_string(options.sample_budget) +
            " samples (an address-space limit?): each region keeps a uniform sample of " + std::to_string(session::kInlineSamples) +
            " of its calls for its statistics; totals, minimum and maximum still count every call");
  }
  s->allocate_slots();
  if (s->reading) {
    s->counters->start();
    std::string missing;
    for (const EventInfo& e : s->events) {
      if (e.status != CounterStatus::ok) missing += (missing.empty() ? "" : "; ") + describe(e);
    }
    if (!missing.empty()) s->hint(std::string(kUnavailableEventsHint) + missing);
  }
  if (options.timeline_events > 0) s->timeline = std::make_unique_for_overwrite<session::TimelineEntry[]>(options.timeline_events);
  s->step_ticks = std::make_unique_for_overwrite<std::uint64_t[]>(kMaxStepMarks);
  s->step_calls = std::make_unique_for_overwrite<std::uint64_t[]>(kMaxStepMarks);
  s->options.timeline_tail = std::min(s->options.timeline_tail, s->options.timeline_events);
  s->measure_overhead(s->options.overhead_pairs);
  s->first_user_id = s->record_count.load();
  // The overhead's own calls are not the user's: the timeline and this thread's call paths
  // start empty.
  s->timeline_next.store(0);
  for (std::size_t i = 0; i < s->options.max_threads; ++i) {
    session::ThreadSlot& t = s->slots[i];
    for (std::size_t k = 0; k <= t.index_mask && t.path_capacity > 0 && t.path_count > 0; ++k) t.path_index[k] = 0;
    t.path_count = 0;
    t.paths_dropped = 0;
  }
  s->open_tick = s->now();
  s->open_monotonic_ns = common::monotonic_ns();
  session::register_live_session(s->serial, s.get());
  return std::unique_ptr<Session>(new Session(std::move(s)));
}

Session::Session(std::unique_ptr<State> state) : state_(std::move(state)) {}

// Regions still open (a scoped Region whose scope outlives the session, a thread inside a
// region) hold the state: it is then kept, closed, so that their ends do nothing, and the
// memory stays until the process ends.
Session::~Session() {
  session::unregister_live_session(state_->serial);
  if (state_->reading) state_->counters->stop();
  std::size_t open = 0;
  for (std::size_t i = 0; i < state_->options.max_threads; ++i) {
    const session::ThreadSlot& t = state_->slots[i];
    if (t.owner.load() != 0) open += t.depth;
  }
  if (open == 0) return;
  state_->closed.store(true);
  state_->hint("a session was destroyed with " + std::to_string(open) +
               " region(s) still open; they are not measured, and the session's memory is kept until the process ends");
  // Deliberately kept (see above), and reachable from here, so that a leak checker does not
  // report what is kept on purpose.
  static auto* kept = new std::vector<std::unique_ptr<State>>;  // NOLINT: never freed
  static auto* kept_mutex = new std::mutex;                     // NOLINT: never freed
  try {
    const std::lock_guard<std::mutex> lock(*kept_mutex);
    kept->push_back(std::move(state_));
  } catch (...) {
    static_cast<void>(state_.release());  // out of memory: kept all the same, unreachable
  }
}

}  // namespace hwprof
