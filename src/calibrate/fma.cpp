// FMA-throughput kernels: each worker keeps 12 independent accumulators in registers and
// applies a = a × x + y to each in turn in a loop with nothing else in it, so the FMA pipes
// never wait on a result: that needs at least FMA latency × FMA pipes accumulators, 4 × 2 = 8
// on Skylake-SP, Ice Lake and Zen 2-5, 5 × 2 = 10 on Haswell (Agner Fog, "Instruction tables";
// the Intel and AMD optimization manuals), and 12 + x + y fit the 16 registers of AVX2 and
// SSE2. On Zen 5, 12, 16 and 24 accumulators measured the same; 8 was ~3% lower. One kernel
// per ISA, compiled with a target attribute so the default build stays portable, picked at
// run time from what the CPU and the OS support.
//
// The loops are assembly so that what runs is the same at every optimisation level and under
// the sanitizers: compiled from C++ at -O0 or with ASan the accumulators live in memory and
// the loop measures loads and stores (5-10× below peak). x = 1 - 2^-20 and y = 2^-20 are exact
// in both precisions and keep every accumulator at its fixed point 1.0, so no value drifts
// into denormals or infinities however long a kernel runs; the sums go back to the caller,
// which checks them, so no work can be dropped.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <immintrin.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "calibrate/compute.hpp"
#include "calibrate/pinned_team.hpp"
#include "common/stages.hpp"
#include "ops/elementwise_unary.hpp"

namespace hwprof::calibration {
namespace {

constexpr int kAccumulators = 12;
constexpr double kX = 1.0 - 0x1p-20;
constexpr double kY = 0x1p-20;

// n ≥ 1 trips of a[i] = a[i] × x + y for every accumulator, one FMA each (AT&T operand order:
// vfmadd132p[sd] x, y, a computes a = a × x + y). For 256- and 512-bit vectors alike: the
// operands' type picks ymm or zmm registers.
template <class Vec>
[[gnu::always_inline]] inline void fma_trips_pd(Vec (&a)[kAccumulators], const Vec& x, const Vec& y, std::uint64_t n) noexcept {
  asm volatile(
      "1:\n\t"
      "vfmadd132pd %[x], %[y], %[a0]\n\t"
      "vfmadd132pd %[x], %[y], %[a1]\n\t"
      "vfmadd132pd %[x], %[y], %[a2]\n\t"
      "vfmadd132pd %[x], %[y], %[a3]\n\t"
      "vfmadd132pd %[x], %[y], %[a4]\n\t"
      "vfmadd132pd %[x], %[y], %[a5]\n\t"
      "vfmadd132pd %[x], %[y], %[a6]\n\t"
      "vfmadd132pd %[x], %[y], %[a7]\n\t"
      "vfmadd132pd %[x], %[y], %[a8]\n\t"
      "vfmadd132pd %[x], %[y], %[a9]\n\t"
      "vfmadd132pd %[x], %[y], %[a10]\n\t"
      "vfmadd132pd %[x], %[y], %[a11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b"
      : [a0] "+v"(a[0]), [a1] "+v"(a[1]), [a2] "+v"(a[2]), [a3] "+v"(a[3]), [a4] "+v"(a[4]), [a5] "+v"(a[5]), [a6] "+v"(a[6]), [a7] "+v"(a[7]),
        [a8] "+v"(a[8]), [a9] "+v"(a[9]), [a10] "+v"(a[10]), [a11] "+v"(a[11]), [n] "+r"(n)
      : [x] "v"(x), [y] "v"(y)
      : "cc");
}

template <class Vec>
[[gnu::always_inline]] inline void fma_trips_ps(Vec (&a)[kAccumulators], const Vec& x, const Vec& y, std::uint64_t n) noexcept {
  asm volatile(
      "1:\n\t"
      "vfmadd132ps %[x], %[y], %[a0]\n\t"
      "vfmadd132ps %[x], %[y], %[a1]\n\t"
      "vfmadd132ps %[x], %[y], %[a2]\n\t"
      "vfmadd132ps %[x], %[y], %[a3]\n\t"
      "vfmadd132ps %[x], %[y], %[a4]\n\t"
      "vfmadd132ps %[x], %[y], %[a5]\n\t"
      "vfmadd132ps %[x], %[y], %[a6]\n\t"
      "vfmadd132ps %[x], %[y], %[a7]\n\t"
      "vfmadd132ps %[x], %[y], %[a8]\n\t"
      "vfmadd132ps %[x], %[y], %[a9]\n\t"
      "vfmadd132ps %[x], %[y], %[a10]\n\t"
      "vfmadd132ps %[x], %[y], %[a11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b"
      : [a0] "+v"(a[0]), [a1] "+v"(a[1]), [a2] "+v"(a[2]), [a3] "+v"(a[3]), [a4] "+v"(a[4]), [a5] "+v"(a[5]), [a6] "+v"(a[6]), [a7] "+v"(a[7]),
        [a8] "+v"(a[8]), [a9] "+v"(a[9]), [a10] "+v"(a[10]), [a11] "+v"(a[11]), [n] "+r"(n)
      : [x] "v"(x), [y] "v"(y)
      : "cc");
}

// SSE2 has no FMA: a multiply and an add per accumulator, 2 FLOPs per lane as well.
[[gnu::always_inline]] inline void mul_add_trips_pd(__m128d (&a)[kAccumulators], const __m128d& x, const __m128d& y, std::uint64_t n) noexcept {
  asm volatile(
      "1:\n\t"
      "mulpd %[x], %[a0]\n\t"
      "mulpd %[x], %[a1]\n\t"
      "mulpd %[x], %[a2]\n\t"
      "mulpd %[x], %[a3]\n\t"
      "mulpd %[x], %[a4]\n\t"
      "mulpd %[x], %[a5]\n\t"
      "mulpd %[x], %[a6]\n\t"
      "mulpd %[x], %[a7]\n\t"
      "mulpd %[x], %[a8]\n\t"
      "mulpd %[x], %[a9]\n\t"
      "mulpd %[x], %[a10]\n\t"
      "mulpd %[x], %[a11]\n\t"
      "addpd %[y], %[a0]\n\t"
      "addpd %[y], %[a1]\n\t"
      "addpd %[y], %[a2]\n\t"
      "addpd %[y], %[a3]\n\t"
      "addpd %[y], %[a4]\n\t"
      "addpd %[y], %[a5]\n\t"
      "addpd %[y], %[a6]\n\t"
      "addpd %[y], %[a7]\n\t"
      "addpd %[y], %[a8]\n\t"
      "addpd %[y], %[a9]\n\t"
      "addpd %[y], %[a10]\n\t"
      "addpd %[y], %[a11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b"
      : [a0] "+x"(a[0]), [a1] "+x"(a[1]), [a2] "+x"(a[2]), [a3] "+x"(a[3]), [a4] "+x"(a[4]), [a5] "+x"(a[5]), [a6] "+x"(a[6]), [a7] "+x"(a[7]),
        [a8] "+x"(a[8]), [a9] "+x"(a[9]), [a10] "+x"(a[10]), [a11] "+x"(a[11]), [n] "+r"(n)
      : [x] "x"(x), [y] "x"(y)
      : "cc");
}

[[gnu::always_inline]] inline void mul_add_trips_ps(__m128 (&a)[kAccumulators], const __m128& x, const __m128& y, std::uint64_t n) noexcept {
  asm volatile(
      "1:\n\t"
      "mulps %[x], %[a0]\n\t"
      "mulps %[x], %[a1]\n\t"
      "mulps %[x], %[a2]\n\t"
      "mulps %[x], %[a3]\n\t"
      "mulps %[x], %[a4]\n\t"
      "mulps %[x], %[a5]\n\t"
      "mulps %[x], %[a6]\n\t"
      "mulps %[x], %[a7]\n\t"
      "mulps %[x], %[a8]\n\t"
      "mulps %[x], %[a9]\n\t"
      "mulps %[x], %[a10]\n\t"
      "mulps %[x], %[a11]\n\t"
      "addps %[y], %[a0]\n\t"
      "addps %[y], %[a1]\n\t"
      "addps %[y], %[a2]\n\t"
      "addps %[y], %[a3]\n\t"
      "addps %[y], %[a4]\n\t"
      "addps %[y], %[a5]\n\t"
      "addps %[y], %[a6]\n\t"
      "addps %[y], %[a7]\n\t"
      "addps %[y], %[a8]\n\t"
      "addps %[y], %[a9]\n\t"
      "addps %[y], %[a10]\n\t"
      "addps %[y], %[a11]\n\t"
      "dec %[n]\n\t"
      "jnz 1b"
      : [a0] "+x"(a[0]), [a1] "+x"(a[1]), [a2] "+x"(a[2]), [a3] "+x"(a[3]), [a4] "+x"(a[4]), [a5] "+x"(a[5]), [a6] "+x"(a[6]), [a7] "+x"(a[7]),
        [a8] "+x"(a[8]), [a9] "+x"(a[9]), [a10] "+x"(a[10]), [a11] "+x"(a[11]), [n] "+r"(n)
      : [x] "x"(x), [y] "x"(y)
      : "cc");
}

template <class Scalar, class Vec>
double sum_of_lanes(const Vec (&a)[kAccumulators]) noexcept {
  constexpr std::size_t kLanes = sizeof(Vec) / sizeof(Scalar);
  double total = 0.0;
  for (const Vec& v : a) {
    Scalar lanes[kLanes];
    std::memcpy(lanes, &v, sizeof(v));
    for (Scalar lane : lanes) total += lane;
  }
  return total;
}

// The kernels: `iterations` trips; they return the sum of the accumulators' lanes.
[[gnu::target("avx512f")]] double fma_avx512_dp(std::uint64_t iterations) noexcept {
  __m512d a[kAccumulators];
  for (__m512d& v : a) v = _mm512_set1_pd(1.0);
  if (iterations > 0) fma_trips_pd(a, _mm512_set1_pd(kX), _mm512_set1_pd(kY), iterations);
  return sum_of_lanes<double>(a);
}

[[gnu::target("avx512f")]] double fma_avx512_sp(std::uint64_t iterations) noexcept {
  __m512 a[kAccumulators];
  for (__m512& v : a) v = _mm512_set1_ps(1.0F);
  if (iterations > 0) {
    fma_trips_ps(a, _mm512_set1_ps(static_cast<float>(kX)), _mm512_set1_ps(static_cast<float>(kY)), iterations);
  }
  return sum_of_lanes<float>(a);
}

[[gnu::target("avx2,fma")]] double fma_avx2_dp(std::uint64_t iterations) noexcept {
  __m256d a[kAccumulators];
  for (__m256d& v : a) v = _mm256_set1_pd(1.0);
  if (iterations > 0) fma_trips_pd(a, _mm256_set1_pd(kX), _mm256_set1_pd(kY), iterations);
  return sum_of_lanes<double>(a);
}

[[gnu::target("avx2,fma")]] double fma_avx2_sp(std::uint64_t iterations) noexcept {
  __m256 a[kAccumulators];
  for (__m256& v : a) v = _mm256_set1_ps(1.0F);
  if (iterations > 0) {
    fma_trips_ps(a, _mm256_set1_ps(static_cast<float>(kX)), _mm256_set1_ps(static_cast<float>(kY)), iterations);
  }
  return sum_of_lanes<float>(a);
}

double mul_add_sse2_dp(std::uint64_t iterations) noexcept {
  __m128d a[kAccumulators];
  for (__m128d& v : a) v = _mm_set1_pd(1.0);
  if (iterations > 0) mul_add_trips_pd(a, _mm_set1_pd(kX), _mm_set1_pd(kY), iterations);
  return sum_of_lanes<double>(a);
}

double mul_add_sse2_sp(std::uint64_t iterations) noexcept {
  __m128 a[kAccumulators];
  for (__m128& v : a) v = _mm_set1_ps(1.0F);
  if (iterations > 0) {
    mul_add_trips_ps(a, _mm_set1_ps(static_cast<float>(kX)), _mm_set1_ps(static_cast<float>(kY)), iterations);
  }
  return sum_of_lanes<float>(a);
}

struct FmaKernel {
  double (*run)(std::uint64_t iterations) noexcept = nullptr;
  double flops_per_iteration = 0.0;  // 2 per lane per accumulator
  double expected_result = 0.0;      // every lane at 1.0
};

FmaKernel kernel_for(Isa isa, bool single) {
  const auto make = [](double (*run)(std::uint64_t) noexcept, int lanes) {
    return FmaKernel{run, 2.0 * kAccumulators * lanes, 1.0 * kAccumulators * lanes};
  };
  switch (isa) {
    case Isa::avx512f:
      return single ? make(fma_avx512_sp, 16) : make(fma_avx512_dp, 8);
    case Isa::avx2_fma:
      return single ? make(fma_avx2_sp, 8) : make(fma_avx2_dp, 4);
    case Isa::sse2:
      break;
  }
  return single ? make(mul_add_sse2_sp, 4) : make(mul_add_sse2_dp, 2);
}

// XCR0 bits the OS sets when it saves the register state on context switches (Intel SDM
// Vol. 1, 13.3): SSE|AVX (0x6) for YMM, plus opmask, ZMM_Hi256 and Hi16_ZMM (0xe0) for ZMM.
// libgcc's __builtin_cpu_supports checks the same since GCC 8 (get_available_features in
// gcc/common/config/i386/cpuinfo.h); checking here keeps that promise for other compilers
// and older runtimes.
std::uint64_t os_enabled_state() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & bit_OSXSAVE) == 0) return 0;
  std::uint32_t low = 0, high = 0;
  asm volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (static_cast<std::uint64_t>(high) << 32) | low;
#else
  return 0;
#endif
}

// One worker pinned to each CPU running `kernel`, all released together (a PinnedTeam). A run
// lasts from the first worker's start to the last worker's finish, as the workers read the
// clock: the thread that waits on the barrier has no core of its own when there is a worker
// on every core, and wakes late (milliseconds; rates came out up to 2× too high when it read
// the clock itself).
class FmaTeam {
 public:
  FmaTeam(const ComputeOptions& options, const FmaKernel& kernel) : kernel_(kernel), results_(options.cpus.size(), 0.0), team_(options.cpus) {
    if (!team_.error().empty()) throw std::runtime_error(team_.error());
  }

  // Every worker runs `n` iterations. `worked`: the seconds from the first start to the last
  // finish (what a rate is over); `shortest`: the shortest worker's own run (what sizes one).
  PinnedTeam::Timing timed_run(std::uint64_t n) {
    return team_.run([&](std::size_t w) {
      // Every accumulator stays at its fixed point; a different sum means a broken kernel.
      if (const double result = kernel_.run(n); result != kernel_.expected_result) results_[w] = result;
    });
  }
  std::size_t workers() const { return team_.size(); }
  // The lowest share of its run's wall time a worker had its CPU.
  double min_cpu_share() const { return team_.least_cpu_share(); }
  // What went wrong for the workers: not on their CPUs, or a kernel result off its fixed point.
  std::string problems() const {
    std::string note = team_.placement_note();
    for (std::size_t w = 0; w < results_.size(); ++w) {
      if (results_[w] == 0.0) continue;
      note += (note.empty() ? "" : "; ") + std::string("worker ") + std::to_string(w) + ": kernel result " + std::to_string(results_[w]) +
              " (expected " + std::to_string(kernel_.expected_result) + ")";
    }
    return note;
  }

 private:
  const FmaKernel& kernel_;
  std::vector<double> results_;  // 0, or the first wrong result a worker's kernel returned
  PinnedTeam team_;
};

// Warm-up: the loop count doubles until a run lasts half of `seconds_per_point`, then grows so
// each repetition lasts at least `seconds_per_point`; both judged on the shortest worker's own
// run, so that a worker's wait for its CPU is never taken for work (as it once was by the
// bandwidth sweep's warm-up, src/calibrate/bandwidth.cpp).
ComputeSample run_team(const ComputeOptions& options, const FmaKernel& kernel) {
  FmaTeam team(options, kernel);
  const double target = std::max(options.seconds_per_point, 1e-4);
  std::uint64_t n = 1024;
  PinnedTeam::Timing timing = team.timed_run(n);
  while (timing.shortest < 0.5 * target) {
    n *= 2;
    timing = team.timed_run(n);
  }
  std::vector<double> rates;
  const int repetitions = std::max(options.repetitions, 1);
  int reruns = 0;
  int shared = 0;
  while (static_cast<int>(rates.size()) < repetitions) {
    if (timing.shortest < target) n = static_cast<std::uint64_t>(static_cast<double>(n) * 1.1 * target / std::max(timing.shortest, 1e-9)) + 1;
    timing = team.timed_run(n);
    // A repetition in which a worker had its core less than kMinCpuShare of the time measured
    // another process as well: run again (once per repetition at most), else kept and counted.
    if (team.min_cpu_share() < kMinCpuShare) {
      if (reruns < repetitions) {
        ++reruns;
        continue;
      }
      ++shared;
    }
    rates.push_back(static_cast<double>(team.workers()) * static_cast<double>(n) * kernel.flops_per_iteration / timing.worked / 1e9);
  }
  ComputeSample sample;
  const RepetitionStats stats = summarize_repetitions(rates);
  sample.best_gflops = stats.best;
  sample.median_gflops = stats.median;
  sample.spread = stats.spread;
  sample.repetitions = repetitions;
  sample.shared = shared;
  if (shared > 0) {
    sample.note = std::to_string(shared) + " of " + std::to_string(repetitions) + " repetitions shared a worker's CPU with another process";
  }
  if (const std::string problems = team.problems(); !problems.empty()) sample.note += (sample.note.empty() ? "" : "; ") + problems;
  return sample;
}

// One evaluation pass over a worker's own 4096 inputs in [-4, 4) per iteration: the engine's
// kernel as a layer runs it, without the memory traffic (16 KiB in and 16 KiB out stay in L1).
constexpr std::size_t kEvaluations = 4096;
template <OpKind K>
double evaluate(std::uint64_t iterations) noexcept {
  thread_local std::vector<float> x = [] {
    std::vector<float> v(kEvaluations);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = -4.0f + 8.0f * static_cast<float>(i) / static_cast<float>(v.size());
    return v;
  }();
  thread_local std::vector<float> y(kEvaluations);
  static const UnaryForward kernel = unary_definition(K)->form.forward;
  for (std::uint64_t k = 0; k < iterations; ++k) kernel(x.data(), y.data(), static_cast<std::int64_t>(kEvaluations), 0.0f);
  return 1.0;  // run_team's "expected result": the kernel has no accumulator to check
}

}  // namespace

std::vector<ComputeSample> measure_transcendentals(const ComputeOptions& options) {
  if (options.cpus.empty() || !options.single) return {};
  const auto kernel = [](double (*run)(std::uint64_t) noexcept) { return FmaKernel{run, static_cast<double>(kEvaluations), 1.0}; };
  std::vector<ComputeSample> samples;
  const std::pair<const char*, FmaKernel> kernels[] = {
      {"tanh_sp", kernel(&evaluate<OpKind::tanh>)}, {"exp_sp", kernel(&evaluate<OpKind::sigmoid>)}, {"erf_sp", kernel(&evaluate<OpKind::gelu>)}};
  for (const auto& [what, k] : kernels) {
    ComputeSample sample = run_team(options, k);
    sample.what = what;
    sample.isa = "hwprof engine kernel";
    samples.push_back(std::move(sample));
  }
  return samples;
}

const char* isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::sse2:
      return "sse2";
    case Isa::avx2_fma:
      return "avx2_fma";
    case Isa::avx512f:
      return "avx512f";
  }
  return "unknown";
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("sse2")) return isas;
  isas.push_back(Isa::sse2);
  const std::uint64_t xcr0 = os_enabled_state();
  const bool ymm_state = (xcr0 & 0x6U) == 0x6U;
  const bool zmm_state = ymm_state && (xcr0 & 0xe0U) == 0xe0U;
  if (ymm_state && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) isas.push_back(Isa::avx2_fma);
  if (zmm_state && __builtin_cpu_supports("avx512f")) isas.push_back(Isa::avx512f);
#endif
  return isas;
}

std::vector<ComputeSample> measure_fma(const ComputeOptions& options) {
  const std::vector<Isa> isas = supported_isas();
  if (isas.empty()) return {};
  return measure_fma(options, isas.back());
}

std::vector<ComputeSample> measure_fma(const ComputeOptions& options, Isa isa) {
  const std::vector<Isa> isas = supported_isas();
  if (options.cpus.empty() || std::find(isas.begin(), isas.end(), isa) == isas.end()) return {};
  std::vector<ComputeSample> samples;
  for (const bool single : {true, false}) {
    if (single ? !options.single : !options.dual) continue;
    ComputeSample sample = run_team(options, kernel_for(isa, single));
    sample.what = single ? "fma_sp" : "fma_dp";
    sample.isa = isa_name(isa);
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace hwprof::calibration
