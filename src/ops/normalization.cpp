#include "ops/normalization.hpp"

#include "ops/definitions.hpp"
#include "ops/layout.hpp"

namespace hwprof::ops {
namespace {

using S = NormStatistics;

constexpr NormalizationDefinition kNormalizations[] = {
    {OpKind::batchnorm1d, S::per_channel, 1, true, "nn.BatchNorm1d"},
    {OpKind::batchnorm2d, S::per_channel, 2, false, "nn.BatchNorm2d"},
    {OpKind::batchnorm3d, S::per_channel, 3, false, "nn.BatchNorm3d"},
    {OpKind::layernorm, S::per_row, 0, false, "nn.LayerNorm"},
};

}  // namespace

std::span<const NormalizationDefinition> normalization_definitions() {
  return kNormalizations;
}

const NormalizationDefinition* normalization_definition(OpKind kind) noexcept {
  return first_definition(kNormalizations, [&](const NormalizationDefinition& d) { return d.kind == kind; });
}

const NormalizationDefinition* normalization_for(NormStatistics statistics, int spatial_axes) noexcept {
  return first_definition(kNormalizations, [&](const NormalizationDefinition& d) {
    return d.statistics == statistics && (d.spatial_axes == spatial_axes || (d.channels_alone && spatial_axes == 0));
  });
}

NormWidth normalized_width(const NormalizationDefinition& def, const Shape& in) noexcept {
  if (in.empty()) return {nullptr, 0};
  if (def.statistics == S::per_channel) return {"input channels", in[0]};
  return {"normalized features", in.back()};
}

std::string norm_input_problem(const NormalizationDefinition& def, const Shape& in, DType dtype) {
  if (dtype != DType::f32) return "expects float32 input, got int32 token ids; add an embedding first";
  if (def.statistics == S::per_channel && in.size() != static_cast<std::size_t>(def.spatial_axes) + 1 && !(def.channels_alone && in.size() == 1)) {
    const std::string alone = def.channels_alone ? std::string(channels_layout(0)) + " or " : "";
    return "expects a " + alone + std::string(channels_layout(def.spatial_axes)) + " input, got " + format_shape(in);
  }
  return {};
}

}  // namespace hwprof::ops
