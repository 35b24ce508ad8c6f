// One counter read through hwprof's perf backend against its peers on the same 3 software
// events (task-clock, page-faults, context-switches), in one single-threaded process:
//   - a raw read(2) of a perf_event group opened by hand (the floor: one syscall),
//   - PAPI_read on a PAPI event set of the same events,
//   - a read pair (region enter + exit) against a PAPI_hl_region_begin/end pair,
//   - the added cost per extra attached thread (hwprof counts every thread of the process).
// bench/run-counter-bench.sh runs this and prints the ratios.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <linux/perf_event.h>
#include <papi.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hwprof/counters.hpp"
#include "read_pair.hpp"

namespace {

const std::vector<std::string> kEvents = {"task-clock", "page-faults", "context-switches"};

void BM_HwprofRead(benchmark::State& state) {
  hwprof::CounterOptions options;
  options.events = kEvents;
  auto set = hwprof::open_counters(options);
  for (const auto& e : set->events()) {
    if (e.status != hwprof::CounterStatus::ok) {
      state.SkipWithError(("cannot open " + e.name + ": " + e.reason).c_str());
      return;
    }
  }
  set->start();
  hwprof::CounterSnapshot snapshot;
  for (auto _ : state) {
    set->read(snapshot);
    benchmark::DoNotOptimize(snapshot);
  }
}
BENCHMARK(BM_HwprofRead);

void BM_HwprofReadPair(benchmark::State& state) {
  time_counter_read_pairs(state, kEvents);
}
BENCHMARK(BM_HwprofReadPair);

void BM_RawGroupRead(benchmark::State& state) {
  const std::uint64_t configs[] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES};
  int leader = -1;
  std::vector<int> fds;
  for (std::uint64_t config : configs) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = config;
    attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    attr.exclude_kernel = 1;
    const int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, leader, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      state.SkipWithError("perf_event_open failed");
      return;
    }
    if (leader < 0) leader = fd;
    fds.push_back(fd);
  }
  std::uint64_t buffer[3 + 2 * 3];
  for (auto _ : state) {
    benchmark::DoNotOptimize(::read(leader, buffer, sizeof buffer));
    benchmark::ClobberMemory();
  }
  for (int fd : fds) ::close(fd);
}
BENCHMARK(BM_RawGroupRead);

int papi_event_set() {
  static int set = [] {
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) return -1;
    int es = PAPI_NULL;
    if (PAPI_create_eventset(&es) != PAPI_OK) return -1;
    for (const char* name : {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"}) {
      if (PAPI_add_named_event(es, name) != PAPI_OK) return -1;
    }
    if (PAPI_start(es) != PAPI_OK) return -1;
    return es;
  }();
  return set;
}

void BM_PapiRead(benchmark::State& state) {
  const int es = papi_event_set();
  if (es < 0) {
    state.SkipWithError("PAPI could not open perf::TASK-CLOCK, perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES");
    return;
  }
  long long values[3];
  for (auto _ : state) {
    benchmark::DoNotOptimize(PAPI_read(es, values));
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_PapiRead);

// PAPI's high-level API takes its events from PAPI_EVENTS (set by run-counter-bench.sh).
void BM_PapiHlRegionPair(benchmark::State& state) {
  if (PAPI_hl_region_begin("bench") != PAPI_OK) {
    state.SkipWithError("PAPI_hl_region_begin failed (is PAPI_EVENTS set to the 3 perf:: events?)");
    return;
  }
  PAPI_hl_region_end("bench");
  for (auto _ : state) {
    PAPI_hl_region_begin("bench");
    PAPI_hl_region_end("bench");
  }
}
BENCHMARK(BM_PapiHlRegionPair);

// hwprof attaches to every thread: with N idle extra threads a read costs N more group reads.
void BM_HwprofReadWithIdleThreads(benchmark::State& state) {
  const auto extra = static_cast<int>(state.range(0));
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::thread> threads;
  for (int i = 0; i < extra; ++i) {
    threads.emplace_back([&] {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return done; });
    });
  }
  {
    hwprof::CounterOptions options;
    options.events = kEvents;
    auto set = hwprof::open_counters(options);
    set->start();
    hwprof::CounterSnapshot snapshot;
    for (auto _ : state) {
      set->read(snapshot);
      benchmark::DoNotOptimize(snapshot);
    }
  }
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_all();
  for (auto& t : threads) t.join();
  state.counters["extra_threads"] = extra;
}
BENCHMARK(BM_HwprofReadWithIdleThreads)->Arg(0)->Arg(1)->Arg(2)->Arg(4)->Arg(8);

}  // namespace

BENCHMARK_MAIN();
