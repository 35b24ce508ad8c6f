// The op table (src/ops/ops.cpp): in OpKind's order, its element-wise, pooling and normalization
// rows complete, and the case lists the switches use for them the same sets as the table's rows.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <string>

#include "ops/ops.hpp"

namespace hwprof {
namespace {

// Whether a family's case list (its HWPROF_*_CASES) names `kind`.
#define HWPROF_NAMED_BY(function, cases) \
  bool function(OpKind kind) {           \
    switch (kind) {                      \
      cases return true;                 \
      default:                           \
        return false;                    \
    }                                    \
  }
HWPROF_NAMED_BY(named_by_the_cases, HWPROF_ELEMENTWISE_UNARY_CASES)
HWPROF_NAMED_BY(named_by_the_pooling_cases, HWPROF_POOLING_CASES)
HWPROF_NAMED_BY(named_by_the_normalization_cases, HWPROF_NORMALIZATION_CASES)
HWPROF_NAMED_BY(named_by_the_binary_cases, HWPROF_ELEMENTWISE_BINARY_CASES)
HWPROF_NAMED_BY(named_by_the_recurrent_cases, HWPROF_RECURRENT_CASES)
HWPROF_NAMED_BY(named_by_the_convolution_cases, HWPROF_CONVOLUTION_CASES)
HWPROF_NAMED_BY(named_by_the_data_movement_cases, HWPROF_DATA_MOVEMENT_CASES)
HWPROF_NAMED_BY(named_by_the_lookup_cases, HWPROF_LOOKUP_CASES)
HWPROF_NAMED_BY(named_by_the_product_cases, HWPROF_PRODUCT_CASES)
HWPROF_NAMED_BY(named_by_the_softmax_cases, HWPROF_SOFTMAX_CASES)
#undef HWPROF_NAMED_BY

TEST(OpTable, RowsFollowOpKind) {
  const auto& table = ops::op_table();
  ASSERT_EQ(table.size(), static_cast<std::size_t>(OpKind::unsupported) + 1);
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].kind), i) << table[i].name;
    EXPECT_EQ(&ops::op_info(table[i].kind), &table[i]);
    if (table[i].kind != OpKind::unsupported) {
      EXPECT_EQ(ops::find_op(table[i].name), table[i].kind);
    }
  }
}

TEST(OpTable, ElementwiseCasesAreTheTablesElementwiseRows) {
  for (const ops::OpInfo& info : ops::op_table()) {
    const bool unary = info.family == ops::OpFamily::elementwise_unary;
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
  std::map<ops::UnaryForward, std::string> owner;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::UnaryDefinition* d = ops::unary_definition(info.kind);
    if (info.family != ops::OpFamily::elementwise_unary) {
      EXPECT_EQ(d, nullptr) << info.name << " is not element-wise but has an element-wise definition";
      continue;
    }
    ASSERT_NE(d, nullptr) << info.name;
    EXPECT_EQ(info.unary.flops, d->form.traits.flops) << info.name;
    EXPECT_FALSE(d->formula.empty()) << info.name;
    for (const ops::UnaryForm* form : {&d->form, d->tanh_form ? &*d->tanh_form : nullptr}) {
      if (form == nullptr) continue;
      ASSERT_NE(form->forward, nullptr) << info.name;
      ASSERT_NE(form->backward, nullptr) << info.name;
      const auto [it, fresh] = owner.emplace(form->forward, std::string(info.name));
      EXPECT_TRUE(fresh) << info.name << " runs " << it->second << "'s kernel";
    }
  }
  EXPECT_EQ(owner.size(), ops::unary_definitions().size() + 1);  // gelu's tanh form
}

// A definition's mappings name real things: an ONNX type once, a PyTorch op once.
TEST(OpTable, EachDefinitionsMappingsAreItsOwn) {
  std::map<std::string, std::string> onnx, aten;
  for (const ops::UnaryDefinition& d : ops::unary_definitions()) {
    const std::string name(op_name(d.kind));
    EXPECT_FALSE(d.aten.forward.empty()) << name << ": no PyTorch op";
    EXPECT_TRUE(aten.emplace(std::string(d.aten.forward) + "/" + std::string(d.aten.backward), name).second) << name;
    if (!d.onnx.type.empty()) {
      EXPECT_TRUE(onnx.emplace(std::string(d.onnx.type), name).second) << name << ": ONNX's " << d.onnx.type << " maps onto two ops";
      EXPECT_EQ(ops::unary_for_onnx(d.onnx.type), &d);
    }
    EXPECT_EQ(d.parameter.name.empty(), d.parameter.expected.empty()) << name;
  }
}

// Every pooling row has one definition, which the case list names too; each reduction over each
// number of axes is one op; the table's attributes are the reduction's.
TEST(OpTable, EveryPoolingRowHasItsDefinition) {
  std::map<std::pair<ops::PoolReduction, int>, std::string> seen;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::PoolingDefinition* d = ops::pooling_definition(info.kind);
    const bool pooling = info.family == ops::OpFamily::pooling;
    EXPECT_EQ(named_by_the_pooling_cases(info.kind), pooling) << info.name << ": HWPROF_POOLING_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, pooling) << info.name;
    if (d == nullptr) continue;
    EXPECT_TRUE(seen.emplace(std::make_pair(d->reduction, d->spatial_axes), std::string(info.name)).second) << info.name;
    EXPECT_EQ(ops::pooling_for(d->reduction, d->spatial_axes), d) << info.name;
    EXPECT_EQ(ops::pooling_for_aten(d->aten), d) << info.name << ": aten::" << d->aten;
    EXPECT_TRUE(info.name.ends_with(std::to_string(d->spatial_axes) + "d")) << info.name;
    // A max pool takes PyTorch's dilation; an average pool has none.
    const std::vector<std::string_view> max_window{"kernel", "stride", "padding", "dilation", "ceil_mode"};
    const std::vector<std::string_view> window{"kernel", "stride", "padding", "ceil_mode"};
    const std::vector<std::string_view> adaptive{"output"};
    EXPECT_EQ(info.attributes, d->reduction == ops::PoolReduction::adaptive_average ? adaptive
                               : d->reduction == ops::PoolReduction::max            ? max_window
                                                                                    : window)
        << info.name;
  }
  EXPECT_EQ(seen.size(), ops::pooling_definitions().size());
}

// Every normalization row has one definition, which the case list names too; each kind of
// statistics over each number of axes is one op; each takes eps; the learned vectors are as long
// as the channels (a batch norm) or the last axis (a layer norm).
TEST(OpTable, EveryNormalizationRowHasItsDefinition) {
  std::map<std::pair<ops::NormStatistics, int>, std::string> seen;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::NormalizationDefinition* d = ops::normalization_definition(info.kind);
    const bool norm = info.family == ops::OpFamily::normalization;
    EXPECT_EQ(named_by_the_normalization_cases(info.kind), norm) << info.name << ": HWPROF_NORMALIZATION_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, norm) << info.name;
    if (d == nullptr) continue;
    EXPECT_TRUE(seen.emplace(std::make_pair(d->statistics, d->spatial_axes), std::string(info.name)).second) << info.name;
    EXPECT_EQ(ops::normalization_for(d->statistics, d->spatial_axes), d) << info.name;
    EXPECT_EQ(info.attributes, std::vector<std::string_view>{"eps"}) << info.name;
  }
  EXPECT_EQ(seen.size(), ops::normalization_definitions().size());
  const ops::NormalizationDefinition& batch3 = *ops::normalization_definition(OpKind::batchnorm3d);
  const ops::NormalizationDefinition& layer = *ops::normalization_definition(OpKind::layernorm);
  EXPECT_EQ(ops::normalized_width(batch3, {16, 4, 8, 8}).size, 16);
  EXPECT_STREQ(ops::normalized_width(batch3, {16, 4, 8, 8}).what, "input channels");
  EXPECT_EQ(ops::normalized_width(layer, {197, 768}).size, 768);
  EXPECT_EQ(ops::norm_input_problem(batch3, {16, 4, 8, 8}, DType::f32), "");
  EXPECT_EQ(ops::norm_input_problem(batch3, {16, 8, 8}, DType::f32), "expects a [C, D, H, W] input, got [16, 8, 8]");
  EXPECT_EQ(ops::norm_input_problem(layer, {5}, DType::f32), "");
  EXPECT_NE(ops::norm_input_problem(layer, {5}, DType::i32).find("float32"), std::string::npos);
  // nn.BatchNorm1d takes [C, L] and [C] alone; the others their own rank only.
  const ops::NormalizationDefinition& batch1 = *ops::normalization_definition(OpKind::batchnorm1d);
  EXPECT_EQ(ops::normalization_for(ops::NormStatistics::per_channel, 1), &batch1);
  EXPECT_EQ(ops::normalization_for(ops::NormStatistics::per_channel, 0), &batch1);
  EXPECT_EQ(ops::norm_input_problem(batch1, {12}, DType::f32), "");
  EXPECT_EQ(ops::norm_input_problem(batch1, {12, 30}, DType::f32), "");
  EXPECT_EQ(ops::norm_input_problem(batch1, {12, 3, 3}, DType::f32), "expects a [C] or [C, L] input, got [12, 3, 3]");
  EXPECT_EQ(ops::norm_input_problem(batch3, {16}, DType::f32), "expects a [C, D, H, W] input, got [16]");
}

// Every element-wise binary row has one definition, which the case list names too; each
// arithmetic is one op; its ONNX type and aten name find it; its identity leaves an input as it
// is; a backward that reads the inputs costs more than one that passes dy on.
TEST(OpTable, EveryBinaryRowHasItsDefinition) {
  std::map<ops::BinaryArithmetic, std::string> seen;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::BinaryDefinition* d = ops::binary_definition(info.kind);
    const bool binary = info.family == ops::OpFamily::elementwise_binary;
    EXPECT_EQ(named_by_the_binary_cases(info.kind), binary) << info.name << ": HWPROF_ELEMENTWISE_BINARY_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, binary) << info.name;
    if (d == nullptr) continue;
    EXPECT_TRUE(seen.emplace(d->arithmetic, std::string(info.name)).second) << info.name;
    EXPECT_EQ(ops::binary_for_onnx(d->onnx), d) << info.name;
    EXPECT_EQ(ops::binary_for_aten(d->aten), d) << info.name;
    EXPECT_EQ(info.attributes, (std::vector<std::string_view>{"operand", "trainable"})) << info.name;
    EXPECT_EQ(info.min_inputs, 1);
    EXPECT_EQ(info.max_inputs, 2);
    EXPECT_FALSE(d->between.empty()) << info.name;
    if (d->keeps_inputs) {
      EXPECT_GT(d->grad_flops, 1) << info.name;
      EXPECT_EQ(d->input_grad_flops, 1) << info.name;
    }
  }
  EXPECT_EQ(seen.size(), ops::binary_definitions().size());
  // x + 0, x − 0, x · 1, x / 1.
  EXPECT_EQ(ops::binary_definition(OpKind::add)->identity, 0.0);
  EXPECT_EQ(ops::binary_definition(OpKind::sub)->identity, 0.0);
  EXPECT_EQ(ops::binary_definition(OpKind::mul)->identity, 1.0);
  EXPECT_EQ(ops::binary_definition(OpKind::div)->identity, 1.0);
  EXPECT_FALSE(ops::binary_definition(OpKind::sub)->commutes);
  EXPECT_EQ(ops::binary_for_aten("rsub")->kind, OpKind::sub);
  EXPECT_EQ(ops::binary_for_aten("pow"), nullptr);
}

// Every recurrent row has one definition, which the case list names too; its ONNX type and aten
// name find it; it takes x and then its initial states; its ONNX gate order is a permutation of
// its gates, and its activations are one direction's; the gate arithmetic is docs/cost.md's.
TEST(OpTable, EveryRecurrentRowHasItsDefinition) {
  std::set<ops::RecurrentCell> cells;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::RecurrentDefinition* d = ops::recurrent_definition(info.kind);
    const bool recurrent = info.family == ops::OpFamily::recurrent;
    EXPECT_EQ(named_by_the_recurrent_cases(info.kind), recurrent) << info.name << ": HWPROF_RECURRENT_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, recurrent) << info.name;
    if (d == nullptr) continue;
    EXPECT_TRUE(cells.insert(d->cell).second) << info.name;
    EXPECT_EQ(ops::recurrent_for_onnx(d->onnx_type), d) << info.name;
    EXPECT_EQ(ops::recurrent_for_aten(d->aten_name), d) << info.name;
    EXPECT_EQ(info.attributes, (std::vector<std::string_view>{"hidden_size", "bidirectional", "bias"})) << info.name;
    EXPECT_EQ(info.min_inputs, 1);
    EXPECT_EQ(info.max_inputs, 1 + static_cast<int>(d->states.size())) << info.name;
    EXPECT_EQ(d->states.front(), "h0") << info.name;
    ASSERT_EQ(d->onnx_gate_order.size(), static_cast<std::size_t>(d->gates)) << info.name;
    std::set<int> blocks(d->onnx_gate_order.begin(), d->onnx_gate_order.end());
    EXPECT_EQ(blocks.size(), static_cast<std::size_t>(d->gates)) << info.name;
    EXPECT_EQ(*blocks.begin(), 0);
    EXPECT_EQ(*blocks.rbegin(), d->gates - 1);
    EXPECT_FALSE(d->onnx_activations.empty()) << info.name;
  }
  EXPECT_EQ(cells.size(), ops::recurrent_definitions().size());
  const ops::RecurrentDefinition& lstm = *ops::recurrent_definition(OpKind::lstm);
  const ops::RecurrentDefinition& gru = *ops::recurrent_definition(OpKind::gru);
  EXPECT_EQ(lstm.gates, 4);
  EXPECT_EQ(gru.gates, 3);
  EXPECT_EQ(lstm.states.size(), 2U);  // h0, c0
  EXPECT_EQ(gru.states.size(), 1U);
  EXPECT_EQ(lstm.gate_flops, 22);
  EXPECT_EQ(gru.gate_flops, 17);
  EXPECT_EQ(lstm.gate_grad_flops, 24);
  EXPECT_EQ(gru.gate_grad_flops, 18);
  EXPECT_EQ(ops::recurrent_for_onnx("RNN"), nullptr);  // the plain Elman RNN has no definition
  EXPECT_EQ(ops::recurrent_for_aten("rnn_tanh"), nullptr);
}

// Every convolution row has one definition, which the case list names too; each form over each
// number of axes is one op, found by convolution_for; a transposed one takes output_padding.
TEST(OpTable, EveryConvolutionRowHasItsDefinition) {
  std::set<std::pair<bool, int>> seen;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::ConvolutionDefinition* d = ops::convolution_definition(info.kind);
    EXPECT_EQ(named_by_the_convolution_cases(info.kind), d != nullptr) << info.name << ": HWPROF_CONVOLUTION_CASES and the table disagree";
    if (d == nullptr) continue;
    EXPECT_EQ(info.family, ops::OpFamily::gemm) << info.name;
    EXPECT_TRUE(seen.emplace(d->transposed, d->spatial_axes).second) << info.name;
    EXPECT_EQ(ops::convolution_for(d->transposed, d->spatial_axes), d) << info.name;
    EXPECT_EQ(d->onnx_type, d->transposed ? "ConvTranspose" : "Conv") << info.name;
    std::vector<std::string_view> attributes{"out_channels", "kernel", "stride", "padding"};
    if (d->transposed) attributes.emplace_back("output_padding");
    attributes.insert(attributes.end(), {"dilation", "groups", "bias"});
    EXPECT_EQ(info.attributes, attributes) << info.name;
    EXPECT_EQ(info.min_inputs, 1);
    EXPECT_EQ(info.max_inputs, 1);
  }
  EXPECT_EQ(seen.size(), ops::convolution_definitions().size());
  EXPECT_EQ(ops::convolution_for(false, 1)->kind, OpKind::conv1d);
  EXPECT_EQ(ops::convolution_for(true, 1)->kind, OpKind::conv_transpose1d);
  EXPECT_EQ(ops::convolution_for(false, 4), nullptr);
  EXPECT_TRUE(ops::convolution_definition(OpKind::conv1d)->direct_depthwise) << "over a height of 1, the 2-D depthwise loops";
  EXPECT_TRUE(ops::convolution_definition(OpKind::conv2d)->direct_depthwise);
  EXPECT_FALSE(ops::convolution_definition(OpKind::conv3d)->direct_depthwise);
}

// A temporary's axes would dangle (`for (x : conv_axes(...).view())` read freed stack before
// the rvalue overloads were deleted): view() is for a named ConvAxes or PoolAxes only.
template <typename Axes>
concept views_a_temporary = requires(Axes (*make)()) {
  make().view();
};
template <typename Axes>
concept views_a_named_one = requires(const Axes& axes) {
  axes.view();
};
static_assert(!views_a_temporary<ops::ConvAxes> && views_a_named_one<ops::ConvAxes>);
static_assert(!views_a_temporary<ops::PoolAxes> && views_a_named_one<ops::PoolAxes>);

// conv_axes reads a node's window per axis (depth first in 3-D), set_conv_axes writes it back,
// and the weight is PyTorch's layout.
TEST(OpTable, ConvAxesRoundTripAndTheWeightsLayout) {
  const ops::ConvolutionDefinition& c3 = *ops::convolution_definition(OpKind::conv_transpose3d);
  ops::ConvAxes axes;
  axes.count = 3;
  axes.axis = {ops::ConvAxis{2, 1, 0, 1, 0}, ops::ConvAxis{3, 2, 1, 1, 1}, ops::ConvAxis{5, 2, 2, 3, 1}};
  Attributes a;
  a.out_channels = 6;
  a.groups = 3;
  ops::set_conv_axes(c3, axes, a);
  EXPECT_EQ(a.depth.kernel, 2);
  EXPECT_EQ(a.kernel.h, 3);
  EXPECT_EQ(a.kernel.w, 5);
  EXPECT_EQ(a.dilation.w, 3);
  EXPECT_EQ(a.output_padding.h, 1);
  const ops::ConvAxes back = ops::conv_axes(c3, a);
  ASSERT_EQ(back.count, 3);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.axis[i].kernel, axes.axis[i].kernel) << i;
    EXPECT_EQ(back.axis[i].stride, axes.axis[i].stride) << i;
    EXPECT_EQ(back.axis[i].padding, axes.axis[i].padding) << i;
    EXPECT_EQ(back.axis[i].dilation, axes.axis[i].dilation) << i;
    EXPECT_EQ(back.axis[i].output_padding, axes.axis[i].output_padding) << i;
  }
  EXPECT_EQ(ops::conv_weight_shape(c3, a, 9), (Shape{9, 2, 2, 3, 5}));  // [in, out/groups, kd, kh, kw]
  const ops::ConvolutionDefinition& c2 = *ops::convolution_definition(OpKind::conv2d);
  Attributes b;
  b.out_channels = 8;
  b.groups = 2;
  b.kernel = {3, 1};
  EXPECT_EQ(ops::conv_weight_shape(c2, b, 4), (Shape{8, 2, 3, 1}));  // [out, in/groups, kh, kw]
}

// conv_shape follows PyTorch's Conv and ConvTranspose output sizes and names what is wrong.
TEST(OpTable, ConvShapeFollowsPyTorch) {
  const ops::ConvolutionDefinition& c2 = *ops::convolution_definition(OpKind::conv2d);
  const ops::ConvolutionDefinition& t2 = *ops::convolution_definition(OpKind::conv_transpose2d);
  const ops::ConvolutionDefinition& c3 = *ops::convolution_definition(OpKind::conv3d);
  Attributes a;
  a.out_channels = 8;
  a.kernel = {3, 2};
  a.stride = {2, 1};
  a.padding = {1, 0};
  a.dilation = {1, 2};
  // torch.nn.Conv2d(4, 8, (3, 2), (2, 1), (1, 0), (1, 2))(torch.zeros(1, 4, 13, 11)).shape: [1, 8, 7, 9].
  EXPECT_EQ(ops::conv_shape(c2, a, {4, 13, 11}, DType::f32).shape, (Shape{8, 7, 9}));
  Attributes t;
  t.out_channels = 4;
  t.kernel = {3, 3};
  t.stride = {2, 2};
  t.padding = {1, 1};
  t.output_padding = {1, 1};
  // torch.nn.ConvTranspose2d(8, 4, 3, 2, 1, 1)(torch.zeros(1, 8, 7, 9)).shape: [1, 4, 14, 18].
  EXPECT_EQ(ops::conv_shape(t2, t, {8, 7, 9}, DType::f32).shape, (Shape{4, 14, 18}));
  t.output_padding = {2, 2};
  const ops::WindowShape bad_padding = ops::conv_shape(t2, t, {8, 7, 9}, DType::f32);
  EXPECT_EQ(bad_padding.problem, "output_padding 2x2 must be smaller than the stride or the dilation along each axis (PyTorch's rule)");
  EXPECT_STREQ(bad_padding.attribute, "output_padding");
  Attributes k;
  k.out_channels = 4;
  k.kernel = {3, 3};
  k.depth.kernel = 9;
  const ops::WindowShape too_large = ops::conv_shape(c3, k, {4, 5, 5, 5}, DType::f32);
  EXPECT_EQ(too_large.problem, "the kernel 9x3x3 (dilation 1x1x1) is larger than the padded input 5x5x5");
  EXPECT_STREQ(too_large.attribute, "kernel");
  k.depth.kernel = 1;
  k.depth.stride = 0;
  EXPECT_EQ(ops::conv_shape(c3, k, {4, 5, 5, 5}, DType::f32).problem, "stride is 0x1x1; it must be at least 1");
  k.depth.stride = 1;
  k.groups = 3;
  EXPECT_EQ(ops::conv_shape(c3, k, {4, 5, 5, 5}, DType::f32).problem, "groups = 3 must divide the input channels (4)");
  EXPECT_EQ(ops::conv_shape(c3, k, {4, 5, 5}, DType::f32).problem, "expects a [C, D, H, W] input, got [4, 5, 5]");
  EXPECT_NE(ops::conv_shape(c2, a, {4, 13, 11}, DType::i32).problem.find("float32"), std::string::npos);
  // A padding that removes the whole output of a transposed convolution.
  Attributes r;
  r.out_channels = 2;
  r.kernel = {1, 1};
  r.padding = {1, 0};
  EXPECT_EQ(ops::conv_shape(t2, r, {2, 1, 4}, DType::f32).problem, "the padding removes the whole output (0x4)");
  // Sizes near 2^63 saturate rather than wrap.
  Attributes huge;
  huge.out_channels = 1;
  huge.kernel = {1, 1};
  huge.padding = {std::numeric_limits<std::int64_t>::max() / 2, 0};
  EXPECT_EQ(ops::conv_shape(c2, huge, {1, 3, 3}, DType::f32).shape[1], std::numeric_limits<std::int64_t>::max());
}

// Every data-movement row is its definition's: the case list names it, its attributes and
// inputs are the definition's, and only the ops that read their input as another shape are views.
TEST(OpTable, EveryDataMovementRowHasItsDefinition) {
  std::size_t rows = 0;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::DataMovementDefinition* d = ops::data_movement_definition(info.kind);
    const bool movement = info.family == ops::OpFamily::data_movement;
    EXPECT_EQ(named_by_the_data_movement_cases(info.kind), movement) << info.name << ": HWPROF_DATA_MOVEMENT_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, movement) << info.name;
    if (d == nullptr) continue;
    ++rows;
    EXPECT_EQ(info.attributes, std::vector<std::string_view>(d->attributes.begin(), d->attributes.end())) << info.name;
    EXPECT_EQ(info.min_inputs, d->min_inputs) << info.name;
    EXPECT_EQ(info.max_inputs, d->max_inputs) << info.name;
    EXPECT_FALSE(d->torch.empty()) << info.name;
    const bool view = info.kind == OpKind::flatten || info.kind == OpKind::reshape || info.kind == OpKind::dropout;
    EXPECT_EQ(d->view, view) << info.name;
  }
  EXPECT_EQ(rows, ops::data_movement_definitions().size());
  EXPECT_EQ(ops::op_info(OpKind::concat).max_inputs, -1);  // any number of inputs
  EXPECT_EQ(ops::op_info(OpKind::where).attributes, (std::vector<std::string_view>{"condition", "operand", "constant_first"}));
}

// Every lookup row is its definition's, which the case list names too; only the lookups that
// add what they read do arithmetic.
TEST(OpTable, EveryLookupRowHasItsDefinition) {
  std::size_t rows = 0;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::LookupDefinition* d = ops::lookup_definition(info.kind);
    const bool lookup = info.family == ops::OpFamily::lookup;
    EXPECT_EQ(named_by_the_lookup_cases(info.kind), lookup) << info.name << ": HWPROF_LOOKUP_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, lookup) << info.name;
    if (d == nullptr) continue;
    ++rows;
    EXPECT_EQ(info.attributes, std::vector<std::string_view>(d->attributes.begin(), d->attributes.end())) << info.name;
    EXPECT_EQ(info.min_inputs, 1);
    EXPECT_EQ(info.max_inputs, 1);
    EXPECT_FALSE(d->indexed_by.empty()) << info.name;
  }
  EXPECT_EQ(rows, ops::lookup_definitions().size());
  EXPECT_FALSE(ops::lookup_definition(OpKind::embedding)->adds);
  EXPECT_FALSE(ops::lookup_definition(OpKind::cls_token)->adds);
  EXPECT_TRUE(ops::lookup_definition(OpKind::pos_embedding)->adds);
  EXPECT_TRUE(ops::lookup_definition(OpKind::rel_pos_bias)->adds);
}

// The products are the GEMM family's ops without a window: each row is its definition's.
TEST(OpTable, EveryProductRowHasItsDefinition) {
  std::size_t rows = 0;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::ProductDefinition* d = ops::product_definition(info.kind);
    EXPECT_EQ(named_by_the_product_cases(info.kind), d != nullptr) << info.name << ": HWPROF_PRODUCT_CASES and the definitions disagree";
    if (d == nullptr) continue;
    ++rows;
    EXPECT_EQ(info.family, ops::OpFamily::gemm) << info.name;
    EXPECT_EQ(info.attributes, std::vector<std::string_view>(d->attributes.begin(), d->attributes.end())) << info.name;
    EXPECT_EQ(info.min_inputs, d->inputs) << info.name;
    EXPECT_EQ(info.max_inputs, d->inputs) << info.name;
    for (std::string_view name : d->aten_names) EXPECT_EQ(ops::product_for_aten(name), d) << name;
  }
  // Every ATen matrix product is counted as a linear layer over its left operand's rows.
  EXPECT_EQ(ops::product_for_aten("addmm")->kind, OpKind::linear);
  EXPECT_EQ(ops::product_for_aten("bmm")->kind, OpKind::linear);
  EXPECT_EQ(ops::product_for_aten("conv2d"), nullptr);
  EXPECT_EQ(rows, ops::product_definitions().size());
  // Two activations (matmul) have no weights, so nothing a new input shape must keep.
  EXPECT_EQ(ops::product_definition(OpKind::linear)->weight_width, "input features");
  EXPECT_EQ(ops::product_definition(OpKind::attention)->weight_width, "model width D");
  EXPECT_TRUE(ops::product_definition(OpKind::matmul)->weight_width.empty());
  EXPECT_TRUE(ops::product_definition(OpKind::attention)->causal_mask);
  EXPECT_FALSE(ops::product_definition(OpKind::linear)->softmax_inside);
  EXPECT_EQ(ops::product_definition(OpKind::conv2d), nullptr);
}

TEST(OpTable, EverySoftmaxRowHasItsDefinition) {
  std::size_t rows = 0;
  for (const ops::OpInfo& info : ops::op_table()) {
    const ops::SoftmaxDefinition* d = ops::softmax_definition(info.kind);
    const bool softmax = info.family == ops::OpFamily::softmax;
    EXPECT_EQ(named_by_the_softmax_cases(info.kind), softmax) << info.name << ": HWPROF_SOFTMAX_CASES and the table disagree";
    EXPECT_EQ(d != nullptr, softmax) << info.name;
    if (d == nullptr) continue;
    ++rows;
    EXPECT_EQ(info.attributes, std::vector<std::string_view>{"axis"});
    EXPECT_FALSE(d->function.empty()) << info.name << ": its roof is a function's rate";
    EXPECT_EQ(ops::softmax_for_onnx(d->onnx_type), d) << info.name;
    for (std::string_view name : d->aten_forward) {
      EXPECT_EQ(ops::softmax_for_aten(name).definition, d) << name;
      EXPECT_FALSE(ops::softmax_for_aten(name).backward) << name;
    }
    for (std::string_view name : d->aten_backward) {
      EXPECT_EQ(ops::softmax_for_aten(name).definition, d) << name;
      EXPECT_TRUE(ops::softmax_for_aten(name).backward) << name;
    }
  }
  EXPECT_EQ(rows, ops::softmax_definitions().size());
  EXPECT_EQ(ops::softmax_for_aten("softmax_backward").definition, nullptr);
  EXPECT_EQ(ops::softmax_for_onnx("Hardmax"), nullptr);
}

// upsample's and reduce's modes: one definition each, in their enums' order, found by each name
// a spec, an ONNX node and a PyTorch call give them.
TEST(OpTable, UpsampleAndReduceModesHaveTheirDefinitions) {
  for (std::size_t i = 0; i < ops::upsample_modes().size(); ++i) {
    const ops::UpsampleModeDefinition& d = ops::upsample_modes()[i];
    EXPECT_EQ(static_cast<std::size_t>(d.mode), i) << d.name;
    EXPECT_EQ(&ops::upsample_mode(d.mode), &d);
    EXPECT_EQ(ops::upsample_mode_named(d.name), &d);
    EXPECT_EQ(ops::upsample_mode_for_onnx(d.onnx_mode), &d);
    EXPECT_EQ(ops::upsample_mode_for_aten(d.aten_name), &d);
  }
  EXPECT_EQ(ops::upsample_modes().size(), 2u);
  EXPECT_EQ(ops::upsample_mode_for_onnx("linear")->mode, UpsampleMode::bilinear) << "Resize calls bilinear 'linear'";
  EXPECT_TRUE(ops::upsample_mode(UpsampleMode::bilinear).align_corners);
  EXPECT_FALSE(ops::upsample_mode(UpsampleMode::nearest).align_corners) << "PyTorch refuses align_corners for nearest";
  EXPECT_EQ(ops::upsample_mode_named("bicubic"), nullptr);
  for (std::size_t i = 0; i < ops::reduce_modes().size(); ++i) {
    const ops::ReduceModeDefinition& d = ops::reduce_modes()[i];
    EXPECT_EQ(static_cast<std::size_t>(d.mode), i) << d.name;
    EXPECT_EQ(&ops::reduce_mode(d.mode), &d);
    EXPECT_EQ(ops::reduce_mode_named(d.name), &d);
    EXPECT_EQ(ops::reduce_mode_for_onnx(d.onnx_type), &d);
    EXPECT_EQ(ops::reduce_mode_for_aten(d.aten_name), &d);
  }
  EXPECT_TRUE(ops::reduce_mode(ReduceMode::mean).divides);
  EXPECT_FALSE(ops::reduce_mode(ReduceMode::sum).divides);
  EXPECT_EQ(ops::reduce_mode_for_onnx("ReduceMax"), nullptr);
}

TEST(OpTable, PoolingDefinitionsByPyTorchsNames) {
  EXPECT_EQ(ops::pooling_for_aten("max_pool2d_with_indices")->kind, OpKind::maxpool2d);
  EXPECT_EQ(ops::pooling_for_aten("max_pool3d_with_indices")->kind, OpKind::maxpool3d);
  EXPECT_EQ(ops::pooling_for_aten("_adaptive_avg_pool2d")->kind, OpKind::adaptive_avgpool2d);
  EXPECT_EQ(ops::pooling_for_aten("adaptive_avg_pool3d")->kind, OpKind::adaptive_avgpool3d);
  EXPECT_EQ(ops::pooling_for_aten("avg_pool3d")->kind, OpKind::avgpool3d);
  EXPECT_EQ(ops::pooling_for_aten("avg_pool2d_with_indices"), nullptr);  // only a max keeps indices
  EXPECT_EQ(ops::pooling_for_aten("max_pool1d")->kind, OpKind::maxpool1d);
  EXPECT_EQ(ops::pooling_for_aten("max_pool1d_with_indices")->kind, OpKind::maxpool1d);
  EXPECT_EQ(ops::pooling_for_aten("adaptive_avg_pool1d")->kind, OpKind::adaptive_avgpool1d);
  EXPECT_EQ(ops::pooling_for_aten("adaptive_max_pool2d"), nullptr);  // no definition
  EXPECT_EQ(ops::pooling_for(ops::PoolReduction::max, 1)->kind, OpKind::maxpool1d);
  EXPECT_EQ(ops::pooling_for(ops::PoolReduction::max, 4), nullptr);
}

// pool_axes reads a node's window per axis (depth first in 3-D) and set_pool_axes writes it back.
TEST(OpTable, PoolAxesRoundTrip) {
  Attributes a;
  a.kernel = {3, 5};
  a.stride = {2, 1};
  a.padding = {1, 2};
  a.output = {7, 9};
  a.depth = {4, 3, 2, 1, 6, 0};
  const ops::PoolingDefinition& two = *ops::pooling_definition(OpKind::maxpool2d);
  const ops::PoolingDefinition& three = *ops::pooling_definition(OpKind::avgpool3d);
  const ops::PoolAxes a2 = pool_axes(two, a);
  ASSERT_EQ(a2.count, 2);
  EXPECT_EQ(a2.axis[0].kernel, 3);
  EXPECT_EQ(a2.axis[1].padding, 2);
  EXPECT_EQ(a2.axis[1].output, 9);
  const ops::PoolAxes a3 = pool_axes(three, a);
  ASSERT_EQ(a3.count, 3);
  EXPECT_EQ(a3.axis[0].kernel, 4);
  EXPECT_EQ(a3.axis[0].stride, 3);
  EXPECT_EQ(a3.axis[0].padding, 2);
  EXPECT_EQ(a3.axis[0].output, 6);
  EXPECT_EQ(a3.axis[2].stride, 1);
  Attributes back;
  set_pool_axes(three, a3, back);
  EXPECT_EQ(back.depth.kernel, 4);
  EXPECT_EQ(back.kernel.w, 5);
  EXPECT_EQ(back.output.h, 7);
  EXPECT_EQ(pool_axes(three, back).axis[1].padding, 1);
}

// PyTorch's pooling_output_shape: ceil_mode drops a last window that starts in the right
// padding; sizes near 2^63 saturate instead of wrapping.
TEST(OpTable, PoolOutputSizeFollowsPyTorch) {
  EXPECT_EQ(ops::pool_output_size(112, 3, 2, 1, false), 56);  // resnet's stem pool
  EXPECT_EQ(ops::pool_output_size(5, 2, 2, 0, false), 2);
  EXPECT_EQ(ops::pool_output_size(5, 2, 2, 0, true), 3);
  EXPECT_EQ(ops::pool_output_size(4, 2, 2, 1, true), 3);   // the last window would start at 5 > 4 + 1: dropped
  EXPECT_EQ(ops::pool_output_size(1, 2, 2, 0, true), 1);   // no "kernel fits" check with ceil_mode
  EXPECT_LE(ops::pool_output_size(1, 3, 1, 0, false), 0);  // an empty output
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(ops::pool_output_size(big, 1, 1, big / 2, false), big);
  EXPECT_EQ(ops::padded_size_text(7, 2), "11");
  EXPECT_EQ(ops::padded_size_text(big, 1), "(" + std::to_string(big) + "+2*1)");
}

TEST(OpTable, GeluTraitsFollowItsApproximation) {
  Node gelu;
  gelu.op = OpKind::gelu;
  ASSERT_TRUE(ops::unary_traits(gelu).has_value());
  EXPECT_EQ(ops::unary_traits(gelu)->transcendental, "erf");
  EXPECT_EQ(ops::unary_traits(gelu)->flops, 5);
  gelu.attrs.approximate = GeluApproximation::tanh;
  EXPECT_EQ(ops::unary_traits(gelu)->transcendental, "exp");
  EXPECT_EQ(ops::unary_traits(gelu)->flops, 9);
  Node conv;
  conv.op = OpKind::conv2d;
  EXPECT_FALSE(ops::unary_traits(conv).has_value());
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
    return ops::compute_roof_of(node, forward);
  };
  for (const ops::OpInfo& info : ops::op_table()) {
    if (info.family != ops::OpFamily::gemm) continue;
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
  for (const ops::UnaryDefinition& d : ops::unary_definitions()) {
    const ComputeRoof r = roof(d.kind, true);
    EXPECT_EQ(r.function, d.form.traits.transcendental) << op_name(d.kind);
    EXPECT_EQ(r.kind == Kind::transcendental, !d.form.traits.transcendental.empty()) << op_name(d.kind);
  }
}

}  // namespace
}  // namespace hwprof
