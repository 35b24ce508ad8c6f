// Sums and means over axes of a row-major tensor (the reduce op), forward and backward.
//
// Adjacent axes of one kind (both reduced, or both kept) are merged first, so that the tensor
// becomes alternating blocks of kept and reduced axes. Every output element then owns one
// group of k inputs, the same offsets from its own base: the unit of parallel work is the
// output element, and no two of them touch one input (the backward pass writes each input
// gradient once: no races, a fixed order of additions). Inside a group the innermost reduced
// block is walked as a strided row (contiguous when the reduction runs over the last axes).
//
// The sum is accumulated in double, then rounded to float (PyTorch's float sum is a cascade
// of float partial sums; both stay far within the 1e-4 the run checks hold them to); a mean
// divides that float sum by k, as ATen's mean does (sum, then div_). The backward of a mean
// divides dy by k at every input element, as PyTorch's dy.expand(...) / k, which is what the
// cost table counts.
#include <cstddef>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kReduceParallelMin = i64{1} << 15;  // input elements below which one thread runs

// One kind of axis (kept or reduced), outermost first: the sizes and the input strides.
struct AxisBlocks {
  std::vector<i64> size, stride;
  i64 count = 1;  // the product of the sizes
};

struct ReducePlan {
  AxisBlocks kept, reduced;
  i64 row = 1, row_stride = 1;  // the innermost reduced block, walked as a row
  i64 rows = 1;                 // reduced.count / row
};

// The input offset of a row-major index over some of the blocks (the first `blocks` of them).
i64 block_offset(i64 index, const AxisBlocks& b, std::size_t blocks) {
  i64 offset = 0;
  for (std::size_t d = blocks; d-- > 0;) {
    offset += (index % b.size[d]) * b.stride[d];
    index /= b.size[d];
  }
  return offset;
}

ReducePlan reduce_plan(const ReduceGeometry& g) {
  ReducePlan p;
  const std::size_t rank = g.shape.size();
  std::vector<i64> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * g.shape[d];
  for (std::size_t d = 0; d < rank; ++d) {
    if (g.shape[d] == 1) continue;  // a size-1 axis changes no offset, reduced or kept
    AxisBlocks& b = g.reduced[d] != 0 ? p.reduced : p.kept;
    const bool merges = !b.size.empty() && b.stride.back() == g.shape[d] * stride[d];  // adjacent in memory
    if (merges) {
      b.size.back() *= g.shape[d];
      b.stride.back() = stride[d];
    } else {
      b.size.push_back(g.shape[d]);
      b.stride.push_back(stride[d]);
    }
    b.count *= g.shape[d];
  }
  if (!p.reduced.size.empty()) {
    p.row = p.reduced.size.back();
    p.row_stride = p.reduced.stride.back();
  }
  p.rows = p.reduced.count / p.row;
  return p;
}

}  // namespace

void reduce_forward(const ReduceGeometry& g, const float* x, float* y) {
  const ReducePlan p = reduce_plan(g);
  const i64 outputs = p.kept.count;
  const std::size_t outer = p.reduced.size.empty() ? 0 : p.reduced.size.size() - 1;
  const float k = static_cast<float>(p.reduced.count);
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outputs * p.reduced.count > kReduceParallelMin)
  for (i64 o = 0; o < outputs; ++o) {
    const float* base = x + block_offset(o, p.kept, p.kept.size.size());
    double sum = 0.0;
    for (i64 r = 0; r < p.rows; ++r) {
      const float* row = base + block_offset(r, p.reduced, outer);
      for (i64 j = 0; j < p.row; ++j) sum += static_cast<double>(row[j * p.row_stride]);
    }
    y[o] = g.mean ? static_cast<float>(sum) / k : static_cast<float>(sum);
  }
}

void reduce_backward(const ReduceGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const ReducePlan p = reduce_plan(g);
  const i64 outputs = p.kept.count;
  const std::size_t outer = p.reduced.size.empty() ? 0 : p.reduced.size.size() - 1;
  const float k = static_cast<float>(p.reduced.count);
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (outputs * p.reduced.count > kReduceParallelMin)
  for (i64 o = 0; o < outputs; ++o) {
    float* base = dx + block_offset(o, p.kept, p.kept.size.size());
    const float d = dy[o];
    for (i64 r = 0; r < p.rows; ++r) {
      float* row = base + block_offset(r, p.reduced, outer);
      if (g.mean) {
        for (i64 j = 0; j < p.row; ++j) row[j * p.row_stride] = d / k;
      } else {
        for (i64 j = 0; j < p.row; ++j) row[j * p.row_stride] = d;
      }
    }
  }
}

}  // namespace hwprof::nn
