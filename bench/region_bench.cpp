// The cost of entering and leaving a region (one begin/end pair) in a single-threaded process:
//   - time only (the timer backend with no events): the goals are ≤ 60 ns and
//     ≤ 1.5× two raw TSC reads (the session times regions with the TSC where it is invariant);
//   - the same through <hwprof/regions.hpp>'s HWPROF_SCOPE and the C API's hwprof_begin/end
//     on the default session (time only: HWPROF_BACKEND=timer is set below);
//   - with the perf backend on the events of bench/run-counter-bench.sh (task-clock,
//     page-faults, context-switches), against a PAPI_hl_region_begin/end pair on the same
//     events: goal ≤ 0.5× PAPI's;
//   - the floors they build on: two clock reads, and two reads of the same perf counter set;
//   - what a distinct name costs: 10,000 names entered once each through hwprof_begin/end on
//     the default session with no HWPROF_* variable set, in a child process of its own — the
//     memory (resident set) and time per new name, and the time of a later call by name.
// PAPI's high-level API cannot count on a machine without a PMU (PAPI 7.0 disables its
// perf_event component there, software events included): the peer is then reported
// unavailable with PAPI's reason, and our figures are still printed.
//
//   build/release/bin/hwprof_region_bench             (repetitions and pinning: see main)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwprof/counters.hpp"
#include "hwprof/regions.h"
#include "hwprof/regions.hpp"
#include "hwprof/session.hpp"
#include "read_pair.hpp"
#include "session/session_clock.hpp"

#if defined(HWPROF_BENCH_HAVE_PAPI)
#include <papi.h>

#include "counters/papi_backend.hpp"
#endif

namespace {

const std::vector<std::string> kEvents = {"task-clock", "page-faults", "context-switches"};
const char* const kPapiEvents = "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES";

std::map<std::string, std::string> notes;
std::string scratch_dir;  // benchmark name → what it measured, or why it did not run

std::unique_ptr<hwprof::Session> open_session(hwprof::BackendKind backend, std::vector<std::string> events) {
  hwprof::SessionOptions o;
  o.backend = backend;
  o.events = std::move(events);
  o.on_hint = [](const std::string&) {};
  auto s = hwprof::Session::open(o);
  return s ? std::move(*s) : nullptr;
}

std::string opened_events(const hwprof::Session& s) {
  std::string out;
  for (const hwprof::EventInfo& e : s.events()) {
    out += (out.empty() ? "" : ", ") + e.name +
           (e.status == hwprof::CounterStatus::ok ? "" : " (" + std::string(hwprof::counter_status_name(e.status)) + ")");
  }
  return out.empty() ? "time only" : out;
}

void BM_RegionTimeOnly(benchmark::State& state) {
  auto s = open_session(hwprof::BackendKind::timer, {});
  const int id = s->region("bench");
  for (auto _ : state) {
    hwprof::Region r(*s, id);
    benchmark::ClobberMemory();
  }
  notes["BM_RegionTimeOnly"] = "clock " + std::string(s->clock_source()) + " (" + hwprof::session::tsc_clock().reason + "); self-measured pair " +
                               std::to_string(s->overhead().pair_ns) + " ns";
}
BENCHMARK(BM_RegionTimeOnly);

void BM_MacroTimeOnly(benchmark::State& state) {
  auto s = open_session(hwprof::BackendKind::timer, {});
  for (auto _ : state) {
    HWPROF_REGION(*s, "bench");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_MacroTimeOnly);

// The default session (time only here), by a literal name bound to its call site ...
void BM_ScopeTimeOnly(benchmark::State& state) {
  for (auto _ : state) {
    HWPROF_SCOPE("bench-scope");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_ScopeTimeOnly);

// ... and through the C API, by name (a per-thread cache finds it).
void BM_CApiTimeOnly(benchmark::State& state) {
  for (auto _ : state) {
    hwprof_begin("bench-c");
    benchmark::ClobberMemory();
    hwprof_end("bench-c");
  }
}
BENCHMARK(BM_CApiTimeOnly);

void BM_RegionPerf(benchmark::State& state) {
  auto s = open_session(hwprof::BackendKind::perf, kEvents);
  if (s->time_only()) {
    state.SkipWithError(("no perf event opens here: " + opened_events(*s)).c_str());
    return;
  }
  const int id = s->region("bench");
  for (auto _ : state) {
    hwprof::Region r(*s, id);
    benchmark::ClobberMemory();
  }
  notes["BM_RegionPerf"] = "events: " + opened_events(*s) + "; self-measured pair " + std::to_string(s->overhead().pair_ns) + " ns";
}
BENCHMARK(BM_RegionPerf);

// Floors: what a region cannot be cheaper than.
void BM_ClockPair(benchmark::State& state) {
  timespec a{};
  timespec b{};
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_ClockPair);

void BM_TscPair(benchmark::State& state) {
  for (auto _ : state) {
    const std::uint64_t a = hwprof::session::read_tsc();
    const std::uint64_t b = hwprof::session::read_tsc();
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(BM_TscPair);

void BM_PerfReadPair(benchmark::State& state) {
  time_counter_read_pairs(state, kEvents);
}
BENCHMARK(BM_PerfReadPair);

#if defined(HWPROF_BENCH_HAVE_PAPI)
std::string papi_unavailable_reason(int code) {
  std::string why = std::string("PAPI_hl_region_begin: ") + PAPI_strerror(code);
  for (const hwprof::counters::PapiComponent& c : hwprof::counters::papi_components()) {
    if (c.name == "perf_event" && !c.enabled) why += "; PAPI's perf_event component is disabled here: " + c.reason;
  }
  return why;
}

void BM_PapiHlRegion(benchmark::State& state) {
  const int first = PAPI_hl_region_begin("bench");
  if (first != PAPI_OK) {
    state.SkipWithError(papi_unavailable_reason(first).c_str());
    return;
  }
  PAPI_hl_region_end("bench");
  for (auto _ : state) {
    PAPI_hl_region_begin("bench");
    PAPI_hl_region_end("bench");
  }
}
BENCHMARK(BM_PapiHlRegion);
#endif

// Keeps the median of each benchmark's repetitions (wall and CPU time per iteration) and the
// first error of each, and prints the usual table.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const std::string name = r.run_name.function_name;
      if (r.error_occurred) {
        errors.emplace(name, r.error_message);  // the first: later ones are PAPI's follow-ups
      } else if (r.aggregate_name == "median") {
        real_ns[name] = r.GetAdjustedRealTime();  // the default unit is ns
        cpu_ns[name] = r.GetAdjustedCPUTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::string why_missing(const std::string& name) const {
    const auto e = errors.find(name);
    return name + " did not run" + (e == errors.end() ? "" : ": " + e->second);
  }
  std::map<std::string, double> real_ns;
  std::map<std::string, double> cpu_ns;
  std::map<std::string, std::string> errors;
};

// Wall time is what a user's loop pays on an idle machine; CPU time leaves out the time this
// process waited for a CPU on a shared one. Both are printed; goals are judged on both.
void print_ratio(const Collector& c, const char* label, const std::string& a, const std::string& b, double goal) {
  if (!c.real_ns.count(a) || !c.real_ns.count(b)) {
    std::printf("%-40s peer unavailable: %s\n", label, c.why_missing(c.real_ns.count(a) ? b : a).c_str());
    return;
  }
  const double wall = c.real_ns.at(a) / c.real_ns.at(b);
  const double cpu = c.cpu_ns.at(a) / c.cpu_ns.at(b);
  std::printf("%-40s wall %8.1f / %8.1f ns = %5.2f   cpu %8.1f / %8.1f ns = %5.2f", label, c.real_ns.at(a), c.real_ns.at(b), wall, c.cpu_ns.at(a),
              c.cpu_ns.at(b), cpu);
  if (goal > 0)
    std::printf("   (goal <= %.2f: %s)", goal, std::max(wall, cpu) <= goal ? "meets" : wall <= goal || cpu <= goal ? "wall or cpu only" : "MISSES");
  std::printf("\n");
}

void print_absolute(const Collector& c, const char* label, const std::string& name, double goal_ns) {
  if (!c.real_ns.count(name)) {
    std::printf("%-40s unavailable: %s\n", label, c.why_missing(name).c_str());
    return;
  }
  const double wall = c.real_ns.at(name);
  const double cpu = c.cpu_ns.at(name);
  std::printf("%-40s wall %8.1f ns   cpu %8.1f ns", label, wall, cpu);
  if (goal_ns > 0) {
    std::printf("   (goal <= %.0f ns: %s)", goal_ns,
                std::max(wall, cpu) <= goal_ns      ? "meets"
                : wall <= goal_ns || cpu <= goal_ns ? "wall or cpu only"
                                                    : "MISSES");
  }
  std::printf("\n");
}

// ---- the cost of distinct names --------------------------------------------------------------

long resident_kib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

double seconds_now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct NamesCost {
  double kib_per_name = 0;
  double us_per_new_name = 0;
  double ns_per_later_call = 0;
};

// In the child: a fresh default session (no HWPROF_* variable), `count` names entered once,
// then each once more.
NamesCost names_cost_here(int count) {
  hwprof_begin("warm-up");  // opens the default session
  hwprof_end("warm-up");
  std::vector<std::string> names(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) names[static_cast<std::size_t>(i)] = "layer" + std::to_string(i) + ".aten::convolution";
  const long before = resident_kib();
  const double t0 = seconds_now();
  for (const std::string& n : names) {
    hwprof_begin(n.c_str());
    hwprof_end(n.c_str());
  }
  const double t1 = seconds_now();
  const long after = resident_kib();
  for (const std::string& n : names) {
    hwprof_begin(n.c_str());
    hwprof_end(n.c_str());
  }
  const double t2 = seconds_now();
  return {static_cast<double>(after - before) / count, 1e6 * (t1 - t0) / count, 1e9 * (t2 - t1) / count};
}

// Measured before anything opens the default session, printed with the other figures.
std::string names_cost_line;

void measure_names_cost(int count) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    for (const char* v : {"HWPROF_BACKEND", "HWPROF_OUTPUT", "HWPROF_EVENTS", "HWPROF_GROUP", "HWPROF_MAX_REGIONS"}) unsetenv(v);
    const NamesCost cost = names_cost_here(count);
    const ssize_t written = write(pipe_fds[1], &cost, sizeof cost);
    _exit(written == sizeof cost ? 0 : 1);
  }
  close(pipe_fds[1]);
  NamesCost cost;
  const bool got = child > 0 && read(pipe_fds[0], &cost, sizeof cost) == sizeof cost;
  close(pipe_fds[0]);
  if (child > 0) waitpid(child, nullptr, 0);
  char line[512];
  if (!got) {
    std::snprintf(line, sizeof line, "%-40s unavailable: the child process did not report\n", "distinct names");
  } else {
    std::snprintf(line, sizeof line,
                  "%-40s %d names, no HWPROF_* variable: %.2f KiB resident and %.2f us per new name, %.1f ns per later call by name\n",
                  "distinct names (hwprof_begin/end)", count, cost.kib_per_name, cost.us_per_new_name, cost.ns_per_later_call);
  }
  names_cost_line = line;
}

}  // namespace

int main(int argc, char** argv) {
  measure_names_cost(10000);  // first: in a child that has not opened the default session
  // PAPI_hl takes its events from the environment and writes its measurements into
  // PAPI_OUTPUT_DIRECTORY at exit: a scratch folder, removed by a handler registered before
  // PAPI's (so it runs after it).
  setenv("PAPI_EVENTS", kPapiEvents, 0);
  setenv("HWPROF_BACKEND", "timer", 1);  // the default session: time only
  unsetenv("HWPROF_OUTPUT");
  setenv("PAPI_REPORT", "0", 0);
  char scratch[] = "/tmp/hwprof-region-bench-XXXXXX";
  if (mkdtemp(scratch) != nullptr) {
    scratch_dir = scratch;
    setenv("PAPI_OUTPUT_DIRECTORY", scratch, 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir, ec);
    });
  }
  // One CPU, as the goals are single-threaded figures; five repetitions, medians.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  const bool pinned = sched_setaffinity(0, sizeof one, &one) == 0;
  std::vector<char*> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  args.push_back(repetitions.data());
  args.push_back(aggregates.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  std::printf("\nmedian of 5 repetitions, single-threaded%s; perf events: task-clock, page-faults, context-switches\n",
              pinned ? ", pinned to CPU 0" : "");
  for (const auto& [name, note] : notes) std::printf("  %s: %s\n", name.c_str(), note.c_str());
  print_absolute(collector, "region enter+exit, time only", "BM_RegionTimeOnly", 60);
  print_absolute(collector, "HWPROF_REGION enter+exit, time only", "BM_MacroTimeOnly", 60);
  print_absolute(collector, "HWPROF_SCOPE enter+exit, time only", "BM_ScopeTimeOnly", 0);
  print_absolute(collector, "hwprof_begin/end (C), time only", "BM_CApiTimeOnly", 0);
  print_ratio(collector, "time-only region / two raw TSC reads", "BM_RegionTimeOnly", "BM_TscPair", 1.5);
  print_ratio(collector, "HWPROF_SCOPE / two raw TSC reads", "BM_ScopeTimeOnly", "BM_TscPair", 1.5);
  print_ratio(collector, "time-only region / two clock_gettime", "BM_RegionTimeOnly", "BM_ClockPair", 0);
  print_absolute(collector, "region enter+exit, perf backend", "BM_RegionPerf", 0);
  print_ratio(collector, "perf region / two counter reads", "BM_RegionPerf", "BM_PerfReadPair", 0);
#if defined(HWPROF_BENCH_HAVE_PAPI)
  print_ratio(collector, "perf region / PAPI_hl region pair", "BM_RegionPerf", "BM_PapiHlRegion", 0.5);
#else
  std::printf("%-44s peer unavailable: hwprof was built without PAPI\n", "perf region / PAPI_hl region pair");
#endif
  std::fputs(names_cost_line.c_str(), stdout);
  return 0;
}
