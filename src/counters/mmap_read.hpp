// Reading a counter in user space from its perf_event mmap page, without a system call.
//
// The protocol is the kernel's (include/uapi/linux/perf_event.h, the comment on struct
// perf_event_mmap_page): read `lock`, then index/offset/times and, when cap_user_rdpmc and
// index != 0, the hardware counter with rdpmc(index - 1), sign-extended from pmc_width bits;
// retry if `lock` changed meanwhile. When the event is not on the PMU right now (index 0) or
// the kernel does not allow rdpmc, the caller falls back to read(2).
#pragma once

#include <cstdint>
#include "common/stages.hpp"

struct perf_event_mmap_page;

namespace hwprof::counters {

struct MmapCounterValue {
  std::uint64_t count = 0;
  std::uint64_t time_enabled = 0;
  std::uint64_t time_running = 0;
};

using RdpmcFunction = std::uint64_t (*)(std::uint32_t counter) noexcept;
using RdtscFunction = std::uint64_t (*)() noexcept;

// false: use read(2) instead (not scheduled, rdpmc not allowed, or the page kept changing).
bool read_mmap_counter(const volatile perf_event_mmap_page* page, RdpmcFunction rdpmc, RdtscFunction rdtsc, MmapCounterValue* out) noexcept;

// The x86 instructions themselves (0 elsewhere; never called there since the kernel does not
// set cap_user_rdpmc).
std::uint64_t rdpmc_instruction(std::uint32_t counter) noexcept;
std::uint64_t rdtsc_instruction() noexcept;

}  // namespace hwprof::counters
