// The attributes of an ONNX node that a formula divides by, multiplies into a size or uses as
// a count (strides, dilations, kernel_shape, group, pads, output_padding, blocksize, axis,
// epsilon, ...), checked before anything reads them: before ONNX's own shape inference, which
// divides by some of them unchecked (a Conv with strides [0, 0] or group 0 would stop the
// process with SIGFPE), and before hwprof's mapping and engine. docs/onnx.md lists the rules.
#pragma once

#if HWPROF_HAVE_ONNX

#include <cstdint>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>
#include "common/stages.hpp"

namespace hwprof::graph {

// The largest kernel, stride, dilation, padding or group an ONNX node may give: far above any
// real model's, and far enough below 2^63 that the output-size formulas cannot overflow.
inline constexpr std::int64_t kMaxWindowAttribute = std::int64_t{1} << 24;

// The first problem with node `n`'s attributes, e.g. "attribute strides has 0 at position 0;
// strides must be >= 1", or nothing. `opset` is the model's default-domain opset.
std::optional<std::string> onnx_attribute_problem(const onnx::NodeProto& n, int opset);

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
