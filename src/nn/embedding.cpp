// Token embeddings, learned position embeddings, the class token and Swin's relative position
// bias, forward and backward. Parameter gradients are sums over the batch (or over tokens
// sharing an id); each one is summed by a single thread in row order, so results do not depend
// on the thread count.
#include <algorithm>
#include <cstring>

#include "common/stages.hpp"
#include "nn/kernels.hpp"
#include "ops/ops.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kEmbeddingParallelMin = i64{1} << 15;  // elements moved below which one thread runs
// Columns of dweight one thread owns in embedding_backward: 16 floats, one cache line, so
// threads never write to the same line.
constexpr i64 kGradientColumnBlock = 16;
// Elements of the [heads, N, N] bias gradient one thread sums over the windows at a time: 4 KiB
// of dbias that stays in L1 while every window's slice of dy streams past it.
constexpr i64 kBiasSumBlock = 1024;

void copy_row(const float* from, float* to, i64 d) {
  std::memcpy(to, from, static_cast<std::size_t>(d) * sizeof(float));
}

void add_row(const float* from, float* to, i64 d) {
#pragma omp simd
  for (i64 j = 0; j < d; ++j) to[j] += from[j];
}

}  // namespace

i64 embedding_forward(const std::int32_t* ids, const float* weight, float* y, i64 rows, i64 num_embeddings, i64 d) {
  // Every id is checked before any row is written, so a failure names the first bad position
  // whatever the thread count.
  for (i64 r = 0; r < rows; ++r) {
    if (ids[r] < 0 || ids[r] >= num_embeddings) return r;
  }
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * d > kEmbeddingParallelMin)
  for (i64 r = 0; r < rows; ++r) copy_row(weight + static_cast<i64>(ids[r]) * d, y + r * d, d);
  return -1;
}

// Ids repeat (a frequent token), so rows of dweight receive several additions: threads split
// the columns, never the rows. The ids were checked by embedding_forward.
void embedding_backward(const std::int32_t* ids, const float* dy, float* dweight, i64 rows, i64 d) {
  if (dweight == nullptr) return;
  const i64 blocks = (d + kGradientColumnBlock - 1) / kGradientColumnBlock;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * d > kEmbeddingParallelMin)
  for (i64 blk = 0; blk < blocks; ++blk) {
    const i64 j0 = blk * kGradientColumnBlock;
    const i64 width = std::min(kGradientColumnBlock, d - j0);
    for (i64 r = 0; r < rows; ++r) add_row(dy + r * d + j0, dweight + static_cast<i64>(ids[r]) * d + j0, width);
  }
}

void pos_embedding_forward(const float* x, const float* pos, float* y, i64 batch, i64 tokens, i64 d) {
  const i64 slab = tokens * d;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (batch * slab > kEmbeddingParallelMin)
  for (i64 b = 0; b < batch; ++b) {
    const float* xb = x + b * slab;
    float* yb = y + b * slab;
#pragma omp simd
    for (i64 i = 0; i < slab; ++i) yb[i] = xb[i] + pos[i];
  }
}

void pos_embedding_backward(const float* dy, float* dx, float* dpos, i64 batch, i64 tokens, i64 d) {
  const i64 slab = tokens * d;
  const bool parallel = batch * slab > kEmbeddingParallelMin;
  if (dx != nullptr && dx != dy) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
    for (i64 b = 0; b < batch; ++b) copy_row(dy + b * slab, dx + b * slab, slab);
  }
  if (dpos == nullptr) return;
    // dpos[t] += Σ_b dy[b, t]: threads split the positions, each sums the batch in order.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
  for (i64 t = 0; t < tokens; ++t) {
    for (i64 b = 0; b < batch; ++b) add_row(dy + b * slab + t * d, dpos + t * d, d);
  }
}

void cls_token_forward(const float* x, const float* cls, float* y, i64 batch, i64 tokens, i64 d) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (batch * (tokens + 1) * d > kEmbeddingParallelMin)
  for (i64 b = 0; b < batch; ++b) {
    float* yb = y + b * (tokens + 1) * d;
    copy_row(cls, yb, d);
    std::memcpy(yb + d, x + b * tokens * d, static_cast<std::size_t>(tokens * d) * sizeof(float));
  }
}

void cls_token_backward(const float* dy, float* dx, float* dcls, i64 batch, i64 tokens, i64 d) {
  if (dx != nullptr) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (batch * tokens * d > kEmbeddingParallelMin)
    for (i64 b = 0; b < batch; ++b) {
      std::memcpy(dx + b * tokens * d, dy + (b * (tokens + 1) + 1) * d, static_cast<std::size_t>(tokens * d) * sizeof(float));
    }
  }
  if (dcls == nullptr) return;
  for (i64 b = 0; b < batch; ++b) add_row(dy + b * (tokens + 1) * d, dcls, d);  // B·D additions: serial
}

void rel_pos_bias_gather(const float* table, float* bias, i64 heads, i64 wh, i64 ww) {
  const i64 n = wh * ww;
  const i64 pairs = n * n;
  for (i64 i = 0; i < n; ++i) {
    for (i64 j = 0; j < n; ++j) {
      const float* row = table + hwprof::ops::rel_pos_row(i, j, wh, ww) * heads;
      for (i64 h = 0; h < heads; ++h) bias[h * pairs + i * n + j] = row[h];
    }
  }
}

void rel_pos_bias_forward(const float* x, const float* bias, float* y, i64 outer, i64 slab) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * slab > kEmbeddingParallelMin)
  for (i64 o = 0; o < outer; ++o) {
    const float* xo = x + o * slab;
    float* yo = y + o * slab;
#pragma omp simd
    for (i64 k = 0; k < slab; ++k) yo[k] = xo[k] + bias[k];
  }
}

void rel_pos_bias_backward(const float* dy, float* dbias, float* dtable, i64 outer, i64 heads, i64 wh, i64 ww) {
  if (dtable == nullptr) return;
  const i64 n = wh * ww;
  const i64 pairs = n * n;
  const i64 slab = heads * pairs;
  const i64 blocks = (slab + kBiasSumBlock - 1) / kBiasSumBlock;
  // dbias[k] = Σ_o dy[o, k]: threads split the elements, each sums the windows in order.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * slab > kEmbeddingParallelMin)
  for (i64 blk = 0; blk < blocks; ++blk) {
    const i64 k0 = blk * kBiasSumBlock;
    const i64 width = std::min(kBiasSumBlock, slab - k0);
    copy_row(dy + k0, dbias + k0, width);
    for (i64 o = 1; o < outer; ++o) add_row(dy + o * slab + k0, dbias + k0, width);
  }
  // The scatter touches heads·N·N elements once (the sum above read `outer` times as many):
  // serial, in order.
  for (i64 i = 0; i < n; ++i) {
    for (i64 j = 0; j < n; ++j) {
      float* row = dtable + hwprof::ops::rel_pos_row(i, j, wh, ww) * heads;
      for (i64 h = 0; h < heads; ++h) row[h] += dbias[h * pairs + i * n + j];
    }
  }
}

}  // namespace hwprof::nn
