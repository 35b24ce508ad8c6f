// Element-wise activations, forward and backward, with PyTorch's definitions. Every loop is
// `parallel for simd`: the transcendental ones call the branch-free approximations of
// vector_math.hpp so that they vectorise (glibc's expf/erff would not).
#include <cstdint>

#include "nn/kernels.hpp"
#include "nn/vector_math.hpp"

namespace hwprof::nn {
namespace {

using detail::exp_approx;
using detail::normal_cdf_approx;
using detail::normal_pdf_approx;
using detail::select;
using detail::sigmoid_approx;
using detail::softplus_approx;
using detail::tanh_approx;

// Below this many elements one thread is faster than waking the team (a vectorised
// activation runs about a nanosecond per element; waking a team costs microseconds).
constexpr i64 kActivationParallelMin = i64{1} << 15;

// gelu with approximate='tanh' (Hendrycks & Gimpel 2016; PyTorch's GELU docs):
// 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³). Since 0.5·(1 + tanh(u)) = σ(2u), it is
// evaluated as x·σ(2u), which has no cancellation in the negative tail.
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluCubic = 0.044715f;

float gelu_tanh_twice_u(float x) {
  return 2.0f * kSqrt2OverPi * (x + kGeluCubic * x * x * x);
}

template <class Op>
void map1(const float* x, float* y, i64 n, Op op) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kActivationParallelMin)
  for (i64 i = 0; i < n; ++i) y[i] = op(x[i]);
}

// dx[i] = dy[i] · derivative(x[i], y[i]).
template <class Derivative>
void map_grad(const float* x, const float* y, const float* dy, float* dx, i64 n, Derivative derivative) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kActivationParallelMin)
  for (i64 i = 0; i < n; ++i) dx[i] = dy[i] * derivative(x[i], y[i]);
}

// dx[i] = dy[i] where pass(x[i]), else exactly 0 (a product with 0 would turn an infinite dy
// into NaN; PyTorch's threshold_backward selects too).
template <class Pass>
void mask_grad(const float* x, const float* dy, float* dx, i64 n, Pass pass) {
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kActivationParallelMin)
  for (i64 i = 0; i < n; ++i) dx[i] = select(pass(x[i]), dy[i], 0.0f);
}

}  // namespace

void activation_forward(Activation a, const float* x, float* y, i64 n, float alpha) {
  switch (a) {
    case Activation::relu:  // NaN passes through, as with torch.relu
      map1(x, y, n, [](float v) { return select(v < 0.0f, 0.0f, v); });
      return;
    case Activation::relu6:  // hardtanh(x, 0, 6)
      map1(x, y, n, [](float v) { return select(v > 6.0f, 6.0f, select(v < 0.0f, 0.0f, v)); });
      return;
    case Activation::gelu:  // x·Φ(x), Φ the standard normal CDF: 0.5·x·(1 + erf(x/√2))
      map1(x, y, n, [](float v) { return v * normal_cdf_approx(v); });
      return;
    case Activation::gelu_tanh:
      map1(x, y, n, [](float v) { return v * sigmoid_approx(gelu_tanh_twice_u(v)); });
      return;
    case Activation::silu:  // x·σ(x)
      map1(x, y, n, [](float v) { return v * sigmoid_approx(v); });
      return;
    case Activation::sigmoid:
      map1(x, y, n, [](float v) { return sigmoid_approx(v); });
      return;
    case Activation::tanh:
      map1(x, y, n, [](float v) { return tanh_approx(v); });
      return;
    case Activation::hardsigmoid:  // relu6(x + 3) / 6 (PyTorch's Hardsigmoid)
      map1(x, y, n, [](float v) { return select(v > 3.0f, 1.0f, select(v < -3.0f, 0.0f, v / 6.0f + 0.5f)); });
      return;
    case Activation::hardswish:  // x · relu6(x + 3) / 6 (PyTorch's Hardswish)
      map1(x, y, n, [](float v) { return select(v > 3.0f, v, select(v < -3.0f, 0.0f, v * (v + 3.0f) / 6.0f)); });
      return;
    case Activation::softplus:  // log(1 + e^x), x itself above 20 (PyTorch's beta 1, threshold 20)
      map1(x, y, n, [](float v) { return softplus_approx(v); });
      return;
    case Activation::mish:  // x·tanh(softplus(x)) (PyTorch's Mish: no threshold, none needed)
      map1(x, y, n, [](float v) { return v * tanh_approx(softplus_approx(v)); });
      return;
    case Activation::leaky_relu:  // x above 0, slope·x at and below (PyTorch's leaky_relu)
      map1(x, y, n, [alpha](float v) { return select(v > 0.0f, v, v * alpha); });
      return;
    case Activation::elu:  // x above 0, α·(eˣ − 1) at and below (PyTorch's elu, scale 1)
      map1(x, y, n, [alpha](float v) { return select(v > 0.0f, v, alpha * (exp_approx(v) - 1.0f)); });
      return;
  }
}

void activation_backward(Activation a, const float* x, const float* y, const float* dy, float* dx, i64 n, float alpha) {
  if (dx == nullptr) return;
  switch (a) {
    case Activation::relu:  // the subgradient at 0 is 0, as in PyTorch's threshold_backward
      mask_grad(x, dy, dx, n, [](float v) { return v > 0.0f; });
      return;
    case Activation::relu6:  // hardtanh_backward: 1 strictly inside (0, 6)
      // `&` rather than `&&`: no branch, so the loop vectorises.
      mask_grad(x, dy, dx, n, [](float v) { return (v > 0.0f) & (v < 6.0f); });
      return;
    case Activation::gelu:  // d/dx x·Φ(x) = Φ(x) + x·φ(x)
      map_grad(x, y, dy, dx, n, [](float v, float) { return normal_cdf_approx(v) + v * normal_pdf_approx(v); });
      return;
    case Activation::gelu_tanh:
      // y = x·s with s = σ(2u): dy/dx = s + x·2u'·s·(1 - s), 2u' = 2·√(2/π)·(1 + 3·0.044715·x²).
      // 1 - s is taken as σ(-2u), not subtracted, to stay accurate for large x.
      map_grad(x, y, dy, dx, n, [](float v, float) {
        const float two_u = gelu_tanh_twice_u(v);
        const float s = sigmoid_approx(two_u);
        const float one_minus_s = sigmoid_approx(-two_u);
        const float two_du = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
        return s + v * two_du * s * one_minus_s;
      });
      return;
    case Activation::silu:  // σ(x)·(1 + x·(1 - σ(x))), PyTorch's silu_backward
      map_grad(x, y, dy, dx, n, [](float v, float) {
        const float s = sigmoid_approx(v);
        return s * (1.0f + v * (1.0f - s));
      });
      return;
    case Activation::sigmoid:  // from the output: y·(1 - y)
      map_grad(x, y, dy, dx, n, [](float, float out) { return out * (1.0f - out); });
      return;
    case Activation::tanh:  // from the output: 1 - y²
      map_grad(x, y, dy, dx, n, [](float, float out) { return 1.0f - out * out; });
      return;
    case Activation::hardsigmoid:  // 1/6 strictly inside (-3, 3), as PyTorch's hardsigmoid_backward
      mask_grad(x, dy, dx, n, [](float v) { return (v > -3.0f) & (v < 3.0f); });
      map1(dx, dx, n, [](float g) { return g / 6.0f; });
      return;
    case Activation::hardswish:  // 0 below -3, (2x + 3)/6 up to 3, 1 above (hardswish_backward)
      map_grad(x, y, dy, dx, n, [](float v, float) { return select(v < -3.0f, 0.0f, select(v <= 3.0f, v / 3.0f + 0.5f, 1.0f)); });
      return;
    case Activation::softplus:  // e^x/(e^x + 1) = σ(x), 1 above the threshold (softplus_backward)
      map_grad(x, y, dy, dx, n, [](float v, float) { return select(v > 20.0f, 1.0f, sigmoid_approx(v)); });
      return;
    case Activation::mish:  // t + x·σ(x)·(1 − t²), t = tanh(softplus(x)) (PyTorch's mish_backward)
      map_grad(x, y, dy, dx, n, [](float v, float) {
        const float t = tanh_approx(softplus_approx(v));
        return t + v * sigmoid_approx(v) * (1.0f - t * t);
      });
      return;
    case Activation::leaky_relu:  // 1 above 0, the slope at and below (leaky_relu_backward)
      map_grad(x, y, dy, dx, n, [alpha](float v, float) { return select(v > 0.0f, 1.0f, alpha); });
      return;
    case Activation::elu:  // 1 above 0, α·eˣ at and below (elu_backward from the input)
      map_grad(x, y, dy, dx, n, [alpha](float v, float) { return select(v > 0.0f, 1.0f, alpha * exp_approx(v)); });
      return;
  }
}

}  // namespace hwprof::nn
