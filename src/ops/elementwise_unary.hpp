// The element-wise unary ops (y[i] = f(x[i]): activations), each defined once, in
// elementwise_unary.cpp: its name, its cost per element forward and backward, which tensor its
// backward reads, the function that bounds its rate, its one number if it has one, its
// kernels, and how a PyTorch call and an ONNX node name it. Every stage reads the definition:
// the op table and the spec parser (the name, the attributes), shape inference and the cost
// model (through the op table's traits), the engine (the kernels), the roofline and the
// causes (the traits), the ONNX importer and the PyTorch observer (the mappings). Adding one
// is one definition there plus its tests (docs/adding-an-op.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

// An element-wise unary op per element (docs/cost.md, "Counting convention"): FLOPs forward
// and backward, what its backward reads, and the transcendental function its forward
// evaluates once (its roof is that function's calibrated rate, not the FMA peak).
struct UnaryTraits {
  int flops = 0;
  int grad_flops = 0;
  bool backward_reads_output = false;  // else its input
  std::string_view transcendental;     // "tanh", "exp", "erf"; empty for arithmetic only
  bool max_min = false;                // computed with max/min: integer blends may retire no FP op
};

// One thread's part of a kernel: y[i] = f(x[i]) for i < n, and dx[i] from the kept tensor (x or
// y, as the traits say) and dy[i]. `parameter` is the op's one number (0 for an op without one).
// The engine splits a tensor among its threads and calls these on each part.
using UnaryForward = void (*)(const float* x, float* y, std::int64_t n, float parameter) noexcept;
using UnaryBackward = void (*)(const float* kept, const float* dy, float* dx, std::int64_t n, float parameter) noexcept;

// A way of computing the op: its cost and its kernels.
struct UnaryForm {
  UnaryTraits traits;
  UnaryForward forward = nullptr;
  UnaryBackward backward = nullptr;
};

// The op's one number (leaky_relu's slope): its attribute in a spec, its default (PyTorch's),
// and what the spec parser says a wrong value should be.
struct UnaryParameter {
  std::string_view name;  // empty: the op has none
  double fallback = 0.0;
  std::string_view expected;
};

// An argument of a PyTorch call that must hold one value (or be absent, where absent means
// that value) for the call to be this op: hardtanh(x, 0, 6) is relu6.
struct AtenFixedArgument {
  int forward_index = 0;   // in the forward call's arguments
  int backward_index = 0;  // in its backward's (grad_output first)
  double value = 0.0;
  bool absent_is_value = false;
};

// The PyTorch ops that compute it (aten::<forward>, aten::<backward>).
struct AtenMapping {
  std::string_view forward;
  std::string_view backward;  // empty: forward + "_backward"
  std::vector<AtenFixedArgument> fixed;
};

// An ONNX attribute that must hold one value for the node to be this op.
struct OnnxFixedAttribute {
  std::string_view name;
  double value = 0.0;
  double onnx_default = 0.0;  // its value when the node does not set it
};

// The ONNX op that computes it: its type, the attribute that carries the op's one number and
// its ONNX default, and attributes that must hold fixed values (`why` says so in the message).
struct OnnxMapping {
  std::string_view type;  // empty: no ONNX op maps onto it (an importer pattern may)
  std::string_view parameter;
  double parameter_default = 0.0;
  std::vector<OnnxFixedAttribute> fixed;
  std::string_view why;
};

struct UnaryDefinition {
  OpKind kind;
  std::string_view formula;  // PyTorch's definition, for reading
  UnaryForm form;
  std::optional<UnaryForm> tanh_form;  // gelu's approximate = "tanh"; a spec attribute `approximate` selects it
  UnaryParameter parameter;
  AtenMapping aten;
  OnnxMapping onnx;
};

// Every element-wise unary op, in OpKind's order.
std::span<const UnaryDefinition> unary_definitions();
// The definition of `kind`; nullptr for an op of another family.
const UnaryDefinition* unary_definition(OpKind kind) noexcept;
// The form a node computes (gelu's `approximate` picks one of two); nullptr for an op of
// another family.
const UnaryForm* unary_form(const Node& node) noexcept;
// The node's one number, its definition's default where the node does not set it.
float unary_parameter(const Node& node) noexcept;
// The definition an ONNX op type maps onto; nullptr for none.
const UnaryDefinition* unary_for_onnx(std::string_view type) noexcept;

}  // namespace hwprof::ops
