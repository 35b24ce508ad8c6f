// What the bandwidth, FMA and GEMM measurements share: pinning a worker to its CPU, reading
// CPU time, and reducing the repetitions of one point to best, median and spread.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "calibrate/compute.hpp"

namespace hwprof::detail {

bool pin_current_thread(int cpu, std::string* why) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    if (why != nullptr) {
      try {
        *why = "cpu " + std::to_string(cpu) + " is out of range";
      } catch (...) {
        why->clear();
      }
    }
    return false;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error == 0) return true;
  if (why != nullptr) {
    try {
      *why = "pthread_setaffinity_np(cpu " + std::to_string(cpu) + "): " + std::strerror(error) +
             (error == EINVAL ? " (the CPU is offline or outside this process's affinity mask)" : "");
    } catch (...) {
      why->clear();  // out of memory for the message: the false result still says it
    }
  }
  return false;
}

double thread_cpu_seconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double process_cpu_seconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

RepetitionStats summarize_repetitions(std::vector<double> rates) {
  RepetitionStats stats;
  if (rates.empty()) return stats;
  std::sort(rates.begin(), rates.end());
  const std::size_t n = rates.size();
  stats.best = rates.back();
  stats.median = n % 2 == 1 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
  stats.spread = stats.median > 0.0 ? (rates.back() - rates.front()) / stats.median : 0.0;
  return stats;
}

}  // namespace hwprof::detail
