// The model's vocabulary of hwprof/engine/graph.hpp that every stage and report speaks: a dtype's
// name, a shape in words, its element count. With the ops, not the graph stage, so that the
// report module names shapes without the engine's graph code.
#include <cstdint>
#include <string>
#include <string_view>

#include "hwprof/engine/graph.hpp"

namespace hwprof {

std::string_view dtype_name(DType dtype) noexcept {
  return dtype == DType::f32 ? "float32" : "int32";
}

std::string format_shape(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::int64_t numel(const Shape& shape) noexcept {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

}  // namespace hwprof
