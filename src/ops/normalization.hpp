// The normalization ops (each element minus its group's mean, over its group's standard
// deviation, then an affine map learned per channel or per feature), each defined once, in
// normalization.cpp: whose statistics it takes (each channel's over the batch and the spatial
// axes, as a batch norm; each row's over the last axis, as a layer norm) and over how many
// spatial axes. Every stage reads the definition instead of listing the ops: the op table and
// the spec parser (eps), shape inference (the input it takes), the cost model and the
// parameters (what the learned vectors are as long as, the running statistics), the engine
// (the kernels of its statistics), the FLOP-count reasons, the ONNX importer
// (BatchNormalization by the input's axes, LayerNormalization) and the PyTorch observer.
// Adding one is a line in HWPROF_NORMALIZATION_OPS (hwprof/engine/graph.hpp), one definition
// there and its tests (docs/adding-an-op.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

// Whose mean and variance an element is normalized by.
enum class NormStatistics {
  per_channel,  // a batch norm: each channel's (axis 0 of [C, spatial...]) over the batch and the spatial axes; running statistics kept
  per_row,      // a layer norm: each row's over the last axis (nn.LayerNorm(D))
};

struct NormalizationDefinition {
  OpKind kind;
  NormStatistics statistics;
  int spatial_axes;  // per_channel: the input is [C, spatial...] with this many; per_row: 0 (any rank)
  // per_channel: it also takes [C] alone (nn.BatchNorm1d over [N, C], an MLP's batch norm).
  bool channels_alone;
  std::string_view module;  // PyTorch's module, for reading
};

// Every normalization op, in OpKind's order.
std::span<const NormalizationDefinition> normalization_definitions();
// The definition of `kind`; nullptr for an op of another family.
const NormalizationDefinition* normalization_definition(OpKind kind) noexcept;
// The op that takes these statistics over this many spatial axes (0 for per_row, and for a
// per_channel op that takes [C] alone); nullptr where none is defined.
const NormalizationDefinition* normalization_for(NormStatistics statistics, int spatial_axes) noexcept;

// What the learned scale and shift (and a batch norm's running statistics) are as long as:
// the channels or the normalized features of the per-sample input `in`, and its name.
struct NormWidth {
  const char* what;
  std::int64_t size;
};
NormWidth normalized_width(const NormalizationDefinition& def, const Shape& in) noexcept;

// What is wrong with a normalization's per-sample input, or "" (the output has its shape).
std::string norm_input_problem(const NormalizationDefinition& def, const Shape& in, DType dtype);

// The normalization ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_NORMALIZATION_CASE(name) case OpKind::name:
#define HWPROF_NORMALIZATION_CASES HWPROF_NORMALIZATION_OPS(HWPROF_NORMALIZATION_CASE)

}  // namespace hwprof::ops
