// The element-wise binary ops (y = a ∘ b: two activations broadcast as NumPy does, or one
// activation and an operand tensor broadcast to it, a constant buffer or a learned parameter),
// each defined once, in elementwise_binary.cpp: its arithmetic, its cost per element backward,
// which inputs its backward reads, where a learned operand starts, and how an ONNX node and a
// PyTorch call name it. Every stage reads the definition instead of listing the ops: the op
// table and the spec parser (operand, trainable), shape inference (broadcasting), the cost
// model and the parameters, the engine (the kernels of its arithmetic), the ONNX importer and
// the PyTorch observer. Adding one is a line in HWPROF_ELEMENTWISE_BINARY_OPS
// (hwprof/engine/graph.hpp), one definition there, its kernels and its tests
// (docs/adding-an-op.md).
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

// The arithmetic of a binary op: the engine's kernels switch on it (src/nn/elementwise.cpp).
enum class BinaryArithmetic { add, sub, mul, div };

struct BinaryDefinition {
  OpKind kind;
  BinaryArithmetic arithmetic;
  std::string_view between;  // "plus", "minus", ...: a's and b's relation, in messages
  // Backward FLOPs per output element (docs/cost.md, "Counting convention"), before the sum of a
  // broadcast input's gradient (one add per element more):
  int grad_flops;          // of two activations, both gradients (add 0: dy passed on; sub 1: −dy; mul 2; div 4)
  int input_grad_flops;    // of the activation, beside an operand (mul: dy·b; div: dy/b)
  int operand_grad_flops;  // of a learned operand (add, sub 1; mul 2: dy·a; div 4: −dy·a/b²)
  bool keeps_inputs;       // its backward reads the inputs (mul, div), not only dy
  bool commutes;           // a ∘ b = b ∘ a: a constant first operand is the same op
  double identity;         // the operand that leaves an input unchanged: where a learned operand starts
  std::string_view onnx;   // the ONNX op type
  std::string_view aten;   // aten::<aten> (and its in-place and out forms)
};

// Every element-wise binary op, in OpKind's order.
std::span<const BinaryDefinition> binary_definitions();
// The definition of `kind`; nullptr for an op of another family.
const BinaryDefinition* binary_definition(OpKind kind) noexcept;
// The op an ONNX op type or a PyTorch op (without "aten::") names; nullptr for none.
const BinaryDefinition* binary_for_onnx(std::string_view type) noexcept;
const BinaryDefinition* binary_for_aten(std::string_view name) noexcept;

// The element-wise binary ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says
// why).
#define HWPROF_ELEMENTWISE_BINARY_CASE(name) case OpKind::name:
#define HWPROF_ELEMENTWISE_BINARY_CASES HWPROF_ELEMENTWISE_BINARY_OPS(HWPROF_ELEMENTWISE_BINARY_CASE)

}  // namespace hwprof::ops
