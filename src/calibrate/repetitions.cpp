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
#include "common/stages.hpp"
#include "common/statistics.hpp"

namespace hwprof::calibration {

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
  const double lowest = *std::min_element(rates.begin(), rates.end());
  stats.best = *std::max_element(rates.begin(), rates.end());
  stats.median = median_of(std::move(rates));
  stats.spread = stats.median > 0.0 ? (stats.best - lowest) / stats.median : 0.0;
  return stats;
}

}  // namespace hwprof::calibration
