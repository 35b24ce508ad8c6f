#include "counters/timer_backend.hpp"

#include <ctime>

#include "common/stages.hpp"
#include "common/suggest.hpp"

namespace hwprof::counters {
namespace {

struct Clock {
  std::string_view name;
  clockid_t id;
  EventKind kind;  // elapsed time, or CPU time
};
constexpr Clock kClocks[] = {
    {"wall-time", CLOCK_MONOTONIC, EventKind::wall_time},
    {"process-cpu-time", CLOCK_PROCESS_CPUTIME_ID, EventKind::task_clock},
    {"thread-cpu-time", CLOCK_THREAD_CPUTIME_ID, EventKind::task_clock},
};

std::uint64_t to_ns(const timespec& ts) noexcept {
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

class TimerSet final : public CounterSet {
 public:
  explicit TimerSet(const CounterOptions& options) {
    std::vector<std::string> names = options.events;
    if (names.empty()) {
      for (const Clock& c : kClocks) names.emplace_back(c.name);
    }
    std::vector<std::string_view> known;
    for (const Clock& c : kClocks) known.push_back(c.name);
    for (const std::string& name : names) {
      EventInfo info;
      info.name = name;
      info.unit = "ns";
      clockid_t id = CLOCK_MONOTONIC;
      bool found = false;
      for (const Clock& c : kClocks) {
        if (c.name == name) {
          id = c.id;
          info.kind = c.kind;
          found = true;
        }
      }
      if (events_.size() >= kMaxCounterEvents) {
        found = false;
        info.reason = "more than " + std::to_string(kMaxCounterEvents) + " events in one set";
      } else if (!found) {
        info.reason = "the timer backend measures " + join(known) + "; '" + name + "' is not one of them" + did_you_mean(name, known);
      }
      info.status = found ? CounterStatus::ok : CounterStatus::unsupported;
      clocks_.push_back(found ? id : -1);
      events_.push_back(std::move(info));
    }
  }

  BackendKind backend() const noexcept override { return BackendKind::timer; }
  // Clocks always run; a reading is the difference of two snapshots.
  void start() noexcept override {}
  void stop() noexcept override {}

  // A clock never multiplexes: every event's enabled and running times are the wall-clock
  // time, so scaling is 1 and the status ok — unless clock_gettime fails, which marks the
  // reading invalid.
  void read(CounterSnapshot& out) noexcept override {
    timespec wall{};
    const bool wall_ok = ::clock_gettime(CLOCK_MONOTONIC, &wall) == 0;
    for (std::size_t i = 0; i < clocks_.size(); ++i) {
      timespec ts{};
      const bool ok = wall_ok && clocks_[i] != -1 && ::clock_gettime(clocks_[i], &ts) == 0;
      out.valid[i] = ok;
      out.value[i] = ok ? to_ns(ts) : 0;
      out.time_enabled[i] = ok ? to_ns(wall) : 0;
      out.time_running[i] = out.time_enabled[i];
    }
  }

 private:
  std::vector<clockid_t> clocks_;
};

}  // namespace

std::unique_ptr<CounterSet> open_timers(const CounterOptions& options) {
  return std::make_unique<TimerSet>(options);
}

}  // namespace hwprof::counters
