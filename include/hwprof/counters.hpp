// Counters: open a set of events on this process (every thread of it) or on a child, read
// them without allocating, and say for every value whether it is real. A counter that could
// not be opened is reported with its status and the reason, never as 0 (docs/design.md,
// "Rules every part keeps").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

enum class CounterStatus {
  ok,             // counted the whole interval
  multiplexed,    // counted part of the interval; the value is scaled (running_fraction says how much)
  unsupported,    // this machine or kernel has no such event (e.g. a VM without a PMU)
  no_permission,  // the kernel refused (perf_event_paranoid, missing CAP_PERFMON)
  not_counted,    // opened, but never scheduled during the interval, or the read failed
};

std::string_view counter_status_name(CounterStatus status) noexcept;

// What an event measures, as the backend that opened it knows it: the kernel's type and config
// of a perf event, libpfm4's event of a PMU, PAPI's preset, the timer's clock. Every analysis
// reads this (docs/counters.md, "Event kinds"), never the event's name or unit.
enum class EventKind : std::uint8_t {
  other,             // anything else: branches, a cache level above the last, an unnamed raw event
  software,          // a kernel software event that counts occurrences: page faults, context switches
  task_clock,        // CPU time in ns: task-clock, cpu-clock, the timer backend's process and thread CPU clocks
  wall_time,         // elapsed time in ns: the timer backend's wall-time
  core_cycles,       // unhalted core cycles, at the core's own clock
  reference_cycles,  // unhalted reference cycles, at a constant rate (the TSC's)
  instructions,      // instructions retired
  fp,                // floating-point operations or instructions retired
  memory,            // last-level cache misses and references, memory-controller traffic
};
// "other", "software", "task-clock", "wall-time", "core-cycles", "reference-cycles",
// "instructions", "fp", "memory"; and back (false for another name).
std::string_view event_kind_name(EventKind kind) noexcept;
std::optional<EventKind> parse_event_kind(std::string_view name) noexcept;
// Counts that a machine's PMU makes (cycles, instructions, FP, memory, other), as against the
// kernel's software events and the clocks.
bool is_hardware_kind(EventKind kind) noexcept;

// A counter backend: what a session or a counter set is asked for, and what then runs.
enum class BackendKind {
  automatic,  // asked for only: perf_event, or time only when no event opens there (with one
              // hint saying why). What runs is never automatic; open_counters takes it as perf.
  perf,
  papi,
  timer,  // time only; or the timer backend's clocks when the events name them
};
std::string_view backend_name(BackendKind kind) noexcept;  // "auto", "perf", "papi", "timer"

// One event over one interval.
struct CounterReading {
  double value = 0.0;             // scaled to the whole interval when multiplexed
  std::uint64_t raw = 0;          // what the counter actually counted
  double running_fraction = 0.0;  // time running / time enabled; 1 when it ran throughout
  CounterStatus status = CounterStatus::not_counted;
  bool has_value() const noexcept { return status == CounterStatus::ok || status == CounterStatus::multiplexed; }
};

// What was asked for, and whether it could be opened.
struct EventInfo {
  std::string name;                          // as requested
  std::string unit;                          // "count", "ns", ...
  CounterStatus status = CounterStatus::ok;  // ok once opened; else unsupported / no_permission
  std::string reason;                        // when not opened: why, and how to fix it
  EventKind kind = EventKind::other;         // what it measures, as its backend resolved it
};

inline constexpr std::size_t kMaxCounterEvents = 64;

// A cumulative raw snapshot of every event. Fixed size: reading allocates nothing.
struct CounterSnapshot {
  std::array<std::uint64_t, kMaxCounterEvents> value{};
  std::array<std::uint64_t, kMaxCounterEvents> time_enabled{};
  std::array<std::uint64_t, kMaxCounterEvents> time_running{};
  std::array<bool, kMaxCounterEvents> valid{};  // the read of this event succeeded
};

// An opened set of events. Reads never throw and never allocate; a failed read marks the
// event invalid in the snapshot, and the reading between two snapshots says not_counted.
class CounterSet {
 public:
  virtual ~CounterSet() = default;
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  virtual BackendKind backend() const noexcept = 0;
  const std::vector<EventInfo>& events() const noexcept { return events_; }
  virtual void start() noexcept = 0;  // begin counting (sets are opened disabled)
  virtual void stop() noexcept = 0;
  virtual void read(CounterSnapshot& out) noexcept = 0;

 protected:
  CounterSet() = default;
  std::vector<EventInfo> events_;
};

// The readings of every event between two snapshots of `set`.
std::vector<CounterReading> readings_between(const CounterSet& set, const CounterSnapshot& before, const CounterSnapshot& after);
// The same without allocating: fills `out[0 .. set.events().size())`.
void readings_between(const CounterSet& set, const CounterSnapshot& before, const CounterSnapshot& after, CounterReading* out) noexcept;

struct CounterOptions {
  BackendKind backend = BackendKind::perf;
  std::vector<std::string> events;  // libpfm4 names, kernel generic names or PAPI names
  // 0: this process, every thread it has now and every thread it starts later. Otherwise
  // the process `pid` (e.g. a child forked for `hwprof stat`) with its future threads.
  pid_t pid = 0;
  bool enable_on_exec = false;  // for a child stopped before exec: count from exec on
  // Count the calling thread alone (no other thread, none it starts). Reads must come from
  // that thread; hardware events are then read in user space with rdpmc where the kernel
  // allows it (cap_user_rdpmc), without a system call.
  bool calling_thread_only = false;
};

// Never fails hard: every event that cannot be opened is in events() with its status and
// reason, and the set still reads (those events read as unavailable).
std::unique_ptr<CounterSet> open_counters(const CounterOptions& options);

// The events of a comma-separated list ("-e", HWPROF_EVENTS), each trimmed of spaces, empty
// ones dropped. A comma inside a raw event's terms (uncore_imc/event=0x04,umask=0x0f/) or
// braces ({a,b}) separates nothing.
std::vector<std::string> split_event_list(std::string_view list);

}  // namespace hwprof
HWPROF_API_END
