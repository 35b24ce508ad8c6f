// Compute ceilings: FMA-throughput kernels for AVX-512F, AVX2+FMA and SSE2 (compiled with
// target attributes, chosen at run time by CPU feature detection, so one portable binary
// reaches each machine's peak), GEMM ceilings from OpenBLAS, and the theoretical peak table.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/cpu_topology.hpp"  // pin_current_thread, which the measurements share
#include "common/stages.hpp"
#include "machine/peak_inputs.hpp"  // nominal_ghz, physical_cores, kTranscendentalCeilings

namespace hwprof::calibration {

enum class Isa { sse2, avx2_fma, avx512f };
const char* isa_name(Isa isa) noexcept;
// The ISAs this CPU (and OS: XCR0 state) supports, best last.
std::vector<Isa> supported_isas();

struct ComputeSample {
  std::string what;       // "fma_sp", "fma_dp", "gemm_sp", "gemm_dp"
  std::string isa;        // for fma: the ISA used; for gemm: "openblas <core>" (openblas_get_corename)
  std::int64_t size = 0;  // gemm: n of the n×n×n product at the best point; fma: 0
  double best_gflops = 0.0;
  double median_gflops = 0.0;
  double spread = 0.0;  // (max - min) / median over the repetitions
  int repetitions = 0;
  int shared = 0;    // repetitions kept although a worker (or OpenBLAS's team) had its CPUs less than 90 % of the time
  std::string note;  // empty, or what qualifies the number (e.g. a worker ran unpinned)
};

struct ComputeOptions {
  std::vector<int> cpus;  // one worker pinned to each (FMA kernels); OpenBLAS threads = cpus.size()
  bool single = true;     // measure SP
  bool dual = true;       // measure DP
  double seconds_per_point = 0.05;
  int repetitions = 5;
  std::vector<std::int64_t> gemm_sizes = {512, 1024, 1536, 2048};
};

// FMA peak with the best supported ISA, for SP and/or DP.
std::vector<ComputeSample> measure_fma(const ComputeOptions& options);
// The same with a given ISA (to compare ISAs, or with a peer's kernel); nothing when the CPU
// or OS does not support it.
std::vector<ComputeSample> measure_fma(const ComputeOptions& options, Isa isa);
// OpenBLAS sgemm/dgemm over the size sweep; the sample is the best size's.
std::vector<ComputeSample> measure_gemm(const ComputeOptions& options);
// The engine's own transcendental kernels (src/nn/activation.cpp) on data every worker keeps
// in L1, one worker per CPU: "tanh_sp" (tanh), "exp_sp" (sigmoid, one exp and a division) and
// "erf_sp" (GELU, x·Φ(x) through erf). The rates are G evaluations per second, in
// best_gflops and median_gflops: the compute roof of an element-wise op that evaluates the
// function once per element is that rate × the op's FLOPs per element (roofline.cpp), far
// below the FMA roof, since each evaluation is a polynomial of tens of instructions.
std::vector<ComputeSample> measure_transcendentals(const ComputeOptions& options);

// cores × GHz × FLOPs per cycle per core for the best ISA, with the assumptions in words.
struct TheoreticalPeak {
  std::string isa;
  int cores = 0;
  double ghz = 0.0;
  std::string ghz_source;  // e.g. "cpuinfo_max_freq", "/proc/cpuinfo MHz", "TSC"
  int sp_flops_per_cycle = 0;
  int dp_flops_per_cycle = 0;
  double sp_gflops = 0.0;
  double dp_gflops = 0.0;
  std::string assumptions;
};
TheoreticalPeak theoretical_peak(const std::string& vendor, int family, int model, Isa isa, int cores, double ghz, const std::string& ghz_source);

// One row of the table behind theoretical_peak: DP FLOPs per cycle per core for AVX-512F and
// for AVX2+FMA on a range of CPUs (0: the CPU lacks the ISA); SP is twice DP. SSE2 uses one
// figure for every CPU. The sources are cited in peak.cpp.
struct PeakTableRow {
  std::string vendor;                       // CPUID vendor: "GenuineIntel", "AuthenticAMD", ...
  int family = 0;                           // display family
  std::vector<std::pair<int, int>> models;  // display model ranges, inclusive
  std::string name;                         // "AMD Zen 4"
  int dp_avx512 = 0;
  int dp_avx2 = 0;
  std::string basis;  // the execution units behind the figures
};
const std::vector<PeakTableRow>& peak_table();

// A repetition in which a worker had its CPU less than this share of its wall time measured
// another process (or the hypervisor) too: it is run again, and counted where it stays so.
inline constexpr double kMinCpuShare = 0.9;
// CPU time of the calling thread, and of the whole process, in seconds.
double thread_cpu_seconds() noexcept;
double process_cpu_seconds() noexcept;

// Best (highest), median and spread ((max - min) / median) of per-repetition rates.
struct RepetitionStats {
  double best = 0.0;
  double median = 0.0;
  double spread = 0.0;
};
RepetitionStats summarize_repetitions(std::vector<double> rates);

}  // namespace hwprof::calibration
