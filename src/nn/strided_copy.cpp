// Strided views copied out (slice, expand, tile) and their gradients. A view is an output
// shape with an input stride per axis: a slice's strides are the input's times its steps
// (negative for a reversed slice) from the offset of its first element, an expand's are 0 on
// the broadcast axes, a tile's are an expand's over [.., copies, size, ..] pairs of axes.
//
// The copy loops see the view with size-1 axes dropped and neighbours that stay neighbours in
// the input merged (a channel split of [N, C, H, W] is [N, C/2·H·W] with the run contiguous),
// so the innermost loop is a memcpy where the run is contiguous, a fill where it is broadcast,
// and a strided gather only for a stepped slice of the last axis. Work items are groups of
// whole runs (or pieces of a long run) of about kViewItem elements, split among the threads when
// the copy is large. 4-byte elements are copied as words, as in data_movement.cpp.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

using ViewWord = std::uint32_t;

constexpr i64 kViewParallelMin = i64{1} << 16;  // elements below which one thread copies
constexpr i64 kViewItem = i64{1} << 14;         // elements a work item moves

StridedView view_simplified(const StridedView& v) {
  StridedView s;
  s.offset = v.offset;
  for (std::size_t k = 0; k < v.size.size(); ++k) {
    if (v.size[k] == 1) continue;
    if (!s.size.empty() && s.stride.back() == v.stride[k] * v.size[k]) {
      s.size.back() *= v.size[k];
      s.stride.back() = v.stride[k];
    } else {
      s.size.push_back(v.size[k]);
      s.stride.push_back(v.stride[k]);
    }
  }
  return s;
}

i64 view_total(const std::vector<i64>& size) {
  i64 n = 1;
  for (i64 s : size) n *= s;
  return n;
}

// The input offset of run `r` (r counted over every axis but the last), from the view's offset.
i64 view_run_offset(i64 r, const StridedView& v) {
  i64 offset = v.offset;
  for (auto k = v.size.size() - 1; k-- > 0;) {
    offset += r % v.size[k] * v.stride[k];
    r /= v.size[k];
  }
  return offset;
}

// Calls move(input offset, output offset, length) for every piece of every run, in work items
// spread over the threads: the runs of one item are walked like an odometer.
template <typename Move>
void for_each_view_run(const StridedView& v, Move move) {
  const i64 run = v.size.back();
  const i64 total = view_total(v.size);
  const i64 runs = total / run;
  const i64 step = v.stride.back();
  const bool parallel = total > kViewParallelMin;
  if (run >= kViewItem) {
    const i64 pieces = (run + kViewItem - 1) / kViewItem;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
    for (i64 item = 0; item < runs * pieces; ++item) {
      const i64 r = item / pieces;
      const i64 begin = item % pieces * kViewItem;
      move(view_run_offset(r, v) + begin * step, r * run + begin, std::min(kViewItem, run - begin));
    }
    return;
  }
  const std::size_t outer_axes = v.size.size() - 1;
  const i64 runs_per_item = kViewItem / run;
  const i64 items = (runs + runs_per_item - 1) / runs_per_item;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
  for (i64 item = 0; item < items; ++item) {
    const i64 first = item * runs_per_item;
    const i64 last = std::min(runs, first + runs_per_item);
    std::vector<i64> index(outer_axes);
    for (i64 k = static_cast<i64>(outer_axes) - 1, rest = first; k >= 0; --k) {
      const auto axis = static_cast<std::size_t>(k);
      index[axis] = rest % v.size[axis];
      rest /= v.size[axis];
    }
    i64 offset = view_run_offset(first, v);
    for (i64 r = first; r < last; ++r) {
      move(offset, r * run, run);
      for (auto k = outer_axes; k-- > 0;) {  // the next run: the last outer axis moves fastest
        offset += v.stride[k];
        if (++index[k] < v.size[k]) break;
        offset -= index[k] * v.stride[k];
        index[k] = 0;
      }
    }
  }
}

// Whether the axes of nonzero stride lay the input out in order, contiguously and whole, so
// that the gradient is a sum over the stride-0 axes into that layout (expand, tile).
bool view_covers_input(const StridedView& v, i64 x_numel) {
  i64 expected = 1;
  for (auto k = v.size.size(); k-- > 0;) {
    if (v.stride[k] == 0) continue;
    if (v.stride[k] != expected) return false;
    expected *= v.size[k];
  }
  return v.offset == 0 && expected == x_numel;
}

}  // namespace

void strided_copy(const void* x, void* y, const StridedView& view) {
  const auto* in = static_cast<const ViewWord*>(x);
  auto* out = static_cast<ViewWord*>(y);
  const StridedView v = view_simplified(view);
  if (v.size.empty()) {  // one element
    out[0] = in[v.offset];
    return;
  }
  const i64 step = v.stride.back();
  for_each_view_run(v, [&](i64 from, i64 to, i64 n) {
    if (step == 1) {
      std::memcpy(out + to, in + from, static_cast<std::size_t>(n) * sizeof(ViewWord));
    } else if (step == 0) {
      std::fill_n(out + to, n, in[from]);
    } else {
      for (i64 j = 0; j < n; ++j) out[to + j] = in[from + j * step];
    }
  });
}

void strided_copy_backward(const float* dy, float* dx, i64 dx_numel, const StridedView& view) {
  if (dx == nullptr) return;
  const StridedView v = view_simplified(view);
  const bool broadcast = std::find(v.stride.begin(), v.stride.end(), 0) != v.stride.end();
  if (broadcast && view_covers_input(v, dx_numel)) {
    // expand, tile: each input gradient is the sum of dy over the broadcast axes.
    ReduceGeometry g;
    g.shape = v.size;
    for (i64 s : v.stride) g.reduced.push_back(s == 0 ? 1 : 0);
    reduce_forward(g, dy, dx);
    return;
  }
  if (view_total(v.size) != dx_numel) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (dx_numel > kViewParallelMin)
    for (i64 i = 0; i < dx_numel; ++i) dx[i] = 0.0f;
  }
  if (v.size.empty()) {
    dx[v.offset] += dy[0];
    return;
  }
  if (broadcast) {  // no op makes such a view; summed in order, on one thread
    std::vector<i64> index(v.size.size(), 0);
    i64 offset = v.offset;
    for (i64 i = 0; i < view_total(v.size); ++i) {
      dx[offset] += dy[i];
      for (auto k = v.size.size(); k-- > 0;) {
        offset += v.stride[k];
        if (++index[k] < v.size[k]) break;
        offset -= index[k] * v.stride[k];
        index[k] = 0;
      }
    }
    return;
  }
  // A slice: every kept position is one input element, written once.
  const i64 step = v.stride.back();
  for_each_view_run(v, [&](i64 to, i64 from, i64 n) {
    if (step == 1) {
      std::memcpy(dx + to, dy + from, static_cast<std::size_t>(n) * sizeof(float));
    } else {
      for (i64 j = 0; j < n; ++j) dx[to + j * step] = dy[from + j];
    }
  });
}

}  // namespace hwprof::nn
