// The PAPI backend on the real PAPI and kernel. Where PAPI cannot initialise, or cannot count
// an event here (PAPI 7.0 switches its perf_event component off on a machine without a PMU,
// software events included), the test skips with PAPI's reason.
#include <barrier>
#include <chrono>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "counters/papi_backend.hpp"
#include "hwprof/counters.hpp"

namespace hwprof {
namespace {

std::unique_ptr<CounterSet> open_papi_events(std::vector<std::string> names) {
  CounterOptions options;
  options.backend = BackendKind::papi;
  options.events = std::move(names);
  return counters::open_papi(options);
}

std::string describe(const EventInfo& event) {
  return event.name + ": " + std::string(counter_status_name(event.status)) + ": " + event.reason;
}

bool hardware_pmu_exposed() {
  for (const char* pmu : {"cpu", "cpu_core", "cpu_atom", "armv8_pmuv3"}) {
    if (::access((std::string("/sys/bus/event_source/devices/") + pmu).c_str(), F_OK) == 0) return true;
  }
  return false;
}

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Burns `seconds` of this thread's CPU time with work the compiler cannot remove.
void spin_cpu(double seconds) {
  const double until = thread_cpu_seconds() + seconds;
  volatile double x = 1.0;
  while (thread_cpu_seconds() < until) {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
  }
}

// Why PAPI cannot initialise here, or "".
std::string papi_unavailable() {
  std::string why;
  return counters::papi_version(&why).empty() ? why : std::string();
}

TEST(PapiBackend, ReportsItsVersionOrWhyNot) {
  std::string why;
  const std::string version = counters::papi_version(&why);
  if (version.empty()) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << why;
  }
  EXPECT_EQ(version.rfind("7.", 0), 0u) << version;
}

TEST(PapiBackend, TouchingSixtyFourMebibytesCountsEveryPageFault) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  auto set = open_papi_events({"perf::PAGE-FAULTS"});
  ASSERT_EQ(set->events().size(), 1u);
  const EventInfo& event = set->events()[0];
  if (event.status != CounterStatus::ok) {
    ASSERT_FALSE(event.reason.empty());
    GTEST_SKIP() << describe(event);
  }
  constexpr std::size_t kBytes = 64u << 20;
  void* memory = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  CounterSnapshot before;
  CounterSnapshot after;
  set->start();
  set->read(before);
  auto* bytes = static_cast<volatile char*>(memory);
  for (std::size_t i = 0; i < kBytes; i += 4096) bytes[i] = 1;
  set->read(after);
  set->stop();
  ::munmap(memory, kBytes);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value()) << counter_status_name(r.status);
  EXPECT_GE(r.value, 16384.0);  // 64 MiB / 4 KiB pages
}

// OpenBLAS starts its workers when it loads, before any counter opens: such threads count.
TEST(PapiBackend, TaskClockCountsThreadsStartedBeforeTheSetOpened) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores to run 2 threads at once";
  std::barrier go(3);
  double seconds = 0.3;  // written before the barrier, read after it
  auto worker = [&go, &seconds] {
    go.arrive_and_wait();
    spin_cpu(seconds);
  };
  std::thread a(worker);
  std::thread b(worker);
  auto set = open_papi_events({"perf::TASK-CLOCK"});
  const EventInfo event = set->events()[0];
  if (event.status != CounterStatus::ok) {
    seconds = 0.0;
    go.arrive_and_wait();
    a.join();
    b.join();
    ASSERT_FALSE(event.reason.empty());
    GTEST_SKIP() << describe(event);
  }
  CounterSnapshot before;
  CounterSnapshot after;
  set->start();
  set->read(before);
  const auto t0 = std::chrono::steady_clock::now();
  go.arrive_and_wait();
  a.join();
  b.join();
  const double wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  set->read(after);
  set->stop();
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value()) << counter_status_name(r.status);
  EXPECT_GE(r.value / wall_ns, 1.7) << "task-clock " << r.value << " ns over " << wall_ns << " ns of wall time";
}

// Inheritance: a thread started after the set opened counts too.
TEST(PapiBackend, TaskClockCountsThreadsStartedAfterTheSetOpened) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores to run 2 threads at once";
  auto set = open_papi_events({"perf::TASK-CLOCK"});
  const EventInfo& event = set->events()[0];
  if (event.status != CounterStatus::ok) {
    ASSERT_FALSE(event.reason.empty());
    GTEST_SKIP() << describe(event);
  }
  std::barrier go(3);
  auto worker = [&go] {
    go.arrive_and_wait();
    spin_cpu(0.3);
  };
  std::thread a(worker);
  std::thread b(worker);
  CounterSnapshot before;
  CounterSnapshot after;
  set->start();
  set->read(before);
  const auto t0 = std::chrono::steady_clock::now();
  go.arrive_and_wait();
  a.join();
  b.join();
  const double wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  set->read(after);
  set->stop();
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value()) << counter_status_name(r.status);
  EXPECT_GE(r.value / wall_ns, 1.7) << "task-clock " << r.value << " ns over " << wall_ns << " ns of wall time";
}

TEST(PapiBackend, AnUnknownEventIsUnsupportedAndTheOthersStillRead) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  auto set = open_papi_events({"hwprof::NO_SUCH_EVENT", "perf::TASK-CLOCK"});
  ASSERT_EQ(set->events().size(), 2u);
  const EventInfo& unknown = set->events()[0];
  EXPECT_EQ(unknown.status, CounterStatus::unsupported);
  EXPECT_NE(unknown.reason.find("hwprof::NO_SUCH_EVENT"), std::string::npos) << unknown.reason;

  CounterSnapshot before;
  CounterSnapshot after;
  set->start();
  set->read(before);
  spin_cpu(0.01);
  set->read(after);
  set->stop();
  const std::vector<CounterReading> r = readings_between(*set, before, after);
  EXPECT_FALSE(r[0].has_value());
  EXPECT_EQ(r[0].status, CounterStatus::unsupported);
  const EventInfo& known = set->events()[1];
  if (known.status != CounterStatus::ok) {
    EXPECT_FALSE(r[1].has_value());
    GTEST_SKIP() << "the unknown event is reported as it should be, but PAPI cannot count the other one here: " << describe(known);
  }
  ASSERT_TRUE(r[1].has_value()) << counter_status_name(r[1].status);
  EXPECT_GT(r[1].value, 0.0);
}

TEST(PapiBackend, APresetThisMachineCannotCountIsUnsupportedWithAReasonNotZero) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  auto set = open_papi_events({"PAPI_TOT_CYC"});
  const EventInfo& event = set->events()[0];
  CounterSnapshot before;
  CounterSnapshot after;
  set->start();
  set->read(before);
  spin_cpu(0.01);
  set->read(after);
  set->stop();
  const CounterReading r = readings_between(*set, before, after)[0];
  if (!hardware_pmu_exposed()) {
    EXPECT_EQ(event.status, CounterStatus::unsupported) << describe(event);
    EXPECT_NE(event.reason.find("PMU"), std::string::npos) << event.reason;
  }
  if (event.status != CounterStatus::ok) {
    EXPECT_FALSE(event.reason.empty());
    EXPECT_FALSE(r.has_value());
    EXPECT_EQ(r.value, 0.0);
    EXPECT_FALSE(after.valid[0]);
    return;
  }
  ASSERT_TRUE(r.has_value()) << counter_status_name(r.status);
  EXPECT_GT(r.value, 0.0);
}

TEST(PapiBackend, EnableOnExecIsUnsupportedWithAReason) {
  if (const std::string why = papi_unavailable(); !why.empty()) GTEST_SKIP() << why;
  CounterOptions options;
  options.backend = BackendKind::papi;
  options.events = {"perf::TASK-CLOCK", "PAPI_TOT_INS"};
  options.pid = ::getpid();
  options.enable_on_exec = true;
  auto set = counters::open_papi(options);
  ASSERT_EQ(set->events().size(), 2u);
  for (const EventInfo& event : set->events()) {
    EXPECT_EQ(event.status, CounterStatus::unsupported);
    EXPECT_NE(event.reason.find("exec"), std::string::npos) << event.reason;
  }
}

// Built without PAPI, every event says so; built with it, this has nothing to check.
TEST(PapiBackend, WithoutPapiEveryEventSaysWhy) {
  std::string why;
  if (!counters::papi_version(&why).empty()) GTEST_SKIP() << "hwprof was built with PAPI";
  auto set = open_papi_events({"perf::TASK-CLOCK", "PAPI_TOT_CYC"});
  ASSERT_EQ(set->events().size(), 2u);
  for (const EventInfo& event : set->events()) {
    EXPECT_EQ(event.status, CounterStatus::unsupported);
    EXPECT_EQ(event.reason, why);
  }
  CounterSnapshot snapshot;
  set->read(snapshot);
  EXPECT_FALSE(snapshot.valid[0]);
}

}  // namespace
}  // namespace hwprof
