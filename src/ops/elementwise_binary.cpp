#include "ops/elementwise_binary.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

using A = BinaryArithmetic;

// The gradients: d(a + b) = dy, dy; d(a − b) = dy, −dy; d(a·b) = dy·b, dy·a; d(a/b) = dy/b,
// −dy·a/b² (a division, then a product, a square and a division: 4 with the first).
constexpr BinaryDefinition kBinaries[] = {
    {OpKind::add, A::add, "plus", 0, 0, 1, false, true, 0.0, "Add", "add"},
    {OpKind::mul, A::mul, "times", 2, 1, 2, true, true, 1.0, "Mul", "mul"},
    {OpKind::sub, A::sub, "minus", 1, 0, 1, false, false, 0.0, "Sub", "sub"},
    {OpKind::div, A::div, "divided by", 4, 1, 4, true, false, 1.0, "Div", "div"},
};

}  // namespace

std::span<const BinaryDefinition> binary_definitions() {
  return kBinaries;
}

const BinaryDefinition* binary_definition(OpKind kind) noexcept {
  return first_definition(kBinaries, [&](const BinaryDefinition& d) { return d.kind == kind; });
}

const BinaryDefinition* binary_for_onnx(std::string_view type) noexcept {
  return first_definition(kBinaries, [&](const BinaryDefinition& d) { return d.onnx == type; });
}

const BinaryDefinition* binary_for_aten(std::string_view name) noexcept {
  if (name == "rsub") name = "sub";  // b − a: the same work
  return first_definition(kBinaries, [&](const BinaryDefinition& d) { return d.aten == name; });
}

}  // namespace hwprof::ops
