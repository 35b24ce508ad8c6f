// upsample (F.interpolate of [C, H, W], 2-D) and its interpolation modes, each defined once, in
// upsample.cpp: its name in a spec, its FLOPs per output element forward and backward
// (docs/cost.md, "Counting convention"), whether it takes align_corners, and how an ONNX Resize
// and a PyTorch call name it. The spec parser, the cost model, the ONNX importer and the observer
// read the mode's definition; shape inference (`size`, or floor(in × scale)) and the engine's
// kernels (src/nn/upsample.cpp) are the op's. Adding a mode (a bicubic, say) is its enumerator
// in UpsampleMode (hwprof/engine/graph.hpp), one definition there, its kernels and its tests
// (docs/adding-an-op.md).
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct UpsampleModeDefinition {
  UpsampleMode mode;
  std::string_view name;       // in a spec, and PyTorch's F.interpolate mode
  int flops;                   // per output element, forward
  int grad_flops;              // per output element, the input's gradient
  bool align_corners;          // it takes align_corners (PyTorch's rule: the linear modes only)
  std::string_view onnx_mode;  // Resize's mode attribute
  std::string_view aten_name;  // the ATen op F.interpolate calls (its backward adds "_backward")
};

// Every mode, in UpsampleMode's order.
std::span<const UpsampleModeDefinition> upsample_modes();
const UpsampleModeDefinition& upsample_mode(UpsampleMode mode) noexcept;
// The mode a spec's name, a Resize's mode or an ATen op names; nullptr if none.
const UpsampleModeDefinition* upsample_mode_named(std::string_view name) noexcept;
const UpsampleModeDefinition* upsample_mode_for_onnx(std::string_view mode) noexcept;
const UpsampleModeDefinition* upsample_mode_for_aten(std::string_view name) noexcept;

}  // namespace hwprof::ops
