// What the windowed ops (the pooling and convolution families) share: a per-sample output shape
// or what is wrong with it, and how messages write a window's sizes.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::ops {

// Output-size arithmetic (the windows', shape inference's) is exact in 128 bits for sizes near
// 2^63 (hostile specs) and saturates at 2^63 − 1 (below 0: 0).
__extension__ using Wide = __int128;
inline std::int64_t saturate(Wide v) noexcept {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  return v > static_cast<Wide>(kMax) ? kMax : v < 0 ? 0 : static_cast<std::int64_t>(v);
}

// The per-sample output shape of a windowed node over its per-sample input, or what is wrong with
// it and the attribute that says so.
struct WindowShape {
  Shape shape;
  std::string problem;              // empty: fine
  const char* attribute = nullptr;  // the attribute the problem is about, if any
};
WindowShape window_problem(std::string text, const char* attribute);

// size + 2*pad for messages, spelled as a sum when it does not fit in 64 bits.
std::string padded_size_text(std::int64_t size, std::int64_t pad);

// "2x3" (or "2x3x4"): one number per axis, as the messages write a window; `value` gives an
// axis's text.
template <typename Axes, typename F>
std::string per_axis(const Axes& axes, F&& value) {
  std::string out;
  for (const auto& x : axes.view()) out += (out.empty() ? "" : "x") + value(x);
  return out;
}

}  // namespace hwprof::ops
