// The product of two activations (the matmul op): y[..., m, n] = a[..., m, k]·b[..., k, n], the
// axes before the last two broadcast as NumPy and torch.matmul do (right-aligned; an axis of
// 1 or a missing one is repeated), forward and backward.
//
// Each output matrix is one OpenBLAS sgemm. Many matrices (attention-like products over
// samples, windows and heads) run one per OpenMP thread on single-threaded BLAS; few large
// ones split each GEMM into panels (blas.hpp's parallel_sgemm). In the backward pass an
// operand matrix that several outputs used (broadcast) gathers their gradients one after
// another, so no two threads add into one matrix.
#include <algorithm>
#include <cstring>

#include "common/stages.hpp"
#include "nn/blas.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {

MatmulPlan make_matmul_plan(const std::vector<i64>& a, const std::vector<i64>& b) {
  MatmulPlan p;
  if (a.size() < 2 || b.size() < 2) return p;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  const std::size_t lead = std::max(a.size(), b.size()) - 2;
  std::vector<i64> out(lead), a_dims(lead, 1), b_dims(lead, 1);
  std::copy(a.begin(), a.end() - 2, a_dims.end() - static_cast<std::ptrdiff_t>(a.size() - 2));
  std::copy(b.begin(), b.end() - 2, b_dims.end() - static_cast<std::ptrdiff_t>(b.size() - 2));
  i64 count = 1;
  for (std::size_t d = 0; d < lead; ++d) {
    out[d] = std::max(a_dims[d], b_dims[d]);
    count *= out[d];
  }
  p.a_index.resize(static_cast<std::size_t>(count));
  p.b_index.resize(static_cast<std::size_t>(count));
  // Walk the output's leading index like an odometer, keeping each operand's matrix index.
  std::vector<i64> at(lead, 0);
  for (i64 o = 0; o < count; ++o) {
    i64 ia = 0, ib = 0;
    for (std::size_t d = 0; d < lead; ++d) {
      ia = ia * a_dims[d] + (a_dims[d] == 1 ? 0 : at[d]);
      ib = ib * b_dims[d] + (b_dims[d] == 1 ? 0 : at[d]);
    }
    p.a_index[static_cast<std::size_t>(o)] = ia;
    p.b_index[static_cast<std::size_t>(o)] = ib;
    for (std::size_t d = lead; d-- > 0;) {
      if (++at[d] < out[d]) break;
      at[d] = 0;
    }
  }
  i64 a_count = 1, b_count = 1;
  for (std::size_t d = 0; d < lead; ++d) {
    a_count *= a_dims[d];
    b_count *= b_dims[d];
  }
  p.a_shared = a_count < count;
  p.b_shared = b_count < count;
  p.out = out;
  p.out.push_back(p.m);
  p.out.push_back(p.n);
  return p;
}

namespace {

// Runs gemm(o, threads) for every output matrix o: one per OpenMP thread when there are enough
// of them, else one after another with every thread on each.
template <class Gemm>
void for_each_matrix(i64 count, i64 macs_per_matrix, bool independent, Gemm gemm) {
  const int threads = kernel_threads();
  if (independent && threads > 1 && count >= threads && count * macs_per_matrix >= detail::kParallelWork) {
    detail::SingleThreadedBlas single;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (i64 o = 0; o < count; ++o) gemm(o, 1);
    return;
  }
  for (i64 o = 0; o < count; ++o) gemm(o, threads);
}

}  // namespace

void matmul_forward(const MatmulPlan& p, const float* a, const float* b, float* y) {
  const i64 count = p.matrices();
  const i64 sa = p.m * p.k, sb = p.k * p.n, sy = p.m * p.n;
  for_each_matrix(count, p.m * p.n * p.k, true, [&](i64 o, int threads) {
    const auto i = static_cast<std::size_t>(o);
    detail::parallel_sgemm(false, false, p.m, p.n, p.k, 1.0f, a + p.a_index[i] * sa, p.k, b + p.b_index[i] * sb, p.n, 0.0f, y + o * sy, p.n, threads);
  });
}

void matmul_backward(const MatmulPlan& p, const float* a, const float* b, const float* dy, float* da, float* db) {
  const i64 count = p.matrices();
  const i64 sa = p.m * p.k, sb = p.k * p.n, sy = p.m * p.n;
  const i64 a_elements = (count == 0 ? 0 : *std::max_element(p.a_index.begin(), p.a_index.end()) + 1) * sa;
  const i64 b_elements = (count == 0 ? 0 : *std::max_element(p.b_index.begin(), p.b_index.end()) + 1) * sb;
  if (da != nullptr) {
    // dA = dY·Bᵀ, summed over the outputs that used the matrix.
    std::memset(da, 0, static_cast<std::size_t>(a_elements) * sizeof(float));
    for_each_matrix(count, p.m * p.n * p.k, !p.a_shared, [&](i64 o, int threads) {
      const auto i = static_cast<std::size_t>(o);
      detail::parallel_sgemm(false, true, p.m, p.k, p.n, 1.0f, dy + o * sy, p.n, b + p.b_index[i] * sb, p.n, 1.0f, da + p.a_index[i] * sa, p.k,
                             threads);
    });
  }
  if (db != nullptr) {
    // dB = Aᵀ·dY, likewise.
    std::memset(db, 0, static_cast<std::size_t>(b_elements) * sizeof(float));
    for_each_matrix(count, p.m * p.n * p.k, !p.b_shared, [&](i64 o, int threads) {
      const auto i = static_cast<std::size_t>(o);
      detail::parallel_sgemm(true, false, p.k, p.n, p.m, 1.0f, a + p.a_index[i] * sa, p.k, dy + o * sy, p.n, 1.0f, db + p.b_index[i] * sb, p.n,
                             threads);
    });
  }
}

}  // namespace hwprof::nn
