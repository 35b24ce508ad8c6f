// The PAPI backend (PAPI 7, Debian libpapi-dev).
//
// Every thread. PAPI's perf_event component attaches an event set to any thread id
// (PAPI_attach → perf_event_open(pid = tid): perf_event.c, _pe_ctl case PAPI_ATTACH, and
// open_pe_events) and sets `inherit` on it (PAPI_set_opt(PAPI_INHERIT) → attr.inherit, _pe_ctl
// case PAPI_INHERIT), so the threads that thread starts later count in the same counters. It
// has no process-wide mode (_pe_ctl case PAPI_GRANUL answers PAPI_ECMP for PAPI_GRN_PROC and
// PAPI_GRN_PROCG). So a set here is one event set per thread that exists when it opens —
// attached, inheriting, summed at read — exactly as the perf backend does with raw fds.
//
// Three details of PAPI 7.0's source decide the shape of this file:
// - PAPI_start reopens an event set's counters whenever another set was last used on the same
//   thread (papi.c, PAPI_start → _papi_hwi_get_context's is_dirty → update_control_state),
//   and a reopened counter no longer covers the threads started since the previous open; and
//   PAPI_start resets counts with PERF_EVENT_IOC_RESET, which leaves the counts of exited
//   inherited threads in place. So each event set is started once, when the set opens, and
//   runs until it is destroyed; start() and stop() only take offsets (the perf backend's
//   enable/disable, done in arithmetic).
// - With `inherit` PAPI reads every event with its own read(2) (no PERF_FORMAT_GROUP, no
//   rdpmc: _pe_read → _pe_read_nogroup), so one read costs threads × events system calls.
// - PAPI scales multiplexed counts itself (_pe_read_multiplexed: count × enabled / running)
//   and does not expose the running time. Our interface scales by time_enabled/time_running,
//   so we report both as the wall-clock time the set was started: readings_between then says
//   `ok` with the value PAPI scaled, and the event's reason says it was multiplexed and that
//   the fraction it ran is unknown. (PAPI returns the raw count, possibly 0, for a counter that
//   never ran: we cannot tell that case apart; and as PAPI's scale factor moves, a scaled
//   total can shrink between two reads, which readings_between reports as not_counted. Both
//   are reasons to prefer the perf backend when counters must be multiplexed.)
//
// A value that misses threads is wrong, so when PAPI cannot attach to every thread the set
// still counts what it can, but its events say not_counted (or no_permission) with the reason.
#include "counters/papi_backend.hpp"

#include <string>
#include <vector>

#include "counters/event_resolver.hpp"

#if defined(HWPROF_HAVE_PAPI)
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <pthread.h>

#include <papi.h>

#include "common/stages.hpp"
#include "counters/counter_math.hpp"
#include "counters/papi_calls.hpp"
#include "counters/perf_event_backend.hpp"
#endif

namespace hwprof::counters {
namespace {

// A set none of whose events can be counted: each says why, and every read is unavailable.
class UnavailableSet final : public CounterSet {
 public:
  UnavailableSet(const CounterOptions& options, CounterStatus status, const std::string& reason) {
    for (const std::string& name : options.events) events_.push_back({name, "", status, reason, papi_event_kind(name)});
  }

  BackendKind backend() const noexcept override { return BackendKind::papi; }
  void start() noexcept override {}
  void stop() noexcept override {}
  void read(CounterSnapshot& out) noexcept override {
    out.value.fill(0);
    out.time_enabled.fill(0);
    out.time_running.fill(0);
    out.valid.fill(false);
  }
};

#if defined(HWPROF_HAVE_PAPI)

unsigned long pthread_id() {
  return static_cast<unsigned long>(::pthread_self());
}

// Every PAPI call goes through `papi` (src/counters/papi_calls.hpp), which tests replace.
std::string papi_error(const PapiCalls& papi, int code) {
  const char* text = papi.strerror(code);
  return std::string(text != nullptr ? text : "unknown PAPI error") + " (" + std::to_string(code) + ")";
}

constexpr const char* kNoPmu =
    "this machine exposes no hardware PMU (a virtual machine without PMU passthrough?); only software events such "
    "as perf::TASK-CLOCK and perf::PAGE-FAULTS can be counted here";

// PAPI_library_init is not safe to call from two threads at once (papi.c guards it with a
// counter and sleep(1)), and PAPI_thread_init must come before any thread uses PAPI.
// Once per table of calls (papi_seam()).
const PapiLibrary& papi_library() {
  PapiSeam& seam = papi_seam();
  std::call_once(seam.init_once, [&seam] {
    const PapiCalls& papi = seam.calls;
    PapiLibrary& library = seam.library;
    const int version = papi.library_init(PAPI_VER_CURRENT);
    if (version != PAPI_VER_CURRENT) {
      library.why = version < 0 ? "PAPI could not initialise: PAPI_library_init failed: " + papi_error(papi, version)
                                : "the installed libpapi is not the version hwprof was built against; rebuild hwprof";
      return;
    }
    // pthread_self, not the kernel tid: the event sets we attach to a thread then get a
    // ThreadInfo of their own (keyed by the kernel tid) instead of sharing the calling
    // thread's with the user's own PAPI event sets. A program that registered its own id
    // function first keeps it (PAPI_EINVAL here), and PAPI still works.
    (void)papi.thread_init(&pthread_id);
    library.multiplex_error = papi.multiplex_init();
    library.version = papi.get_opt(PAPI_LIB_VERSION, nullptr);
    library.ready = true;
  });
  return seam.library;
}

// Why PAPI's CPU counters (the perf_event component) cannot count here, or "".
std::string perf_component_problem(const PapiCalls& papi) {
  const int cidx = papi.get_component_index("perf_event");
  if (cidx < 0) return "this PAPI has no perf_event component";
  const PAPI_component_info_t* info = papi.get_component_info(cidx);
  if (info == nullptr || info->disabled == PAPI_OK) return "";
  std::string why = "PAPI's perf_event component is disabled here (\"" + std::string(info->disabled_reason) + "\")";
  if (!papi.hardware_pmu_exposed()) {
    why +=
        ": this machine exposes no hardware PMU (a virtual machine without PMU passthrough?), and PAPI 7.0 then "
        "turns the whole component off, software events such as perf::TASK-CLOCK included; count them with the "
        "perf backend (--backend perf)";
  }
  return why;
}

CounterStatus status_from_papi(int code) noexcept {
  switch (code) {
    case PAPI_EPERM:
      return CounterStatus::no_permission;
    case PAPI_ENOEVNT:
    case PAPI_ENOSUPP:
    case PAPI_ECMP:
    case PAPI_ENOCMP:
    case PAPI_EINVAL:
      return CounterStatus::unsupported;
    default:
      return CounterStatus::not_counted;
  }
}

// How to fix a PAPI failure, or "".
std::string hint_for(const PapiCalls& papi, int code) {
  switch (code) {
    case PAPI_EPERM:
      return reason_from_errno(EACCES, true, false);
    case PAPI_ENOEVNT:
      return papi.hardware_pmu_exposed() ? "the kernel has no such event on this CPU" : kNoPmu;
    case PAPI_ECNFLCT:
    case PAPI_ECOUNT:
      return "the PMU has no free counter for it (another profiler or the NMI watchdog may hold some)";
    case PAPI_ESYS:
      return "the kernel refused the counter (PAPI_ESYS stands for EBUSY, EAGAIN, ESRCH and others; another profiler may hold the PMU)";
    default:
      return "";
  }
}

std::string with_hint(const PapiCalls& papi, const std::string& what, int code) {
  const std::string hint = hint_for(papi, code);
  return hint.empty() ? what : what + "; " + hint;
}

// PAPI leaves the units of libpfm4's perf::TASK-CLOCK and perf::CPU-CLOCK empty; they count ns.
std::string unit_of(const std::string& name, const PAPI_event_info_t& info) {
  if (info.units[0] != '\0') return info.units;
  for (const char* clock : {"TASK-CLOCK", "CPU-CLOCK", "TASK_CLOCK", "CPU_CLOCK"}) {
    if (name.find(clock) != std::string::npos) return "ns";
  }
  return "count";
}

void destroy_eventset(const PapiCalls& papi, int& eventset) noexcept {
  if (eventset == PAPI_NULL) return;
  (void)papi.stop(eventset, nullptr);  // PAPI_ENOTRUN when it never started
  (void)papi.cleanup_eventset(eventset);
  (void)papi.destroy_eventset(&eventset);
  eventset = PAPI_NULL;
}

struct Failure {
  int code = PAPI_OK;
  const char* call = "";
  bool failed() const noexcept { return code != PAPI_OK; }
};

struct EventsetPlan {
  int component = -1;
  std::vector<int> codes;
  bool multiplex = false;
};

// An event set of `plan`'s events: attached to thread `tid` and inherited by the threads it
// starts, or, with tid 0, on the calling thread alone. Started when `start`.
Failure open_eventset(const PapiCalls& papi, const EventsetPlan& plan, pid_t tid, bool start, int* out) {
  int eventset = PAPI_NULL;
  int r = papi.create_eventset(&eventset);
  if (r != PAPI_OK) return {r, "PAPI_create_eventset"};
  auto fail = [&papi, &eventset](int code, const char* call) {
    destroy_eventset(papi, eventset);
    return Failure{code, call};
  };
  if ((r = papi.assign_eventset_component(eventset, plan.component)) != PAPI_OK) {
    return fail(r, "PAPI_assign_eventset_component");
  }
  if (tid != 0) {
    if ((r = papi.attach(eventset, static_cast<unsigned long>(tid))) != PAPI_OK) return fail(r, "PAPI_attach");
    PAPI_option_t inherit;
    std::memset(&inherit, 0, sizeof inherit);
    inherit.inherit.eventset = eventset;
    inherit.inherit.inherit = PAPI_INHERIT_ALL;
    if ((r = papi.set_opt(PAPI_INHERIT, &inherit)) != PAPI_OK) return fail(r, "PAPI_set_opt(PAPI_INHERIT)");
  }
  if (plan.multiplex && (r = papi.set_multiplex(eventset)) != PAPI_OK) return fail(r, "PAPI_set_multiplex");
  for (int code : plan.codes) {
    if ((r = papi.add_event(eventset, code)) != PAPI_OK) return fail(r, "PAPI_add_event");
  }
  if (start && (r = papi.start(eventset)) != PAPI_OK) return fail(r, "PAPI_start");
  *out = eventset;
  return {};
}

std::string task_dir(pid_t pid) {
  return pid == 0 ? std::string("/proc/self/task") : "/proc/" + std::to_string(pid) + "/task";
}

class PapiSet final : public CounterSet {
 public:
  PapiSet(const CounterOptions& options, const PapiCalls& papi) : options_(options), papi_(papi) {}
  ~PapiSet() override { close_eventsets(); }

  BackendKind backend() const noexcept override { return BackendKind::papi; }

  void open() {
    probe_events();
    if (plan_.codes.empty()) return;
    choose_multiplexing();
    if (plan_.codes.empty()) return;
    open_on_every_thread();
    scratch_.assign(plan_.codes.size(), 0);
    now_.assign(plan_.codes.size(), 0);
    base_.assign(plan_.codes.size(), 0);
    offset_.assign(plan_.codes.size(), 0);
  }

  // The event sets run from open to destruction (see the top of this file); start and stop
  // take offsets. A failed read at start or stop loses the running total for good, so the
  // set then reads as unavailable rather than short.
  void start() noexcept override {
    if (running_) return;
    if (!sum_now(offset_.data())) broken_ = true;
    start_ns_ = papi_.monotonic_ns();
    running_ = true;
  }

  void stop() noexcept override {
    if (!running_) return;
    if (broken_ || !sum_now(now_.data()) || !close_interval(offset_.data(), now_.data(), base_.size(), base_.data())) broken_ = true;
    enabled_ns_ += papi_.monotonic_ns() - start_ns_;
    running_ = false;
  }

  void read(CounterSnapshot& out) noexcept override {
    const std::size_t n = events_.size() < kMaxCounterEvents ? events_.size() : kMaxCounterEvents;
    const bool ok = !broken_ && !eventsets_.empty() && (!running_ || sum_now(now_.data()));
    const std::uint64_t enabled = enabled_ns_ + (running_ ? papi_.monotonic_ns() - start_ns_ : 0);
    for (std::size_t e = 0; e < n; ++e) {
      const int column = column_[e];
      std::uint64_t value = 0;
      if (ok && column >= 0) {
        const auto k = static_cast<std::size_t>(column);
        out.valid[e] = count_so_far(base_[k], offset_[k], now_[k], running_, &value);
      } else {
        out.valid[e] = false;
      }
      out.value[e] = out.valid[e] ? value : 0;
      out.time_enabled[e] = out.valid[e] ? enabled : 0;
      out.time_running[e] = out.time_enabled[e];
    }
  }

 private:
  // Each name: known to PAPI, available here, and accepted by the kernel on the calling
  // thread alone. The usable ones become the plan's events (a name given twice is counted
  // once and reported twice).
  void probe_events() {
    const std::string component_problem = perf_component_problem(papi_);
    const std::string problem_suffix = component_problem.empty() ? "" : "; " + component_problem;
    for (std::size_t i = 0; i < options_.events.size(); ++i) {
      const std::string& name = options_.events[i];
      EventInfo info{name, "count", CounterStatus::unsupported, "", papi_event_kind(name)};
      column_.push_back(-1);
      if (i >= kMaxCounterEvents) {
        info.reason = "more than " + std::to_string(kMaxCounterEvents) + " events in one set; split them into several sets";
        events_.push_back(std::move(info));
        continue;
      }
      int code = PAPI_NULL;
      int r = papi_.event_name_to_code(name.c_str(), &code);
      if (r != PAPI_OK) {
        info.reason = "PAPI does not know the event '" + name + "' (" + papi_error(papi_, r) +
                      "); `papi_avail` lists the presets and `papi_native_avail` the native names" + problem_suffix;
        events_.push_back(std::move(info));
        continue;
      }
      if ((r = papi_.query_event(code)) != PAPI_OK) {
        info.reason = (IS_PRESET(code) ? "PAPI's preset " + name + " maps to no event of this machine" : "PAPI cannot count '" + name + "' here") +
                      " (PAPI_query_event: " + papi_error(papi_, r) + ")" +
                      (component_problem.empty() ? (papi_.hardware_pmu_exposed() ? "" : std::string("; ") + kNoPmu) : problem_suffix);
        events_.push_back(std::move(info));
        continue;
      }
      PAPI_event_info_t details;
      std::memset(&details, 0, sizeof details);
      if (papi_.get_event_info(code, &details) == PAPI_OK) info.unit = unit_of(name, details);
      const int cidx = papi_.get_event_component(code);
      const PAPI_component_info_t* component = papi_.get_component_info(cidx);
      const std::string component_name = component != nullptr ? component->name : "?";
      if (component == nullptr || !component->attach || !component->inherit) {
        info.reason = "PAPI's " + component_name +
                      " component cannot attach to a thread and pass its counters on to "
                      "new threads, so it cannot count every thread of the process";
        events_.push_back(std::move(info));
        continue;
      }
      if (plan_.component >= 0 && cidx != plan_.component) {
        const PAPI_component_info_t* first = papi_.get_component_info(plan_.component);
        info.reason = "a PAPI set counts the events of one component, here " + std::string(first ? first->name : "?") + "; '" + name + "' is in " +
                      component_name + ": count it in a set of its own";
        events_.push_back(std::move(info));
        continue;
      }
      const auto known = std::find(plan_.codes.begin(), plan_.codes.end(), code);
      if (known == plan_.codes.end()) {
        int eventset = PAPI_NULL;
        const Failure f = open_eventset(papi_, {cidx, {code}, false}, 0, false, &eventset);
        if (f.failed()) {
          info.status = status_from_papi(f.code);
          info.reason = with_hint(papi_, "PAPI could not open '" + name + "' (" + f.call + ": " + papi_error(papi_, f.code) + ")", f.code);
          events_.push_back(std::move(info));
          continue;
        }
        destroy_eventset(papi_, eventset);
        plan_.component = cidx;
        plan_.codes.push_back(code);
      }
      const auto column = std::find(plan_.codes.begin(), plan_.codes.end(), code) - plan_.codes.begin();
      column_.back() = static_cast<int>(column);
      info.status = CounterStatus::ok;
      events_.push_back(std::move(info));
    }
  }

  // Events that each open alone but not all together need more counters than the PMU has:
  // PAPI then multiplexes them (kernel multiplexing, perf_event's kernel_multiplex).
  void choose_multiplexing() {
    if (plan_.codes.size() < 2) return;
    int eventset = PAPI_NULL;
    const Failure together = open_eventset(papi_, {plan_.component, plan_.codes, false}, 0, false, &eventset);
    destroy_eventset(papi_, eventset);
    if (!together.failed()) return;
    const PapiLibrary& library = papi_library();
    if (library.multiplex_error != PAPI_OK) {
      mark_counted(CounterStatus::not_counted, "these events do not fit on the PMU's counters at once (" + std::string(together.call) + ": " +
                                                   papi_error(papi_, together.code) + ") and PAPI cannot multiplex (PAPI_multiplex_init: " +
                                                   papi_error(papi_, library.multiplex_error) + "); count fewer events per set");
      abandon_plan();
      return;
    }
    plan_.multiplex = true;
    for (std::size_t e = 0; e < events_.size(); ++e) {
      if (column_[e] >= 0) {
        events_[e].reason =
            "multiplexed: the events of this set do not fit on the PMU's counters at once; PAPI scales "
            "the count by the time it ran but does not say what fraction of the time that was";
      }
    }
  }

  // One event set per thread, until the thread list stays the same while they open: a
  // thread that appears meanwhile may or may not have inherited its creator's counters, and
  // attaching to it as well could count it twice.
  void open_on_every_thread() {
    const pid_t pid = options_.pid;
    constexpr int kRounds = 8;
    bool stable = false;
    std::size_t threads = 0;
    std::size_t missed = 0;
    pid_t missed_tid = 0;
    Failure first_failure;
    for (int round = 0; round < kRounds && !stable; ++round) {
      close_eventsets();
      missed = 0;
      first_failure = {};
      const std::vector<pid_t> before = papi_.task_ids(pid);
      threads = before.size();
      if (before.empty()) {
        mark_counted(CounterStatus::unsupported, "no such process: " + task_dir(pid) + " lists no thread");
        return;
      }
      for (pid_t tid : before) {
        int eventset = PAPI_NULL;
        const Failure f = open_eventset(papi_, plan_, tid, true, &eventset);
        if (!f.failed()) {
          eventsets_.push_back(eventset);
        } else if (papi_.task_alive(pid, tid)) {  // a thread that ended meanwhile has nothing to count
          if (missed++ == 0) {
            first_failure = f;
            missed_tid = tid;
          }
        }
      }
      const std::vector<pid_t> after = papi_.task_ids(pid);
      stable = std::all_of(after.begin(), after.end(), [&](pid_t tid) { return std::find(before.begin(), before.end(), tid) != before.end(); });
    }
    if (eventsets_.empty()) {
      count_calling_thread_only(first_failure);
      return;
    }
    if (missed > 0) {
      CounterStatus status = status_from_papi(first_failure.code);
      if (status != CounterStatus::no_permission) status = CounterStatus::not_counted;
      mark_counted(status, with_hint(papi_,
                                     "PAPI could not count " + std::to_string(missed) + " of " + std::to_string(threads) + " threads (thread " +
                                         std::to_string(missed_tid) + ": " + first_failure.call + ": " + papi_error(papi_, first_failure.code) +
                                         "); a value that misses threads would be wrong, so it is not reported",
                                     first_failure.code));
    } else if (!stable) {
      mark_counted(CounterStatus::not_counted,
                   "threads kept starting while PAPI attached to them, so some may be missed or counted twice; open "
                   "the set once the program's thread pools are up");
    }
  }

  // PAPI could attach to no thread. On the calling thread alone the set still counts
  // something (for diagnosis), but every other thread would be missed: not reported.
  void count_calling_thread_only(const Failure& attach) {
    std::string why = "PAPI could not attach to the threads of " +
                      (options_.pid == 0 ? std::string("this process") : "process " + std::to_string(options_.pid)) + " (" + attach.call + ": " +
                      papi_error(papi_, attach.code) + ")";
    if (!papi_.hardware_pmu_exposed()) {
      why +=
          ": PAPI 7 checks that attaching and inheriting are allowed by opening the hardware instructions event "
          "(perf_event.c, check_permissions), which a machine without a PMU does not have";
    }
    CounterStatus status = status_from_papi(attach.code);
    if (status != CounterStatus::no_permission) status = CounterStatus::not_counted;
    if (options_.pid == 0) {
      int eventset = PAPI_NULL;
      if (!open_eventset(papi_, plan_, 0, true, &eventset).failed()) eventsets_.push_back(eventset);
      why += "; it counts only the calling thread, which would miss the others, so the value is not reported";
    }
    mark_counted(status, with_hint(papi_, why + "; the perf backend (--backend perf) counts every thread", attach.code));
  }

  void abandon_plan() {
    plan_.codes.clear();
    std::fill(column_.begin(), column_.end(), -1);
  }

  void mark_counted(CounterStatus status, const std::string& reason) {
    for (std::size_t e = 0; e < events_.size(); ++e) {
      if (column_[e] < 0) continue;
      events_[e].status = status;
      events_[e].reason = reason;
    }
  }

  // The sum over every thread's event set of each event's count now.
  bool sum_now(long long* sums) noexcept {
    std::fill(sums, sums + plan_.codes.size(), 0LL);
    for (int eventset : eventsets_) {
      if (papi_.read(eventset, scratch_.data()) != PAPI_OK || !add_thread_counts(scratch_.data(), plan_.codes.size(), sums)) return false;
    }
    return !eventsets_.empty();
  }

  void close_eventsets() noexcept {
    for (int& eventset : eventsets_) destroy_eventset(papi_, eventset);
    eventsets_.clear();
  }

  CounterOptions options_;
  const PapiCalls& papi_;
  EventsetPlan plan_;
  std::vector<int> column_;                               // per event: its index in plan_.codes, or -1 when not counted
  std::vector<int> eventsets_;                            // one per thread, each with plan_.codes in that order
  std::vector<long long> scratch_, now_, base_, offset_;  // per plan_.codes entry
  std::uint64_t start_ns_ = 0;
  std::uint64_t enabled_ns_ = 0;
  bool running_ = false;
  bool broken_ = false;
};

#endif  // HWPROF_HAVE_PAPI

}  // namespace

#if defined(HWPROF_HAVE_PAPI)

std::unique_ptr<CounterSet> open_papi(const CounterOptions& options) {
  const PapiLibrary& library = papi_library();
  if (!library.ready) return std::make_unique<UnavailableSet>(options, CounterStatus::unsupported, library.why);
  if (options.enable_on_exec) {
    return std::make_unique<UnavailableSet>(
        options, CounterStatus::unsupported,
        "PAPI cannot start counters at exec (it has no enable_on_exec option), so it would count the launcher too; "
        "`hwprof stat` needs the perf backend (--backend perf)");
  }
  auto set = std::make_unique<PapiSet>(options, papi_seam().calls);
  set->open();
  return set;
}

std::vector<PapiComponent> papi_components() {
  std::vector<PapiComponent> components;
  if (!papi_library().ready) return components;
  const PapiCalls& papi = papi_seam().calls;
  for (int i = 0; i < papi.num_components(); ++i) {
    const PAPI_component_info_t* info = papi.get_component_info(i);
    if (info == nullptr) continue;
    components.push_back({info->name, info->disabled == PAPI_OK, info->disabled == PAPI_OK ? "" : info->disabled_reason});
  }
  return components;
}

std::string papi_version(std::string* why) {
  const PapiLibrary& library = papi_library();
  if (!library.ready) {
    if (why != nullptr) *why = library.why;
    return "";
  }
  const int v = library.version;
  return std::to_string(PAPI_VERSION_MAJOR(v)) + "." + std::to_string(PAPI_VERSION_MINOR(v)) + "." + std::to_string(PAPI_VERSION_REVISION(v)) + "." +
         std::to_string(PAPI_VERSION_INCREMENT(v));
}

#else

constexpr const char* kBuiltWithoutPapi = "hwprof was built without PAPI (install libpapi-dev and rebuild)";

std::unique_ptr<CounterSet> open_papi(const CounterOptions& options) {
  return std::make_unique<UnavailableSet>(options, CounterStatus::unsupported, kBuiltWithoutPapi);
}

std::string papi_version(std::string* why) {
  if (why != nullptr) *why = kBuiltWithoutPapi;
  return "";
}

std::vector<PapiComponent> papi_components() {
  return {};
}

#endif

}  // namespace hwprof::counters
