// The backend-independent half of counting: status names, readings between snapshots, and
// choosing the backend.
#include <optional>
#include <string_view>
#include <utility>

#include "counters/counter_math.hpp"
#include "counters/papi_backend.hpp"
#include "counters/perf_event_backend.hpp"
#include "counters/timer_backend.hpp"
#include "hwprof/counters.hpp"

namespace hwprof {

std::string_view counter_status_name(CounterStatus status) noexcept {
  switch (status) {
    case CounterStatus::ok:
      return "ok";
    case CounterStatus::multiplexed:
      return "multiplexed";
    case CounterStatus::unsupported:
      return "unsupported";
    case CounterStatus::no_permission:
      return "no-permission";
    case CounterStatus::not_counted:
      return "not-counted";
  }
  return "?";
}

namespace {

constexpr std::pair<EventKind, std::string_view> kEventKindNames[] = {
    {EventKind::other, "other"},
    {EventKind::software, "software"},
    {EventKind::task_clock, "task-clock"},
    {EventKind::wall_time, "wall-time"},
    {EventKind::core_cycles, "core-cycles"},
    {EventKind::reference_cycles, "reference-cycles"},
    {EventKind::instructions, "instructions"},
    {EventKind::fp, "fp"},
    {EventKind::memory, "memory"},
};

}  // namespace

std::string_view event_kind_name(EventKind kind) noexcept {
  for (const auto& [k, name] : kEventKindNames) {
    if (k == kind) return name;
  }
  return "other";
}

std::optional<EventKind> parse_event_kind(std::string_view name) noexcept {
  for (const auto& [kind, n] : kEventKindNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

bool is_hardware_kind(EventKind kind) noexcept {
  return kind != EventKind::software && kind != EventKind::task_clock && kind != EventKind::wall_time;
}

std::string_view backend_name(BackendKind kind) noexcept {
  switch (kind) {
    case BackendKind::automatic:
      return "auto";
    case BackendKind::perf:
      return "perf";
    case BackendKind::papi:
      return "papi";
    case BackendKind::timer:
      return "timer";
  }
  return "?";
}

void readings_between(const CounterSet& set, const CounterSnapshot& before, const CounterSnapshot& after, CounterReading* out) noexcept {
  const auto& events = set.events();
  for (std::size_t i = 0; i < events.size() && i < kMaxCounterEvents; ++i) {
    if (events[i].status != CounterStatus::ok) {
      out[i] = CounterReading{};
      out[i].status = events[i].status;
      continue;
    }
    if (!before.valid[i] || !after.valid[i] || after.value[i] < before.value[i] || after.time_enabled[i] < before.time_enabled[i] ||
        after.time_running[i] < before.time_running[i]) {
      out[i] = CounterReading{};
      out[i].status = CounterStatus::not_counted;
      continue;
    }
    out[i] = counters::scale_counter(after.value[i] - before.value[i], after.time_enabled[i] - before.time_enabled[i],
                                     after.time_running[i] - before.time_running[i]);
  }
}

std::vector<CounterReading> readings_between(const CounterSet& set, const CounterSnapshot& before, const CounterSnapshot& after) {
  std::vector<CounterReading> out(std::min(set.events().size(), kMaxCounterEvents));
  readings_between(set, before, after, out.data());
  return out;
}

std::unique_ptr<CounterSet> open_counters(const CounterOptions& options) {
  switch (options.backend) {
    case BackendKind::timer:
      return counters::open_timers(options);
    case BackendKind::papi:
      return counters::open_papi(options);
    case BackendKind::automatic:
    case BackendKind::perf:
      break;
  }
  return counters::open_perf_events(options);
}

}  // namespace hwprof
