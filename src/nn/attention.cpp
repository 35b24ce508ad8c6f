// Multi-head self-attention with nn.MultiheadAttention's parameters (batch_first, no dropout):
//   qkv = x·W_inᵀ + b_in;  per head h: A = softmax(Q_h·K_hᵀ / sqrt(D/H)) (causal: keys j > i
//   masked), ctx_h = A·V_h;  y = ctx·W_outᵀ + b_out.
// Heads read Q, K and V in place in the qkv buffer (leading dimension 3D), and write their
// slice of ctx in place (leading dimension D): no copies between the projections and the
// per-head GEMMs.
// Per-head work is an item (sample, head). Whole rounds of items go to the OpenMP threads,
// each item's GEMMs single-threaded: one head's GEMMs (T×T×D/H) are too small to split well.
// What remains (a single head, say) runs item by item with every thread on each step.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

#include "common/stages.hpp"
#include "hwprof/engine/tensor.hpp"
#include "nn/blas.hpp"
#include "nn/kernels.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::nn {
namespace {

struct Sizes {
  i64 t, d, dh, bt, items;
  float scale;
};

Sizes sizes_of(const AttentionGeometry& g) {
  Sizes s{};
  s.t = g.tokens;
  s.d = g.dim;
  s.dh = g.dim / g.heads;
  s.bt = g.batch * g.tokens;
  s.items = g.batch * g.heads;
  s.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.dh)));
  return s;
}

// Softmax of each row of scores[T, T] over its unmasked keys (all T, or j <= i when causal),
// the maximum subtracted first so exp never overflows; masked keys get probability 0.
void softmax_rows(float* scores, i64 t, bool causal, int threads) {
#pragma omp parallel for num_threads(threads) if (threads > 1 && t * t >= detail::kParallelWork) schedule(static)
  for (i64 i = 0; i < t; ++i) {
    float* row = scores + i * t;
    const i64 n = causal ? i + 1 : t;
    float top = row[0];
#pragma omp simd reduction(max : top)
    for (i64 j = 0; j < n; ++j) top = std::max(top, row[j]);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (i64 j = 0; j < n; ++j) {
      // exp_approx vectorises where std::exp is a call: GPT-2's attention (256 tokens) ran at
      // 190-197 GFLOP/s so, 144-165 with std::exp.
      const float e = ops::exp_approx(row[j] - top);
      row[j] = e;
      sum += e;
    }
    const float inv = 1.0f / sum;
    for (i64 j = 0; j < n; ++j) row[j] *= inv;
    std::fill(row + n, row + t, 0.0f);
  }
}

// d scores = P ⊙ (dP − Σ_j P·dP), row by row, in place over dP: the softmax Jacobian-vector
// product. Masked keys have P = 0, so their gradient is 0 too.
void softmax_rows_backward(const float* probs, float* dprobs, i64 t, int threads) {
#pragma omp parallel for num_threads(threads) if (threads > 1 && t * t >= detail::kParallelWork) schedule(static)
  for (i64 i = 0; i < t; ++i) {
    const float* p = probs + i * t;
    float* dp = dprobs + i * t;
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (i64 j = 0; j < t; ++j) dot += p[j] * dp[j];
    for (i64 j = 0; j < t; ++j) dp[j] = p[j] * (dp[j] - dot);
  }
}

// Items [0, split) as whole rounds over the OpenMP threads, one thread each; the rest one after
// another with every thread on each. `run(item, slot, threads)` gets the workspace slot it may
// use and the threads it has.
template <class Run>
void run_items(i64 items, i64 macs_per_item, Run run) {
  const int threads = kernel_threads();
  const bool parallel = threads > 1 && items * macs_per_item >= detail::kParallelWork;
  const i64 split = parallel ? items / threads * threads : 0;
  detail::SingleThreadedBlas single;
  if (split > 0) {
#pragma omp parallel num_threads(threads)
    {
      const int slot = omp_get_thread_num();
#pragma omp for schedule(static)
      for (i64 item = 0; item < split; ++item) run(item, slot, 1);
    }
  }
  for (i64 item = split; item < items; ++item) run(item, 0, parallel ? threads : 1);
}

}  // namespace

i64 attention_saved_floats(const AttentionGeometry& g) {
  const i64 bt = g.batch * g.tokens;
  return bt * 3 * g.dim + g.batch * g.heads * g.tokens * g.tokens + bt * g.dim;
}

void attention_forward(const AttentionGeometry& g, const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out,
                       float* y, const AttentionSaved* saved) {
  const Sizes s = sizes_of(g);
  if (s.bt == 0) return;
  // Inference keeps one T×T score matrix per thread instead of every head's.
  const int threads = kernel_threads();
  Tensor qkv_buffer, ctx_buffer, probs_buffer;
  float* qkv = saved != nullptr ? saved->qkv : (qkv_buffer = Tensor::empty({s.bt, 3 * s.d})).f32();
  float* ctx = saved != nullptr ? saved->context : (ctx_buffer = Tensor::empty({s.bt, s.d})).f32();
  float* probs = saved != nullptr ? saved->probs : (probs_buffer = Tensor::empty({threads, s.t, s.t})).f32();

  linear_forward(x, w_in, b_in, qkv, s.bt, s.d, 3 * s.d);
  run_items(s.items, 2 * s.t * s.t * s.dh, [&](i64 item, int slot, int item_threads) {
    const i64 b = item / g.heads, h = item % g.heads;
    const float* q = qkv + b * s.t * 3 * s.d + h * s.dh;
    const float* k = q + s.d;
    const float* v = q + 2 * s.d;
    float* p = probs + (saved != nullptr ? item : slot) * s.t * s.t;
    detail::parallel_sgemm(false, true, s.t, s.t, s.dh, s.scale, q, 3 * s.d, k, 3 * s.d, 0.0f, p, s.t, item_threads);
    softmax_rows(p, s.t, g.causal, item_threads);
    detail::parallel_sgemm(false, false, s.t, s.dh, s.t, 1.0f, p, s.t, v, 3 * s.d, 0.0f, ctx + b * s.t * s.d + h * s.dh, s.d, item_threads);
  });
  linear_forward(ctx, w_out, b_out, y, s.bt, s.d, s.d);
}

void attention_backward(const AttentionGeometry& g, const float* x, const float* w_in, const float* w_out, const AttentionSaved& saved,
                        const float* dy, float* dx, float* dw_in, float* db_in, float* dw_out, float* db_out) {
  const Sizes s = sizes_of(g);
  if (s.bt == 0) return;
  const bool need_dqkv = dx != nullptr || dw_in != nullptr || db_in != nullptr;
  Tensor dctx_buffer = need_dqkv ? Tensor::empty({s.bt, s.d}) : Tensor();
  float* dctx = need_dqkv ? dctx_buffer.f32() : nullptr;
  linear_backward(saved.context, w_out, dy, dctx, dw_out, db_out, s.bt, s.d, s.d);
  if (!need_dqkv) return;

  const int threads = kernel_threads();
  Tensor dqkv_buffer = Tensor::empty({s.bt, 3 * s.d});
  Tensor dprobs_buffer = Tensor::empty({threads, s.t, s.t});
  float* dqkv = dqkv_buffer.f32();
  float* dprobs = dprobs_buffer.f32();
  run_items(s.items, 4 * s.t * s.t * s.dh, [&](i64 item, int slot, int item_threads) {
    const i64 b = item / g.heads, h = item % g.heads;
    const i64 head = b * s.t * 3 * s.d + h * s.dh;  // this head's Q columns in qkv and dqkv
    const float* q = saved.qkv + head;
    const float* k = q + s.d;
    const float* v = q + 2 * s.d;
    const float* p = saved.probs + item * s.t * s.t;
    const float* dc = dctx + b * s.t * s.d + h * s.dh;
    float* dp = dprobs + slot * s.t * s.t;
    float* dq = dqkv + head;
    float* dk = dq + s.d;
    float* dv = dq + 2 * s.d;
    const int n = item_threads;
    detail::parallel_sgemm(false, true, s.t, s.t, s.dh, 1.0f, dc, s.d, v, 3 * s.d, 0.0f, dp, s.t, n);  // dP = dctx·Vᵀ
    detail::parallel_sgemm(true, false, s.t, s.dh, s.t, 1.0f, p, s.t, dc, s.d, 0.0f, dv, 3 * s.d, n);  // dV = Pᵀ·dctx
    softmax_rows_backward(p, dp, s.t, n);
    // Scores were scale·Q·Kᵀ: dQ = scale·dS·K, dK = scale·dSᵀ·Q.
    detail::parallel_sgemm(false, false, s.t, s.dh, s.t, s.scale, dp, s.t, k, 3 * s.d, 0.0f, dq, 3 * s.d, n);
    detail::parallel_sgemm(true, false, s.t, s.dh, s.t, s.scale, dp, s.t, q, 3 * s.d, 0.0f, dk, 3 * s.d, n);
  });
  linear_backward(x, w_in, dqkv, dx, dw_in, db_in, s.bt, s.d, 3 * s.d);
}

}  // namespace hwprof::nn
