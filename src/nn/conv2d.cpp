// conv2d and conv3d, forward and backward, in three forms (a 3-D convolution is the same with
// "plane" read as the volume D·H·W and the taps T·R·S: im2col becomes vol2col, one 2-D im2col
// row per output depth slice):
// - depthwise (groups == in_channels == out_channels): direct loops over each plane, since
//   a GEMM with one input channel per group has nothing to reuse (2-D only; a depthwise 3-D
//   convolution takes the vol2col form);
// - 1×1, stride 1, no padding: the NCHW input of one sample already is the GEMM's right-hand
//   matrix [C/groups, H·W];
// - everything else: im2col, then one sgemm of the group's weights [K/groups, C/groups·R·S]
//   by the column matrix [C/groups·R·S, P·Q].
// Small images (ResNet's last stages: 7×7, 14×14) make thin GEMMs, for which OpenBLAS repacks
// the whole weight matrix per sample; there a column matrix holds a chunk of samples side by
// side, [C/groups·R·S, chunk·P·Q], and the product is scattered back to NCHW: one wider GEMM
// repacks the weights once per chunk instead of once per sample.
// The forward pass splits work into items (chunk of samples, group). Whole rounds of items go
// to the OpenMP threads, each running its item end to end with a single-threaded sgemm (no
// synchronisation; the columns a thread writes stay in its cache for its GEMM), which beat
// both threads working on each sample's steps in turn.
// Remaining items, and every item of the backward pass (they all add into one dw), run one
// after another with all threads on each step, GEMMs split into panels (blas.hpp).
#include <algorithm>
#include <cstring>

#include <omp.h>

#include "common/stages.hpp"
#include "hwprof/engine/tensor.hpp"
#include "nn/blas.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

// Samples are put side by side until a column matrix is this wide (see the header comment).
constexpr i64 kMinColumns = 256;
// A single sample's column matrix is made and multiplied in chunks of whole output depth
// slices of at most this many floats (at least one slice): a video clip's whole vol2col
// matrix is large (r3d_18's layer1: 1,728 rows by 8·56·56 columns, 173 MB), a chunk of it
// stays in the last-level cache between its writing and the GEMM that reads it. 2-D
// convolutions have one depth slice.
constexpr i64 kMaxColumnFloats = i64{1} << 22;

i64 floor_div(i64 a, i64 b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
i64 ceil_div(i64 a, i64 b) {
  return (a + b - 1) / b;
}

// The outputs o in [0, out) whose input coordinate o·stride + offset lies in [0, size).
struct Span {
  i64 lo = 0, hi = 0;
};
Span valid_outputs(i64 offset, i64 stride, i64 size, i64 out) {
  Span s;
  s.lo = std::min(out, offset >= 0 ? i64{0} : (-offset + stride - 1) / stride);
  s.hi = std::clamp(floor_div(size - 1 - offset, stride) + 1, s.lo, out);
  return s;
}

void fill_zero(float* p, i64 n) {
  if (n > 0) std::memset(p, 0, static_cast<std::size_t>(n) * sizeof(float));
}

// The sizes every form derives from the geometry.
struct Dims {
  i64 hw, pq;      // input and output plane sizes (3-D: volumes D·H·W, O·P·Q)
  i64 cg, kg;      // input and output channels per group
  i64 rs, crs;     // taps per channel (3-D: T·R·S); the GEMM's inner size C/groups·R·S
  bool depthwise;  // groups == C == K, 2-D
  bool pointwise;  // 1×1(×1), stride 1, no padding
};

Dims dims_of(const Conv2dGeometry& g) {
  Dims d{};
  d.hw = g.in_d * g.in_h * g.in_w;
  d.pq = g.out_d * g.out_h * g.out_w;
  d.cg = g.in_channels / g.groups;
  d.kg = g.out_channels / g.groups;
  d.rs = g.kernel_d * g.kernel_h * g.kernel_w;
  d.crs = d.cg * d.rs;
  const bool flat = g.in_d == 1 && g.out_d == 1 && g.kernel_d == 1;
  d.depthwise = flat && g.groups > 1 && g.groups == g.in_channels && g.groups == g.out_channels;
  d.pointwise = d.rs == 1 && g.stride_h == 1 && g.stride_w == 1 && g.stride_d == 1 && g.pad_h == 0 && g.pad_w == 0 && g.pad_d == 0 &&
                g.out_h == g.in_h && g.out_w == g.in_w && g.out_d == g.in_d;
  return d;
}

// How samples are grouped into items: `chunk` samples per column matrix (the last chunk may
// hold fewer), `chunks` of them per group.
struct Plan {
  i64 chunk = 1, chunks = 1, items = 1;
  i64 slices = 1;      // output depth slices per column matrix of a single-sample item (all: no split)
  i64 col_floats = 0;  // one item's column matrix (none for a pointwise single sample)
  i64 out_floats = 0;  // one item's product before the scatter to NCHW (none for one sample)
};

// `split_depth`: a single sample's columns may be made a chunk of depth slices at a time (the
// forward pass; the backward's GEMMs take the whole matrix).
Plan plan_of(const Conv2dGeometry& g, const Dims& d, i64 max_chunk, bool split_depth) {
  Plan p;
  p.chunk = d.pq >= kMinColumns ? 1 : std::clamp(ceil_div(kMinColumns, std::max<i64>(d.pq, 1)), i64{1}, max_chunk);
  p.chunks = ceil_div(g.batch, p.chunk);
  p.items = p.chunks * g.groups;
  const i64 out_plane = g.out_h * g.out_w;
  p.slices = g.out_d;
  if (split_depth && p.chunk == 1 && !d.pointwise) p.slices = std::clamp(kMaxColumnFloats / std::max<i64>(d.crs * out_plane, 1), i64{1}, g.out_d);
  p.col_floats = d.pointwise && p.chunk == 1 ? 0 : d.crs * (p.chunk == 1 ? p.slices * out_plane : p.chunk * d.pq);
  p.out_floats = p.chunk > 1 ? d.kg * p.chunk * d.pq : 0;
  return p;
}

// One item: `count` samples from `first`, one group; its pointers into x, y and w.
struct Item {
  i64 first, count, group;
  i64 x_offset;  // the group's first input plane of sample `first` (samples C·H·W apart)
  i64 y_offset;  // the group's first output plane of sample `first` (samples K·P·Q apart)
  i64 w_offset;  // the group's weights [K/groups, C/groups·R·S]
};

Item item_of(const Conv2dGeometry& g, const Dims& d, const Plan& p, i64 index) {
  Item it{};
  it.group = index % g.groups;
  it.first = index / g.groups * p.chunk;
  it.count = std::min(p.chunk, g.batch - it.first);
  it.x_offset = (it.first * g.in_channels + it.group * d.cg) * d.hw;
  it.y_offset = (it.first * g.out_channels + it.group * d.kg) * d.pq;
  it.w_offset = it.group * d.kg * d.crs;
  return it;
}

// ---- im2col and col2im --------------------------------------------------------------------

// One row of the column matrix: tap (r, s) of one input plane, for every output (p, q).
// Stride 1 (every 3×3 of ResNet) is a memcpy per output row; stride 2 a loop with a constant
// stride that GCC vectorises; other strides a plain loop.
void im2col_row(const Conv2dGeometry& g, const float* plane, i64 r, i64 s, float* dst) {
  const i64 q_offset = s * g.dilation_w - g.pad_w;
  const Span qs = valid_outputs(q_offset, g.stride_w, g.in_w, g.out_w);
  const Span ps = valid_outputs(r * g.dilation_h - g.pad_h, g.stride_h, g.in_h, g.out_h);
  const i64 n = qs.hi - qs.lo;
  fill_zero(dst, ps.lo * g.out_w);
  if (g.stride_h == 1 && g.stride_w == 1 && g.out_w == g.in_w && ps.hi > ps.lo && n > 0) {
    // "Same" convolutions at stride 1: output (p, q) reads input (p + shift_h, q + q_offset), one
    // constant shift of the whole plane. The valid rows are then one copy, and the columns that
    // fell into the padding (they hold the neighbouring input row's ends) are zeroed after. (A
    // tap with no valid column at all takes the loop below: the copy would start outside x.)
    const i64 first = ps.lo * g.out_w + qs.lo, last = (ps.hi - 1) * g.out_w + qs.hi;
    if (last > first) {
      std::memcpy(dst + first, plane + (ps.lo - g.pad_h + r * g.dilation_h) * g.in_w + qs.lo + q_offset,
                  static_cast<std::size_t>(last - first) * sizeof(float));
    }
    for (i64 p = ps.lo; p < ps.hi; ++p) {
      fill_zero(dst + p * g.out_w, qs.lo);
      fill_zero(dst + p * g.out_w + qs.hi, g.out_w - qs.hi);
    }
    fill_zero(dst + ps.hi * g.out_w, (g.out_h - ps.hi) * g.out_w);
    return;
  }
  for (i64 p = ps.lo; p < ps.hi; ++p) {
    float* out = dst + p * g.out_w;
    const float* in = plane + (p * g.stride_h - g.pad_h + r * g.dilation_h) * g.in_w + qs.lo * g.stride_w + q_offset;
    fill_zero(out, qs.lo);
    if (g.stride_w == 1) {
      if (n > 0) std::memcpy(out + qs.lo, in, static_cast<std::size_t>(n) * sizeof(float));
    } else if (g.stride_w == 2) {
      for (i64 q = 0; q < n; ++q) out[qs.lo + q] = in[2 * q];
    } else {
      for (i64 q = 0; q < n; ++q) out[qs.lo + q] = in[q * g.stride_w];
    }
    fill_zero(out + qs.hi, g.out_w - qs.hi);
  }
  fill_zero(dst + ps.hi * g.out_w, (g.out_h - ps.hi) * g.out_w);
}

// One row of the column matrix of a 3-D convolution: tap (t, r, s) of one input volume, for
// the outputs (o, p, q) of depth slices o in [o0, o1) — per slice, the 2-D row of input plane
// o·stride_d − pad_d + t·dilation_d, or zeros where that plane is padding. In 2-D, im2col_row.
void vol2col_row(const Conv2dGeometry& g, const float* volume, i64 t, i64 r, i64 s, i64 o0, i64 o1, float* dst) {
  const i64 plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  const Span os = valid_outputs(t * g.dilation_d - g.pad_d, g.stride_d, g.in_d, g.out_d);
  const i64 lo = std::clamp(os.lo, o0, o1), hi = std::clamp(os.hi, lo, o1);
  fill_zero(dst, (lo - o0) * out_plane);
  for (i64 o = lo; o < hi; ++o) {
    im2col_row(g, volume + (o * g.stride_d - g.pad_d + t * g.dilation_d) * plane, r, s, dst + (o - o0) * out_plane);
  }
  fill_zero(dst + (hi - o0) * out_plane, (o1 - hi) * out_plane);
}

// The column matrix [C/groups·T·R·S, count·(o1 − o0)·P·Q] of `count` samples (C·D·H·W apart
// from x), output depth slices [o0, o1); rows split over `threads`.
void im2col(const Conv2dGeometry& g, const Dims& d, const float* x, i64 count, i64 o0, i64 o1, float* col, int threads) {
  const i64 span = (o1 - o0) * g.out_h * g.out_w;  // one sample's columns
  const i64 width = count * span;
  const i64 rows = d.crs * count;
  const i64 taps_hw = g.kernel_h * g.kernel_w;
#pragma omp parallel for num_threads(threads) if (threads > 1 && rows * span >= detail::kParallelWork) schedule(static)
  for (i64 task = 0; task < rows; ++task) {
    const i64 row = task / count, sample = task % count;
    const i64 c = row / d.rs, t = row % d.rs / taps_hw, r = row / g.kernel_w % g.kernel_h, s = row % g.kernel_w;
    vol2col_row(g, x + sample * g.in_channels * d.hw + c * d.hw, t, r, s, o0, o1, col + row * width + sample * span);
  }
}

// One input plane's share of col2im: the column-gradient rows of taps (r, s) of one output
// depth slice (`src` at its tap (0, 0), rows `width` apart) added onto the plane they came from.
void col2im_plane(const Conv2dGeometry& g, const float* src, i64 width, float* plane) {
  for (i64 r = 0; r < g.kernel_h; ++r) {
    const Span ps = valid_outputs(r * g.dilation_h - g.pad_h, g.stride_h, g.in_h, g.out_h);
    for (i64 s = 0; s < g.kernel_w; ++s) {
      const i64 q_offset = s * g.dilation_w - g.pad_w;
      const Span qs = valid_outputs(q_offset, g.stride_w, g.in_w, g.out_w);
      const i64 n = qs.hi - qs.lo;
      const float* row = src + (r * g.kernel_w + s) * width;
      for (i64 p = ps.lo; p < ps.hi; ++p) {
        float* out = plane + (p * g.stride_h - g.pad_h + r * g.dilation_h) * g.in_w + qs.lo * g.stride_w + q_offset;
        const float* in = row + p * g.out_w + qs.lo;
        if (g.stride_w == 1) {
          for (i64 q = 0; q < n; ++q) out[q] += in[q];
        } else {
          for (i64 q = 0; q < n; ++q) out[q * g.stride_w] += in[q];
        }
      }
    }
  }
}

// dx volumes of `count` samples (overwritten) = the column gradients [C/groups·T·R·S,
// count·O·P·Q] summed back onto the inputs they came from. Threads split (sample, channel)
// volumes, so no two write one volume.
void col2im(const Conv2dGeometry& g, const Dims& d, const float* dcol, i64 count, float* dx, int threads) {
  const i64 width = count * d.pq;
  const i64 volumes = count * d.cg;
  const i64 plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w, taps_hw = g.kernel_h * g.kernel_w;
#pragma omp parallel for num_threads(threads) if (threads > 1 && volumes * d.rs * d.pq >= detail::kParallelWork) schedule(static)
  for (i64 task = 0; task < volumes; ++task) {
    const i64 sample = task / d.cg, c = task % d.cg;
    float* volume = dx + sample * g.in_channels * d.hw + c * d.hw;
    fill_zero(volume, d.hw);
    for (i64 t = 0; t < g.kernel_d; ++t) {
      const Span os = valid_outputs(t * g.dilation_d - g.pad_d, g.stride_d, g.in_d, g.out_d);
      const float* src = dcol + (c * d.rs + t * taps_hw) * width + sample * d.pq;
      for (i64 o = os.lo; o < os.hi; ++o) {
        col2im_plane(g, src + o * out_plane, width, volume + (o * g.stride_d - g.pad_d + t * g.dilation_d) * plane);
      }
    }
  }
}

// ---- im2col and pointwise forms ----------------------------------------------------------

// One item of the forward pass on `threads` threads; `col` and `product` are its workspaces.
void forward_item(const Conv2dGeometry& g, const Dims& d, const Plan& plan, const float* x, const float* w, const float* b, float* y, i64 index,
                  float* col, float* product, int threads) {
  const Item it = item_of(g, d, plan, index);
  const float* weights = w + it.w_offset;
  const float* bias = b != nullptr ? b + it.group * d.kg : nullptr;
  if (it.count == 1) {
    detail::SingleThreadedBlas single;
    // Straight into y, a chunk of output depth slices at a time (one chunk in 2-D: Plan::slices).
    // The bias goes in as C with beta = 1 (OpenBLAS would otherwise clear C in a pass of its
    // own), written by the thread whose GEMM panel reads it next.
    const i64 out_plane = g.out_h * g.out_w;
    for (i64 o0 = 0; o0 < g.out_d; o0 += plan.slices) {
      const i64 o1 = std::min(g.out_d, o0 + plan.slices), width = (o1 - o0) * out_plane;
      float* out = y + it.y_offset + o0 * out_plane;
      const float* rhs = x + it.x_offset + o0 * out_plane;  // pointwise: the input is the matrix
      i64 ldb = d.pq;
      if (!d.pointwise) {
        im2col(g, d, x + it.x_offset, 1, o0, o1, col, threads);
        rhs = col;
        ldb = width;
      }
      detail::for_each_panel(d.kg, width, threads, [&](i64 k0, i64 k1, i64 j0, i64 j1) {
        if (bias != nullptr) {
          for (i64 k = k0; k < k1; ++k) std::fill(out + k * d.pq + j0, out + k * d.pq + j1, bias[k]);
        }
        detail::sgemm(false, false, k1 - k0, j1 - j0, d.crs, 1.0f, weights + k0 * d.crs, d.crs, rhs + j0, ldb, bias != nullptr ? 1.0f : 0.0f,
                      out + k0 * d.pq + j0, d.pq);
      });
    }
    return;
  }
  im2col(g, d, x + it.x_offset, it.count, 0, g.out_d, col, threads);
  const float* rhs = col;
  const i64 width = it.count * d.pq;
  detail::parallel_sgemm(false, false, d.kg, width, d.crs, 1.0f, weights, d.crs, rhs, width, 0.0f, product, width, threads);
  // product[k, sample·P·Q + pq] → y[first + sample, group·K/groups + k, pq], plus the bias.
  const i64 rows = it.count * d.kg;
#pragma omp parallel for num_threads(threads) if (threads > 1 && rows * d.pq >= detail::kParallelWork) schedule(static)
  for (i64 task = 0; task < rows; ++task) {
    const i64 sample = task / d.kg, k = task % d.kg;
    const float* src = product + k * width + sample * d.pq;
    float* dst = y + it.y_offset + sample * g.out_channels * d.pq + k * d.pq;
    const float add = bias != nullptr ? bias[k] : 0.0f;
    for (i64 j = 0; j < d.pq; ++j) dst[j] = src[j] + add;
  }
}

// ---- depthwise --------------------------------------------------------------------------

// The depthwise loops are compiled twice, for AVX2 and for the portable baseline, and picked at
// load time: on 2 threads, MobileNet-like 3×3 layers at batch 8 took 41 ms forward and
// backward together so, 45 ms without, 50 ms with an AVX-512 version too (16 lanes are
// too wide for the short rows of 7×7 and 14×14 planes).

// y row += wv · x row over one tap. Strides 1 and 2 get loops of constant stride, which
// GCC vectorises.
inline void tap_forward(float* out, const float* in, i64 n, i64 stride, float wv) {
  if (stride == 1) {
    for (i64 q = 0; q < n; ++q) out[q] += wv * in[q];
  } else if (stride == 2) {
    for (i64 q = 0; q < n; ++q) out[q] += wv * in[2 * q];
  } else {
    for (i64 q = 0; q < n; ++q) out[q] += wv * in[q * stride];
  }
}

HWPROF_AVX2_CLONES void depthwise_plane_forward(const Conv2dGeometry& g, const float* in, const float* wc, float bias, float* out) {
  for (i64 p = 0; p < g.out_h; ++p) {
    float* row = out + p * g.out_w;
    std::fill_n(row, g.out_w, bias);
    for (i64 r = 0; r < g.kernel_h; ++r) {
      const i64 ih = p * g.stride_h - g.pad_h + r * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (i64 s = 0; s < g.kernel_w; ++s) {
        const i64 q_offset = s * g.dilation_w - g.pad_w;
        const Span qs = valid_outputs(q_offset, g.stride_w, g.in_w, g.out_w);
        tap_forward(row + qs.lo, in + ih * g.in_w + qs.lo * g.stride_w + q_offset, qs.hi - qs.lo, g.stride_w, wc[r * g.kernel_w + s]);
      }
    }
  }
}

void depthwise_forward(const Conv2dGeometry& g, const Dims& d, const float* x, const float* w, const float* b, float* y) {
  const i64 planes = g.batch * g.in_channels;
#pragma omp parallel for num_threads(kernel_threads()) if (planes * d.pq * d.rs >= detail::kParallelWork) schedule(static)
  for (i64 plane = 0; plane < planes; ++plane) {
    const i64 c = plane % g.in_channels;
    depthwise_plane_forward(g, x + plane * d.hw, w + c * d.rs, b != nullptr ? b[c] : 0.0f, y + plane * d.pq);
  }
}

HWPROF_AVX2_CLONES void depthwise_plane_dx(const Conv2dGeometry& g, const float* dy, const float* wc, float* dx) {
  fill_zero(dx, g.in_h * g.in_w);
  for (i64 p = 0; p < g.out_h; ++p) {
    const float* row = dy + p * g.out_w;
    for (i64 r = 0; r < g.kernel_h; ++r) {
      const i64 ih = p * g.stride_h - g.pad_h + r * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (i64 s = 0; s < g.kernel_w; ++s) {
        const i64 q_offset = s * g.dilation_w - g.pad_w;
        const Span qs = valid_outputs(q_offset, g.stride_w, g.in_w, g.out_w);
        float* out = dx + ih * g.in_w + qs.lo * g.stride_w + q_offset;
        const float* in = row + qs.lo;
        const float wv = wc[r * g.kernel_w + s];
        const i64 n = qs.hi - qs.lo;
        if (g.stride_w == 1) {
          for (i64 q = 0; q < n; ++q) out[q] += wv * in[q];
        } else {
          for (i64 q = 0; q < n; ++q) out[q * g.stride_w] += wv * in[q];
        }
      }
    }
  }
}

// dw[c, r, s] += Σ dy·x over channel c of every sample, per tap; each output row's sum in
// float (vectorised), the rows' sums in double.
HWPROF_AVX2_CLONES void depthwise_channel_dw(const Conv2dGeometry& g, const float* x, const float* dy, i64 c, float* dwc) {
  const i64 hw = g.in_h * g.in_w, pq = g.out_h * g.out_w;
  for (i64 r = 0; r < g.kernel_h; ++r) {
    const Span ps = valid_outputs(r * g.dilation_h - g.pad_h, g.stride_h, g.in_h, g.out_h);
    for (i64 s = 0; s < g.kernel_w; ++s) {
      const i64 q_offset = s * g.dilation_w - g.pad_w;
      const Span qs = valid_outputs(q_offset, g.stride_w, g.in_w, g.out_w);
      const i64 n = qs.hi - qs.lo;
      double total = 0.0;
      for (i64 sample = 0; sample < g.batch; ++sample) {
        const i64 plane = sample * g.in_channels + c;
        for (i64 p = ps.lo; p < ps.hi; ++p) {
          const float* in = x + plane * hw + (p * g.stride_h - g.pad_h + r * g.dilation_h) * g.in_w + qs.lo * g.stride_w + q_offset;
          const float* grad = dy + plane * pq + p * g.out_w + qs.lo;
          float sum = 0.0f;
          if (g.stride_w == 1) {
#pragma omp simd reduction(+ : sum)
            for (i64 q = 0; q < n; ++q) sum += grad[q] * in[q];
          } else {
#pragma omp simd reduction(+ : sum)
            for (i64 q = 0; q < n; ++q) sum += grad[q] * in[q * g.stride_w];
          }
          total += sum;
        }
      }
      dwc[r * g.kernel_w + s] += static_cast<float>(total);
    }
  }
}

// Σ a[0..n): blocks of 256 summed in float (vectorised), the blocks' sums in double.
double plane_sum(const float* a, i64 n) {
  constexpr i64 kBlock = 256;
  double total = 0.0;
  for (i64 i0 = 0; i0 < n; i0 += kBlock) {
    const i64 i1 = std::min(n, i0 + kBlock);
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (i64 i = i0; i < i1; ++i) sum += a[i];
    total += sum;
  }
  return total;
}

void depthwise_backward(const Conv2dGeometry& g, const Dims& d, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) {
  const int threads = kernel_threads();
  const bool parallel = g.batch * g.in_channels * d.pq * d.rs >= detail::kParallelWork;
  if (dx != nullptr) {
    const i64 planes = g.batch * g.in_channels;
#pragma omp parallel for num_threads(threads) if (parallel) schedule(static)
    for (i64 plane = 0; plane < planes; ++plane) {
      depthwise_plane_dx(g, dy + plane * d.pq, w + plane % g.in_channels * d.rs, dx + plane * d.hw);
    }
  }
  if (dw == nullptr && db == nullptr) return;
    // Threads split channels: each owns its channels' dw and db across the whole batch.
#pragma omp parallel for num_threads(threads) if (parallel) schedule(static)
  for (i64 c = 0; c < g.in_channels; ++c) {
    if (dw != nullptr) depthwise_channel_dw(g, x, dy, c, dw + c * d.rs);
    if (db != nullptr) {
      double total = 0.0;
      for (i64 n = 0; n < g.batch; ++n) total += plane_sum(dy + (n * g.in_channels + c) * d.pq, d.pq);
      db[c] += static_cast<float>(total);
    }
  }
}

}  // namespace

void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* b, float* y) {
  const Dims d = dims_of(g);
  if (d.depthwise) {
    depthwise_forward(g, d, x, w, b, y);
    return;
  }
  const int threads = kernel_threads();
  const bool parallel = threads > 1 && g.batch * g.out_channels * d.crs * d.pq >= detail::kParallelWork;
  // Chunks no bigger than one round's share of the samples, so that the items fill every thread.
  const Plan plan = plan_of(g, d, parallel ? std::max<i64>(1, g.batch * g.groups / threads) : g.batch, true);
  const i64 split = parallel ? plan.items / threads * threads : 0;
  const i64 slot_floats = plan.col_floats + plan.out_floats;
  Tensor workspace = Tensor::empty({split > 0 ? threads : 1, slot_floats});
  float* slots = workspace.f32();
  if (split > 0) {
    detail::SingleThreadedBlas single;
#pragma omp parallel num_threads(threads)
    {
      float* col = slots + omp_get_thread_num() * slot_floats;
#pragma omp for schedule(static)
      for (i64 item = 0; item < split; ++item) forward_item(g, d, plan, x, w, b, y, item, col, col + plan.col_floats, 1);
    }
  }
  for (i64 item = split; item < plan.items; ++item) {
    forward_item(g, d, plan, x, w, b, y, item, slots, slots + plan.col_floats, parallel ? threads : 1);
  }
}

void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db) {
  const Dims d = dims_of(g);
  if (d.depthwise) {
    depthwise_backward(g, d, x, w, dy, dx, dw, db);
    return;
  }
  const int threads = kernel_threads();
  if (db != nullptr) {
    // Threads split output channels; each sums its channel over the batch.
#pragma omp parallel for num_threads(threads) if (g.batch * g.out_channels * d.pq >= detail::kParallelWork) schedule(static)
    for (i64 k = 0; k < g.out_channels; ++k) {
      double total = 0.0;
      for (i64 n = 0; n < g.batch; ++n) total += plane_sum(dy + (n * g.out_channels + k) * d.pq, d.pq);
      db[k] += static_cast<float>(total);
    }
  }
  if (dx == nullptr && dw == nullptr) return;
  const Plan plan = plan_of(g, d, g.batch, false);
  Tensor workspace = Tensor::empty({plan.col_floats + plan.out_floats});
  float* col = workspace.f32();
  float* gathered = col + plan.col_floats;
  for (i64 index = 0; index < plan.items; ++index) {
    const Item it = item_of(g, d, plan, index);
    const i64 width = it.count * d.pq;
    const float* weights = w + it.w_offset;
    const float* grad = dy + it.y_offset;
    if (it.count > 1) {
      // dy of the chunk as one matrix [K/groups, count·P·Q], the layout of the columns.
      const i64 rows = it.count * d.kg;
#pragma omp parallel for num_threads(threads) if (rows * d.pq >= detail::kParallelWork) schedule(static)
      for (i64 task = 0; task < rows; ++task) {
        const i64 sample = task / d.kg, k = task % d.kg;
        std::copy_n(grad + sample * g.out_channels * d.pq + k * d.pq, d.pq, gathered + k * width + sample * d.pq);
      }
      grad = gathered;
    }
    const bool direct = d.pointwise && it.count == 1;
    if (dw != nullptr) {
      const float* rhs = x + it.x_offset;
      if (!direct) {
        im2col(g, d, rhs, it.count, 0, g.out_d, col, threads);
        rhs = col;
      }
      detail::parallel_sgemm(false, true, d.kg, d.crs, width, 1.0f, grad, width, rhs, width, 1.0f, dw + it.w_offset, d.crs, threads);
    }
    if (dx != nullptr) {
      if (direct) {
        detail::parallel_sgemm(true, false, d.cg, d.pq, d.kg, 1.0f, weights, d.crs, grad, d.pq, 0.0f, dx + it.x_offset, d.pq, threads);
      } else {
        detail::parallel_sgemm(true, false, d.crs, width, d.kg, 1.0f, weights, d.crs, grad, width, 0.0f, col, width, threads);
        col2im(g, d, col, it.count, dx + it.x_offset, threads);
      }
    }
  }
}

}  // namespace hwprof::nn
