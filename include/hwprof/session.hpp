// A profiling session: counters opened once, named regions entered and left from any thread,
// and per region the statistics of its samples (time, inclusive and exclusive of nested
// regions) with the counters summed over them. This is the library users call from their own
// training code:
//
//   auto session = hwprof::Session::open({}).value();         // perf counters, or timer only
//   const int fwd = session->region("forward");                // register names up front ...
//   for (...) {
//     session->begin(fwd);                                      // ... then begin/end by id,
//     { HWPROF_REGION(*session, "loss"); compute_loss(); }     // or a scoped region
//     session->end(fwd);
//   }
//   for (const hwprof::RegionReport& r : session->report()) ...
//
// Entering and leaving a region is noexcept and allocates nothing: every thread's stack of
// open regions, and every region's sample buffer, is allocated when the session opens or
// the region is registered.
//
// Threads. Regions measure wall time per thread: a region entered on thread A and another on
// thread B each see their own start and end. Counters opened for the whole process (the
// perf and PAPI backends attach to every thread, and to the threads those start) count every
// thread: a region around a 2-thread GEMM sees the CPU time of both threads, which is what a
// multi-threaded layer needs. The flip side: when regions on different threads overlap in
// time, each one's counter deltas include what the other threads did meanwhile — the deltas
// of overlapping regions overlap, and summing them double-counts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/compute_roof.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"
#include "hwprof/statistics.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct EventGroup;  // hwprof/event_group.hpp: a counters/ group file, parsed

// A monotonic clock in nanoseconds. Tests inject a fake one.
using SessionClock = std::uint64_t (*)() noexcept;

struct SessionOptions {
  BackendKind backend = BackendKind::automatic;
  // Event names for the backend (libpfm4 or kernel names for perf, PAPI names for papi,
  // "wall-time" / "process-cpu-time" / "thread-cpu-time" for timer). With neither events nor
  // a group, perf counts task-clock, cycles and instructions, and papi perf::TASK-CLOCK.
  std::vector<std::string> events;
  // An event group: a name (counters/<family>/<name>.txt for this CPU's family, then generic/
  // and software/) or a path to a group file. Its events come first, then `events`.
  std::string group;
  // Folders holding counters/<family>/ group files; empty: $HWPROF_COUNTERS_PATH (colon-separated).
  std::vector<std::string> counters_dirs;
  std::string family;  // the group family; empty: this CPU's (counter_family(detect_cpu(), counters_dirs))

  // Distinct region names. A name costs under a kilobyte; the names past this many are
  // counted together as one region, "[other names]", and a hint says so once.
  std::size_t max_regions = 16384;
  // Samples kept per region for its statistics (8 bytes each: inclusive and exclusive time).
  // A region holds its first 64 from its registration on, and claims room for the rest from
  // `sample_budget` when it needs it. Past this many calls, the kept samples are a uniform
  // random sample of every call (reservoir sampling); the calls, the time totals, minimum and
  // maximum and the counter sums count every call (RegionReport's dropped_samples says how many
  // samples were not kept). The measured path never calls the allocator.
  std::size_t samples_per_region = 4096;
  // Samples, across all regions, past each region's first 64: address space reserved at open
  // (8 bytes a sample), committed only as samples are written. A region that finds it used
  // up keeps a uniform sample of 64 of its calls.
  std::size_t sample_budget = std::size_t{1} << 21;
  // Threads that may enter regions (the thread that opens the session takes one while it
  // measures the overhead); the regions of further threads are counted as dropped.
  std::size_t max_threads = 256;
  std::size_t max_depth = 64;  // nesting depth per thread; deeper regions are counted as dropped
  // Distinct call paths (a region under a given chain of parents) kept per thread for the call
  // tree and the per-thread totals; calls on further paths still count in their region.
  std::size_t call_paths_per_thread = 256;
  // Region calls kept for the timeline (trace.json), the first ones of the session; 32 bytes
  // each, reserved at open and touched only when used.
  std::size_t timeline_events = 100000;
  // Of those, the latest calls kept in a ring rather than the first ones (0: the first calls
  // only): reported from the first step that starts inside it (the observer's mark_step), and the first
  // calls up to the last step that ends inside them, so that the timeline holds whole steps, the
  // first and the last.
  std::size_t timeline_tail = 0;
  // Empty begin/end pairs timed at open to measure the session's own overhead (0: none, and
  // nothing is subtracted).
  std::size_t overhead_pairs = 2000;

  SessionClock clock = nullptr;  // nullptr: the TSC where the kernel keeps time with it, else CLOCK_MONOTONIC
  // Where hints go (a counter that did not open, a fallback to time only). Default: stderr,
  // once per process. Every hint is also kept in Session::hints().
  std::function<void(const std::string&)> on_hint;
};

// The start of the hint that lists the events which cannot be counted here (each also in
// events() with its status and reason, which reports group by reason instead).
inline constexpr std::string_view kUnavailableEventsHint = "these events cannot be counted here and are reported unavailable: ";

// The region that counts together the calls of every name past SessionOptions::max_regions.
inline constexpr std::string_view kOtherNamesRegion = "[other names]";

// What the session's own begin/end costs, measured when it opened (medians), and subtracted.
struct SessionOverhead {
  // Inside one sample: from the start timestamp taken by begin() to the end timestamp taken
  // by end() of an empty region. Subtracted from every sample.
  double sample_ns = 0.0;
  // A whole begin()+end() pair, as a region around it sees it. Subtracted from a region once
  // per nested child, and the yardstick for below_resolution (100 × this).
  double pair_ns = 0.0;
  // The same pair entered time only (no counter read, as an observer enters nested ops) in a session that reads
  // counters: nothing is subtracted for it; the yardstick for such calls. pair_ns without reads.
  double time_only_pair_ns = 0.0;
  // The same for every counter, in the counter's unit (events() order); 0 where unavailable.
  std::vector<double> sample_counts;
  std::vector<double> pair_counts;
};

// What a region stands for, where an observer that made it says (hwprof::torch: docs/torch.md,
// "Rows"); a program's own regions are scopes. A profile shows each role as its own kind of
// row: a module's forward or backward, an op's, the optimizer's step.
enum class RegionRole : std::uint8_t {
  scope,             // the program's own region (HWPROF_SCOPE, hwprof_begin, a user scope)
  module_forward,    // a model's module, called forward (named by its path)
  module_backward,   // the backward functions of the ops a module ran forward
  op_forward,        // an op (aten::conv2d), forward
  op_backward,       // an op run by autograd's backward, or the backward of a forward op
  optimizer,         // the optimizer's step and zero_grad
  module_recompute,  // a module's forward run again during backward (activation checkpointing)
  op_recompute,      // an op of such a recomputed forward
  setup,             // what the program ran before its first module call (construction, initialisation)
};

// One variant of a region: the calls of one kind inside it (an op's calls on one set of input
// shapes), as an observer that knows them says. The last one of a
// region may be `other`: the calls of every variant the session did not keep apart.
struct RegionVariant {
  std::string label;        // "16x64x256, 1000x256, 1000"
  std::uint64_t calls = 0;  // calls (a call made of several pieces counts once)
  double total_ns = 0.0;    // their inclusive time
  double flops = 0.0;       // their work, summed (0 where none was given)
  double bytes = 0.0;
  bool other = false;  // the variants not kept apart, together
};

// One event summed over a region's samples.
struct CounterTotal {
  std::string name;
  std::string unit;
  // ok: every counted sample ran the whole time; multiplexed: some were scaled (the lowest
  // running fraction is given); unsupported / no_permission: the event never opened (reason);
  // not_counted: it opened but no sample of this region read a value.
  CounterStatus status = CounterStatus::not_counted;
  std::string reason;
  double inclusive = 0.0;     // sum over the samples that read a value, overhead subtracted (≥ 0)
  double exclusive = 0.0;     // the same minus the nested regions' inclusive counts (≥ 0)
  std::uint64_t samples = 0;  // samples that read a value (≤ calls)
  double min_running_fraction = 0.0;
  // Less is left per call, once the session's own cost is subtracted, than an empty region
  // counts (SessionOverhead::sample_counts): the value is under the counter's resolution and
  // reads as an upper bound (never below 0). A counter read costs microseconds of task-clock,
  // and more where the kernel must interrupt another CPU that runs a counted thread.
  bool below_resolution = false;
  EventKind kind = EventKind::other;  // what it measures (EventInfo::kind)
  bool has_value() const noexcept { return samples > 0; }
  double per_call() const noexcept { return samples > 0 ? inclusive / static_cast<double>(samples) : 0.0; }
};

// A metric of the session's event group, per call of the region ("time" in its formula is the
// mean inclusive time per call).
struct RegionMetric {
  std::string name;
  std::string unit;
  std::optional<double> value;
  std::string reason;                  // when there is no value
  bool below_resolution = false;       // computed from a counter below resolution
  MetricRole role = MetricRole::none;  // the group's role for it: what the roofline reads
};

struct RegionReport {
  int id = -1;
  std::string name;
  std::uint64_t calls = 0;            // completed begin/end pairs
  std::uint64_t dropped_samples = 0;  // calls whose times are not among the kept samples
  std::uint64_t unmatched = 0;        // end() without its begin(), or left open when an outer region ended
  // Statistics of the kept samples, overhead subtracted; where samples were dropped, the mean,
  // minimum and maximum are those of every call (the median and percentiles the sample's).
  Summary inclusive_ns;
  // The kept samples themselves: in call order while every call is kept, else a uniform
  // random sample of the calls, in no particular order.
  std::vector<double> inclusive_samples_ns;
  Summary exclusive_ns;             // minus the nested regions' inclusive time
  double total_inclusive_ns = 0.0;  // over every call, kept or not
  double total_exclusive_ns = 0.0;
  // The median is shorter than 100 × the session's begin/end cost: its figures are mostly
  // the measurement itself.
  bool below_resolution = false;
  // That cost per call of this region (ns): a counted pair's, a time-only pair's, or their mean
  // over its calls where it had both.
  double own_cost_ns = 0.0;
  std::vector<CounterTotal> counters;  // events() order
  std::vector<RegionMetric> metrics;   // the group's metrics, per call
  // The user's own analytic work per call (set_work), or absent.
  std::optional<double> work_flops;
  std::optional<double> work_bytes;
  // Calls entered and not left when the report was made: still open on a running thread, or
  // left open by a thread that ended (not in `calls`, nor in the times).
  std::uint64_t open = 0;
  RegionRole role = RegionRole::scope;  // as its observer said (a scope by default)
  // Why the region has no work of its own where it has none (as its observer said), or empty.
  std::string work_note;
  // What bounds its work's arithmetic (from its op's definition, where an observer made it): the GEMM ceiling for a
  // convolution or a matrix product, a transcendental function's rate for an activation, the
  // FMA peak by default.
  ComputeRoof roof;
  // The threads its work ran on, the fewest and the most its calls said (an observer's:
  // PyTorch's intra-op threads at the call); 0: not said.
  int threads_min = 0;
  int threads_max = 0;
  // The parameters it holds (the observer's set_params: a module's), or -1 where none were said.
  std::int64_t params = -1;
  // Its calls by variant (the observer's note_variant), most time first, `other` last; empty where
  // none was said.
  std::vector<RegionVariant> variants;
  // Pieces that continued a call instead of making one (the observer's enter_continuing): their time
  // and counts are in the calls they continued.
  std::uint64_t continued = 0;
  // Of its calls, those that began after the program's last step ended (the observer's mark_step; 0
  // without steps), and their inclusive time: not part of any step.
  std::uint64_t after_steps_calls = 0;
  double after_steps_ns = 0.0;
};

// ---- a whole session at one moment (Session::snapshot): what the reports are made from ----

// One call path of one thread, or of the merged tree: `region` entered under `parent` (an
// index into the same list; -1 for a root).
struct CallPath {
  int parent = -1;
  int region = -1;
  int depth = 0;
  std::uint64_t calls = 0;
  double inclusive_ns = 0.0;
  double exclusive_ns = 0.0;
  // The work its calls gave as they left (an observer's, as each call left), summed: a region
  // whose calls differ (an op on many shapes) has the work of each path exactly.
  double flops = 0.0;
  double bytes = 0.0;
};

// One region's totals on one thread (from its call paths).
struct ThreadRegionTotal {
  int region = -1;
  std::uint64_t calls = 0;
  double inclusive_ns = 0.0;  // a region nested in itself counts once
  double exclusive_ns = 0.0;
};

struct SessionThread {
  int number = 0;      // 1, 2, ... in the order the threads entered their first region
  long tid = 0;        // the kernel's thread id
  std::string name;    // its comm (pthread_setname_np), when it could be read
  bool ended = false;  // the thread ended before the snapshot
  std::vector<CallPath> paths;
  std::uint64_t paths_dropped = 0;  // calls on paths past call_paths_per_thread
  std::vector<ThreadRegionTotal> regions;
};

// A region entered and not left when the snapshot was taken.
struct OpenRegion {
  int thread = 0;  // SessionThread::number
  int region = -1;
  double open_ns = 0.0;  // since it was entered (until its thread ended, for an ended thread)
  bool thread_ended = false;
};

struct TimelineEvent {
  int thread = 0;
  int region = -1;
  int depth = 0;
  double start_ns = 0.0;  // since the session opened
  double duration_ns = 0.0;
};

struct SessionSnapshot {
  // What fed the session besides the program's own regions: "torch" (hwprof::torch's op
  // observer), or empty.
  std::string observer;
  std::string backend;       // "perf", "papi" or "timer"
  std::string clock_source;  // Session::clock_source()
  std::vector<EventInfo> events;
  std::string group;  // the event group's name, if any
  SessionOverhead overhead;
  std::vector<std::string> hints;
  double elapsed_ns = 0.0;  // from the session's opening to the snapshot
  // When the session opened on CLOCK_MONOTONIC: a timeline event's start_ns after it is a
  // monotonic time, the time base of perf_event samples (docs/sampling.md, "Attribution").
  std::uint64_t opened_monotonic_ns = 0;
  std::vector<RegionReport> regions;  // merged over the threads, in id order
  std::vector<SessionThread> threads;
  std::vector<CallPath> call_tree;  // merged over the threads
  std::vector<TimelineEvent> timeline;
  std::uint64_t timeline_dropped = 0;  // calls after the timeline was full (or between its first and last steps)
  // With SessionOptions::timeline_tail: the whole steps the timeline holds, the first ones
  // (steps 1 to timeline_first_steps) and the last ones (timeline_last_from to `steps`; 0: none).
  std::uint64_t timeline_first_steps = 0;
  std::uint64_t timeline_last_from = 0;
  bool timeline_cut = false;  // calls between them were left out
  std::vector<OpenRegion> open_regions;
  std::uint64_t dropped_threads = 0;
  std::uint64_t dropped_depth = 0;
  // The program's steps (the observer's mark_step: a training step's end), counted, and when the
  // first kMaxStepMarks of them ended (ns since the session opened).
  std::uint64_t steps = 0;
  std::vector<double> step_ends_ns;
  double first_step_start_ns = -1.0;  // where the first step began (the observer's mark_step_start), < 0: not said
  // The time of the outermost calls that began after the last step ended, over the threads.
  double after_steps_root_ns = 0.0;
};

// The step ends a session keeps the times of (8 bytes each, reserved when it opens).
inline constexpr std::size_t kMaxStepMarks = 65536;

class Session;

// The static record of one HWPROF_REGION call site: its name lives here (nullptr when the
// site's name is not a literal), so entering the
// region does no string work (after Tracy's SourceLocationData). `binding` caches the site's
// region id in the last session that used it.
struct RegionSite {
  const char* name;
  const char* file;
  int line;
  std::atomic<std::uint64_t> binding{0};  // (session serial << 32) | (id + 1); 0: none
  constexpr RegionSite(const char* site_name, const char* site_file, int site_line) noexcept : name(site_name), file(site_file), line(site_line) {}
};

class Session {
 public:
  // Opens the counters and measures the session's own overhead. Errors: an unknown group or
  // group file, an event name the backend does not know (perf, timer). Events that exist but
  // cannot be counted here are not errors: they are in events() with their status and reason.
  static Result<std::unique_ptr<Session>> open(const SessionOptions& options);
  // The same on a counter set the caller opened (its events are the session's events); tests
  // pass a fake set here. `options.backend`, `events` and `group` are then not used.
  static Result<std::unique_ptr<Session>> open(const SessionOptions& options, std::unique_ptr<CounterSet> counters);

  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;

  // The id of the region called `name`, registering it the first time (the same name always
  // gives the same id); past max_regions names, the id of "[other names]", which counts them
  // together. -1 only when even that cannot be made (out of memory). Allocates: call it up front.
  int region(std::string_view name);
  // The site's id in this session, registering the site's name on first use.
  int region(RegionSite& site) noexcept;

  // Measured path: noexcept, allocation-free, any thread. Regions nest; an end() must name
  // the innermost open region of its thread (an outer one closes the inner ones, which are
  // counted as unmatched). Unknown ids are ignored.
  void begin(int id) noexcept;
  void end(int id) noexcept;
  // begin(id) for a region that starts where the thread's last end() left off (the next layer
  // of a framework hook): when that end() was this thread's last call and returned at most
  // `max_gap_ns` ago, its counter reading serves as this region's start too, and one read
  // (which can cost tens of microseconds with inherited counters on other CPUs) is saved.
  // The counts of the gap between the two calls then go to this region; its time does not.
  // Otherwise it is begin(id).
  void begin_after_end(int id, std::uint64_t max_gap_ns) noexcept;

  // The user's own analytic work of one call of the region (e.g. the layer's FLOPs and bytes).
  void set_work(int id, double flops, double bytes) noexcept;

  // Forgets every sample and sum (after a warm-up), keeping the regions. Call it when no
  // thread is inside a region of this session.
  void reset() noexcept;

  // Measures the session's own cost again, over `pairs` begin/end pairs (rounded up to
  // blocks of 10), as things are now. With inherited counters a read costs more while other
  // counted threads run — an OpenMP team still spinning after a parallel loop — so a caller
  // whose regions sit between such loops measures right after one (hwprof profile does it
  // after the warm-up). Call it when no thread is inside a region of this session.
  void measure_overhead(std::size_t pairs);

  // Every registered region, in id order. Call it when no thread is inside a region.
  std::vector<RegionReport> report() const;
  RegionReport report(int id) const;
  // Everything at once: the regions, per thread and per call path, the timeline, the regions
  // still open. Other threads may still run; what they do meanwhile may or may not be in it.
  SessionSnapshot snapshot() const;

  // The measured path on a session's state, for scoped regions that must outlive the
  // Session object safely (a Session destroyed while regions are open keeps its state).
  struct State;
  static void enter(State* state, int id) noexcept;
  static void leave(State* state, int id) noexcept;
  static int site_region(State* state, RegionSite& site) noexcept;
  static int named_region(State* state, std::string_view name) noexcept;  // registers on first use
  static void set_work(State* state, int id, double flops, double bytes) noexcept;
  State* state() const noexcept { return state_.get(); }

  BackendKind backend() const noexcept;  // timer also when time only
  bool time_only() const noexcept;       // no counter is read
  // "tsc" (the time stamp counter, where the kernel's own clocksource is the TSC),
  // "CLOCK_MONOTONIC", or "injected" (SessionOptions::clock).
  std::string_view clock_source() const noexcept;
  const std::vector<EventInfo>& events() const noexcept;
  const EventGroup* group() const noexcept;  // the group given in the options, or nullptr
  const SessionOverhead& overhead() const noexcept;
  const std::vector<std::string>& hints() const noexcept;
  std::uint64_t dropped_threads() const noexcept;  // begin() calls from threads beyond max_threads
  std::uint64_t dropped_depth() const noexcept;    // begin() calls nested deeper than max_depth

 private:
  explicit Session(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  friend Session& default_session();
};

// A scoped region: entered at construction, left at destruction. Neither copyable nor movable,
// so it cannot outlive its scope (after Tracy's ScopedZone).
// It holds the session's state, not the Session: a Session destroyed while the region is
// open keeps its state, and the region's end then does nothing.
class Region {
 public:
  Region(Session& session, int id) noexcept : state_(session.state()), id_(id) { Session::enter(state_, id_); }
  Region(Session& session, RegionSite& site) noexcept : state_(session.state()), id_(Session::site_region(state_, site)) {
    Session::enter(state_, id_);
  }
  // A name known only at run time (a std::string): looked up by its text on every entry,
  // since one call site may name different regions (after Tracy's transient zones).
  Region(Session& session, std::string_view name) noexcept : state_(session.state()), id_(Session::named_region(state_, name)) {
    Session::enter(state_, id_);
  }
  // HWPROF_REGION's form: the site when its name is a literal (RegionSite::name set), else the text.
  template <class Name>
  Region(Session& session, RegionSite& site, const Name& name) noexcept : Region(session.state(), site, std::string_view(name)) {}
  // The same on a session's state; nullptr (regions disabled) costs a branch and does nothing.
  Region(Session::State* state, RegionSite& site, std::string_view name) noexcept
      : state_(state),
        id_(state == nullptr       ? -1
            : site.name != nullptr ? Session::site_region(state, site)
                                   : Session::named_region(state, name)) {
    if (state_ != nullptr) Session::enter(state_, id_);
  }
  ~Region() {
    if (state_ != nullptr) Session::leave(state_, id_);
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  Region(Region&&) = delete;
  Region& operator=(Region&&) = delete;

  // The region's work per call (its FLOPs and bytes, for the roofline).
  void set_work(double flops, double bytes) const noexcept {
    if (state_ != nullptr) Session::set_work(state_, id_, flops, bytes);
  }

 private:
  Session::State* state_;
  int id_;
};

namespace detail {
// Which names may be bound to a call site once: a string literal (a const char array). A
// pointer, a std::string or a mutable buffer may name another region on the next pass.
template <std::size_t N>
constexpr const char* static_name(const char (&name)[N]) noexcept {
  return name;
}
template <std::size_t N>
constexpr const char* static_name(char (&)[N]) noexcept {
  return nullptr;
}
constexpr const char* static_name(std::string_view) noexcept {
  return nullptr;
}
}  // namespace detail

}  // namespace hwprof

#define HWPROF_CONCAT_IMPL_(a, b) a##b
#define HWPROF_CONCAT_(a, b) HWPROF_CONCAT_IMPL_(a, b)

// A region from here to the end of the enclosing scope. Compiles to nothing when
// HWPROF_DISABLE_REGIONS is defined (after LIKWID's marker macros); `session` then stays
// named in an unevaluated sizeof, so that it is not reported as unused.
#if defined(HWPROF_DISABLE_REGIONS)
#define HWPROF_REGION(session, name) static_cast<void>(sizeof(session))
#else
// A string literal binds to its call site once; any other name (name.c_str(), a std::string)
// is looked up by its text each time.
#define HWPROF_REGION(session, name)                                                                                                  \
  static ::hwprof::RegionSite HWPROF_CONCAT_(hwprof_region_site_, __LINE__){::hwprof::detail::static_name(name), __FILE__, __LINE__}; \
  const ::hwprof::Region HWPROF_CONCAT_(hwprof_region_, __LINE__)((session), HWPROF_CONCAT_(hwprof_region_site_, __LINE__), name)
#endif
HWPROF_API_END
