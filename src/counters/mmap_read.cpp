#include "counters/mmap_read.hpp"

#include <atomic>

#include <linux/perf_event.h>
#include "common/stages.hpp"

namespace hwprof::counters {

bool read_mmap_counter(const volatile perf_event_mmap_page* page, RdpmcFunction rdpmc, RdtscFunction rdtsc, MmapCounterValue* out) noexcept {
  // A writer holds the page only for a few instructions; a reader that keeps losing the race
  // for this long is better served by read(2).
  constexpr int kMaxAttempts = 1000;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const std::uint32_t sequence = page->lock;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::uint64_t enabled = page->time_enabled;
    std::uint64_t running = page->time_running;
    const bool user_time = page->cap_user_time != 0;
    std::uint64_t cycles = 0;
    std::uint64_t time_offset = 0;
    std::uint32_t time_mult = 0;
    std::uint16_t time_shift = 0;
    if (user_time && enabled != running) {
      cycles = rdtsc();
      time_offset = page->time_offset;
      time_mult = page->time_mult;
      time_shift = page->time_shift;
    }
    const std::uint32_t index = page->index;
    const bool user_rdpmc = page->cap_user_rdpmc != 0;
    std::uint64_t count = static_cast<std::uint64_t>(page->offset);
    if (user_rdpmc && index != 0) {
      const std::uint16_t width = page->pmc_width;
      std::uint64_t pmc = rdpmc(index - 1);
      if (width > 0 && width < 64) {
        // Sign-extend the counter's `width` bits (it may have wrapped past the offset).
        pmc <<= 64 - width;
        pmc = static_cast<std::uint64_t>(static_cast<std::int64_t>(pmc) >> (64 - width));
      }
      count += pmc;
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (page->lock != sequence) continue;
    if (!user_rdpmc || index == 0) return false;
    if (user_time && enabled != running) {
      // Extend the times to now: time_offset + cycles·mult >> shift, split to avoid overflow.
      const std::uint64_t quotient = time_shift < 64 ? cycles >> time_shift : 0;
      const std::uint64_t remainder = time_shift < 64 ? cycles & ((std::uint64_t{1} << time_shift) - 1) : cycles;
      const std::uint64_t delta = time_offset + quotient * time_mult + ((remainder * time_mult) >> time_shift);
      enabled += delta;
      running += delta;
    }
    out->count = count;
    out->time_enabled = enabled;
    out->time_running = running;
    return true;
  }
  return false;
}

std::uint64_t rdpmc_instruction(std::uint32_t counter) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  std::uint32_t low = 0;
  std::uint32_t high = 0;
  __asm__ volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(counter));
  return (static_cast<std::uint64_t>(high) << 32) | low;
#else
  (void)counter;
  return 0;
#endif
}

std::uint64_t rdtsc_instruction() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  std::uint32_t low = 0;
  std::uint32_t high = 0;
  __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
  return (static_cast<std::uint64_t>(high) << 32) | low;
#else
  return 0;
#endif
}

}  // namespace hwprof::counters
