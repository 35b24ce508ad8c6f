// The perf_event and timer backends on the real kernel. Software events work in VMs without
// a PMU; hardware events skip with the reason when the machine has none.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <cblas.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include "hwprof/counters.hpp"

namespace hwprof {
namespace {

std::unique_ptr<CounterSet> open_started(BackendKind backend, std::vector<std::string> names) {
  CounterOptions options;
  options.backend = backend;
  options.events = std::move(names);
  auto set = open_counters(options);
  set->start();
  return set;
}

// Spins until `deadline`, doing work the compiler cannot remove.
void spin_until(std::chrono::steady_clock::time_point deadline) {
  volatile double x = 1.0;
  while (std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
  }
}

TEST(PerfCounters, TouchingSixtyFourMebibytesCountsEveryPageFault) {
  auto set = open_started(BackendKind::perf, {"page-faults"});
  ASSERT_EQ(set->events()[0].status, CounterStatus::ok) << set->events()[0].reason;
  constexpr std::size_t kBytes = 64u << 20;
  CounterSnapshot before;
  CounterSnapshot after;
  set->read(before);
  void* memory = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* bytes = static_cast<volatile char*>(memory);
  for (std::size_t i = 0; i < kBytes; i += 4096) bytes[i] = 1;
  set->read(after);
  ::munmap(memory, kBytes);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value()) << counter_status_name(r.status);
  EXPECT_GE(r.value, 16384.0);  // 64 MiB / 4 KiB pages (more if the kernel splits faults)
}

// Threads that exist before the set opens must count: OpenBLAS starts its workers at load.
TEST(PerfCounters, TaskClockCountsThreadsStartedBeforeTheSetOpened) {
  std::atomic<bool> go{false};
  std::atomic<std::chrono::steady_clock::time_point::rep> deadline{0};
  auto worker = [&] {
    while (!go.load()) std::this_thread::yield();
    spin_until(std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(deadline.load())));
  };
  std::thread a(worker);
  std::thread b(worker);
  auto set = open_started(BackendKind::perf, {"task-clock"});
  ASSERT_EQ(set->events()[0].status, CounterStatus::ok) << set->events()[0].reason;
  CounterSnapshot before;
  CounterSnapshot after;
  set->read(before);
  const auto t0 = std::chrono::steady_clock::now();
  deadline = (t0 + std::chrono::milliseconds(400)).time_since_epoch().count();
  go = true;
  a.join();
  b.join();
  const double wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  set->read(after);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value());
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores to run 2 threads at once";
  EXPECT_GE(r.value / wall_ns, 1.7) << "task-clock " << r.value << " ns over " << wall_ns << " ns of wall time";
}

TEST(PerfCounters, TaskClockCountsOpenBlasWorkerThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  openblas_set_num_threads(2);
  const int n = 1024;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 1.0f), b(a), c(a);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);  // warm up
  auto set = open_started(BackendKind::perf, {"task-clock"});
  ASSERT_EQ(set->events()[0].status, CounterStatus::ok) << set->events()[0].reason;
  CounterSnapshot before;
  CounterSnapshot after;
  set->read(before);
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500) || calls < 3) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    ++calls;
  }
  const double wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  set->read(after);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value());
  EXPECT_GE(r.value / wall_ns, 1.7) << calls << " SGEMMs: task-clock " << r.value << " ns over " << wall_ns << " ns wall";
}

TEST(PerfCounters, HardwareEventsCountOrSayWhyNot) {
  auto set = open_started(BackendKind::perf, {"cycles", "instructions"});
  for (const EventInfo& e : set->events()) {
    if (e.status != CounterStatus::ok) {
      EXPECT_FALSE(e.reason.empty());
      GTEST_SKIP() << "no hardware counters here: " << e.name << " is " << counter_status_name(e.status) << ": " << e.reason;
    }
  }
  CounterSnapshot before;
  CounterSnapshot after;
  set->read(before);
  spin_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  set->read(after);
  const auto r = readings_between(*set, before, after);
  ASSERT_TRUE(r[0].has_value() && r[1].has_value());
  EXPECT_GT(r[0].value, 1e6);
  EXPECT_GT(r[1].value, 1e6);
}

TEST(TimerCounters, ProcessCpuTimeCoversEveryThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs 2 cores";
  auto set = open_started(BackendKind::timer, {});
  ASSERT_EQ(set->events().size(), 3u);
  CounterSnapshot before;
  CounterSnapshot after;
  set->read(before);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::thread a([&] { spin_until(deadline); });
  std::thread b([&] { spin_until(deadline); });
  a.join();
  b.join();
  set->read(after);
  const auto r = readings_between(*set, before, after);
  for (const CounterReading& reading : r) EXPECT_EQ(reading.status, CounterStatus::ok);
  EXPECT_GE(r[1].value / r[0].value, 1.7) << "process CPU time over wall time";
  auto unknown = open_counters({BackendKind::timer, {"wall-tim"}, 0, false});
  EXPECT_EQ(unknown->events()[0].status, CounterStatus::unsupported);
  EXPECT_NE(unknown->events()[0].reason.find("wall-time"), std::string::npos);
}

}  // namespace
}  // namespace hwprof
