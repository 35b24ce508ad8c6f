// The op table (src/graph/ops.cpp): in OpKind's order, its element-wise rows complete, and the
// case list the switches use for them the same set as the table's rows.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "graph/ops.hpp"
#include "nn/layers.hpp"

namespace hwprof {
namespace {

bool named_by_the_cases(OpKind kind) {
  switch (kind) {
  HWPROF_ELEMENTWISE_UNARY_CASES:
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

// A row without its engine kernel would otherwise run some other op's kernel: each element-wise
// row (gelu with each approximation) has a kernel of its own, and no other op has one.
TEST(OpTable, EveryElementwiseRowHasItsOwnKernel) {
  std::map<nn::Activation, std::string> owner;
  for (const detail::OpInfo& info : detail::op_table()) {
    for (const GeluApproximation approximate : {GeluApproximation::none, GeluApproximation::tanh}) {
      if (approximate == GeluApproximation::tanh && info.kind != OpKind::gelu) continue;
      Node node;
      node.op = info.kind;
      node.attrs.approximate = approximate;
      const std::optional<nn::Activation> kernel = nn::activation_of(node);
      const std::string name = std::string(info.name) + (approximate == GeluApproximation::tanh ? " (tanh)" : "");
      if (info.family != detail::OpFamily::elementwise_unary) {
        EXPECT_FALSE(kernel.has_value()) << name << " is not element-wise but has an activation kernel";
        continue;
      }
      ASSERT_TRUE(kernel.has_value()) << name << ": no kernel; add its case to nn::activation_of (docs/adding-an-op.md, step 4)";
      const auto [it, fresh] = owner.emplace(*kernel, name);
      EXPECT_TRUE(fresh) << name << " runs " << it->second << "'s kernel; give it its own (docs/adding-an-op.md, step 4)";
    }
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

}  // namespace
}  // namespace hwprof
