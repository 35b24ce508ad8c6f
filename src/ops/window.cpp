#include "ops/window.hpp"

#include <limits>

namespace hwprof::ops {

WindowShape window_problem(std::string text, const char* attribute) {
  WindowShape p;
  p.problem = std::move(text);
  p.attribute = attribute;
  return p;
}

std::string padded_size_text(std::int64_t size, std::int64_t pad) {
  constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
  if (pad > (kInt64Max - size) / 2) return "(" + std::to_string(size) + "+2*" + std::to_string(pad) + ")";
  return std::to_string(size + 2 * pad);
}

}  // namespace hwprof::ops
