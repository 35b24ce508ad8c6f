#include "ops/softmax.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr std::string_view kSoftmaxAten[] = {"softmax", "_softmax", "log_softmax", "_log_softmax"};
constexpr std::string_view kSoftmaxAtenBackward[] = {"_softmax_backward_data", "_log_softmax_backward_data"};

// docs/cost.md, "Counting convention": forward, per element the max, the subtraction, the exp,
// the sum and the multiplication by 1/sum (5), and per row the reciprocal (1); backward,
// dx = y·(dy − Σ dy·y): a product and a sum for the dot, a subtraction and a product (4).
constexpr SoftmaxDefinition kSoftmaxes[] = {
    {OpKind::softmax, "exp", 5, 1, 4, "Softmax", kSoftmaxAten, kSoftmaxAtenBackward},
};

}  // namespace

std::span<const SoftmaxDefinition> softmax_definitions() {
  return kSoftmaxes;
}

const SoftmaxDefinition* softmax_definition(OpKind kind) noexcept {
  return first_definition(kSoftmaxes, [&](const SoftmaxDefinition& d) { return d.kind == kind; });
}

const SoftmaxDefinition* softmax_for_onnx(std::string_view type) noexcept {
  return first_definition(kSoftmaxes, [&](const SoftmaxDefinition& d) { return d.onnx_type == type; });
}

SoftmaxCall softmax_for_aten(std::string_view name) noexcept {
  if (const SoftmaxDefinition* forward = first_definition(kSoftmaxes, [&](const SoftmaxDefinition& d) { return listed(d.aten_forward, name); }))
    return {forward, false};
  if (const SoftmaxDefinition* backward = first_definition(kSoftmaxes, [&](const SoftmaxDefinition& d) { return listed(d.aten_backward, name); }))
    return {backward, true};
  return {};
}

}  // namespace hwprof::ops
