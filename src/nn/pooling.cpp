// 2-D and 3-D max, average and adaptive average pooling over NCHW and NCDHW, forward and
// backward, with PyTorch's window rules. Every (sample, channel) plane is independent, so planes are the
// unit of parallel work: a backward pass scatters only into its own plane, with no races and
// a fixed order of additions whatever the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kPoolingParallelMin = i64{1} << 15;  // window elements visited, below which one thread runs

void zero(float* p, i64 n) {
  std::memset(p, 0, static_cast<std::size_t>(n) * sizeof(float));
}

// One output's window along one axis: [start, end) clipped to the input, and for average
// pooling the length PyTorch divides by (clipped to the padded input only).
struct Window {
  i64 start = 0, end = 0, padded_length = 0;
};

Window pool_window(i64 out_index, i64 stride, i64 pad, i64 kernel, i64 in_size) {
  const i64 start = out_index * stride - pad;
  const i64 padded_end = std::min(start + kernel, in_size + pad);
  return {std::max<i64>(start, 0), std::min(padded_end, in_size), padded_end - start};
}

// max(a, b) where a NaN in b wins and a NaN already in a stays: PyTorch's max_pool2d
// propagates NaN. Branch-free, so the row loops below vectorise.
inline float nan_max(float a, float b) {
  return (b > a || b != b) ? b : a;
}

// Index in the plane of the window's first element equal to m, in row-major order (for a NaN
// m, its first NaN): PyTorch keeps the first maximum. An empty window has none (-1).
i64 first_index_of(const float* plane, i64 in_w, Window wh, Window ww, float m) {
  const bool nan = m != m;
  for (i64 h = wh.start; h < wh.end; ++h) {
    for (i64 w = ww.start; w < ww.end; ++w) {
      const float v = plane[h * in_w + w];
      if (nan ? v != v : v == m) return h * in_w + w;
    }
  }
  return -1;
}

i64 visits(const Pool2dGeometry& g) {
  return g.batch * g.channels * g.out_h * g.out_w * g.kernel_h * g.kernel_w;
}

// PyTorch's adaptive windows: [floor(i·in/out), ceil((i+1)·in/out)).
i64 adaptive_start(i64 i, i64 in, i64 out) {
  return i * in / out;
}
i64 adaptive_end(i64 i, i64 in, i64 out) {
  return ((i + 1) * in + out - 1) / out;
}

}  // namespace

// ---- max --------------------------------------------------------------------------------

// Row by row: the window's rows are first reduced column-wise into one row buffer that
// carries -inf for the padding (and a ceil_mode window's overhang) on both sides, so each
// output is then the maximum of kernel_w strided columns of it. Both loops are branch-free
// and vectorise (random data makes a compare-and-branch mispredict about half the time).
// Padding never wins; an empty window yields -inf and index -1.
namespace {

// One (sample, channel) plane; `r` is the row buffer, r[-pad_w] its first element.
HWPROF_AVX2_CLONES void maxpool_plane(const Pool2dGeometry& g, const float* xp, float* yp, std::int32_t* ap, float* r) {
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (i64 oh = 0; oh < g.out_h; ++oh) {
    const Window wh = pool_window(oh, g.stride_h, g.pad_h, g.kernel_h, g.in_h);
    std::fill(r, r + g.in_w, kMinusInf);
    for (i64 h = wh.start; h < wh.end; ++h) {
      const float* xr = xp + h * g.in_w;
#pragma omp simd
      for (i64 w = 0; w < g.in_w; ++w) r[w] = nan_max(r[w], xr[w]);
    }
    float* yr = yp + oh * g.out_w;
    std::fill(yr, yr + g.out_w, kMinusInf);
    const float* first = r - g.pad_w;  // the first window's first column
    for (i64 k = 0; k < g.kernel_w; ++k) {
#pragma omp simd
      for (i64 ow = 0; ow < g.out_w; ++ow) yr[ow] = nan_max(yr[ow], first[ow * g.stride_w + k]);
    }
    if (ap == nullptr) continue;
    for (i64 ow = 0; ow < g.out_w; ++ow) {
      const Window ww = pool_window(ow, g.stride_w, g.pad_w, g.kernel_w, g.in_w);
      // The value is the chosen element's own (a -0 and a +0 compare equal).
      const i64 at = first_index_of(xp, g.in_w, wh, ww, yr[ow]);
      ap[oh * g.out_w + ow] = static_cast<std::int32_t>(at);
      if (at >= 0) yr[ow] = xp[at];
    }
  }
}

}  // namespace

void maxpool2d_forward(const Pool2dGeometry& g, const float* x, float* y, std::int32_t* argmax) {
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w;
  const i64 out_plane = g.out_h * g.out_w;
  const i64 width = std::max(g.pad_w + g.in_w, (g.out_w - 1) * g.stride_w + g.kernel_w);
#pragma omp parallel num_threads(kernel_threads()) if (visits(g) > kPoolingParallelMin)
  {
    std::vector<float> row(static_cast<std::size_t>(width), -std::numeric_limits<float>::infinity());
#pragma omp for schedule(static)
    for (i64 p = 0; p < planes; ++p) {
      maxpool_plane(g, x + p * in_plane, y + p * out_plane, argmax != nullptr ? argmax + p * out_plane : nullptr, row.data() + g.pad_w);
    }
  }
}

void maxpool2d_backward(const Pool2dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w;
  const i64 out_plane = g.out_h * g.out_w;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * (in_plane + out_plane) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_plane;
    const float* dyp = dy + p * out_plane;
    const std::int32_t* ap = argmax + p * out_plane;
    zero(dxp, in_plane);
    // Overlapping windows (stride < kernel) may pick one input twice: its gradient sums.
    for (i64 o = 0; o < out_plane; ++o) {
      if (ap[o] >= 0) dxp[ap[o]] += dyp[o];
    }
  }
}

// ---- average ----------------------------------------------------------------------------
// PyTorch's avg_pool2d (count_include_pad=True): a window's divisor is its size clipped to
// the padded input, (hend - hstart)·(wend - wstart) taken before clipping to the input, so
// padding counts but a ceil_mode window's overhang past the padding does not.

void avgpool2d_forward(const Pool2dGeometry& g, const float* x, float* y) {
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w;
  const i64 out_plane = g.out_h * g.out_w;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_plane;
    float* yp = y + p * out_plane;
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      const Window wh = pool_window(oh, g.stride_h, g.pad_h, g.kernel_h, g.in_h);
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const Window ww = pool_window(ow, g.stride_w, g.pad_w, g.kernel_w, g.in_w);
        float total = 0.0f;
        for (i64 h = wh.start; h < wh.end; ++h) {
          for (i64 w = ww.start; w < ww.end; ++w) total += xp[h * g.in_w + w];
        }
        // A window wholly in padding (impossible under PyTorch's output-size rule) averages
        // nothing: 0, as in PyTorch.
        const bool empty = wh.start >= wh.end || ww.start >= ww.end;
        yp[oh * g.out_w + ow] = empty ? 0.0f : total / static_cast<float>(wh.padded_length * ww.padded_length);
      }
    }
  }
}

void avgpool2d_backward(const Pool2dGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w;
  const i64 out_plane = g.out_h * g.out_w;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_plane;
    const float* dyp = dy + p * out_plane;
    zero(dxp, in_plane);
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      const Window wh = pool_window(oh, g.stride_h, g.pad_h, g.kernel_h, g.in_h);
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const Window ww = pool_window(ow, g.stride_w, g.pad_w, g.kernel_w, g.in_w);
        const float share = dyp[oh * g.out_w + ow] / static_cast<float>(wh.padded_length * ww.padded_length);
        for (i64 h = wh.start; h < wh.end; ++h) {
          for (i64 w = ww.start; w < ww.end; ++w) dxp[h * g.in_w + w] += share;
        }
      }
    }
  }
}

// ---- adaptive average -------------------------------------------------------------------

void adaptive_avgpool2d_forward(const float* x, float* y, i64 n, i64 c, i64 h, i64 w, i64 out_h, i64 out_w) {
  const i64 planes = n * c;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * h * w > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * h * w;
    float* yp = y + p * out_h * out_w;
    for (i64 oh = 0; oh < out_h; ++oh) {
      const i64 h0 = adaptive_start(oh, h, out_h);
      const i64 h1 = adaptive_end(oh, h, out_h);
      for (i64 ow = 0; ow < out_w; ++ow) {
        const i64 w0 = adaptive_start(ow, w, out_w);
        const i64 w1 = adaptive_end(ow, w, out_w);
        // Global pooling averages whole planes (56·56 values in a ResNet): sum in double.
        double total = 0.0;
        for (i64 i = h0; i < h1; ++i) {
          for (i64 j = w0; j < w1; ++j) total += static_cast<double>(xp[i * w + j]);
        }
        yp[oh * out_w + ow] = static_cast<float>(total / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
  }
}

void adaptive_avgpool2d_backward(const float* dy, float* dx, i64 n, i64 c, i64 h, i64 w, i64 out_h, i64 out_w) {
  if (dx == nullptr) return;
  const i64 planes = n * c;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * h * w > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * h * w;
    const float* dyp = dy + p * out_h * out_w;
    zero(dxp, h * w);
    for (i64 oh = 0; oh < out_h; ++oh) {
      const i64 h0 = adaptive_start(oh, h, out_h);
      const i64 h1 = adaptive_end(oh, h, out_h);
      for (i64 ow = 0; ow < out_w; ++ow) {
        const i64 w0 = adaptive_start(ow, w, out_w);
        const i64 w1 = adaptive_end(ow, w, out_w);
        const float share = dyp[oh * out_w + ow] / static_cast<float>((h1 - h0) * (w1 - w0));
        for (i64 i = h0; i < h1; ++i) {
          for (i64 j = w0; j < w1; ++j) dxp[i * w + j] += share;
        }
      }
    }
  }
}

// ---- 3-D ------------------------------------------------------------------------------
// PyTorch's max_pool3d, avg_pool3d (count_include_pad) and adaptive_avg_pool3d: the 2-D rules
// with a depth axis, one (sample, channel) volume per unit of parallel work. Video models pool
// little (r3d_18 only at its head), so these are the direct loops.
namespace {

i64 visits(const Pool3dGeometry& g) {
  return g.batch * g.channels * g.out_d * g.out_h * g.out_w * g.kernel_d * g.kernel_h * g.kernel_w;
}

// The three axes' windows of output (od, oh, ow).
struct Windows3 {
  Window d, h, w;
};
Windows3 windows_of(const Pool3dGeometry& g, i64 od, i64 oh, i64 ow) {
  return {pool_window(od, g.stride_d, g.pad_d, g.kernel_d, g.in_d), pool_window(oh, g.stride_h, g.pad_h, g.kernel_h, g.in_h),
          pool_window(ow, g.stride_w, g.pad_w, g.kernel_w, g.in_w)};
}

// Calls f(flat input index) over a window, in (d, h, w) order.
template <typename F>
void for_each_in(const Pool3dGeometry& g, const Windows3& win, F&& f) {
  for (i64 d = win.d.start; d < win.d.end; ++d) {
    for (i64 h = win.h.start; h < win.h.end; ++h) {
      for (i64 w = win.w.start; w < win.w.end; ++w) f((d * g.in_h + h) * g.in_w + w);
    }
  }
}

// Calls f(flat output index, windows) for every output of a volume.
template <typename F>
void for_each_output(const Pool3dGeometry& g, F&& f) {
  for (i64 od = 0; od < g.out_d; ++od) {
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      for (i64 ow = 0; ow < g.out_w; ++ow) f((od * g.out_h + oh) * g.out_w + ow, windows_of(g, od, oh, ow));
    }
  }
}

i64 in_volume(const Pool3dGeometry& g) {
  return g.in_d * g.in_h * g.in_w;
}
i64 out_volume(const Pool3dGeometry& g) {
  return g.out_d * g.out_h * g.out_w;
}

}  // namespace

void maxpool3d_forward(const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax) {
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_volume(g);
    float* yp = y + p * out_volume(g);
    std::int32_t* ap = argmax != nullptr ? argmax + p * out_volume(g) : nullptr;
    for_each_output(g, [&](i64 o, const Windows3& win) {
      float m = -std::numeric_limits<float>::infinity();
      i64 at = -1;
      // PyTorch's rule (its max_pool3d kernels): a larger value or a NaN takes the place; the
      // window's first element starts it, so an all -inf window still points into the input.
      for_each_in(g, win, [&](i64 i) {
        const float v = xp[i];
        if (at < 0 || v > m || v != v) {
          m = v;
          at = i;
        }
      });
      yp[o] = m;
      if (ap != nullptr) ap[o] = static_cast<std::int32_t>(at);
    });
  }
}

namespace {

// The input positions of each output's window along one axis that fall inside the input:
// at[begin[o] .. begin[o + 1]) for output o (a dilated window's elements, the padding left out).
struct AxisTaps {
  std::vector<i64> at, begin;
  AxisTaps(i64 out, i64 stride, i64 pad, i64 kernel, i64 dilation, i64 in) {
    begin.reserve(static_cast<std::size_t>(out) + 1);
    for (i64 o = 0; o < out; ++o) {
      begin.push_back(static_cast<i64>(at.size()));
      for (i64 t = 0; t < kernel; ++t) {
        const i64 i = o * stride - pad + t * dilation;
        if (i >= 0 && i < in) at.push_back(i);
      }
    }
    begin.push_back(static_cast<i64>(at.size()));
  }
};

}  // namespace

void maxpool_dilated_forward(const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax) {
  const i64 planes = g.batch * g.channels;
  // Each axis's taps, computed once for every plane.
  const AxisTaps td(g.out_d, g.stride_d, g.pad_d, g.kernel_d, g.dilation_d, g.in_d);
  const AxisTaps th(g.out_h, g.stride_h, g.pad_h, g.kernel_h, g.dilation_h, g.in_h);
  const AxisTaps tw(g.out_w, g.stride_w, g.pad_w, g.kernel_w, g.dilation_w, g.in_w);
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_volume(g);
    float* yp = y + p * out_volume(g);
    std::int32_t* ap = argmax != nullptr ? argmax + p * out_volume(g) : nullptr;
    i64 o = 0;
    for (i64 od = 0; od < g.out_d; ++od) {
      for (i64 oh = 0; oh < g.out_h; ++oh) {
        for (i64 ow = 0; ow < g.out_w; ++ow, ++o) {
          // PyTorch's rule (the other max kernels'): a larger value or a NaN takes the place.
          float m = -std::numeric_limits<float>::infinity();
          i64 best = -1;
          for (i64 a = td.begin[od]; a < td.begin[od + 1]; ++a) {
            for (i64 b = th.begin[oh]; b < th.begin[oh + 1]; ++b) {
              const float* row = xp + (td.at[a] * g.in_h + th.at[b]) * g.in_w;
              for (i64 c = tw.begin[ow]; c < tw.begin[ow + 1]; ++c) {
                const float v = row[tw.at[c]];
                if (best < 0 || v > m || v != v) {
                  m = v;
                  best = row + tw.at[c] - xp;
                }
              }
            }
          }
          yp[o] = m;
          if (ap != nullptr) ap[o] = static_cast<std::int32_t>(best);
        }
      }
    }
  }
}

void maxpool3d_backward(const Pool3dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * (in_volume(g) + out_volume(g)) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_volume(g);
    const float* dyp = dy + p * out_volume(g);
    const std::int32_t* ap = argmax + p * out_volume(g);
    zero(dxp, in_volume(g));
    for (i64 o = 0; o < out_volume(g); ++o) {
      if (ap[o] >= 0) dxp[ap[o]] += dyp[o];
    }
  }
}

void avgpool3d_forward(const Pool3dGeometry& g, const float* x, float* y) {
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_volume(g);
    float* yp = y + p * out_volume(g);
    for_each_output(g, [&](i64 o, const Windows3& win) {
      float total = 0.0f;
      for_each_in(g, win, [&](i64 i) { total += xp[i]; });
      const bool empty = win.d.start >= win.d.end || win.h.start >= win.h.end || win.w.start >= win.w.end;
      yp[o] = empty ? 0.0f : total / static_cast<float>(win.d.padded_length * win.h.padded_length * win.w.padded_length);
    });
  }
}

void avgpool3d_backward(const Pool3dGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (visits(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_volume(g);
    const float* dyp = dy + p * out_volume(g);
    zero(dxp, in_volume(g));
    for_each_output(g, [&](i64 o, const Windows3& win) {
      const float share = dyp[o] / static_cast<float>(win.d.padded_length * win.h.padded_length * win.w.padded_length);
      for_each_in(g, win, [&](i64 i) { dxp[i] += share; });
    });
  }
}

namespace {

// adaptive_avgpool2d's windows along each axis (g's kernel, stride and padding are unused).
Windows3 adaptive_windows(const Pool3dGeometry& g, i64 od, i64 oh, i64 ow) {
  const auto axis = [](i64 i, i64 in, i64 out) {
    const i64 start = adaptive_start(i, in, out), end = adaptive_end(i, in, out);
    return Window{start, end, end - start};
  };
  return {axis(od, g.in_d, g.out_d), axis(oh, g.in_h, g.out_h), axis(ow, g.in_w, g.out_w)};
}

template <typename F>
void for_each_adaptive_output(const Pool3dGeometry& g, F&& f) {
  for (i64 od = 0; od < g.out_d; ++od) {
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      for (i64 ow = 0; ow < g.out_w; ++ow) f((od * g.out_h + oh) * g.out_w + ow, adaptive_windows(g, od, oh, ow));
    }
  }
}

}  // namespace

void adaptive_avgpool3d_forward(const Pool3dGeometry& g, const float* x, float* y) {
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * in_volume(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_volume(g);
    float* yp = y + p * out_volume(g);
    for_each_adaptive_output(g, [&](i64 o, const Windows3& win) {
      // Global pooling averages whole volumes: sum in double, as adaptive_avgpool2d.
      double total = 0.0;
      for_each_in(g, win, [&](i64 i) { total += static_cast<double>(xp[i]); });
      yp[o] = static_cast<float>(total / static_cast<double>(win.d.padded_length * win.h.padded_length * win.w.padded_length));
    });
  }
}

void adaptive_avgpool3d_backward(const Pool3dGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const i64 planes = g.batch * g.channels;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * in_volume(g) > kPoolingParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_volume(g);
    const float* dyp = dy + p * out_volume(g);
    zero(dxp, in_volume(g));
    for_each_adaptive_output(g, [&](i64 o, const Windows3& win) {
      const float share = dyp[o] / static_cast<float>(win.d.padded_length * win.h.padded_length * win.w.padded_length);
      for_each_in(g, win, [&](i64 i) { dxp[i] += share; });
    });
  }
}

namespace {

using R = hwprof::ops::PoolReduction;

Pool2dGeometry plane_geometry(const Pool3dGeometry& g) {
  Pool2dGeometry p;
  p.batch = g.batch;
  p.channels = g.channels;
  p.in_h = g.in_h;
  p.in_w = g.in_w;
  p.kernel_h = g.kernel_h;
  p.kernel_w = g.kernel_w;
  p.stride_h = g.stride_h;
  p.stride_w = g.stride_w;
  p.pad_h = g.pad_h;
  p.pad_w = g.pad_w;
  p.out_h = g.out_h;
  p.out_w = g.out_w;
  return p;
}

bool dilated(const Pool3dGeometry& g) {
  return g.dilation_d > 1 || g.dilation_h > 1 || g.dilation_w > 1;
}

// Each definition's reduction over its axes onto the kernels above (a dilated max pool onto the
// dilated kernel; the argmax backward is the same).
struct PoolKernelRow {
  R reduction;
  int spatial_axes;
  PoolKernels kernels;
};
const PoolKernelRow kPoolKernels[] = {
    {R::max,
     2,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax) {
        dilated(g) ? maxpool_dilated_forward(g, x, y, argmax) : maxpool2d_forward(plane_geometry(g), x, y, argmax);
      },
      [](const Pool3dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx) {
        maxpool2d_backward(plane_geometry(g), argmax, dy, dx);
      }}},
    {R::average,
     2,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t*) { avgpool2d_forward(plane_geometry(g), x, y); },
      [](const Pool3dGeometry& g, const std::int32_t*, const float* dy, float* dx) { avgpool2d_backward(plane_geometry(g), dy, dx); }}},
    {R::adaptive_average,
     2,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t*) {
        adaptive_avgpool2d_forward(x, y, g.batch, g.channels, g.in_h, g.in_w, g.out_h, g.out_w);
      },
      [](const Pool3dGeometry& g, const std::int32_t*, const float* dy, float* dx) {
        adaptive_avgpool2d_backward(dy, dx, g.batch, g.channels, g.in_h, g.in_w, g.out_h, g.out_w);
      }}},
    {R::max,
     3,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax) {
        dilated(g) ? maxpool_dilated_forward(g, x, y, argmax) : maxpool3d_forward(g, x, y, argmax);
      },
      maxpool3d_backward}},
    {R::average,
     3,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t*) { avgpool3d_forward(g, x, y); },
      [](const Pool3dGeometry& g, const std::int32_t*, const float* dy, float* dx) { avgpool3d_backward(g, dy, dx); }}},
    {R::adaptive_average,
     3,
     {[](const Pool3dGeometry& g, const float* x, float* y, std::int32_t*) { adaptive_avgpool3d_forward(g, x, y); },
      [](const Pool3dGeometry& g, const std::int32_t*, const float* dy, float* dx) { adaptive_avgpool3d_backward(g, dy, dx); }}},
};

}  // namespace

const PoolKernels* pool_kernels(const hwprof::ops::PoolingDefinition& def) noexcept {
  // A 1-D op runs the 2-D kernels over a height of 1 (pool_geometry gives it a window of 1).
  const int axes = std::max(def.spatial_axes, 2);
  for (const PoolKernelRow& row : kPoolKernels) {
    if (row.reduction == def.reduction && row.spatial_axes == axes) return &row.kernels;
  }
  return nullptr;
}

Pool3dGeometry pool_geometry(const hwprof::ops::PoolingDefinition& def, const Node& node, const Shape& in) {
  const hwprof::ops::PoolAxes axes = pool_axes(def, node.attrs);
  // Depth, height, width: a 2-D op's window is one deep.
  hwprof::ops::PoolAxis spatial[3] = {{1, 1, 0, 1}, {}, {}};
  i64 in_size[3] = {1, 1, 1};
  i64 out_size[3] = {1, 1, 1};
  const std::size_t first = 3 - static_cast<std::size_t>(axes.count);
  for (std::size_t i = 0; i < static_cast<std::size_t>(axes.count); ++i) {
    spatial[first + i] = axes.axis[i];
    in_size[first + i] = in[i + 1];
    out_size[first + i] = node.output_shape[i + 1];
  }
  Pool3dGeometry g;
  g.channels = in[0];
  g.in_d = in_size[0];
  g.in_h = in_size[1];
  g.in_w = in_size[2];
  g.kernel_d = spatial[0].kernel;
  g.kernel_h = spatial[1].kernel;
  g.kernel_w = spatial[2].kernel;
  g.stride_d = spatial[0].stride;
  g.stride_h = spatial[1].stride;
  g.stride_w = spatial[2].stride;
  g.pad_d = spatial[0].padding;
  g.pad_h = spatial[1].padding;
  g.pad_w = spatial[2].padding;
  g.out_d = out_size[0];
  g.out_h = out_size[1];
  g.out_w = out_size[2];
  g.dilation_d = spatial[0].dilation;
  g.dilation_h = spatial[1].dilation;
  g.dilation_w = spatial[2].dilation;
  return g;
}

}  // namespace hwprof::nn
