// Reads allocate nothing (STYLE.md: the measured path is allocation-free). This binary
// replaces the global operator new to count allocations around the reads.

#include <gtest/gtest.h>

#include "counting_new.hpp"
#include "hwprof/counters.hpp"

namespace hwprof {
namespace {

using test::allocations;

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
