// aten ops' analytic cost (src/torch/aten_cost.cpp) and who carries a composite op's FLOPs
// (src/torch/op_stack.hpp), on calls written by hand: no libtorch. Every expected figure is
// the formula of src/cost/op_cost.cpp worked out by hand for the shapes.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>

#include <gtest/gtest.h>

#include "torch/aten_cost.hpp"
#include "torch/op_stack.hpp"

// Not in hwprof::pytorch: the unity build puts aten_cost.cpp, whose helpers have the same
// names, in this translation unit.
namespace hwprof::torch_test {
namespace {

using pytorch::aten_cost;
using pytorch::aten_signature;
using pytorch::AtenArg;
using pytorch::AtenArgKind;
using pytorch::AtenCall;
using pytorch::AtenCost;
using pytorch::AtenElement;
using pytorch::OpFrame;
using pytorch::OpStack;

AtenArg t(std::initializer_list<std::int64_t> dims, AtenElement element = AtenElement::floating) {
  AtenArg a;
  a.kind = AtenArgKind::tensor;
  a.element = element;
  a.element_bytes = element == AtenElement::floating ? 4 : 8;
  a.elements = 1;
  for (std::int64_t d : dims) {
    a.dims[a.rank++] = d;
    a.elements *= d;
  }
  return a;
}
AtenArg ints(std::initializer_list<std::int64_t> values) {
  AtenArg a;
  a.kind = AtenArgKind::ints;
  for (std::int64_t v : values) a.dims[a.rank++] = v;
  return a;
}
AtenArg integer(std::int64_t v) {
  AtenArg a;
  a.kind = AtenArgKind::integer;
  a.integer = v;
  return a;
}
AtenArg boolean(bool v) {
  AtenArg a = integer(v ? 1 : 0);
  a.kind = AtenArgKind::boolean;
  return a;
}
AtenArg real(double v) {
  AtenArg a;
  a.kind = AtenArgKind::real;
  a.real = v;
  return a;
}
AtenArg none() {
  AtenArg a;
  a.kind = AtenArgKind::none;
  return a;
}

AtenCall call(std::string_view op, std::initializer_list<AtenArg> args) {
  AtenCall c;
  c.op = op;
  for (const AtenArg& a : args) c.args[c.arg_count++] = a;
  return c;
}

double flops(const AtenCall& c) {
  const auto cost = aten_cost(c);
  EXPECT_TRUE(cost.has_value()) << c.op << " has no formula";
  return cost ? cost->flops : -1.0;
}

// conv: input [8,3,32,32], weight [16,3,5,5], bias, stride 1, padding 2 → [8,16,32,32].
constexpr double kConvOut = 8.0 * 16 * 32 * 32;
constexpr double kConvMacs = kConvOut * 3 * 5 * 5;

TEST(AtenCost, EveryLevelOfAConvolutionGivesTheSameCount) {
  const double expected = 2 * kConvMacs + kConvOut;  // 2·MACs + the bias adds
  const AtenArg x = t({8, 3, 32, 32});
  const AtenArg w = t({16, 3, 5, 5});
  const AtenArg b = t({16});
  EXPECT_DOUBLE_EQ(flops(call("aten::conv2d", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), integer(1)})), expected);
  EXPECT_DOUBLE_EQ(flops(call("aten::convolution", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), boolean(false), ints({0, 0}), integer(1)})),
                   expected);
  EXPECT_DOUBLE_EQ(flops(call("aten::_convolution", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), boolean(false), ints({0, 0}), integer(1),
                                                     boolean(false), boolean(false), boolean(true), boolean(true)})),
                   expected);
  // mkldnn_convolution(input, weight, bias, padding, stride, dilation, groups): padding first.
  EXPECT_DOUBLE_EQ(flops(call("aten::mkldnn_convolution", {x, w, b, ints({2, 2}), ints({1, 1}), ints({1, 1}), integer(1)})), expected);
  const auto cost = aten_cost(call("aten::conv2d", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), integer(1)}));
  ASSERT_TRUE(cost);
  EXPECT_DOUBLE_EQ(cost->bytes, 4.0 * (8 * 3 * 32 * 32 + kConvOut + 16 * 3 * 25 + 16)) << "input, output, weight and bias once";
}

TEST(AtenCost, GroupedStridedDilatedAndOneAndThreeDimensionalConvolutions) {
  // Depthwise, stride 2, padding 1, dilation 2: (10 + 2 - 4 - 1) / 2 + 1 = 4.
  EXPECT_DOUBLE_EQ(flops(call("aten::conv2d", {t({2, 8, 10, 10}), t({8, 1, 3, 3}), none(), ints({2, 2}), ints({1, 1}), ints({2, 2}), integer(8)})),
                   2.0 * (2 * 8 * 4 * 4) * 9);
  // conv1d, groups 2: L = 20 - 4 = 16; each output gathers 3·5 products.
  EXPECT_DOUBLE_EQ(flops(call("aten::conv1d", {t({4, 6, 20}), t({12, 3, 5}), none(), ints({1}), ints({0}), ints({1}), integer(2)})),
                   2.0 * (4 * 12 * 16) * 15);
  // conv3d with bias: 4x4x4 outputs of 4·27 products each, and n bias adds.
  const double n3 = 2.0 * 8 * 64;
  EXPECT_DOUBLE_EQ(
      flops(call("aten::conv3d", {t({2, 4, 6, 6, 6}), t({8, 4, 3, 3, 3}), t({8}), ints({1, 1, 1}), ints({0, 0, 0}), ints({1, 1, 1}), integer(1)})),
      2 * n3 * 4 * 27 + n3);
  // Transposed: each of the 4·25 input elements scattered through 6·9 weights; out 11x11.
  EXPECT_DOUBLE_EQ(flops(call("aten::convolution", {t({1, 4, 5, 5}), t({4, 6, 3, 3}), none(), ints({2, 2}), ints({0, 0}), ints({1, 1}), boolean(true),
                                                    ints({0, 0}), integer(1)})),
                   2.0 * (4 * 25) * 6 * 9);
}

// A video model's calls: conv3d as PyTorch 1.13 dispatches it on a CPU (oneDNN's
// mkldnn_convolution, or slow_conv3d / slow_conv_dilated3d), its backward, and the 3-D pools
// onto the op table's conv3d, maxpool3d, avgpool3d and adaptive_avgpool3d.
TEST(AtenCost, VideoConvolutionsAndPoolsAreTheThreeDimensionalOps) {
  const AtenArg x = t({2, 4, 6, 6, 6});
  const AtenArg w = t({8, 4, 3, 3, 3});
  const double n3 = 2.0 * 8 * 64;  // [2, 8, 4, 4, 4] outputs of 4·27 products each
  EXPECT_DOUBLE_EQ(flops(call("aten::slow_conv3d", {x, w, ints({3, 3, 3}), t({8}), ints({1, 1, 1}), ints({0, 0, 0})})), 2 * n3 * 108 + n3);
  EXPECT_DOUBLE_EQ(flops(call("aten::slow_conv3d_forward", {x, w, ints({3, 3, 3}), none(), ints({1}), ints({0})})), 2 * n3 * 108);
  // mkldnn_convolution: (self, weight, bias, padding, stride, dilation, groups); out (6+2-3)/2+1 = 3.
  EXPECT_DOUBLE_EQ(flops(call("aten::mkldnn_convolution", {x, w, none(), ints({1, 1, 1}), ints({2, 2, 2}), ints({1, 1, 1}), integer(1)})),
                   2.0 * (2 * 8 * 27) * 108);
  // Dilated (1, 2, 2): out [4, 2, 2].
  EXPECT_DOUBLE_EQ(flops(call("aten::slow_conv_dilated3d", {x, w, ints({3, 3, 3}), none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({1, 2, 2})})),
                   2.0 * (2 * 8 * 16) * 108);
  // Its minimum bytes: the input, the output and the weight once.
  const auto conv = aten_cost(call("aten::conv3d", {x, w, none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({1, 1, 1}), integer(1)}));
  ASSERT_TRUE(conv);
  EXPECT_DOUBLE_EQ(conv->bytes, 4.0 * (2 * 4 * 216 + 2 * 8 * 64 + 8 * 108));
  // convolution_backward of a 3-D convolution: input and weight gradients, 2·MACs each.
  EXPECT_DOUBLE_EQ(flops(call("aten::convolution_backward", {t({2, 8, 4, 4, 4}), x, w, none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({1, 1, 1}),
                                                             boolean(false), ints({0, 0, 0}), integer(1), ints({1, 1, 0})})),
                   4 * n3 * 108);

  const AtenArg v = t({2, 4, 8, 8, 8});
  const double pooled = 2.0 * 4 * 64;  // 2×2×2 windows: [2, 4, 4, 4, 4]
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool3d", {v, ints({2, 2, 2}), ints({}), ints({0, 0, 0}), ints({1, 1, 1}), boolean(false)})), 7 * pooled);
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool3d_with_indices_backward", {t({2, 4, 4, 4, 4}), v, ints({2, 2, 2}), ints({2, 2, 2}), ints({0, 0, 0}),
                                                                         ints({1, 1, 1}), boolean(false), t({2, 4, 4, 4, 4}, AtenElement::integer)})),
                   pooled);
  // Dilated (1, 2, 1): the height's window spans 3, (8 − 2 − 1) / 2 + 1 = 3 rows of windows.
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool3d", {v, ints({2, 2, 2}), ints({}), ints({0, 0, 0}), ints({1, 2, 1}), boolean(false)})),
                   7 * 2.0 * 4 * 4 * 3 * 4);
  EXPECT_DOUBLE_EQ(flops(call("aten::avg_pool3d", {v, ints({2, 2, 2}), ints({2, 2, 2}), ints({0, 0, 0}), boolean(false), boolean(true), none()})),
                   8 * pooled);
  EXPECT_DOUBLE_EQ(flops(call("aten::avg_pool3d_backward",
                              {t({2, 4, 4, 4, 4}), v, ints({2, 2, 2}), ints({2, 2, 2}), ints({0, 0, 0}), boolean(false), boolean(true), none()})),
                   9 * pooled);
  EXPECT_DOUBLE_EQ(flops(call("aten::adaptive_avg_pool3d", {v, ints({1, 1, 1})})), 2.0 * 4 * 512);
  EXPECT_DOUBLE_EQ(flops(call("aten::_adaptive_avg_pool3d_backward", {t({2, 4, 1, 1, 1}), v})), 2.0 * 4 * 513);
  // batch_norm over [N, C, D, H, W]: 2 FLOPs per element in evaluation.
  EXPECT_DOUBLE_EQ(flops(call("aten::batch_norm", {v, t({4}), t({4}), t({4}), t({4}), boolean(false), real(0.1), real(1e-5), boolean(false)})),
                   2.0 * 2 * 4 * 512);
}

// nn.ConvTranspose3d's calls onto conv_transpose3d: aten::conv_transpose3d (input, weight, bias,
// stride, padding, output_padding, groups, dilation), convolution / _convolution with
// transposed set, slow_conv_transpose3d (PyTorch 1.13's CPU kernel: kernel_size before the bias,
// one group) and convolution_backward. Every input element meets out/groups·kd·kh·kw weights.
TEST(AtenCost, TransposedVideoConvolutionsAreConvTranspose3d) {
  const AtenArg x = t({2, 4, 6, 6, 6});
  const AtenArg w = t({4, 8, 3, 3, 3});  // [C_in, C_out/groups, kd, kh, kw]
  const double n_in = 2.0 * 4 * 216;
  const double macs = n_in * 8 * 27;  // out [2, 8, 8, 8, 8]
  const double n_out = 2.0 * 8 * 512;
  EXPECT_DOUBLE_EQ(
      flops(call("aten::conv_transpose3d", {x, w, t({8}), ints({1, 1, 1}), ints({0, 0, 0}), ints({0, 0, 0}), integer(1), ints({1, 1, 1})})),
      2 * macs + n_out);
  EXPECT_DOUBLE_EQ(
      flops(call("aten::slow_conv_transpose3d", {x, w, ints({3, 3, 3}), none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({0, 0, 0}), ints({1, 1, 1})})),
      2 * macs);
  // Grouped, strided, padded, with output_padding: out channels 2·4, depth 5·2 - 2 + 2 + 1 + 1.
  const AtenArg grouped = t({4, 4, 3, 3, 3});
  const double grouped_macs = n_in * 4 * 27;
  EXPECT_DOUBLE_EQ(flops(call("aten::convolution",
                              {x, grouped, none(), ints({2, 2, 2}), ints({1, 1, 1}), ints({1, 1, 1}), boolean(true), ints({1, 1, 1}), integer(2)})),
                   2 * grouped_macs);
  EXPECT_DOUBLE_EQ(flops(call("aten::_convolution", {x, grouped, none(), ints({2, 2, 2}), ints({1, 1, 1}), ints({1, 1, 1}), boolean(true),
                                                     ints({1, 1, 1}), integer(2), boolean(false), boolean(false), boolean(true), boolean(true)})),
                   2 * grouped_macs);
  // convolution_backward of it: input and weight gradients, 2·MACs each, and the bias's n adds.
  EXPECT_DOUBLE_EQ(flops(call("aten::convolution_backward", {t({2, 8, 12, 12, 12}), x, grouped, ints({8}), ints({2, 2, 2}), ints({1, 1, 1}),
                                                             ints({1, 1, 1}), boolean(true), ints({1, 1, 1}), integer(2), ints({1, 1, 1})})),
                   4 * grouped_macs + 2.0 * 8 * 12 * 12 * 12);
  const auto up =
      aten_cost(call("aten::conv_transpose3d", {x, w, none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({0, 0, 0}), integer(1), ints({1, 1, 1})}));
  ASSERT_TRUE(up);
  EXPECT_DOUBLE_EQ(up->bytes, 4.0 * (n_in + n_out + 4 * 8 * 27)) << "input, output and weight once";
  EXPECT_FALSE(
      aten_cost(call("aten::conv_transpose3d", {x, w, none(), ints({1, 1, 1}), ints({0, 0, 0}), ints({1, 0, 0}), integer(1), ints({1, 1, 1})})))
      << "output_padding not smaller than the stride or the dilation: PyTorch refuses it";
}

TEST(AtenCost, ConvolutionBackwardCountsTheGradientsItsMaskAsksFor) {
  const AtenArg dy = t({8, 16, 32, 32});
  const AtenArg x = t({8, 3, 32, 32});
  const AtenArg w = t({16, 3, 5, 5});
  const auto backward = [&](std::initializer_list<std::int64_t> mask) {
    return flops(call("aten::convolution_backward",
                      {dy, x, w, ints({16}), ints({1, 1}), ints({2, 2}), ints({1, 1}), boolean(false), ints({0, 0}), integer(1), ints(mask)}));
  };
  EXPECT_DOUBLE_EQ(backward({1, 1, 1}), 2 * kConvMacs + 2 * kConvMacs + kConvOut);
  EXPECT_DOUBLE_EQ(backward({0, 1, 1}), 2 * kConvMacs + kConvOut) << "the first layer needs no input gradient";
  EXPECT_DOUBLE_EQ(backward({0, 1, 0}), 2 * kConvMacs);
}

// A forward op's backward by the op table, which its first backward function carries: the same
// figures as convolution_backward's for each output mask, and a linear's with its bias gradient.
TEST(AtenCost, AForwardOpsBackwardPartsAreTheOpTablesBackward) {
  const auto conv =
      aten_cost(call("aten::conv2d", {t({8, 3, 32, 32}), t({16, 3, 5, 5}), t({16}), ints({1, 1}), ints({2, 2}), ints({1, 1}), integer(1)}));
  ASSERT_TRUE(conv && conv->backward);
  const AtenCost::Backward& b = *conv->backward;
  EXPECT_DOUBLE_EQ(b.base_flops + b.weight_flops + b.input_flops, 2 * kConvMacs + 2 * kConvMacs + kConvOut);
  EXPECT_DOUBLE_EQ(b.base_flops + b.weight_flops, 2 * kConvMacs + kConvOut) << "without the input's gradient: the first layer";
  EXPECT_GT(b.bytes, 0.0);
  // linear [4x32] -> 10: dW = 2·4·32·10, the bias gradient 4·10 (a sum over the rows, which
  // PyTorch's aten::sum inside AddmmBackward0 computes), dX = 2·4·32·10.
  const auto linear = aten_cost(call("aten::linear", {t({4, 32}), t({10, 32}), t({10})}));
  ASSERT_TRUE(linear && linear->backward);
  EXPECT_DOUBLE_EQ(linear->backward->weight_flops, 2.0 * 4 * 32 * 10 + 4 * 10);
  EXPECT_DOUBLE_EQ(linear->backward->input_flops, 2.0 * 4 * 32 * 10);
  // A backward op's own cost has no backward.
  EXPECT_FALSE(aten_cost(call("aten::threshold_backward", {t({4, 8}), t({4, 8}), real(0.0)}))->backward.has_value());
}

TEST(AtenCost, MatrixProductsAreLinearLayersOverTheRowsOfTheLeftOperand) {
  const double linear = 2.0 * 8 * 32 * 10 + 8 * 10;
  EXPECT_DOUBLE_EQ(flops(call("aten::linear", {t({8, 32}), t({10, 32}), t({10})})), linear);
  EXPECT_DOUBLE_EQ(flops(call("aten::addmm", {t({10}), t({8, 32}), t({32, 10}), integer(1), integer(1)})), linear);
  EXPECT_DOUBLE_EQ(flops(call("aten::mm", {t({8, 32}), t({32, 10})})), 2.0 * 8 * 32 * 10);
  EXPECT_DOUBLE_EQ(flops(call("aten::bmm", {t({3, 4, 5}), t({3, 5, 6})})), 2.0 * 3 * 4 * 5 * 6);
  EXPECT_DOUBLE_EQ(flops(call("aten::matmul", {t({4, 5}), t({3, 5, 6})})), 2.0 * 3 * 4 * 5 * 6) << "broadcast over the right's batch";
  EXPECT_DOUBLE_EQ(flops(call("aten::baddbmm", {t({3, 4, 6}), t({3, 4, 5}), t({3, 5, 6})})), 2.0 * 3 * 4 * 5 * 6 + 3 * 4 * 6);
  EXPECT_FALSE(aten_cost(call("aten::mm", {t({8, 32}), t({31, 10})}))) << "inner sizes that disagree";
  // A batched right operand is read whole: every batch has its own [k, out] matrix.
  const auto bmm = aten_cost(call("aten::bmm", {t({3, 4, 5}), t({3, 5, 6})}));
  ASSERT_TRUE(bmm && bmm->backward);
  EXPECT_DOUBLE_EQ(bmm->bytes, 4.0 * (3 * 4 * 5 + 3 * 5 * 6 + 3 * 4 * 6));
  EXPECT_DOUBLE_EQ(bmm->backward->bytes, 4.0 * (3 * 4 * 6 + 2 * (3 * 4 * 5 + 3 * 5 * 6)));
  const auto mm = aten_cost(call("aten::mm", {t({8, 32}), t({32, 10})}));
  EXPECT_DOUBLE_EQ(mm->bytes, 4.0 * (8 * 32 + 32 * 10 + 8 * 10)) << "one weight: the linear row's bytes";
}

TEST(AtenCost, NormsSoftmaxActivationsAndPooling) {
  const double n = 8.0 * 16 * 4 * 4;
  const AtenArg x = t({8, 16, 4, 4});
  const AtenArg c = t({16});
  EXPECT_DOUBLE_EQ(flops(call("aten::batch_norm", {x, c, c, c, c, boolean(true), real(0.1), real(1e-5), boolean(true)})), 7 * n) << "training";
  EXPECT_DOUBLE_EQ(flops(call("aten::batch_norm", {x, c, c, c, c, boolean(false), real(0.1), real(1e-5), boolean(true)})), 2 * n) << "eval";
  EXPECT_DOUBLE_EQ(flops(call("aten::native_batch_norm_backward", {x, x, c, c, c, c, c, boolean(true), real(1e-5), ints({1, 1, 1})})), 10 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::layer_norm", {t({2, 3, 8}), ints({8}), t({8}), t({8}), real(1e-5), boolean(true)})), 7.0 * 48 + 5 * 6);
  EXPECT_DOUBLE_EQ(flops(call("aten::group_norm", {x, integer(4), c, c, real(1e-5), boolean(true)})), 7 * n + 5 * 8 * 4);
  EXPECT_DOUBLE_EQ(flops(call("aten::softmax", {t({4, 10}), integer(1), none()})), 5.0 * 40 + 4);
  EXPECT_DOUBLE_EQ(flops(call("aten::_log_softmax_backward_data", {t({4, 10}), t({4, 10}), integer(1), integer(6)})), 4.0 * 40);
  EXPECT_DOUBLE_EQ(flops(call("aten::relu", {x})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::relu_", {x})), n) << "in place costs the same";
  EXPECT_DOUBLE_EQ(flops(call("aten::threshold_backward", {x, x, integer(0)})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::sigmoid", {x})), 4 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::hardtanh", {x, real(0), real(6)})), 2 * n) << "relu6";
  EXPECT_FALSE(aten_cost(call("aten::hardtanh", {x, real(-1), real(1)}))) << "no formula for another clamp";
  EXPECT_DOUBLE_EQ(flops(call("aten::softplus", {x, integer(1), integer(20)})), 4 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::softplus_backward", {x, x, real(1), real(20)})), 5 * n);
  EXPECT_FALSE(aten_cost(call("aten::softplus", {x, real(2), real(20)}))) << "no formula for beta 2";
  EXPECT_DOUBLE_EQ(flops(call("aten::mish", {x})), 5 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::mish_", {x})), 5 * n) << "nn.Mish(inplace=True)";
  EXPECT_DOUBLE_EQ(flops(call("aten::mish_backward", {x, x})), 14 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::leaky_relu", {x, real(0.2)})), 2 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::leaky_relu_", {x, real(0.2)})), 2 * n) << "nn.LeakyReLU(inplace=True)";
  EXPECT_DOUBLE_EQ(flops(call("aten::leaky_relu_backward", {x, x, real(0.2), integer(0)})), 2 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::elu", {x, integer(1), integer(1), integer(1)})), 4 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::elu_backward", {x, real(0.5), integer(1), integer(1), integer(0), x})), 4 * n);
  EXPECT_FALSE(aten_cost(call("aten::elu", {x, real(1.6732632), real(1.0507010), integer(1)}))) << "selu's scale: no formula";
  EXPECT_DOUBLE_EQ(flops(call("aten::hardshrink", {x, real(0.3)})), 2 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::hardshrink_backward", {x, x, real(0.3)})), 2 * n);
  // max_pool2d 2x2 on 32x32: 16x16 outputs of 3 comparisons; its backward 1 per output.
  const double pooled = 8.0 * 16 * 16 * 16;
  const AtenArg big = t({8, 16, 32, 32});
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool2d", {big, ints({2, 2}), ints({}), ints({0, 0}), ints({1, 1}), boolean(false)})), 3 * pooled);
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool2d_with_indices_backward", {t({8, 16, 16, 16}), big, ints({2, 2}), ints({2, 2}), ints({0, 0}),
                                                                         ints({1, 1}), boolean(false), t({8, 16, 16, 16}, AtenElement::integer)})),
                   pooled);
  EXPECT_DOUBLE_EQ(flops(call("aten::adaptive_avg_pool2d", {x, ints({1, 1})})), n);
}

// An audio model's 1-D pools (nn.MaxPool1d(2), nn.AvgPool1d(4, 2, 1), nn.AdaptiveAvgPool1d(1))
// onto maxpool1d, avgpool1d and adaptive_avgpool1d over [N, C, L], and conv1d onto conv1d.
TEST(AtenCost, OneDimensionalPoolsAndConvolutionsAreTheOneDimensionalOps) {
  const AtenArg x = t({8, 16, 40});
  // 20 outputs per channel, each the larger of 2: one comparison.
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool1d", {x, ints({2}), ints({}), ints({0}), ints({1}), boolean(false)})), 8.0 * 16 * 20);
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool1d_with_indices", {x, ints({2}), ints({}), ints({0}), ints({1}), boolean(false)})), 8.0 * 16 * 20);
  // (40 + 2 − 4) / 2 + 1 = 20 outputs of 4 elements: 3 adds and a division each.
  EXPECT_DOUBLE_EQ(flops(call("aten::avg_pool1d", {x, ints({4}), ints({2}), ints({1}), boolean(false), boolean(true)})), 8.0 * 16 * 20 * 4);
  // The mean of all 40: 39 adds and a division per channel.
  EXPECT_DOUBLE_EQ(flops(call("aten::adaptive_avg_pool1d", {x, ints({1})})), 8.0 * 16 * 40);
  // Dilated 2: each window spans 3, (40 − 2 − 1) / 2 + 1 = 19 windows of 2 elements.
  EXPECT_DOUBLE_EQ(flops(call("aten::max_pool1d", {x, ints({2}), ints({}), ints({0}), ints({2}), boolean(false)})), 8.0 * 16 * 19);
}

// torch.optim's update arithmetic (AdamW's single-tensor path: mul_, add_, addcmul_, lerp_,
// sqrt, addcdiv_; its foreach path over parameter lists), a model's own sqrt/exp/clamp, and the
// random fills (dropout's bernoulli_, initialisation's uniform_): FLOPs per element by PyTorch's
// formula, bytes read and written; the fills 0 FLOPs.
TEST(AtenCost, OptimizerArithmeticRandomFillsAndPointwiseMath) {
  const AtenArg p = t({64, 32});  // 2,048 elements, 8 KiB
  const double n = 2048.0;
  const auto cost = [](const AtenCall& c) {
    const auto out = aten_cost(c);
    EXPECT_TRUE(out.has_value()) << c.op;
    return out.value_or(pytorch::AtenCost{-1.0, -1.0, std::nullopt, {}});
  };
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 − beta2): 3 per element; self, t1, t2 read, self written.
  const auto addcmul = cost(call("aten::addcmul_", {p, p, p, real(0.001)}));
  EXPECT_DOUBLE_EQ(addcmul.flops, 3 * n);
  EXPECT_DOUBLE_EQ(addcmul.bytes, 4 * 4 * n);
  EXPECT_FALSE(addcmul.backward.has_value());
  EXPECT_DOUBLE_EQ(flops(call("aten::addcdiv_", {p, p, p, real(-0.001)})), 3 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::lerp_", {p, p, real(0.1)})), 3 * n);
  const auto root = cost(call("aten::sqrt", {p}));
  EXPECT_DOUBLE_EQ(root.flops, n);
  EXPECT_DOUBLE_EQ(root.bytes, 2 * 4 * n) << "read, and a new tensor written";
  EXPECT_DOUBLE_EQ(flops(call("aten::exp", {p})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::clamp", {p, real(-1.0), none()})), n) << "one bound: one comparison";
  EXPECT_DOUBLE_EQ(flops(call("aten::clamp", {p, real(-1.0), real(1.0)})), 2 * n);
  // The foreach path: one list of 3 parameters, 2,048 elements in all.
  AtenArg list = p;
  list.kind = AtenArgKind::tensors;
  list.count = 3;
  EXPECT_DOUBLE_EQ(flops(call("aten::_foreach_addcdiv_", {list, list, list, real(-0.001)})), 3 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::_foreach_mul_", {list, real(0.9)})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::_foreach_add_", {list, list, real(0.1)})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::_foreach_sqrt", {list})), n);
  EXPECT_DOUBLE_EQ(cost(call("aten::_foreach_zero_", {list})).bytes, 4 * n) << "zero_grad's fill: written, 0 FLOPs";
  EXPECT_FALSE(aten_cost(call("aten::_foreach_norm", {list, real(2.0)}))) << "no formula: not counted, never 0";
  // dropout's mask: bernoulli_(self, p) fills self: written, not read, no FP arithmetic.
  const auto mask = cost(call("aten::bernoulli_", {p, real(0.9), none()}));
  EXPECT_DOUBLE_EQ(mask.flops, 0.0);
  EXPECT_DOUBLE_EQ(mask.bytes, 4 * n);
  EXPECT_DOUBLE_EQ(cost(call("aten::uniform_", {p, real(-0.1), real(0.1), none()})).bytes, 4 * n);
  EXPECT_DOUBLE_EQ(cost(call("aten::zeros_like", {p, none(), none(), none(), none(), none()})).bytes, 4 * n) << "written, not read";
  EXPECT_DOUBLE_EQ(cost(call("aten::zero_", {p})).flops, 0.0);
  const auto item = cost(call("aten::item", {t({})}));
  EXPECT_DOUBLE_EQ(item.flops, 0.0);
  EXPECT_DOUBLE_EQ(item.bytes, 4.0) << "one scalar read";
  EXPECT_FALSE(aten_cost(call("aten::sqrt", {t({4}, AtenElement::integer)}))) << "integer tensors: no FP formula";
  // clip_grad_norm_'s per-parameter 2-norms (torch.norm, linalg_vector_norm): square and sum
  // every element, one root: 2n; the ∞-norm compares: n; over a dim, the reduced output written.
  const auto norm = cost(call("aten::norm", {p, real(2.0)}));
  EXPECT_DOUBLE_EQ(norm.flops, 2 * n);
  EXPECT_DOUBLE_EQ(norm.bytes, 4 * (n + 1));
  EXPECT_DOUBLE_EQ(flops(call("aten::linalg_vector_norm", {p, real(std::numeric_limits<double>::infinity()), none(), boolean(false), none()})), n);
  EXPECT_DOUBLE_EQ(cost(call("aten::linalg_vector_norm", {p, real(2.0), ints({1}), boolean(false), none()})).bytes, 4 * (n + 64))
      << "64 row norms written";
}

// The losses: nll_loss (cross_entropy's second half, after log_softmax) and mse_loss, forward
// and backward, and cross_entropy_loss whole; binary_cross_entropy_with_logits is counted in the
// ops it runs.
TEST(AtenCost, NllAndMseLossesForwardAndBackward) {
  const AtenArg logp = t({32, 10});
  const AtenArg target = t({32}, AtenElement::integer);  // int64: 8 bytes each
  // 32 picked values summed (the mean's division folded in): 32 FLOPs; 32 read, 32 targets, one scalar out.
  const auto nll = aten_cost(call("aten::nll_loss_forward", {logp, target, none(), integer(1), integer(-100)}));
  ASSERT_TRUE(nll.has_value());
  EXPECT_DOUBLE_EQ(nll->flops, 32.0);
  EXPECT_DOUBLE_EQ(nll->bytes, 4.0 * 33 + 8.0 * 32);
  EXPECT_DOUBLE_EQ(flops(call("aten::nll_loss_forward", {logp, target, t({10}), integer(1), integer(-100)})), 64.0) << "weighted";
  // Its backward writes the whole [32, 10] gradient.
  const auto nll_back = aten_cost(call("aten::nll_loss_backward", {t({}), logp, target, none(), integer(1), integer(-100), t({})}));
  ASSERT_TRUE(nll_back.has_value());
  EXPECT_DOUBLE_EQ(nll_back->flops, 32.0);
  EXPECT_DOUBLE_EQ(nll_back->bytes, 4.0 * 320 + 8.0 * 32 + 4.0);
  // mse_loss over 320 elements: difference, square and sum; unreduced, no sum.
  EXPECT_DOUBLE_EQ(flops(call("aten::mse_loss", {logp, logp, integer(1)})), 3.0 * 320);
  EXPECT_DOUBLE_EQ(flops(call("aten::mse_loss", {logp, logp, integer(0)})), 2.0 * 320);
  EXPECT_DOUBLE_EQ(flops(call("aten::mse_loss_backward", {t({}), logp, logp, integer(1)})), 3.0 * 320);
  EXPECT_DOUBLE_EQ(flops(call("aten::neg", {logp})), 320.0) << "binary_cross_entropy_with_logits's own ops are counted";
  // The composites: nll_loss and nll_loss_nd as nll_loss_forward; cross_entropy_loss as
  // log_softmax over the 10 classes (5n + rows, as softmax) and the picks, and label smoothing's
  // mean of every log probability.
  EXPECT_DOUBLE_EQ(flops(call("aten::nll_loss_nd", {logp, target, none(), integer(1), integer(-100)})), 32.0);
  EXPECT_DOUBLE_EQ(flops(call("aten::nll_loss", {logp, target, none(), integer(1), integer(-100)})), 32.0);
  const double log_softmax = 5.0 * 320 + 32;
  EXPECT_DOUBLE_EQ(flops(call("aten::cross_entropy_loss", {logp, target, none(), integer(1), integer(-100), real(0.0)})), log_softmax + 32);
  EXPECT_DOUBLE_EQ(flops(call("aten::cross_entropy_loss", {logp, target, none(), integer(1), integer(-100), real(0.1)})), log_softmax + 32 + 320);
  EXPECT_FALSE(aten_cost(call("aten::cross_entropy_loss", {logp, logp, none(), integer(1), integer(-100), real(0.0)})))
      << "probabilities as the target: not mapped";
}

// torch.sum / torch.mean onto the op table's reduce: [2, 4, 6, 5] (n_in = 240).
TEST(AtenCost, SumAndMeanAreTheOpTablesReduce) {
  const AtenArg x = t({2, 4, 6, 5});
  const double n_in = 2.0 * 4 * 6 * 5;
  // x.mean(dim=(2, 3), keepdim=True): 8 outputs: 232 adds + 8 divisions; backward dy / 30 per input.
  const auto mean = aten_cost(call("aten::mean", {x, ints({2, 3}), boolean(true), none()}));
  ASSERT_TRUE(mean.has_value());
  EXPECT_DOUBLE_EQ(mean->flops, n_in);
  EXPECT_DOUBLE_EQ(mean->bytes, 4.0 * (n_in + 8));
  ASSERT_TRUE(mean->backward.has_value());
  EXPECT_DOUBLE_EQ(mean->backward->input_flops, n_in);
  // x.sum(1) (keepdim false; an int may arrive for int[1]): 60 outputs, 240 − 60 adds; backward a copy.
  const auto sum = aten_cost(call("aten::sum", {x, ints({1}), boolean(false), none()}));
  ASSERT_TRUE(sum.has_value());
  EXPECT_DOUBLE_EQ(sum->flops, n_in - 60);
  EXPECT_DOUBLE_EQ(sum->backward->input_flops, 0.0);
  EXPECT_DOUBLE_EQ(flops(call("aten::sum", {x, integer(-3), boolean(true), none()})), n_in - 60);
  // Over the batch axis too, and the whole tensor (no dim, an empty dim, or sum(self, dtype)): one output.
  EXPECT_DOUBLE_EQ(flops(call("aten::sum", {x, ints({0}), boolean(false), none()})), n_in - 120);
  EXPECT_DOUBLE_EQ(flops(call("aten::sum", {x, none()})), n_in - 1);
  EXPECT_DOUBLE_EQ(flops(call("aten::sum", {x, integer(6)})), n_in - 1) << "sum(self, dtype): the dtype is not a dim";
  EXPECT_DOUBLE_EQ(flops(call("aten::sum", {x, ints({}), boolean(false), none()})), n_in - 1);
  EXPECT_DOUBLE_EQ(flops(call("aten::mean", {x, none()})), n_in);
  EXPECT_DOUBLE_EQ(flops(call("aten::mean", {t({})})), 1.0) << "a 0-d tensor: one element, one division";
  EXPECT_FALSE(aten_cost(call("aten::sum", {x, ints({1, 1}), boolean(false), none()}))) << "a repeated dim: PyTorch refuses it";
  EXPECT_FALSE(aten_cost(call("aten::sum", {x, ints({4}), boolean(false), none()}))) << "out of range";
}

// F.interpolate's aten ops onto the op table's upsample: [2, 4, 6, 5] to 12x10 (n = 960
// outputs): nearest 0 FLOPs forward, n adds backward; bilinear 7n forward, 8n backward.
TEST(AtenCost, UpsamplingIsTheOpTablesUpsample) {
  const AtenArg x = t({2, 4, 6, 5});
  const AtenArg dy = t({2, 4, 12, 10});
  const double n = 2.0 * 4 * 12 * 10;
  const auto nearest = aten_cost(call("aten::upsample_nearest2d", {x, ints({12, 10}), none(), none()}));
  ASSERT_TRUE(nearest.has_value());
  EXPECT_DOUBLE_EQ(nearest->flops, 0.0);
  EXPECT_DOUBLE_EQ(nearest->bytes, 4.0 * (2 * 4 * 6 * 5 + n));  // its input read, its output written
  ASSERT_TRUE(nearest->backward.has_value());
  EXPECT_DOUBLE_EQ(nearest->backward->input_flops, n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_nearest2d.vec", {x, ints({12, 10}), none()})), 0.0);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_nearest2d_backward", {dy, ints({12, 10}), ints({2, 4, 6, 5}), none(), none()})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_nearest2d_backward.vec", {dy, none(), ints({2, 4, 6, 5}), none()})), n);

  const auto bilinear = aten_cost(call("aten::upsample_bilinear2d", {x, ints({12, 10}), boolean(false), none(), none()}));
  ASSERT_TRUE(bilinear.has_value());
  EXPECT_DOUBLE_EQ(bilinear->flops, 7 * n);
  EXPECT_DOUBLE_EQ(bilinear->backward->input_flops, 8 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_bilinear2d", {x, ints({12, 10}), boolean(true), real(2.0), real(2.0)})), 7 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_bilinear2d_backward", {dy, ints({12, 10}), ints({2, 4, 6, 5}), boolean(false), none(), none()})),
                   8 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_bilinear2d_backward.vec", {dy, none(), ints({2, 4, 6, 5}), boolean(true), none()})), 8 * n);
  // A .vec forward given only scale factors (F.interpolate(scale_factor=2)): floor(in × 2).
  AtenArg factors;
  factors.kind = pytorch::AtenArgKind::reals;
  factors.rank = 2;
  factors.reals[0] = factors.reals[1] = 2.0;
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_bilinear2d.vec", {x, none(), boolean(false), factors})), 7 * n);
  EXPECT_DOUBLE_EQ(flops(call("aten::upsample_nearest2d.vec", {x, none(), factors})), 0.0);
  AtenArg other = factors;
  other.reals[1] = 3.0;
  EXPECT_NE(aten_signature(call("aten::upsample_nearest2d.vec", {x, none(), factors})),
            aten_signature(call("aten::upsample_nearest2d.vec", {x, none(), other})))
      << "the scale factors are in the signature";
  // A float list not read (an unknown kind): not counted, never 0.
  EXPECT_FALSE(aten_cost(call("aten::upsample_nearest2d.vec", {x, none(), AtenArg{}})));
  EXPECT_FALSE(aten_cost(call("aten::upsample_bicubic2d", {x, ints({12, 10}), boolean(false), none(), none()}))) << "no bicubic in the op table";
}

// nn.LSTM(6, 8, num_layers=2, batch_first=True) and a bidirectional nn.GRU(8, 5) on [2, 7, ·]
// (tests/fixtures/onnx/tiny_rnn's layers): each layer the op table's lstm / gru node, at batch 2.
// Per sample (`hwprof summary` of the fixture): LSTM 7,952 + 8,848 FLOPs, GRU 7,070.
TEST(AtenCost, LstmAndGruAreOneNodePerLayer) {
  AtenArg params;
  params.kind = AtenArgKind::tensors;
  params.element = AtenElement::floating;
  params.element_bytes = 4;
  params.count = 8;
  params.rank = 2;
  params.dims[0] = 32;  // weight_ih_l0 [4·8, 6]
  params.dims[1] = 6;
  AtenArg hx = params;  // (h0, c0), [L·D, N, H] each: nn.LSTM passes zeros where the model gives none
  hx.count = 2;
  hx.dims[0] = 2;
  hx.dims[1] = 2;
  hx.dims[2] = 8;
  hx.rank = 3;
  hx.elements = 2 * (2 * 2 * 8);
  const auto lstm =
      aten_cost(call("aten::lstm", {t({2, 7, 6}), hx, params, boolean(true), integer(2), real(0.0), boolean(false), boolean(false), boolean(true)}));
  ASSERT_TRUE(lstm.has_value());
  EXPECT_DOUBLE_EQ(lstm->flops, 2.0 * (7952 + 8848));
  ASSERT_TRUE(lstm->backward.has_value());
  // Through time, per layer 2·T·G·H·H + 24·T·H: 2·(2·7·32·8 + 24·7·8) per sample.
  EXPECT_DOUBLE_EQ(lstm->backward->base_flops, 2.0 * 2 * (2 * 7 * 32 * 8 + 24 * 7 * 8));
  // Sequence-first ([T, N, C]) gives the same count.
  EXPECT_DOUBLE_EQ(
      flops(call("aten::lstm", {t({7, 2, 6}), hx, params, boolean(true), integer(2), real(0.0), boolean(false), boolean(false), boolean(false)})),
      lstm->flops);
  params.dims[0] = 15;  // weight_ih_l0 [3·5, 8]
  params.dims[1] = 8;
  EXPECT_DOUBLE_EQ(flops(call("aten::gru", {t({2, 7, 8}), t({2, 2, 5}), params, boolean(true), integer(1), real(0.0), boolean(false), boolean(true),
                                            boolean(true)})),
                   2.0 * 7070);
  EXPECT_FALSE(aten_cost(
      call("aten::gru", {t({2, 7, 9}), t({2, 2, 5}), params, boolean(true), integer(1), real(0.0), boolean(false), boolean(true), boolean(true)})))
      << "the weight does not fit the input: not counted";
  // hx: the states of every layer and direction, or not counted.
  EXPECT_FALSE(aten_cost(
      call("aten::gru", {t({2, 7, 8}), t({1, 2, 5}), params, boolean(true), integer(1), real(0.0), boolean(false), boolean(true), boolean(true)})))
      << "an h0 of one direction for a bidirectional layer";
  hx.elements = 2 * 2 * 8;
  params.dims[0] = 32;
  params.dims[1] = 6;
  EXPECT_FALSE(
      aten_cost(call("aten::lstm", {t({2, 7, 6}), hx, params, boolean(true), integer(2), real(0.0), boolean(false), boolean(false), boolean(true)})))
      << "h0 without c0";
}

TEST(AtenCost, ElementWiseOpsBroadcastAndIntegersAreNotCounted) {
  const double n = 8.0 * 16 * 4 * 4;
  EXPECT_DOUBLE_EQ(flops(call("aten::add", {t({8, 16, 4, 4}), t({16, 1, 1}), integer(1)})), n);
  EXPECT_DOUBLE_EQ(flops(call("aten::mul", {t({16, 1, 1}), t({8, 16, 4, 4})})), n) << "the larger operand is the input";
  EXPECT_DOUBLE_EQ(flops(call("aten::add_", {t({8, 16, 4, 4}), real(1.0), integer(1)})), n) << "a scalar";
  EXPECT_FALSE(aten_cost(call("aten::add_", {t({}, AtenElement::integer), integer(1), integer(1)}))) << "an integer counter: no FLOPs to count";
}

TEST(AtenCost, DropoutEmbeddingDataMovementAndOpsWithoutAFormula) {
  EXPECT_DOUBLE_EQ(flops(call("aten::dropout", {t({8, 10}), real(0.5), boolean(true)})), 80);
  EXPECT_DOUBLE_EQ(flops(call("aten::dropout", {t({8, 10}), real(0.5), boolean(false)})), 0);
  EXPECT_DOUBLE_EQ(flops(call("aten::embedding", {t({100, 16}), t({4, 7}, AtenElement::integer), integer(-1), boolean(false), boolean(false)})), 0);
  EXPECT_DOUBLE_EQ(flops(call("aten::view", {t({8, 16}), ints({128})})), 0);
  AtenArg list;
  list.kind = AtenArgKind::tensors;
  list.element = AtenElement::floating;
  list.element_bytes = 4;
  list.count = 2;
  list.elements = 30;
  const auto cat = aten_cost(call("aten::cat", {list, integer(0)}));
  ASSERT_TRUE(cat);
  EXPECT_DOUBLE_EQ(cat->flops, 0);
  EXPECT_DOUBLE_EQ(cat->bytes, 2 * 30 * 4.0) << "read once, written once";
  for (std::string_view op : {"aten::zeros", "aten::randn", "aten::nll_loss_forward", "aten::amax", "ConvolutionBackward0", "aten::no_such_op"}) {
    EXPECT_FALSE(aten_cost(call(op, {t({8, 10})}))) << op << ": not counted, never 0";
  }
}

TEST(AtenCost, TheSignatureTellsShapesAndScalarsApart) {
  const AtenCall a = call("aten::conv2d", {t({8, 3, 32, 32}), t({16, 3, 5, 5}), none(), ints({1, 1}), ints({2, 2}), ints({1, 1}), integer(1)});
  AtenCall b = a;
  EXPECT_EQ(aten_signature(a), aten_signature(b));
  b.args[3].dims[0] = 2;
  EXPECT_NE(aten_signature(a), aten_signature(b));
  AtenCall c = a;
  c.args[0].dims[0] = 4;
  EXPECT_NE(aten_signature(a), aten_signature(c));
  AtenCall d = a;
  d.op = "aten::convolution";
  EXPECT_NE(aten_signature(a), aten_signature(d));
}

// ---- who counts: every composite chain counts once ----

// Pushes a chain of nested calls, each with its cost (nullptr: no formula), and returns the
// FLOPs the frames that carry work add up to.
double chain_flops(std::initializer_list<std::optional<AtenCost>> chain) {
  OpStack stack;
  double total = 0;
  int region = 0;
  for (const auto& cost : chain) stack.push(region++, cost ? &*cost : nullptr, true, false);
  while (const OpFrame* f = stack.pop()) total += f->carries_work ? f->work.flops : 0.0;
  return total;
}

// The products PyTorch hands to the BLAS, each GEMM's M·N·K, and the threads OpenBLAS runs one
// on (interface/gemm.c: one thread up to 65536 × 4, then one per 65536 × 4, at most its pool).
TEST(AtenCost, ABlasProductsGemmAndItsOpenBlasThreads) {
  using pytorch::blas_gemm_mnk;
  using pytorch::openblas_gemm_threads;
  EXPECT_EQ(blas_gemm_mnk(call("aten::mm", {t({64, 256}), t({256, 1000})})), 64 * 256 * 1000);
  EXPECT_EQ(blas_gemm_mnk(call("aten::addmm", {t({1000}), t({64, 256}), t({256, 1000})})), 64 * 256 * 1000);
  EXPECT_EQ(blas_gemm_mnk(call("aten::bmm", {t({8, 64, 32}), t({8, 32, 64})})), 64 * 32 * 64) << "one GEMM of the batch";
  EXPECT_EQ(blas_gemm_mnk(call("aten::baddbmm", {t({8, 64, 64}), t({8, 64, 32}), t({8, 32, 64})})), 64 * 32 * 64);
  EXPECT_EQ(blas_gemm_mnk(call("aten::mm", {t({64, 256}), t({128, 1000})})), 0) << "inner sizes that differ";
  EXPECT_EQ(blas_gemm_mnk(call("aten::linear", {t({64, 256}), t({1000, 256})})), 0) << "its aten::addmm or aten::mm inside is the product";
  EXPECT_EQ(blas_gemm_mnk(call("aten::relu", {t({64, 256})})), 0);
  EXPECT_EQ(openblas_gemm_threads(64 * 64 * 64, 2), 1);
  EXPECT_EQ(openblas_gemm_threads(65536 * 4, 2), 1);
  EXPECT_EQ(openblas_gemm_threads(65536 * 4 * 2, 16), 2);
  EXPECT_EQ(openblas_gemm_threads(64 * 256 * 1000, 2), 2);
  EXPECT_EQ(openblas_gemm_threads(64 * 256 * 1000, 1), 1);
  EXPECT_EQ(openblas_gemm_threads(std::int64_t{1} << 40, 16), 16);
}

TEST(OpStack, ACompositeOpCountsOnceAtItsOutermostFormula) {
  const AtenArg x = t({8, 3, 32, 32});
  const AtenArg w = t({16, 3, 5, 5});
  const AtenArg b = t({16});
  const auto conv2d = aten_cost(call("aten::conv2d", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), integer(1)}));
  const auto convolution =
      aten_cost(call("aten::convolution", {x, w, b, ints({1, 1}), ints({2, 2}), ints({1, 1}), boolean(false), ints({0, 0}), integer(1)}));
  const auto mkldnn = aten_cost(call("aten::mkldnn_convolution", {x, w, b, ints({2, 2}), ints({1, 1}), ints({1, 1}), integer(1)}));
  ASSERT_TRUE(conv2d && convolution && mkldnn);
  EXPECT_DOUBLE_EQ(chain_flops({conv2d, convolution, convolution, mkldnn}), conv2d->flops) << "conv2d > convolution > _convolution > mkldnn";
  EXPECT_DOUBLE_EQ(chain_flops({std::nullopt, mkldnn}), mkldnn->flops) << "no formula above: the inner op counts";

  // linear > t + addmm: the two children are siblings under linear.
  const auto linear = aten_cost(call("aten::linear", {t({8, 32}), t({10, 32}), t({10})}));
  const auto addmm = aten_cost(call("aten::addmm", {t({10}), t({8, 32}), t({32, 10})}));
  const auto view = aten_cost(call("aten::t", {t({10, 32})}));
  ASSERT_TRUE(linear && addmm && view);
  OpStack stack;
  double total = 0;
  stack.push(0, &*linear, true, false);
  for (const auto* child : {&*view, &*addmm}) {
    const OpFrame* f = stack.push(1, child, true, false);
    ASSERT_NE(f, nullptr);
    EXPECT_FALSE(f->carries_work);
    EXPECT_FALSE(f->outermost) << "a nested op is timed only";
    EXPECT_EQ(f->root, 0);
    stack.pop();
  }
  const OpFrame* top = stack.pop();
  ASSERT_NE(top, nullptr);
  EXPECT_TRUE(top->carries_work);
  EXPECT_TRUE(top->outermost);
  total += top->work.flops;
  EXPECT_DOUBLE_EQ(total, linear->flops);
}

TEST(OpStack, BackwardWrappersAndUserScopes) {
  OpStack stack;
  const AtenCost conv{10, 1, std::nullopt, {}};
  stack.push(-1, nullptr, false, false);                      // autograd::engine::evaluate_function: a wrapper
  const OpFrame* node = stack.push(5, nullptr, false, true);  // ConvolutionBackward0
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->outermost) << "the outermost region, under a wrapper that is none";
  EXPECT_TRUE(node->backward);
  const OpFrame* inner = stack.push(6, &conv, true, false);  // aten::convolution_backward
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(inner->backward);
  EXPECT_TRUE(inner->carries_work);
  EXPECT_FALSE(inner->outermost);
  EXPECT_EQ(inner->root, 6) << "a backward function is nobody's root";
  stack.pop();
  stack.pop();
  stack.pop();
  EXPECT_EQ(stack.pop(), nullptr) << "an end without its start";
  // A backward function that carries its forward op's backward covers the ops inside it.
  const AtenCost carried{30, 3, std::nullopt, {}};
  stack.push(-1, nullptr, false, true);
  const OpFrame* function = stack.push(5, &carried, false, true);
  ASSERT_NE(function, nullptr);
  EXPECT_TRUE(function->carries_work);
  const OpFrame* covered = stack.push(6, &conv, true, false);
  ASSERT_NE(covered, nullptr);
  EXPECT_FALSE(covered->carries_work) << "convolution_backward's work is the function's";
  stack.pop();
  stack.pop();
  stack.pop();
  for (std::size_t i = 0; i < OpStack::kMaxDepth + 3; ++i) stack.push(1, nullptr, true, false);
  EXPECT_EQ(stack.depth(), OpStack::kMaxDepth);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(stack.pop(), nullptr) << "the calls past the depth balance";
  EXPECT_NE(stack.pop(), nullptr);
}

// A PyTorch row's roof bounds PyTorch's implementation: a matrix product under the GEMM ceiling
// (OpenBLAS's, which PyTorch calls); a convolution (oneDNN, which outruns OpenBLAS held to
// AVX2), an activation (PyTorch's vectorised erf and exp outrun hwprof's kernels) and plain
// arithmetic under the FMA peak.
TEST(AtenCost, EachCallCarriesItsOpsComputeRoof) {
  using Kind = ComputeRoof::Kind;
  const auto roof = [](const AtenCall& c) {
    const auto cost = aten_cost(c);
    EXPECT_TRUE(cost.has_value()) << c.op;
    return cost ? cost->roof : ComputeRoof{};
  };
  EXPECT_EQ(roof(call("aten::conv2d", {t({1, 3, 8, 8}), t({4, 3, 3, 3}), none(), ints({1, 1}), ints({1, 1}), ints({1, 1}), integer(1)})).kind,
            Kind::fma);
  EXPECT_EQ(roof(call("aten::mm", {t({4, 8}), t({8, 2})})).kind, Kind::gemm);
  EXPECT_EQ(roof(call("aten::convolution_backward", {t({1, 4, 8, 8}), t({1, 3, 8, 8}), t({4, 3, 3, 3}), none(), ints({1, 1}), ints({1, 1}),
                                                     ints({1, 1}), boolean(false), ints({0, 0}), integer(1), ints({1, 1, 0})}))
                .kind,
            Kind::fma);
  EXPECT_EQ(roof(call("aten::gelu", {t({4, 10})})).kind, Kind::fma) << "PyTorch's erf is not the calibrated kernel";
  EXPECT_EQ(roof(call("aten::tanh", {t({4, 10})})).kind, Kind::fma);
  EXPECT_EQ(roof(call("aten::softmax", {t({4, 10}), integer(1), none()})).kind, Kind::fma);
  EXPECT_EQ(roof(call("aten::gelu_backward", {t({4, 10}), t({4, 10})})).kind, Kind::fma) << "its backward evaluates no function";
  EXPECT_EQ(roof(call("aten::relu", {t({4, 10})})).kind, Kind::fma);
  EXPECT_EQ(roof(call("aten::add", {t({4, 10}), t({4, 10})})).kind, Kind::fma);
}

}  // namespace
}  // namespace hwprof::torch_test
