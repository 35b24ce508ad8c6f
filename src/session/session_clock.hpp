// The session's clock. The time stamp counter where the kernel keeps time with it itself
// (clocksource "tsc": the kernel switches away from a TSC that is not invariant or not
// synchronised across CPUs): rdtsc costs ~10 ns against ~22 ns for clock_gettime through the
// vDSO (both measured on the development VM, bench/region_bench.cpp), and a region reads the
// clock twice. rdtsc is not serialising: a region's edges may move by a few instructions,
// far below its resolution. Elsewhere, CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace hwprof::detail {

std::uint64_t monotonic_ns() noexcept;

struct TscClock {
  bool usable = false;
  double ns_per_tick = 1.0;
};
// Whether the TSC can be the clock here, and its rate measured against CLOCK_MONOTONIC over
// 5 ms — once per process, on first use.
const TscClock& tsc_clock() noexcept;

#if defined(__x86_64__)
inline std::uint64_t read_tsc() noexcept { return __rdtsc(); }
#else
inline std::uint64_t read_tsc() noexcept { return 0; }  // tsc_clock() is never usable here
#endif

}  // namespace hwprof::detail
