#include "ops/ops.hpp"

#include <algorithm>
#include <cstddef>
#include "common/stages.hpp"

namespace hwprof::ops {
namespace {

using F = OpFamily;

// The name in a spec of an op whose family defines it: its C++ name (hwprof/engine/graph.hpp's
// lists).
std::string_view defined_name(OpKind kind) {
#define HWPROF_DEFINED_NAME(name) \
  if (kind == OpKind::name) return #name;
  HWPROF_ELEMENTWISE_UNARY_OPS(HWPROF_DEFINED_NAME)
  HWPROF_POOLING_OPS(HWPROF_DEFINED_NAME)
  HWPROF_NORMALIZATION_OPS(HWPROF_DEFINED_NAME)
  HWPROF_ELEMENTWISE_BINARY_OPS(HWPROF_DEFINED_NAME)
  HWPROF_RECURRENT_OPS(HWPROF_DEFINED_NAME)
  HWPROF_CONVOLUTION_OPS(HWPROF_DEFINED_NAME)
  HWPROF_DATA_MOVEMENT_OPS(HWPROF_DEFINED_NAME)
  HWPROF_LOOKUP_OPS(HWPROF_DEFINED_NAME)
  HWPROF_PRODUCT_OPS(HWPROF_DEFINED_NAME)
  HWPROF_SOFTMAX_OPS(HWPROF_DEFINED_NAME)
#undef HWPROF_DEFINED_NAME
  return {};
}

// The rows of the ops that are their own family, in OpKind's order (the families' rows their
// definitions make).
std::vector<OpInfo> other_rows() {
  return {
      {OpKind::upsample, "upsample", {"mode", "size", "scale", "align_corners"}, 1, 1, F::resampling, {}},
      {OpKind::reduce, "reduce", {"mode", "axes", "keepdims"}, 1, 1, F::reduction, {}},
      // Only an ONNX import makes it (LoadOptions::keep_unsupported); a spec cannot name it.
      {OpKind::unsupported, "unsupported", {}, 0, -1, F::unmapped, {}},
  };
}

}  // namespace

const std::vector<OpInfo>& op_table() {
  // In OpKind's order: op_info indexes it.
  static const std::vector<OpInfo> table = [] {
    std::vector<OpInfo> rows = other_rows();
    for (const UnaryDefinition& d : unary_definitions()) {
      OpInfo row{d.kind, defined_name(d.kind), {}, 1, 1, F::elementwise_unary, d.form.traits};
      if (!d.parameter.name.empty()) row.attributes.push_back(d.parameter.name);
      if (d.tanh_form) row.attributes.push_back("approximate");
      rows.push_back(std::move(row));
    }
    // A window's attributes (per axis: one integer, or a pair in 2-D and a triple in 3-D), or an
    // adaptive pool's output size.
    for (const PoolingDefinition& d : pooling_definitions()) {
      OpInfo row{d.kind, defined_name(d.kind), {}, 1, 1, F::pooling, {}};
      if (d.reduction == PoolReduction::adaptive_average) {
        row.attributes = {"output"};
      } else {
        row.attributes = {"kernel", "stride", "padding", "ceil_mode"};
        if (d.reduction == PoolReduction::max) row.attributes.insert(row.attributes.begin() + 3, "dilation");
      }
      rows.push_back(std::move(row));
    }
    for (const NormalizationDefinition& d : normalization_definitions())
      rows.push_back({d.kind, defined_name(d.kind), {"eps"}, 1, 1, F::normalization, {}});
    // Two inputs, or one and an operand tensor (a constant, or learned with "trainable").
    for (const BinaryDefinition& d : binary_definitions())
      rows.push_back({d.kind, defined_name(d.kind), {"operand", "trainable"}, 1, 2, F::elementwise_binary, {}});
    // A window per axis (one integer, or a pair in 2-D and a triple in 3-D: docs/model-specs.md,
    // "Ops and attributes"); a transposed one's output_padding.
    for (const ConvolutionDefinition& d : convolution_definitions()) {
      OpInfo row{d.kind, defined_name(d.kind), {"out_channels", "kernel", "stride", "padding"}, 1, 1, F::gemm, {}};
      if (d.transposed) row.attributes.emplace_back("output_padding");
      row.attributes.insert(row.attributes.end(), {"dilation", "groups", "bias"});
      rows.push_back(std::move(row));
    }
    for (const DataMovementDefinition& d : data_movement_definitions()) {
      rows.push_back({d.kind, defined_name(d.kind), {d.attributes.begin(), d.attributes.end()}, d.min_inputs, d.max_inputs, F::data_movement, {}});
    }
    // The input times its weights, or two activations: the GEMM family, held to its ceiling.
    for (const ProductDefinition& d : product_definitions())
      rows.push_back({d.kind, defined_name(d.kind), {d.attributes.begin(), d.attributes.end()}, d.inputs, d.inputs, F::gemm, {}});
    // One axis to normalise along.
    for (const SoftmaxDefinition& d : softmax_definitions()) rows.push_back({d.kind, defined_name(d.kind), {"axis"}, 1, 1, F::softmax, {}});
    for (const LookupDefinition& d : lookup_definitions())
      rows.push_back({d.kind, defined_name(d.kind), {d.attributes.begin(), d.attributes.end()}, 1, 1, F::lookup, {}});
    // x, then optionally the initial states its definition names ([D, H] each).
    for (const RecurrentDefinition& d : recurrent_definitions()) {
      const int inputs = 1 + static_cast<int>(d.states.size());
      rows.push_back({d.kind, defined_name(d.kind), {"hidden_size", "bidirectional", "bias"}, 1, inputs, F::recurrent, {}});
    }
    std::sort(rows.begin(), rows.end(), [](const OpInfo& a, const OpInfo& b) { return a.kind < b.kind; });
    return rows;
  }();
  return table;
}

const OpInfo& op_info(OpKind kind) {
  return op_table()[static_cast<std::size_t>(kind)];
}

std::optional<OpKind> find_op(std::string_view name) {
  const auto& table = op_table();
  auto it = std::find_if(table.begin(), table.end(), [&](const OpInfo& info) { return info.kind != OpKind::unsupported && info.name == name; });
  if (it == table.end()) return std::nullopt;
  return it->kind;
}

std::optional<UnaryTraits> unary_traits(const Node& node) {
  const UnaryForm* form = unary_form(node);
  if (form == nullptr) return std::nullopt;
  return form->traits;
}

ComputeRoof compute_roof_of(const Node& node, bool forward) {
  ComputeRoof roof;
  if (op_info(node.op).family == OpFamily::gemm) {
    roof.kind = ComputeRoof::Kind::gemm;
    return roof;
  }
  if (!forward) return roof;
  if (const SoftmaxDefinition* softmax = softmax_definition(node.op)) {
    roof.function = softmax->function;
  } else if (const UnaryForm* form = unary_form(node); form != nullptr) {
    roof.function = form->traits.transcendental;
  }
  if (!roof.function.empty()) roof.kind = ComputeRoof::Kind::transcendental;
  return roof;
}

}  // namespace hwprof::ops

namespace hwprof {

std::string_view op_name(OpKind op) noexcept {
  return ops::op_table()[static_cast<std::size_t>(op)].name;
}

const std::vector<std::string_view>& op_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& info : ops::op_table()) {
      if (info.kind != OpKind::unsupported) out.push_back(info.name);
    }
    return out;
  }();
  return names;
}

}  // namespace hwprof
