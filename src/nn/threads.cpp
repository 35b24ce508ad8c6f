// One thread count for both of the engine's pools: OpenMP's (element-wise and data-movement
// loops) and OpenBLAS's own pthreads (GEMMs). The kernels pass it to each parallel region
// explicitly, so a count set on one thread holds for kernels run on another.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cblas.h>
#include <omp.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/executor.hpp"
#include "nn/blas_core.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

std::atomic<int> g_threads{0};  // 0: never set, OpenMP's default (OMP_NUM_THREADS) holds

}  // namespace

int set_kernel_threads(int threads) {
  const int n = threads > 0 ? threads : hwprof::common::online_logical_cpus();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  g_threads.store(n, std::memory_order_relaxed);
  return n;
}

int kernel_threads() noexcept {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

bool detail::openblas_core_without_avx512(std::string_view core) noexcept {
  // OpenBLAS 0.3.21's cores with AVX-512 kernels (driver/others/dynamic.c, corename[]):
  // SkylakeX, Cooperlake, SapphireRapids. Any other — Haswell or Zen (AVX2), but also
  // Prescott (SSE3), which 0.3.21 falls back to on an Emerald Rapids it does not know (seen
  // on a lent 16-vCPU guest: GEMM at 210 GFLOP/s against an FMA peak of 1244) — leaves an
  // AVX-512 CPU's widest units idle.
  return core != "SkylakeX" && core != "Cooperlake" && core != "SapphireRapids";
}

}  // namespace hwprof::nn

namespace hwprof {

// src/cli/main.cpp sets OPENBLAS_CORETYPE=SkylakeX (and HWPROF_BLAS_CORE_BY=hwprof) and starts
// itself again when OpenBLAS 0.3.21 picked kernels without AVX-512 on a CPU that has it.
BlasInfo blas_info() {
  BlasInfo b;
  const char* config = openblas_get_config();
  const char* core = openblas_get_corename();
  b.config = config != nullptr ? config : "";
  b.core = core != nullptr ? core : "";
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  b.avx512_unused = avx512 && nn::detail::openblas_core_without_avx512(b.core);
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const char* by = std::getenv("HWPROF_BLAS_CORE_BY");
  if (forced == nullptr) {
    b.core_source = "OpenBLAS's CPU detection";
  } else if (by != nullptr && std::strcmp(by, "hwprof") == 0) {
    b.core_source = "set by hwprof: this CPU has AVX-512, which OpenBLAS's detection passed over";
  } else {
    b.core_source = std::string("OPENBLAS_CORETYPE=") + forced + " in the environment";
    if (b.avx512_unused) {
      b.advice = std::string("OPENBLAS_CORETYPE=") + forced + " holds OpenBLAS to its " + b.core +
                 " kernels, which use no AVX-512, on this AVX-512 CPU, whose AVX-512 kernels do up to twice the FLOPs "
                 "per cycle; unset it to let OpenBLAS (or, where its detection falls short, hwprof) choose them";
    }
  }
  return b;
}

}  // namespace hwprof
