#include "ops/upsample.hpp"

#include <cstddef>

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

// docs/cost.md, "Counting convention". nearest: a gather (0 FLOPs); its backward adds each dy
// into its source (1 per output). bilinear: each output the weighted sum of its four
// neighbours, 4 multiplies and 3 adds; the weights are products of a row's and a column's, which
// depend on the row or the column alone and are not counted (O(oh + ow) per call). Backward: dy
// times each of the four weights, added into four sources (8 per output).
constexpr UpsampleModeDefinition kUpsampleModes[] = {
    {UpsampleMode::nearest, "nearest", 0, 1, false, "nearest", "upsample_nearest2d"},
    {UpsampleMode::bilinear, "bilinear", 7, 8, true, "linear", "upsample_bilinear2d"},
};

}  // namespace

std::span<const UpsampleModeDefinition> upsample_modes() {
  return kUpsampleModes;
}

const UpsampleModeDefinition& upsample_mode(UpsampleMode mode) noexcept {
  return kUpsampleModes[static_cast<std::size_t>(mode)];
}

const UpsampleModeDefinition* upsample_mode_named(std::string_view name) noexcept {
  return first_definition(kUpsampleModes, [&](const UpsampleModeDefinition& d) { return d.name == name; });
}

const UpsampleModeDefinition* upsample_mode_for_onnx(std::string_view mode) noexcept {
  return first_definition(kUpsampleModes, [&](const UpsampleModeDefinition& d) { return d.onnx_mode == mode; });
}

const UpsampleModeDefinition* upsample_mode_for_aten(std::string_view name) noexcept {
  return first_definition(kUpsampleModes, [&](const UpsampleModeDefinition& d) { return d.aten_name == name; });
}

}  // namespace hwprof::ops
