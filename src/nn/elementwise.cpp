// Element-wise binary ops (add, sub, mul, div) between two activations with broadcasting, as
// ONNX exports them from PyTorch (a squeeze-and-excitation block's x * s, s of [N, C, 1, 1]).
// The output is walked row by row (its last axis), each row's input offsets found from the
// strides of the broadcast; backward sums each input's gradient over the axes it was broadcast
// along, one sample per thread (the batch axis is never broadcast, so samples never share a
// gradient element).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kBinaryParallelMin = i64{1} << 15;

// Offsets of row `row` (every axis but the last) into a and b.
struct RowOffsets {
  i64 a = 0, b = 0;
};
RowOffsets row_offsets(const Broadcast& p, i64 row) {
  RowOffsets o;
  const std::size_t rank = p.out.size();
  for (std::size_t d = rank - 1; d-- > 0;) {
    const i64 index = row % p.out[d];
    row /= p.out[d];
    o.a += index * p.a_stride[d];
    o.b += index * p.b_stride[d];
  }
  return o;
}

float apply(BinaryOp op, float x, float y) {
  switch (op) {
    case BinaryOp::add:
      return x + y;
    case BinaryOp::sub:
      return x - y;
    case BinaryOp::mul:
      return x * y;
    case BinaryOp::div:
      return x / y;
  }
  return 0.0f;
}

std::vector<i64> strides_of(const std::vector<i64>& shape) {
  std::vector<i64> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

}  // namespace

i64 Broadcast::numel() const noexcept {
  i64 n = 1;
  for (i64 d : out) n *= d;
  return n;
}

Broadcast make_broadcast(const std::vector<i64>& a, const std::vector<i64>& b) {
  Broadcast p;
  const std::vector<i64> sa = strides_of(a), sb = strides_of(b);
  for (std::size_t d = 0; d < a.size(); ++d) {
    p.out.push_back(std::max(a[d], b[d]));
    p.a_stride.push_back(a[d] == 1 && b[d] != 1 ? 0 : sa[d]);
    p.b_stride.push_back(b[d] == 1 && a[d] != 1 ? 0 : sb[d]);
  }
  return p;
}

void binary_forward(BinaryOp op, const float* a, const float* b, float* y, const Broadcast& p) {
  const i64 inner = p.out.back();
  const i64 rows = p.numel() / std::max<i64>(inner, 1);
  const i64 as = p.a_stride.back(), bs = p.b_stride.back();
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel : p.numel() > kBinaryParallelMin)
  for (i64 row = 0; row < rows; ++row) {
    const RowOffsets o = row_offsets(p, row);
    const float* ar = a + o.a;
    const float* br = b + o.b;
    float* yr = y + row * inner;
    for (i64 i = 0; i < inner; ++i) yr[i] = apply(op, ar[i * as], br[i * bs]);
  }
}

void binary_backward(BinaryOp op, const float* a, const float* b, const float* dy, float* da, float* db, const Broadcast& p) {
  const i64 inner = p.out.back();
  const i64 batch = p.out.front();
  const i64 rows_per_sample = p.numel() / std::max<i64>(inner, 1) / std::max<i64>(batch, 1);
  const i64 as = p.a_stride.back(), bs = p.b_stride.back();
  const i64 a_sample = p.a_stride.front(), b_sample = p.b_stride.front();
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel : p.numel() > kBinaryParallelMin)
  for (i64 s = 0; s < batch; ++s) {
    // This sample's gradients start at zero: broadcast elements receive several terms.
    if (da != nullptr) std::fill(da + s * a_sample, da + (s + 1) * a_sample, 0.0f);
    if (db != nullptr) std::fill(db + s * b_sample, db + (s + 1) * b_sample, 0.0f);
    for (i64 r = 0; r < rows_per_sample; ++r) {
      const i64 row = s * rows_per_sample + r;
      const RowOffsets o = row_offsets(p, row);
      const float* g = dy + row * inner;
      for (i64 i = 0; i < inner; ++i) {
        const i64 ia = o.a + i * as, ib = o.b + i * bs;
        switch (op) {
          case BinaryOp::add:
            if (da != nullptr) da[ia] += g[i];
            if (db != nullptr) db[ib] += g[i];
            break;
          case BinaryOp::sub:
            if (da != nullptr) da[ia] += g[i];
            if (db != nullptr) db[ib] -= g[i];
            break;
          case BinaryOp::mul:
            if (da != nullptr) da[ia] += g[i] * b[ib];
            if (db != nullptr) db[ib] += g[i] * a[ia];
            break;
          case BinaryOp::div:  // d(a/b)/da = 1/b, d(a/b)/db = -a/b²
            if (da != nullptr) da[ia] += g[i] / b[ib];
            if (db != nullptr) db[ib] -= g[i] * a[ia] / (b[ib] * b[ib]);
            break;
        }
      }
    }
  }
}

}  // namespace hwprof::nn
