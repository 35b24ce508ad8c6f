// Reads allocate nothing (STYLE.md: the measured path is allocation-free). This binary
// replaces the global operator new to count allocations around the reads.
#include <atomic>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "hwprof/counters.hpp"

namespace {
std::atomic<long> allocations{0};
}

// The replacement operator new below allocates with malloc, so its operator delete frees
// with free; GCC cannot see the pairing and warns about every delete.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace hwprof {
namespace {

void expect_reads_do_not_allocate(BackendKind backend, std::vector<std::string> names) {
  CounterOptions options;
  options.backend = backend;
  options.events = std::move(names);
  auto set = open_counters(options);
  set->start();
  CounterSnapshot before;
  CounterSnapshot after;
  CounterReading readings[kMaxCounterEvents];
  const long at_start = allocations.load();
  for (int i = 0; i < 100; ++i) {
    set->read(before);
    set->read(after);
    readings_between(*set, before, after, readings);
  }
  EXPECT_EQ(allocations.load() - at_start, 0) << backend_name(backend);
  set->stop();
}

TEST(NoAllocation, PerfBackendReads) {
  expect_reads_do_not_allocate(BackendKind::perf, {"task-clock", "page-faults", "context-switches", "cycles"});
}

TEST(NoAllocation, TimerBackendReads) { expect_reads_do_not_allocate(BackendKind::timer, {}); }

TEST(NoAllocation, PapiBackendReads) { expect_reads_do_not_allocate(BackendKind::papi, {"perf::TASK-CLOCK"}); }

}  // namespace
}  // namespace hwprof
