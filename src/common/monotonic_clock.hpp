// CLOCK_MONOTONIC in nanoseconds: the one time base of the session's timeline, the sampler's
// samples (perf_event's use_clockid), its pauses and windows, and PAPI's enabled time.
#pragma once

#include <cstdint>

#include <time.h>

namespace hwprof::common {

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace hwprof::common
