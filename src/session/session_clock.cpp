#include "session/session_clock.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string_view>
#include <utility>

namespace hwprof::detail {

std::uint64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

namespace {

#if defined(__x86_64__)
bool kernel_keeps_time_with_tsc() noexcept {
  std::FILE* f = std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  if (f == nullptr) return false;
  char name[32] = {};
  const bool read = std::fgets(name, sizeof name, f) != nullptr;
  std::fclose(f);
  return read && std::string_view(name) == "tsc\n";
}

// A (tsc, ns) pair read as close together as this machine allows: the tightest of a few.
std::pair<double, double> tsc_and_ns() noexcept {
  double best_width = 1e300;
  std::pair<double, double> best{0.0, 0.0};
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t a = read_tsc();
    const std::uint64_t ns = monotonic_ns();
    const std::uint64_t b = read_tsc();
    const auto width = static_cast<double>(b - a);
    if (b > a && width < best_width) {
      best_width = width;
      best = {0.5 * (static_cast<double>(a) + static_cast<double>(b)), static_cast<double>(ns)};
    }
  }
  return best;
}

TscClock measure_tsc() noexcept {
  TscClock c;
  if (!kernel_keeps_time_with_tsc()) return c;
  const auto [tsc0, ns0] = tsc_and_ns();
  constexpr double kSpanNs = 5e6;  // 5 ms: the pairs' jitter (tens of ns) is then < 1e-5 of it
  std::pair<double, double> end{tsc0, ns0};
  while (end.second - ns0 < kSpanNs) end = tsc_and_ns();
  if (end.first <= tsc0) return c;
  c.ns_per_tick = (end.second - ns0) / (end.first - tsc0);
  c.usable = c.ns_per_tick > 0 && std::isfinite(c.ns_per_tick);
  return c;
}
#else
TscClock measure_tsc() noexcept { return {}; }
#endif

}  // namespace

const TscClock& tsc_clock() noexcept {
  static const TscClock clock = measure_tsc();
  return clock;
}

}  // namespace hwprof::detail
