#include <string>

#include "graph/shape_inference.hpp"
#include "hwprof/graph.hpp"

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

Result<Graph> with_input_shape(const Graph& graph, const Shape& input_shape) {
  if (auto problem = detail::check_input_shape(input_shape)) {
    return Error{"--input-shape " + format_shape(input_shape) + ": " + *problem};
  }
  Graph copy = graph;
  copy.input.shape = input_shape;
  if (auto error = detail::infer_shapes(copy)) {
    return Error{"with input shape " + format_shape(input_shape) + ": " + error->message};
  }
  return copy;
}

std::string_view dtype_name(DType dtype) noexcept {
  return dtype == DType::f32 ? "float32" : "int32";
}

std::string format_shape(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::int64_t numel(const Shape& shape) noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

}  // namespace hwprof
