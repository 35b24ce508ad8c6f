#include "graph/ops.hpp"

#include <algorithm>
#include <cstddef>

namespace hwprof::detail {

const std::vector<OpInfo>& op_table() {
  static const std::vector<OpInfo> table = {
      {OpKind::linear, "linear", {"out_features", "bias", "tied_to"}, 1, 1},
      {OpKind::conv2d, "conv2d", {"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}, 1, 1},
      {OpKind::batchnorm2d, "batchnorm2d", {"eps"}, 1, 1},
      {OpKind::layernorm, "layernorm", {"eps"}, 1, 1},
      {OpKind::relu, "relu", {}, 1, 1},
      {OpKind::relu6, "relu6", {}, 1, 1},
      {OpKind::gelu, "gelu", {"approximate"}, 1, 1},
      {OpKind::silu, "silu", {}, 1, 1},
      {OpKind::sigmoid, "sigmoid", {}, 1, 1},
      {OpKind::tanh, "tanh", {}, 1, 1},
      {OpKind::softmax, "softmax", {"axis"}, 1, 1},
      {OpKind::maxpool2d, "maxpool2d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1},
      {OpKind::avgpool2d, "avgpool2d", {"kernel", "stride", "padding", "ceil_mode"}, 1, 1},
      {OpKind::adaptive_avgpool2d, "adaptive_avgpool2d", {"output"}, 1, 1},
      {OpKind::flatten, "flatten", {}, 1, 1},
      {OpKind::dropout, "dropout", {"p"}, 1, 1},
      {OpKind::add, "add", {"operand", "trainable"}, 1, 2},
      {OpKind::concat, "concat", {"axis"}, 2, -1},
      {OpKind::reshape, "reshape", {"shape"}, 1, 1},
      {OpKind::transpose, "transpose", {"perm"}, 1, 1},
      {OpKind::embedding, "embedding", {"num_embeddings", "embedding_dim"}, 1, 1},
      {OpKind::pos_embedding, "pos_embedding", {"num_positions"}, 1, 1},
      {OpKind::cls_token, "cls_token", {}, 1, 1},
      {OpKind::select, "select", {"axis", "index"}, 1, 1},
      {OpKind::attention, "attention", {"heads", "causal", "bias"}, 1, 1},
      {OpKind::hardswish, "hardswish", {}, 1, 1},
      {OpKind::hardsigmoid, "hardsigmoid", {}, 1, 1},
      {OpKind::mul, "mul", {"operand", "trainable"}, 1, 2},
      {OpKind::sub, "sub", {"operand", "trainable"}, 1, 2},
      {OpKind::div, "div", {"operand", "trainable"}, 1, 2},
      {OpKind::conv_transpose2d, "conv_transpose2d",
       {"out_channels", "kernel", "stride", "padding", "output_padding", "dilation", "groups", "bias"}, 1, 1},
      // Only an ONNX import makes it (LoadOptions::keep_unsupported); a spec cannot name it.
      {OpKind::unsupported, "unsupported", {}, 0, -1},
  };
  return table;
}

const OpInfo& op_info(OpKind kind) {
  return op_table()[static_cast<std::size_t>(kind)];
}

std::optional<OpKind> find_op(std::string_view name) {
  const auto& table = op_table();
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const OpInfo& info) { return info.kind != OpKind::unsupported && info.name == name; });
  if (it == table.end()) return std::nullopt;
  return it->kind;
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
