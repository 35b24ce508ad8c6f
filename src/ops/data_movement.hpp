// The data-movement ops (copies and views between per-sample axes: no arithmetic but the sums of
// their input gradients), each defined once, in data_movement.cpp: its attributes, the inputs it
// takes and whether its output is a view of its input. The stages with nothing to do for any of
// them (weights, GEMMs, FLOP-count reasons, parameters) read the family instead of listing the
// ops; the stages whose rule differs per op (shape inference, the cost model's bytes, the spec
// parser, the engine's layer, the ONNX importer, the observer) keep a case each, which the
// compiler asks for when one is added (docs/adding-an-op.md). Adding one is a line in
// HWPROF_DATA_MOVEMENT_OPS (hwprof/engine/graph.hpp), one definition there, its case in those
// stages and its tests.
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct DataMovementDefinition {
  OpKind kind;
  std::span<const std::string_view> attributes;  // its own, besides name/op/inputs
  int min_inputs;
  int max_inputs;  // -1: unbounded
  // The output is the input's storage, read as another shape (flatten, reshape; dropout in
  // evaluation): no bytes move.
  bool view;
  std::string_view torch;  // what PyTorch calls it, for reading
};

// Every data-movement op, in OpKind's order.
std::span<const DataMovementDefinition> data_movement_definitions();
// The definition of `kind`; nullptr for an op of another family.
const DataMovementDefinition* data_movement_definition(OpKind kind) noexcept;

// The data-movement ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_DATA_MOVEMENT_CASE(name) case OpKind::name:
#define HWPROF_DATA_MOVEMENT_CASES HWPROF_DATA_MOVEMENT_OPS(HWPROF_DATA_MOVEMENT_CASE)

}  // namespace hwprof::ops
