#include "ops/product.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr std::string_view kLinear[] = {"out_features", "bias", "tied_to"};
constexpr std::string_view kAttention[] = {"heads", "causal", "bias"};
// Every ATen matrix product, with or without a bias or batch axes, is counted as a linear layer
// over the rows of its left operand (its own batch axes, and the right one's it broadcasts).
constexpr std::string_view kLinearAten[] = {"linear", "addmm", "mm", "bmm", "matmul", "baddbmm"};

// docs/model-specs.md, "Ops and attributes", says what each attribute means; docs/cost.md,
// "Counting convention", how each product is counted.
constexpr ProductDefinition kProducts[] = {
    // nn.Linear: x·Wᵀ over the rows of every leading axis.
    {OpKind::linear, kLinear, 1, "input features", false, false, kLinearAten},
    // nn.MultiheadAttention's self-attention over [T, D]: the Q, K, V and output projections,
    // and per head Q·Kᵀ, its softmax and the scores times V (src/nn/attention.cpp).
    {OpKind::attention, kAttention, 1, "model width D", true, true, {}},
    // torch.matmul of two activations, ONNX MatMul: [..., M, K]·[..., K, N] with the axes before
    // the last two broadcast as NumPy does, one GEMM per output matrix.
    {OpKind::matmul, {}, 2, "", false, false, {}},
};

}  // namespace

std::span<const ProductDefinition> product_definitions() {
  return kProducts;
}

const ProductDefinition* product_definition(OpKind kind) noexcept {
  return first_definition(kProducts, [&](const ProductDefinition& d) { return d.kind == kind; });
}

const ProductDefinition* product_for_aten(std::string_view name) noexcept {
  return first_definition(kProducts, [&](const ProductDefinition& d) { return listed(d.aten_names, name); });
}

}  // namespace hwprof::ops
