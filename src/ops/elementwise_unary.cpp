// The element-wise unary ops, one definition each (elementwise_unary.hpp says what a definition
// holds and who reads it; docs/adding-an-op.md how to add one).
//
// FLOPs per element are PyTorch's formulas counted as written: each add, multiply, division,
// comparison, max/min is 1, and so is a transcendental (exp, log, tanh, erf); the backward
// count includes the product with the incoming gradient dy (docs/profile.md). The kernels are
// PyTorch's definitions in float, with the branch-free approximations of vector_math.hpp so
// that each loop vectorises; a backward reads the tensor its traits name (x or y).
#include "ops/elementwise_unary.hpp"

#include <algorithm>
#include <cmath>

#include "common/stages.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::ops {
namespace {

using ops::exp_approx;
using ops::normal_cdf_approx;
using ops::normal_pdf_approx;
using ops::select;
using ops::sigmoid_approx;
using ops::softplus_approx;
using ops::tanh_approx;

// The kernels from one line each: F(x, parameter) forward, D(kept, dy, parameter) backward.
template <auto F>
void forward(const float* x, float* y, std::int64_t n, float parameter) noexcept {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) y[i] = F(x[i], parameter);
}

template <auto D>
void backward(const float* kept, const float* dy, float* dx, std::int64_t n, float parameter) noexcept {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) dx[i] = D(kept[i], dy[i], parameter);
}

// gelu with approximate='tanh' (Hendrycks & Gimpel 2016; PyTorch's GELU docs):
// 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³). Since 0.5·(1 + tanh(u)) = σ(2u), it is
// evaluated as x·σ(2u), which has no cancellation in the negative tail.
constexpr float kSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluCubic = 0.044715f;

inline float gelu_tanh_twice_u(float x) noexcept {
  return 2.0f * kSqrt2OverPi * (x + kGeluCubic * x * x * x);
}

// Keeps x: its backward is written in the input. Keeps y: in the output.
constexpr bool kInput = false;
constexpr bool kOutput = true;

// Long: the table itself, one record per element-wise op, each the op's whole definition (docs/adding-an-op.md).
std::span<const UnaryDefinition> definitions() {
  static const UnaryDefinition table[] = {
      {OpKind::relu,
       "max(x, 0)",
       // NaN passes through, as with torch.relu. The subgradient at 0 is 0 (threshold_backward);
       // y > 0 holds at exactly the elements where x > 0, so it keeps its output.
       {{1, 1, kOutput, "", true},
        forward<[](float v, float) { return select(v < 0.0f, 0.0f, v); }>,
        // A select, not a product with 0, which would turn an infinite dy into NaN.
        backward<[](float v, float g, float) { return select(v > 0.0f, g, 0.0f); }>},
       {},
       {},
       {"relu", "threshold_backward", {}},
       {"Relu", {}, 0.0, {}, {}}},
      {OpKind::relu6,
       "min(max(x, 0), 6)",
       // hardtanh(x, 0, 6); its backward passes dy strictly inside (0, 6) (`&`: no branch).
       {{2, 2, kInput, "", true},
        forward<[](float v, float) { return select(v > 6.0f, 6.0f, select(v < 0.0f, 0.0f, v)); }>,
        backward<[](float v, float g, float) { return select((v > 0.0f) & (v < 6.0f), g, 0.0f); }>},
       {},
       {},
       {"hardtanh", "hardtanh_backward", {{1, 2, 0.0, false}, {2, 3, 6.0, false}}},
       {}},
      {OpKind::gelu,
       "x·Φ(x) = x·½·(1 + erf(x/√2))",
       // d/dx x·Φ(x) = Φ(x) + x·φ(x): Φ (erf), φ (exp), a product, an add and dy·: 11.
       {{5, 11, kInput, "erf", false},
        forward<[](float v, float) { return v * normal_cdf_approx(v); }>,
        backward<[](float v, float g, float) { return g * (normal_cdf_approx(v) + v * normal_pdf_approx(v)); }>},
       // approximate = "tanh": x·σ(2u), one exp; y = x·s with s = σ(2u), dy/dx = s + x·2u'·s·(1 − s),
       // 2u' = 2·√(2/π)·(1 + 3·0.044715·x²); 1 − s is taken as σ(−2u), not subtracted, to stay
       // accurate for large x.
       UnaryForm{{9, 18, kInput, "exp", false},
                 forward<[](float v, float) { return v * sigmoid_approx(gelu_tanh_twice_u(v)); }>,
                 backward<[](float v, float g, float) {
                   const float two_u = gelu_tanh_twice_u(v);
                   const float s = sigmoid_approx(two_u);
                   const float one_minus_s = sigmoid_approx(-two_u);
                   const float two_du = 2.0f * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * v * v);
                   return g * (s + v * two_du * s * one_minus_s);
                 }>},
       {},
       {"gelu", "", {}},
       {}},  // ONNX: the importer recognises the erf and tanh subgraphs (onnx_patterns.cpp)
      {OpKind::silu,
       "x·σ(x)",
       // σ(x)·(1 + x·(1 − σ(x))), PyTorch's silu_backward.
       {{5, 9, kInput, "exp", false}, forward<[](float v, float) { return v * sigmoid_approx(v); }>, backward<[](float v, float g, float) {
          const float s = sigmoid_approx(v);
          return g * (s * (1.0f + v * (1.0f - s)));
        }>},
       {},
       {},
       {"silu", "", {}},
       {}},
      {OpKind::sigmoid,
       "1/(1 + exp(−x))",
       // From the output: y·(1 − y).
       {{4, 3, kOutput, "exp", false},
        forward<[](float v, float) { return sigmoid_approx(v); }>,
        backward<[](float y, float g, float) { return g * (y * (1.0f - y)); }>},
       {},
       {},
       {"sigmoid", "", {}},
       {"Sigmoid", {}, 0.0, {}, {}}},
      {OpKind::tanh,
       "tanh(x)",
       // From the output: 1 − y² (a square, a subtraction and the product with dy).
       {{1, 3, kOutput, "tanh", false},
        forward<[](float v, float) { return tanh_approx(v); }>,
        backward<[](float y, float g, float) { return g * (1.0f - y * y); }>},
       {},
       {},
       {"tanh", "", {}},
       {"Tanh", {}, 0.0, {}, {}}},
      {OpKind::hardswish,
       "x·relu6(x + 3)/6",
       // 0 below −3, (2x + 3)/6 up to 3, 1 above (hardswish_backward).
       {{5, 4, kInput, "", false},
        forward<[](float v, float) { return select(v > 3.0f, v, select(v < -3.0f, 0.0f, v * (v + 3.0f) / 6.0f)); }>,
        backward<[](float v, float g, float) { return g * select(v < -3.0f, 0.0f, select(v <= 3.0f, v / 3.0f + 0.5f, 1.0f)); }>},
       {},
       {},
       {"hardswish", "", {}},
       {"HardSwish", {}, 0.0, {}, {}}},
      {OpKind::hardsigmoid,
       "relu6(x + 3)/6",
       // x/6 + 1/2 and the clamp to [0, 1]. Backward 1/6 strictly inside (−3, 3), as PyTorch's
       // hardsigmoid_backward.
       {{4, 2, kInput, "", false},
        forward<[](float v, float) { return select(v > 3.0f, 1.0f, select(v < -3.0f, 0.0f, v / 6.0f + 0.5f)); }>,
        backward<[](float v, float g, float) { return select((v > -3.0f) & (v < 3.0f), g, 0.0f) / 6.0f; }>},
       {},
       {},
       {"hardsigmoid", "", {}},
       // ONNX's max(0, min(1, alpha·x + beta)) is PyTorch's with alpha 1/6 and beta 0.5 (ONNX's
       // defaults, 0.2 and 0.5, are Keras's hard sigmoid).
       {"HardSigmoid", {}, 0.0, {{"alpha", 1.0 / 6.0, 0.2}, {"beta", 0.5, 0.5}}, "hwprof's hardsigmoid is PyTorch's: alpha 1/6, beta 0.5"}},
      {OpKind::softplus,
       "x > 20 ? x : log(1 + exp(x))",
       // PyTorch's beta 1, threshold 20: the comparison, exp, the add and log. Backward
       // x > 20 ? dy : dy·z/(z + 1), z = exp(x): 5.
       {{4, 5, kInput, "exp", false},
        forward<[](float v, float) { return softplus_approx(v); }>,
        backward<[](float v, float g, float) { return g * select(v > 20.0f, 1.0f, sigmoid_approx(v)); }>},
       {},
       {},
       // Another beta adds x·β and /β: such a call stays uncounted rather than counted short.
       {"softplus", "", {{1, 2, 1.0, true}}},
       {"Softplus", {}, 0.0, {}, {}}},
      {OpKind::mish,
       "x·tanh(log(1 + exp(x)))",
       // exp, add, log, tanh and the product: 5. Backward, PyTorch's dy·(t + x·σ(x)·(1 − t²)),
       // t = tanh(softplus(x)): σ 4, t 4, the rest 6. It evaluates exp, log and tanh; tanh (itself
       // an exp and a division here) is the dearest of the calibrated.
       {{5, 14, kInput, "tanh", false},
        forward<[](float v, float) { return v * tanh_approx(softplus_approx(v)); }>,
        backward<[](float v, float g, float) {
          const float t = tanh_approx(softplus_approx(v));
          return g * (t + v * sigmoid_approx(v) * (1.0f - t * t));
        }>},
       {},
       {},
       {"mish", "", {}},
       {}},
      {OpKind::leaky_relu,
       "x > 0 ? x : slope·x",
       // The comparison and the product. Backward dy·(x > 0 ? 1 : slope): the same two. It keeps
       // its input: with a negative slope the output's sign no longer tells which side x was on.
       {{2, 2, kInput, "", false},
        forward<[](float v, float slope) { return select(v > 0.0f, v, v * slope); }>,
        backward<[](float v, float g, float slope) { return g * select(v > 0.0f, 1.0f, slope); }>},
       {},
       {"negative_slope", 0.01, "a finite number (PyTorch's default 0.01)"},
       {"leaky_relu", "", {}},  // any slope: the same two FLOPs
       {"LeakyRelu", "alpha", 0.01, {}, {}}},
      {OpKind::elu,
       "x > 0 ? x : α·(exp(x) − 1)",
       // The comparison, exp, the subtraction and the product. Backward x > 0 ? dy : dy·α·eˣ: the
       // comparison, exp and two products. Keeps its input (with α < 0 the output's sign does not
       // tell the side either); held to exp.
       {{4, 4, kInput, "exp", false},
        forward<[](float v, float alpha) { return select(v > 0.0f, v, alpha * (exp_approx(v) - 1.0f)); }>,
        backward<[](float v, float g, float alpha) { return g * select(v > 0.0f, 1.0f, alpha * exp_approx(v)); }>},
       {},
       {"alpha", 1.0, "a finite number (PyTorch's default 1.0)"},
       // elu(x, alpha, scale, input_scale), elu_backward(dy, alpha, scale, input_scale, ...): scale
       // and input_scale 1 (F.elu); aten::selu and celu call it with others, each a product more
       // per element, and stay uncounted rather than counted short.
       {"elu", "", {{2, 2, 1.0, true}, {3, 3, 1.0, true}}},
       {"Elu", "alpha", 1.0, {}, {}}},
      {OpKind::hardshrink,
       "x < −λ or x > λ ? x : 0",
       // PyTorch's kernel, (x >= −λ and x <= λ) ? 0 : x: two comparisons, and the same two for its
       // backward, which selects dy (no product). Keeps its input: a zero output does not tell
       // whether x was inside the band or 0 itself.
       {{2, 2, kInput, "", false},
        forward<[](float v, float lambd) { return select(v >= -lambd && v <= lambd, 0.0f, v); }>,
        backward<[](float v, float g, float lambd) { return select(v >= -lambd && v <= lambd, 0.0f, g); }>},
       {},
       {"lambd", 0.5, "a finite number (PyTorch's default 0.5)"},
       {"hardshrink", "", {}},  // any λ: the same two comparisons
       // ONNX's Shrink is x < −lambd ? x + bias : x > lambd ? x − bias : 0; with bias 0 (its
       // default) it is hardshrink, with another bias softshrink's form.
       {"Shrink", "lambd", 0.5, {{"bias", 0.0, 0.0}}, "a Shrink with a bias is softshrink, which hwprof has no layer for"}},
  };
  return table;
}

}  // namespace

std::span<const UnaryDefinition> unary_definitions() {
  return definitions();
}

const UnaryDefinition* unary_definition(OpKind kind) noexcept {
  for (const UnaryDefinition& d : definitions()) {
    if (d.kind == kind) return &d;
  }
  return nullptr;
}

const UnaryForm* unary_form(const Node& node) noexcept {
  const UnaryDefinition* d = unary_definition(node.op);
  if (d == nullptr) return nullptr;
  if (d->tanh_form && node.attrs.approximate == GeluApproximation::tanh) return &*d->tanh_form;
  return &d->form;
}

float unary_parameter(const Node& node) noexcept {
  const UnaryDefinition* d = unary_definition(node.op);
  if (d == nullptr || d->parameter.name.empty()) return 0.0f;
  return static_cast<float>(node.attrs.parameter.value_or(d->parameter.fallback));
}

const UnaryDefinition* unary_for_onnx(std::string_view type) noexcept {
  for (const UnaryDefinition& d : definitions()) {
    if (!d.onnx.type.empty() && d.onnx.type == type) return &d;
  }
  return nullptr;
}

}  // namespace hwprof::ops
