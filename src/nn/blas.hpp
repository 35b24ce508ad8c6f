// What the dense kernels (linear, conv2d, attention) share around OpenBLAS: a row-major sgemm
// that accepts empty shapes, and the switch between OpenBLAS's threads and OpenMP's.
// Internal to src/nn.
#pragma once

#include <algorithm>
#include <cstring>

#include <cblas.h>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn::detail {

// Below this much work (multiply-adds, or elements moved) a loop runs on the calling thread:
// waking the OpenMP workers costs a few microseconds, more than the loop.
inline constexpr i64 kParallelWork = i64{1} << 15;

// C[m,n] = alpha·op(A)·op(B) + beta·C, row-major. Unlike cblas_sgemm it accepts m, n or k of
// zero (cblas rejects a leading dimension of 0, which an empty matrix has).
inline void sgemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float* a, i64 lda, const float* b, i64 ldb, float beta,
                  float* c, i64 ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (i64 i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      if (beta == 0.0f) {
        std::memset(row, 0, static_cast<std::size_t>(n) * sizeof(float));
      } else {
        for (i64 j = 0; j < n; ++j) row[j] *= beta;
      }
    }
    return;
  }
  // The sizes fit OpenBLAS's 32-bit integers: a tensor of 2^31 floats (8 GiB) in one operand
  // is beyond what the engine allocates for one layer.
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(std::max<i64>(lda, 1)), b,
              static_cast<blasint>(std::max<i64>(ldb, 1)), beta, c, static_cast<blasint>(std::max<i64>(ldc, 1)));
}

// OpenBLAS on one thread for a scope, so that each OpenMP thread can run GEMMs of its own
// (over samples, or over attention heads) without both pools fighting over the cores;
// restores the previous count. OpenBLAS's pthread build is safe to call from several threads
// at once. Its thread count is process-wide, which is why kernels are not re-entrant across
// the caller's threads (kernels.hpp).
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : saved_(openblas_get_num_threads()) {
    if (saved_ != 1) openblas_set_num_threads(1);
  }
  ~SingleThreadedBlas() {
    if (saved_ != 1) openblas_set_num_threads(saved_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

// Splits an m×n output among `threads` OpenMP threads, one panel each: column panels when the
// output is at least as wide as tall, row panels otherwise, boundaries on multiples of 16
// elements (whole cache lines of a row). Calls f(row0, row1, col0, col1) once per non-empty
// panel, each on its own thread; with one thread, f(0, m, 0, n) on the caller's.
template <class F>
void for_each_panel(i64 m, i64 n, int threads, F f) {
  const bool by_columns = n >= m;
  const i64 extent = by_columns ? n : m;
  const int parts = static_cast<int>(std::clamp<i64>(extent / 16, 1, std::max(threads, 1)));
  if (parts == 1) {
    f(i64{0}, m, i64{0}, n);
    return;
  }
  const auto bound = [&](int t) { return t == parts ? extent : extent * t / parts / 16 * 16; };
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int t = 0; t < parts; ++t) {
    const i64 lo = bound(t), hi = bound(t + 1);
    if (by_columns) {
      f(i64{0}, m, lo, hi);
    } else {
      f(lo, hi, i64{0}, n);
    }
  }
}

// sgemm on `threads` threads: the kernels' own OpenMP threads, each running a single-threaded
// sgemm on a panel of C (see for_each_panel), rather than OpenBLAS's pthread pool. With both
// pools, a GEMM that follows an OpenMP loop shares a core with an OpenMP worker that is still
// busy-waiting for the next region (libgomp spins before it sleeps), and runs at about half
// speed: measured on 2 cores, GPT-2's linears ran at 105-120 GFLOP/s after an OpenMP loop
// against 205-215 alone, while the panels on OpenMP's threads ran at 205-220 in either place.
// (The other way round costs little: OpenBLAS's idle workers yield the core.)
inline void parallel_sgemm(bool trans_a, bool trans_b, i64 m, i64 n, i64 k, float alpha, const float* a, i64 lda, const float* b, i64 ldb, float beta,
                           float* c, i64 ldc, int threads) {
  if (threads <= 1 || m * n * k < kParallelWork) {
    sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  SingleThreadedBlas single;
  for_each_panel(m, n, threads, [&](i64 i0, i64 i1, i64 j0, i64 j1) {
    const float* a_panel = trans_a ? a + i0 : a + i0 * lda;
    const float* b_panel = trans_b ? b + j0 * ldb : b + j0;
    sgemm(trans_a, trans_b, i1 - i0, j1 - j0, k, alpha, a_panel, lda, b_panel, ldb, beta, c + i0 * ldc + j0, ldc);
  });
}

}  // namespace hwprof::nn::detail
