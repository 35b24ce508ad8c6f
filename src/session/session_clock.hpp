// The session's clock. The time stamp counter where it is invariant — /proc/cpuinfo's flags
// have constant_tsc (a fixed rate, whatever the core's frequency) and nonstop_tsc (it keeps
// counting in deep C-states), or the kernel keeps time with it itself (clocksource "tsc") —
// with its rate measured against CLOCK_MONOTONIC; elsewhere CLOCK_MONOTONIC. rdtsc costs
// ~10 ns against ~25 ns for clock_gettime through the vDSO (and more under a paravirtual
// clocksource such as kvm-clock), and a region reads the clock twice (bench/region_bench.cpp).
// rdtsc is not serialising: a region's edges may move by a few instructions, far below its
// resolution. A region whose end reads less than its start (a thread moved to a CPU whose TSC
// lags) counts 0 for that call, never a wrapped-around figure.
// HWPROF_CLOCK=monotonic forces CLOCK_MONOTONIC; HWPROF_CLOCK=tsc the TSC where it exists.
#pragma once

#include "common/monotonic_clock.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#include "common/stages.hpp"
#endif

namespace hwprof::session {

// Whether the TSC may time regions, and why (or why not), from /proc/cpuinfo's text, the
// kernel's current clocksource and HWPROF_CLOCK (each may be empty). Pure, for the tests.
struct TscDecision {
  bool use = false;
  std::string reason;
};
TscDecision decide_tsc(std::string_view cpuinfo, std::string_view clocksource, std::string_view override_value);

// What is wrong with an HWPROF_CLOCK value (empty, "tsc" and "monotonic" are right), for a
// line on stderr; empty when nothing is. The clock is then chosen as if it were unset.
std::string clock_override_problem(std::string_view value);

struct TscClock {
  bool usable = false;
  double ns_per_tick = 1.0;
  std::string reason;  // why the TSC is or is not used
};
// This machine's decision, and the TSC's rate measured against CLOCK_MONOTONIC over 5 ms —
// once per process, on first use.
const TscClock& tsc_clock() noexcept;

#if defined(__x86_64__)
inline std::uint64_t read_tsc() noexcept {
  return __rdtsc();
}
#else
inline std::uint64_t read_tsc() noexcept {
  return 0;
}  // tsc_clock() is never usable here
#endif

}  // namespace hwprof::session
