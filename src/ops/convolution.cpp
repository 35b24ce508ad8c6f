#include "ops/convolution.hpp"

#include <algorithm>
#include <string>

#include "ops/definitions.hpp"
#include "ops/layout.hpp"

namespace hwprof::ops {
namespace {

constexpr ConvolutionDefinition kConvolutions[] = {
    {OpKind::conv1d, false, 1, true, "nn.Conv1d", "Conv"},  {OpKind::conv_transpose1d, true, 1, false, "nn.ConvTranspose1d", "ConvTranspose"},
    {OpKind::conv2d, false, 2, true, "nn.Conv2d", "Conv"},  {OpKind::conv_transpose2d, true, 2, false, "nn.ConvTranspose2d", "ConvTranspose"},
    {OpKind::conv3d, false, 3, false, "nn.Conv3d", "Conv"}, {OpKind::conv_transpose3d, true, 3, false, "nn.ConvTranspose3d", "ConvTranspose"},
};

// PyTorch's Conv output size along one axis: floor((in + 2·padding − dilation·(kernel − 1) − 1)
// / stride) + 1; 0 or less when the kernel does not fit the padded input.
std::int64_t gathered_size(std::int64_t in, const ConvAxis& x) {
  const Wide span = Wide{x.dilation} * (Wide{x.kernel} - 1) + 1;
  const Wide padded = Wide{in} + 2 * Wide{x.padding};
  if (padded < span) return 0;
  return saturate((padded - span) / x.stride + 1);
}

// PyTorch's ConvTranspose output size along one axis: (in − 1)·stride − 2·padding +
// dilation·(kernel − 1) + output_padding + 1; 0 when the padding removes it all.
std::int64_t scattered_size(std::int64_t in, const ConvAxis& x) {
  const Wide out = (Wide{in} - 1) * x.stride - 2 * Wide{x.padding} + Wide{x.dilation} * (Wide{x.kernel} - 1) + x.output_padding + 1;
  return out <= 0 ? std::int64_t{0} : saturate(out);
}

std::string number(std::int64_t v) {
  return std::to_string(v);
}

}  // namespace

std::span<const ConvolutionDefinition> convolution_definitions() {
  return kConvolutions;
}

const ConvolutionDefinition* convolution_definition(OpKind kind) noexcept {
  return first_definition(kConvolutions, [&](const ConvolutionDefinition& d) { return d.kind == kind; });
}

const ConvolutionDefinition* convolution_for(bool transposed, int spatial_axes) noexcept {
  return first_definition(kConvolutions,
                          [&](const ConvolutionDefinition& d) { return d.transposed == transposed && d.spatial_axes == spatial_axes; });
}

ConvAxes conv_axes(const ConvolutionDefinition& def, const Attributes& a) noexcept {
  ConvAxes axes;
  axes.count = def.spatial_axes;
  std::size_t i = 0;
  if (def.spatial_axes == 3) axes.axis[i++] = {a.depth.kernel, a.depth.stride, a.depth.padding, a.depth.dilation, a.depth.output_padding};
  if (def.spatial_axes >= 2) axes.axis[i++] = {a.kernel.h, a.stride.h, a.padding.h, a.dilation.h, a.output_padding.h};
  axes.axis[i] = {a.kernel.w, a.stride.w, a.padding.w, a.dilation.w, a.output_padding.w};
  return axes;
}

void set_conv_axes(const ConvolutionDefinition& def, const ConvAxes& axes, Attributes& a) noexcept {
  std::size_t i = 0;
  if (def.spatial_axes == 3) {
    const ConvAxis& d = axes.axis[i++];
    a.depth.kernel = d.kernel;
    a.depth.stride = d.stride;
    a.depth.padding = d.padding;
    a.depth.dilation = d.dilation;
    a.depth.output_padding = d.output_padding;
  }
  // A 1-D window leaves the height (of size 1) as it is.
  const ConvAxis h = def.spatial_axes >= 2 ? axes.axis[i++] : ConvAxis{};
  const ConvAxis& w = axes.axis[i];
  a.kernel = {h.kernel, w.kernel};
  a.stride = {h.stride, w.stride};
  a.padding = {h.padding, w.padding};
  a.dilation = {h.dilation, w.dilation};
  a.output_padding = {h.output_padding, w.output_padding};
}

Shape conv_weight_shape(const ConvolutionDefinition& def, const Attributes& a, std::int64_t in_channels) {
  Shape weight = def.transposed ? Shape{in_channels, a.out_channels / a.groups} : Shape{a.out_channels, in_channels / a.groups};
  const ConvAxes axes = conv_axes(def, a);
  for (const ConvAxis& x : axes.view()) weight.push_back(x.kernel);
  return weight;
}

// Long: PyTorch's checks in their order, each with its message, then the output per axis.
WindowShape conv_shape(const ConvolutionDefinition& def, const Attributes& a, const Shape& in, DType dtype) {
  if (dtype != DType::f32) return window_problem("expects float32 input, got int32 token ids; add an embedding first", nullptr);
  if (in.size() != static_cast<std::size_t>(def.spatial_axes) + 1)
    return window_problem("expects a " + std::string(channels_layout(def.spatial_axes)) + " input, got " + format_shape(in), nullptr);
  const ConvAxes axes = conv_axes(def, a);
  // Every size the output formulas divide by or multiply with at least 1 (a 0 stride divides by
  // zero in the kernels), every padding at least 0. The spec parser refuses these already; an
  // ONNX import or a graph built in code reaches here too.
  const struct {
    const char* name;
    std::int64_t ConvAxis::*field;
    std::int64_t low;
    bool used;
  } checks[] = {
      {"kernel", &ConvAxis::kernel, 1, true},
      {"stride", &ConvAxis::stride, 1, true},
      {"dilation", &ConvAxis::dilation, 1, true},
      {"padding", &ConvAxis::padding, 0, true},
      {"output_padding", &ConvAxis::output_padding, 0, def.transposed},
  };
  for (const auto& c : checks) {
    if (c.used && std::any_of(axes.view().begin(), axes.view().end(), [&](const ConvAxis& x) { return x.*c.field < c.low; }))
      return window_problem(std::string(c.name) + " is " + per_axis(axes, [&](const ConvAxis& x) { return number(x.*c.field); }) +
                                "; it must be at least " + number(c.low),
                            c.name);
  }
  if (a.groups < 1) return window_problem("groups = " + number(a.groups) + " must be at least 1", "groups");
  if (in[0] % a.groups != 0)
    return window_problem("groups = " + number(a.groups) + " must divide the input channels (" + number(in[0]) + ")", "groups");
  if (a.out_channels % a.groups != 0)
    return window_problem("groups = " + number(a.groups) + " must divide out_channels (" + number(a.out_channels) + ")", "groups");
  Shape out{a.out_channels};
  std::size_t d = 1;
  if (def.transposed) {
    if (std::any_of(axes.view().begin(), axes.view().end(),
                    [](const ConvAxis& x) { return x.output_padding >= x.stride && x.output_padding >= x.dilation; }))
      return window_problem("output_padding " + per_axis(axes, [](const ConvAxis& x) { return number(x.output_padding); }) +
                                " must be smaller than the stride or the dilation along each axis (PyTorch's rule)",
                            "output_padding");
    for (const ConvAxis& x : axes.view()) out.push_back(scattered_size(in[d++], x));
    if (std::any_of(out.begin() + 1, out.end(), [](std::int64_t v) { return v <= 0; })) {
      std::string sizes;
      for (std::size_t i = 1; i < out.size(); ++i) sizes += (i == 1 ? "" : "x") + number(out[i]);
      return window_problem("the padding removes the whole output (" + sizes + ")", "padding");
    }
    return WindowShape{out, {}, nullptr};
  }
  for (const ConvAxis& x : axes.view()) out.push_back(gathered_size(in[d++], x));
  if (std::any_of(out.begin() + 1, out.end(), [](std::int64_t v) { return v <= 0; })) {
    d = 1;
    return window_problem("the kernel " + per_axis(axes, [](const ConvAxis& x) { return number(x.kernel); }) + " (dilation " +
                              per_axis(axes, [](const ConvAxis& x) { return number(x.dilation); }) + ") is larger than the padded input " +
                              per_axis(axes, [&](const ConvAxis& x) { return padded_size_text(in[d++], x.padding); }),
                          "kernel");
  }
  return WindowShape{out, {}, nullptr};
}

}  // namespace hwprof::ops
