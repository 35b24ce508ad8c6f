// Reads allocate nothing (docs/design.md, "Rules every part keeps": the measured path allocates nothing). This binary
// replaces the global operator new to count allocations around the reads.

#include <gtest/gtest.h>

#include "counting_new.hpp"
#include "hwprof/counters.hpp"

namespace hwprof {
namespace {

using test::allocations;

// GTEST_SKIP returns from here only: the callers end after it.
void expect_reads_do_not_allocate(BackendKind backend, std::vector<std::string> names) {
  CounterOptions options;
  options.backend = backend;
  options.events = std::move(names);
  auto set = open_counters(options);
  // A set whose every event failed to open reads nothing, and would pass without testing.
  std::string why;
  bool counting = backend == BackendKind::timer;
  for (const EventInfo& e : set->events()) {
    if (e.status == CounterStatus::ok) counting = true;
    if (why.empty()) why = e.name + ": " + e.reason;
  }
  if (!counting) GTEST_SKIP() << backend_name(backend) << " opens none of its events here, so its reads test nothing (" << why << ")";
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

TEST(NoAllocation, TimerBackendReads) {
  expect_reads_do_not_allocate(BackendKind::timer, {});
}

TEST(NoAllocation, PapiBackendReads) {
  expect_reads_do_not_allocate(BackendKind::papi, {"perf::TASK-CLOCK"});
}

}  // namespace
}  // namespace hwprof
