#include "session/session_clock.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>
#include "common/stages.hpp"

namespace hwprof::session {

namespace {

// Whether the first "flags" line of /proc/cpuinfo lists `flag` as a whole word.
bool has_flag(std::string_view cpuinfo, std::string_view flag) {
  std::size_t at = 0;
  while (at < cpuinfo.size()) {
    const std::size_t end = std::min(cpuinfo.find('\n', at), cpuinfo.size());
    std::string_view line = cpuinfo.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, 5) != "flags") continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view words = line.substr(colon + 1);
    while (!words.empty()) {
      const std::size_t space = words.find(' ');
      const std::string_view word = words.substr(0, space);
      if (word == flag) return true;
      if (space == std::string_view::npos) break;
      words.remove_prefix(space + 1);
    }
    return false;  // the first CPU's flags decide (a kernel sets them alike on every CPU)
  }
  return false;
}

}  // namespace

std::string clock_override_problem(std::string_view value) {
  if (value.empty() || value == "tsc" || value == "monotonic") return {};
  std::string shown;
  for (const char c : value.substr(0, 32)) shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return "HWPROF_CLOCK=" + shown + (value.size() > 32 ? "..." : "") +
         ": unknown clock; expected tsc or monotonic (the default choice is used: the TSC where it is invariant, else CLOCK_MONOTONIC)";
}

TscDecision decide_tsc(std::string_view cpuinfo, std::string_view clocksource, std::string_view override_value) {
#if !defined(__x86_64__)
  (void)cpuinfo;
  (void)clocksource;
  (void)override_value;
  return {false, "no TSC on this architecture"};
#else
  while (!clocksource.empty() && (clocksource.back() == '\n' || clocksource.back() == ' ')) clocksource.remove_suffix(1);
  if (override_value == "monotonic") return {false, "HWPROF_CLOCK=monotonic"};
  if (override_value == "tsc") return {true, "HWPROF_CLOCK=tsc"};
  if (clocksource == "tsc") return {true, "the kernel's clocksource is the TSC"};
  const bool constant = has_flag(cpuinfo, "constant_tsc");
  const bool nonstop = has_flag(cpuinfo, "nonstop_tsc");
  if (constant && nonstop) {
    return {true, "invariant TSC (constant_tsc, nonstop_tsc)" +
                      (clocksource.empty() ? std::string() : "; the kernel's clocksource is " + std::string(clocksource))};
  }
  std::string missing = !constant && !nonstop ? "constant_tsc and nonstop_tsc" : !constant ? "constant_tsc" : "nonstop_tsc";
  return {false, "the TSC is not invariant here (no " + missing + " in /proc/cpuinfo)"};
#endif
}

namespace {

#if defined(__x86_64__)
std::string read_text(const char* path, std::size_t limit) {
  std::ifstream in(path);
  if (!in) return {};
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
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
  try {
    const char* forced = std::getenv("HWPROF_CLOCK");
    // The flags are on the first CPU's lines: 64 KiB holds them on any machine.
    const TscDecision decision =
        decide_tsc(read_text("/proc/cpuinfo", std::size_t{64} * 1024),
                   read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource", 64), forced != nullptr ? forced : "");
    c.reason = decision.reason;
    if (!decision.use) return c;
  } catch (...) {
    c.reason = "out of memory reading /proc/cpuinfo";
    return c;
  }
  const auto [tsc0, ns0] = tsc_and_ns();
  constexpr double kSpanNs = 5e6;  // 5 ms: the pairs' jitter (tens of ns) is then < 1e-5 of it
  std::pair<double, double> end{tsc0, ns0};
  while (end.second - ns0 < kSpanNs) end = tsc_and_ns();
  if (end.first <= tsc0) {
    c.reason += "; but the TSC did not advance over 5 ms";
    return c;
  }
  c.ns_per_tick = (end.second - ns0) / (end.first - tsc0);
  c.usable = c.ns_per_tick > 0 && std::isfinite(c.ns_per_tick);
  if (!c.usable) c.reason += "; but its rate could not be measured";
  return c;
}
#else
TscClock measure_tsc() noexcept {
  return {false, 1.0, "no TSC on this architecture"};
}
#endif

}  // namespace

const TscClock& tsc_clock() noexcept {
  static const TscClock clock = measure_tsc();
  return clock;
}

}  // namespace hwprof::session
