// 2-D upsampling over NCHW (the upsample op), forward and backward, with PyTorch's coordinate
// rules. Every output position reads from source positions that depend on its row and its
// column only, so each axis's source indices and weights are worked out once per call; every
// (sample, channel) plane is then independent and is the unit of parallel work (a backward
// pass scatters only into its own plane: no races, a fixed order of additions).
//
// The rules, as PyTorch documents them for F.interpolate and ATen's UpSample.h computes them
// (in float, per axis, with in and out that axis's sizes):
// - scale = in / out, or 1 / scale_factor when the output was given by a scale factor (and
//   the scale factor is not recomputed), as F.interpolate passes it on;
// - nearest (the legacy "nearest", not "nearest-exact"): src = min(floor(dst × scale), in − 1),
//   except that an axis of the same size is copied (src = dst) and one of twice the size
//   reads src = dst / 2 (integer), whatever the scale factor;
// - bilinear, align_corners = false (half-pixel centres): src = max((dst + 0.5) × scale − 0.5, 0);
//   align_corners = true: src = dst × (in − 1) / (out − 1), and 0 when out = 1;
// - bilinear then reads i0 = floor(src) and i1 = min(i0 + 1, in − 1), weighted 1 − λ and
//   λ = src − i0.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kUpsampleParallelMin = i64{1} << 15;  // output elements below which one thread runs

// The source taps of every output index along one axis.
struct AxisTaps {
  std::vector<i64> i0, i1;
  std::vector<float> l0, l1;  // bilinear weights of i0 and i1
};

// ATen's compute_scales_value and area_pixel_compute_scale, in float as ATen computes them.
float axis_scale(i64 in, i64 out, double scale_factor, bool align_corners) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  return scale_factor > 0.0 ? static_cast<float>(1.0 / scale_factor) : static_cast<float>(in) / static_cast<float>(out);
}

AxisTaps axis_taps(i64 in, i64 out, double scale_factor, const UpsampleGeometry& g) {
  AxisTaps t;
  t.i0.resize(static_cast<std::size_t>(out));
  t.i1.resize(static_cast<std::size_t>(out));
  t.l0.resize(static_cast<std::size_t>(out));
  t.l1.resize(static_cast<std::size_t>(out));
  const float scale = axis_scale(in, out, scale_factor, g.bilinear && g.align_corners);
  for (i64 d = 0; d < out; ++d) {
    const auto k = static_cast<std::size_t>(d);
    if (!g.bilinear) {
      const i64 src = out == in ? d : out == 2 * in ? d / 2 : static_cast<i64>(std::floor(static_cast<float>(d) * scale));
      t.i0[k] = t.i1[k] = std::min(src, in - 1);
      t.l0[k] = 1.0f;
      t.l1[k] = 0.0f;
      continue;
    }
    const float src = g.align_corners ? scale * static_cast<float>(d) : std::max(scale * (static_cast<float>(d) + 0.5f) - 0.5f, 0.0f);
    const i64 i0 = std::min(static_cast<i64>(src), in - 1);
    t.i0[k] = i0;
    t.i1[k] = i0 < in - 1 ? i0 + 1 : i0;
    t.l1[k] = src - static_cast<float>(i0);
    t.l0[k] = 1.0f - t.l1[k];
  }
  return t;
}

}  // namespace

void upsample_forward(const UpsampleGeometry& g, const float* x, float* y) {
  const AxisTaps th = axis_taps(g.in_h, g.out_h, g.scale_h, g);
  const AxisTaps tw = axis_taps(g.in_w, g.out_w, g.scale_w, g);
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * out_plane > kUpsampleParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const float* xp = x + p * in_plane;
    float* yp = y + p * out_plane;
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      const auto r = static_cast<std::size_t>(oh);
      const float* row0 = xp + th.i0[r] * g.in_w;
      float* yr = yp + oh * g.out_w;
      if (!g.bilinear) {
        for (i64 ow = 0; ow < g.out_w; ++ow) yr[ow] = row0[tw.i0[static_cast<std::size_t>(ow)]];
        continue;
      }
      const float* row1 = xp + th.i1[r] * g.in_w;
      const float h0 = th.l0[r], h1 = th.l1[r];
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const auto c = static_cast<std::size_t>(ow);
        const i64 w0 = tw.i0[c], w1 = tw.i1[c];
        // ATen's order of the weighted sum: h0·(w0·x00 + w1·x01) + h1·(w0·x10 + w1·x11).
        yr[ow] = h0 * (tw.l0[c] * row0[w0] + tw.l1[c] * row0[w1]) + h1 * (tw.l0[c] * row1[w0] + tw.l1[c] * row1[w1]);
      }
    }
  }
}

void upsample_backward(const UpsampleGeometry& g, const float* dy, float* dx) {
  if (dx == nullptr) return;
  const AxisTaps th = axis_taps(g.in_h, g.out_h, g.scale_h, g);
  const AxisTaps tw = axis_taps(g.in_w, g.out_w, g.scale_w, g);
  const i64 planes = g.batch * g.channels;
  const i64 in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * out_plane > kUpsampleParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    float* dxp = dx + p * in_plane;
    const float* dyp = dy + p * out_plane;
    std::memset(dxp, 0, static_cast<std::size_t>(in_plane) * sizeof(float));
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      const auto r = static_cast<std::size_t>(oh);
      float* row0 = dxp + th.i0[r] * g.in_w;
      const float* gr = dyp + oh * g.out_w;
      if (!g.bilinear) {
        for (i64 ow = 0; ow < g.out_w; ++ow) row0[tw.i0[static_cast<std::size_t>(ow)]] += gr[ow];
        continue;
      }
      float* row1 = dxp + th.i1[r] * g.in_w;
      const float h0 = th.l0[r], h1 = th.l1[r];
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const auto c = static_cast<std::size_t>(ow);
        const i64 w0 = tw.i0[c], w1 = tw.i1[c];
        row0[w0] += h0 * tw.l0[c] * gr[ow];
        row0[w1] += h0 * tw.l1[c] * gr[ow];
        row1[w0] += h1 * tw.l0[c] * gr[ow];
        row1[w1] += h1 * tw.l1[c] * gr[ow];
      }
    }
  }
}

}  // namespace hwprof::nn
