#include "ops/pooling.hpp"

#include <algorithm>
#include <string>

#include "ops/definitions.hpp"
#include "ops/layout.hpp"

namespace hwprof::ops {
namespace {

using R = PoolReduction;

// PyTorch's names: torch.nn.MaxPool2d is aten::max_pool2d (max_pool2d_with_indices when it
// keeps the argmax for training), nn.AdaptiveAvgPool2d is aten::adaptive_avg_pool2d
// (_adaptive_avg_pool2d underneath).
constexpr PoolingDefinition kPools[] = {
    {OpKind::maxpool1d, R::max, 1, "max_pool1d", "nn.MaxPool1d"},
    {OpKind::avgpool1d, R::average, 1, "avg_pool1d", "nn.AvgPool1d"},
    {OpKind::adaptive_avgpool1d, R::adaptive_average, 1, "adaptive_avg_pool1d", "nn.AdaptiveAvgPool1d"},
    {OpKind::maxpool2d, R::max, 2, "max_pool2d", "nn.MaxPool2d"},
    {OpKind::avgpool2d, R::average, 2, "avg_pool2d", "nn.AvgPool2d"},
    {OpKind::adaptive_avgpool2d, R::adaptive_average, 2, "adaptive_avg_pool2d", "nn.AdaptiveAvgPool2d"},
    {OpKind::maxpool3d, R::max, 3, "max_pool3d", "nn.MaxPool3d"},
    {OpKind::avgpool3d, R::average, 3, "avg_pool3d", "nn.AvgPool3d"},
    {OpKind::adaptive_avgpool3d, R::adaptive_average, 3, "adaptive_avg_pool3d", "nn.AdaptiveAvgPool3d"},
};

Wide floor_div(Wide a, Wide b) {
  const Wide q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

WindowShape problem(std::string text, const char* attribute) {
  return window_problem(std::move(text), attribute);
}

}  // namespace

std::span<const PoolingDefinition> pooling_definitions() {
  return kPools;
}

const PoolingDefinition* pooling_definition(OpKind kind) noexcept {
  return first_definition(kPools, [&](const PoolingDefinition& d) { return d.kind == kind; });
}

const PoolingDefinition* pooling_for(PoolReduction reduction, int spatial_axes) noexcept {
  return first_definition(kPools, [&](const PoolingDefinition& d) { return d.reduction == reduction && d.spatial_axes == spatial_axes; });
}

const PoolingDefinition* pooling_for_aten(std::string_view name) noexcept {
  if (name.starts_with("_")) name.remove_prefix(1);  // _adaptive_avg_pool2d
  constexpr std::string_view kWithIndices = "_with_indices";
  const bool with_indices = name.ends_with(kWithIndices);
  if (with_indices) name.remove_suffix(kWithIndices.size());
  return first_definition(kPools, [&](const PoolingDefinition& d) { return d.aten == name && (!with_indices || d.reduction == R::max); });
}

PoolAxes pool_axes(const PoolingDefinition& def, const Attributes& a) noexcept {
  PoolAxes axes;
  axes.count = def.spatial_axes;
  std::size_t i = 0;
  if (def.spatial_axes == 3) axes.axis[i++] = {a.depth.kernel, a.depth.stride, a.depth.padding, a.depth.output, a.depth.dilation};
  if (def.spatial_axes >= 2) axes.axis[i++] = {a.kernel.h, a.stride.h, a.padding.h, a.output.h, a.dilation.h};
  axes.axis[i] = {a.kernel.w, a.stride.w, a.padding.w, a.output.w, a.dilation.w};
  return axes;
}

void set_pool_axes(const PoolingDefinition& def, const PoolAxes& axes, Attributes& a) noexcept {
  std::size_t i = 0;
  if (def.spatial_axes == 3) {
    const PoolAxis& d = axes.axis[i++];
    a.depth.kernel = d.kernel;
    a.depth.stride = d.stride;
    a.depth.padding = d.padding;
    a.depth.output = d.output;
    a.depth.dilation = d.dilation;
  }
  // A 1-D window leaves the height (of size 1) as it is.
  const PoolAxis h = def.spatial_axes >= 2 ? axes.axis[i++] : PoolAxis{};
  const PoolAxis& w = axes.axis[i];
  a.kernel = {h.kernel, w.kernel};
  a.stride = {h.stride, w.stride};
  a.padding = {h.padding, w.padding};
  a.output = {h.output, w.output};
  a.dilation = {h.dilation, w.dilation};
}

std::int64_t pool_output_size(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool ceil_mode,
                              std::int64_t dilation) noexcept {
  const Wide numerator = Wide{size} + 2 * Wide{pad} - Wide{dilation} * (Wide{kernel} - 1) - 1 + (ceil_mode ? Wide{stride} - 1 : 0);
  Wide out = floor_div(numerator, stride) + 1;
  if (ceil_mode && (out - 1) * stride >= Wide{size} + pad) --out;
  return saturate(out);
}

WindowShape pool_shape(const PoolingDefinition& def, const Attributes& a, const Shape& in, DType dtype) {
  const auto axes_count = static_cast<std::size_t>(def.spatial_axes);
  if (dtype != DType::f32) return problem("expects float32 input, got int32 token ids; add an embedding first", nullptr);
  if (in.size() != axes_count + 1)
    return problem("expects a " + std::string(channels_layout(def.spatial_axes)) + " input, got " + format_shape(in), nullptr);
  const PoolAxes axes = pool_axes(def, a);
  Shape out{in[0]};
  if (def.reduction == R::adaptive_average) {
    for (const PoolAxis& x : axes.view()) out.push_back(x.output);
    return WindowShape{out, {}, nullptr};
  }
  auto number = [](std::int64_t v) { return std::to_string(v); };
  const std::string kernel = per_axis(axes, [&](const PoolAxis& x) { return number(x.kernel); });
  // Every size the output formulas divide by or multiply with at least 1 (a 0 stride divides
  // by zero in the kernels, a 0 kernel gives an empty window whose maximum is -inf), every
  // padding at least 0. The spec parser refuses these already; an ONNX import or a graph built
  // in code reaches here too.
  const struct {
    const char* name;
    std::int64_t PoolAxis::*field;
    std::int64_t low;
  } checks[] = {
      {"kernel", &PoolAxis::kernel, 1}, {"stride", &PoolAxis::stride, 1}, {"padding", &PoolAxis::padding, 0}, {"dilation", &PoolAxis::dilation, 1}};
  for (const auto& c : checks) {
    if (std::any_of(axes.view().begin(), axes.view().end(), [&](const PoolAxis& x) { return x.*c.field < c.low; }))
      return problem(std::string(c.name) + " is " + per_axis(axes, [&](const PoolAxis& x) { return number(x.*c.field); }) + "; it must be at least " +
                         number(c.low),
                     c.name);
  }
  if (std::any_of(axes.view().begin(), axes.view().end(), [](const PoolAxis& x) { return x.padding > x.kernel / 2; }))
    return problem("padding must be at most half the kernel (PyTorch's rule), got padding " +
                       per_axis(axes, [&](const PoolAxis& x) { return number(x.padding); }) + " for kernel " + kernel,
                   "padding");
  std::size_t d = 1;
  for (const PoolAxis& x : axes.view()) out.push_back(pool_output_size(in[d++], x.kernel, x.stride, x.padding, a.ceil_mode, x.dilation));
  if (std::any_of(out.begin() + 1, out.end(), [](std::int64_t v) { return v <= 0; })) {
    d = 1;
    const std::string padded = per_axis(axes, [&](const PoolAxis& x) { return padded_size_text(in[d++], x.padding); });
    const bool dilated = std::any_of(axes.view().begin(), axes.view().end(), [](const PoolAxis& x) { return x.dilation > 1; });
    const std::string dilation = dilated ? " (dilation " + per_axis(axes, [&](const PoolAxis& x) { return number(x.dilation); }) + ")" : "";
    return problem("the kernel " + kernel + dilation + " is larger than the padded input " + padded, "kernel");
  }
  return WindowShape{out, {}, nullptr};
}

}  // namespace hwprof::ops
