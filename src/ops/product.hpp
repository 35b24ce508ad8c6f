// The matrix products (nn.Linear, nn.MultiheadAttention, torch.matmul of two activations), each
// defined once, in product.cpp: its attributes, whether it multiplies by weights of its own or
// by a second activation, the input size its weights are built for and what its kernels do
// besides their GEMMs that the FLOP-count reasons must name. Every product runs as GEMMs
// and is held to the GEMM ceiling (compute_roof_of, ops.hpp). The stages with one rule for all
// of them read the family instead of listing the ops: the op table, the weight width a new input
// must keep (graph.cpp), the causes' BLAS test and the FLOP-count reasons, and the observer's ATen names. The stages whose rule
// differs per op (shape inference, the spec parser, the cost model, the parameters, the engine's
// layer, the GEMM shapes of the causes, the ONNX importer, the observer) keep a case each, which
// the compiler asks for when one is added (docs/adding-an-op.md). Adding one is a line in
// HWPROF_PRODUCT_OPS (hwprof/engine/graph.hpp), one definition there, its case in those stages
// and its tests.
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct ProductDefinition {
  OpKind kind;
  std::span<const std::string_view> attributes;  // its own, besides name/op/inputs
  // 1: the input times the layer's own weights; 2: two activations, no weights.
  int inputs;
  // What the input's last axis is to its weights (PyTorch's in_features, embed_dim): a new
  // input shape must keep it. Empty for a product without weights.
  std::string_view weight_width;
  // Its kernel normalises scores with a softmax between its GEMMs (attention): the exp's
  // approximation retires more FP instructions than the table counts.
  bool softmax_inside;
  // It may take a causal mask (attention's `causal`): a kernel that skips the masked products
  // does fewer than the table's full count.
  bool causal_mask;
  // The ATen ops the observer counts as this product (src/torch/aten_cost.cpp): each a GEMM
  // over the rows of its left operand.
  std::span<const std::string_view> aten_names;
};

// Every product, in OpKind's order.
std::span<const ProductDefinition> product_definitions();
// The definition of `kind`; nullptr for an op of another family.
const ProductDefinition* product_definition(OpKind kind) noexcept;
// The definition that counts an ATen op (without its overload); nullptr if none.
const ProductDefinition* product_for_aten(std::string_view name) noexcept;

// The products as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_PRODUCT_CASE(name) case OpKind::name:
#define HWPROF_PRODUCT_CASES HWPROF_PRODUCT_OPS(HWPROF_PRODUCT_CASE)

}  // namespace hwprof::ops
