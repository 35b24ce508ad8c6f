// The table of ops of DESIGN.md: names, the attributes each accepts, how many inputs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "hwprof/graph.hpp"

namespace hwprof::detail {

struct OpInfo {
  OpKind kind;
  std::string_view name;
  std::vector<std::string_view> attributes;  // the op's own attributes, besides name/op/inputs
  int min_inputs;
  int max_inputs;  // -1: unbounded
};

const std::vector<OpInfo>& op_table();
const OpInfo& op_info(OpKind kind);
std::optional<OpKind> find_op(std::string_view name);

// Keys every layer object may carry whatever its op.
inline constexpr std::string_view kCommonLayerKeys[] = {"name", "op", "inputs", "comment"};

}  // namespace hwprof::detail
