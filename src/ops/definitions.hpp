// How each family's lookups find a definition in its table: the first that matches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

#include "common/stages.hpp"

namespace hwprof::ops {

// The first of `definitions` for which `match` holds; nullptr if none does.
template <typename Definition, std::size_t N, typename Match>
constexpr const Definition* first_definition(const Definition (&definitions)[N], Match&& match) noexcept {
  for (const Definition& d : definitions) {
    if (match(d)) return &d;
  }
  return nullptr;
}

// Whether `name` is in one of a definition's lists (its ATen ops, say).
inline bool listed(std::span<const std::string_view> list, std::string_view name) noexcept {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace hwprof::ops
