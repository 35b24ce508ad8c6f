// The convolution ops (a learned kernel slid over the spatial axes of a [C, spatial...] input, or
// scattered through them: the transposed convolution), each defined once, in convolution.cpp:
// whether it gathers (nn.Conv2d) or scatters (nn.ConvTranspose2d), over how many spatial axes,
// and how an ONNX node names it. Every stage reads the definition instead of listing the ops: the
// op table and the spec parser (a window per axis; output_padding for a transposed one), shape
// inference (conv_shape, below), the cost model, the parameters (the weight's layout), the
// engine (its GEMM lowering, forward or as the data gradient), the causes (its GEMM's shape), the
// FLOP-count reasons, the ONNX importer (Conv, ConvTranspose, by the input's axes) and the
// PyTorch observer (aten::convolution and its kin, by the input's rank). Adding one is a line in
// HWPROF_CONVOLUTION_OPS (hwprof/engine/graph.hpp), one definition there and its tests
// (docs/adding-an-op.md).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/window.hpp"

namespace hwprof::ops {

struct ConvolutionDefinition {
  OpKind kind;
  // false: each output element gathers in/groups·kernel products (nn.ConvNd); true: each input
  // element is scattered through out/groups·kernel weights (nn.ConvTransposeNd, conv's data
  // gradient), with output_padding.
  bool transposed;
  int spatial_axes;  // 1: a [C, L] input; 2: [C, H, W]; 3: [C, D, H, W]
  // A depthwise one (groups = input channels = out_channels) runs the engine's direct per-plane
  // loops instead of GEMMs (src/nn/conv2d.cpp: 1-D and 2-D only; every other convolution is
  // GEMMs).
  bool direct_depthwise;
  std::string_view module;     // PyTorch's module, for reading
  std::string_view onnx_type;  // the ONNX operator (Conv, ConvTranspose; by the input's axes)
};

// Every convolution op, in OpKind's order.
std::span<const ConvolutionDefinition> convolution_definitions();
// The definition of `kind`; nullptr for an op of another family.
const ConvolutionDefinition* convolution_definition(OpKind kind) noexcept;
// The op of this form over this many spatial axes; nullptr where none is defined.
const ConvolutionDefinition* convolution_for(bool transposed, int spatial_axes) noexcept;

// One spatial axis of a convolution's window: the node's attributes along it (depth, then
// height, then width; a 2-D op has the last two, a 1-D op the width alone). The defaults are an
// axis the window leaves as it is (a kernel, stride and dilation of 1, no padding).
struct ConvAxis {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t dilation = 1;
  std::int64_t output_padding = 0;  // transposed only
};
struct ConvAxes {
  std::array<ConvAxis, 3> axis{};
  int count = 0;
  // Of a named ConvAxes only: a temporary's axes would dangle (`for (x : conv_axes(...).view())`).
  std::span<const ConvAxis> view() const& noexcept { return {axis.data(), static_cast<std::size_t>(count)}; }
  std::span<const ConvAxis> view() const&& = delete;
};
// The node's window per spatial axis, as its attributes keep it (2-D in the pairs' h and w; 3-D
// with the depth window's first; 1-D in the pairs' w, their h an axis of size 1 left as it is).
ConvAxes conv_axes(const ConvolutionDefinition& def, const Attributes& a) noexcept;
// The attributes that keep `axes` (the inverse of conv_axes): what the ONNX importer and the
// PyTorch observer read per axis.
void set_conv_axes(const ConvolutionDefinition& def, const ConvAxes& axes, Attributes& a) noexcept;
// The weight's shape as PyTorch keeps it, for `in_channels` input channels: [out, in/groups,
// kernel...] (nn.ConvNd), or [in, out/groups, kernel...] (nn.ConvTransposeNd).
Shape conv_weight_shape(const ConvolutionDefinition& def, const Attributes& a, std::int64_t in_channels);

// The per-sample output shape of a convolution over the per-sample input `in`, or what is wrong
// with it and the attribute that says so (PyTorch's rules: a kernel, stride and dilation of at
// least 1, a padding of at least 0, groups that divide both channel counts; a kernel that fits
// the padded input; a transposed one's output_padding smaller than its stride or its dilation,
// and an output the padding does not remove).
WindowShape conv_shape(const ConvolutionDefinition& def, const Attributes& a, const Shape& in, DType dtype);

// The convolution ops as `case` labels (HWPROF_ELEMENTWISE_UNARY_CASES, ops.hpp, says why).
#define HWPROF_CONVOLUTION_CASE(name) case OpKind::name:
#define HWPROF_CONVOLUTION_CASES HWPROF_CONVOLUTION_OPS(HWPROF_CONVOLUTION_CASE)

}  // namespace hwprof::ops
