// where: y = condition ? a : b, the three broadcast to the output (NumPy's rule, ranks equal),
// and its gradient: dy where the condition picks a side, 0 elsewhere, summed over that side's
// broadcast axes.
//
// The output is walked row by row (a row: every axis but the last), each operand's row found
// from its strides (0 on a broadcast axis). The backward pass writes each input gradient once
// per output row when that input is not broadcast (rows in parallel); a broadcast one is
// summed by one thread in order, so that the sums do not race.
#include <algorithm>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kWhereParallelMin = i64{1} << 16;  // output elements below which one thread runs

struct RowOffsets {
  i64 c = 0, a = 0, b = 0;
};

RowOffsets where_row(i64 row, const WhereGeometry& g) {
  RowOffsets o;
  for (auto k = g.out.size() - 1; k-- > 0;) {
    const i64 i = row % g.out[k];
    row /= g.out[k];
    o.c += i * g.c_stride[k];
    o.a += i * g.a_stride[k];
    o.b += i * g.b_stride[k];
  }
  return o;
}

i64 where_rows(const WhereGeometry& g) {
  i64 rows = 1;
  for (std::size_t k = 0; k + 1 < g.out.size(); ++k) rows *= g.out[k];
  return rows;
}

}  // namespace

std::vector<i64> broadcast_strides(const std::vector<i64>& shape, const std::vector<i64>& out) {
  std::vector<i64> stride(shape.size(), 0);
  i64 s = 1;
  for (auto k = shape.size(); k-- > 0;) {
    stride[k] = shape[k] == 1 && out[k] != 1 ? 0 : s;
    s *= shape[k];
  }
  return stride;
}

void where_forward(const WhereGeometry& g, const float* c, const float* a, const float* b, float* y) {
  const std::size_t last = g.out.size() - 1;
  const i64 width = g.out[last];
  const i64 rows = where_rows(g);
  const i64 sc = g.c_stride[last], sa = g.a_stride[last], sb = g.b_stride[last];
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * width > kWhereParallelMin)
  for (i64 row = 0; row < rows; ++row) {
    const RowOffsets o = where_row(row, g);
    float* out = y + row * width;
    for (i64 j = 0; j < width; ++j) out[j] = c[o.c + j * sc] != 0.0f ? a[o.a + j * sa] : b[o.b + j * sb];
  }
}

void where_backward(const WhereGeometry& g, const float* c, const float* dy, float* da, i64 a_numel, float* db, i64 b_numel) {
  const std::size_t last = g.out.size() - 1;
  const i64 width = g.out[last];
  const i64 rows = where_rows(g);
  const i64 total = rows * width;
  if (da != nullptr) std::fill_n(da, a_numel, 0.0f);
  if (db != nullptr) std::fill_n(db, b_numel, 0.0f);
  const bool whole = (da == nullptr || a_numel == total) && (db == nullptr || b_numel == total);
  const i64 sc = g.c_stride[last], sa = g.a_stride[last], sb = g.b_stride[last];
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (whole && total > kWhereParallelMin)
  for (i64 row = 0; row < rows; ++row) {
    const RowOffsets o = where_row(row, g);
    const float* grad = dy + row * width;
    for (i64 j = 0; j < width; ++j) {
      const bool pick_a = c[o.c + j * sc] != 0.0f;
      if (pick_a && da != nullptr) da[o.a + j * sa] += grad[j];
      if (!pick_a && db != nullptr) db[o.b + j * sb] += grad[j];
    }
  }
}

}  // namespace hwprof::nn
