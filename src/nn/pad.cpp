// pad, forward and backward: ONNX Pad's constant, reflect and edge modes (PyTorch's
// F.pad "constant", "reflect" and "replicate"), negative paddings cropping.
//
// The output is walked row by row (a row: every axis but the last). A row whose position on an
// outer axis falls in constant padding is the value throughout; any other row has one source
// row of the input, whose middle is copied with memcpy and whose borders are mapped element by
// element. The backward pass adds each output gradient into the input element it was copied
// from: reflect and edge padding copy border elements several times, so the rows of one
// position of the leading unpadded axes (the batch's at least) are summed by one thread, in
// order, and those positions are spread over the threads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kPadParallelMin = i64{1} << 16;  // output elements below which one thread runs

// The input position output position `o` of an axis copies, or -1 for the constant.
i64 pad_source(i64 o, i64 before, i64 size, PadFill fill) {
  const i64 i = o - before;
  if (i >= 0 && i < size) return i;
  switch (fill) {
    case PadFill::constant:
      return -1;
    case PadFill::edge:
      return i < 0 ? 0 : size - 1;
    case PadFill::reflect:  // one reflection: the padding is smaller than the axis (shape inference)
      return i < 0 ? -i : 2 * (size - 1) - i;
  }
  return -1;
}

// The input offset of output row `row` (over every axis but the last), or -1 where it lies in
// constant padding.
i64 source_row(i64 row, const PadGeometry& g) {
  const std::size_t last = g.in.size() - 1;
  i64 offset = 0;
  i64 stride = g.in[last];
  for (std::size_t k = last; k-- > 0;) {
    const i64 i = pad_source(row % g.out[k], g.before[k], g.in[k], g.fill);
    if (i < 0) return -1;
    offset += i * stride;
    stride *= g.in[k];
    row /= g.out[k];
  }
  return offset;
}

// The positions of the last axis that come straight from the input, [begin, end) of the output.
struct Middle {
  i64 begin = 0, end = 0;
};
Middle middle_of(const PadGeometry& g) {
  const std::size_t last = g.in.size() - 1;
  const i64 before = g.before[last];
  return Middle{std::clamp<i64>(before, 0, g.out[last]), std::clamp<i64>(before + g.in[last], 0, g.out[last])};
}

i64 pad_rows(const std::vector<i64>& shape) {
  i64 rows = 1;
  for (std::size_t k = 0; k + 1 < shape.size(); ++k) rows *= shape[k];
  return rows;
}

}  // namespace

void pad_forward(const PadGeometry& g, const float* x, float* y) {
  const std::size_t last = g.in.size() - 1;
  const i64 width = g.out[last];
  const i64 rows = pad_rows(g.out);
  const Middle mid = middle_of(g);
  const i64 before = g.before[last];
  const i64 size = g.in[last];
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * width > kPadParallelMin)
  for (i64 row = 0; row < rows; ++row) {
    float* out = y + row * width;
    const i64 from = source_row(row, g);
    if (from < 0) {
      std::fill_n(out, width, g.value);
      continue;
    }
    const float* in = x + from;
    for (i64 j = 0; j < mid.begin; ++j) {
      const i64 i = pad_source(j, before, size, g.fill);
      out[j] = i < 0 ? g.value : in[i];
    }
    if (mid.end > mid.begin) std::memcpy(out + mid.begin, in + (mid.begin - before), static_cast<std::size_t>(mid.end - mid.begin) * sizeof(float));
    for (i64 j = std::max(mid.end, mid.begin); j < width; ++j) {
      const i64 i = pad_source(j, before, size, g.fill);
      out[j] = i < 0 ? g.value : in[i];
    }
  }
}

void pad_backward(const PadGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const std::size_t last = g.in.size() - 1;
  const i64 width = g.out[last];
  const i64 size = g.in[last];
  const i64 before = g.before[last];
  // Units of parallel work: the positions of the leading axes that are not padded.
  i64 units = 1;
  for (std::size_t k = 0; k < last && g.before[k] == 0 && g.out[k] == g.in[k]; ++k) units *= g.in[k];
  const i64 rows_per_unit = pad_rows(g.out) / units;
  const i64 in_per_unit = pad_rows(g.in) * size / units;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows_per_unit * units * width > kPadParallelMin)
  for (i64 unit = 0; unit < units; ++unit) {
    std::fill_n(dx + unit * in_per_unit, in_per_unit, 0.0f);
    for (i64 r = 0; r < rows_per_unit; ++r) {
      const i64 row = unit * rows_per_unit + r;
      const i64 to = source_row(row, g);
      if (to < 0) continue;
      float* in = dx + to;
      const float* out = dy + row * width;
      for (i64 j = 0; j < width; ++j) {
        const i64 i = pad_source(j, before, size, g.fill);
        if (i >= 0) in[i] += out[j];
      }
    }
  }
}

}  // namespace hwprof::nn
