// The lookup ops (a learned table read by position or by token: nn.Embedding, a ViT's position
// embedding and class token, Swin's relative position bias), each defined once, in lookup.cpp:
// its attributes, what its table is indexed by, and whether it adds what it reads to its input
// or only copies it. The stages with nothing to do for any of them (the causes' BLAS and GEMM)
// and the FLOP-count reasons read the family instead of listing the ops; the stages whose rule
// differs per op (shape inference, the spec parser, the cost model, the table's shape and
// initialisation, the engine's layer, the ONNX importer, the observer) keep a case each, which
// the compiler asks for when one is added (docs/adding-an-op.md). Adding one is a line in
// HWPROF_LOOKUP_OPS (hwprof/engine/graph.hpp), one definition there, its case in those stages
// and its tests.
#pragma once

#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

struct LookupDefinition {
  OpKind kind;
  std::span<const std::string_view> attributes;  // its own, besides name/op/inputs
  std::string_view indexed_by;                   // what selects a row of its table, for reading
  // true: the rows read are added to the input (pos_embedding, rel_pos_bias: one add per
  // element); false: only copied into the output (embedding, cls_token: no arithmetic).
  bool adds;
  std::string_view torch;  // what PyTorch calls it, for reading
};

// Every lookup op, in OpKind's order.
std::span<const LookupDefinition> lookup_definitions();
// The definition of `kind`; nullptr for an op of another family.
const LookupDefinition* lookup_definition(OpKind kind) noexcept;

// The lookup ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_LOOKUP_CASE(name) case OpKind::name:
#define HWPROF_LOOKUP_CASES HWPROF_LOOKUP_OPS(HWPROF_LOOKUP_CASE)

}  // namespace hwprof::ops
