// Element-wise add, gradient accumulation and the data-movement ops (concat, permute,
// select, gather). Data movement copies 4-byte elements as uint32 so that float32 and int32 tensors
// share one path and a float's bits (NaN payloads included) arrive unchanged.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

using Word = std::uint32_t;  // one element of either dtype

constexpr i64 kDataMovementParallelMin = i64{1} << 16;  // elements copied below which one thread runs
// Square tiles for a permute that moves the innermost input axis: 16 × 16 words touch 16
// cache lines on each side, which stay in L1 while the tile is transposed.
constexpr i64 kTile = 16;

void copy_words(const Word* from, Word* to, i64 n) {
  std::memcpy(to, from, static_cast<std::size_t>(n) * sizeof(Word));
}

// A permutation reduced to what the copy loops need: output axes in order with their sizes
// and input strides, size-1 axes dropped and neighbours that stay neighbours merged (so
// [B,T,H,hd] → [B,H,T,hd] is three axes and a contiguous run of hd words).
struct PermutePlan {
  std::vector<i64> size;       // per output axis
  std::vector<i64> in_stride;  // per output axis, in words
  i64 total = 1;
};

PermutePlan plan_permute(const std::vector<i64>& shape, const std::vector<i64>& perm) {
  const auto rank = shape.size();
  std::vector<i64> stride(rank, 1);
  for (auto k = rank; k-- > 1;) stride[k - 1] = stride[k] * shape[k];
  PermutePlan plan;
  for (std::size_t k = 0; k < rank; ++k) {
    const auto axis = static_cast<std::size_t>(perm[k]);
    const i64 s = shape[axis];
    const i64 t = stride[axis];
    plan.total *= s;
    if (s == 1) continue;
    if (!plan.size.empty() && plan.in_stride.back() == t * s) {
      plan.size.back() *= s;
      plan.in_stride.back() = t;
    } else {
      plan.size.push_back(s);
      plan.in_stride.push_back(t);
    }
  }
  return plan;
}

// The innermost input axis (stride 1) lands on output axis `a`, not the last one: for every
// position of the other axes, a [rows = size[a], cols = size[last]] matrix is transposed in
// kTile × kTile tiles, reading and writing whole cache lines.
void permute_tiled(const Word* in, Word* out, const PermutePlan& plan) {
  const std::size_t last = plan.size.size() - 1;
  std::size_t a = 0;
  while (plan.in_stride[a] != 1) ++a;
  const i64 rows = plan.size[a];
  const i64 cols = plan.size[last];
  const i64 col_stride_in = plan.in_stride[last];

  std::vector<i64> out_stride(plan.size.size(), 1);
  for (auto k = last; k-- > 0;) out_stride[k] = out_stride[k + 1] * plan.size[k + 1];
  const i64 row_stride_out = out_stride[a];
  std::vector<std::size_t> other_axes;
  for (std::size_t k = 0; k < last; ++k) {
    if (k != a) other_axes.push_back(k);
  }

  const i64 row_tiles = (rows + kTile - 1) / kTile;
  const i64 others = plan.total / (rows * cols);
  // One work item: one position of the other axes and one strip of kTile rows.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (plan.total > kDataMovementParallelMin)
  for (i64 item = 0; item < others * row_tiles; ++item) {
    i64 rest = item / row_tiles;
    i64 in_base = 0;
    i64 out_base = 0;
    for (auto k = other_axes.size(); k-- > 0;) {
      const std::size_t axis = other_axes[k];
      const i64 i = rest % plan.size[axis];
      rest /= plan.size[axis];
      in_base += i * plan.in_stride[axis];
      out_base += i * out_stride[axis];
    }
    const i64 r0 = item % row_tiles * kTile;
    const i64 r1 = std::min(rows, r0 + kTile);
    for (i64 c0 = 0; c0 < cols; c0 += kTile) {
      const i64 c1 = std::min(cols, c0 + kTile);
      for (i64 r = r0; r < r1; ++r) {
        const Word* src = in + in_base + r;
        Word* dst = out + out_base + r * row_stride_out;
        for (i64 c = c0; c < c1; ++c) dst[c] = src[c * col_stride_in];
      }
    }
  }
}

}  // namespace

void add_forward(const float* a, const float* b, float* y, i64 n) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kDataMovementParallelMin)
  for (i64 i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void accumulate(float* acc, const float* g, i64 n) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kDataMovementParallelMin)
  for (i64 i = 0; i < n; ++i) acc[i] += g[i];
}

void concat_forward(const std::vector<const void*>& xs, const std::vector<i64>& axis_sizes, void* y, i64 outer, i64 inner) {
  const auto parts = static_cast<i64>(xs.size());
  i64 axis_total = 0;
  for (i64 s : axis_sizes) axis_total += s;
  auto* out = static_cast<Word*>(y);
  // One item per (outer index, input): a contiguous block of axis_i·inner words.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * axis_total * inner > kDataMovementParallelMin)
  for (i64 item = 0; item < outer * parts; ++item) {
    const i64 o = item / parts;
    const auto part = static_cast<std::size_t>(item % parts);
    i64 axis_offset = 0;
    for (std::size_t q = 0; q < part; ++q) axis_offset += axis_sizes[q];
    const i64 block = axis_sizes[part] * inner;
    copy_words(static_cast<const Word*>(xs[part]) + o * block, out + (o * axis_total + axis_offset) * inner, block);
  }
}

void concat_backward(const float* dy, const std::vector<float*>& dxs, const std::vector<i64>& axis_sizes, i64 outer, i64 inner) {
  const auto parts = static_cast<i64>(dxs.size());
  i64 axis_total = 0;
  for (i64 s : axis_sizes) axis_total += s;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * axis_total * inner > kDataMovementParallelMin)
  for (i64 item = 0; item < outer * parts; ++item) {
    const i64 o = item / parts;
    const auto part = static_cast<std::size_t>(item % parts);
    if (dxs[part] == nullptr) continue;
    i64 axis_offset = 0;
    for (std::size_t q = 0; q < part; ++q) axis_offset += axis_sizes[q];
    const i64 block = axis_sizes[part] * inner;
    std::memcpy(dxs[part] + o * block, dy + (o * axis_total + axis_offset) * inner, static_cast<std::size_t>(block) * sizeof(float));
  }
}

void permute(const void* x, void* y, const std::vector<i64>& shape, const std::vector<i64>& perm) {
  const auto* in = static_cast<const Word*>(x);
  auto* out = static_cast<Word*>(y);
  const PermutePlan plan = plan_permute(shape, perm);
  if (plan.total == 0) return;
  if (plan.size.empty()) {  // every axis has size 1
    out[0] = in[0];
    return;
  }
  if (plan.in_stride.back() == 1) {
    // The innermost output axis is contiguous in the input: a strided view's copy of runs
    // (strided_copy.cpp walks and splits them across the threads).
    strided_copy(in, out, StridedView{plan.size, plan.in_stride, 0});
  } else {
    permute_tiled(in, out, plan);
  }
}

void select_forward(const void* x, void* y, i64 outer, i64 dim, i64 inner, i64 index) {
  const auto* in = static_cast<const Word*>(x);
  auto* out = static_cast<Word*>(y);
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * inner > kDataMovementParallelMin)
  for (i64 o = 0; o < outer; ++o) copy_words(in + (o * dim + index) * inner, out + o * inner, inner);
}

void select_backward(const float* dy, float* dx, i64 outer, i64 dim, i64 inner, i64 index) {
  if (dx == nullptr) return;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * dim * inner > kDataMovementParallelMin)
  for (i64 o = 0; o < outer; ++o) {
    float* slab = dx + o * dim * inner;
    std::memset(slab, 0, static_cast<std::size_t>(dim * inner) * sizeof(float));
    std::memcpy(slab + index * inner, dy + o * inner, static_cast<std::size_t>(inner) * sizeof(float));
  }
}

void gather_forward(const void* x, void* y, i64 outer, i64 dim, i64 inner, const std::vector<i64>& indices) {
  const auto* in = static_cast<const Word*>(x);
  auto* out = static_cast<Word*>(y);
  const auto count = static_cast<i64>(indices.size());
  // One item per output row: a contiguous block of `inner` words.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * count * inner > kDataMovementParallelMin)
  for (i64 item = 0; item < outer * count; ++item) {
    const i64 o = item / count;
    const i64 j = item % count;
    copy_words(in + (o * dim + indices[static_cast<std::size_t>(j)]) * inner, out + item * inner, inner);
  }
}

void gather_backward(const float* dy, float* dx, i64 outer, i64 dim, i64 inner, const std::vector<i64>& indices) {
  if (dx == nullptr) return;
  const auto count = static_cast<i64>(indices.size());
  // One item per outer position: its slab of dx is written by it alone, the rows in index order.
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outer * dim * inner > kDataMovementParallelMin)
  for (i64 o = 0; o < outer; ++o) {
    float* slab = dx + o * dim * inner;
    std::memset(slab, 0, static_cast<std::size_t>(dim * inner) * sizeof(float));
    for (i64 j = 0; j < count; ++j) {
      float* row = slab + indices[static_cast<std::size_t>(j)] * inner;
      const float* g = dy + (o * count + j) * inner;
      for (i64 i = 0; i < inner; ++i) row[i] += g[i];
    }
  }
}

}  // namespace hwprof::nn
