#include "graph/ops.hpp"

#include <algorithm>
#include <cstddef>

namespace hwprof::detail {
namespace {

using F = OpFamily;

// GELU with approximate = "tanh": 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), evaluated as
// x·σ(2u), one exp (the table's row is the exact, erf form).
constexpr UnaryTraits kGeluTanh{9, 18, false, "exp", false};

}  // namespace

const std::vector<OpInfo>& op_table() {
  // In OpKind's order (op_info indexes it). Element-wise FLOPs per element: PyTorch's formulas
  // counted as written (max/min and comparisons 1 each, exp/tanh/erf 1 each; docs/profile.md).
  static const std::vector<OpInfo> table = {
      {OpKind::linear, "linear", {"out_features", "bias", "tied_to"}, 1, 1, F::gemm, {}},
      {OpKind::conv2d, "conv2d", {"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}, 1, 1, F::gemm, {}},
      {OpKind::batchnorm2d, "batchnorm2d", {"eps"}, 1, 1, F::normalization, {}},
      {OpKind::layernorm, "layernorm", {"eps"}, 1, 1, F::normalization, {}},
      {OpKind::relu, "relu", {}, 1, 1, F::elementwise_unary, {1, 1, true, "", true}},
      {OpKind::relu6, "relu6", {}, 1, 1, F::elementwise_unary, {2, 2, false, "", true}},
      {OpKind::gelu, "gelu", {"approximate"}, 1, 1, F::elementwise_unary, {5, 11, false, "erf", false}},
      {OpKind::silu, "silu", {}, 1, 1, F::elementwise_unary, {5, 9, false, "exp", false}},
      {OpKind::sigmoid, "sigmoid", {}, 1, 1, F::elementwise_unary, {4, 3, true, "exp", false}},
      {OpKind::tanh, "tanh", {}, 1, 1, F::elementwise_unary, {1, 3, true, "tanh", false}},
      {OpKind::softmax, "softmax", {"axis"}, 1, 1, F::softmax, {}},
      {OpKind::maxpool2d, "maxpool2d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1, F::pooling, {}},
      {OpKind::avgpool2d, "avgpool2d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1, F::pooling, {}},
      {OpKind::adaptive_avgpool2d, "adaptive_avgpool2d", {"output"}, 1, 1, F::pooling, {}},
      {OpKind::flatten, "flatten", {}, 1, 1, F::data_movement, {}},
      {OpKind::dropout, "dropout", {"p"}, 1, 1, F::data_movement, {}},
      {OpKind::add, "add", {"operand", "trainable"}, 1, 2, F::elementwise_binary, {}},
      {OpKind::concat, "concat", {"axis"}, 2, -1, F::data_movement, {}},
      {OpKind::reshape, "reshape", {"shape"}, 1, 1, F::data_movement, {}},
      {OpKind::transpose, "transpose", {"perm"}, 1, 1, F::data_movement, {}},
      {OpKind::embedding, "embedding", {"num_embeddings", "embedding_dim"}, 1, 1, F::lookup, {}},
      {OpKind::pos_embedding, "pos_embedding", {"num_positions"}, 1, 1, F::lookup, {}},
      {OpKind::cls_token, "cls_token", {}, 1, 1, F::lookup, {}},
      {OpKind::select, "select", {"axis", "index"}, 1, 1, F::data_movement, {}},
      {OpKind::attention, "attention", {"heads", "causal", "bias"}, 1, 1, F::gemm, {}},
      // hardsigmoid: x/6 + 1/2 and the clamp to [0, 1]; hardswish: that and the product with x.
      {OpKind::hardswish, "hardswish", {}, 1, 1, F::elementwise_unary, {5, 4, false, "", false}},
      {OpKind::hardsigmoid, "hardsigmoid", {}, 1, 1, F::elementwise_unary, {4, 2, false, "", false}},
      {OpKind::mul, "mul", {"operand", "trainable"}, 1, 2, F::elementwise_binary, {}},
      {OpKind::sub, "sub", {"operand", "trainable"}, 1, 2, F::elementwise_binary, {}},
      {OpKind::div, "div", {"operand", "trainable"}, 1, 2, F::elementwise_binary, {}},
      {OpKind::conv_transpose2d,
       "conv_transpose2d",
       {"out_channels", "kernel", "stride", "padding", "output_padding", "dilation", "groups", "bias"},
       1,
       1,
       F::gemm,
       {}},
      {OpKind::upsample, "upsample", {"mode", "size", "scale", "align_corners"}, 1, 1, F::resampling, {}},
      {OpKind::reduce, "reduce", {"mode", "axes", "keepdims"}, 1, 1, F::reduction, {}},
      // softplus: PyTorch's x > 20 ? x : log1p(exp(x)) (beta 1, threshold 20): the comparison,
      // exp, the add and log. Backward x > 20 ? dy : dy·z/(z + 1), z = exp(x): 5.
      {OpKind::softplus, "softplus", {}, 1, 1, F::elementwise_unary, {4, 5, false, "exp", false}},
      // mish: x·tanh(log1p(exp(x))): exp, add, log, tanh and the product. Backward, PyTorch's
      // dy·(t + x·σ(x)·(1 − t²)), t = tanh(softplus(x)): σ 4, t 4, the rest 6. It evaluates exp,
      // log and tanh; tanh (itself an exp and a division here) is the dearest of the calibrated.
      {OpKind::mish, "mish", {}, 1, 1, F::elementwise_unary, {5, 14, false, "tanh", false}},
      // leaky_relu: x > 0 ? x : slope·x, the comparison and the product. Backward
      // dy·(x > 0 ? 1 : slope): the same two. It keeps its input: with a negative slope the
      // output's sign no longer tells which side x was on.
      {OpKind::leaky_relu, "leaky_relu", {"negative_slope"}, 1, 1, F::elementwise_unary, {2, 2, false, "", false}},
      // elu: x > 0 ? x : α·(eˣ − 1): the comparison, exp, the subtraction and the product.
      // Backward x > 0 ? dy : dy·α·eˣ: the comparison, exp and two products. Keeps its input
      // (with α < 0 the output's sign does not tell the side either); held to exp_sp.
      {OpKind::elu, "elu", {"alpha"}, 1, 1, F::elementwise_unary, {4, 4, false, "exp", false}},
      // matmul: the product of two activations, [..., M, K]·[..., K, N] with the axes before the
      // last two broadcast as NumPy does (torch.matmul of two tensors, ONNX MatMul).
      {OpKind::matmul, "matmul", {}, 2, 2, F::gemm, {}},
      // Data movement between arbitrary per-sample axes (docs/onnx.md, "How ops map"): copies,
      // no arithmetic but the sums of their input gradients.
      {OpKind::slice, "slice", {"axes", "starts", "ends", "steps"}, 1, 1, F::data_movement, {}},
      {OpKind::pad, "pad", {"pads", "mode", "value"}, 1, 1, F::data_movement, {}},
      {OpKind::gather, "gather", {"axis", "indices"}, 1, 1, F::data_movement, {}},
      {OpKind::expand, "expand", {"shape"}, 1, 1, F::data_movement, {}},
      {OpKind::tile, "tile", {"repeats"}, 1, 1, F::data_movement, {}},
      // where: each element copied from one of two tensors, as a constant condition says.
      {OpKind::where, "where", {"condition", "operand", "constant_first"}, 1, 2, F::data_movement, {}},
      // One layer of nn.LSTM / nn.GRU (batch_first), [T, C] in, [T, H·directions] out.
      // lstm and gru: x, then optionally the initial states h0 (and c0 for lstm), [D, H] each.
      {OpKind::lstm, "lstm", {"hidden_size", "bidirectional", "bias"}, 1, 3, F::recurrent, {}},
      {OpKind::gru, "gru", {"hidden_size", "bidirectional", "bias"}, 1, 2, F::recurrent, {}},
      // The 3-D ops: a spec's kernel, stride, padding, dilation and output are a [d, h, w] triple
      // or one integer for all three (docs/model-specs.md, "Model specs").
      {OpKind::conv3d, "conv3d", {"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}, 1, 1, F::gemm, {}},
      {OpKind::batchnorm3d, "batchnorm3d", {"eps"}, 1, 1, F::normalization, {}},
      {OpKind::maxpool3d, "maxpool3d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1, F::pooling, {}},
      {OpKind::avgpool3d, "avgpool3d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1, F::pooling, {}},
      {OpKind::adaptive_avgpool3d, "adaptive_avgpool3d", {"output"}, 1, 1, F::pooling, {}},
      {OpKind::conv_transpose3d,
       "conv_transpose3d",
       {"out_channels", "kernel", "stride", "padding", "output_padding", "dilation", "groups", "bias"},
       1,
       1,
       F::gemm,
       {}},
      // Swin's relative position bias: a learned table, like pos_embedding's, indexed by the
      // offset between two positions of a window (docs/model-specs.md, "Ops and attributes").
      {OpKind::rel_pos_bias, "rel_pos_bias", {"window"}, 1, 1, F::lookup, {}},
      // Only an ONNX import makes it (LoadOptions::keep_unsupported); a spec cannot name it.
      {OpKind::unsupported, "unsupported", {}, 0, -1, F::unmapped, {}},
  };
  return table;
}

const OpInfo& op_info(OpKind kind) {
  return op_table()[static_cast<std::size_t>(kind)];
}

std::optional<OpKind> find_op(std::string_view name) {
  const auto& table = op_table();
  auto it = std::find_if(table.begin(), table.end(), [&](const OpInfo& info) { return info.kind != OpKind::unsupported && info.name == name; });
  if (it == table.end()) return std::nullopt;
  return it->kind;
}

std::optional<UnaryTraits> unary_traits(const Node& node) {
  const OpInfo& info = op_info(node.op);
  if (info.family != OpFamily::elementwise_unary) return std::nullopt;
  if (node.op == OpKind::gelu && node.attrs.approximate == GeluApproximation::tanh) return kGeluTanh;
  return info.unary;
}

}  // namespace hwprof::detail

namespace hwprof {

std::string_view op_name(OpKind op) noexcept {
  return detail::op_table()[static_cast<std::size_t>(op)].name;
}

const std::vector<std::string_view>& op_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& info : detail::op_table()) {
      if (info.kind != OpKind::unsupported) out.push_back(info.name);
    }
    return out;
  }();
  return names;
}

}  // namespace hwprof
