// One thread count for both of the engine's pools: OpenMP's (element-wise and data-movement
// loops) and OpenBLAS's own pthreads (GEMMs). The kernels pass it to each parallel region
// explicitly, so a count set on one thread holds for kernels run on another.
#include <atomic>

#include <cblas.h>
#include <omp.h>

#include "calibrate/topology.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

std::atomic<int> g_threads{0};  // 0: never set, OpenMP's default (OMP_NUM_THREADS) holds

}  // namespace

int set_kernel_threads(int threads) {
  const int n = threads > 0 ? threads : hwprof::detail::online_logical_cpus();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
  g_threads.store(n, std::memory_order_relaxed);
  return n;
}

int kernel_threads() noexcept {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

}  // namespace hwprof::nn
