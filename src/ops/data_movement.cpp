#include "ops/data_movement.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr std::string_view kDropout[] = {"p"};
constexpr std::string_view kAxis[] = {"axis"};
constexpr std::string_view kShape[] = {"shape"};
constexpr std::string_view kPerm[] = {"perm"};
constexpr std::string_view kSelect[] = {"axis", "index"};
constexpr std::string_view kSlice[] = {"axes", "starts", "ends", "steps"};
constexpr std::string_view kPad[] = {"pads", "mode", "value"};
constexpr std::string_view kGather[] = {"axis", "indices"};
constexpr std::string_view kTile[] = {"repeats"};
constexpr std::string_view kWhere[] = {"condition", "operand", "constant_first"};

// docs/model-specs.md, "Ops and attributes", says what each attribute means; docs/onnx.md,
// "How ops map", which ONNX nodes become which.
constexpr DataMovementDefinition kDataMovements[] = {
    {OpKind::flatten, {}, 1, 1, true, "torch.flatten(x, 1)"},
    {OpKind::dropout, kDropout, 1, 1, true, "nn.Dropout"},
    {OpKind::concat, kAxis, 2, -1, false, "torch.cat"},
    {OpKind::reshape, kShape, 1, 1, true, "Tensor.reshape"},
    {OpKind::transpose, kPerm, 1, 1, false, "Tensor.permute"},
    {OpKind::select, kSelect, 1, 1, false, "Tensor.select"},
    {OpKind::slice, kSlice, 1, 1, false, "x[start:end:step]"},
    {OpKind::pad, kPad, 1, 1, false, "F.pad"},
    {OpKind::gather, kGather, 1, 1, false, "torch.index_select"},
    {OpKind::expand, kShape, 1, 1, false, "Tensor.expand"},
    {OpKind::tile, kTile, 1, 1, false, "Tensor.repeat"},
    // Each element copied from one of two tensors, as a constant condition says.
    {OpKind::where, kWhere, 1, 2, false, "torch.where"},
};

}  // namespace

std::span<const DataMovementDefinition> data_movement_definitions() {
  return kDataMovements;
}

const DataMovementDefinition* data_movement_definition(OpKind kind) noexcept {
  return first_definition(kDataMovements, [&](const DataMovementDefinition& d) { return d.kind == kind; });
}

}  // namespace hwprof::ops
