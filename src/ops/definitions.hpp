// How each family's lookups find a definition in its table: the first that matches.
#pragma once

#include <cstddef>

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

}  // namespace hwprof::ops
