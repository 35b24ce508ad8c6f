// The recurrent ops (one layer of nn.LSTM or nn.GRU, batch_first: [T, C] per sample in,
// [T, H·directions] out), each defined once, in recurrent.cpp: its cell, how many gate rows it
// keeps per state element, which initial states it may take as inputs, the gate arithmetic the
// cost model counts per state element and step (docs/cost.md, "Counting convention"), and how an
// ONNX node and a PyTorch call name it. Every stage reads the definition instead of listing the
// ops: the op table and the spec parser (hidden_size, bidirectional, bias; the inputs it takes),
// shape inference (the states' shapes), the cost model, the parameters (the gates' rows), the
// engine (the kernels of its cell), the causes (its GEMMs' shapes), the FLOP-count reasons, the
// ONNX importer (LSTM, GRU) and the PyTorch observer (aten::lstm, aten::gru). Adding one is a
// line in HWPROF_RECURRENT_OPS (hwprof/engine/graph.hpp), one definition there, its cell's
// kernels (src/nn/recurrent.cpp) and its tests (docs/adding-an-op.md).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

// Which cell runs each step (the engine has the kernels of each).
enum class RecurrentCell {
  lstm,  // i, f, g, o gates; c = f·c + i·g, h = o·tanh(c) (torch.nn.LSTM's formulas)
  gru,   // r, z, n gates; n = tanh(x_n + r·(W_hn·h + b_hn)), h = (1 − z)·n + z·h (torch.nn.GRU's)
};

struct RecurrentDefinition {
  OpKind kind;
  RecurrentCell cell;
  int gates;  // gate rows per state element: weight_ih is [gates·H, C]
  // The initial states it may take, in input order after x, each [directions, H] per sample.
  std::span<const std::string_view> states;
  // The gate arithmetic per state element and step, forward and in backpropagation through time
  // (docs/cost.md, "Counting convention", recurrent layers), besides the products and biases.
  int gate_flops;
  int gate_grad_flops;
  std::string_view module;     // PyTorch's module, for reading
  std::string_view onnx_type;  // the ONNX operator
  // PyTorch's gate k is the ONNX operator's gate block onnx_gate_order[k] (of W, R and B).
  std::span<const int> onnx_gate_order;
  // The ONNX operator's default activations, one direction's (the only ones PyTorch writes).
  std::span<const std::string_view> onnx_activations;
  std::string_view aten_name;  // the ATen op nn.<module> calls (aten::lstm.input, aten::gru.input)
};

// Every recurrent op, in OpKind's order.
std::span<const RecurrentDefinition> recurrent_definitions();
// The definition of `kind`; nullptr for an op of another family.
const RecurrentDefinition* recurrent_definition(OpKind kind) noexcept;
// The definition an ONNX operator or an ATen op (without its overload) names; nullptr if none.
const RecurrentDefinition* recurrent_for_onnx(std::string_view type) noexcept;
const RecurrentDefinition* recurrent_for_aten(std::string_view name) noexcept;

// The recurrent ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_RECURRENT_CASE(name) case OpKind::name:
#define HWPROF_RECURRENT_CASES HWPROF_RECURRENT_OPS(HWPROF_RECURRENT_CASE)

}  // namespace hwprof::ops
