// Shape inference: every node's output shape and dtype from its inputs and attributes,
// with a message naming the layer, the attribute and what was expected when they disagree.
#pragma once

#include <optional>

#include "hwprof/graph.hpp"
#include "hwprof/result.hpp"

namespace hwprof::detail {

// Fills output_shape/output_dtype of every node, in order.
std::optional<Error> infer_shapes(Graph& graph);
std::optional<std::string> check_input_shape(const Shape& shape);

}  // namespace hwprof::detail
