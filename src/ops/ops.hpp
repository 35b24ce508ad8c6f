// The op table: for every op, the one place that says what it is — its name in a spec, the
// attributes it accepts, how many inputs it takes, its family, and for an element-wise op its
// cost per element and the function it evaluates. The stages that treat a whole family alike
// (shape inference, the cost model, the spec parser, the engine's in-place rule and layer
// choice, the roofline's explanations, the causes) read this table instead of listing ops, so
// adding an element-wise op is a row here, its name in HWPROF_ELEMENTWISE_UNARY_CASES below,
// and its kernel (docs/adding-an-op.md has the checklist, docs and tests included).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hwprof/graph.hpp"

namespace hwprof::detail {

enum class OpFamily {
  gemm,                // linear, conv2d, conv3d, conv_transpose2d, conv_transpose3d, attention: BLAS GEMMs
  elementwise_unary,   // y[i] = f(x[i]): one float input, the output of its shape, no parameters
  elementwise_binary,  // add, sub, mul, div (broadcasting, or one input and an operand)
  normalization,       // batchnorm2d, batchnorm3d, layernorm
  softmax,
  pooling,        // maxpool2d, avgpool2d, adaptive_avgpool2d and their 3-D forms
  resampling,     // upsample: each output interpolated from its source positions, no parameters
  reduction,      // reduce: sums (or means) over whole per-sample axes
  recurrent,      // lstm, gru: GEMMs over all steps for the input, one per step for the state
  data_movement,  // copies and views: no arithmetic
  lookup,         // embedding, pos_embedding, cls_token, rel_pos_bias: learned tables
  unmapped,       // unsupported: an imported node hwprof has no layer for
};

// An element-wise unary op per element (op_cost.cpp's convention, docs/profile.md): FLOPs
// forward and backward, what its backward reads, and the transcendental function its forward
// evaluates once (its roof is that function's calibrated rate, not the FMA peak).
struct UnaryTraits {
  int flops = 0;
  int grad_flops = 0;
  bool backward_reads_output = false;  // else its input
  std::string_view transcendental;     // "tanh", "exp", "erf"; empty for arithmetic only
  bool max_min = false;                // computed with max/min: integer blends may retire no FP op
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  std::vector<std::string_view> attributes;  // the op's own attributes, besides name/op/inputs
  int min_inputs;
  int max_inputs;  // -1: unbounded
  OpFamily family;
  UnaryTraits unary;  // elementwise_unary only
};

const std::vector<OpInfo>& op_table();
const OpInfo& op_info(OpKind kind);
std::optional<OpKind> find_op(std::string_view name);

// An element-wise unary node's traits (GELU's depend on its `approximate` attribute); nullopt
// for any other op.
std::optional<UnaryTraits> unary_traits(const Node& node);

// The element-wise unary ops as `case` labels. The switches over OpKind that handle them from
// the table (before the switch) name them through this, and list every other op themselves,
// without a default: a new op of another family is then a compiler warning in each switch
// that lacks it. Keep it in step with the table's elementwise_unary rows
// (OpTable.ElementwiseCasesAreTheTablesElementwiseRows checks it).
#define HWPROF_ELEMENTWISE_UNARY_CASES \
  case OpKind::relu:                   \
  case OpKind::relu6:                  \
  case OpKind::gelu:                   \
  case OpKind::silu:                   \
  case OpKind::sigmoid:                \
  case OpKind::tanh:                   \
  case OpKind::hardswish:              \
  case OpKind::hardsigmoid:            \
  case OpKind::softplus:               \
  case OpKind::mish:                   \
  case OpKind::leaky_relu:             \
  case OpKind::elu

// rel_pos_bias's table row of the offset between window positions i and j of a wh × ww window:
// Swin's relative_position_index (Liu et al., "Swin Transformer", ICCV 2021; torchvision's
// swin_transformer.py builds the same with coords_flatten[:, :, None] - coords_flatten[:, None, :],
// shifted by wh − 1 and ww − 1, the row offset times 2·ww − 1). Position p is row p / ww, column
// p % ww. The kernels and the ONNX importer (which recovers the table) both read it.
inline std::int64_t rel_pos_row(std::int64_t i, std::int64_t j, std::int64_t wh, std::int64_t ww) noexcept {
  return (i / ww - j / ww + wh - 1) * (2 * ww - 1) + (i % ww - j % ww + ww - 1);
}

// Keys every layer object may carry whatever its op.
inline constexpr std::string_view kCommonLayerKeys[] = {"name", "op", "inputs", "comment"};

}  // namespace hwprof::detail
