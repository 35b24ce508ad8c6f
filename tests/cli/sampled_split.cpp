// A program for HWPROF_SAMPLE (docs/sampling.md, "Regions programs and PyTorch:
// HWPROF_SAMPLE"): its region "split" spends 70 % of its CPU time in one function and 30 % in
// another, measured on the thread's own CPU clock, so that a test knows the truth the samples
// must find without timing anything (it prints the CPU time each function took: a little
// more than asked, by up to one step of its loop); its region "pool" waits for two threads that enter no
// region and spin in a function of their own. With "fork", a child it forks enters a region
// and exits (it must not sample, and must not hang). Ends with exit status 7.
//   sampled_split [fork]
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include <hwprof/regions.hpp>

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The clock is read every 20,000 steps (about 0.1 ms), so that reading it is a small share of
// the function's samples. Inlined into each caller, so that its samples are the caller's. It
// returns the CPU time it took (a little past `seconds`): the truth the test checks against.
__attribute__((always_inline)) inline double spin_cpu(double seconds) {
  volatile double x = 1.0;
  const double start = thread_cpu_seconds();
  double now = start;
  while (now - start < seconds) {
    for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
    now = thread_cpu_seconds();
  }
  return now - start;
}

// noipa: no clone, no folding of the identical bodies into one function.
__attribute__((noipa)) double hwprof_test_seventy(double seconds) {
  return spin_cpu(seconds);
}
__attribute__((noipa)) double hwprof_test_thirty(double seconds) {
  return spin_cpu(seconds);
}
__attribute__((noipa)) double hwprof_test_pool_worker(double seconds) {
  return spin_cpu(seconds);
}

}  // namespace

int main(int argc, char** argv) {
  ::alarm(120);
  constexpr int kCalls = 150;  // 10 ms of CPU each: calls well inside the 200 ms sampling windows
  double seventy = 0.0, thirty = 0.0;
  for (int i = 0; i < kCalls; ++i) {
    HWPROF_SCOPE("split");
    seventy += hwprof_test_seventy(0.007);
    thirty += hwprof_test_thirty(0.003);
  }
  std::printf("seventy %.9f thirty %.9f\n", seventy, thirty);
  {
    HWPROF_SCOPE("pool");
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; ++i) workers.emplace_back([] { hwprof_test_pool_worker(0.25); });
    for (std::thread& t : workers) t.join();
  }
  if (argc > 1 && std::strcmp(argv[1], "fork") == 0) {
    const pid_t child = ::fork();
    if (child == 0) {
      {
        HWPROF_SCOPE("child");
        spin_cpu(0.01);
      }
      std::exit(0);
    }
    int status = 0;
    if (child > 0) ::waitpid(child, &status, 0);
  }
  return 7;
}
