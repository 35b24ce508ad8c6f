// Softmax along the middle axis of [outer, dim, inner], computed stably: the maximum is
// subtracted before exponentiating, sums are taken in double. inner == 1 (the last axis, as in
// attention and classifiers) walks each row contiguously; otherwise a block of up to
// kColumns neighbouring columns is processed together so that every pass reads whole rows of
// `inner` floats rather than striding through memory one column at a time.
#include <algorithm>
#include <limits>

#include "common/stages.hpp"
#include "nn/kernels.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::nn {
namespace {

using ops::exp_approx;

constexpr i64 kSoftmaxParallelMin = i64{1} << 14;  // exp makes each element dearer than a copy
constexpr i64 kColumns = 64;                       // columns per block when inner > 1 (state on the stack)

void softmax_row(const float* x, float* y, i64 dim) {
  const float max = ops::max_of(x, dim);
  double total = 0.0;
#pragma omp simd reduction(+ : total)
  for (i64 i = 0; i < dim; ++i) {
    y[i] = exp_approx(x[i] - max);
    total += static_cast<double>(y[i]);
  }
  const auto scale = static_cast<float>(1.0 / total);
#pragma omp simd
  for (i64 i = 0; i < dim; ++i) y[i] *= scale;
}

// Columns [j0, j0 + width) of one [dim, inner] slab.
void softmax_columns(const float* x, float* y, i64 dim, i64 inner, i64 width) {
  float max[kColumns];
  double total[kColumns];
  std::fill_n(max, width, -std::numeric_limits<float>::infinity());
  std::fill_n(total, width, 0.0);
  for (i64 k = 0; k < dim; ++k) {
    const float* xk = x + k * inner;
#pragma omp simd
    for (i64 j = 0; j < width; ++j) max[j] = std::max(max[j], xk[j]);
  }
  for (i64 k = 0; k < dim; ++k) {
    const float* xk = x + k * inner;
    float* yk = y + k * inner;
#pragma omp simd
    for (i64 j = 0; j < width; ++j) {
      yk[j] = exp_approx(xk[j] - max[j]);
      total[j] += static_cast<double>(yk[j]);
    }
  }
  float scale[kColumns];
  for (i64 j = 0; j < width; ++j) scale[j] = static_cast<float>(1.0 / total[j]);
  for (i64 k = 0; k < dim; ++k) {
    float* yk = y + k * inner;
#pragma omp simd
    for (i64 j = 0; j < width; ++j) yk[j] *= scale[j];
  }
}

// dx = y·(dy - Σ_k dy_k·y_k), the softmax Jacobian applied to dy.
void softmax_backward_row(const float* y, const float* dy, float* dx, i64 dim) {
  double dot = 0.0;
#pragma omp simd reduction(+ : dot)
  for (i64 i = 0; i < dim; ++i) dot += static_cast<double>(dy[i]) * static_cast<double>(y[i]);
  const auto d = static_cast<float>(dot);
#pragma omp simd
  for (i64 i = 0; i < dim; ++i) dx[i] = y[i] * (dy[i] - d);
}

void softmax_backward_columns(const float* y, const float* dy, float* dx, i64 dim, i64 inner, i64 width) {
  double dot[kColumns];
  std::fill_n(dot, width, 0.0);
  for (i64 k = 0; k < dim; ++k) {
    const float* yk = y + k * inner;
    const float* dyk = dy + k * inner;
#pragma omp simd
    for (i64 j = 0; j < width; ++j) dot[j] += static_cast<double>(dyk[j]) * static_cast<double>(yk[j]);
  }
  float d[kColumns];
  for (i64 j = 0; j < width; ++j) d[j] = static_cast<float>(dot[j]);
  for (i64 k = 0; k < dim; ++k) {
    const float* yk = y + k * inner;
    const float* dyk = dy + k * inner;
    float* dxk = dx + k * inner;
#pragma omp simd
    for (i64 j = 0; j < width; ++j) dxk[j] = yk[j] * (dyk[j] - d[j]);
  }
}

}  // namespace

void softmax_forward(const float* x, float* y, i64 outer, i64 dim, i64 inner) {
  const bool parallel = outer * dim * inner > kSoftmaxParallelMin;
  if (inner == 1) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
    for (i64 o = 0; o < outer; ++o) softmax_row(x + o * dim, y + o * dim, dim);
    return;
  }
  const i64 blocks = (inner + kColumns - 1) / kColumns;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
  for (i64 item = 0; item < outer * blocks; ++item) {
    const i64 o = item / blocks;
    const i64 j0 = item % blocks * kColumns;
    const i64 offset = o * dim * inner + j0;
    softmax_columns(x + offset, y + offset, dim, inner, std::min(kColumns, inner - j0));
  }
}

void softmax_backward(const float* y, const float* dy, float* dx, i64 outer, i64 dim, i64 inner) {
  if (dx == nullptr) return;
  const bool parallel = outer * dim * inner > kSoftmaxParallelMin;
  if (inner == 1) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
    for (i64 o = 0; o < outer; ++o) softmax_backward_row(y + o * dim, dy + o * dim, dx + o * dim, dim);
    return;
  }
  const i64 blocks = (inner + kColumns - 1) / kColumns;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
  for (i64 item = 0; item < outer * blocks; ++item) {
    const i64 o = item / blocks;
    const i64 j0 = item % blocks * kColumns;
    const i64 offset = o * dim * inner + j0;
    softmax_backward_columns(y + offset, dy + offset, dx + offset, dim, inner, std::min(kColumns, inner - j0));
  }
}

}  // namespace hwprof::nn
