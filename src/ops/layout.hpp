// How messages write the per-sample layout a family of ops takes: channels over its spatial
// axes.
#pragma once

#include <algorithm>
#include <string_view>

#include "common/stages.hpp"

namespace hwprof::ops {

// "[C]", "[C, L]", "[C, H, W]" or "[C, D, H, W]" for 0 to 3 spatial axes (3 past it).
inline std::string_view channels_layout(int spatial_axes) noexcept {
  static constexpr std::string_view kLayouts[] = {"[C]", "[C, L]", "[C, H, W]", "[C, D, H, W]"};
  return kLayouts[std::clamp(spatial_axes, 0, 3)];
}

}  // namespace hwprof::ops
