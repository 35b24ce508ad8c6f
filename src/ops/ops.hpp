// The op table: for every op, its name in a spec, the attributes it accepts, how many inputs it
// takes and its family. The stages that treat a whole family alike (shape inference, the cost
// model, the spec parser, the engine's in-place rule and layer choice, the roofline's
// explanations, the causes) read this table instead of listing ops. An element-wise unary op's
// row comes from its definition (elementwise_unary.hpp), a pooling op's, a normalization's, an
// element-wise binary op's, a recurrent op's, a convolution's, a data-movement op's and a lookup's from
// theirs (pooling.hpp, normalization.hpp, elementwise_binary.hpp, recurrent.hpp,
// convolution.hpp, data_movement.hpp, lookup.hpp); the definition holds everything else about it
// (docs/adding-an-op.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/compute_roof.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/convolution.hpp"
#include "ops/data_movement.hpp"
#include "ops/elementwise_binary.hpp"
#include "ops/elementwise_unary.hpp"
#include "ops/lookup.hpp"
#include "ops/normalization.hpp"
#include "ops/pooling.hpp"
#include "ops/product.hpp"
#include "ops/recurrent.hpp"
#include "ops/reduce.hpp"
#include "ops/softmax.hpp"
#include "ops/upsample.hpp"

namespace hwprof::ops {

enum class OpFamily {
  gemm,                // linear, conv2d, conv3d, conv_transpose2d, conv_transpose3d, attention: BLAS GEMMs
  elementwise_unary,   // y[i] = f(x[i]): one float input, the output of its shape, no parameters
  elementwise_binary,  // y = a ∘ b, broadcasting, or one input and an operand (elementwise_binary.hpp)
  normalization,       // a batch norm's or a layer norm's statistics (normalization.hpp)
  softmax,
  pooling,        // the maximum or mean of windows (pooling.hpp)
  resampling,     // upsample: each output interpolated from its source positions, no parameters
  reduction,      // reduce: sums (or means) over whole per-sample axes
  recurrent,      // lstm, gru: GEMMs over all steps for the input, one per step for the state
  data_movement,  // copies and views: no arithmetic
  lookup,         // embedding, pos_embedding, cls_token, rel_pos_bias: learned tables
  unmapped,       // unsupported: an imported node hwprof has no layer for
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

// What bounds a node's arithmetic in one pass: the GEMM ceiling for the GEMM family in either
// pass; in the forward pass, the function an element-wise op evaluates once per element (its
// definition's; softmax's exp), else the FMA peak. The backward pass of an activation reuses
// what its forward kept and evaluates no function. The FLOPs per evaluation are left to the
// caller, who knows which FLOPs the roof is compared with (the cost model's per element).
ComputeRoof compute_roof_of(const Node& node, bool forward);

// The element-wise unary ops as `case` labels (each followed by its colon). The switches over
// OpKind that handle them from their definitions (before the switch) name them through this,
// and list every other op themselves, without a default: a new op of another family is then a
// compiler warning in each switch that lacks it. It is made from the public list of their
// names (HWPROF_ELEMENTWISE_UNARY_OPS in hwprof/engine/graph.hpp).
#define HWPROF_ELEMENTWISE_UNARY_CASE(name) case OpKind::name:
#define HWPROF_ELEMENTWISE_UNARY_CASES HWPROF_ELEMENTWISE_UNARY_OPS(HWPROF_ELEMENTWISE_UNARY_CASE)

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

}  // namespace hwprof::ops
