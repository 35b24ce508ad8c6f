// A test program for `hwprof stat`: spins N threads (the main one included) until each has used
// T seconds of its own CPU time (or 20 T of wall time, on a machine too busy to give it that),
// then exits with the given code.   spin_threads THREADS SECONDS EXIT_CODE
// CPU time, not wall time: so that the CPU time the program uses is known however busy the
// machine is, and a test can check that every thread was counted without timing anything.
#include <time.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void spin_for(double cpu_seconds, std::chrono::steady_clock::time_point give_up) {
  volatile double x = 1.0;
  const double start = thread_cpu_seconds();
  while (thread_cpu_seconds() - start < cpu_seconds && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 10000; ++i) x = x * 1.0000001 + 1e-9;
  }
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 0.4;
  const int code = argc > 3 ? std::atoi(argv[3]) : 0;
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(20 * seconds));
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) workers.emplace_back(spin_for, seconds, give_up);
  spin_for(seconds, give_up);
  for (auto& t : workers) t.join();
  return code;
}
