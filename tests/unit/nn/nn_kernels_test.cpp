// The engine's non-GEMM kernels against straightforward double-precision reference loops
// written here, over many shapes; every backward against its reference and against central
// finite differences; known values from the formulas; accumulation semantics (parameter
// gradients +=, dx overwritten); and results that do not change with the OpenMP thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nn/kernels.hpp"
#include "nn_test_support.hpp"
#include "ops/ops.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::nn {
namespace {

using testing::all_close;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::size_t size_of(i64 n) {
  return static_cast<std::size_t>(n);
}

std::vector<float> to_float(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

// Σ w·y in double: the scalar whose gradient the finite-difference checks take.
double dot(const std::vector<float>& y, const std::vector<float>& w) {
  double s = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * static_cast<double>(w[i]);
  return s;
}

// Sets the kernels' thread count for one scope, then restores it. set_kernel_threads() sets
// OpenMP's (omp_set_num_threads), which every kernel's parallel region takes as num_threads.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(kernel_threads()) {
    EXPECT_EQ(set_kernel_threads(n), n);
    EXPECT_EQ(omp_get_max_threads(), n);
  }
  ~ThreadCount() { set_kernel_threads(saved_); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  int saved_;
};

// Runs `compute` with one and with two threads and expects bit-identical outputs.
template <class Compute>
void expect_same_for_one_and_two_threads(Compute compute) {
  std::vector<float> one;
  std::vector<float> two;
  {
    ThreadCount threads(1);
    one = compute();
  }
  {
    ThreadCount threads(2);
    two = compute();
  }
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(float)));
}

// ==== vector_math ==========================================================================

TEST(VectorMath, ExpIsWithinFewUlpOverTheFloatRange) {
  double worst = 0.0;
  for (float x = -87.0f; x < 88.0f; x += 0.0137f) {
    const double expected = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::abs(ops::exp_approx(x) - expected) / expected);
  }
  EXPECT_LT(worst, 3.0 * 5.96e-8) << "relative error in ulp of float: " << worst / 5.96e-8;
  EXPECT_EQ(ops::exp_approx(0.0f), 1.0f);
}

TEST(VectorMath, ExpEdgesUnderflowToZeroOverflowToInfinityAndPassNaN) {
  EXPECT_EQ(ops::exp_approx(-kInf), 0.0f);
  EXPECT_EQ(ops::exp_approx(-88.0f), 0.0f);  // denormal in float: flushed
  EXPECT_GT(ops::exp_approx(-87.0f), 1.6e-38f);
  EXPECT_GT(ops::exp_approx(88.5f), 1.6e38f);  // saturated but finite
  EXPECT_TRUE(std::isfinite(ops::exp_approx(88.5f)));
  EXPECT_EQ(ops::exp_approx(89.0f), kInf);
  EXPECT_EQ(ops::exp_approx(kInf), kInf);
  EXPECT_TRUE(std::isnan(ops::exp_approx(kNaN)));
}

TEST(VectorMath, TanhKeepsRelativeAccuracyNearZeroAndSaturates) {
  double worst = 0.0;
  for (float x = -12.0f; x < 12.0f; x += 0.00123f) {
    const double expected = std::tanh(static_cast<double>(x));
    if (expected == 0.0) continue;
    worst = std::max(worst, std::abs(ops::tanh_approx(x) - expected) / std::abs(expected));
  }
  EXPECT_LT(worst, 4e-7);
  EXPECT_FLOAT_EQ(ops::tanh_approx(1e-6f), 1e-6f);
  EXPECT_EQ(ops::tanh_approx(50.0f), 1.0f);
  EXPECT_EQ(ops::tanh_approx(-50.0f), -1.0f);
  EXPECT_TRUE(std::isnan(ops::tanh_approx(kNaN)));
}

TEST(VectorMath, NormalCdfWithinAbramowitzStegunBound) {
  double worst = 0.0;
  for (float x = -10.0f; x < 10.0f; x += 0.00731f) {
    const double expected = 0.5 * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    worst = std::max(worst, std::abs(ops::normal_cdf_approx(x) - expected));
  }
  EXPECT_LT(worst, 2.5e-7);  // A&S 7.1.26: |erf error| <= 1.5e-7, halved, plus float rounding
  EXPECT_TRUE(std::isnan(ops::normal_cdf_approx(kNaN)));
}

TEST(VectorMath, MaxOfEveryLengthAroundTheLaneCount) {
  EXPECT_EQ(ops::max_of(nullptr, 0), -kInf);
  for (i64 n = 1; n <= 40; ++n) {
    for (i64 where = 0; where < n; ++where) {
      std::vector<float> v = random_vector(size_of(n), static_cast<std::uint64_t>(n), -5.0f, 5.0f);
      v[size_of(where)] = 7.5f;
      ASSERT_EQ(ops::max_of(v.data(), n), 7.5f) << "n=" << n << " max at " << where;
    }
  }
  const std::vector<float> all_negative_infinity(20, -kInf);
  EXPECT_EQ(ops::max_of(all_negative_infinity.data(), 20), -kInf);
}

// ==== activations ==========================================================================

// Each form of an element-wise unary op's definition (src/ops/elementwise_unary.cpp), gelu's two
// included, as these tests name them; node_of gives the node that computes it.
enum class Activation { relu, relu6, gelu, gelu_tanh, silu, sigmoid, tanh, hardswish, hardsigmoid, softplus, mish, leaky_relu, elu, hardshrink };

constexpr Activation kAllActivations[] = {Activation::relu,        Activation::relu6,     Activation::gelu, Activation::gelu_tanh,
                                          Activation::silu,        Activation::sigmoid,   Activation::tanh, Activation::hardswish,
                                          Activation::hardsigmoid, Activation::softplus,  Activation::mish, Activation::leaky_relu,
                                          Activation::elu,         Activation::hardshrink};

// The number each activation is run with: not PyTorch's defaults (0.01, 1.0, 0.5), so that a
// kernel that ignored it would fail (hardshrink's band edges at ±3, where the tests keep clear of
// the hard ones' kinks already).
float alpha_of(Activation a) {
  return a == Activation::leaky_relu ? 0.2f : a == Activation::elu ? 1.3f : a == Activation::hardshrink ? 3.0f : 0.0f;
}

const char* name_of(Activation a) {
  switch (a) {
    case Activation::relu:
      return "relu";
    case Activation::relu6:
      return "relu6";
    case Activation::gelu:
      return "gelu";
    case Activation::gelu_tanh:
      return "gelu_tanh";
    case Activation::silu:
      return "silu";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::tanh:
      return "tanh";
    case Activation::hardswish:
      return "hardswish";
    case Activation::hardsigmoid:
      return "hardsigmoid";
    case Activation::softplus:
      return "softplus";
    case Activation::mish:
      return "mish";
    case Activation::leaky_relu:
      return "leaky_relu";
    case Activation::elu:
      return "elu";
    case Activation::hardshrink:
      return "hardshrink";
  }
  return "?";
}

Node node_of(Activation a) {
  Node node;
  const std::string name = name_of(a);
  node.op = name == "gelu_tanh" ? OpKind::gelu : hwprof::ops::find_op(name).value();
  if (a == Activation::gelu_tanh) node.attrs.approximate = GeluApproximation::tanh;
  return node;
}

// The engine's kernels of its definition, as ActivationLayer runs them: the backward reads the
// tensor the definition keeps.
void activation_forward(Activation a, const float* x, float* y, i64 n, float alpha) {
  unary_forward(*hwprof::ops::unary_form(node_of(a)), x, y, n, alpha);
}
void activation_backward(Activation a, const float* x, const float* y, const float* dy, float* dx, i64 n, float alpha) {
  const hwprof::ops::UnaryForm& form = *hwprof::ops::unary_form(node_of(a));
  unary_backward(form, form.traits.backward_reads_output ? y : x, dy, dx, n, alpha);
}

double ref_sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// PyTorch's Softplus with beta 1 and threshold 20.
double ref_softplus(double x) {
  return x > 20.0 ? x : std::log1p(std::exp(x));
}

const double kSqrt2OverPi = std::sqrt(2.0 / std::numbers::pi);

// PyTorch's definitions (torch.nn docs), in double.
double ref_activation(Activation a, double x) {
  switch (a) {
    case Activation::relu:
      return x > 0.0 ? x : 0.0;
    case Activation::relu6:
      return std::min(std::max(x, 0.0), 6.0);
    case Activation::gelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    case Activation::silu:
      return x * ref_sigmoid(x);
    case Activation::sigmoid:
      return ref_sigmoid(x);
    case Activation::tanh:
      return std::tanh(x);
    case Activation::hardswish:
      return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case Activation::hardsigmoid:
      return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    case Activation::softplus:
      return ref_softplus(x);
    case Activation::mish:
      return x * std::tanh(std::log1p(std::exp(x)));
    case Activation::leaky_relu:
      return x > 0.0 ? x : alpha_of(a) * x;
    case Activation::elu:
      return x > 0.0 ? x : alpha_of(a) * std::expm1(x);
    case Activation::hardshrink:
      return x < -alpha_of(a) || x > alpha_of(a) ? x : 0.0;
  }
  return 0.0;
}

double ref_activation_derivative(Activation a, double x) {
  switch (a) {
    case Activation::relu:
      return x > 0.0 ? 1.0 : 0.0;
    case Activation::relu6:
      return x > 0.0 && x < 6.0 ? 1.0 : 0.0;
    case Activation::gelu:
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    case Activation::gelu_tanh: {
      const double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * x * x);
    }
    case Activation::silu:
      return ref_sigmoid(x) * (1.0 + x * (1.0 - ref_sigmoid(x)));
    case Activation::sigmoid:
      return ref_sigmoid(x) * (1.0 - ref_sigmoid(x));
    case Activation::tanh:
      return 1.0 - std::tanh(x) * std::tanh(x);
    case Activation::hardswish:
      return x < -3.0 ? 0.0 : x <= 3.0 ? (2.0 * x + 3.0) / 6.0 : 1.0;
    case Activation::hardsigmoid:
      return x > -3.0 && x < 3.0 ? 1.0 / 6.0 : 0.0;
    case Activation::softplus:
      return x > 20.0 ? 1.0 : ref_sigmoid(x);
    case Activation::mish: {
      const double t = std::tanh(std::log1p(std::exp(x)));
      return t + x * ref_sigmoid(x) * (1.0 - t * t);
    }
    case Activation::leaky_relu:
      return x > 0.0 ? 1.0 : alpha_of(a);
    case Activation::elu:
      return x > 0.0 ? 1.0 : alpha_of(a) * std::exp(x);
    case Activation::hardshrink:
      return x < -alpha_of(a) || x > alpha_of(a) ? 1.0 : 0.0;
  }
  return 0.0;
}

float forward_one(Activation a, float x) {
  float y = 0.0f;
  activation_forward(a, &x, &y, 1, alpha_of(a));
  return y;
}

TEST(Activation, KnownValuesFromTheFormulas) {
  EXPECT_EQ(forward_one(Activation::relu, -1.5f), 0.0f);
  EXPECT_EQ(forward_one(Activation::relu, 2.25f), 2.25f);
  EXPECT_EQ(forward_one(Activation::relu6, -1.0f), 0.0f);
  EXPECT_EQ(forward_one(Activation::relu6, 3.5f), 3.5f);
  EXPECT_EQ(forward_one(Activation::relu6, 7.0f), 6.0f);
  EXPECT_NEAR(forward_one(Activation::gelu, 1.0f), 0.8413447, 3e-7);
  EXPECT_NEAR(forward_one(Activation::gelu, -1.0f), -0.1586553, 3e-7);
  EXPECT_EQ(forward_one(Activation::gelu, 0.0f), 0.0f);
  EXPECT_NEAR(forward_one(Activation::gelu_tanh, 1.0f), 0.8411920, 3e-7);
  EXPECT_NEAR(forward_one(Activation::gelu_tanh, -1.0f), -0.1588080, 3e-7);
  EXPECT_NEAR(forward_one(Activation::gelu_tanh, 2.0f), 1.9545977, 5e-7);
  EXPECT_NEAR(forward_one(Activation::silu, 1.0f), 0.7310586, 3e-7);
  EXPECT_NEAR(forward_one(Activation::silu, -1.0f), -0.2689414, 3e-7);
  EXPECT_NEAR(forward_one(Activation::silu, 2.0f), 1.7615942, 3e-7);
  EXPECT_EQ(forward_one(Activation::sigmoid, 0.0f), 0.5f);
  EXPECT_NEAR(forward_one(Activation::sigmoid, 1.0f), 0.7310586, 3e-7);
  EXPECT_NEAR(forward_one(Activation::tanh, 1.0f), 0.7615942, 3e-7);
  EXPECT_NEAR(forward_one(Activation::tanh, 0.5f), 0.4621172, 3e-7);
  EXPECT_EQ(forward_one(Activation::hardsigmoid, 0.0f), 0.5f);
  EXPECT_EQ(forward_one(Activation::hardsigmoid, 4.0f), 1.0f);
  EXPECT_EQ(forward_one(Activation::hardsigmoid, -3.5f), 0.0f);
  EXPECT_NEAR(forward_one(Activation::hardswish, 1.0f), 4.0 / 6.0, 1e-7);
  EXPECT_EQ(forward_one(Activation::hardswish, -4.0f), 0.0f);
  EXPECT_EQ(forward_one(Activation::hardswish, 5.0f), 5.0f);
  EXPECT_NEAR(forward_one(Activation::softplus, 0.0f), 0.6931472, 3e-7);
  EXPECT_NEAR(forward_one(Activation::softplus, 1.0f), 1.3132617, 3e-7);
  EXPECT_NEAR(forward_one(Activation::softplus, -10.0f), 4.5398899e-5, 1e-11);
  EXPECT_EQ(forward_one(Activation::softplus, 25.0f), 25.0f);
  EXPECT_NEAR(forward_one(Activation::mish, 1.0f), 0.8650984, 3e-7);
  EXPECT_NEAR(forward_one(Activation::mish, -1.0f), -0.3034014, 3e-7);
  EXPECT_EQ(forward_one(Activation::mish, 0.0f), 0.0f);
  EXPECT_EQ(forward_one(Activation::leaky_relu, 2.0f), 2.0f);
  EXPECT_NEAR(forward_one(Activation::leaky_relu, -2.0f), -0.4f, 1e-7);  // slope 0.2
  EXPECT_EQ(forward_one(Activation::leaky_relu, 0.0f), 0.0f);
  EXPECT_EQ(forward_one(Activation::elu, 2.0f), 2.0f);
  EXPECT_NEAR(forward_one(Activation::elu, -1.0f), 1.3 * (std::exp(-1.0) - 1.0), 3e-7);  // α 1.3
  EXPECT_NEAR(forward_one(Activation::elu, -30.0f), -1.3, 3e-7);
  EXPECT_EQ(forward_one(Activation::hardshrink, 2.5f), 0.0f);  // λ 3: inside the band
  EXPECT_EQ(forward_one(Activation::hardshrink, -3.0f), 0.0f) << "the band's edges are inside it (PyTorch's >= and <=)";
  EXPECT_EQ(forward_one(Activation::hardshrink, -3.5f), -3.5f);
  EXPECT_EQ(forward_one(Activation::hardshrink, 4.0f), 4.0f);
}

// Values everywhere the approximations change regime, plus random ones.
std::vector<float> activation_inputs(std::size_t random_count, std::uint64_t seed) {
  std::vector<float> x = {0.0f,  0.3f,  -0.3f, 0.62f, -0.63f, 1.0f,  -1.0f,  2.5f,   -2.5f,   5.9f,  6.1f,
                          -5.9f, 10.0f, -10.f, 30.0f, -30.0f, 87.5f, -87.5f, 100.0f, -100.0f, 1e-5f, -1e-5f};
  const std::vector<float> r = random_vector(random_count, seed, -8.0f, 8.0f);
  x.insert(x.end(), r.begin(), r.end());
  return x;
}

TEST(Activation, ForwardMatchesDoubleReferenceForEveryLength) {
  for (Activation a : kAllActivations) {
    for (std::size_t extra : {0u, 1u, 9u, 31u, 200u, 70000u}) {  // 70000: the parallel path
      const std::vector<float> x = activation_inputs(extra, extra + 1);
      std::vector<float> y(x.size(), kNaN);
      activation_forward(a, x.data(), y.data(), static_cast<i64>(x.size()), alpha_of(a));
      std::vector<double> expected(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) expected[i] = ref_activation(a, x[i]);
      EXPECT_TRUE(all_close(y, to_float(expected), 1e-6, 6e-7)) << name_of(a) << " n=" << x.size();
    }
  }
}

TEST(Activation, BackwardMatchesAnalyticDerivative) {
  for (Activation a : kAllActivations) {
    const std::vector<float> x = activation_inputs(3000, 5);
    const auto n = static_cast<i64>(x.size());
    std::vector<float> y(x.size());
    activation_forward(a, x.data(), y.data(), n, alpha_of(a));
    const std::vector<float> dy = random_vector(x.size(), 6);
    std::vector<float> dx(x.size(), kNaN);  // overwritten, never read
    activation_backward(a, x.data(), y.data(), dy.data(), dx.data(), n, alpha_of(a));
    std::vector<double> expected(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) expected[i] = dy[i] * ref_activation_derivative(a, x[i]);
    EXPECT_TRUE(all_close(dx, to_float(expected), 2e-6, 1e-6)) << name_of(a);
  }
}

TEST(Activation, BackwardMatchesFiniteDifferences) {
  for (Activation a : kAllActivations) {
    // Inputs at least 0.1 from the kinks of relu (0), relu6 (0, 6) and the hard ones (±3): the
    // step is 0.01.
    std::vector<float> x = random_vector(60, 11, -8.0f, 8.0f);
    for (float& v : x) {
      if (std::abs(v) < 0.1f || std::abs(v - 6.0f) < 0.1f || std::abs(std::abs(v) - 3.0f) < 0.1f) v += 0.25f;
    }
    const auto n = static_cast<i64>(x.size());
    const std::vector<float> w = random_vector(x.size(), 12);
    std::vector<float> y(x.size());
    auto loss = [&] {
      activation_forward(a, x.data(), y.data(), n, alpha_of(a));
      return dot(y, w);
    };
    loss();
    std::vector<float> dx(x.size());
    activation_backward(a, x.data(), y.data(), w.data(), dx.data(), n, alpha_of(a));
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss))) << name_of(a);
  }
}

TEST(Activation, NaNPropagatesAndNullDxIsSkipped) {
  for (Activation a : kAllActivations) {
    EXPECT_TRUE(std::isnan(forward_one(a, kNaN))) << name_of(a);
    const float x = 0.5f;
    const float y = forward_one(a, x);
    const float dy = 1.0f;
    activation_backward(a, &x, &y, &dy, nullptr, 1, alpha_of(a));
  }
}

TEST(Activation, ReluGradientOfInfiniteDyStaysZeroWhereClosed) {
  const std::vector<float> x = {-1.0f, 2.0f, 7.0f};
  const std::vector<float> dy = {kInf, kInf, kInf};
  std::vector<float> y(3);
  std::vector<float> dx(3);
  for (Activation a : {Activation::relu, Activation::relu6}) {
    activation_forward(a, x.data(), y.data(), 3, alpha_of(a));
    activation_backward(a, x.data(), y.data(), dy.data(), dx.data(), 3, alpha_of(a));
    EXPECT_EQ(dx[0], 0.0f) << name_of(a);
    EXPECT_EQ(dx[1], kInf) << name_of(a);
  }
  EXPECT_EQ(dx[2], 0.0f);  // relu6 above 6
}

// ==== softmax ==============================================================================

std::vector<double> ref_softmax(const std::vector<float>& x, i64 outer, i64 dim, i64 inner) {
  std::vector<double> y(x.size());
  for (i64 o = 0; o < outer; ++o) {
    for (i64 j = 0; j < inner; ++j) {
      auto at = [&](i64 k) { return size_of((o * dim + k) * inner + j); };
      double max = -std::numeric_limits<double>::infinity();
      for (i64 k = 0; k < dim; ++k) max = std::max(max, static_cast<double>(x[at(k)]));
      double total = 0.0;
      for (i64 k = 0; k < dim; ++k) total += std::exp(x[at(k)] - max);
      for (i64 k = 0; k < dim; ++k) y[at(k)] = std::exp(x[at(k)] - max) / total;
    }
  }
  return y;
}

std::vector<double> ref_softmax_backward(const std::vector<float>& y, const std::vector<float>& dy, i64 outer, i64 dim, i64 inner) {
  std::vector<double> dx(y.size());
  for (i64 o = 0; o < outer; ++o) {
    for (i64 j = 0; j < inner; ++j) {
      auto at = [&](i64 k) { return size_of((o * dim + k) * inner + j); };
      double s = 0.0;
      for (i64 k = 0; k < dim; ++k) s += static_cast<double>(dy[at(k)]) * y[at(k)];
      for (i64 k = 0; k < dim; ++k) dx[at(k)] = y[at(k)] * (dy[at(k)] - s);
    }
  }
  return dx;
}

struct AxisView {
  i64 outer, dim, inner;
};

// Every axis of every shape, seen as [outer, dim, inner].
std::vector<AxisView> every_axis_of(const std::vector<std::vector<i64>>& shapes) {
  std::vector<AxisView> views;
  for (const auto& shape : shapes) {
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
      AxisView v{1, shape[axis], 1};
      for (std::size_t k = 0; k < axis; ++k) v.outer *= shape[k];
      for (std::size_t k = axis + 1; k < shape.size(); ++k) v.inner *= shape[k];
      views.push_back(v);
    }
  }
  return views;
}

const std::vector<std::vector<i64>> kSoftmaxShapes = {{1}, {7}, {3, 5}, {4, 1}, {2, 3, 4}, {2, 5, 70}, {3, 2, 4, 5}, {1, 130, 3}, {2, 9, 1, 65}};

TEST(Softmax, ForwardAndBackwardMatchReferenceAlongEveryAxis) {
  std::uint64_t seed = 100;
  for (const AxisView& v : every_axis_of(kSoftmaxShapes)) {
    const auto n = size_of(v.outer * v.dim * v.inner);
    const std::vector<float> x = random_vector(n, ++seed, -6.0f, 6.0f);
    std::vector<float> y(n, kNaN);
    softmax_forward(x.data(), y.data(), v.outer, v.dim, v.inner);
    ASSERT_TRUE(all_close(y, to_float(ref_softmax(x, v.outer, v.dim, v.inner)), 1e-5, 1e-7)) << v.outer << "x" << v.dim << "x" << v.inner;
    const std::vector<float> dy = random_vector(n, ++seed);
    std::vector<float> dx(n, kNaN);
    softmax_backward(y.data(), dy.data(), dx.data(), v.outer, v.dim, v.inner);
    ASSERT_TRUE(all_close(dx, to_float(ref_softmax_backward(y, dy, v.outer, v.dim, v.inner)), 1e-4, 1e-6))
        << v.outer << "x" << v.dim << "x" << v.inner;
  }
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
  for (const AxisView v : {AxisView{3, 6, 1}, AxisView{2, 4, 3}, AxisView{1, 5, 70}}) {
    const auto n = size_of(v.outer * v.dim * v.inner);
    std::vector<float> x = random_vector(n, 21, -2.0f, 2.0f);
    const std::vector<float> w = random_vector(n, 22);
    std::vector<float> y(n);
    auto loss = [&] {
      softmax_forward(x.data(), y.data(), v.outer, v.dim, v.inner);
      return dot(y, w);
    };
    loss();
    std::vector<float> dx(n);
    softmax_backward(y.data(), w.data(), dx.data(), v.outer, v.dim, v.inner);
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss))) << v.outer << "x" << v.dim << "x" << v.inner;
  }
}

TEST(Softmax, StableForHugeLogitsAndMaskedEntries) {
  // Shifted by 1e4, exp would overflow without subtracting the maximum; -inf is a causal
  // mask's "not allowed" and must get exactly zero probability.
  const std::vector<float> x = {1e4f, 1e4f + 1.0f, -kInf, 1e4f - 2.0f};
  std::vector<float> y(4);
  softmax_forward(x.data(), y.data(), 1, 4, 1);
  const double total = 1.0 + std::exp(1.0) + std::exp(-2.0);
  EXPECT_NEAR(y[0], 1.0 / total, 1e-6);
  EXPECT_NEAR(y[1], std::exp(1.0) / total, 1e-6);
  EXPECT_EQ(y[2], 0.0f);
  EXPECT_NEAR(y[3], std::exp(-2.0) / total, 1e-6);
}

TEST(Softmax, LargeInputsSameForOneAndTwoThreads) {
  const std::vector<float> x = random_vector(64 * 1000, 31, -5.0f, 5.0f);
  const std::vector<float> dy = random_vector(x.size(), 32);
  for (const AxisView v : {AxisView{64, 1000, 1}, AxisView{8, 100, 80}}) {
    expect_same_for_one_and_two_threads([&] {
      std::vector<float> y(x.size());
      std::vector<float> dx(x.size());
      softmax_forward(x.data(), y.data(), v.outer, v.dim, v.inner);
      softmax_backward(y.data(), dy.data(), dx.data(), v.outer, v.dim, v.inner);
      y.insert(y.end(), dx.begin(), dx.end());
      return y;
    });
  }
}

// ==== pooling ==============================================================================

i64 floor_div(i64 a, i64 b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// PyTorch's pooling_output_shape, written from its documented formula: floor or ceil of
// (in + 2p - k)/s, plus one; with ceil_mode the last window must start inside the input or
// the left padding.
i64 pool_output_size(i64 in, i64 k, i64 s, i64 p, bool ceil_mode) {
  i64 out = floor_div(in + 2 * p - k + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

struct PoolCase {
  Pool2dGeometry g;
  bool ceil_mode = false;
};

// kernels 1-3, strides 1-3, paddings up to kernel/2, ceil_mode on and off, odd and even sizes.
std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> cases;
  const std::pair<i64, i64> sizes[] = {{1, 1}, {2, 3}, {4, 4}, {5, 7}, {6, 5}, {7, 2}};
  for (i64 k = 1; k <= 3; ++k) {
    for (i64 s = 1; s <= 3; ++s) {
      for (i64 p = 0; p <= k / 2; ++p) {
        for (bool ceil_mode : {false, true}) {
          for (auto [h, w] : sizes) {
            if (h + 2 * p < k || w + 2 * p < k) continue;
            PoolCase c;
            c.ceil_mode = ceil_mode;
            c.g.batch = 2;
            c.g.channels = 3;
            c.g.in_h = h;
            c.g.in_w = w;
            c.g.kernel_h = k;
            c.g.kernel_w = k == 3 ? 2 : k;  // a non-square kernel too
            c.g.stride_h = s;
            c.g.stride_w = s == 1 ? 2 : s;
            c.g.pad_h = p;
            c.g.pad_w = std::min(p, c.g.kernel_w / 2);
            c.g.out_h = pool_output_size(h, c.g.kernel_h, c.g.stride_h, c.g.pad_h, ceil_mode);
            c.g.out_w = pool_output_size(w, c.g.kernel_w, c.g.stride_w, c.g.pad_w, ceil_mode);
            if (c.g.out_h < 1 || c.g.out_w < 1) continue;
            cases.push_back(c);
          }
        }
      }
    }
  }
  return cases;
}

std::string describe(const PoolCase& c) {
  const Pool2dGeometry& g = c.g;
  return "in " + std::to_string(g.in_h) + "x" + std::to_string(g.in_w) + " k " + std::to_string(g.kernel_h) + "x" + std::to_string(g.kernel_w) +
         " s " + std::to_string(g.stride_h) + "x" + std::to_string(g.stride_w) + " p " + std::to_string(g.pad_h) + "x" + std::to_string(g.pad_w) +
         (c.ceil_mode ? " ceil" : " floor") + " out " + std::to_string(g.out_h) + "x" + std::to_string(g.out_w);
}

i64 in_count(const Pool2dGeometry& g) {
  return g.batch * g.channels * g.in_h * g.in_w;
}
i64 out_count(const Pool2dGeometry& g) {
  return g.batch * g.channels * g.out_h * g.out_w;
}

// Reference max pooling: the first maximum in row-major window order, padding never chosen.
void ref_maxpool(const Pool2dGeometry& g, const std::vector<float>& x, std::vector<float>& y, std::vector<std::int32_t>& argmax) {
  y.assign(size_of(out_count(g)), 0.0f);
  argmax.assign(y.size(), -1);
  for (i64 p = 0; p < g.batch * g.channels; ++p) {
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        float best = -kInf;
        i64 best_at = -1;
        for (i64 i = 0; i < g.kernel_h; ++i) {
          for (i64 j = 0; j < g.kernel_w; ++j) {
            const i64 h = oh * g.stride_h - g.pad_h + i;
            const i64 w = ow * g.stride_w - g.pad_w + j;
            if (h < 0 || h >= g.in_h || w < 0 || w >= g.in_w) continue;
            const float v = x[size_of(p * g.in_h * g.in_w + h * g.in_w + w)];
            if (best_at < 0 || v > best) {
              best = v;
              best_at = h * g.in_w + w;
            }
          }
        }
        const auto o = size_of(p * g.out_h * g.out_w + oh * g.out_w + ow);
        y[o] = best;
        argmax[o] = static_cast<std::int32_t>(best_at);
      }
    }
  }
}

// The divisor of PyTorch's avg_pool2d with count_include_pad=True, per axis: the window
// clipped to [-pad, in + pad) (not to the input).
i64 ref_avg_divisor_axis(i64 start, i64 k, i64 in, i64 pad) {
  return std::min(start + k, in + pad) - start;
}

std::vector<double> ref_avgpool(const Pool2dGeometry& g, const std::vector<float>& x) {
  std::vector<double> y(size_of(out_count(g)));
  for (i64 p = 0; p < g.batch * g.channels; ++p) {
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const i64 h0 = oh * g.stride_h - g.pad_h;
        const i64 w0 = ow * g.stride_w - g.pad_w;
        double total = 0.0;
        for (i64 h = std::max<i64>(h0, 0); h < std::min(h0 + g.kernel_h, g.in_h); ++h) {
          for (i64 w = std::max<i64>(w0, 0); w < std::min(w0 + g.kernel_w, g.in_w); ++w) {
            total += x[size_of(p * g.in_h * g.in_w + h * g.in_w + w)];
          }
        }
        const i64 divisor = ref_avg_divisor_axis(h0, g.kernel_h, g.in_h, g.pad_h) * ref_avg_divisor_axis(w0, g.kernel_w, g.in_w, g.pad_w);
        y[size_of(p * g.out_h * g.out_w + oh * g.out_w + ow)] = total / static_cast<double>(divisor);
      }
    }
  }
  return y;
}

std::vector<double> ref_avgpool_backward(const Pool2dGeometry& g, const std::vector<float>& dy) {
  std::vector<double> dx(size_of(in_count(g)), 0.0);
  for (i64 p = 0; p < g.batch * g.channels; ++p) {
    for (i64 oh = 0; oh < g.out_h; ++oh) {
      for (i64 ow = 0; ow < g.out_w; ++ow) {
        const i64 h0 = oh * g.stride_h - g.pad_h;
        const i64 w0 = ow * g.stride_w - g.pad_w;
        const i64 divisor = ref_avg_divisor_axis(h0, g.kernel_h, g.in_h, g.pad_h) * ref_avg_divisor_axis(w0, g.kernel_w, g.in_w, g.pad_w);
        const double share = dy[size_of(p * g.out_h * g.out_w + oh * g.out_w + ow)] / static_cast<double>(divisor);
        for (i64 h = std::max<i64>(h0, 0); h < std::min(h0 + g.kernel_h, g.in_h); ++h) {
          for (i64 w = std::max<i64>(w0, 0); w < std::min(w0 + g.kernel_w, g.in_w); ++w) {
            dx[size_of(p * g.in_h * g.in_w + h * g.in_w + w)] += share;
          }
        }
      }
    }
  }
  return dx;
}

TEST(Pooling, OutputSizeRuleDropsAWindowStartingInTheRightPadding) {
  EXPECT_EQ(pool_output_size(5, 2, 2, 0, false), 2);
  EXPECT_EQ(pool_output_size(5, 2, 2, 0, true), 3);
  EXPECT_EQ(pool_output_size(4, 2, 2, 1, true), 3);   // last window starts at 3, inside the input
  EXPECT_EQ(pool_output_size(5, 3, 3, 1, true), 2);   // a third would start at 5 = in: in the padding
  EXPECT_EQ(pool_output_size(2, 3, 2, 0, false), 0);  // floor, not truncation, of -1/2
  EXPECT_GT(pool_cases().size(), 120u);
}

TEST(Pooling, MaxForwardAndBackwardMatchReference) {
  std::uint64_t seed = 200;
  for (const PoolCase& c : pool_cases()) {
    const Pool2dGeometry& g = c.g;
    const std::vector<float> x = random_vector(size_of(in_count(g)), ++seed);
    std::vector<float> y(size_of(out_count(g)), kNaN);
    std::vector<std::int32_t> argmax(y.size(), -7);
    maxpool2d_forward(g, x.data(), y.data(), argmax.data());
    std::vector<float> ref_y;
    std::vector<std::int32_t> ref_argmax;
    ref_maxpool(g, x, ref_y, ref_argmax);
    ASSERT_EQ(y, ref_y) << describe(c);
    ASSERT_EQ(argmax, ref_argmax) << describe(c);

    std::vector<float> y_no_argmax(y.size());
    maxpool2d_forward(g, x.data(), y_no_argmax.data(), nullptr);
    ASSERT_EQ(y_no_argmax, ref_y) << describe(c);

    const std::vector<float> dy = random_vector(y.size(), ++seed);
    std::vector<float> dx(x.size(), kNaN);
    maxpool2d_backward(g, argmax.data(), dy.data(), dx.data());
    std::vector<double> ref_dx(x.size(), 0.0);
    for (std::size_t o = 0; o < dy.size(); ++o) {
      const auto plane = static_cast<i64>(o) / (g.out_h * g.out_w);
      ref_dx[size_of(plane * g.in_h * g.in_w + ref_argmax[o])] += dy[o];
    }
    ASSERT_TRUE(all_close(dx, to_float(ref_dx), 1e-6, 1e-7)) << describe(c);
  }
}

// Every pooling definition (ops/pooling.cpp) has the engine's kernels of its reduction and
// axes, and a 2-D one reached through them, on the geometry its node gives, computes what the
// 2-D kernel computes.
TEST(Pooling, EveryDefinitionRunsOnTheEnginesKernels) {
  for (const hwprof::ops::PoolingDefinition& d : hwprof::ops::pooling_definitions()) {
    const PoolKernels* k = pool_kernels(d);
    ASSERT_NE(k, nullptr) << op_name(d.kind);
    EXPECT_NE(k->forward, nullptr) << op_name(d.kind);
    EXPECT_NE(k->backward, nullptr) << op_name(d.kind);
  }
  Node node;
  node.op = OpKind::maxpool2d;
  node.attrs.kernel = {3, 2};
  node.attrs.stride = {2, 2};
  node.attrs.padding = {1, 0};
  node.output_shape = {2, 4, 3};
  const Shape in{2, 7, 6};
  Pool3dGeometry g = pool_geometry(*hwprof::ops::pooling_definition(OpKind::maxpool2d), node, in);
  g.batch = 3;
  EXPECT_EQ(g.in_d, 1);
  EXPECT_EQ(g.kernel_d, 1);
  EXPECT_EQ(g.out_d, 1);
  Pool2dGeometry plane;
  plane.batch = 3;
  plane.channels = 2;
  plane.in_h = 7;
  plane.in_w = 6;
  plane.kernel_h = 3;
  plane.kernel_w = 2;
  plane.stride_h = 2;
  plane.stride_w = 2;
  plane.pad_h = 1;
  plane.out_h = 4;
  plane.out_w = 3;
  const std::vector<float> x = random_vector(size_of(in_count(plane)), 77);
  std::vector<float> y(size_of(out_count(plane))), y_ref(y.size());
  std::vector<std::int32_t> argmax(y.size()), argmax_ref(y.size());
  pool_kernels(*hwprof::ops::pooling_definition(OpKind::maxpool2d))->forward(g, x.data(), y.data(), argmax.data());
  maxpool2d_forward(plane, x.data(), y_ref.data(), argmax_ref.data());
  EXPECT_EQ(y, y_ref);
  EXPECT_EQ(argmax, argmax_ref);
}

TEST(Pooling, AverageForwardAndBackwardMatchReference) {
  std::uint64_t seed = 300;
  for (const PoolCase& c : pool_cases()) {
    const Pool2dGeometry& g = c.g;
    const std::vector<float> x = random_vector(size_of(in_count(g)), ++seed);
    std::vector<float> y(size_of(out_count(g)), kNaN);
    avgpool2d_forward(g, x.data(), y.data());
    ASSERT_TRUE(all_close(y, to_float(ref_avgpool(g, x)), 1e-5, 1e-7)) << describe(c);
    const std::vector<float> dy = random_vector(y.size(), ++seed);
    std::vector<float> dx(x.size(), kNaN);
    avgpool2d_backward(g, dy.data(), dx.data());
    ASSERT_TRUE(all_close(dx, to_float(ref_avgpool_backward(g, dy)), 1e-5, 1e-7)) << describe(c);
  }
}

Pool2dGeometry row_pool(i64 w, i64 k, i64 s, i64 p, bool ceil_mode) {
  Pool2dGeometry g;
  g.in_w = w;
  g.kernel_w = k;
  g.stride_w = s;
  g.pad_w = p;
  g.out_w = pool_output_size(w, k, s, p, ceil_mode);
  return g;
}

TEST(Pooling, AverageDivisorCountsPaddingButNotTheCeilOverhang) {
  // avg_pool1d([1, 2, 3, 4], kernel 3, stride 2, padding 1, ceil_mode, count_include_pad):
  // windows [-1, 2) → (0+1+2)/3, [1, 4) → (2+3+4)/3, [3, 6) clipped to the padded end 5 →
  // 4/2: the padding at 4 counts, the overhang at 5 does not.
  const Pool2dGeometry g = row_pool(4, 3, 2, 1, true);
  ASSERT_EQ(g.out_w, 3);
  const std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y(3);
  avgpool2d_forward(g, x.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 3.0f);
  EXPECT_FLOAT_EQ(y[2], 2.0f);

  // No padding: [1, 2, 3, 4, 5] with kernel 2, stride 2, ceil → the last window holds 5 alone.
  const Pool2dGeometry g2 = row_pool(5, 2, 2, 0, true);
  ASSERT_EQ(g2.out_w, 3);
  const std::vector<float> x2 = {1, 2, 3, 4, 5};
  avgpool2d_forward(g2, x2.data(), y.data());
  EXPECT_FLOAT_EQ(y[0], 1.5f);
  EXPECT_FLOAT_EQ(y[1], 3.5f);
  EXPECT_FLOAT_EQ(y[2], 5.0f);
}

TEST(Pooling, MaxTreatsPaddingAsMinusInfinityAndPropagatesNaN) {
  const Pool2dGeometry g = row_pool(3, 3, 1, 1, false);
  const std::vector<float> x = {-5.0f, -7.0f, -6.0f};
  std::vector<float> y(3);
  std::vector<std::int32_t> argmax(3);
  maxpool2d_forward(g, x.data(), y.data(), argmax.data());
  EXPECT_EQ(y, (std::vector<float>{-5.0f, -5.0f, -6.0f}));  // never the padding's 0
  EXPECT_EQ(argmax, (std::vector<std::int32_t>{0, 0, 2}));
  const std::vector<float> with_nan = {1.0f, kNaN, 0.0f};
  maxpool2d_forward(g, with_nan.data(), y.data(), argmax.data());
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]) && std::isnan(y[2]));
  EXPECT_EQ(argmax, (std::vector<std::int32_t>{1, 1, 1}));
  // Inference (no argmax) takes the same values; a NaN anywhere in a window wins there too.
  const std::vector<float> late_nan = {1.0f, 2.0f, kNaN};
  maxpool2d_forward(g, late_nan.data(), y.data(), nullptr);
  EXPECT_FLOAT_EQ(y[0], 2.0f);
  EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]));
}

TEST(Pooling, BackwardMatchesFiniteDifferences) {
  int checked = 0;
  for (const PoolCase& c : pool_cases()) {
    if (c.g.in_h < 4 || c.g.kernel_h < 2) continue;  // a sample of the cases is enough here
    const Pool2dGeometry& g = c.g;
    const auto n = size_of(in_count(g));
    // Distinct values 0.05 apart, shuffled: no two within 2·step, so no max changes its pick.
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.05f * static_cast<float>((i * 7919) % n);
    const std::vector<float> w = random_vector(size_of(out_count(g)), 41);
    std::vector<float> y(w.size());
    std::vector<std::int32_t> argmax(w.size());
    auto max_loss = [&] {
      maxpool2d_forward(g, x.data(), y.data(), argmax.data());
      return dot(y, w);
    };
    auto avg_loss = [&] {
      avgpool2d_forward(g, x.data(), y.data());
      return dot(y, w);
    };
    std::vector<float> dx(n);
    max_loss();
    maxpool2d_backward(g, argmax.data(), w.data(), dx.data());
    ASSERT_TRUE(gradient_matches(dx, numeric_gradient(x, max_loss, 32))) << "max " << describe(c);
    avgpool2d_backward(g, w.data(), dx.data());
    ASSERT_TRUE(gradient_matches(dx, numeric_gradient(x, avg_loss, 32))) << "avg " << describe(c);
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

std::vector<double> ref_adaptive(const std::vector<float>& x, i64 planes, i64 h, i64 w, i64 oh, i64 ow) {
  std::vector<double> y(size_of(planes * oh * ow));
  for (i64 p = 0; p < planes; ++p) {
    for (i64 i = 0; i < oh; ++i) {
      // PyTorch's adaptive windows: [floor(i·H/P), ceil((i+1)·H/P)), computed in double here.
      const auto h0 = static_cast<i64>(std::floor(static_cast<double>(i * h) / static_cast<double>(oh)));
      const auto h1 = static_cast<i64>(std::ceil(static_cast<double>((i + 1) * h) / static_cast<double>(oh)));
      for (i64 j = 0; j < ow; ++j) {
        const auto w0 = static_cast<i64>(std::floor(static_cast<double>(j * w) / static_cast<double>(ow)));
        const auto w1 = static_cast<i64>(std::ceil(static_cast<double>((j + 1) * w) / static_cast<double>(ow)));
        double total = 0.0;
        for (i64 a = h0; a < h1; ++a) {
          for (i64 b = w0; b < w1; ++b) total += x[size_of(p * h * w + a * w + b)];
        }
        y[size_of(p * oh * ow + i * ow + j)] = total / static_cast<double>((h1 - h0) * (w1 - w0));
      }
    }
  }
  return y;
}

TEST(Pooling, AdaptiveAverageMatchesReferenceAndFiniteDifferences) {
  std::uint64_t seed = 400;
  for (i64 h : {1, 2, 5, 7}) {
    for (i64 w : {1, 3, 6}) {
      for (i64 oh : {1, 2, 3, 5, 8}) {
        for (i64 ow : {1, 2, 4, 7}) {
          const i64 planes = 2 * 3;
          const std::vector<float> x = random_vector(size_of(planes * h * w), ++seed);
          std::vector<float> y(size_of(planes * oh * ow), kNaN);
          adaptive_avgpool2d_forward(x.data(), y.data(), 2, 3, h, w, oh, ow);
          const std::string where = std::to_string(h) + "x" + std::to_string(w) + "→" + std::to_string(oh) + "x" + std::to_string(ow);
          ASSERT_TRUE(all_close(y, to_float(ref_adaptive(x, planes, h, w, oh, ow)), 1e-5, 1e-7)) << where;
          // The operation is linear: its backward is the transpose, checked by differences.
          std::vector<float> xv = x;
          const std::vector<float> wts = random_vector(y.size(), ++seed);
          auto loss = [&] {
            adaptive_avgpool2d_forward(xv.data(), y.data(), 2, 3, h, w, oh, ow);
            return dot(y, wts);
          };
          std::vector<float> dx(x.size(), kNaN);
          adaptive_avgpool2d_backward(wts.data(), dx.data(), 2, 3, h, w, oh, ow);
          ASSERT_TRUE(gradient_matches(dx, numeric_gradient(xv, loss, 16), 1e-3, 1e-4)) << where;
        }
      }
    }
  }
}

TEST(Pooling, LargeInputsSameForOneAndTwoThreads) {
  Pool2dGeometry g;
  g.batch = 4;
  g.channels = 16;
  g.in_h = g.in_w = 17;
  g.kernel_h = g.kernel_w = 3;
  g.stride_h = g.stride_w = 2;
  g.pad_h = g.pad_w = 1;
  g.out_h = g.out_w = pool_output_size(17, 3, 2, 1, true);
  const std::vector<float> x = random_vector(size_of(in_count(g)), 51);
  const std::vector<float> dy = random_vector(size_of(out_count(g)), 52);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> y(dy.size());
    std::vector<std::int32_t> argmax(dy.size());
    std::vector<float> out(x.size() * 3 + dy.size());
    maxpool2d_forward(g, x.data(), y.data(), argmax.data());
    maxpool2d_backward(g, argmax.data(), dy.data(), out.data());
    avgpool2d_backward(g, dy.data(), out.data() + x.size());
    adaptive_avgpool2d_backward(dy.data(), out.data() + 2 * x.size(), 4, 16, 17, 17, g.out_h, g.out_w);
    avgpool2d_forward(g, x.data(), out.data() + 3 * x.size());
    return out;
  });
}

// ==== 3-D pooling ===========================================================================

struct PoolAxis {
  i64 in, k, s, p;
};

struct Pool3dCase {
  Pool3dGeometry g;
  bool ceil_mode = false;
};

Pool3dCase pool3d_case(PoolAxis d, PoolAxis h, PoolAxis w, bool ceil_mode) {
  Pool3dCase c;
  c.ceil_mode = ceil_mode;
  Pool3dGeometry& g = c.g;
  g.batch = 2;
  g.channels = 3;
  g.in_d = d.in, g.in_h = h.in, g.in_w = w.in;
  g.kernel_d = d.k, g.kernel_h = h.k, g.kernel_w = w.k;
  g.stride_d = d.s, g.stride_h = h.s, g.stride_w = w.s;
  g.pad_d = d.p, g.pad_h = h.p, g.pad_w = w.p;
  g.out_d = pool_output_size(d.in, d.k, d.s, d.p, ceil_mode);
  g.out_h = pool_output_size(h.in, h.k, h.s, h.p, ceil_mode);
  g.out_w = pool_output_size(w.in, w.k, w.s, w.p, ceil_mode);
  return c;
}

// Depth windows of 1-3 with every stride and padding PyTorch allows, over a few height/width
// windows (square, rectangular, padded), ceil_mode on and off.
std::vector<Pool3dCase> pool3d_cases() {
  std::vector<Pool3dCase> cases;
  const std::pair<PoolAxis, PoolAxis> planes[] = {{{5, 3, 2, 1}, {6, 3, 2, 1}}, {{4, 2, 2, 0}, {5, 2, 1, 1}}, {{3, 1, 1, 0}, {7, 3, 3, 1}}};
  for (i64 d : {1, 4, 5}) {
    for (i64 k = 1; k <= 3; ++k) {
      for (i64 s = 1; s <= 2; ++s) {
        for (i64 p = 0; p <= k / 2; ++p) {
          for (bool ceil_mode : {false, true}) {
            for (const auto& [h, w] : planes) {
              if (d + 2 * p < k) continue;
              const Pool3dCase c = pool3d_case({d, k, s, p}, h, w, ceil_mode);
              if (c.g.out_d > 0 && c.g.out_h > 0 && c.g.out_w > 0) cases.push_back(c);
            }
          }
        }
      }
    }
  }
  return cases;
}

std::string describe(const Pool3dCase& c) {
  const Pool3dGeometry& g = c.g;
  const auto axis = [](i64 in, i64 k, i64 s, i64 p) {
    return std::to_string(in) + "/k" + std::to_string(k) + "s" + std::to_string(s) + "p" + std::to_string(p);
  };
  return axis(g.in_d, g.kernel_d, g.stride_d, g.pad_d) + " " + axis(g.in_h, g.kernel_h, g.stride_h, g.pad_h) + " " +
         axis(g.in_w, g.kernel_w, g.stride_w, g.pad_w) + (c.ceil_mode ? " ceil" : " floor");
}

i64 in_count(const Pool3dGeometry& g) {
  return g.batch * g.channels * g.in_d * g.in_h * g.in_w;
}
i64 out_count(const Pool3dGeometry& g) {
  return g.batch * g.channels * g.out_d * g.out_h * g.out_w;
}

// One output's window along one axis, [lo, hi) within the input, and the length PyTorch's
// avg_pool3d divides by (the window clipped to the padded input, not to the input).
struct RefSpan {
  i64 lo, hi, divisor;
};
RefSpan ref_span(i64 o, i64 in, i64 k, i64 s, i64 p) {
  const i64 start = o * s - p, end = std::min(start + k, in + p);
  return {std::max<i64>(start, 0), std::min(end, in), end - start};
}

// Reference max (the first maximum in (d, h, w) order; its flat index in the volume) and
// average pooling, in double.
struct RefPool3d {
  std::vector<double> max, avg;
  std::vector<std::int32_t> argmax;
};
RefPool3d ref_pool3d(const Pool3dGeometry& g, const std::vector<float>& x) {
  RefPool3d r;
  const i64 in_volume = g.in_d * g.in_h * g.in_w;
  for (i64 plane = 0; plane < g.batch * g.channels; ++plane) {
    for (i64 od = 0; od < g.out_d; ++od) {
      const RefSpan sd = ref_span(od, g.in_d, g.kernel_d, g.stride_d, g.pad_d);
      for (i64 oh = 0; oh < g.out_h; ++oh) {
        const RefSpan sh = ref_span(oh, g.in_h, g.kernel_h, g.stride_h, g.pad_h);
        for (i64 ow = 0; ow < g.out_w; ++ow) {
          const RefSpan sw = ref_span(ow, g.in_w, g.kernel_w, g.stride_w, g.pad_w);
          double best = -kInf, total = 0.0;
          i64 at = -1;
          for (i64 d = sd.lo; d < sd.hi; ++d) {
            for (i64 h = sh.lo; h < sh.hi; ++h) {
              for (i64 w = sw.lo; w < sw.hi; ++w) {
                const i64 i = (d * g.in_h + h) * g.in_w + w;
                const double v = x[size_of(plane * in_volume + i)];
                total += v;
                if (at < 0 || v > best) best = v, at = i;
              }
            }
          }
          r.max.push_back(best);
          r.argmax.push_back(static_cast<std::int32_t>(at));
          r.avg.push_back(total / static_cast<double>(sd.divisor * sh.divisor * sw.divisor));
        }
      }
    }
  }
  return r;
}

TEST(Pooling3d, MaxAndAverageMatchReference) {
  std::uint64_t seed = 600;
  int checked = 0;
  for (const Pool3dCase& c : pool3d_cases()) {
    SCOPED_TRACE(describe(c));
    const Pool3dGeometry& g = c.g;
    const std::vector<float> x = random_vector(size_of(in_count(g)), ++seed);
    const RefPool3d ref = ref_pool3d(g, x);
    std::vector<float> y(size_of(out_count(g)), kNaN);
    std::vector<std::int32_t> argmax(y.size(), -7);
    maxpool3d_forward(g, x.data(), y.data(), argmax.data());
    ASSERT_TRUE(all_close(y, to_float(ref.max), 0.0, 0.0)) << "max";
    ASSERT_EQ(argmax, ref.argmax);
    avgpool3d_forward(g, x.data(), y.data());
    ASSERT_TRUE(all_close(y, to_float(ref.avg), 1e-5, 1e-6)) << "avg";
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

// PyTorch's max_pool3d: a NaN wins every window it is in; padding is never picked.
TEST(Pooling3d, MaxPropagatesNaNAndNeverPicksPadding) {
  // 2×2×2 volumes, 2×2×2 windows at stride 1 with padding 1: 3×3×3 outputs, each window
  // partly padding.
  const Pool3dGeometry g = pool3d_case({2, 2, 1, 1}, {2, 2, 1, 1}, {2, 2, 1, 1}, false).g;
  ASSERT_EQ(g.out_d * g.out_h * g.out_w, 27);
  std::vector<float> x(size_of(in_count(g)), -5.0f);
  x[3] = kNaN;  // sample 0, channel 0, at (0, 1, 1)
  std::vector<float> y(size_of(out_count(g)));
  std::vector<std::int32_t> argmax(y.size());
  maxpool3d_forward(g, x.data(), y.data(), argmax.data());
  for (i64 o = 0; o < out_count(g); ++o) {
    const i64 od = o / 9 % 3, oh = o / 3 % 3, ow = o % 3;
    // Input index 0 along depth is in windows 0 and 1; index 1 along h and w in windows 1 and 2.
    const bool sees_nan = o < 27 && od <= 1 && oh >= 1 && ow >= 1;
    EXPECT_EQ(std::isnan(y[size_of(o)]), sees_nan) << o;
    if (sees_nan) {
      EXPECT_EQ(argmax[size_of(o)], 3) << o;
    } else {
      EXPECT_EQ(y[size_of(o)], -5.0f) << o;
      EXPECT_GE(argmax[size_of(o)], 0) << o;
      EXPECT_LT(argmax[size_of(o)], 8) << o;
    }
  }
}

TEST(Pooling3d, BackwardMatchesFiniteDifferences) {
  int checked = 0;
  for (const Pool3dCase& c : pool3d_cases()) {
    const Pool3dGeometry& g = c.g;
    if (g.in_d < 4 || g.kernel_d < 2) continue;  // a sample of the cases is enough here
    SCOPED_TRACE(describe(c));
    const auto n = size_of(in_count(g));
    // Distinct values 0.05 apart, shuffled: no max changes its pick under the differences.
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = 0.05f * static_cast<float>((i * 7919) % n);
    const std::vector<float> w = random_vector(size_of(out_count(g)), 43);
    std::vector<float> y(w.size());
    std::vector<std::int32_t> argmax(w.size());
    auto max_loss = [&] {
      maxpool3d_forward(g, x.data(), y.data(), argmax.data());
      return dot(y, w);
    };
    auto avg_loss = [&] {
      avgpool3d_forward(g, x.data(), y.data());
      return dot(y, w);
    };
    std::vector<float> dx(n, kNaN);
    max_loss();
    maxpool3d_backward(g, argmax.data(), w.data(), dx.data());
    ASSERT_TRUE(gradient_matches(dx, numeric_gradient(x, max_loss, 32))) << "max";
    std::fill(dx.begin(), dx.end(), kNaN);
    avgpool3d_backward(g, w.data(), dx.data());
    ASSERT_TRUE(gradient_matches(dx, numeric_gradient(x, avg_loss, 32))) << "avg";
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// Adaptive average pooling of volumes: adaptive_avgpool2d's windows along each axis. A window's
// mean is separable, so the reference is the 2-D reference of each depth slice, then the mean
// of those over each depth window.
TEST(Pooling3d, AdaptiveAverageMatchesReferenceAndFiniteDifferences) {
  std::uint64_t seed = 700;
  for (const auto& [d, od] : {std::pair<i64, i64>{1, 1}, {4, 1}, {5, 2}, {3, 4}}) {
    for (const auto& [h, oh] : {std::pair<i64, i64>{7, 1}, {5, 3}}) {
      for (const auto& [w, ow] : {std::pair<i64, i64>{6, 1}, {3, 2}}) {
        Pool3dGeometry g;
        g.batch = 2, g.channels = 3, g.in_d = d, g.in_h = h, g.in_w = w, g.out_d = od, g.out_h = oh, g.out_w = ow;
        const std::string where = std::to_string(d) + "x" + std::to_string(h) + "x" + std::to_string(w) + "→" + std::to_string(od) + "x" +
                                  std::to_string(oh) + "x" + std::to_string(ow);
        std::vector<float> x = random_vector(size_of(in_count(g)), ++seed);
        const std::vector<double> planes = ref_adaptive(x, g.batch * g.channels * d, h, w, oh, ow);
        std::vector<double> ref;
        for (i64 p = 0; p < g.batch * g.channels; ++p) {
          for (i64 i = 0; i < od; ++i) {
            const i64 d0 = i * d / od, d1 = ((i + 1) * d + od - 1) / od;
            for (i64 j = 0; j < oh * ow; ++j) {
              double total = 0.0;
              for (i64 z = d0; z < d1; ++z) total += planes[size_of((p * d + z) * oh * ow + j)];
              ref.push_back(total / static_cast<double>(d1 - d0));
            }
          }
        }
        std::vector<float> y(size_of(out_count(g)), kNaN);
        adaptive_avgpool3d_forward(g, x.data(), y.data());
        ASSERT_TRUE(all_close(y, to_float(ref), 1e-5, 1e-7)) << where;
        const std::vector<float> wts = random_vector(y.size(), ++seed);
        auto loss = [&] {
          adaptive_avgpool3d_forward(g, x.data(), y.data());
          return dot(y, wts);
        };
        std::vector<float> dx(x.size(), kNaN);
        adaptive_avgpool3d_backward(g, wts.data(), dx.data());
        ASSERT_TRUE(gradient_matches(dx, numeric_gradient(x, loss, 16), 1e-3, 1e-4)) << where;
      }
    }
  }
}

TEST(Pooling3d, LargeInputsSameForOneAndTwoThreads) {
  const Pool3dCase c = pool3d_case({8, 3, 2, 1}, {17, 3, 2, 1}, {15, 3, 2, 1}, true);
  Pool3dGeometry g = c.g;
  g.channels = 16;
  const std::vector<float> x = random_vector(size_of(in_count(g)), 53);
  const std::vector<float> dy = random_vector(size_of(out_count(g)), 54);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> y(dy.size());
    std::vector<std::int32_t> argmax(dy.size());
    std::vector<float> out(x.size() * 3 + dy.size() * 2);
    maxpool3d_forward(g, x.data(), y.data(), argmax.data());
    maxpool3d_backward(g, argmax.data(), dy.data(), out.data());
    avgpool3d_backward(g, dy.data(), out.data() + x.size());
    adaptive_avgpool3d_backward(g, dy.data(), out.data() + 2 * x.size());
    avgpool3d_forward(g, x.data(), out.data() + 3 * x.size());
    adaptive_avgpool3d_forward(g, x.data(), out.data() + 3 * x.size() + dy.size());
    std::copy(y.begin(), y.end(), out.end() - static_cast<std::ptrdiff_t>(y.size()));
    return out;
  });
}

// ==== reduce ==============================================================================

// A sum (or mean) over some axes, written out in double: every input element added into the
// output whose index is its own with the reduced axes set to 0.
std::vector<double> ref_reduce(const std::vector<float>& x, const std::vector<i64>& shape, const std::vector<char>& reduced, bool mean) {
  i64 n_in = 1, n_out = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    n_in *= shape[d];
    n_out *= reduced[d] != 0 ? 1 : shape[d];
  }
  std::vector<double> y(size_of(n_out), 0.0);
  for (i64 i = 0; i < n_in; ++i) {
    i64 rest = i, out = 0, out_stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      const i64 index = rest % shape[d];
      rest /= shape[d];
      if (reduced[d] == 0) {
        out += index * out_stride;
        out_stride *= shape[d];
      }
    }
    y[size_of(out)] += static_cast<double>(x[size_of(i)]);
  }
  if (mean) {
    for (double& v : y) v /= static_cast<double>(n_in / n_out);
  }
  return y;
}

TEST(Reduce, MatchesReferenceAndFiniteDifferences) {
  struct Case {
    std::vector<i64> shape;
    std::vector<char> reduced;
  };
  const Case cases[] = {
      {{2, 3, 4, 5}, {0, 0, 1, 1}},  // spatial mean: contiguous groups
      {{2, 3, 4, 5}, {0, 1, 0, 0}},  // over channels: strided groups
      {{2, 3, 4, 5}, {0, 1, 0, 1}},  // two blocks apart
      {{3, 1, 4, 1}, {0, 1, 1, 0}},  // size-1 axes reduced and kept
      {{2, 6, 1}, {0, 0, 1}},        // a group of one
      {{1, 5, 7}, {0, 1, 1}},        // one sample, every per-sample axis
  };
  std::uint64_t seed = 1200;
  for (const Case& c : cases) {
    for (bool mean : {false, true}) {
      ReduceGeometry g;
      g.shape = c.shape;
      g.reduced = c.reduced;
      g.mean = mean;
      i64 n_in = 1, n_out = 1;
      std::string where = mean ? "mean over" : "sum over";
      for (std::size_t d = 0; d < c.shape.size(); ++d) {
        n_in *= c.shape[d];
        n_out *= c.reduced[d] != 0 ? 1 : c.shape[d];
        where += " " + std::to_string(c.shape[d]) + (c.reduced[d] != 0 ? "r" : "");
      }
      const std::vector<float> x = random_vector(size_of(n_in), ++seed);
      std::vector<float> y(size_of(n_out), kNaN);
      reduce_forward(g, x.data(), y.data());
      ASSERT_TRUE(all_close(y, to_float(ref_reduce(x, c.shape, c.reduced, mean)), 1e-5, 1e-6)) << where;
      // Linear in x: the backward is the transpose, checked by differences.
      std::vector<float> xv = x;
      const std::vector<float> wts = random_vector(y.size(), ++seed);
      auto loss = [&] {
        reduce_forward(g, xv.data(), y.data());
        return dot(y, wts);
      };
      std::vector<float> dx(x.size(), kNaN);
      reduce_backward(g, wts.data(), dx.data());
      ASSERT_TRUE(gradient_matches(dx, numeric_gradient(xv, loss, 24), 1e-3, 1e-4)) << where;
    }
  }
}

TEST(Reduce, LargeInputsSameForOneAndTwoThreads) {
  ReduceGeometry g;
  g.shape = {4, 16, 23, 29};
  const std::vector<float> x = random_vector(size_of(4 * 16 * 23 * 29), 71);
  for (const std::vector<char>& reduced : {std::vector<char>{0, 0, 1, 1}, std::vector<char>{0, 1, 0, 0}}) {
    g.reduced = reduced;
    for (bool mean : {false, true}) {
      g.mean = mean;
      const i64 n_out = reduced[1] != 0 ? 4 * 23 * 29 : 4 * 16;
      const std::vector<float> dy = random_vector(size_of(n_out), 72);
      expect_same_for_one_and_two_threads([&] {
        std::vector<float> out(dy.size() + x.size());
        reduce_forward(g, x.data(), out.data());
        reduce_backward(g, dy.data(), out.data() + dy.size());
        return out;
      });
    }
  }
}

// ==== upsample ============================================================================

// PyTorch's F.interpolate, written out as a loop in double from its documented rules: the
// source coordinate of an output index (legacy nearest floors dst·scale; bilinear uses
// half-pixel centres clamped at 0, or dst·(in−1)/(out−1) with align_corners), then the
// nearest element or the weighted sum of the four around it.
struct RefAxis {
  i64 in = 1, out = 1;
  double factor = 0.0;  // the scale factor the output was given by; 0: by its size
};
double ref_scale(const RefAxis& a, bool align_corners) {
  if (align_corners) return a.out > 1 ? static_cast<double>(a.in - 1) / static_cast<double>(a.out - 1) : 0.0;
  return a.factor > 0.0 ? 1.0 / a.factor : static_cast<double>(a.in) / static_cast<double>(a.out);
}
i64 ref_nearest(const RefAxis& a, i64 d) {
  if (a.out == a.in) return d;
  if (a.out == 2 * a.in) return d / 2;
  return std::min(static_cast<i64>(std::floor(static_cast<double>(d) * ref_scale(a, false))), a.in - 1);
}
double ref_source(const RefAxis& a, i64 d, bool align_corners) {
  const double s = ref_scale(a, align_corners);
  return align_corners ? s * static_cast<double>(d) : std::max(s * (static_cast<double>(d) + 0.5) - 0.5, 0.0);
}
std::vector<double> ref_upsample(const std::vector<float>& x, i64 planes, RefAxis ah, RefAxis aw, bool bilinear, bool align_corners) {
  std::vector<double> y(size_of(planes * ah.out * aw.out));
  for (i64 p = 0; p < planes; ++p) {
    auto at = [&](i64 r, i64 c) { return static_cast<double>(x[size_of(p * ah.in * aw.in + r * aw.in + c)]); };
    for (i64 i = 0; i < ah.out; ++i) {
      for (i64 j = 0; j < aw.out; ++j) {
        double v = 0.0;
        if (!bilinear) {
          v = at(ref_nearest(ah, i), ref_nearest(aw, j));
        } else {
          const double sh = ref_source(ah, i, align_corners), sw = ref_source(aw, j, align_corners);
          const i64 h0 = std::min(static_cast<i64>(sh), ah.in - 1), w0 = std::min(static_cast<i64>(sw), aw.in - 1);
          const i64 h1 = std::min(h0 + 1, ah.in - 1), w1 = std::min(w0 + 1, aw.in - 1);
          const double lh = sh - static_cast<double>(h0), lw = sw - static_cast<double>(w0);
          v = (1 - lh) * ((1 - lw) * at(h0, w0) + lw * at(h0, w1)) + lh * ((1 - lw) * at(h1, w0) + lw * at(h1, w1));
        }
        y[size_of(p * ah.out * aw.out + i * aw.out + j)] = v;
      }
    }
  }
  return y;
}

TEST(Upsample, MatchesReferenceAndFiniteDifferences) {
  struct Case {
    i64 h, w, oh, ow;
    double sh, sw;  // the scale factors the output was given by (0: by its size)
  };
  const Case cases[] = {{3, 4, 6, 8, 2.0, 2.0}, {3, 4, 6, 8, 0.0, 0.0}, {5, 3, 7, 4, 1.5, 1.5}, {5, 3, 7, 4, 0.0, 0.0}, {4, 4, 4, 4, 1.0, 1.0},
                        {2, 5, 1, 9, 0.0, 0.0}, {6, 7, 3, 2, 0.0, 0.0}, {1, 1, 5, 3, 0.0, 0.0}, {4, 3, 9, 7, 2.3, 2.5}, {10, 10, 20, 20, 2.05, 2.0}};
  std::uint64_t seed = 900;
  for (const Case& c : cases) {
    for (int mode = 0; mode < 3; ++mode) {  // nearest, bilinear, bilinear with align_corners
      UpsampleGeometry g;
      g.batch = 2;
      g.channels = 3;
      g.in_h = c.h;
      g.in_w = c.w;
      g.out_h = c.oh;
      g.out_w = c.ow;
      g.scale_h = c.sh;
      g.scale_w = c.sw;
      g.bilinear = mode > 0;
      g.align_corners = mode == 2;
      const i64 planes = g.batch * g.channels;
      const std::string where = std::to_string(c.h) + "x" + std::to_string(c.w) + "→" + std::to_string(c.oh) + "x" + std::to_string(c.ow) +
                                " scale " + std::to_string(c.sh) + " mode " + std::to_string(mode);
      const std::vector<float> x = random_vector(size_of(planes * c.h * c.w), ++seed);
      std::vector<float> y(size_of(planes * c.oh * c.ow), kNaN);
      upsample_forward(g, x.data(), y.data());
      const auto expected = ref_upsample(x, planes, {c.h, c.oh, c.sh}, {c.w, c.ow, c.sw}, g.bilinear, g.align_corners);
      ASSERT_TRUE(all_close(y, to_float(expected), 1e-5, 1e-6)) << where;
      // Linear in x: the backward is the transpose, checked by differences.
      std::vector<float> xv = x;
      const std::vector<float> wts = random_vector(y.size(), ++seed);
      auto loss = [&] {
        upsample_forward(g, xv.data(), y.data());
        return dot(y, wts);
      };
      std::vector<float> dx(x.size(), kNaN);
      upsample_backward(g, wts.data(), dx.data());
      ASSERT_TRUE(gradient_matches(dx, numeric_gradient(xv, loss, 24), 1e-3, 1e-4)) << where;
    }
  }
}

// Nearest's index rule at the edges PyTorch special-cases: twice the size reads dst/2 whatever
// the factor (10 × 2.05 = 20.5 → 20 rows), a third of it floors dst·3 (src 0, 3, 6, ...).
TEST(Upsample, NearestIndicesAsPyTorch) {
  UpsampleGeometry g;
  g.in_h = 1;
  g.in_w = 10;
  g.out_h = 1;
  g.out_w = 20;
  g.scale_w = 2.05;
  std::vector<float> x(10);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<float> y(20);
  upsample_forward(g, x.data(), y.data());
  for (std::size_t j = 0; j < y.size(); ++j) EXPECT_EQ(y[j], static_cast<float>(j / 2)) << j;
  g.out_w = 3;
  g.scale_w = 0.0;
  upsample_forward(g, x.data(), y.data());
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 3.0f);
  EXPECT_EQ(y[2], 6.0f);
}

TEST(Upsample, LargeInputsSameForOneAndTwoThreads) {
  UpsampleGeometry g;
  g.batch = 4;
  g.channels = 16;
  g.in_h = g.in_w = 17;
  g.out_h = 40;
  g.out_w = 35;
  const std::vector<float> x = random_vector(size_of(4 * 16 * 17 * 17), 61);
  const std::vector<float> dy = random_vector(size_of(4 * 16 * 40 * 35), 62);
  for (bool bilinear : {false, true}) {
    g.bilinear = bilinear;
    expect_same_for_one_and_two_threads([&] {
      std::vector<float> out(dy.size() + x.size());
      upsample_forward(g, x.data(), out.data());
      upsample_backward(g, dy.data(), out.data() + dy.size());
      return out;
    });
  }
}

// ==== batchnorm2d ==========================================================================

struct NormShape {
  i64 n, c, hw;
};
// {1, 3, 1}: one value per channel, where the unbiased variance does not exist.
const NormShape kBatchNormShapes[] = {{1, 1, 2}, {2, 3, 5}, {4, 2, 1}, {3, 4, 7}, {1, 5, 9}, {2, 1, 33}, {1, 3, 1}};

struct RefBatchStats {
  std::vector<double> mean, var;  // biased variance
};

RefBatchStats ref_batch_stats(const std::vector<float>& x, NormShape s) {
  RefBatchStats st{std::vector<double>(size_of(s.c)), std::vector<double>(size_of(s.c))};
  const double m = static_cast<double>(s.n * s.hw);
  for (i64 ch = 0; ch < s.c; ++ch) {
    double total = 0.0;
    for (i64 b = 0; b < s.n; ++b) {
      for (i64 i = 0; i < s.hw; ++i) total += x[size_of((b * s.c + ch) * s.hw + i)];
    }
    const double mean = total / m;
    double sq = 0.0;
    for (i64 b = 0; b < s.n; ++b) {
      for (i64 i = 0; i < s.hw; ++i) sq += std::pow(x[size_of((b * s.c + ch) * s.hw + i)] - mean, 2);
    }
    st.mean[size_of(ch)] = mean;
    st.var[size_of(ch)] = sq / m;
  }
  return st;
}

std::vector<double> ref_batchnorm(const std::vector<float>& x, const std::vector<float>& gamma, const std::vector<float>& beta,
                                  const std::vector<double>& mean, const std::vector<double>& var, double eps, NormShape s) {
  std::vector<double> y(x.size());
  for (i64 b = 0; b < s.n; ++b) {
    for (i64 ch = 0; ch < s.c; ++ch) {
      const auto k = size_of(ch);
      for (i64 i = 0; i < s.hw; ++i) {
        const auto at = size_of((b * s.c + ch) * s.hw + i);
        y[at] = (x[at] - mean[k]) / std::sqrt(var[k] + eps) * gamma[k] + beta[k];
      }
    }
  }
  return y;
}

TEST(BatchNorm, EvalUsesRunningStatistics) {
  std::uint64_t seed = 500;
  for (const NormShape s : kBatchNormShapes) {
    const auto n = size_of(s.n * s.c * s.hw);
    const std::vector<float> x = random_vector(n, ++seed, -3.0f, 3.0f);
    const std::vector<float> gamma = random_vector(size_of(s.c), ++seed, 0.5f, 1.5f);
    const std::vector<float> beta = random_vector(size_of(s.c), ++seed);
    const std::vector<float> rm = random_vector(size_of(s.c), ++seed);
    const std::vector<float> rv = random_vector(size_of(s.c), ++seed, 0.2f, 2.0f);
    std::vector<float> y(n, kNaN);
    batchnorm2d_forward_eval(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 1e-5, y.data(), s.n, s.c, s.hw);
    const std::vector<double> mean(rm.begin(), rm.end());
    const std::vector<double> var(rv.begin(), rv.end());
    EXPECT_TRUE(all_close(y, to_float(ref_batchnorm(x, gamma, beta, mean, var, 1e-5, s)), 1e-5, 1e-6)) << s.n << "x" << s.c << "x" << s.hw;
  }
}

TEST(BatchNorm, TrainNormalisesWithBatchStatisticsAndUpdatesRunningOnes) {
  std::uint64_t seed = 600;
  for (const NormShape s : kBatchNormShapes) {
    for (double momentum : {0.1, 0.3}) {
      const auto n = size_of(s.n * s.c * s.hw);
      const auto c = size_of(s.c);
      const std::vector<float> x = random_vector(n, ++seed, -3.0f, 3.0f);
      const std::vector<float> gamma = random_vector(c, ++seed, 0.5f, 1.5f);
      const std::vector<float> beta = random_vector(c, ++seed);
      const std::vector<float> rm0 = random_vector(c, ++seed);
      const std::vector<float> rv0 = random_vector(c, ++seed, 0.2f, 2.0f);
      std::vector<float> rm = rm0;
      std::vector<float> rv = rv0;
      std::vector<float> y(n, kNaN);
      std::vector<float> save_mean(c, kNaN);
      std::vector<float> save_invstd(c, kNaN);
      batchnorm2d_forward_train(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 1e-5, momentum, y.data(), save_mean.data(),
                                save_invstd.data(), s.n, s.c, s.hw);
      const RefBatchStats st = ref_batch_stats(x, s);
      const std::string where = std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.hw);
      EXPECT_TRUE(all_close(y, to_float(ref_batchnorm(x, gamma, beta, st.mean, st.var, 1e-5, s)), 1e-4, 1e-5)) << where;
      std::vector<double> invstd(c);
      std::vector<double> rm_expected(c);
      std::vector<double> rv_expected(c);
      const double m = static_cast<double>(s.n * s.hw);
      for (std::size_t k = 0; k < c; ++k) {
        invstd[k] = 1.0 / std::sqrt(st.var[k] + 1e-5);
        rm_expected[k] = (1.0 - momentum) * rm0[k] + momentum * st.mean[k];
        // PyTorch: the running variance takes the unbiased batch variance.
        const double unbiased = m > 1 ? st.var[k] * m / (m - 1) : st.var[k];
        rv_expected[k] = (1.0 - momentum) * rv0[k] + momentum * unbiased;
      }
      EXPECT_TRUE(all_close(save_mean, to_float(st.mean), 1e-5, 1e-6)) << where;
      EXPECT_TRUE(all_close(save_invstd, to_float(invstd), 1e-4, 1e-6)) << where;
      EXPECT_TRUE(all_close(rm, to_float(rm_expected), 1e-5, 1e-6)) << where;
      EXPECT_TRUE(all_close(rv, to_float(rv_expected), 1e-5, 1e-6)) << where;
    }
  }
}

TEST(BatchNorm, TrainStatisticsKeepDigitsWhenTheMeanIsLarge) {
  // 1e4 + noise of 1e-2: one-pass E[x²] - E[x]² in float would lose every digit of the
  // variance, and a mean rounded to float before centring would shift y by up to 8%.
  const NormShape s{4, 2, 50};
  std::vector<float> x = random_vector(size_of(s.n * s.c * s.hw), 61, -0.01f, 0.01f);
  for (float& v : x) v += 1e4f;
  const std::vector<float> gamma(2, 1.0f);
  const std::vector<float> beta(2, 0.0f);
  std::vector<float> rm(2, 0.0f);
  std::vector<float> rv(2, 1.0f);
  std::vector<float> y(x.size());
  std::vector<float> mean(2);
  std::vector<float> invstd(2);
  batchnorm2d_forward_train(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 0.0, 0.1, y.data(), mean.data(), invstd.data(), s.n, s.c,
                            s.hw);
  const RefBatchStats st = ref_batch_stats(x, s);
  for (std::size_t k = 0; k < 2; ++k) EXPECT_NEAR(1.0 / (invstd[k] * invstd[k]), st.var[k], 1e-3 * st.var[k]);
  EXPECT_TRUE(all_close(y, to_float(ref_batchnorm(x, gamma, beta, st.mean, st.var, 0.0, s)), 1e-4, 1e-4));
}

TEST(BatchNorm, BackwardMatchesFiniteDifferencesAndAccumulates) {
  std::uint64_t seed = 700;
  for (const NormShape s : kBatchNormShapes) {
    if (s.n * s.hw < 2) continue;
    const auto n = size_of(s.n * s.c * s.hw);
    const auto c = size_of(s.c);
    std::vector<float> x = random_vector(n, ++seed, -2.0f, 2.0f);
    std::vector<float> gamma = random_vector(c, ++seed, 0.5f, 1.5f);
    std::vector<float> beta = random_vector(c, ++seed);
    const std::vector<float> w = random_vector(n, ++seed);
    std::vector<float> y(n);
    std::vector<float> mean(c);
    std::vector<float> invstd(c);
    auto loss = [&] {
      std::vector<float> rm(c, 0.0f);
      std::vector<float> rv(c, 1.0f);
      batchnorm2d_forward_train(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 1e-5, 0.1, y.data(), mean.data(), invstd.data(), s.n, s.c,
                                s.hw);
      return dot(y, w);
    };
    loss();
    std::vector<float> dx(n, kNaN);      // overwritten
    std::vector<float> dgamma(c, 1.0f);  // accumulated onto
    std::vector<float> dbeta(c, -2.0f);
    batchnorm2d_backward(x.data(), gamma.data(), mean.data(), invstd.data(), w.data(), dx.data(), dgamma.data(), dbeta.data(), s.n, s.c, s.hw);
    for (float& g : dgamma) g -= 1.0f;
    for (float& b : dbeta) b += 2.0f;
    const std::string where = std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.hw);
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss))) << "dx " << where;
    EXPECT_TRUE(gradient_matches(dgamma, numeric_gradient(gamma, loss))) << "dgamma " << where;
    EXPECT_TRUE(gradient_matches(dbeta, numeric_gradient(beta, loss))) << "dbeta " << where;

    // Null gradients are skipped; dx alone equals dx computed with the others.
    std::vector<float> dx_alone(n);
    batchnorm2d_backward(x.data(), gamma.data(), mean.data(), invstd.data(), w.data(), dx_alone.data(), nullptr, nullptr, s.n, s.c, s.hw);
    EXPECT_EQ(dx_alone, dx) << where;
  }
}

TEST(BatchNorm, LargeInputsSameForOneAndTwoThreads) {
  const NormShape s{4, 8, 40 * 40};
  const auto n = size_of(s.n * s.c * s.hw);
  const std::vector<float> x = random_vector(n, 71, -2.0f, 2.0f);
  const std::vector<float> dy = random_vector(n, 72);
  const std::vector<float> gamma = random_vector(8, 73, 0.5f, 1.5f);
  const std::vector<float> beta = random_vector(8, 74);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> rm(8, 0.0f);
    std::vector<float> rv(8, 1.0f);
    std::vector<float> out(2 * n + 6 * 8, 0.0f);
    float* y = out.data();
    float* dx = y + n;
    float* mean = dx + n;
    float* invstd = mean + 8;
    float* dgamma = invstd + 8;
    float* dbeta = dgamma + 8;
    batchnorm2d_forward_train(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 1e-5, 0.1, y, mean, invstd, s.n, s.c, s.hw);
    batchnorm2d_backward(x.data(), gamma.data(), mean, invstd, dy.data(), dx, dgamma, dbeta, s.n, s.c, s.hw);
    std::copy(rm.begin(), rm.end(), dbeta + 8);
    std::copy(rv.begin(), rv.end(), dbeta + 16);
    batchnorm2d_forward_eval(x.data(), gamma.data(), beta.data(), rm.data(), rv.data(), 1e-5, y, s.n, s.c, s.hw);
    return out;
  });
}

// ==== layernorm ============================================================================

struct RowsShape {
  i64 rows, d;
};
const RowsShape kLayerNormShapes[] = {{1, 1}, {1, 8}, {3, 5}, {7, 64}, {2, 65}, {5, 130}, {4, 3}};

TEST(LayerNorm, ForwardMatchesReference) {
  std::uint64_t seed = 800;
  for (const RowsShape s : kLayerNormShapes) {
    const auto n = size_of(s.rows * s.d);
    const std::vector<float> x = random_vector(n, ++seed, -3.0f, 3.0f);
    const std::vector<float> gamma = random_vector(size_of(s.d), ++seed, 0.5f, 1.5f);
    const std::vector<float> beta = random_vector(size_of(s.d), ++seed);
    std::vector<float> y(n, kNaN);
    std::vector<float> mean(size_of(s.rows), kNaN);
    std::vector<float> invstd(size_of(s.rows), kNaN);
    layernorm_forward(x.data(), gamma.data(), beta.data(), 1e-5, y.data(), mean.data(), invstd.data(), s.rows, s.d);
    std::vector<double> ref_y(n);
    std::vector<double> ref_mean(size_of(s.rows));
    std::vector<double> ref_invstd(size_of(s.rows));
    for (i64 r = 0; r < s.rows; ++r) {
      double total = 0.0;
      for (i64 j = 0; j < s.d; ++j) total += x[size_of(r * s.d + j)];
      const double m = total / static_cast<double>(s.d);
      double sq = 0.0;
      for (i64 j = 0; j < s.d; ++j) sq += std::pow(x[size_of(r * s.d + j)] - m, 2);
      const double is = 1.0 / std::sqrt(sq / static_cast<double>(s.d) + 1e-5);
      ref_mean[size_of(r)] = m;
      ref_invstd[size_of(r)] = is;
      for (i64 j = 0; j < s.d; ++j) {
        const auto at = size_of(r * s.d + j);
        ref_y[at] = (x[at] - m) * is * gamma[size_of(j)] + beta[size_of(j)];
      }
    }
    const std::string where = std::to_string(s.rows) + "x" + std::to_string(s.d);
    EXPECT_TRUE(all_close(y, to_float(ref_y), 1e-4, 1e-5)) << where;
    EXPECT_TRUE(all_close(mean, to_float(ref_mean), 1e-5, 1e-6)) << where;
    EXPECT_TRUE(all_close(invstd, to_float(ref_invstd), 1e-4, 1e-6)) << where;
    // Inference: no saved statistics, same output.
    std::vector<float> y_inference(n);
    layernorm_forward(x.data(), gamma.data(), beta.data(), 1e-5, y_inference.data(), nullptr, nullptr, s.rows, s.d);
    EXPECT_EQ(y_inference, y) << where;
  }
}

TEST(LayerNorm, KeepsDigitsWhenTheMeanIsLarge) {
  const RowsShape s{3, 100};
  std::vector<float> x = random_vector(size_of(s.rows * s.d), 90, -0.01f, 0.01f);
  for (float& v : x) v += 1e4f;
  std::vector<float> y(x.size());
  layernorm_forward(x.data(), nullptr, nullptr, 0.0, y.data(), nullptr, nullptr, s.rows, s.d);
  std::vector<double> expected(x.size());
  for (i64 r = 0; r < s.rows; ++r) {
    const auto row = x.begin() + r * s.d;
    const double m = std::accumulate(row, row + s.d, 0.0) / static_cast<double>(s.d);
    double sq = 0.0;
    for (auto it = row; it != row + s.d; ++it) sq += (*it - m) * (*it - m);
    const double invstd = 1.0 / std::sqrt(sq / static_cast<double>(s.d));
    for (i64 j = 0; j < s.d; ++j) expected[size_of(r * s.d + j)] = (row[j] - m) * invstd;
  }
  EXPECT_TRUE(all_close(y, to_float(expected), 1e-4, 1e-4));
}

TEST(LayerNorm, BackwardMatchesFiniteDifferencesAndAccumulates) {
  std::uint64_t seed = 900;
  for (const RowsShape s : kLayerNormShapes) {
    if (s.d < 2) continue;
    const auto n = size_of(s.rows * s.d);
    const auto d = size_of(s.d);
    std::vector<float> x = random_vector(n, ++seed, -2.0f, 2.0f);
    std::vector<float> gamma = random_vector(d, ++seed, 0.5f, 1.5f);
    std::vector<float> beta = random_vector(d, ++seed);
    const std::vector<float> w = random_vector(n, ++seed);
    std::vector<float> y(n);
    std::vector<float> mean(size_of(s.rows));
    std::vector<float> invstd(size_of(s.rows));
    auto loss = [&] {
      layernorm_forward(x.data(), gamma.data(), beta.data(), 1e-5, y.data(), mean.data(), invstd.data(), s.rows, s.d);
      return dot(y, w);
    };
    loss();
    std::vector<float> dx(n, kNaN);
    std::vector<float> dgamma(d, 0.5f);
    std::vector<float> dbeta(d, 0.25f);
    layernorm_backward(x.data(), gamma.data(), mean.data(), invstd.data(), w.data(), dx.data(), dgamma.data(), dbeta.data(), s.rows, s.d);
    for (float& g : dgamma) g -= 0.5f;
    for (float& b : dbeta) b -= 0.25f;
    const std::string where = std::to_string(s.rows) + "x" + std::to_string(s.d);
    EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss))) << "dx " << where;
    EXPECT_TRUE(gradient_matches(dgamma, numeric_gradient(gamma, loss))) << "dgamma " << where;
    EXPECT_TRUE(gradient_matches(dbeta, numeric_gradient(beta, loss))) << "dbeta " << where;
  }
}

TEST(LayerNorm, NullAffineMeansIdentityScaleAndZeroShift) {
  const RowsShape s{3, 10};
  const auto n = size_of(s.rows * s.d);
  const std::vector<float> x = random_vector(n, 95);
  const std::vector<float> ones(10, 1.0f);
  const std::vector<float> zeros(10, 0.0f);
  std::vector<float> y_affine(n);
  std::vector<float> y_plain(n);
  std::vector<float> mean(3);
  std::vector<float> invstd(3);
  layernorm_forward(x.data(), ones.data(), zeros.data(), 1e-5, y_affine.data(), mean.data(), invstd.data(), 3, 10);
  layernorm_forward(x.data(), nullptr, nullptr, 1e-5, y_plain.data(), nullptr, nullptr, 3, 10);
  EXPECT_TRUE(all_close(y_plain, y_affine, 1e-6, 1e-7));
  const std::vector<float> dy = random_vector(n, 96);
  std::vector<float> dx_affine(n);
  std::vector<float> dx_plain(n);
  layernorm_backward(x.data(), ones.data(), mean.data(), invstd.data(), dy.data(), dx_affine.data(), nullptr, nullptr, 3, 10);
  layernorm_backward(x.data(), nullptr, mean.data(), invstd.data(), dy.data(), dx_plain.data(), nullptr, nullptr, 3, 10);
  EXPECT_TRUE(all_close(dx_plain, dx_affine, 1e-6, 1e-7));
}

TEST(LayerNorm, LargeInputsSameForOneAndTwoThreads) {
  const RowsShape s{300, 200};
  const auto n = size_of(s.rows * s.d);
  const std::vector<float> x = random_vector(n, 97, -2.0f, 2.0f);
  const std::vector<float> dy = random_vector(n, 98);
  const std::vector<float> gamma = random_vector(200, 99, 0.5f, 1.5f);
  const std::vector<float> beta = random_vector(200, 100);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> out(2 * n + 2 * 300 + 2 * 200, 0.0f);
    float* y = out.data();
    float* dx = y + n;
    float* mean = dx + n;
    float* invstd = mean + 300;
    float* dgamma = invstd + 300;
    float* dbeta = dgamma + 200;
    layernorm_forward(x.data(), gamma.data(), beta.data(), 1e-5, y, mean, invstd, s.rows, s.d);
    layernorm_backward(x.data(), gamma.data(), mean, invstd, dy.data(), dx, dgamma, dbeta, s.rows, s.d);
    return out;
  });
}

// ==== add, accumulate, concat, permute, select ===============================================

TEST(DataMovement, AddAndAccumulate) {
  for (std::size_t n : {1u, 17u, 100000u}) {
    const std::vector<float> a = random_vector(n, 1);
    const std::vector<float> b = random_vector(n, 2);
    std::vector<float> y(n, kNaN);
    add_forward(a.data(), b.data(), y.data(), static_cast<i64>(n));
    std::vector<float> acc = a;
    accumulate(acc.data(), b.data(), static_cast<i64>(n));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(y[i], a[i] + b[i]);
      ASSERT_EQ(acc[i], a[i] + b[i]);
    }
  }
}

// Broadcasting binary ops against a direct NumPy-rule reference, and their gradients against
// finite differences (each input's summed over the axes it was broadcast along).
struct BinaryCase {
  std::vector<i64> a, b;
};
const BinaryCase kBinaryCases[] = {
    {{2, 3, 4, 5}, {2, 3, 1, 1}},  // squeeze-and-excitation: x * s
    {{2, 3, 1, 1}, {2, 3, 4, 5}},  // the other way round
    {{2, 1, 4}, {2, 3, 1}},        // both broadcast
    {{3, 7}, {3, 7}},              // no broadcast
    {{2, 4, 1}, {2, 4, 6}},        // along the last axis
};

std::vector<float> binary_reference(BinaryOp op, const std::vector<float>& a, const std::vector<float>& b, const BinaryCase& c,
                                    std::vector<i64>* out_shape) {
  std::vector<i64> out;
  for (std::size_t d = 0; d < c.a.size(); ++d) out.push_back(std::max(c.a[d], c.b[d]));
  *out_shape = out;
  i64 n = 1;
  for (i64 d : out) n *= d;
  std::vector<float> y(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    i64 rest = i, ia = 0, ib = 0, sa = 1, sb = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
      const i64 index = rest % out[d];
      rest /= out[d];
      ia += (c.a[d] == 1 ? 0 : index) * sa;
      ib += (c.b[d] == 1 ? 0 : index) * sb;
      sa *= c.a[d];
      sb *= c.b[d];
    }
    const float x = a[static_cast<std::size_t>(ia)], z = b[static_cast<std::size_t>(ib)];
    y[static_cast<std::size_t>(i)] = op == BinaryOp::add ? x + z : op == BinaryOp::sub ? x - z : op == BinaryOp::mul ? x * z : x / z;
  }
  return y;
}

TEST(Binary, BroadcastForwardAndBackwardMatchReferenceAndFiniteDifferences) {
  std::uint64_t seed = 3000;
  for (const BinaryCase& c : kBinaryCases) {
    for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div}) {
      i64 na = 1, nb = 1;
      for (i64 d : c.a) na *= d;
      for (i64 d : c.b) nb *= d;
      std::vector<float> a = random_vector(static_cast<std::size_t>(na), ++seed);
      std::vector<float> b = random_vector(static_cast<std::size_t>(nb), ++seed, 0.5f, 2.0f);  // away from 0 for div
      const Broadcast p = make_broadcast(c.a, c.b);
      std::vector<i64> out_shape;
      const std::vector<float> want = binary_reference(op, a, b, c, &out_shape);
      ASSERT_EQ(p.out, out_shape);
      std::vector<float> y(want.size(), kNaN);
      binary_forward(op, a.data(), b.data(), y.data(), p);
      ASSERT_TRUE(all_close(y, want, 1e-6, 1e-7)) << static_cast<int>(op);

      const std::vector<float> w = random_vector(want.size(), ++seed);
      auto loss = [&] {
        binary_forward(op, a.data(), b.data(), y.data(), p);
        return dot(y, w);
      };
      std::vector<float> da(a.size(), kNaN), db(b.size(), kNaN);  // overwritten, never read
      binary_backward(op, a.data(), b.data(), w.data(), da.data(), db.data(), p);
      EXPECT_TRUE(gradient_matches(da, numeric_gradient(a, loss))) << "da, op " << static_cast<int>(op);
      EXPECT_TRUE(gradient_matches(db, numeric_gradient(b, loss))) << "db, op " << static_cast<int>(op);
      binary_backward(op, a.data(), b.data(), w.data(), nullptr, db.data(), p);  // one gradient alone
    }
  }
}

TEST(Binary, LargeInputsSameForOneAndTwoThreads) {
  const std::vector<i64> sa = {4, 32, 28, 28}, sb = {4, 32, 1, 1};
  const std::vector<float> a = random_vector(4 * 32 * 28 * 28, 1);
  const std::vector<float> b = random_vector(4 * 32, 2);
  const std::vector<float> dy = random_vector(a.size(), 3);
  const Broadcast p = make_broadcast(sa, sb);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> out(a.size() * 2 + b.size());
    binary_forward(BinaryOp::mul, a.data(), b.data(), out.data(), p);
    binary_backward(BinaryOp::mul, a.data(), b.data(), dy.data(), out.data() + a.size(), out.data() + 2 * a.size(), p);
    return out;
  });
}

// ==== matmul of two activations ===========================================================

// y[o] = a[ia]·b[ib] by the broadcasting rule written out: the reference the kernel is held to.
struct MatmulReference {
  std::vector<double> y, da, db;
};
MatmulReference ref_matmul(const std::vector<i64>& sa, const std::vector<i64>& sb, const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& dy) {
  const i64 m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const std::size_t lead = std::max(sa.size(), sb.size()) - 2;
  std::vector<i64> da_dims(lead, 1), db_dims(lead, 1), out(lead);
  for (std::size_t d = 0; d < sa.size() - 2; ++d) da_dims[lead - (sa.size() - 2) + d] = sa[d];
  for (std::size_t d = 0; d < sb.size() - 2; ++d) db_dims[lead - (sb.size() - 2) + d] = sb[d];
  i64 count = 1;
  for (std::size_t d = 0; d < lead; ++d) count *= (out[d] = std::max(da_dims[d], db_dims[d]));
  MatmulReference r{std::vector<double>(static_cast<std::size_t>(count * m * n)), std::vector<double>(a.size()), std::vector<double>(b.size())};
  for (i64 o = 0; o < count; ++o) {
    i64 rest = o, ia = 0, ib = 0, scale = 1, scale_a = 1, scale_b = 1;
    for (std::size_t d = lead; d-- > 0;) {
      const i64 at = rest % out[d];
      rest /= out[d];
      ia += (da_dims[d] == 1 ? 0 : at) * scale_a;
      ib += (db_dims[d] == 1 ? 0 : at) * scale_b;
      scale *= out[d];
      scale_a *= da_dims[d];
      scale_b *= db_dims[d];
    }
    for (i64 i = 0; i < m; ++i) {
      for (i64 j = 0; j < n; ++j) {
        double acc = 0.0;
        const double g = dy[static_cast<std::size_t>((o * m + i) * n + j)];
        for (i64 t = 0; t < k; ++t) {
          const auto ai = static_cast<std::size_t>((ia * m + i) * k + t), bi = static_cast<std::size_t>((ib * k + t) * n + j);
          acc += static_cast<double>(a[ai]) * b[bi];
          r.da[ai] += g * b[bi];
          r.db[bi] += g * a[ai];
        }
        r.y[static_cast<std::size_t>((o * m + i) * n + j)] = acc;
      }
    }
  }
  return r;
}

TEST(Matmul, BroadcastForwardAndBackwardMatchTheReferenceOnOneAndTwoThreads) {
  const struct {
    std::vector<i64> a, b;
  } cases[] = {
      {{4, 7, 9}, {4, 9, 5}},              // one matrix per sample
      {{6, 2, 7, 9}, {6, 1, 9, 5}},        // b shared by a's second axis
      {{6, 1, 3, 4}, {6, 5, 4, 8}},        // a shared
      {{3, 7, 9}, {9, 5}},                 // b has no leading axes: one matrix for all (rank differs)
      {{2, 40, 33, 31}, {2, 40, 31, 29}},  // enough matrices for one per thread
      {{1, 200, 150}, {1, 150, 180}},      // one large GEMM split into panels
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.a) + " x " + ::testing::PrintToString(c.b));
    i64 na = 1, nb = 1;
    for (i64 d : c.a) na *= d;
    for (i64 d : c.b) nb *= d;
    const std::vector<float> a = random_vector(static_cast<std::size_t>(na), 1), b = random_vector(static_cast<std::size_t>(nb), 2);
    const MatmulPlan p = make_matmul_plan(c.a, c.b);
    i64 ny = 1;
    for (i64 d : p.out) ny *= d;
    const std::vector<float> dy = random_vector(static_cast<std::size_t>(ny), 3);
    const MatmulReference r = ref_matmul(c.a, c.b, a, b, dy);
    ASSERT_EQ(r.y.size(), static_cast<std::size_t>(ny));
    for (int threads : {1, 2}) {
      const ThreadCount scope(threads);
      std::vector<float> y(r.y.size(), kNaN), da(a.size(), kNaN), db(b.size(), kNaN);
      matmul_forward(p, a.data(), b.data(), y.data());
      matmul_backward(p, a.data(), b.data(), dy.data(), da.data(), db.data());
      EXPECT_TRUE(all_close(y, to_float(r.y), 1e-5, 1e-5)) << threads << " threads";
      EXPECT_TRUE(all_close(da, to_float(r.da), 1e-5, 1e-5)) << threads << " threads";
      EXPECT_TRUE(all_close(db, to_float(r.db), 1e-5, 1e-5)) << threads << " threads";
    }
  }
}

struct ConcatCase {
  i64 outer;
  std::vector<i64> axis_sizes;
  i64 inner;
};
const ConcatCase kConcatCases[] = {{2, {1, 2, 3}, 4}, {1, {5, 7}, 1}, {3, {2, 2}, 1}, {2, {4, 1, 2}, 9}, {6, {1, 1}, 3}, {1, {300, 200}, 140}};

TEST(DataMovement, ConcatForwardAndBackwardMatchReference) {
  std::uint64_t seed = 1000;
  for (const ConcatCase& c : kConcatCases) {
    i64 axis_total = 0;
    for (i64 s : c.axis_sizes) axis_total += s;
    std::vector<std::vector<std::int32_t>> parts;
    std::vector<const void*> pointers;
    for (i64 s : c.axis_sizes) {
      std::vector<std::int32_t> part(size_of(c.outer * s * c.inner));
      std::iota(part.begin(), part.end(), static_cast<std::int32_t>(++seed * 100000));
      parts.push_back(std::move(part));
    }
    for (const auto& part : parts) pointers.push_back(part.data());
    std::vector<std::int32_t> y(size_of(c.outer * axis_total * c.inner), -1);
    concat_forward(pointers, c.axis_sizes, y.data(), c.outer, c.inner);
    std::vector<std::int32_t> expected;
    for (i64 o = 0; o < c.outer; ++o) {
      for (std::size_t q = 0; q < parts.size(); ++q) {
        const i64 block = c.axis_sizes[q] * c.inner;
        expected.insert(expected.end(), parts[q].begin() + o * block, parts[q].begin() + (o + 1) * block);
      }
    }
    ASSERT_EQ(y, expected) << "outer " << c.outer << " inner " << c.inner;

    // Backward splits dy; a null dx (an integer input) is skipped.
    const std::vector<float> dy = random_vector(y.size(), ++seed);
    std::vector<std::vector<float>> dxs;
    std::vector<float*> dx_pointers;
    for (i64 s : c.axis_sizes) dxs.emplace_back(size_of(c.outer * s * c.inner), kNaN);
    for (auto& dx : dxs) dx_pointers.push_back(dx.data());
    dx_pointers[0] = nullptr;
    concat_backward(dy.data(), dx_pointers, c.axis_sizes, c.outer, c.inner);
    i64 axis_offset = c.axis_sizes[0];
    for (std::size_t q = 1; q < dxs.size(); ++q) {
      for (i64 o = 0; o < c.outer; ++o) {
        for (i64 k = 0; k < c.axis_sizes[q] * c.inner; ++k) {
          ASSERT_EQ(dxs[q][size_of(o * c.axis_sizes[q] * c.inner + k)], dy[size_of((o * axis_total + axis_offset) * c.inner + k)]);
        }
      }
      axis_offset += c.axis_sizes[q];
    }
    EXPECT_TRUE(std::isnan(dxs[0][0]));
  }
}

// Reference permute: decode every output position, gather from the input.
std::vector<std::int32_t> ref_permute(const std::vector<std::int32_t>& x, const std::vector<i64>& shape, const std::vector<i64>& perm) {
  const std::size_t rank = shape.size();
  std::vector<i64> in_stride(rank, 1);
  for (std::size_t k = rank; k-- > 1;) in_stride[k - 1] = in_stride[k] * shape[k];
  std::vector<std::int32_t> y(x.size());
  for (std::size_t out = 0; out < y.size(); ++out) {
    auto rest = static_cast<i64>(out);
    i64 in = 0;
    for (std::size_t k = rank; k-- > 0;) {
      const i64 size = shape[size_of(perm[k])];
      in += rest % size * in_stride[size_of(perm[k])];
      rest /= size;
    }
    y[out] = x[size_of(in)];
  }
  return y;
}

std::vector<std::int32_t> iota_vector(const std::vector<i64>& shape) {
  i64 n = 1;
  for (i64 s : shape) n *= s;
  std::vector<std::int32_t> v(size_of(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<i64> permuted(const std::vector<i64>& shape, const std::vector<i64>& perm) {
  std::vector<i64> out;
  for (i64 p : perm) out.push_back(shape[size_of(p)]);
  return out;
}

std::vector<i64> inverse(const std::vector<i64>& perm) {
  std::vector<i64> inv(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) inv[size_of(perm[k])] = static_cast<i64>(k);
  return inv;
}

void check_permute(const std::vector<i64>& shape, const std::vector<i64>& perm) {
  std::string where = "shape";
  for (i64 s : shape) where += " " + std::to_string(s);
  where += " perm";
  for (i64 p : perm) where += " " + std::to_string(p);
  const std::vector<std::int32_t> x = iota_vector(shape);
  std::vector<std::int32_t> y(x.size(), -1);
  permute(x.data(), y.data(), shape, perm);
  ASSERT_EQ(y, ref_permute(x, shape, perm)) << where;
  // Backward: the inverse permutation on the permuted shape restores the input.
  std::vector<std::int32_t> back(x.size(), -1);
  permute(y.data(), back.data(), permuted(shape, perm), inverse(perm));
  ASSERT_EQ(back, x) << where;
}

TEST(DataMovement, PermuteMatchesReferenceForEveryPermutation) {
  const std::vector<std::vector<i64>> shapes = {{5},          {3, 4},       {1, 6},       {2, 3, 4},      {4, 1, 5},      {17, 3, 19},
                                                {2, 3, 4, 5}, {1, 3, 1, 5}, {4, 1, 6, 1}, {2, 37, 3, 21}, {2, 2, 3, 1, 4}};
  for (const auto& shape : shapes) {
    std::vector<i64> perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      check_permute(shape, perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  check_permute({}, {});
  check_permute({3, 0, 2}, {2, 0, 1});
}

TEST(DataMovement, PermuteLargeCasesTakeEveryPathAndAgreeAcrossThreads) {
  // [B,T,H,hd] → [B,H,T,hd] (runs of hd), a transpose of the last two axes (tiles), and
  // runs longer than one work item (split).
  const std::vector<std::pair<std::vector<i64>, std::vector<i64>>> cases = {
      {{2, 128, 8, 40}, {0, 2, 1, 3}}, {{2, 8, 100, 50}, {0, 1, 3, 2}}, {{3, 2, 20000}, {1, 0, 2}}};
  for (const auto& [shape, perm] : cases) {
    check_permute(shape, perm);
    const std::vector<std::int32_t> x = iota_vector(shape);
    expect_same_for_one_and_two_threads([&] {
      std::vector<float> y(x.size());
      permute(x.data(), y.data(), shape, perm);
      return y;
    });
  }
}

TEST(DataMovement, PermuteKeepsFloatBitsExactly) {
  const std::vector<float> x = {kNaN, -0.0f, kInf, 1.5f, -kInf, 3.0f};
  std::vector<float> y(6);
  permute(x.data(), y.data(), {2, 3}, {1, 0});
  EXPECT_EQ(0, std::memcmp(&y[1], &x[3], 4));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::signbit(y[2]) && y[2] == 0.0f);
}

TEST(DataMovement, SelectForwardAndBackward) {
  struct Case {
    i64 outer, dim, inner, index;
  };
  for (const Case c : {Case{1, 3, 4, 0}, Case{2, 3, 4, 2}, Case{5, 1, 7, 0}, Case{3, 4, 1, 3}, Case{200, 3, 200, 1}}) {
    std::vector<std::int32_t> x(size_of(c.outer * c.dim * c.inner));
    std::iota(x.begin(), x.end(), 0);
    std::vector<std::int32_t> y(size_of(c.outer * c.inner), -1);
    select_forward(x.data(), y.data(), c.outer, c.dim, c.inner, c.index);
    const std::vector<float> dy = random_vector(y.size(), 5);
    std::vector<float> dx(x.size(), kNaN);
    select_backward(dy.data(), dx.data(), c.outer, c.dim, c.inner, c.index);
    for (i64 o = 0; o < c.outer; ++o) {
      for (i64 k = 0; k < c.dim; ++k) {
        for (i64 j = 0; j < c.inner; ++j) {
          const auto at = size_of((o * c.dim + k) * c.inner + j);
          if (k == c.index) {
            ASSERT_EQ(y[size_of(o * c.inner + j)], x[at]);
            ASSERT_EQ(dx[at], dy[size_of(o * c.inner + j)]);
          } else {
            ASSERT_EQ(dx[at], 0.0f);
          }
        }
      }
    }
  }
}

// A reference for strided_copy and its gradient: every output position's input offset, by
// the definition (offset + Σ index·stride).
std::vector<i64> view_offsets(const StridedView& v) {
  i64 total = 1;
  for (i64 s : v.size) total *= s;
  std::vector<i64> offsets;
  for (i64 i = 0; i < total; ++i) {
    i64 rest = i;
    i64 offset = v.offset;
    for (auto k = v.size.size(); k-- > 0;) {
      offset += rest % v.size[k] * v.stride[k];
      rest /= v.size[k];
    }
    offsets.push_back(offset);
  }
  return offsets;
}

void check_strided_copy(const StridedView& v, i64 x_numel, const std::string& what) {
  std::vector<std::int32_t> x(size_of(x_numel));
  std::iota(x.begin(), x.end(), 0);
  const std::vector<i64> offsets = view_offsets(v);
  std::vector<std::int32_t> y(offsets.size(), -1);
  strided_copy(x.data(), y.data(), v);
  for (std::size_t i = 0; i < offsets.size(); ++i) ASSERT_EQ(y[i], x[size_of(offsets[i])]) << what << " at " << i;
  const std::vector<float> dy = random_vector(offsets.size(), 7);
  std::vector<double> want(x.size(), 0.0);
  for (std::size_t i = 0; i < offsets.size(); ++i) want[size_of(offsets[i])] += dy[i];
  std::vector<float> dx(x.size(), kNaN);
  strided_copy_backward(dy.data(), dx.data(), x_numel, v);
  for (std::size_t j = 0; j < x.size(); ++j) ASSERT_NEAR(dx[j], want[j], 1e-5 * (1.0 + std::abs(want[j]))) << what << " dx at " << j;
}

// Slices (a channel split, steps, reversed), expands (stride 0) and tiles ([copies, size] pairs)
// of a [2, 6, 5, 4] tensor, and large ones that take the split-run and grouped-run paths.
TEST(DataMovement, StridedCopyAndItsGradientMatchTheDefinition) {
  const i64 n = 2 * 6 * 5 * 4;
  check_strided_copy({{2, 3, 5, 4}, {120, 20, 4, 1}, 60}, n, "channel split, second half");
  check_strided_copy({{2, 3, 2, 2}, {120, 40, -8, 3}, 16}, n, "steps 2, -2, 3");
  check_strided_copy({{2, 6, 5, 4}, {120, 20, 4, -1}, 3}, n, "last axis reversed");
  check_strided_copy({{2, 6, 1, 1}, {120, 20, 4, 1}, 7}, n, "one element per channel");
  check_strided_copy({{2, 3, 5, 4}, {20, 0, 4, 1}, 0}, 2 * 20, "expand [1, 5, 4] to [3, 5, 4]");
  check_strided_copy({{2, 6, 2, 5, 3, 4}, {120, 20, 0, 4, 0, 1}, 0}, n, "tile by [1, 2, 3]");
  check_strided_copy({{3, 1, 1}, {1, 0, 0}, 0}, 3, "expand of one element per sample");
  check_strided_copy({{2, 40000}, {80000, 1}, 40000}, 160000, "long runs split into items");
  check_strided_copy({{64, 30, 50}, {3000, 60, 1}, 5}, 64 * 3000, "short runs grouped");
  for (const StridedView& v : {StridedView{{64, 30, 50}, {3000, 60, 2}, 5}, StridedView{{4, 3, 20000}, {20000, 0, 1}, 0}}) {
    std::vector<float> x(64 * 3000);
    std::iota(x.begin(), x.end(), 0.0f);
    expect_same_for_one_and_two_threads([&] {
      std::vector<float> y(view_offsets(v).size());
      strided_copy(x.data(), y.data(), v);
      std::vector<float> dx(x.size());
      strided_copy_backward(y.data(), dx.data(), v.stride[1] == 0 ? 4 * 20000 : static_cast<i64>(x.size()), v);
      y.insert(y.end(), dx.begin(), dx.end());
      return y;
    });
  }
}

// pad against the definition: each output position's input element per axis (or the value).
void check_pad(const PadGeometry& g, const std::string& what) {
  const auto source = [&](i64 o, std::size_t k) -> i64 {
    const i64 i = o - g.before[k];
    const i64 n = g.in[k];
    if (i >= 0 && i < n) return i;
    if (g.fill == PadFill::constant) return -1;
    if (g.fill == PadFill::edge) return i < 0 ? 0 : n - 1;
    return i < 0 ? -i : 2 * (n - 1) - i;
  };
  i64 in_total = 1, out_total = 1;
  for (std::size_t k = 0; k < g.in.size(); ++k) {
    in_total *= g.in[k];
    out_total *= g.out[k];
  }
  const std::vector<float> x = random_vector(size_of(in_total), 3);
  std::vector<float> y(size_of(out_total), kNaN);
  pad_forward(g, x.data(), y.data());
  const std::vector<float> dy = random_vector(y.size(), 4);
  std::vector<double> want(x.size(), 0.0);
  for (i64 o = 0; o < out_total; ++o) {
    i64 rest = o, offset = 0, stride = 1;
    bool constant = false;
    for (auto k = g.in.size(); k-- > 0;) {
      const i64 i = source(rest % g.out[k], k);
      rest /= g.out[k];
      constant = constant || i < 0;
      offset += i * stride;
      stride *= g.in[k];
    }
    ASSERT_EQ(y[size_of(o)], constant ? g.value : x[size_of(offset)]) << what << " at " << o;
    if (!constant) want[size_of(offset)] += dy[size_of(o)];
  }
  std::vector<float> dx(x.size(), kNaN);
  pad_backward(g, dy.data(), dx.data());
  for (std::size_t j = 0; j < x.size(); ++j) ASSERT_NEAR(dx[j], want[j], 1e-5 * (1.0 + std::abs(want[j]))) << what << " dx at " << j;
}

TEST(DataMovement, PadForwardAndBackwardMatchTheDefinitionInEveryMode) {
  for (const PadFill fill : {PadFill::constant, PadFill::reflect, PadFill::edge}) {
    const std::string mode = fill == PadFill::constant ? "constant" : fill == PadFill::reflect ? "reflect" : "edge";
    check_pad({{2, 3, 5, 4}, {2, 6, 7, 7}, {0, 1, 2, 1}, fill, 0.5f}, mode + ", every axis");
    check_pad({{2, 3, 5, 4}, {2, 3, 5, 2}, {0, 0, 0, -1}, fill, 0.5f}, mode + ", a crop of the last axis");
    check_pad({{2, 3, 5, 4}, {2, 3, 4, 7}, {0, 0, -1, 3}, fill, -2.0f}, mode + ", crop and pad");
    check_pad({{3, 2, 4}, {3, 4, 4}, {0, 1, 0}, fill, 1.0f}, mode + ", an outer axis only");
    const PadGeometry large{{4, 16, 60, 60}, {4, 16, 63, 61}, {0, 0, 2, 1}, fill, 0.0f};
    check_pad(large, mode + ", large");
    const std::vector<float> x = random_vector(4 * 16 * 60 * 60, 9);
    expect_same_for_one_and_two_threads([&] {
      std::vector<float> y(4 * 16 * 63 * 61);
      pad_forward(large, x.data(), y.data());
      std::vector<float> dx(x.size());
      pad_backward(large, y.data(), dx.data());
      y.insert(y.end(), dx.begin(), dx.end());
      return y;
    });
  }
}

// where against the definition, with the condition, a and b each broadcast on some axes.
TEST(DataMovement, WhereForwardAndBackwardMatchTheDefinition) {
  const std::vector<i64> out = {2, 3, 4, 5};
  const std::vector<i64> cs = {1, 3, 1, 5}, as = {2, 3, 4, 5}, bs = {2, 1, 4, 1};
  const auto numel_of = [](const std::vector<i64>& s) {
    i64 n = 1;
    for (i64 d : s) n *= d;
    return n;
  };
  std::vector<float> c(size_of(numel_of(cs)));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = (i * 7) % 3 == 0 ? 1.0f : 0.0f;
  const std::vector<float> a = random_vector(size_of(numel_of(as)), 1), b = random_vector(size_of(numel_of(bs)), 2);
  const WhereGeometry g{out, broadcast_strides(cs, out), broadcast_strides(as, out), broadcast_strides(bs, out)};
  std::vector<float> y(size_of(numel_of(out)), kNaN);
  where_forward(g, c.data(), a.data(), b.data(), y.data());
  const std::vector<float> dy = random_vector(y.size(), 3);
  std::vector<double> da(a.size(), 0.0), db(b.size(), 0.0);
  // Every output position's offsets in c, a and b, by the definition of broadcasting.
  const auto offset = [&](i64 i, const std::vector<i64>& s) {
    i64 o = 0, stride = 1;
    for (auto k = out.size(); k-- > 0;) {
      const i64 index = i % out[k];
      i /= out[k];
      o += (s[k] == 1 ? 0 : index) * stride;
      stride *= s[k];
    }
    return size_of(o);
  };
  for (i64 i = 0; i < numel_of(out); ++i) {
    const bool on = c[offset(i, cs)] != 0.0f;
    ASSERT_EQ(y[size_of(i)], on ? a[offset(i, as)] : b[offset(i, bs)]) << i;
    (on ? da[offset(i, as)] : db[offset(i, bs)]) += dy[size_of(i)];
  }
  std::vector<float> ga(a.size(), kNaN), gb(b.size(), kNaN);
  where_backward(g, c.data(), dy.data(), ga.data(), numel_of(as), gb.data(), numel_of(bs));
  for (std::size_t j = 0; j < a.size(); ++j) ASSERT_NEAR(ga[j], da[j], 1e-5 * (1.0 + std::abs(da[j])));
  for (std::size_t j = 0; j < b.size(); ++j) ASSERT_NEAR(gb[j], db[j], 1e-5 * (1.0 + std::abs(db[j])));
}

TEST(DataMovement, GatherForwardAndBackwardSumRepeatedIndices) {
  struct Case {
    i64 outer, dim, inner;
    std::vector<i64> indices;
  };
  for (const Case& c : {Case{2, 5, 3, {4, 0, 0, 2}}, Case{1, 3, 1, {2}}, Case{300, 4, 70, {3, 1, 3}}}) {
    std::vector<std::int32_t> x(size_of(c.outer * c.dim * c.inner));
    std::iota(x.begin(), x.end(), 0);
    const auto count = static_cast<i64>(c.indices.size());
    std::vector<std::int32_t> y(size_of(c.outer * count * c.inner), -1);
    gather_forward(x.data(), y.data(), c.outer, c.dim, c.inner, c.indices);
    const std::vector<float> dy = random_vector(y.size(), 6);
    std::vector<double> want(x.size(), 0.0);
    for (i64 o = 0; o < c.outer; ++o) {
      for (i64 j = 0; j < count; ++j) {
        for (i64 i = 0; i < c.inner; ++i) {
          const auto from = size_of((o * c.dim + c.indices[size_of(j)]) * c.inner + i);
          const auto to = size_of((o * count + j) * c.inner + i);
          ASSERT_EQ(y[to], x[from]);
          want[from] += dy[to];
        }
      }
    }
    std::vector<float> dx(x.size(), kNaN);
    gather_backward(dy.data(), dx.data(), c.outer, c.dim, c.inner, c.indices);
    for (std::size_t j = 0; j < x.size(); ++j) ASSERT_NEAR(dx[j], want[j], 1e-5 * (1.0 + std::abs(want[j])));
  }
}

// ==== embeddings ===========================================================================

TEST(Embedding, ForwardGathersRowsAndBackwardSumsRepeatedIds) {
  for (const RowsShape s : {RowsShape{10, 5}, RowsShape{7, 37}, RowsShape{300, 130}}) {
    const i64 num = 9;
    std::vector<std::int32_t> ids(size_of(s.rows));
    for (std::size_t r = 0; r < ids.size(); ++r) ids[r] = static_cast<std::int32_t>((r * r + 3) % 7);  // repeats
    const std::vector<float> weight = random_vector(size_of(num * s.d), 3);
    std::vector<float> y(size_of(s.rows * s.d), kNaN);
    ASSERT_EQ(embedding_forward(ids.data(), weight.data(), y.data(), s.rows, num, s.d), -1);
    for (i64 r = 0; r < s.rows; ++r) {
      for (i64 j = 0; j < s.d; ++j) ASSERT_EQ(y[size_of(r * s.d + j)], weight[size_of(ids[size_of(r)] * s.d + j)]);
    }
    const std::vector<float> dy = random_vector(y.size(), 4);
    std::vector<float> dweight(weight.size(), 1.0f);  // accumulated onto
    embedding_backward(ids.data(), dy.data(), dweight.data(), s.rows, s.d);
    std::vector<double> expected(weight.size(), 1.0);
    for (i64 r = 0; r < s.rows; ++r) {
      for (i64 j = 0; j < s.d; ++j) expected[size_of(ids[size_of(r)] * s.d + j)] += dy[size_of(r * s.d + j)];
    }
    EXPECT_TRUE(all_close(dweight, to_float(expected), 1e-5, 1e-5)) << s.rows << "x" << s.d;
  }
}

TEST(Embedding, ReturnsTheFirstOutOfRangePosition) {
  const std::vector<float> weight = random_vector(4 * 3, 1);
  std::vector<float> y(6 * 3);
  const std::vector<std::int32_t> too_large = {0, 1, 3, 2, 4, -1};
  EXPECT_EQ(embedding_forward(too_large.data(), weight.data(), y.data(), 6, 4, 3), 4);
  const std::vector<std::int32_t> negative = {0, -1, 9, 2, 1, 0};
  EXPECT_EQ(embedding_forward(negative.data(), weight.data(), y.data(), 6, 4, 3), 1);
  const std::vector<std::int32_t> last = {0, 1, 2, 3, 0, 4};
  EXPECT_EQ(embedding_forward(last.data(), weight.data(), y.data(), 6, 4, 3), 5);
  const std::vector<std::int32_t> valid = {3, 3, 0, 1, 2, 0};
  EXPECT_EQ(embedding_forward(valid.data(), weight.data(), y.data(), 6, 4, 3), -1);
}

TEST(Embedding, BackwardSameForOneAndTwoThreads) {
  const i64 rows = 512;
  const i64 d = 96;
  std::vector<std::int32_t> ids(size_of(rows));
  for (std::size_t r = 0; r < ids.size(); ++r) ids[r] = static_cast<std::int32_t>(r % 13);
  const std::vector<float> dy = random_vector(size_of(rows * d), 8);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> dweight(size_of(13 * d), 0.0f);
    embedding_backward(ids.data(), dy.data(), dweight.data(), rows, d);
    return dweight;
  });
}

TEST(Embedding, PositionEmbeddingAddsRowsAndAccumulatesOnlyUsedPositions) {
  for (const NormShape s : {NormShape{2, 3, 4}, NormShape{1, 5, 1}, NormShape{16, 64, 48}}) {
    const i64 batch = s.n;
    const i64 tokens = s.c;
    const i64 d = s.hw;
    const i64 positions = tokens + 2;  // the table may hold more positions than are used
    const std::vector<float> x = random_vector(size_of(batch * tokens * d), 1);
    const std::vector<float> pos = random_vector(size_of(positions * d), 2);
    std::vector<float> y(x.size(), kNaN);
    pos_embedding_forward(x.data(), pos.data(), y.data(), batch, tokens, d);
    for (i64 b = 0; b < batch; ++b) {
      for (i64 i = 0; i < tokens * d; ++i) {
        ASSERT_EQ(y[size_of(b * tokens * d + i)], x[size_of(b * tokens * d + i)] + pos[size_of(i)]);
      }
    }
    const std::vector<float> dy = random_vector(x.size(), 3);
    std::vector<float> dx(x.size(), kNaN);
    std::vector<float> dpos(pos.size(), 0.5f);
    pos_embedding_backward(dy.data(), dx.data(), dpos.data(), batch, tokens, d);
    EXPECT_EQ(dx, dy);
    std::vector<double> expected(pos.size(), 0.5);
    for (i64 b = 0; b < batch; ++b) {
      for (i64 i = 0; i < tokens * d; ++i) expected[size_of(i)] += dy[size_of(b * tokens * d + i)];
    }
    EXPECT_TRUE(all_close(dpos, to_float(expected), 1e-5, 1e-5));
    EXPECT_EQ(dpos.back(), 0.5f);  // an unused position is untouched
  }
}

TEST(Embedding, ClassTokenPrependsAndItsGradientSumsTheBatch) {
  for (const NormShape s : {NormShape{2, 3, 4}, NormShape{3, 1, 5}, NormShape{8, 50, 96}}) {
    const i64 batch = s.n;
    const i64 tokens = s.c;
    const i64 d = s.hw;
    const std::vector<float> x = random_vector(size_of(batch * tokens * d), 1);
    const std::vector<float> cls = random_vector(size_of(d), 2);
    std::vector<float> y(size_of(batch * (tokens + 1) * d), kNaN);
    cls_token_forward(x.data(), cls.data(), y.data(), batch, tokens, d);
    for (i64 b = 0; b < batch; ++b) {
      for (i64 j = 0; j < d; ++j) ASSERT_EQ(y[size_of(b * (tokens + 1) * d + j)], cls[size_of(j)]);
      for (i64 i = 0; i < tokens * d; ++i) {
        ASSERT_EQ(y[size_of((b * (tokens + 1) + 1) * d + i)], x[size_of(b * tokens * d + i)]);
      }
    }
    const std::vector<float> dy = random_vector(y.size(), 3);
    std::vector<float> dx(x.size(), kNaN);
    std::vector<float> dcls(size_of(d), 1.0f);
    cls_token_backward(dy.data(), dx.data(), dcls.data(), batch, tokens, d);
    std::vector<double> expected(size_of(d), 1.0);
    for (i64 b = 0; b < batch; ++b) {
      for (i64 j = 0; j < d; ++j) expected[size_of(j)] += dy[size_of(b * (tokens + 1) * d + j)];
      for (i64 i = 0; i < tokens * d; ++i) {
        ASSERT_EQ(dx[size_of(b * tokens * d + i)], dy[size_of((b * (tokens + 1) + 1) * d + i)]);
      }
    }
    EXPECT_TRUE(all_close(dcls, to_float(expected), 1e-5, 1e-5));
  }
}

// ==== Swin's relative position bias ========================================================

// r(i, j) from its definition: window position p is row p / ww, column p % ww, and the table
// numbers the offsets (row_i − row_j, col_i − col_j), each shifted to start at 0, row-major over
// a (2·wh − 1) × (2·ww − 1) grid.
i64 offset_row(i64 i, i64 j, i64 wh, i64 ww) {
  const i64 drow = i / ww - j / ww;
  const i64 dcol = i % ww - j % ww;
  return (drow + wh - 1) * (2 * ww - 1) + (dcol + ww - 1);
}

TEST(RelPosBias, RowIsSwinsRelativePositionIndex) {
  // Window [2, 2]: positions (0,0) (0,1) (1,0) (1,1), a 3x3 table of offsets.
  EXPECT_EQ(hwprof::ops::rel_pos_row(0, 0, 2, 2), 4);  // offset (0, 0): the centre of the 3x3 table
  EXPECT_EQ(hwprof::ops::rel_pos_row(0, 3, 2, 2), 0);  // (0-1+1)*3 + (0-1+1)
  EXPECT_EQ(hwprof::ops::rel_pos_row(3, 0, 2, 2), 8);  // (1-0+1)*3 + (1-0+1)
  EXPECT_EQ(hwprof::ops::rel_pos_row(1, 2, 2, 2), 2);  // (0,1) - (1,0) = (-1, 1): 0*3 + 2
  // Window [2, 3]: rows of 3, a 3x5 table.
  EXPECT_EQ(hwprof::ops::rel_pos_row(0, 5, 2, 3), 0);   // (0,0) - (1,2) = (-1, -2): 0*5 + 0
  EXPECT_EQ(hwprof::ops::rel_pos_row(5, 0, 2, 3), 14);  // (1,2) - (0,0) = (1, 2): 2*5 + 4
  EXPECT_EQ(hwprof::ops::rel_pos_row(2, 3, 2, 3), 4);   // (0,2) - (1,0) = (-1, 2): 0*5 + 4
  EXPECT_EQ(hwprof::ops::rel_pos_row(3, 2, 2, 3), 10);  // (1,0) - (0,2) = (1, -2): 2*5 + 0
  EXPECT_EQ(hwprof::ops::rel_pos_row(1, 1, 2, 3), 7);   // (0, 0): the centre, 1*5 + 2
  for (const auto& [wh, ww] : {std::pair<i64, i64>{1, 1}, {1, 4}, {3, 1}, {2, 3}, {7, 7}}) {
    SCOPED_TRACE(std::to_string(wh) + "x" + std::to_string(ww));
    const i64 n = wh * ww;
    const i64 rows = (2 * wh - 1) * (2 * ww - 1);
    std::vector<int> used(size_of(rows), 0);
    for (i64 i = 0; i < n; ++i) {
      for (i64 j = 0; j < n; ++j) {
        const i64 r = hwprof::ops::rel_pos_row(i, j, wh, ww);
        ASSERT_EQ(r, offset_row(i, j, wh, ww));
        ASSERT_EQ(r + hwprof::ops::rel_pos_row(j, i, wh, ww), rows - 1);  // opposite offsets mirror about the centre
        used[size_of(r)] = 1;
      }
    }
    EXPECT_EQ(std::count(used.begin(), used.end(), 1), rows) << "every offset of the table occurs in the window";
  }
}

// y = x + bias, as the layer computes it: the bias gathered, then added to every [heads, N, N]
// slice.
std::vector<float> rel_pos_forward(const std::vector<float>& x, const std::vector<float>& table, i64 heads, i64 wh, i64 ww) {
  const i64 slab = heads * wh * ww * wh * ww;
  std::vector<float> bias(size_of(slab), kNaN);
  rel_pos_bias_gather(table.data(), bias.data(), heads, wh, ww);
  std::vector<float> y(x.size(), kNaN);
  rel_pos_bias_forward(x.data(), bias.data(), y.data(), static_cast<i64>(x.size()) / slab, slab);
  return y;
}

TEST(RelPosBias, ForwardAddsTheTableRowOfEachOffsetPerHead) {
  // Window [2, 3] (N = 6), 2 heads, 3 windows, batch 2: scores [2, 3, 2, 6, 6].
  const i64 wh = 2, ww = 3, n = 6, heads = 2, windows = 3, batch = 2;
  const i64 rows = (2 * wh - 1) * (2 * ww - 1);
  const std::vector<float> x = random_vector(size_of(batch * windows * heads * n * n), 1);
  const std::vector<float> table = random_vector(size_of(rows * heads), 2);
  const std::vector<float> y = rel_pos_forward(x, table, heads, wh, ww);
  for (i64 b = 0; b < batch; ++b) {
    for (i64 w = 0; w < windows; ++w) {
      for (i64 h = 0; h < heads; ++h) {
        for (i64 i = 0; i < n; ++i) {
          for (i64 j = 0; j < n; ++j) {
            const std::size_t at = size_of((((b * windows + w) * heads + h) * n + i) * n + j);
            ASSERT_EQ(y[at], x[at] + table[size_of(offset_row(i, j, wh, ww) * heads + h)]) << b << " " << w << " " << h << " " << i << " " << j;
          }
        }
      }
    }
  }
  // Two hand-checked entries: (i, j) = (0, 5) reads table row 0, (5, 0) row 14 (the corners).
  EXPECT_EQ(y[size_of(0 * n + 5)], x[size_of(0 * n + 5)] + table[0 * heads + 0]);
  EXPECT_EQ(y[size_of(n * n + 5 * n + 0)], x[size_of(n * n + 5 * n + 0)] + table[14 * heads + 1]);  // head 1
}

TEST(RelPosBias, BackwardSumsEveryWindowIntoTheTableAndMatchesFiniteDifferences) {
  const i64 wh = 2, ww = 3, n = 6, heads = 2, outer = 2 * 3;  // batch 2 x 3 windows
  const i64 rows = (2 * wh - 1) * (2 * ww - 1);
  const i64 slab = heads * n * n;
  std::vector<float> x = random_vector(size_of(outer * slab), 1);
  std::vector<float> table = random_vector(size_of(rows * heads), 2);
  const std::vector<float> dy = random_vector(x.size(), 3);

  // Accumulated into what the table's gradient held: Σ over the batch and the windows of dy at
  // every (i, j) whose offset is that row.
  std::vector<float> dbias(size_of(slab), kNaN);
  std::vector<float> dtable(table.size(), 0.5f);
  rel_pos_bias_backward(dy.data(), dbias.data(), dtable.data(), outer, heads, wh, ww);
  std::vector<double> expected(table.size(), 0.5);
  for (i64 o = 0; o < outer; ++o) {
    for (i64 h = 0; h < heads; ++h) {
      for (i64 i = 0; i < n; ++i) {
        for (i64 j = 0; j < n; ++j) expected[size_of(offset_row(i, j, wh, ww) * heads + h)] += dy[size_of(((o * heads + h) * n + i) * n + j)];
      }
    }
  }
  EXPECT_TRUE(all_close(dtable, to_float(expected), 1e-5, 1e-5));

  // d(Σ dy·y)/d table and /d x by central differences: the table's gradient as above (from 0),
  // x's dy itself (the layer passes dy on as dx).
  const auto loss = [&] { return dot(rel_pos_forward(x, table, heads, wh, ww), dy); };
  std::vector<float> dtable0(table.size(), 0.0f);
  rel_pos_bias_backward(dy.data(), dbias.data(), dtable0.data(), outer, heads, wh, ww);
  EXPECT_TRUE(gradient_matches(dtable0, numeric_gradient(table, loss, 64)));
  EXPECT_TRUE(gradient_matches(dy, numeric_gradient(x, loss, 64)));

  // Without a table gradient to fill (a frozen table), nothing is written.
  std::vector<float> untouched(size_of(slab), 2.0f);
  rel_pos_bias_backward(dy.data(), untouched.data(), nullptr, outer, heads, wh, ww);
  EXPECT_EQ(untouched, std::vector<float>(size_of(slab), 2.0f));
}

TEST(RelPosBias, SameForOneAndTwoThreads) {
  // Swin-T's first stage: window [7, 7], 3 heads, 64 windows: enough to run in parallel.
  const i64 heads = 3, outer = 64;
  const std::vector<float> x = random_vector(size_of(outer * heads * 49 * 49), 4);
  const std::vector<float> table = random_vector(size_of(13 * 13 * heads), 5);
  const std::vector<float> dy = random_vector(x.size(), 6);
  expect_same_for_one_and_two_threads([&] { return rel_pos_forward(x, table, heads, 7, 7); });
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> dbias(size_of(heads * 49 * 49));
    std::vector<float> dtable(table.size(), 0.0f);
    rel_pos_bias_backward(dy.data(), dbias.data(), dtable.data(), outer, heads, 7, 7);
    return dtable;
  });
}

// ==== dropout ==============================================================================

TEST(Dropout, DeterministicForASeedAndDifferentAcrossSeeds) {
  const i64 n = 5000;
  const std::vector<float> x = random_vector(size_of(n), 1);
  std::vector<float> y1(size_of(n));
  std::vector<float> y2(size_of(n));
  std::vector<float> y3(size_of(n));
  std::vector<std::uint8_t> m1(size_of(n));
  std::vector<std::uint8_t> m2(size_of(n));
  std::vector<std::uint8_t> m3(size_of(n));
  dropout_forward(x.data(), y1.data(), m1.data(), 0.5, 42, n);
  dropout_forward(x.data(), y2.data(), m2.data(), 0.5, 42, n);
  dropout_forward(x.data(), y3.data(), m3.data(), 0.5, 43, n);
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(y1, y2);
  EXPECT_NE(m1, m3);
}

TEST(Dropout, KeepRateWithinBinomialToleranceAndScaling) {
  const i64 n = 200000;
  const std::vector<float> x = random_vector(size_of(n), 2);
  std::vector<float> y(size_of(n));
  std::vector<std::uint8_t> mask(size_of(n));
  for (double p : {0.1, 0.3, 0.5, 0.9}) {
    dropout_forward(x.data(), y.data(), mask.data(), p, 7, n);
    i64 kept = 0;
    for (i64 i = 0; i < n; ++i) {
      const auto k = size_of(i);
      ASSERT_TRUE(mask[k] == 0 || mask[k] == 1);
      kept += mask[k];
      ASSERT_FLOAT_EQ(y[k], mask[k] != 0 ? static_cast<float>(x[k] / (1.0 - p)) : 0.0f);
    }
    // Six standard deviations of a Binomial(n, 1 - p).
    const double expected = static_cast<double>(n) * (1.0 - p);
    const double sigma = std::sqrt(static_cast<double>(n) * p * (1.0 - p));
    EXPECT_NEAR(static_cast<double>(kept), expected, 6.0 * sigma) << "p=" << p;

    const std::vector<float> dy = random_vector(size_of(n), 3);
    std::vector<float> dx(size_of(n), kNaN);
    dropout_backward(mask.data(), dy.data(), dx.data(), p, n);
    for (i64 i = 0; i < n; i += 97) {
      const auto k = size_of(i);
      ASSERT_FLOAT_EQ(dx[k], mask[k] != 0 ? static_cast<float>(dy[k] / (1.0 - p)) : 0.0f);
    }
  }
}

TEST(Dropout, ProbabilityZeroKeepsAllAndOneDropsAll) {
  const i64 n = 1000;
  const std::vector<float> x = random_vector(size_of(n), 4);
  std::vector<float> y(size_of(n));
  std::vector<std::uint8_t> mask(size_of(n));
  dropout_forward(x.data(), y.data(), mask.data(), 0.0, 1, n);
  EXPECT_EQ(y, x);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), 1), n);
  dropout_forward(x.data(), y.data(), mask.data(), 1.0, 1, n);
  EXPECT_EQ(std::count(mask.begin(), mask.end(), 0), n);
  EXPECT_EQ(y, std::vector<float>(size_of(n), 0.0f));
}

TEST(Dropout, SameMaskForOneAndTwoThreads) {
  const i64 n = i64{1} << 17;
  const std::vector<float> x = random_vector(size_of(n), 5);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> y(size_of(n));
    std::vector<std::uint8_t> mask(size_of(n));
    dropout_forward(x.data(), y.data(), mask.data(), 0.25, 1234, n);
    for (i64 i = 0; i < n; ++i) y[size_of(i)] += static_cast<float>(mask[size_of(i)]) * 1000.0f;
    return y;
  });
}

// ==== cross-entropy ========================================================================

double ref_cross_entropy(const std::vector<float>& logits, const std::vector<std::int32_t>& labels, i64 rows, i64 classes,
                         std::vector<double>* grad) {
  double total = 0.0;
  if (grad != nullptr) grad->assign(logits.size(), 0.0);
  for (i64 r = 0; r < rows; ++r) {
    const float* z = logits.data() + r * classes;
    const double max = *std::max_element(z, z + classes);
    double s = 0.0;
    for (i64 j = 0; j < classes; ++j) s += std::exp(z[j] - max);
    const auto label = labels[size_of(r)];
    total += max + std::log(s) - z[label];
    if (grad != nullptr) {
      for (i64 j = 0; j < classes; ++j) {
        (*grad)[size_of(r * classes + j)] = (std::exp(z[j] - max) / s - (j == label ? 1.0 : 0.0)) / static_cast<double>(rows);
      }
    }
  }
  return total / static_cast<double>(rows);
}

TEST(CrossEntropy, HandComputedValue) {
  // Row 0: log(e + e² + e³) - 3 = 0.4076059644; row 1: log(e^0.5 + e^-1 + 1) - 0.5 =
  // 0.6041306053; the mean 0.5058682849.
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.5f, -1.0f, 0.0f};
  const std::vector<std::int32_t> labels = {2, 0};
  EXPECT_NEAR(cross_entropy(logits.data(), labels.data(), nullptr, 1, 3), 0.4076059644, 1e-6);
  std::vector<float> dlogits(6, kNaN);
  EXPECT_NEAR(cross_entropy(logits.data(), labels.data(), dlogits.data(), 2, 3), 0.5058682849, 1e-6);
  const double e = std::exp(1.0);
  const double sum0 = e + e * e + e * e * e;
  EXPECT_NEAR(dlogits[0], e / sum0 / 2.0, 1e-7);
  EXPECT_NEAR(dlogits[2], (e * e * e / sum0 - 1.0) / 2.0, 1e-7);
}

TEST(CrossEntropy, StableForHugeLogits) {
  // log(e^1000 + e^1001) - 1001 = log(1 + e^-1) = 0.3132616875.
  const std::vector<float> logits = {1000.0f, 1001.0f};
  const std::vector<std::int32_t> labels = {1};
  std::vector<float> dlogits(2);
  EXPECT_NEAR(cross_entropy(logits.data(), labels.data(), dlogits.data(), 1, 2), 0.3132616875, 1e-6);
  EXPECT_NEAR(dlogits[0], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(dlogits[0] + dlogits[1], 0.0, 1e-6);
}

TEST(CrossEntropy, MatchesReferenceAndFiniteDifferences) {
  std::uint64_t seed = 1100;
  for (const RowsShape s : {RowsShape{1, 1}, RowsShape{1, 5}, RowsShape{4, 3}, RowsShape{7, 10}, RowsShape{300, 33}}) {
    std::vector<float> logits = random_vector(size_of(s.rows * s.d), ++seed, -4.0f, 4.0f);
    std::vector<std::int32_t> labels(size_of(s.rows));
    for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>((r * 5 + 1) % size_of(s.d));
    std::vector<float> dlogits(logits.size(), kNaN);
    const double loss = cross_entropy(logits.data(), labels.data(), dlogits.data(), s.rows, s.d);
    std::vector<double> grad;
    const std::string where = std::to_string(s.rows) + "x" + std::to_string(s.d);
    EXPECT_NEAR(loss, ref_cross_entropy(logits, labels, s.rows, s.d, &grad), 1e-6) << where;
    EXPECT_TRUE(all_close(dlogits, to_float(grad), 1e-5, 1e-8)) << where;
    EXPECT_NEAR(cross_entropy(logits.data(), labels.data(), nullptr, s.rows, s.d), loss, 1e-12) << where;
    auto f = [&] { return cross_entropy(logits.data(), labels.data(), nullptr, s.rows, s.d); };
    EXPECT_TRUE(gradient_matches(dlogits, numeric_gradient(logits, f), 2e-2, 1e-4)) << where;
  }
}

TEST(CrossEntropy, BadLabelGivesNaN) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> dlogits(4, 0.0f);
  for (const std::vector<std::int32_t>& labels : {std::vector<std::int32_t>{0, 2}, std::vector<std::int32_t>{-1, 0}}) {
    EXPECT_TRUE(std::isnan(cross_entropy(logits.data(), labels.data(), dlogits.data(), 2, 2)));
    EXPECT_TRUE(std::isnan(cross_entropy(logits.data(), labels.data(), nullptr, 2, 2)));
    EXPECT_TRUE(std::isnan(dlogits[0]));  // no stale gradient left behind
  }
}

TEST(CrossEntropy, LargeBatchSameForOneAndTwoThreads) {
  const i64 rows = 700;
  const i64 classes = 100;
  const std::vector<float> logits = random_vector(size_of(rows * classes), 9, -5.0f, 5.0f);
  std::vector<std::int32_t> labels(size_of(rows));
  for (std::size_t r = 0; r < labels.size(); ++r) labels[r] = static_cast<std::int32_t>(r * 37 % 100);
  expect_same_for_one_and_two_threads([&] {
    std::vector<float> out(size_of(rows * classes) + 2);
    const double loss = cross_entropy(logits.data(), labels.data(), out.data(), rows, classes);
    std::memcpy(out.data() + rows * classes, &loss, sizeof loss);
    return out;
  });
}

}  // namespace
}  // namespace hwprof::nn
