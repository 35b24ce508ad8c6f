// Shape inference: every node's output shape and dtype from its inputs and attributes,
// with a message naming the layer, the attribute and what was expected when they disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/result.hpp"

namespace hwprof::graph {

// Fills output_shape/output_dtype of every node, in order.
std::optional<Error> infer_shapes(Graph& graph);
std::optional<std::string> check_input_shape(const Shape& shape);

// One per-sample axis of a slice resolved against the input's size (ONNX Slice's rules, which
// are Python's: negative bounds count from the end, bounds past the ends are clamped): the
// first position kept, the step, and how many positions are kept.
struct SliceRange {
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::int64_t count = 0;
};
// Every per-sample axis of `in` (an axis the slice does not name keeps all its positions).
// For a node whose shape inference succeeded.
std::vector<SliceRange> slice_ranges(const Shape& in, const Attributes& a);

}  // namespace hwprof::graph
