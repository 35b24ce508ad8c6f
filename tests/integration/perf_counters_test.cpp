// The perf_event and timer backends on the real kernel. Software events work in VMs without
// a PMU; hardware events skip with the reason when the machine has none.
#include <atomic>
#include <chrono>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calibrate/contention.hpp"
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

double clock_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
}

// CPU time the whole machine lost to the hypervisor (steal) and to interrupts so far, in ns,
// from /proc/stat (the calibration's own reading of it, calibrate/contention.hpp). The kernel
// leaves both out of a thread's CPU time (rq clock_task, with CONFIG_PARAVIRT_TIME_ACCOUNTING
// and CONFIG_IRQ_TIME_ACCOUNTING) but task-clock, which runs on the perf clock, keeps them: a
// VM beside busy neighbours read task-clock 13 % above the process's CPU time for this reason
// alone. 0 where /proc/stat cannot be read.
double stolen_and_interrupt_ns() {
  const calibration::CpuTicks ticks = calibration::snapshot_load().stat.all;
  return static_cast<double>(ticks.steal + ticks.interrupts) * 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// task-clock of a counter set inherited by every thread against the kernel's own CPU time of
// the process over the same interval (CLOCK_PROCESS_CPUTIME_ID: every thread, the ended ones
// too). Not against wall time: on a busy host the threads get less than their cores, and a
// ratio to wall time would measure the neighbours (it failed at 1.67 of 1.7 beside them).
// The ceiling allows for what the machine lost to steal and interrupts in the interval (see
// above) plus two ticks per CPU of /proc/stat's rounding; it still catches a thread counted
// twice wherever the host is quiet enough to tell.
struct CpuInterval {
  double process0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  double thread0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  double lost0 = stolen_and_interrupt_ns();
  double process_ns = 0;
  double thread_ns = 0;
  double lost_ns = 0;
  void end() {
    process_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - process0;
    thread_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - thread0;
    const double ticks = 2.0 * std::thread::hardware_concurrency() * 1e9 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    lost_ns = stolen_and_interrupt_ns() - lost0 + ticks;
  }
};

void expect_task_clock_counts_every_thread(double task_clock_ns, const CpuInterval& cpu) {
  const double others = cpu.process_ns - cpu.thread_ns;
  if (others < 20e6) GTEST_SKIP() << "the other threads ran " << others / 1e6 << " ms of CPU: the host gave them too little to tell";
  EXPECT_GE(task_clock_ns, 0.9 * cpu.process_ns) << "task-clock " << task_clock_ns << " ns; the process's CPU time " << cpu.process_ns
                                                 << " ns, of which other threads " << others << " ns";
  EXPECT_LE(task_clock_ns, 1.1 * cpu.process_ns + cpu.lost_ns + 5e6) << "task-clock " << task_clock_ns << " ns; process CPU " << cpu.process_ns
                                                                     << " ns; the machine lost " << cpu.lost_ns << " ns to steal and interrupts";
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
  CpuInterval cpu;
  const auto t0 = std::chrono::steady_clock::now();
  deadline = (t0 + std::chrono::milliseconds(400)).time_since_epoch().count();
  go = true;
  a.join();
  b.join();
  cpu.end();
  set->read(after);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value());
  expect_task_clock_counts_every_thread(r.value, cpu);
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
  CpuInterval cpu;
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500) || calls < 3) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    ++calls;
  }
  cpu.end();
  set->read(after);
  const CounterReading r = readings_between(*set, before, after)[0];
  ASSERT_TRUE(r.has_value());
  SCOPED_TRACE(std::to_string(calls) + " SGEMMs");
  expect_task_clock_counts_every_thread(r.value, cpu);
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
  // Each worker's own CPU time, from the kernel: what the host gave it, however busy it is.
  double worker_cpu[2] = {0.0, 0.0};
  auto work = [&](int k) {
    const double t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    spin_until(deadline);
    worker_cpu[k] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
  };
  std::thread a(work, 0);
  std::thread b(work, 1);
  a.join();
  b.join();
  set->read(after);
  const auto r = readings_between(*set, before, after);
  for (const CounterReading& reading : r) EXPECT_EQ(reading.status, CounterStatus::ok);
  // Not against wall time (1.7x failed at 1.11 beside a compiler): process CPU time holds
  // this thread's and both workers' CPU time.
  EXPECT_GE(r[1].value, 0.95 * (r[2].value + worker_cpu[0] + worker_cpu[1]))
      << "process CPU " << r[1].value << " ns; this thread " << r[2].value << " ns, workers " << worker_cpu[0] << " and " << worker_cpu[1] << " ns";
  EXPECT_GT(worker_cpu[0] + worker_cpu[1], 10.0 * r[2].value) << "the workers did the work, not this thread";
  auto unknown = open_counters({BackendKind::timer, {"wall-tim"}, 0, false});
  EXPECT_EQ(unknown->events()[0].status, CounterStatus::unsupported);
  EXPECT_NE(unknown->events()[0].reason.find("wall-time"), std::string::npos);
}

}  // namespace
}  // namespace hwprof
