// The dense kernels (linear, conv2d, conv3d, attention) against straightforward reference loops that
// accumulate in double, over many small shapes; their backward passes against the references'
// own backward loops and against central differences of the reference forward; the
// accumulate-versus-overwrite contract of kernels.hpp; and 1 versus 2 threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwprof/engine/tensor.hpp"
#include "nn/blas_core.hpp"
#include "nn/kernels.hpp"
#include "nn_test_support.hpp"

namespace hwprof::nn {
namespace {

using testing::all_close;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;
using Floats = std::vector<float>;

std::size_t sz(i64 n) {
  return static_cast<std::size_t>(n);
}

// Most tests run on two threads so that the parallel paths run even on a one-CPU machine.
class Dense : public ::testing::Test {
 protected:
  void SetUp() override { set_kernel_threads(2); }
};

// Σ y·r in double: the scalar whose gradient with respect to y is r.
double dot(const std::vector<double>& y, const Floats& r) {
  double s = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
  return s;
}

Floats to_floats(const std::vector<double>& v) {
  return Floats(v.begin(), v.end());
}

// A buffer full of NaN: a kernel that must overwrite it and reads it instead shows at once.
Floats poisoned(std::size_t n) {
  return Floats(n, std::numeric_limits<float>::quiet_NaN());
}

Floats scaled(const Floats& v, float f) {
  Floats out(v);
  for (float& x : out) x *= f;
  return out;
}

// ---- linear ------------------------------------------------------------------------------

std::vector<double> reference_linear(const Floats& x, const Floats& w, const float* b, i64 m, i64 k, i64 n) {
  std::vector<double> y(sz(m * n));
  for (i64 i = 0; i < m; ++i) {
    for (i64 j = 0; j < n; ++j) {
      double acc = b != nullptr ? b[j] : 0.0;
      for (i64 t = 0; t < k; ++t) acc += double{x[sz(i * k + t)]} * w[sz(j * k + t)];
      y[sz(i * n + j)] = acc;
    }
  }
  return y;
}

struct LinearShape {
  i64 m, k, n;
};
const LinearShape kLinearShapes[] = {{1, 1, 1},    {1, 7, 3},    {3, 1, 5},     {5, 4, 1},    {2, 3, 4},      {7, 13, 5},    {17, 9, 31},
                                     {33, 65, 17}, {64, 64, 64}, {3, 100, 257}, {129, 31, 7}, {200, 33, 300}, {256, 96, 130}};

// Which OpenBLAS kernels leave an AVX-512 CPU's widest units idle (hwprof then picks SkylakeX).
TEST(OpenBlasCores, OnlyTheAvx512CoresAreNotHeldBack) {
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
    EXPECT_FALSE(nn::detail::openblas_core_without_avx512(core)) << core;
  }
  for (const char* core : {"Haswell", "Zen", "Prescott", "Sandybridge", "Nehalem", "Core2", ""}) {
    EXPECT_TRUE(nn::detail::openblas_core_without_avx512(core)) << core;
  }
}

TEST_F(Dense, LinearForwardMatchesReference) {
  std::uint64_t seed = 1;
  for (const auto& s : kLinearShapes) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE("m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n) + " bias=" + std::to_string(with_bias));
      const Floats x = random_vector(sz(s.m * s.k), ++seed), w = random_vector(sz(s.k * s.n), ++seed);
      const Floats b = random_vector(sz(s.n), ++seed);
      Floats y = poisoned(sz(s.m * s.n));
      linear_forward(x.data(), w.data(), with_bias ? b.data() : nullptr, y.data(), s.m, s.k, s.n);
      EXPECT_TRUE(all_close(y, to_floats(reference_linear(x, w, with_bias ? b.data() : nullptr, s.m, s.k, s.n)), 1e-4, 1e-4));
    }
  }
}

TEST_F(Dense, LinearWithNoInputFeaturesGivesTheBias) {
  const Floats b = {1.5f, -2.0f, 0.25f};
  Floats y = poisoned(6);
  linear_forward(nullptr, nullptr, b.data(), y.data(), 2, 0, 3);
  EXPECT_TRUE(all_close(y, {1.5f, -2.0f, 0.25f, 1.5f, -2.0f, 0.25f}));
  linear_forward(nullptr, nullptr, nullptr, y.data(), 2, 0, 3);
  EXPECT_TRUE(all_close(y, Floats(6, 0.0f)));
}

TEST_F(Dense, LinearBackwardMatchesReference) {
  std::uint64_t seed = 100;
  for (const auto& s : kLinearShapes) {
    SCOPED_TRACE("m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n));
    const Floats x = random_vector(sz(s.m * s.k), ++seed), w = random_vector(sz(s.k * s.n), ++seed);
    const Floats dy = random_vector(sz(s.m * s.n), ++seed);
    std::vector<double> dx(sz(s.m * s.k)), dw(sz(s.n * s.k)), db(sz(s.n));
    for (i64 i = 0; i < s.m; ++i) {
      for (i64 j = 0; j < s.n; ++j) {
        const double g = dy[sz(i * s.n + j)];
        db[sz(j)] += g;
        for (i64 t = 0; t < s.k; ++t) {
          dx[sz(i * s.k + t)] += g * w[sz(j * s.k + t)];
          dw[sz(j * s.k + t)] += g * x[sz(i * s.k + t)];
        }
      }
    }
    Floats got_dx = poisoned(dx.size()), got_dw(dw.size(), 0.0f), got_db(db.size(), 0.0f);
    linear_backward(x.data(), w.data(), dy.data(), got_dx.data(), got_dw.data(), got_db.data(), s.m, s.k, s.n);
    EXPECT_TRUE(all_close(got_dx, to_floats(dx), 1e-4, 1e-4));
    EXPECT_TRUE(all_close(got_dw, to_floats(dw), 1e-4, 1e-4));
    EXPECT_TRUE(all_close(got_db, to_floats(db), 1e-4, 1e-4));
  }
}

TEST_F(Dense, LinearGradientsMatchFiniteDifferences) {
  const i64 m = 4, k = 6, n = 5;
  Floats x = random_vector(sz(m * k), 1), w = random_vector(sz(n * k), 2), b = random_vector(sz(n), 3);
  const Floats r = random_vector(sz(m * n), 4);
  const auto loss = [&] { return dot(reference_linear(x, w, b.data(), m, k, n), r); };
  Floats dx(x.size()), dw(w.size(), 0.0f), db(b.size(), 0.0f);
  linear_backward(x.data(), w.data(), r.data(), dx.data(), dw.data(), db.data(), m, k, n);
  EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss)));
  EXPECT_TRUE(gradient_matches(dw, numeric_gradient(w, loss)));
  EXPECT_TRUE(gradient_matches(db, numeric_gradient(b, loss)));
}

TEST_F(Dense, LinearAccumulatesParameterGradientsAndOverwritesDx) {
  const i64 m = 9, k = 11, n = 7;
  const Floats x = random_vector(sz(m * k), 5), w = random_vector(sz(n * k), 6), dy = random_vector(sz(m * n), 7);
  Floats dx = poisoned(sz(m * k)), dw(sz(n * k), 0.0f), db(sz(n), 0.0f);
  linear_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), m, k, n);
  const Floats dx1 = dx, dw1 = dw, db1 = db;
  std::fill(dx.begin(), dx.end(), 123.0f);
  linear_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), m, k, n);
  EXPECT_TRUE(all_close(dx, dx1));
  EXPECT_TRUE(all_close(dw, scaled(dw1, 2.0f)));
  EXPECT_TRUE(all_close(db, scaled(db1, 2.0f)));
  // Null gradients are skipped.
  linear_backward(x.data(), w.data(), dy.data(), nullptr, nullptr, db.data(), m, k, n);
  EXPECT_TRUE(all_close(db, scaled(db1, 3.0f)));
}

// ---- conv2d ------------------------------------------------------------------------------

i64 out_size(i64 in, i64 kernel, i64 stride, i64 pad, i64 dilation) {
  const i64 span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

struct ConvCase {
  i64 batch, channels, h, w, out_channels, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

Conv2dGeometry geometry_of(const ConvCase& c) {
  Conv2dGeometry g;
  g.batch = c.batch;
  g.in_channels = c.channels;
  g.in_h = c.h;
  g.in_w = c.w;
  g.out_channels = c.out_channels;
  g.kernel_h = c.kh;
  g.kernel_w = c.kw;
  g.stride_h = c.sh;
  g.stride_w = c.sw;
  g.pad_h = c.ph;
  g.pad_w = c.pw;
  g.dilation_h = c.dh;
  g.dilation_w = c.dw;
  g.groups = c.groups;
  g.out_h = out_size(c.h, c.kh, c.sh, c.ph, c.dh);
  g.out_w = out_size(c.w, c.kw, c.sw, c.pw, c.dw);
  return g;
}

std::string describe(const ConvCase& c) {
  return "N" + std::to_string(c.batch) + " C" + std::to_string(c.channels) + " " + std::to_string(c.h) + "x" + std::to_string(c.w) + " K" +
         std::to_string(c.out_channels) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" + std::to_string(c.sh) + "," +
         std::to_string(c.sw) + " p" + std::to_string(c.ph) + "," + std::to_string(c.pw) + " d" + std::to_string(c.dh) + "," + std::to_string(c.dw) +
         " g" + std::to_string(c.groups) + (c.bias ? " bias" : "");
}

struct ConvBuffers {
  Floats x, w, b;
};

// The references below are 3-D (conv3d's depth axis); a 2-D geometry is depth 1.
ConvBuffers conv_buffers(const Conv2dGeometry& g, std::uint64_t seed) {
  const i64 cg = g.in_channels / g.groups;
  return {random_vector(sz(g.batch * g.in_channels * g.in_d * g.in_h * g.in_w), seed),
          random_vector(sz(g.out_channels * cg * g.kernel_d * g.kernel_h * g.kernel_w), seed + 1), random_vector(sz(g.out_channels), seed + 2)};
}

i64 output_volume(const Conv2dGeometry& g) {
  return g.out_d * g.out_h * g.out_w;
}

i64 output_numel(const Conv2dGeometry& g) {
  return g.batch * g.out_channels * output_volume(g);
}

// Visits every (output element, weight tap, input element) triple of the convolution:
// f(y index, w index, x index). The forward, backward and gradient references all use it.
template <class F>
void for_each_tap(const Conv2dGeometry& g, F f) {
  const i64 cg = g.in_channels / g.groups, kg = g.out_channels / g.groups;
  for (i64 n = 0; n < g.batch; ++n) {
    for (i64 k = 0; k < g.out_channels; ++k) {
      const i64 group = k / kg;
      for (i64 yi = ((n * g.out_channels + k) * output_volume(g)), o = 0; o < g.out_d; ++o) {
        for (i64 p = 0; p < g.out_h; ++p) {
          for (i64 q = 0; q < g.out_w; ++q, ++yi) {
            for (i64 c = 0; c < cg; ++c) {
              const i64 cin = group * cg + c;
              for (i64 t = 0; t < g.kernel_d; ++t) {
                const i64 id = o * g.stride_d - g.pad_d + t * g.dilation_d;
                if (id < 0 || id >= g.in_d) continue;
                for (i64 r = 0; r < g.kernel_h; ++r) {
                  const i64 ih = p * g.stride_h - g.pad_h + r * g.dilation_h;
                  if (ih < 0 || ih >= g.in_h) continue;
                  for (i64 s = 0; s < g.kernel_w; ++s) {
                    const i64 iw = q * g.stride_w - g.pad_w + s * g.dilation_w;
                    if (iw < 0 || iw >= g.in_w) continue;
                    f(yi, (((k * cg + c) * g.kernel_d + t) * g.kernel_h + r) * g.kernel_w + s,
                      (((n * g.in_channels + cin) * g.in_d + id) * g.in_h + ih) * g.in_w + iw);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

std::vector<double> reference_conv(const Conv2dGeometry& g, const Floats& x, const Floats& w, const float* b) {
  std::vector<double> y(sz(output_numel(g)), 0.0);
  if (b != nullptr) {
    const i64 pq = output_volume(g);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = b[static_cast<i64>(i) / pq % g.out_channels];
  }
  for_each_tap(g, [&](i64 yi, i64 wi, i64 xi) { y[sz(yi)] += double{w[sz(wi)]} * x[sz(xi)]; });
  return y;
}

// Hand-picked geometries: each form (im2col, 1×1 pointwise, depthwise) and shapes big enough
// for the parallel paths (whole rounds of samples, and single samples with threaded loops).
const ConvCase kConvCases[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, false},   {2, 3, 5, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},
    {1, 3, 9, 8, 5, 7, 7, 2, 2, 3, 3, 1, 1, 1, false},  // ResNet's stem, small
    {3, 4, 6, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},   // pointwise
    {2, 4, 5, 6, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2, true},   // pointwise, grouped
    {2, 4, 7, 7, 8, 1, 1, 2, 2, 0, 0, 1, 1, 1, false},  // 1×1 stride 2 (ResNet's downsample)
    {2, 6, 7, 9, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6, true},   // depthwise
    {2, 5, 9, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1, 5, false},  // depthwise, stride 2
    {1, 4, 8, 8, 4, 3, 5, 3, 1, 2, 0, 2, 1, 4, true},   // depthwise, rectangular, dilated
    {2, 3, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3, true},   // out_channels = 2·groups
    {3, 4, 7, 5, 6, 2, 3, 2, 1, 0, 2, 1, 2, 2, true},    {2, 2, 10, 11, 3, 3, 2, 3, 3, 2, 1, 2, 2, 1, true},
    {1, 3, 4, 4, 2, 4, 4, 1, 1, 2, 2, 2, 2, 1, false},  // more padding than input at the corners
    {1, 1, 3, 1, 1, 3, 3, 1, 1, 2, 2, 2, 2, 1, false},  // "same" padding, a tap wholly outside x
    {2, 2, 4, 2, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, true},    {3, 16, 10, 10, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},  // whole rounds plus a remainder
    {1, 8, 24, 24, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},                                                         // one sample: threaded im2col/col2im
    {1, 8, 24, 20, 8, 1, 1, 1, 1, 0, 0, 1, 1, 2, false},                                                        // one sample, pointwise
    {2, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8, true},                                                         // depthwise, threaded planes
    {4, 6, 12, 9, 12, 3, 3, 2, 2, 1, 1, 1, 1, 3, true},
};

// Seeded random geometries: groups of 1, 2, depthwise and out_channels = 2·groups; kernels
// 1-4 each way; strides 1-3, paddings 0-2, dilations 1-2 each way; images 1-11; batch 1-3.
std::vector<ConvCase> random_conv_cases(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); };
  std::vector<ConvCase> cases;
  while (static_cast<int>(cases.size()) < count) {
    ConvCase c{};
    switch (pick(0, 3)) {
      case 0:
        c.groups = 1, c.channels = pick(1, 5), c.out_channels = pick(1, 6);
        break;
      case 1:
        c.groups = 2, c.channels = 2 * pick(1, 3), c.out_channels = 2 * pick(1, 3);
        break;
      case 2:
        c.groups = c.channels = c.out_channels = pick(2, 6);
        break;
      default:
        c.groups = pick(2, 4), c.channels = c.groups * pick(1, 2), c.out_channels = 2 * c.groups;
        break;
    }
    c.batch = pick(1, 3);
    c.kh = pick(1, 4), c.kw = pick(1, 4);
    c.sh = pick(1, 3), c.sw = pick(1, 3);
    c.ph = pick(0, 2), c.pw = pick(0, 2);
    c.dh = pick(1, 2), c.dw = pick(1, 2);
    c.h = pick(1, 11), c.w = pick(1, 11);
    c.bias = pick(0, 1) == 1;
    const Conv2dGeometry g = geometry_of(c);
    if (g.out_h > 0 && g.out_w > 0) cases.push_back(c);
  }
  return cases;
}

std::vector<ConvCase> all_conv_cases() {
  std::vector<ConvCase> cases(std::begin(kConvCases), std::end(kConvCases));
  const auto random = random_conv_cases(500, 2024);
  cases.insert(cases.end(), random.begin(), random.end());
  return cases;
}

TEST_F(Dense, ConvForwardMatchesReference) {
  std::uint64_t seed = 1000;
  for (const ConvCase& c : all_conv_cases()) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, seed += 3);
    const float* b = c.bias ? in.b.data() : nullptr;
    Floats y = poisoned(sz(output_numel(g)));
    conv2d_forward(g, in.x.data(), in.w.data(), b, y.data());
    ASSERT_TRUE(all_close(y, to_floats(reference_conv(g, in.x, in.w, b)), 1e-4, 1e-4));
  }
}

TEST_F(Dense, ConvBackwardMatchesReference) {
  std::uint64_t seed = 5000;
  for (const ConvCase& c : all_conv_cases()) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, seed += 4);
    const Floats dy = random_vector(sz(output_numel(g)), seed + 3);
    std::vector<double> dx(in.x.size(), 0.0), dw(in.w.size(), 0.0), db(in.b.size(), 0.0);
    for_each_tap(g, [&](i64 yi, i64 wi, i64 xi) {
      dx[sz(xi)] += double{dy[sz(yi)]} * in.w[sz(wi)];
      dw[sz(wi)] += double{dy[sz(yi)]} * in.x[sz(xi)];
    });
    const i64 pq = output_volume(g);
    for (std::size_t i = 0; i < dy.size(); ++i) db[sz(static_cast<i64>(i) / pq % g.out_channels)] += dy[i];

    Floats got_dx = poisoned(dx.size()), got_dw(dw.size(), 0.0f), got_db(db.size(), 0.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), got_dx.data(), got_dw.data(), c.bias ? got_db.data() : nullptr);
    ASSERT_TRUE(all_close(got_dx, to_floats(dx), 1e-4, 1e-4)) << "dx";
    ASSERT_TRUE(all_close(got_dw, to_floats(dw), 1e-4, 1e-4)) << "dw";
    if (c.bias) {
      ASSERT_TRUE(all_close(got_db, to_floats(db), 1e-4, 1e-4)) << "db";
    }
  }
}

// Every form's dx, dw and db against central differences of the reference forward.
TEST_F(Dense, ConvGradientsMatchFiniteDifferences) {
  const ConvCase cases[] = {
      {2, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},  // im2col
      {2, 4, 7, 6, 6, 2, 3, 2, 3, 1, 2, 2, 1, 2, true},  // grouped, strided, dilated, rectangular
      {2, 4, 5, 4, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2, true},  // pointwise
      {2, 4, 6, 7, 4, 3, 3, 2, 1, 1, 1, 1, 2, 4, true},  // depthwise
      {1, 3, 6, 5, 6, 3, 2, 1, 2, 2, 0, 1, 1, 3, true},  // out_channels = 2·groups
  };
  std::uint64_t seed = 9000;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    ConvBuffers in = conv_buffers(g, seed += 4);
    const Floats r = random_vector(sz(output_numel(g)), seed + 3);
    const auto loss = [&] { return dot(reference_conv(g, in.x, in.w, in.b.data()), r); };
    Floats dx(in.x.size()), dw(in.w.size(), 0.0f), db(in.b.size(), 0.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), r.data(), dx.data(), dw.data(), db.data());
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(in.x, loss))) << "dx";
    EXPECT_TRUE(gradient_matches(dw, numeric_gradient(in.w, loss))) << "dw";
    EXPECT_TRUE(gradient_matches(db, numeric_gradient(in.b, loss))) << "db";
  }
}

TEST_F(Dense, ConvAccumulatesParameterGradientsAndOverwritesDx) {
  const ConvCase cases[] = {
      {2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, true},  // im2col
      {2, 4, 5, 5, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, true},  // pointwise
      {2, 5, 6, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, true},  // depthwise
  };
  std::uint64_t seed = 12000;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, seed += 4);
    const Floats dy = random_vector(sz(output_numel(g)), seed + 3);
    Floats dx = poisoned(in.x.size()), dw(in.w.size(), 0.0f), db(in.b.size(), 0.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), dx.data(), dw.data(), db.data());
    const Floats dx1 = dx, dw1 = dw, db1 = db;
    std::fill(dx.begin(), dx.end(), -7.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), dx.data(), dw.data(), db.data());
    EXPECT_TRUE(all_close(dx, dx1));
    EXPECT_TRUE(all_close(dw, scaled(dw1, 2.0f)));
    EXPECT_TRUE(all_close(db, scaled(db1, 2.0f)));
    // Null gradients are skipped, the others still computed.
    Floats dx_only = poisoned(in.x.size());
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), dx_only.data(), nullptr, nullptr);
    EXPECT_TRUE(all_close(dx_only, dx1));
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), nullptr, dw.data(), nullptr);
    EXPECT_TRUE(all_close(dw, scaled(dw1, 3.0f)));
  }
}

// ---- conv3d: the same kernels with a depth axis (vol2col) ---------------------------------

struct Conv3dCase {
  ConvCase hw;  // batch, channels, the height and width window, out_channels, groups, bias
  i64 d, kd, sd, pd, dd;
};

Conv2dGeometry geometry_of(const Conv3dCase& c) {
  Conv2dGeometry g = geometry_of(c.hw);
  g.in_d = c.d;
  g.kernel_d = c.kd;
  g.stride_d = c.sd;
  g.pad_d = c.pd;
  g.dilation_d = c.dd;
  g.out_d = out_size(c.d, c.kd, c.sd, c.pd, c.dd);
  return g;
}

std::string describe(const Conv3dCase& c) {
  return describe(c.hw) + "; depth " + std::to_string(c.d) + " k" + std::to_string(c.kd) + " s" + std::to_string(c.sd) + " p" + std::to_string(c.pd) +
         " d" + std::to_string(c.dd);
}

// torchvision's video ResNets' layers, small, and the forms of the 2-D cases in 3-D.
const Conv3dCase kConv3dCases[] = {
    {{1, 3, 14, 14, 4, 7, 7, 2, 2, 3, 3, 1, 1, 1, false}, 4, 3, 1, 1, 1},  // r3d_18's stem
    {{2, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 4, 3, 1, 1, 1},     // 3×3×3, "same"
    {{2, 4, 6, 6, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1, true}, 3, 1, 1, 0, 1},     // pointwise 1×1×1
    {{2, 4, 7, 7, 8, 1, 1, 2, 2, 0, 0, 1, 1, 1, false}, 5, 1, 2, 0, 1},    // 1×1×1 stride 2 (a downsample)
    {{2, 4, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, false}, 4, 1, 1, 0, 1},    // (1, 3, 3): r2plus1d's spatial
    {{2, 6, 5, 5, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, false}, 6, 3, 1, 1, 1},    // (3, 1, 1): its temporal
    {{2, 4, 7, 6, 4, 3, 3, 1, 1, 2, 2, 2, 2, 4, true}, 5, 3, 2, 1, 2},     // depthwise, dilated, strided in depth
    {{1, 4, 5, 5, 6, 2, 3, 2, 1, 1, 0, 1, 2, 2, true}, 7, 2, 3, 2, 2},     // grouped, rectangular
    {{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 8, 3, 1, 1, 1},   // one sample: threaded vol2col and col2im
    {{3, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 2, 3, 1, 1, 1},    // small volumes: samples side by side
    // One sample whose column matrix (1,728 rows, 34·34 columns per depth slice: 2M floats a
    // slice) is made two output depth slices at a time, the last chunk one slice.
    {{1, 64, 34, 34, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 5, 3, 1, 1, 1},
};

std::vector<Conv3dCase> all_conv3d_cases() {
  std::vector<Conv3dCase> cases(std::begin(kConv3dCases), std::end(kConv3dCases));
  std::mt19937_64 rng(3);
  const auto pick = [&](i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); };
  for (const ConvCase& hw : random_conv_cases(150, 3030)) {
    Conv3dCase c{hw, pick(1, 6), pick(1, 3), pick(1, 2), pick(0, 1), pick(1, 2)};
    if (geometry_of(c).out_d > 0) cases.push_back(c);
  }
  return cases;
}

TEST_F(Dense, Conv3dForwardAndBackwardMatchReference) {
  std::uint64_t seed = 20000;
  for (const Conv3dCase& c : all_conv3d_cases()) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, seed += 4);
    const float* b = c.hw.bias ? in.b.data() : nullptr;
    Floats y = poisoned(sz(output_numel(g)));
    conv2d_forward(g, in.x.data(), in.w.data(), b, y.data());
    ASSERT_TRUE(all_close(y, to_floats(reference_conv(g, in.x, in.w, b)), 1e-4, 1e-4)) << "y";

    const Floats dy = random_vector(y.size(), seed + 3);
    std::vector<double> dx(in.x.size(), 0.0), dw(in.w.size(), 0.0), db(in.b.size(), 0.0);
    for_each_tap(g, [&](i64 yi, i64 wi, i64 xi) {
      dx[sz(xi)] += double{dy[sz(yi)]} * in.w[sz(wi)];
      dw[sz(wi)] += double{dy[sz(yi)]} * in.x[sz(xi)];
    });
    for (std::size_t i = 0; i < dy.size(); ++i) db[sz(static_cast<i64>(i) / output_volume(g) % g.out_channels)] += dy[i];
    Floats got_dx = poisoned(dx.size()), got_dw(dw.size(), 0.0f), got_db(db.size(), 0.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), got_dx.data(), got_dw.data(), got_db.data());
    ASSERT_TRUE(all_close(got_dx, to_floats(dx), 1e-4, 1e-4)) << "dx";
    ASSERT_TRUE(all_close(got_dw, to_floats(dw), 1e-4, 1e-4)) << "dw";
    ASSERT_TRUE(all_close(got_db, to_floats(db), 1e-4, 1e-4)) << "db";
  }
}

TEST_F(Dense, Conv3dGradientsMatchFiniteDifferences) {
  const Conv3dCase cases[] = {
      {{2, 3, 5, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 3, 3, 1, 1, 1},  // vol2col, padded in every axis
      {{2, 4, 5, 5, 6, 2, 3, 2, 1, 1, 0, 1, 2, 2, true}, 5, 2, 2, 1, 2},  // grouped, strided and dilated in depth
      {{2, 4, 4, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1, true}, 3, 1, 1, 0, 1},  // pointwise
  };
  std::uint64_t seed = 24000;
  for (const Conv3dCase& c : cases) {
    SCOPED_TRACE(describe(c));
    const Conv2dGeometry g = geometry_of(c);
    ConvBuffers in = conv_buffers(g, seed += 4);
    const Floats r = random_vector(sz(output_numel(g)), seed + 3);
    const auto loss = [&] { return dot(reference_conv(g, in.x, in.w, in.b.data()), r); };
    Floats dx(in.x.size()), dw(in.w.size(), 0.0f), db(in.b.size(), 0.0f);
    conv2d_backward(g, in.x.data(), in.w.data(), r.data(), dx.data(), dw.data(), db.data());
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(in.x, loss))) << "dx";
    EXPECT_TRUE(gradient_matches(dw, numeric_gradient(in.w, loss))) << "dw";
    EXPECT_TRUE(gradient_matches(db, numeric_gradient(in.b, loss))) << "db";
  }
}

TEST_F(Dense, ConvColumnsComeFromTheTrackingAllocator) {
  const Conv2dGeometry g = geometry_of(ConvCase{1, 8, 12, 12, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, false});
  const ConvBuffers in = conv_buffers(g, 77);
  Floats y(sz(output_numel(g)));
  const AllocationStats before = allocation_stats();
  reset_peak_allocation();
  conv2d_forward(g, in.x.data(), in.w.data(), nullptr, y.data());
  const AllocationStats after = allocation_stats();
  const i64 column_bytes = 8 * 9 * 12 * 12 * 4;  // C·R·S × P·Q floats
  EXPECT_GT(after.allocations, before.allocations);
  EXPECT_GE(after.peak_bytes - before.current_bytes, column_bytes);
  EXPECT_EQ(after.current_bytes, before.current_bytes);  // and gives it back
}

// ---- attention ---------------------------------------------------------------------------

struct AttentionCase {
  i64 batch, tokens, dim, heads;
  bool causal, bias;
};

std::string describe(const AttentionCase& c) {
  return "B" + std::to_string(c.batch) + " T" + std::to_string(c.tokens) + " D" + std::to_string(c.dim) + " H" + std::to_string(c.heads) +
         (c.causal ? " causal" : "") + (c.bias ? " bias" : "");
}

AttentionGeometry geometry_of(const AttentionCase& c) {
  AttentionGeometry g;
  g.batch = c.batch;
  g.tokens = c.tokens;
  g.dim = c.dim;
  g.heads = c.heads;
  g.causal = c.causal;
  return g;
}

struct AttentionParams {
  Floats x, w_in, b_in, w_out, b_out;
};

AttentionParams attention_params(const AttentionGeometry& g, std::uint64_t seed) {
  const i64 d = g.dim;
  return {random_vector(sz(g.batch * g.tokens * d), seed), random_vector(sz(3 * d * d), seed + 1, -0.5f, 0.5f), random_vector(sz(3 * d), seed + 2),
          random_vector(sz(d * d), seed + 3, -0.5f, 0.5f), random_vector(sz(d), seed + 4)};
}

struct AttentionReference {
  std::vector<double> qkv, probs, context, y;
};

AttentionReference reference_attention(const AttentionGeometry& g, const AttentionParams& a, bool bias) {
  const i64 t = g.tokens, d = g.dim, dh = d / g.heads, bt = g.batch * t;
  AttentionReference ref;
  ref.qkv = reference_linear(a.x, a.w_in, bias ? a.b_in.data() : nullptr, bt, d, 3 * d);
  ref.probs.assign(sz(g.batch * g.heads * t * t), 0.0);
  ref.context.assign(sz(bt * d), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
  for (i64 b = 0; b < g.batch; ++b) {
    for (i64 h = 0; h < g.heads; ++h) {
      const auto qkv = [&](i64 token, i64 part, i64 e) { return ref.qkv[sz((b * t + token) * 3 * d + part * d + h * dh + e)]; };
      double* p = ref.probs.data() + (b * g.heads + h) * t * t;
      for (i64 i = 0; i < t; ++i) {
        const i64 keys = g.causal ? i + 1 : t;
        double top = -std::numeric_limits<double>::infinity();
        for (i64 j = 0; j < keys; ++j) {
          double s = 0.0;
          for (i64 e = 0; e < dh; ++e) s += qkv(i, 0, e) * qkv(j, 1, e);
          p[i * t + j] = s * scale;
          top = std::max(top, p[i * t + j]);
        }
        double sum = 0.0;
        for (i64 j = 0; j < keys; ++j) sum += (p[i * t + j] = std::exp(p[i * t + j] - top));
        for (i64 j = 0; j < keys; ++j) p[i * t + j] /= sum;
        for (i64 e = 0; e < dh; ++e) {
          double acc = 0.0;
          for (i64 j = 0; j < keys; ++j) acc += p[i * t + j] * qkv(j, 2, e);
          ref.context[sz((b * t + i) * d + h * dh + e)] = acc;
        }
      }
    }
  }
  const Floats context(ref.context.begin(), ref.context.end());
  ref.y = reference_linear(context, a.w_out, bias ? a.b_out.data() : nullptr, bt, d, d);
  return ref;
}

// The reference's output computed in double throughout (reference_attention rounds context
// to float before its output projection, which is right for comparing with the kernel but
// too coarse for finite differences).
double attention_loss(const AttentionGeometry& g, const AttentionParams& a, const Floats& r) {
  const i64 bt = g.batch * g.tokens, d = g.dim;
  const AttentionReference ref = reference_attention(g, a, true);
  double loss = 0.0;
  for (i64 i = 0; i < bt; ++i) {
    for (i64 j = 0; j < d; ++j) {
      double acc = a.b_out[sz(j)];
      for (i64 e = 0; e < d; ++e) acc += ref.context[sz(i * d + e)] * a.w_out[sz(j * d + e)];
      loss += acc * r[sz(i * d + j)];
    }
  }
  return loss;
}

std::vector<AttentionCase> attention_cases() {
  std::vector<AttentionCase> cases;
  for (i64 heads = 1; heads <= 4; ++heads) {
    for (i64 tokens = 1; tokens <= 9; ++tokens) {
      for (bool causal : {false, true}) {
        const i64 batch = 1 + (tokens + heads) % 2;
        const i64 dim = heads * (1 + (tokens % 3));
        cases.push_back({batch, tokens, dim, heads, causal, (tokens + heads) % 3 != 0});
      }
    }
  }
  // Big enough for the heads to run side by side on the OpenMP threads, and an odd count of
  // heads so that the last one runs with OpenBLAS's threads.
  cases.push_back({2, 32, 64, 4, true, true});
  cases.push_back({1, 40, 48, 3, false, true});
  cases.push_back({3, 17, 24, 2, true, false});
  return cases;
}

TEST_F(Dense, AttentionForwardMatchesReference) {
  std::uint64_t seed = 20000;
  for (const AttentionCase& c : attention_cases()) {
    SCOPED_TRACE(describe(c));
    const AttentionGeometry g = geometry_of(c);
    const AttentionParams a = attention_params(g, seed += 5);
    const AttentionReference ref = reference_attention(g, a, c.bias);
    const i64 bt = c.batch * c.tokens;
    const float* b_in = c.bias ? a.b_in.data() : nullptr;
    const float* b_out = c.bias ? a.b_out.data() : nullptr;

    Floats y = poisoned(sz(bt * c.dim));
    attention_forward(g, a.x.data(), a.w_in.data(), b_in, a.w_out.data(), b_out, y.data(), nullptr);
    ASSERT_TRUE(all_close(y, to_floats(ref.y), 1e-4, 1e-4)) << "inference";

    ASSERT_EQ(attention_saved_floats(g), static_cast<i64>(ref.qkv.size() + ref.probs.size() + ref.context.size()));
    Floats qkv = poisoned(ref.qkv.size()), probs = poisoned(ref.probs.size()), context = poisoned(ref.context.size());
    const AttentionSaved saved{qkv.data(), probs.data(), context.data()};
    Floats y_train = poisoned(y.size());
    attention_forward(g, a.x.data(), a.w_in.data(), b_in, a.w_out.data(), b_out, y_train.data(), &saved);
    ASSERT_TRUE(all_close(y_train, to_floats(ref.y), 1e-4, 1e-4)) << "training";
    ASSERT_TRUE(all_close(qkv, to_floats(ref.qkv), 1e-4, 1e-4)) << "qkv";
    ASSERT_TRUE(all_close(probs, to_floats(ref.probs), 1e-4, 1e-5)) << "probs";
    ASSERT_TRUE(all_close(context, to_floats(ref.context), 1e-4, 1e-4)) << "context";
  }
}

TEST_F(Dense, AttentionSoftmaxIsStableForLargeScores) {
  // Scores near 1e4 overflow exp without the maximum subtracted; the output must stay finite.
  AttentionGeometry g;
  g.batch = 1, g.tokens = 5, g.dim = 2, g.heads = 1;
  AttentionParams a = attention_params(g, 31);
  for (float& v : a.x) v *= 100.0f;
  for (float& v : a.w_in) v = v > 0 ? 10.0f : -10.0f;
  Floats y(sz(g.tokens * g.dim));
  attention_forward(g, a.x.data(), a.w_in.data(), a.b_in.data(), a.w_out.data(), a.b_out.data(), y.data(), nullptr);
  for (float v : y) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(all_close(y, to_floats(reference_attention(g, a, true).y), 1e-3, 1e-3));
}

struct AttentionGrads {
  Floats dx, dw_in, db_in, dw_out, db_out;
};

AttentionGrads attention_grads(const AttentionGeometry& g, const AttentionParams& a, const Floats& dy) {
  const i64 bt = g.batch * g.tokens, d = g.dim;
  Floats qkv(sz(bt * 3 * d)), probs(sz(g.batch * g.heads * g.tokens * g.tokens)), context(sz(bt * d)), y(sz(bt * d));
  const AttentionSaved saved{qkv.data(), probs.data(), context.data()};
  attention_forward(g, a.x.data(), a.w_in.data(), a.b_in.data(), a.w_out.data(), a.b_out.data(), y.data(), &saved);
  AttentionGrads gr{poisoned(a.x.size()), Floats(a.w_in.size(), 0.0f), Floats(a.b_in.size(), 0.0f), Floats(a.w_out.size(), 0.0f),
                    Floats(a.b_out.size(), 0.0f)};
  attention_backward(g, a.x.data(), a.w_in.data(), a.w_out.data(), saved, dy.data(), gr.dx.data(), gr.dw_in.data(), gr.db_in.data(), gr.dw_out.data(),
                     gr.db_out.data());
  return gr;
}

TEST_F(Dense, AttentionGradientsMatchFiniteDifferences) {
  const AttentionCase cases[] = {
      {1, 1, 2, 1, false, true}, {2, 3, 4, 2, false, true}, {1, 5, 6, 3, true, true},   {2, 4, 8, 4, true, true},
      {1, 9, 4, 1, true, true},  {2, 7, 6, 2, false, true}, {1, 6, 12, 4, false, true},
  };
  std::uint64_t seed = 30000;
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(describe(c));
    const AttentionGeometry g = geometry_of(c);
    AttentionParams a = attention_params(g, seed += 6);
    const Floats r = random_vector(a.x.size(), seed + 5);
    const AttentionGrads gr = attention_grads(g, a, r);
    const auto loss = [&] { return attention_loss(g, a, r); };
    EXPECT_TRUE(gradient_matches(gr.dx, numeric_gradient(a.x, loss, 48))) << "dx";
    EXPECT_TRUE(gradient_matches(gr.dw_in, numeric_gradient(a.w_in, loss, 48))) << "dw_in";
    EXPECT_TRUE(gradient_matches(gr.db_in, numeric_gradient(a.b_in, loss, 48))) << "db_in";
    EXPECT_TRUE(gradient_matches(gr.dw_out, numeric_gradient(a.w_out, loss, 48))) << "dw_out";
    EXPECT_TRUE(gradient_matches(gr.db_out, numeric_gradient(a.b_out, loss, 48))) << "db_out";
  }
}

TEST_F(Dense, AttentionAccumulatesParameterGradientsAndOverwritesDx) {
  for (const AttentionCase& c : {AttentionCase{2, 5, 6, 3, true, true}, AttentionCase{2, 32, 64, 4, false, true}}) {
    SCOPED_TRACE(describe(c));
    const AttentionGeometry g = geometry_of(c);
    const AttentionParams a = attention_params(g, 40000);
    const Floats dy = random_vector(a.x.size(), 40010);
    const i64 bt = g.batch * g.tokens, d = g.dim;
    Floats qkv(sz(bt * 3 * d)), probs(sz(g.batch * g.heads * g.tokens * g.tokens)), context(sz(bt * d)), y(sz(bt * d));
    const AttentionSaved saved{qkv.data(), probs.data(), context.data()};
    attention_forward(g, a.x.data(), a.w_in.data(), a.b_in.data(), a.w_out.data(), a.b_out.data(), y.data(), &saved);
    AttentionGrads gr{poisoned(a.x.size()), Floats(a.w_in.size(), 0.0f), Floats(a.b_in.size(), 0.0f), Floats(a.w_out.size(), 0.0f),
                      Floats(a.b_out.size(), 0.0f)};
    const auto backward = [&] {
      attention_backward(g, a.x.data(), a.w_in.data(), a.w_out.data(), saved, dy.data(), gr.dx.data(), gr.dw_in.data(), gr.db_in.data(),
                         gr.dw_out.data(), gr.db_out.data());
    };
    backward();
    const AttentionGrads once = gr;
    std::fill(gr.dx.begin(), gr.dx.end(), 5.0f);
    backward();
    EXPECT_TRUE(all_close(gr.dx, once.dx));
    EXPECT_TRUE(all_close(gr.dw_in, scaled(once.dw_in, 2.0f)));
    EXPECT_TRUE(all_close(gr.db_in, scaled(once.db_in, 2.0f)));
    EXPECT_TRUE(all_close(gr.dw_out, scaled(once.dw_out, 2.0f)));
    EXPECT_TRUE(all_close(gr.db_out, scaled(once.db_out, 2.0f)));
    // Only the output projection's gradients wanted: nothing else is touched.
    Floats dw_out(a.w_out.size(), 0.0f);
    attention_backward(g, a.x.data(), a.w_in.data(), a.w_out.data(), saved, dy.data(), nullptr, nullptr, nullptr, dw_out.data(), nullptr);
    EXPECT_TRUE(all_close(dw_out, once.dw_out));
  }
}

// ---- threads -----------------------------------------------------------------------------

TEST(DenseThreads, SetKernelThreadsReportsTheCountInEffect) {
  EXPECT_EQ(set_kernel_threads(1), 1);
  EXPECT_EQ(kernel_threads(), 1);
  EXPECT_EQ(set_kernel_threads(3), 3);
  EXPECT_EQ(kernel_threads(), 3);
  const int online = set_kernel_threads(0);  // one per online CPU
  EXPECT_GE(online, 1);
  EXPECT_EQ(kernel_threads(), online);
}

// Every output and gradient of each kernel, once per thread count, for shapes big enough
// that two threads take the parallel paths.
std::vector<Floats> run_all_kernels() {
  std::vector<Floats> out;
  {
    const i64 m = 70, k = 45, n = 600;
    const Floats x = random_vector(sz(m * k), 1), w = random_vector(sz(n * k), 2), b = random_vector(sz(n), 3);
    const Floats dy = random_vector(sz(m * n), 4);
    Floats y(sz(m * n)), dx(x.size()), dw(w.size(), 0.0f), db(b.size(), 0.0f);
    linear_forward(x.data(), w.data(), b.data(), y.data(), m, k, n);
    linear_backward(x.data(), w.data(), dy.data(), dx.data(), dw.data(), db.data(), m, k, n);
    out.insert(out.end(), {y, dx, dw, db});
  }
  for (const ConvCase& c :
       {ConvCase{3, 16, 10, 10, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, ConvCase{1, 8, 24, 24, 5, 3, 3, 2, 1, 1, 1, 1, 1, 1, true},
        ConvCase{4, 8, 12, 12, 16, 1, 1, 1, 1, 0, 0, 1, 1, 2, true}, ConvCase{2, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8, true}}) {
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, 50);
    const Floats dy = random_vector(sz(output_numel(g)), 60);
    Floats y(dy.size()), dx(in.x.size()), dw(in.w.size(), 0.0f), db(in.b.size(), 0.0f);
    conv2d_forward(g, in.x.data(), in.w.data(), in.b.data(), y.data());
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), dx.data(), dw.data(), db.data());
    out.insert(out.end(), {y, dx, dw, db});
  }
  for (const Conv3dCase& c : {Conv3dCase{{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 8, 3, 1, 1, 1},
                              Conv3dCase{{3, 8, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true}, 2, 3, 1, 1, 1}}) {
    const Conv2dGeometry g = geometry_of(c);
    const ConvBuffers in = conv_buffers(g, 55);
    const Floats dy = random_vector(sz(output_numel(g)), 65);
    Floats y(dy.size()), dx(in.x.size()), dw(in.w.size(), 0.0f), db(in.b.size(), 0.0f);
    conv2d_forward(g, in.x.data(), in.w.data(), in.b.data(), y.data());
    conv2d_backward(g, in.x.data(), in.w.data(), dy.data(), dx.data(), dw.data(), db.data());
    out.insert(out.end(), {y, dx, dw, db});
  }
  for (const AttentionCase& c : {AttentionCase{2, 32, 64, 4, true, true}, AttentionCase{1, 40, 48, 3, false, true}}) {
    const AttentionGeometry g = geometry_of(c);
    const AttentionParams a = attention_params(g, 70);
    Floats y(a.x.size());
    attention_forward(g, a.x.data(), a.w_in.data(), a.b_in.data(), a.w_out.data(), a.b_out.data(), y.data(), nullptr);
    const AttentionGrads gr = attention_grads(g, a, random_vector(a.x.size(), 80));
    out.insert(out.end(), {y, gr.dx, gr.dw_in, gr.db_in, gr.dw_out, gr.db_out});
  }
  return out;
}

// Two threads, and three (rounds of samples or heads that leave a remainder; panels of
// unequal width), agree with one.
TEST(DenseThreads, OneTwoAndThreeThreadsAgree) {
  set_kernel_threads(1);
  const std::vector<Floats> one = run_all_kernels();
  for (int threads : {2, 3}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    set_kernel_threads(threads);
    const std::vector<Floats> many = run_all_kernels();
    ASSERT_EQ(one.size(), many.size());
    for (std::size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(all_close(many[i], one[i], 1e-4, 1e-4)) << "output " << i;
  }
}

}  // namespace
}  // namespace hwprof::nn
