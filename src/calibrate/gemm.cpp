// GEMM ceilings: OpenBLAS sgemm and dgemm (cblas, square n×n×n, 2n³ FLOPs) with as many
// OpenBLAS threads as calibration threads, each pinned to one of the calibration CPUs.
//
// Cost: one timed repetition per size finds the best size, and only that size gets the
// remaining repetitions — a full set at every size would cost seconds per thread count.
// OpenBLAS's own state (thread count, worker affinity) is restored afterwards, since the
// program that links hwprof may use OpenBLAS too.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cblas.h>
#include <pthread.h>
#include <sched.h>

#include "calibrate/compute.hpp"
#include "calibrate/pinned_team.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::calibration {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// openblas_set_num_threads(n) for the scope, with OpenBLAS thread i < n-1 pinned to cpus[i];
// OpenBLAS's last thread index is the calling thread (blas_server.c, openblas_setaffinity),
// which the caller pins itself. Restores the previous count and affinities.
class OpenblasThreads {
 public:
  explicit OpenblasThreads(const std::vector<int>& cpus) : saved_threads_(openblas_get_num_threads()) {
    const int n = static_cast<int>(cpus.size());
    openblas_set_num_threads(n);
    for (int i = 0; i + 1 < n; ++i) {
      const int cpu = cpus[static_cast<std::size_t>(i)];
      cpu_set_t old_set;
      CPU_ZERO(&old_set);
      cpu_set_t set;
      CPU_ZERO(&set);
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
      if (CPU_COUNT(&set) == 0 || openblas_getaffinity(i, sizeof(old_set), &old_set) != 0 || openblas_setaffinity(i, sizeof(set), &set) != 0) {
        unpinned_ += (unpinned_.empty() ? "" : ", ") + std::to_string(i);
        continue;
      }
      saved_.push_back({i, old_set});
    }
  }
  ~OpenblasThreads() {
    for (auto& [index, set] : saved_) openblas_setaffinity(index, sizeof(set), &set);
    openblas_set_num_threads(saved_threads_);
  }
  OpenblasThreads(const OpenblasThreads&) = delete;
  OpenblasThreads& operator=(const OpenblasThreads&) = delete;

  // OpenBLAS worker indices that could not be pinned ("" when all were).
  const std::string& unpinned() const { return unpinned_; }

 private:
  struct Saved {
    int index;
    cpu_set_t set;
  };
  int saved_threads_;
  std::vector<Saved> saved_;
  std::string unpinned_;
};

template <class T>
void gemm(std::int64_t n, const T* a, const T* b, T* c) {
  const auto dim = static_cast<blasint>(n);
  if constexpr (sizeof(T) == 4) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0F, a, dim, b, dim, 0.0F, c, dim);
  } else {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0, a, dim, b, dim, 0.0, c, dim);
  }
}

// The longest single product the size sweep goes on to.
constexpr double kLongestCall = 0.12;

struct GemmRate {
  double gflops = 0.0;
  double cpu_share = 1.0;  // the process's CPU time over wall time × OpenBLAS threads
};

// One repetition: back-to-back products of size n until at least `seconds`.
template <class T>
GemmRate timed_gemm(std::int64_t n, const T* a, const T* b, T* c, double seconds, int threads) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double cpu_before = process_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  std::int64_t calls = 0;
  double elapsed = 0.0;
  do {
    gemm(n, a, b, c);
    ++calls;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  const double cpu = process_cpu_seconds() - cpu_before;
  return {static_cast<double>(calls) * flops / elapsed / 1e9, std::min(1.0, cpu / (elapsed * std::max(threads, 1)))};
}

template <class T>
ComputeSample measure_one(const ComputeOptions& options, const std::vector<std::int64_t>& sizes) {
  const std::int64_t largest = sizes.back();
  const auto elements = static_cast<std::size_t>(largest * largest);
  // Values in [0.5, 1): no denormals, no overflow at any n here.
  std::vector<T> a(elements), b(elements), c(elements, T(0));
  for (std::size_t i = 0; i < elements; ++i) {
    a[i] = static_cast<T>(0.5 + 0.5 * static_cast<double>((i * 7919) % 1000) / 1000.0);
    b[i] = static_cast<T>(0.5 + 0.5 * static_cast<double>((i * 104729) % 1000) / 1000.0);
  }
  const double target = std::max(options.seconds_per_point, 0.0);
  const int threads = static_cast<int>(options.cpus.size());
  // Warm-up: the OpenBLAS thread pool, its buffers and the clocks.
  timed_gemm(sizes.front(), a.data(), b.data(), c.data(), target, threads);

  // Up the sizes while one product stays short: a larger n only pays where it is cheap (a
  // 2048³ DGEMM on one core takes a third of a second a call, and GEMM is near its peak by then).
  std::vector<GemmRate> first_rates;
  for (std::int64_t n : sizes) {
    if (!first_rates.empty()) {
      const double next_flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      if (next_flops / (first_rates.back().gflops * 1e9) > kLongestCall) break;
    }
    first_rates.push_back(timed_gemm(n, a.data(), b.data(), c.data(), target, threads));
  }
  // Every size the first pass puts within 10 % of its best gets the full repetitions, and the
  // one with the best median stands for GEMM: one noisy first pass must not pick the size
  // (a 2-thread SGEMM drifted from 216 to 174 GFLOP/s between calibrations, as n flipped
  // from 2048 to 512).
  double first_best = 0.0;
  for (const GemmRate& r : first_rates) first_best = std::max(first_best, r.gflops);
  const int repetitions = std::max(options.repetitions, 1);
  std::int64_t n = sizes.front();
  std::vector<double> rates;
  RepetitionStats stats;
  int shared = 0;
  for (std::size_t i = 0; i < first_rates.size(); ++i) {
    if (first_rates[i].gflops < 0.9 * first_best) continue;
    std::vector<double> here;
    int reruns = 0;
    int kept_shared = 0;
    // The first pass's point counts as the first repetition unless another process shared its CPUs.
    if (first_rates[i].cpu_share >= kMinCpuShare) here.push_back(first_rates[i].gflops);
    while (static_cast<int>(here.size()) < repetitions) {
      const GemmRate r = timed_gemm(sizes[i], a.data(), b.data(), c.data(), target, threads);
      if (r.cpu_share < kMinCpuShare) {
        if (reruns < repetitions) {
          ++reruns;
          continue;
        }
        ++kept_shared;
      }
      here.push_back(r.gflops);
    }
    const RepetitionStats candidate = summarize_repetitions(here);
    if (rates.empty() || candidate.median > stats.median) {
      rates = std::move(here);
      stats = candidate;
      n = sizes[i];
      shared = kept_shared;
    }
  }

  ComputeSample sample;
  sample.what = sizeof(T) == 4 ? "gemm_sp" : "gemm_dp";
  sample.isa = std::string(kOpenBlasVariantPrefix) + openblas_get_corename();  // the kernels OpenBLAS chose for this CPU
  sample.size = n;
  sample.best_gflops = stats.best;
  sample.median_gflops = stats.median;
  sample.spread = stats.spread;
  sample.repetitions = static_cast<int>(rates.size());
  sample.shared = shared;
  return sample;
}

// On the thread that calls OpenBLAS (pinned by its team): sets OpenBLAS up, measures.
std::vector<ComputeSample> measure_on_pinned_thread(const ComputeOptions& options, const std::vector<std::int64_t>& sizes,
                                                    const std::string& pin_failure) {
  const OpenblasThreads threads(options.cpus);
  std::string note;
  if (!pin_failure.empty()) note = "calling thread ran unpinned: " + pin_failure;
  if (!threads.unpinned().empty()) {
    note += (note.empty() ? "" : "; ") + std::string("OpenBLAS threads ") + threads.unpinned() + " ran unpinned";
  }
  std::vector<ComputeSample> samples;
  if (options.single) samples.push_back(measure_one<float>(options, sizes));
  if (options.dual) samples.push_back(measure_one<double>(options, sizes));
  for (ComputeSample& s : samples) {
    std::string own =
        s.shared > 0 ? std::to_string(s.shared) + " of " + std::to_string(s.repetitions) + " repetitions shared OpenBLAS's CPUs with another process"
                     : "";
    s.note = note.empty() ? own : own.empty() ? note : note + "; " + own;
  }
  return samples;
}

}  // namespace

std::vector<ComputeSample> measure_gemm(const ComputeOptions& options) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t n : options.gemm_sizes) {
    if (n > 0) sizes.push_back(n);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (options.cpus.empty() || sizes.empty() || (!options.single && !options.dual)) return {};

  // The calls run on a thread of their own, pinned to the last calibration CPU (it becomes
  // OpenBLAS's last thread), so the caller's affinity is left alone. An exception there (e.g.
  // std::bad_alloc for the matrices) is rethrown here.
  PinnedTeam caller({options.cpus.back()});
  if (!caller.error().empty()) throw std::runtime_error(caller.error());
  std::vector<ComputeSample> samples;
  caller.run([&](std::size_t) { samples = measure_on_pinned_thread(options, sizes, caller.pin_error(0)); });
  return samples;
}

}  // namespace hwprof::calibration
