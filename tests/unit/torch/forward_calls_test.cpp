// What the forward pass leaves for the backward pass (src/torch/forward_calls.hpp), the phases of
// the op stack (src/torch/op_stack.hpp) and how a call's shapes are written
// (src/torch/call_labels.hpp): no libtorch, made-up calls.
#include <cstdint>

#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "torch/call_labels.hpp"
#include "torch/forward_calls.hpp"
#include "torch/op_stack.hpp"

namespace hwprof::pytorch {
namespace {

TEST(ForwardCalls, ACallIsFoundByItsThreadAndSequenceNumber) {
  static ForwardCalls calls;  // 16 MB of atomics: not on the stack
  ForwardCall c;
  c.root = 7;
  c.module = 3;
  c.module_call = 11;
  c.root_call = 42;
  c.variant = 0xabc;
  c.backward_flops = 1e6;
  c.backward_bytes = 2e6;
  calls.remember(1, 100, c);
  const ForwardCall found = calls.find(1, 100);
  EXPECT_EQ(found.root, 7);
  EXPECT_EQ(found.module, 3);
  EXPECT_EQ(found.module_call, 11u);
  EXPECT_EQ(found.root_call, 42u);
  EXPECT_EQ(found.variant, 0xabcu);
  EXPECT_DOUBLE_EQ(found.backward_flops, 1e6);
  EXPECT_EQ(calls.find(2, 100).root, -1) << "another thread's sequence 100 is another call";
  EXPECT_EQ(calls.find(1, 101).root, -1);
  EXPECT_EQ(calls.find(1, -1).root, -1) << "no sequence number: nothing";
  // A module's call fills only the numbers no op of it took.
  ForwardCall module_only;
  module_only.module = 9;
  module_only.module_call = 12;
  calls.remember_if_absent(1, 100, module_only);
  calls.remember_if_absent(1, 102, module_only);
  EXPECT_EQ(calls.find(1, 100).module, 3);
  EXPECT_EQ(calls.find(1, 102).module, 9);
  EXPECT_EQ(calls.find(1, 102).root, -1);
  // The table keeps the latest kSlots: an old number's slot is a newer one's.
  calls.remember(1, 100 + static_cast<std::int64_t>(ForwardCalls::kSlots), c);
  EXPECT_EQ(calls.find(1, 100).root, -1);
}

TEST(ModuleCalls, AModuleCallKnowsTheCallAroundIt) {
  static ModuleCalls calls;
  calls.remember(5, 2, 0);
  calls.remember(6, 4, 5);
  EXPECT_EQ(calls.find(6).module, 4);
  EXPECT_EQ(calls.find(6).parent_call, 5u);
  EXPECT_EQ(calls.find(5).parent_call, 0u) << "a model's own call";
  EXPECT_EQ(calls.find(7).module, -1) << "never made";
  calls.remember(6 + ModuleCalls::kSlots, 1, 0);
  EXPECT_EQ(calls.find(6).module, -1) << "too old";
}

// A forward recomputed inside a backward function (checkpointing) is its own phase, and its
// work counts even where the function around it carries its op's backward.
TEST(OpStack, ARecomputedForwardIsItsOwnPhaseAndCounts) {
  OpStack stack;
  const AtenCost carried{0, 0, std::nullopt, {}};
  const AtenCost linear{100, 10, std::nullopt, {}};
  FramePush wrapper;
  wrapper.wrapper = true;
  wrapper.backward_function = true;
  stack.push(wrapper);
  FramePush function;
  function.backward_function = true;
  function.cost = &carried;
  stack.push(function);
  EXPECT_TRUE(stack.in_backward());
  FramePush op;
  op.region = 3;
  op.cost = &linear;
  op.is_op = true;
  op.recompute = true;
  const OpFrame* f = stack.push(op);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->recompute);
  EXPECT_FALSE(f->backward);
  EXPECT_TRUE(f->carries_work) << "recomputed work is work";
  FramePush inner;
  inner.region = 4;
  inner.cost = &linear;
  inner.is_op = true;
  const OpFrame* g = stack.push(inner);
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->recompute) << "inherited";
  EXPECT_FALSE(g->carries_work) << "counted in the recomputed op around it";
  EXPECT_EQ(g->root, 3);
}

TEST(CallLabels, ShapesThenScalarsWhereTheSameShapesCostOtherwise) {
  AtenCall call;
  call.op = "aten::conv2d";
  call.arg_count = 3;
  call.args[0].kind = AtenArgKind::tensor;
  call.args[0].rank = 4;
  for (std::int64_t d : {0, 1, 2, 3}) call.args[0].dims[d] = d + 2;
  call.args[1].kind = AtenArgKind::ints;
  call.args[1].rank = 2;
  call.args[1].dims[0] = call.args[1].dims[1] = 1;
  call.args[2].kind = AtenArgKind::tensors;
  call.args[2].count = 3;
  call.args[2].rank = 1;
  call.args[2].dims[0] = 8;
  EXPECT_EQ(shapes_of(call), "2x3x4x5, 3 tensors: 8");
  EXPECT_EQ(scalars_of(call), "{(1, 1)}");
  VariantLabels labels;
  const AtenCost one{10, 1, std::nullopt, {}};
  const AtenCost other{20, 1, std::nullopt, {}};
  EXPECT_EQ(labels.label(call, &one), "2x3x4x5, 3 tensors: 8");
  EXPECT_EQ(labels.label(call, &one), "2x3x4x5, 3 tensors: 8");
  call.args[1].dims[0] = 2;
  EXPECT_EQ(labels.label(call, &other), "2x3x4x5, 3 tensors: 8 {(2, 1)}") << "a stride of 2 costs otherwise";
  AtenCall none;
  none.op = "aten::empty";
  EXPECT_EQ(labels.label(none, nullptr), "no tensor");
}

}  // namespace
}  // namespace hwprof::pytorch
