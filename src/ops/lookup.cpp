#include "ops/lookup.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr std::string_view kEmbedding[] = {"num_embeddings", "embedding_dim"};
constexpr std::string_view kPositions[] = {"num_positions"};
constexpr std::string_view kWindow[] = {"window"};

// docs/model-specs.md, "Ops and attributes", says what each attribute means.
constexpr LookupDefinition kLookups[] = {
    {OpKind::embedding, kEmbedding, "token id", false, "nn.Embedding"},
    {OpKind::pos_embedding, kPositions, "position", true, "a ViT's pos_embedding parameter, added"},
    {OpKind::cls_token, {}, "nothing (one row, prepended)", false, "a ViT's class_token parameter, concatenated"},
    // Swin's relative position bias: a learned [(2·wh − 1)·(2·ww − 1), heads] table indexed by the
    // offset between two positions of a window, added to the attention scores.
    {OpKind::rel_pos_bias, kWindow, "offset between two window positions", true, "Swin's relative_position_bias_table, added"},
};

}  // namespace

std::span<const LookupDefinition> lookup_definitions() {
  return kLookups;
}

const LookupDefinition* lookup_definition(OpKind kind) noexcept {
  return first_definition(kLookups, [&](const LookupDefinition& d) { return d.kind == kind; });
}

}  // namespace hwprof::ops
