#include <string>
#include <string_view>

#include "graph/shape_inference.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/ops.hpp"

namespace hwprof {

int Graph::find(std::string_view node_name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == node_name) return static_cast<int>(i);
  }
  return -2;
}

std::string Graph::where(const Node& node, std::string_view attribute) const {
  std::string pointer = node.spec_pointer;
  if (!attribute.empty()) pointer += "/" + std::string(attribute);
  return source.locate(pointer) + ": layer '" + node.name + "' (" + std::string(op_name(node.op)) + ")";
}

int Graph::unsupported_layers() const {
  int n = 0;
  for (const Node& node : nodes) n += node.op == OpKind::unsupported ? 1 : 0;
  return n;
}

namespace {

// The input size that a node's weights are built for (PyTorch's in_features, in_channels,
// normalized_shape, embed_dim); `what` is empty for ops whose weights do not depend on it.
struct WeightWidth {
  std::string_view what;
  std::int64_t size = 0;
};

WeightWidth weight_width(const Graph& graph, const Node& node) {
  const Shape& in = graph.shape_of(node.inputs[0]);
  if (const ops::NormalizationDefinition* norm = ops::normalization_definition(node.op)) {
    const ops::NormWidth w = ops::normalized_width(*norm, in);
    return {w.what != nullptr ? std::string_view(w.what) : std::string_view(), w.size};
  }
  // A product with weights multiplies the input's last axis by them (ops/product.cpp).
  if (const ops::ProductDefinition* product = ops::product_definition(node.op)) {
    if (product->weight_width.empty()) return {};
    return {product->weight_width, in.back()};
  }
  switch (node.op) {
    HWPROF_CONVOLUTION_CASES
    return {"input channels", in[0]};
    HWPROF_RECURRENT_CASES  // weight_ih is [gates·H, C]
        return {"input features", in.back()};
    case OpKind::pos_embedding:
    case OpKind::cls_token:
      return {"model width D", in[1]};
    case OpKind::rel_pos_bias:  // its table has a column per head: [..., heads, N, N]
      return {"heads", in.size() >= 3 ? in[in.size() - 3] : 0};
      HWPROF_SOFTMAX_CASES
    case OpKind::upsample:
    case OpKind::reduce:
    case OpKind::embedding:
    case OpKind::unsupported:
      HWPROF_PRODUCT_CASES
      HWPROF_DATA_MOVEMENT_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_ELEMENTWISE_UNARY_CASES
      break;
  }
  return {};
}

}  // namespace

Result<Graph> with_input_shape(const Graph& graph, const Shape& input_shape) {
  if (auto problem = graph::check_input_shape(input_shape)) {
    return Error{"input shape " + format_shape(input_shape) + ": " + *problem};
  }
  if (input_shape != graph.input.shape) {
    for (const Node& node : graph.nodes) {
      if (node.op == OpKind::unsupported) {
        return Error{"with input shape " + format_shape(input_shape) + ": layer '" + node.name + "' is " + node.attrs.source_op +
                     ", which hwprof cannot map: its output shape is the file's and cannot be inferred for another input"};
      }
    }
  }
  Graph copy = graph;
  copy.input.shape = input_shape;
  if (auto error = graph::infer_shapes(copy)) {
    return Error{"with input shape " + format_shape(input_shape) + ": " + error->message};
  }
  // A new input must not resize the weights: that would be another model, not this one.
  for (std::size_t i = 0; i < copy.nodes.size(); ++i) {
    const WeightWidth spec = weight_width(graph, graph.nodes[i]);
    const WeightWidth now = weight_width(copy, copy.nodes[i]);
    if (!spec.what.empty() && spec.size != now.size) {
      return Error{"with input shape " + format_shape(input_shape) + ": " + copy.where(copy.nodes[i]) + ": its weights take " +
                   std::to_string(spec.size) + " " + std::string(spec.what) + " (from the spec's input shape " + format_shape(graph.input.shape) +
                   ") but this input gives it " + std::to_string(now.size) + "; a new input shape may change sizes that no weight depends on"};
    }
  }
  return copy;
}

}  // namespace hwprof
