// The op table (src/ops/ops.cpp): in OpKind's order, its element-wise rows complete, and the
// case list the switches use for them the same set as the table's rows.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ops/ops.hpp"

namespace hwprof {
namespace {

bool named_by_the_cases(OpKind kind) {
  switch (kind) {
    HWPROF_ELEMENTWISE_UNARY_CASES
    return true;
    default:
      return false;
  }
}

TEST(OpTable, RowsFollowOpKind) {
  const auto& table = detail::op_table();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(OpKind::unsupported) + 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].kind), i) << table[i].name;
    EXPECT_EQ(&detail::op_info(table[i].kind), &table[i]);
    if (table[i].kind != OpKind::unsupported) {
      EXPECT_EQ(detail::find_op(table[i].name), table[i].kind);
    }
  }
}

TEST(OpTable, ElementwiseCasesAreTheTablesElementwiseRows) {
  for (const detail::OpInfo& info : detail::op_table()) {
    const bool unary = info.family == detail::OpFamily::elementwise_unary;
    EXPECT_EQ(named_by_the_cases(info.kind), unary) << info.name << ": HWPROF_ELEMENTWISE_UNARY_CASES and the table disagree";
    if (!unary) {
      EXPECT_EQ(info.unary.flops, 0) << info.name << ": unary traits on an op of another family";
      continue;
    }
    // One float in, one out, no parameters; a cost forward and backward.
    EXPECT_EQ(info.min_inputs, 1) << info.name;
    EXPECT_EQ(info.max_inputs, 1) << info.name;
    EXPECT_GT(info.unary.flops, 0) << info.name;
    EXPECT_GT(info.unary.grad_flops, 0) << info.name;
    const std::string_view fn = info.unary.transcendental;
    EXPECT_TRUE(fn.empty() || fn == "exp" || fn == "tanh" || fn == "erf") << info.name << ": " << fn << " has no calibrated ceiling";
  }
}

// Each element-wise row comes from its definition, which has a kernel forward and backward of
// its own in every form (no two forms share one: a form would otherwise compute another op),
// and every op of another family has none.
TEST(OpTable, EveryElementwiseRowHasItsDefinitionAndItsOwnKernels) {
  std::map<detail::UnaryForward, std::string> owner;
  for (const detail::OpInfo& info : detail::op_table()) {
    const detail::UnaryDefinition* d = detail::unary_definition(info.kind);
    if (info.family != detail::OpFamily::elementwise_unary) {
      EXPECT_EQ(d, nullptr) << info.name << " is not element-wise but has an element-wise definition";
      continue;
    }
    ASSERT_NE(d, nullptr) << info.name;
    EXPECT_EQ(info.unary.flops, d->form.traits.flops) << info.name;
    EXPECT_FALSE(d->formula.empty()) << info.name;
    for (const detail::UnaryForm* form : {&d->form, d->tanh_form ? &*d->tanh_form : nullptr}) {
      if (form == nullptr) continue;
      ASSERT_NE(form->forward, nullptr) << info.name;
      ASSERT_NE(form->backward, nullptr) << info.name;
      const auto [it, fresh] = owner.emplace(form->forward, std::string(info.name));
      EXPECT_TRUE(fresh) << info.name << " runs " << it->second << "'s kernel";
    }
  }
  EXPECT_EQ(owner.size(), detail::unary_definitions().size() + 1);  // gelu's tanh form
}

// A definition's mappings name real things: an ONNX type once, a PyTorch op once.
TEST(OpTable, EachDefinitionsMappingsAreItsOwn) {
  std::map<std::string, std::string> onnx, aten;
  for (const detail::UnaryDefinition& d : detail::unary_definitions()) {
    const std::string name(op_name(d.kind));
    EXPECT_FALSE(d.aten.forward.empty()) << name << ": no PyTorch op";
    EXPECT_TRUE(aten.emplace(std::string(d.aten.forward) + "/" + std::string(d.aten.backward), name).second) << name;
    if (!d.onnx.type.empty()) {
      EXPECT_TRUE(onnx.emplace(std::string(d.onnx.type), name).second) << name << ": ONNX's " << d.onnx.type << " maps onto two ops";
      EXPECT_EQ(detail::unary_for_onnx(d.onnx.type), &d);
    }
    EXPECT_EQ(d.parameter.name.empty(), d.parameter.expected.empty()) << name;
  }
}

TEST(OpTable, GeluTraitsFollowItsApproximation) {
  Node gelu;
  gelu.op = OpKind::gelu;
  ASSERT_TRUE(detail::unary_traits(gelu).has_value());
  EXPECT_EQ(detail::unary_traits(gelu)->transcendental, "erf");
  EXPECT_EQ(detail::unary_traits(gelu)->flops, 5);
  gelu.attrs.approximate = GeluApproximation::tanh;
  EXPECT_EQ(detail::unary_traits(gelu)->transcendental, "exp");
  EXPECT_EQ(detail::unary_traits(gelu)->flops, 9);
  Node conv;
  conv.op = OpKind::conv2d;
  EXPECT_FALSE(detail::unary_traits(conv).has_value());
}

// The compute roof of each pass, by the op's definition: every op of the GEMM family (the
// engine runs each as BLAS GEMMs: matmul too) under the GEMM ceiling in both passes; a forward
// pass that evaluates exp, tanh or erf once per element under that function's rate; the rest,
// and every backward of an activation, under the FMA peak.
TEST(OpTable, ComputeRoofsComeFromTheDefinitions) {
  using Kind = ComputeRoof::Kind;
  const auto roof = [](OpKind op, bool forward, GeluApproximation approximate = GeluApproximation::none) {
    Node node;
    node.op = op;
    node.attrs.approximate = approximate;
    return detail::compute_roof_of(node, forward);
  };
  for (const detail::OpInfo& info : detail::op_table()) {
    if (info.family != detail::OpFamily::gemm) continue;
    EXPECT_EQ(roof(info.kind, true).kind, Kind::gemm) << info.name;
    EXPECT_EQ(roof(info.kind, false).kind, Kind::gemm) << info.name;
  }
  EXPECT_EQ(roof(OpKind::gelu, true).function, "erf");
  EXPECT_EQ(roof(OpKind::gelu, true, GeluApproximation::tanh).function, "exp") << "x·σ(2u): one exp";
  EXPECT_EQ(roof(OpKind::gelu, true).kind, Kind::transcendental);
  EXPECT_EQ(roof(OpKind::gelu, false).kind, Kind::fma);
  EXPECT_EQ(roof(OpKind::softmax, true).function, "exp");
  EXPECT_EQ(roof(OpKind::relu, true).kind, Kind::fma);
  EXPECT_EQ(roof(OpKind::lstm, true).kind, Kind::fma) << "a step's small GEMMs: the FMA peak, as before";
  for (const detail::UnaryDefinition& d : detail::unary_definitions()) {
    const ComputeRoof r = roof(d.kind, true);
    EXPECT_EQ(r.function, d.form.traits.transcendental) << op_name(d.kind);
    EXPECT_EQ(r.kind == Kind::transcendental, !d.form.traits.transcendental.empty()) << op_name(d.kind);
  }
}

}  // namespace
}  // namespace hwprof
