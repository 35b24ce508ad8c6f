// What the bandwidth, FMA and GEMM measurements share: reading CPU time, and reducing the repetitions of one point to best, median and spread.
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
