// The softmax ops (nn.Softmax: y = exp(x − max) / Σ exp(x − max) along one axis), each defined
// once, in softmax.cpp: the function it evaluates per element (its compute roof is that
// function's calibrated rate), its FLOPs per element and row forward and backward
// (docs/cost.md, "Counting convention"), and how an ONNX node and a PyTorch call name it. Every
// stage reads the definition instead of naming the op: the op table (the attribute `axis`), the
// spec parser, shape inference, the cost model, the compute roof (ops.cpp), the FLOP-count
// reasons, the engine (src/nn/softmax.cpp's kernels), the ONNX importer and the observer. Adding
// one (a log_softmax, say) is a line in HWPROF_SOFTMAX_OPS (hwprof/engine/graph.hpp), one
// definition there, its kernels and its tests (docs/adding-an-op.md).
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct SoftmaxDefinition {
  OpKind kind;
  std::string_view function;  // the transcendental function it evaluates once per element
  int flops;                  // per element, forward
  int row_flops;              // per row along the axis, forward
  int grad_flops;             // per element, the input's gradient
  std::string_view onnx_type;
  // The ATen ops counted as it, forward and backward (the input gradient); log-softmax is
  // counted as softmax (the same passes: a log per row in place of a division per element).
  std::span<const std::string_view> aten_forward;
  std::span<const std::string_view> aten_backward;
};

// Every softmax op, in OpKind's order.
std::span<const SoftmaxDefinition> softmax_definitions();
// The definition of `kind`; nullptr for an op of another family.
const SoftmaxDefinition* softmax_definition(OpKind kind) noexcept;
// The definition an ONNX operator names; nullptr if none.
const SoftmaxDefinition* softmax_for_onnx(std::string_view type) noexcept;

// The definition that counts an ATen op (without its overload), and whether the op is the
// backward one; nullptr if none.
struct SoftmaxCall {
  const SoftmaxDefinition* definition = nullptr;
  bool backward = false;
};
SoftmaxCall softmax_for_aten(std::string_view name) noexcept;

// The softmax ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_SOFTMAX_CASE(name) case OpKind::name:
#define HWPROF_SOFTMAX_CASES HWPROF_SOFTMAX_OPS(HWPROF_SOFTMAX_CASE)

}  // namespace hwprof::ops
