// The session's state, shared by the files that open it (session_open.cpp), run the measured
// path (session.cpp) and report (session_report.cpp).
//
// Layout. Each region has a record with a sample buffer reserved at registration (its
// inclusive and exclusive time per call) and per-event atomic sums. Each thread that enters a
// region gets a slot — claimed from a table allocated when the session opens, and cached in a
// small thread_local table keyed by the session's serial number — holding its stack of open
// regions: start time, start counter values, and what its nested regions added up to.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/session.hpp"
#include "session/observer_hooks.hpp"
#include "session/region_variants.hpp"
#include "session/sample_reservoir.hpp"
#include "session/session_clock.hpp"

namespace hwprof::session {

// Variant labels a session keeps (observer::note_variant); a variant past them is shown by its key.
inline constexpr std::size_t kMaxVariantLabels = std::size_t{1} << 16;

struct EventSums {
  std::atomic<double> inclusive{0.0};
  std::atomic<double> exclusive{0.0};
  std::atomic<std::uint64_t> samples{0};
  std::atomic<std::uint64_t> multiplexed{0};
  std::atomic<double> min_fraction{1.0};

  void clear() noexcept;
};

struct RegionRecord {
  std::string name;
  bool hidden = false;  // the session's own calibration regions
  RegionSamples samples;
  std::atomic<std::uint64_t> calls{0};  // also the next sample's index
  std::atomic<std::uint64_t> unmatched{0};
  std::atomic<bool> told_unmatched{false};  // the first unmatched end() was said in a hint
  std::atomic<bool> told_bad_work{false};   // the first set_work() with unusable numbers was said
  std::unique_ptr<EventSums[]> events;
  std::atomic<double> work_flops{0.0};
  std::atomic<double> work_bytes{0.0};
  std::atomic<bool> has_work{false};
  // add_work(): the work of every call that gave one, summed (kept apart from set_work's value).
  std::atomic<double> work_flops_sum{0.0};
  std::atomic<double> work_bytes_sum{0.0};
  std::atomic<std::uint64_t> work_calls{0};
  std::atomic<std::uint64_t> time_only_calls{0};  // entered by enter_time_only() where counters are read
  std::atomic<RegionRole> role{RegionRole::scope};
  std::atomic<const char*> work_note{nullptr};
  // observer::set_compute_roof, packed by pack_roof (session.cpp) into one word: 0 is the FMA peak.
  std::atomic<std::uint64_t> roof{0};
  std::atomic<int> threads_min{0};  // observer::note_threads; 0: not said
  std::atomic<int> threads_max{0};
  std::atomic<std::int64_t> params{-1};     // observer::set_params; -1: not said
  std::atomic<std::uint64_t> continued{0};  // pieces that continued a call (observer::enter_continuing)
  // Its calls after the latest step mark (observer::mark_step): `after_epoch` is the steps
  // count they came after; from its first such call, the calls and inclusive time the region
  // had then, and the calls since that started before the mark (open across it), whose time is
  // the step's. Only the first call after each mark writes more than one load (StepTail).
  std::atomic<std::uint64_t> after_epoch{0};
  std::atomic<std::uint64_t> after_from_call{0};
  std::atomic<double> after_from_ns{0.0};
  std::atomic<std::uint64_t> after_straddling_calls{0};
  std::atomic<double> after_straddling_ns{0.0};
  // Its calls by variant, once observer::note_variant gave it one (made under the registry's lock).
  std::unique_ptr<VariantTable> variant_table;
  std::atomic<VariantTable*> variants{nullptr};

  void clear(std::size_t event_count) noexcept;
};

struct Frame {
  int id = -1;
  int node = -1;  // its call path in the thread's table, or -1 when that is full
  std::uint32_t children = 0;
  // Counter reads the nested regions made: two per child, one when its begin shared the
  // previous end's reading (begin_after_end). Each costs half a measured pair.
  std::uint32_t child_reads = 0;
  // false: entered by enter_time_only() in a session that reads counters: no reading at
  // either end, no read cost subtracted from its time; its counts stay its counted parent's.
  bool counted = true;
  // A piece of the region's call `continues_call` (observer::enter_continuing), not a call.
  bool continues = false;
  std::uint64_t continues_call = 0;
  std::uint64_t start = 0;   // in clock ticks
  double children_ns = 0.0;  // Σ the nested regions' inclusive time
};

// One region call on the timeline (the first SessionOptions::timeline_events of the session).
struct TimelineEntry {
  std::uint64_t start = 0;  // clock ticks
  std::uint64_t end = 0;
  std::int32_t region = -1;
  std::uint32_t thread = 0;
  std::uint32_t depth = 0;
};

// A thread that ended: its call paths and the regions it left open, kept for the report
// after its slot went back to the session.
struct RetiredThread {
  std::uint32_t number = 0;
  pid_t tid = 0;
  std::string name;
  std::vector<CallPath> paths;
  std::uint64_t paths_dropped = 0;
  std::vector<std::pair<int, std::uint64_t>> open;  // (region, start tick) left open at its exit
  std::uint64_t ended_tick = 0;
  std::uint64_t after_epoch = 0;  // its outermost calls' time after the latest step mark (ThreadSlot)
  double after_root_ns = 0.0;
};

// One thread's stack of open regions. Counter arrays hold `event_count` entries per depth.
struct ThreadSlot {
  std::atomic<pid_t> owner{0};
  std::uint32_t number = 0;  // the session's number for the thread (1, 2, ... in order of first region)
  std::size_t depth = 0;
  std::size_t overflow = 0;  // begins past max_depth, whose ends are ignored
  std::unique_ptr<Frame[]> frames;
  std::unique_ptr<std::uint64_t[]> start_value;
  std::unique_ptr<std::uint64_t[]> start_enabled;
  std::unique_ptr<std::uint64_t[]> start_running;
  std::unique_ptr<bool[]> start_valid;
  std::unique_ptr<double[]> children_counts;
  std::unique_ptr<CounterSnapshot> before;
  std::unique_ptr<CounterSnapshot> after;
  std::unique_ptr<CounterReading[]> readings;
  // When the thread's last call was an end() that read the counters: the clock at its return
  // (`after` still holds that reading), for begin_after_end. 0 otherwise.
  std::uint64_t last_end_tick = 0;
  // What the thread's latest end() reads cost, as a pair (ns, a running mean): State::live_pair_ns.
  double read_pair_ns = 0.0;
  // Call paths (parent: an index into `paths`), written by the owning thread only, and their
  // open-addressing index (path + 1; 0: empty).
  std::unique_ptr<CallPath[]> paths;
  std::size_t path_count = 0;
  std::size_t path_capacity = 0;
  std::uint64_t paths_dropped = 0;
  std::uint32_t* path_index = nullptr;  // in Session::State::path_index_pages
  std::size_t index_mask = 0;
  // Its outermost calls' inclusive time since the latest step mark (`after_epoch`: the steps
  // count then), for the program's time after its last step. Written by the owning thread.
  std::atomic<std::uint64_t> after_epoch{0};
  std::atomic<double> after_root_ns{0.0};
};

// Sessions alive, by serial: a thread that ends gives its slots back to those still open.
std::mutex& live_sessions_mutex() noexcept;
std::string name_of_thread(pid_t tid);

// Hints go to stderr once per process (when no on_hint callback is set); tests re-arm it.
void rearm_stderr_hint() noexcept;
// A region's compute roof packed into one atomic word and back (session.cpp).
std::uint64_t pack_roof(const ComputeRoof& roof) noexcept;
ComputeRoof unpack_roof(std::uint64_t packed);

}  // namespace hwprof::session

namespace hwprof {
namespace session {
void register_live_session(std::uint32_t serial, Session::State* state);
void unregister_live_session(std::uint32_t serial);
}  // namespace session

struct Session::State {
  std::uint32_t serial = 0;
  SessionOptions options;
  SessionClock clock = &common::monotonic_ns;
  bool tsc = false;         // read the TSC instead of calling `clock`
  int overhead_child = -1;  // the hidden regions measure_overhead() times
  int overhead_parent = -1;
  double ns_per_tick = 1.0;  // of whichever clock is read
  std::unique_ptr<CounterSet> counters;
  bool reading = false;          // false: time only
  bool serialise_reads = false;  // the backend's read() is not safe from two threads at once
  std::atomic_flag read_lock = ATOMIC_FLAG_INIT;
  std::size_t event_count = 0;  // events.size(), at most kMaxCounterEvents
  std::vector<EventInfo> events;
  std::optional<EventGroup> group;
  SessionOverhead overhead;
  // A counted pair's cost as the program's reads take it now (ns), where that is more than
  // `overhead.pair_ns`, measured at open: reading a counter inherited by threads that are
  // running (a BLAS pool spinning after a GEMM) interrupts their CPUs, several times the cost
  // of a read measured with them asleep. 0 until a read was timed.
  std::atomic<double> live_pair_ns{0.0};
  std::vector<std::string> hints;
  std::atomic<std::uint64_t> dropped_threads{0};
  std::atomic<std::uint64_t> dropped_depth{0};
  std::atomic<const char*> observer{nullptr};  // observer::set_observer
  std::atomic<bool> closed{false};             // the Session object is gone; its regions still open do nothing
  std::uint64_t open_tick = 0;                 // when it opened, for the timeline
  std::uint64_t open_monotonic_ns = 0;         // the same moment on CLOCK_MONOTONIC (samples' time base)
  std::atomic<std::uint32_t> next_thread_number{0};
  std::unique_ptr<session::TimelineEntry[]> timeline;
  std::atomic<std::uint64_t> timeline_next{0};
  std::vector<session::RetiredThread> retired;  // guarded by live_sessions_mutex()
  std::size_t retired_before_fork = 0;          // the first ones are the parent's (after_fork)
  std::atomic<pid_t> forked_from{0};            // the parent's pid, in the child of a fork()
  // observer::mark_step: the steps so far, the ticks the first kMaxStepMarks ended at, and the
  // tick the first began at (0: not said).
  std::atomic<std::uint64_t> steps{0};
  std::unique_ptr<std::uint64_t[]> step_ticks;  // written with atomic_ref, touched only as used
  std::unique_ptr<std::uint64_t[]> step_calls;  // the timeline's calls so far at each step's end
  std::atomic<std::uint64_t> first_step_tick{0};
  std::atomic<std::uint64_t> last_step_tick{0};  // the latest mark's (0: none yet)
  // The variants' labels (observer::note_variant), at most kMaxVariantLabels.
  mutable std::mutex labels_mutex;
  std::unordered_map<std::uint64_t, std::string> variant_labels;

  std::mutex registry_mutex;
  std::map<std::string, int, std::less<>> ids;
  // max_regions, the two calibration regions, and the one that counts the names past max_regions.
  std::unique_ptr<std::unique_ptr<session::RegionRecord>[]> records;
  std::size_t record_capacity = 0;
  std::atomic<int> record_count{0};
  int first_user_id = 0;
  std::atomic<int> other_names{-1};  // the region of the names past max_regions, once there is one
  session::SampleArena arena;        // the regions' samples past their first kInlineSamples
  mutable std::mutex hints_mutex;    // hints may be added from the measured path of any thread

  std::unique_ptr<session::ThreadSlot[]> slots;
  // The threads' call-path indexes, one block of fresh anonymous pages (read as zero, no memory
  // until a thread uses its part): a session that keeps thousands of paths per thread costs
  // only what its threads touch.
  session::ZeroPages path_index_pages;

  session::RegionRecord* record(int id) const noexcept {
    if (id < 0 || id >= record_count.load(std::memory_order_acquire)) return nullptr;
    return records[static_cast<std::size_t>(id)].get();
  }

  // The measured path (session.cpp).
  std::uint64_t now() noexcept { return tsc ? session::read_tsc() : clock(); }
  const char* clock_name() const noexcept { return options.clock != nullptr ? "injected" : tsc ? "tsc" : "CLOCK_MONOTONIC"; }
  session::ThreadSlot* slot_for_this_thread(bool claim = true) noexcept;
  int path_for(session::ThreadSlot& t, int parent, int region, std::size_t depth) noexcept;
  void retire(session::ThreadSlot& t);
  void after_fork(pid_t forking_tid,
                  pid_t parent) noexcept;  // in the child (session.cpp)  // the thread ended: keep what it measured, free the slot (lock held)
  int region_of(RegionSite& site) noexcept;
  int region_named(std::string_view name) noexcept;  // a transient name: registered on first use
  int register_region(std::string_view name);
  void read_counters(CounterSnapshot& out) noexcept;
  void begin(int id, std::uint64_t reuse_gap_ticks = 0, bool counted = true, bool continues = false) noexcept;
  double end(int id, const CallDetail* detail = nullptr) noexcept;  // the inclusive ns; < 0: not timed
  void account_counters(session::ThreadSlot& t, session::RegionRecord& r, std::size_t depth, std::uint32_t child_reads,
                        session::Frame* counted_parent, bool continues) noexcept;
  bool add_call_work(session::RegionRecord& r, const CallDetail& detail, bool continues) noexcept;
  void add_call_work(session::RegionRecord& r, const CallDetail& detail) noexcept;
  void note_after_steps(session::RegionRecord& r, session::ThreadSlot& t, std::uint64_t index, double total_before, double inclusive,
                        std::uint64_t start, bool outermost) noexcept;

  // Setup (session_open.cpp).
  int add_record(std::string name, bool hidden, std::size_t capacity);
  int names_past_limit(std::string_view first);  // the aggregate region (registry lock held)
  void allocate_slots();
  void measure_overhead(std::size_t pairs);  // begin/end pairs, in blocks of 10
  double measure_time_only_pair(session::RegionRecord& c, session::RegionRecord& p, std::size_t blocks);
  void hint(const std::string& text);
  // A hint from the measured path: said once per flag, never throws.
  void hint_once(std::atomic<bool>& told, const char* what, std::string_view name) noexcept;

  // Reports (session_report.cpp).
  // `count_open`: count the calls of the region still open on some thread (snapshot() counts
  // them all at once instead).
  RegionReport report(int id, bool count_open = true) const;
  std::vector<RegionVariant> variants_of(const session::VariantTable& table) const;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> timeline_kept(SessionSnapshot& out) const;
  SessionSnapshot snapshot() const;
  std::vector<std::string> hints_now() const;  // the hints so far, and the fork's
  std::vector<RegionMetric> metrics(const RegionReport& region) const;
};

}  // namespace hwprof
