// A test program for `hwprof record`: spins in two functions of its own, record_spin_alpha and
// record_spin_beta, each until it has used SECONDS of CPU time (or 20 times that of wall time,
// on a machine too busy to give it), then exits with EXIT_CODE.   record_spin SECONDS EXIT_CODE
// Built twice: alone (no hwprof at all), and with HWPROF_RECORD_WITH_REGIONS, where each
// function runs inside a region of the regions library ("alpha" and "beta").
#include <time.h>

#include <chrono>
#include <cstdlib>

#ifdef HWPROF_RECORD_WITH_REGIONS
#include <hwprof/regions.hpp>
#endif

namespace {
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

// Not static, not inlined: each is a symbol of its own in the executable's .symtab.
__attribute__((noinline)) double record_spin_alpha(double seconds, std::chrono::steady_clock::time_point give_up) {
  volatile double x = 1.0;
  const double start = process_cpu_seconds();
  while (process_cpu_seconds() - start < seconds && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  }
  return x;
}

__attribute__((noinline)) double record_spin_beta(double seconds, std::chrono::steady_clock::time_point give_up) {
  volatile double y = 2.0;
  const double start = process_cpu_seconds();
  while (process_cpu_seconds() - start < seconds && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 200000; ++i) y = y * 0.9999999 + 1e-9;
  }
  return y;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int code = argc > 2 ? std::atoi(argv[2]) : 0;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(20 * seconds));
  double sum = 0.0;
  {
#ifdef HWPROF_RECORD_WITH_REGIONS
    HWPROF_SCOPE("alpha");
#endif
    sum += record_spin_alpha(seconds, give_up);
  }
  {
#ifdef HWPROF_RECORD_WITH_REGIONS
    HWPROF_SCOPE("beta");
#endif
    sum += record_spin_beta(seconds, give_up);
  }
  return sum > 0.0 ? code : code + 1;
}
