// The pooling ops (the maximum or the mean of each window of a [C, spatial...] input, or of
// adaptive windows that tile it), each defined once, in pooling.cpp: what it reduces, over how
// many spatial axes, and how a PyTorch call and an ONNX node name it. Every stage reads the
// definition instead of listing the ops: the op table and the spec parser (the attributes a
// window or an adaptive output takes), shape inference and the cost model (the window
// arithmetic below, per axis), the engine (the kernel of its reduction and axes), the roofline
// and the causes (what the reduction computes with), the ONNX importer (MaxPool, AveragePool,
// GlobalAveragePool and a global ReduceMean, by the input's axes) and the PyTorch observer
// (aten::max_pool2d and its kin). Adding one is a line in HWPROF_POOLING_OPS
// (hwprof/engine/graph.hpp), one definition there and its tests (docs/adding-an-op.md).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/window.hpp"

namespace hwprof::ops {

// What a window becomes.
enum class PoolReduction {
  max,               // its largest element (the first one, or the last NaN, as PyTorch); backward keeps the argmax
  average,           // the mean of its elements, padding inside the padded input counted (count_include_pad)
  adaptive_average,  // the mean of PyTorch's adaptive windows [floor(i·in/out), ceil((i+1)·in/out))
};

struct PoolingDefinition {
  OpKind kind;
  PoolReduction reduction;
  int spatial_axes;         // 1: a [C, L] input; 2: [C, H, W]; 3: [C, D, H, W]
  std::string_view aten;    // the forward: aten::<aten> (max's also <aten>_with_indices, adaptive's also _<aten>); backward <name>_backward
  std::string_view module;  // PyTorch's module, for reading
};

// Every pooling op, in OpKind's order.
std::span<const PoolingDefinition> pooling_definitions();
// The definition of `kind`; nullptr for an op of another family.
const PoolingDefinition* pooling_definition(OpKind kind) noexcept;
// The op that reduces this way over this many spatial axes; nullptr where none is defined.
const PoolingDefinition* pooling_for(PoolReduction reduction, int spatial_axes) noexcept;
// The op a PyTorch forward call computes (aten::max_pool2d, max_pool2d_with_indices,
// _adaptive_avg_pool3d, ...; without the "aten::" and "_backward"); nullptr for none.
const PoolingDefinition* pooling_for_aten(std::string_view name) noexcept;

// One spatial axis of a pooling window: the node's attributes along it (depth, then height,
// then width; a 2-D op has the last two, a 1-D op the width alone). The defaults are an axis the
// window leaves as it is.
struct PoolAxis {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t output = 1;    // adaptive: the output size along it
  std::int64_t dilation = 1;  // max: the step between a window's elements (PyTorch's MaxPoolNd)
};
struct PoolAxes {
  std::array<PoolAxis, 3> axis{};
  int count = 0;
  // Of a named PoolAxes only: a temporary's axes would dangle (`for (x : pool_axes(...).view())`).
  std::span<const PoolAxis> view() const& noexcept { return {axis.data(), static_cast<std::size_t>(count)}; }
  std::span<const PoolAxis> view() const&& = delete;
};
// The node's window per spatial axis, as its attributes keep it (2-D in kernel/stride/padding/
// output's h and w; 3-D with the depth window's first; 1-D in their w, their h an axis of size 1
// left as it is).
PoolAxes pool_axes(const PoolingDefinition& def, const Attributes& a) noexcept;
// The attributes that keep `axes` (the inverse of pool_axes): what the ONNX importer and the
// PyTorch observer read per axis.
void set_pool_axes(const PoolingDefinition& def, const PoolAxes& axes, Attributes& a) noexcept;

// PyTorch's pooling_output_shape (ATen/native/Pool.h): div_rtn(size + 2*pad - dilation*(kernel-1)
// - 1 + (ceil_mode ? stride-1 : 0), stride) + 1, then with ceil_mode a last window that would
// start in the right padding is dropped. There is no "kernel fits" check: with ceil_mode a
// 2x2 window over a 1x1 input gives 1x1. <= 0 means an empty output, which PyTorch rejects.
// Exact for sizes near 2^63 (hostile specs); saturates at 2^63 − 1.
std::int64_t pool_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool ceil_mode,
                              std::int64_t dilation = 1) noexcept;

// The per-sample output shape of a pooling node over the per-sample input `in`, or what is
// wrong with it and the attribute that says so (PyTorch's rules: a window of at least 1, a
// stride of at least 1, a padding of at most half the kernel, a window that fits the padded
// input).
WindowShape pool_shape(const PoolingDefinition& def, const Attributes& a, const Shape& in, DType dtype);

// The pooling ops as `case` labels (each followed by its colon), for the switches over OpKind
// that handle them from their definitions before the switch (HWPROF_ELEMENTWISE_UNARY_CASES,
// ops.hpp, says why).
#define HWPROF_POOLING_CASE(name) case OpKind::name:
#define HWPROF_POOLING_CASES HWPROF_POOLING_OPS(HWPROF_POOLING_CASE)

}  // namespace hwprof::ops
