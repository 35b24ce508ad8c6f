#include "ops/reduce.hpp"

#include <cstddef>

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr ReduceModeDefinition kReduceModes[] = {
    {ReduceMode::sum, "sum", false, "ReduceSum", "sum"},
    {ReduceMode::mean, "mean", true, "ReduceMean", "mean"},
};

}  // namespace

std::span<const ReduceModeDefinition> reduce_modes() {
  return kReduceModes;
}

const ReduceModeDefinition& reduce_mode(ReduceMode mode) noexcept {
  return kReduceModes[static_cast<std::size_t>(mode)];
}

const ReduceModeDefinition* reduce_mode_named(std::string_view name) noexcept {
  return first_definition(kReduceModes, [&](const ReduceModeDefinition& d) { return d.name == name; });
}

const ReduceModeDefinition* reduce_mode_for_onnx(std::string_view type) noexcept {
  return first_definition(kReduceModes, [&](const ReduceModeDefinition& d) { return d.onnx_type == type; });
}

const ReduceModeDefinition* reduce_mode_for_aten(std::string_view name) noexcept {
  return first_definition(kReduceModes, [&](const ReduceModeDefinition& d) { return d.aten_name == name; });
}

}  // namespace hwprof::ops
