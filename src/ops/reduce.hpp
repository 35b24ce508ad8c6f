// reduce (torch.sum / torch.mean over per-sample axes) and its reductions, each defined once, in
// reduce.cpp: its name in a spec, whether it divides each sum by its group's size, and how an
// ONNX node and a PyTorch call name it. The spec parser, the cost model, the engine's layer, the
// ONNX importer and the observer read the reduction's definition; shape inference (the axes
// kept or dropped) is the op's. Adding a reduction (a max, say) is its enumerator in ReduceMode
// (hwprof/engine/graph.hpp), one definition there, its kernel and its tests
// (docs/adding-an-op.md).
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct ReduceModeDefinition {
  ReduceMode mode;
  std::string_view name;  // in a spec
  // A mean: each group's sum divided by its size k (one more FLOP per output; backward, dy / k,
  // one division per input element). A sum's input gradient is dy broadcast (a copy, 0 FLOPs).
  bool divides;
  std::string_view onnx_type;
  std::string_view aten_name;  // its backward is dispatched as the ops it calls (expand, div)
};

// Every reduction, in ReduceMode's order.
std::span<const ReduceModeDefinition> reduce_modes();
const ReduceModeDefinition& reduce_mode(ReduceMode mode) noexcept;
// The reduction a spec's name, an ONNX operator or an ATen op names; nullptr if none.
const ReduceModeDefinition* reduce_mode_named(std::string_view name) noexcept;
const ReduceModeDefinition* reduce_mode_for_onnx(std::string_view type) noexcept;
const ReduceModeDefinition* reduce_mode_for_aten(std::string_view name) noexcept;

}  // namespace hwprof::ops
