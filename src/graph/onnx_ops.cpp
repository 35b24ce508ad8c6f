// One ONNX node onto one hwprof layer (docs/onnx.md, "How ops map"): op_rules() is the table
// of the op types map_node knows, each row dispatching onto a map_* function here. Op semantics
// follow the ONNX operator specification (https://onnx.ai/onnx/operators/, opsets 11 to 17).
#include "graph/onnx_importer.hpp"
#include "ops/layout.hpp"
#include "ops/ops.hpp"

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::graph {

namespace {

// "[N, C, H, W]": a batch of channels over `spatial_axes` axes, for the messages of what is not
// mapped.
std::string batched_layout(int spatial_axes) {
  return "[N, " + std::string(ops::channels_layout(spatial_axes).substr(1));
}

// "[N, C, H, W] or [N, C, D, H, W]": the inputs the pooling ops of a reduction take
// (ops/pooling.cpp).
std::string pooled_inputs(ops::PoolReduction reduction) {
  std::string out;
  for (const ops::PoolingDefinition& d : ops::pooling_definitions()) {
    if (d.reduction == reduction) out += (out.empty() ? "" : " or ") + batched_layout(d.spatial_axes);
  }
  return out;
}

// "[N, C, H, W] or [N, C, D, H, W]": the inputs the convolutions of a form take
// (ops/convolution.cpp).
std::string convolved_inputs(bool transposed) {
  std::string out;
  for (const ops::ConvolutionDefinition& d : ops::convolution_definitions()) {
    if (d.transposed == transposed) out += (out.empty() ? "" : " or ") + batched_layout(d.spatial_axes);
  }
  return out;
}

// A convolution's window, one value per spatial axis in ONNX's order (depth, height, width), as
// its attributes keep it (ops/convolution.cpp).
void set_window(const ops::ConvolutionDefinition& conv, const Dims& kernel, const Dims& strides, const Dims& pads, const Dims& dilations,
                const Dims& output_padding, Attributes& a) {
  ops::ConvAxes axes;
  axes.count = conv.spatial_axes;
  for (std::size_t i = 0; i < static_cast<std::size_t>(axes.count); ++i)
    axes.axis[i] = {kernel.at(i), strides.at(i), pads.at(i), dilations.at(i), output_padding.at(i)};
  ops::set_conv_axes(conv, axes, a);
}

// A pooling window, one value per spatial axis in ONNX's order (depth, height, width), as its
// attributes keep it (ops/pooling.cpp).
void set_pool_window(const ops::PoolingDefinition& pool, const Dims& kernel, const Dims& strides, const Dims& pads, const Dims& dilations,
                     Attributes& a) {
  ops::PoolAxes axes;
  axes.count = pool.spatial_axes;
  for (std::size_t i = 0; i < static_cast<std::size_t>(axes.count); ++i) axes.axis[i] = {kernel.at(i), strides.at(i), pads.at(i), 1, dilations.at(i)};
  ops::set_pool_axes(pool, axes, a);
}

std::string axes_word(std::size_t axes) {
  return std::to_string(axes) + "-D";
}

}  // namespace

std::optional<Dims> Importer::spatial_attr(const onnx::NodeProto& n, const char* name, std::size_t axes, std::int64_t fallback) const {
  const std::vector<std::int64_t> v = attr_ints(n, name);
  if (v.empty()) return Dims(axes, fallback);
  if (v.size() == axes) return v;
  if (v.size() == 1) return Dims(axes, v[0]);
  return std::nullopt;
}

std::optional<Dims> Importer::symmetric_pads(const onnx::NodeProto& n, const Shape& in, const Dims& kernel, const Dims& stride, const Dims& dilation,
                                             std::string* why) {
  const std::size_t axes = kernel.size();
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    Dims pad(axes);
    for (std::size_t i = 0; i < axes; ++i) {
      const std::int64_t size = in[i + 1];
      const std::int64_t out = (size + stride[i] - 1) / stride[i];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - size);
      if (total % 2 != 0) {
        *why = "auto_pad " + auto_pad + " needs uneven padding here (hwprof's conv and pools pad both sides alike)";
        return std::nullopt;
      }
      pad[i] = total / 2;
    }
    return pad;
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    *why = "auto_pad '" + auto_pad + "' is not an ONNX value";
    return std::nullopt;
  }
  const std::vector<std::int64_t> pads = attr_ints(n, "pads");
  if (pads.empty() || auto_pad == "VALID") return Dims(axes, 0);
  if (pads.size() != 2 * axes) {
    *why = "pads has " + std::to_string(pads.size()) + " values; a " + axes_word(axes) + " window needs " + std::to_string(2 * axes);
    return std::nullopt;
  }
  for (std::size_t i = 0; i < axes; ++i) {
    if (pads[i] != pads[i + axes]) {
      *why = "uneven padding " + dims_text(pads) + " (hwprof's conv and pools pad both sides alike)";
      return std::nullopt;
    }
  }
  return Dims(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(axes));
}

// Conv onto the convolution over the input's spatial axes (ops/convolution.cpp: [N, C, H, W]
// conv2d, [N, C, D, H, W] conv3d): weight [K, C/group, [kd,] kh, kw].
void Importer::map_conv(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  const ops::ConvolutionDefinition* conv = in ? ops::convolution_for(false, static_cast<int>(in->size()) - 1) : nullptr;
  if (conv == nullptr)
    return unsupported(n, "only convolutions of " + convolved_inputs(false) + " inputs are mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  const std::size_t axes = in->size() - 1;
  if (w == nullptr) return unsupported(n, "the weight is computed in the graph, not an initializer");
  if (w->dims_size() != static_cast<int>(axes) + 2)
    return unsupported(n, "the weight has rank " + std::to_string(w->dims_size()) + ", not " + std::to_string(axes + 2));
  const onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && b == nullptr) return unsupported(n, "the bias is computed in the graph, not an initializer");
  const Dims weight(w->dims().begin(), w->dims().end());
  const Dims kernel(weight.begin() + 2, weight.end());
  const auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && ks != kernel) return unsupported(n, "kernel_shape " + dims_text(ks) + " disagrees with the weight " + dims_text(weight));
  const auto strides = spatial_attr(n, "strides", axes, 1);
  if (!strides)
    return unsupported(n, "strides " + dims_text(attr_ints(n, "strides")) + " needs one value per spatial axis (" + std::to_string(axes) + ")");
  const auto dilations = spatial_attr(n, "dilations", axes, 1);
  if (!dilations)
    return unsupported(n, "dilations " + dims_text(attr_ints(n, "dilations")) + " needs one value per spatial axis (" + std::to_string(axes) + ")");
  Attributes a;
  a.out_channels = weight[0];
  a.groups = attr_int(n, "group", 1);
  std::string why;
  auto pads = symmetric_pads(n, *in, kernel, *strides, *dilations, &why);
  if (!pads) return unsupported(n, why);
  const Dims extra = take_pad(n.input(0), axes);  // a Pad folded in (map_pad)
  for (std::size_t i = 0; i < axes; ++i) (*pads)[i] += extra[i];
  set_window(*conv, kernel, *strides, *pads, *dilations, Dims(axes, 0), a);
  add_conv(n, *conv, a, *w, b);
}

// A convolution's node and its weight and bias. A weight initializer an earlier convolution of
// the same op read too, with the same bias initializer (or none), is that layer's: PyTorch's
// exporter unrolls a module called in a loop (RAFT's refinement iterations) into one Conv per
// call, all reading the module's initializers. The later layer is tied_to the first and its
// parameters are counted once, as a linear tied to an embedding's weight.
void Importer::add_conv(const onnx::NodeProto& n, const ops::ConvolutionDefinition& conv, Attributes a, const onnx::TensorProto& w,
                        const onnx::TensorProto* b) {
  a.bias = b != nullptr;
  const std::string bias_name = b != nullptr ? b->name() : std::string();
  if (auto it = conv_weight_owners_.find(w.name()); it != conv_weight_owners_.end() && it->second.bias == bias_name) {
    const Node& owner = graph_.nodes[static_cast<std::size_t>(it->second.node)];
    if (owner.op == conv.kind && owner.attrs.groups == a.groups && owner.attrs.out_channels == a.out_channels) {
      a.tied_to = it->second.node;
      add_node(n, conv.kind, {values_.at(n.input(0)).node}, a);
      return;
    }
  }
  add_node(n, conv.kind, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  const Dims weight(w.dims().begin(), w.dims().end());
  node.initial_values.push_back(initial("weight", w.name(), Shape(weight.begin(), weight.end()), floats(w)));
  if (b != nullptr) node.initial_values.push_back(initial("bias", b->name(), {a.out_channels}, floats(*b)));
  conv_weight_owners_.emplace(w.name(), ConvOwner{static_cast<int>(graph_.nodes.size()) - 1, bias_name});
}

// ConvTranspose onto the transposed convolution over the input's spatial axes
// (ops/convolution.cpp: [N, C, H, W] conv_transpose2d, [N, C, D, H, W] conv_transpose3d): weight
// [C_in, C_out/group, [kd,] kh, kw] as PyTorch's ConvTranspose2d/3d keep it. Explicit symmetric
// pads and output_padding are mapped; output_shape and auto_pad SAME_* (which choose pads from a
// requested size) are not.
void Importer::map_conv_transpose(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  const ops::ConvolutionDefinition* conv = in ? ops::convolution_for(true, static_cast<int>(in->size()) - 1) : nullptr;
  if (conv == nullptr)
    return unsupported(
        n, "only transposed convolutions of " + convolved_inputs(true) + " inputs are mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  const std::size_t axes = in->size() - 1;
  if (w == nullptr) return unsupported(n, "the weight is computed in the graph, not an initializer");
  if (w->dims_size() != static_cast<int>(axes) + 2)
    return unsupported(n, "the weight has rank " + std::to_string(w->dims_size()) + ", not " + std::to_string(axes + 2));
  const onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && b == nullptr) return unsupported(n, "the bias is computed in the graph, not an initializer");
  if (attr(n, "output_shape") != nullptr) return unsupported(n, "output_shape is not mapped (give pads and output_padding instead)");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return unsupported(n, "auto_pad '" + auto_pad + "' is not mapped for ConvTranspose");
  const Dims weight(w->dims().begin(), w->dims().end());
  const Dims kernel(weight.begin() + 2, weight.end());
  Attributes a;
  a.groups = attr_int(n, "group", 1);
  if (a.groups < 1 || weight[0] != (*in)[0]) return unsupported(n, "the weight's first axis does not match the input's channels");
  a.out_channels = weight[1] * a.groups;
  const auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && ks != kernel) return unsupported(n, "kernel_shape disagrees with the weight");
  // One value per spatial axis (one value alone stands for every axis).
  for (const char* name : {"strides", "dilations", "output_padding"}) {
    if (!spatial_attr(n, name, axes, 0))
      return unsupported(
          n, std::string(name) + " " + dims_text(attr_ints(n, name)) + " needs one value per spatial axis (" + std::to_string(axes) + ")");
  }
  const std::vector<std::int64_t> pads = attr_ints(n, "pads");
  Dims padding(axes, 0);
  if (auto_pad == "NOTSET" && !pads.empty()) {
    if (pads.size() != 2 * axes)
      return unsupported(n,
                         "pads has " + std::to_string(pads.size()) + " values; a " + axes_word(axes) + " window needs " + std::to_string(2 * axes));
    for (std::size_t i = 0; i < axes; ++i) {
      if (pads[i] != pads[i + axes]) return unsupported(n, "uneven padding " + dims_text(pads) + " (hwprof pads both sides alike)");
    }
    padding.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(axes));
  }
  set_window(*conv, kernel, *spatial_attr(n, "strides", axes, 1), padding, *spatial_attr(n, "dilations", axes, 1),
             *spatial_attr(n, "output_padding", axes, 0), a);
  add_conv(n, *conv, a, *w, b);
}

void Importer::map_gemm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->size() != 1)
    return unsupported(n, "Gemm is mapped as a linear layer of [N, K] inputs (input " + dims_text(dims_of(n.input(0))) + ")");
  if (w == nullptr || w->dims_size() != 2) return unsupported(n, "B is not a 2-D initializer");
  if (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1.0f) != 1.0f || attr_float(n, "beta", 1.0f) != 1.0f) {
    return unsupported(n, "transA, alpha or beta differ from a linear layer's (0, 1, 1)");
  }
  const bool trans_b = attr_int(n, "transB", 0) != 0;
  const std::int64_t out = trans_b ? w->dims(0) : w->dims(1);
  const std::int64_t k = trans_b ? w->dims(1) : w->dims(0);
  if (k != (*in)[0]) return unsupported(n, "B's shape does not match the input's " + std::to_string((*in)[0]) + " features");
  const onnx::TensorProto* c = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && (c == nullptr || product(Dims(c->dims().begin(), c->dims().end())) != out)) {
    return unsupported(n, "C is not a per-output bias initializer");
  }
  std::vector<float> weight = trans_b ? floats(*w) : transposed(floats(*w), k, out);
  Attributes a;
  a.out_features = out;
  a.bias = c != nullptr;
  add_linear(n, a, k, w->name(), std::move(weight));
  if (c != nullptr) graph_.nodes.back().initial_values.push_back(initial("bias", c->name(), {out}, floats(*c)));
}

void Importer::map_matmul(const onnx::NodeProto& n) {
  const auto in = sample_shape(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->empty()) return unsupported(n, "the input's first axis is not the batch");
  if (w == nullptr) return map_activation_product(n, *in);
  if (w->dims_size() != 2) return unsupported(n, "B is an initializer of rank " + std::to_string(w->dims_size()) + ", not 2");
  const std::int64_t k = w->dims(0), out = w->dims(1);
  if (k != in->back()) return unsupported(n, "B's rows do not match the input's last axis");
  Attributes a;
  a.out_features = out;
  a.bias = false;  // an Add of a bias right after it is folded in (map_add)
  add_linear(n, a, k, w->name(), transposed(floats(*w), k, out));
}

// A MatMul of two activations: the matmul op. ONNX aligns the full shapes on the right, batch
// axes included; hwprof aligns the per-sample shapes and keeps the batch apart. The two agree
// when both have one rank, which is what is mapped.
void Importer::map_activation_product(const onnx::NodeProto& n, const Shape& a) {
  const auto b = is_activation(n.input(1)) ? sample_shape(n.input(1)) : std::nullopt;
  if (!b) return unsupported(n, "B is neither an initializer nor an activation whose first axis is the batch");
  if (a.size() < 2 || b->size() < 2 || a.size() != b->size() || fold_of(n.input(0)) != fold_of(n.input(1))) {
    return unsupported(n, "a product of two activations of per-sample shapes " + format_shape(a) + " and " + format_shape(*b) +
                              " (mapped: one rank, at least 2 axes besides the batch)");
  }
  add_node(n, OpKind::matmul, {values_.at(n.input(0)).node, values_.at(n.input(1)).node});
}

// A linear layer with weight [out, k]. A weight equal to an earlier embedding's or linear's is
// that layer's, shared (GPT-2's lm_head tied to wte: PyTorch's exporter writes the tied weight
// again, transposed, as a folded constant): the layer is tied_to it and its weight is counted
// once. Equality of every value is the test; a constant weight (all zeros) is never taken as
// shared.
void Importer::add_linear(const onnx::NodeProto& n, Attributes a, std::int64_t k, const std::string& weight_name, std::vector<float> weight) {
  const std::int64_t out = a.out_features;
  const bool constant_weight = std::all_of(weight.begin(), weight.end(), [&](float v) { return v == weight.front(); });
  for (int owner : weight_owners_) {
    const Node& o = graph_.nodes[static_cast<std::size_t>(owner)];
    const InitialValue* w = nullptr;
    for (const InitialValue& v : o.initial_values) {
      if (v.name == "weight") w = &v;
    }
    if (constant_weight || w == nullptr || w->shape != Shape{out, k} || *w->data != weight) continue;
    a.tied_to = owner;
    add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
    return;
  }
  add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
  graph_.nodes.back().initial_values.push_back(initial("weight", weight_name, {out, k}, std::move(weight)));
  own_weight(static_cast<int>(graph_.nodes.size()) - 1);
}

// BatchNormalization onto the batch norm over the input's spatial axes (ops/normalization.cpp:
// [N, C] or [N, C, L] batchnorm1d, [N, C, H, W] batchnorm2d, [N, C, D, H, W] batchnorm3d), with
// its four vectors.
void Importer::map_batchnorm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const ops::NormalizationDefinition* norm =
      in && !in->empty() ? ops::normalization_for(ops::NormStatistics::per_channel, static_cast<int>(in->size()) - 1) : nullptr;
  if (norm == nullptr) {
    std::string inputs;
    for (const ops::NormalizationDefinition& d : ops::normalization_definitions()) {
      if (d.statistics == ops::NormStatistics::per_channel)
        inputs += (inputs.empty() ? "" : " or ") + batched_layout(d.spatial_axes) + " (" + std::string(op_name(d.kind)) + ")";
    }
    return unsupported(n, "only BatchNormalization of " + inputs + " inputs is mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  }
  if (n.output_size() > 1) return unsupported(n, "a training-mode BatchNormalization (running-statistics outputs) is not mapped");
  const onnx::TensorProto* parts[4] = {};
  for (int i = 0; i < 4; ++i) {
    parts[i] = n.input_size() > i + 1 ? constant(n.input(i + 1)) : nullptr;
    if (parts[i] == nullptr) return unsupported(n, "scale, B, mean and var must be initializers");
  }
  Attributes a;
  a.eps = attr_float(n, "epsilon", 1e-5f);
  for (int i = 0; i < 4; ++i) {
    const Dims dims(parts[i]->dims().begin(), parts[i]->dims().end());
    if (product(dims) != (*in)[0]) {
      fail(node_label(n) + ": input '" + common::printable_name(parts[i]->name()) + "' has shape " + dims_text(dims) +
           "; it needs one value per channel (" + std::to_string((*in)[0]) + ")");
    }
  }
  add_node(n, norm->kind, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int i = 0; i < 4; ++i) node.initial_values.push_back(initial(names[i], parts[i]->name(), {(*in)[0]}, floats(*parts[i])));
}

// MaxPool and AveragePool onto the pooling op of that reduction over the input's spatial axes
// (ops/pooling.cpp: [N, C, L] maxpool1d, avgpool1d; [N, C, H, W] maxpool2d, avgpool2d;
// [N, C, D, H, W] maxpool3d, avgpool3d).
void Importer::map_pool(const onnx::NodeProto& n, ops::PoolReduction reduction) {
  const auto in = per_sample(n.input(0));
  const ops::PoolingDefinition* pool = in ? ops::pooling_for(reduction, static_cast<int>(in->size()) - 1) : nullptr;
  if (pool == nullptr)
    return unsupported(n, "only pooling of " + pooled_inputs(reduction) + " inputs is mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  if (n.output_size() > 1 && !n.output(1).empty()) return unsupported(n, "MaxPool's Indices output is not mapped");
  const std::size_t axes = in->size() - 1;
  const bool average = reduction == ops::PoolReduction::average;
  const OpKind op = pool->kind;
  Attributes a;
  const Dims kernel = attr_ints(n, "kernel_shape");
  if (kernel.size() != axes) return unsupported(n, "kernel_shape must have " + std::to_string(axes) + " values (a " + axes_word(axes) + " window)");
  const auto strides = spatial_attr(n, "strides", axes, 1);  // ONNX's default stride is 1, not the kernel
  if (!strides)
    return unsupported(n, "strides " + dims_text(attr_ints(n, "strides")) + " needs one value per spatial axis (" + std::to_string(axes) + ")");
  // MaxPool's dilations are PyTorch's MaxPoolNd's; an AveragePool's (opset 19) have no PyTorch
  // counterpart.
  const auto dilations = spatial_attr(n, "dilations", axes, 1);
  if (!dilations)
    return unsupported(n, "dilations " + dims_text(attr_ints(n, "dilations")) + " needs one value per spatial axis (" + std::to_string(axes) + ")");
  if (average && std::any_of(dilations->begin(), dilations->end(), [](std::int64_t d) { return d != 1; }))
    return unsupported(n, "dilated average pooling is not mapped (PyTorch's AvgPool has no dilation)");
  a.ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  std::string why;
  auto pads = symmetric_pads(n, *in, kernel, *strides, *dilations, &why);
  if (!pads) return unsupported(n, why);
  set_pool_window(*pool, kernel, *strides, *pads, *dilations, a);
  const auto nonzero = [](const Dims& v) { return std::any_of(v.begin(), v.end(), [](std::int64_t p) { return p != 0; }); };
  const bool padded = nonzero(*pads);
  if (const Dims extra = take_pad(n.input(0), axes); nonzero(extra)) {
    // Zeros padded explicitly are averaged in: count_include_pad semantics, hwprof's.
    if (!average || (padded && attr_int(n, "count_include_pad", 0) == 0)) {
      return unsupported(n, "its input is zero-padded by a Pad node, which only a Conv or an AveragePool can take in");
    }
    for (std::size_t i = 0; i < axes; ++i) (*pads)[i] += extra[i];
    set_pool_window(*pool, kernel, *strides, *pads, *dilations, a);
    return (void)add_node(n, op, {values_.at(n.input(0)).node}, a);
  }
  if (average && padded && attr_int(n, "count_include_pad", 0) == 0) {
    return unsupported(n, "padded average pooling without count_include_pad (hwprof divides by the padded window, as PyTorch's default)");
  }
  if (!average && attr_int(n, "storage_order", 0) != 0) return unsupported(n, "storage_order 1 is not mapped");
  add_node(n, op, {values_.at(n.input(0)).node}, a);
}

// The [P, D] table whose rows 0..T-1 `value` gathers, T the activation `act`'s length
// (position ids made by torch.arange(x.shape[1]): Gather(W, Unsqueeze(Range(0, T, 1)))), or null.
const onnx::TensorProto* Importer::position_lookup(const std::string& value, const std::string& act) const {
  const auto shape = per_sample(act);
  auto producer = [&](const std::string& v, const char* op) -> const onnx::NodeProto* {
    auto it = producer_.find(v);
    return it != producer_.end() && onnx_node(it->second).op_type() == op ? &onnx_node(it->second) : nullptr;
  };
  const onnx::NodeProto* gather = producer(value, "Gather");
  if (!shape || shape->size() != 2 || gather == nullptr || attr_int(*gather, "axis", 0) != 0) return nullptr;
  const onnx::TensorProto* table = constant(gather->input(0));
  if (table == nullptr || table->dims_size() != 2 || table->dims(1) != (*shape)[1] || table->dims(0) < (*shape)[0]) return nullptr;
  std::string ids = gather->input(1);
  if (const onnx::NodeProto* u = producer(ids, "Unsqueeze")) ids = u->input(0);
  const onnx::NodeProto* range = producer(ids, "Range");
  if (range == nullptr || range->input_size() != 3 || scalar(range->input(0)) != 0.0 || scalar(range->input(2)) != 1.0) return nullptr;
  // The limit: T itself, or the size of an axis that is T (x.shape[1]), perhaps cast.
  std::string limit = range->input(1);
  if (const onnx::NodeProto* c = producer(limit, "Cast")) limit = c->input(0);
  if (const auto t = scalar(limit)) return *t == static_cast<double>((*shape)[0]) ? table : nullptr;
  const onnx::NodeProto* axis = producer(limit, "Gather");
  const onnx::NodeProto* of = axis != nullptr ? producer(axis->input(0), "Shape") : nullptr;
  const auto k = axis != nullptr ? scalar(axis->input(1)) : std::nullopt;
  if (of == nullptr || !k) return nullptr;
  const Dims& d = dims_of(of->input(0));
  const auto index = static_cast<std::size_t>(*k);
  return index < d.size() && d[index] == (*shape)[0] ? table : nullptr;
}

void Importer::map_add(const onnx::NodeProto& n) {
  const std::string& x = n.input(0);
  const std::string& y = n.input(1);
  if (is_activation(x) && is_activation(y)) return map_binary(n, OpKind::add);
  // A bias after a MatMul (PyTorch exports nn.Linear on 3-D inputs as MatMul + Add).
  const std::string& act = is_activation(x) ? x : y;
  if (const onnx::TensorProto* table = position_lookup(is_activation(x) ? y : x, act)) {
    // Hugging Face's x + wpe(arange(T)): the first T rows of a [P, D] table, counted whole.
    Attributes a;
    a.num_positions = table->dims(0);
    add_node(n, OpKind::pos_embedding, {values_.at(act).node}, a);
    graph_.nodes.back().initial_values.push_back(initial("weight", table->name(), {table->dims(0), table->dims(1)}, floats(*table)));
    const std::string& t = table->name();  // "wpe.weight": the layer is "wpe"
    name_after_parameter(t.size() > 7 && t.compare(t.size() - 7, 7, ".weight") == 0 ? t.substr(0, t.size() - 7) : t);
    return;
  }
  const onnx::TensorProto* c = constant(is_activation(x) ? y : x);
  const Value& v = values_.at(act);
  if (c != nullptr && v.node >= 0 && use_count(act) == 1) {
    Node& producer = graph_.nodes[static_cast<std::size_t>(v.node)];
    if (producer.op == OpKind::linear && !producer.attrs.bias && product(Dims(c->dims().begin(), c->dims().end())) == producer.attrs.out_features) {
      producer.attrs.bias = true;
      producer.initial_values.push_back(initial("bias", c->name(), {producer.attrs.out_features}, floats(*c)));
      alias(n, act);
      return;
    }
  }
  // A learned position embedding added to [batch, T, D] (ViT's x + self.pos_embedding); not a
  // tensor the graph computes (an evaluated mask), unless it is a parameter's view.
  const auto as = per_sample(act);
  const bool computed = evaluated_.count(is_activation(x) ? y : x) != 0 && c != nullptr && initializers_.count(c->name()) == 0;
  if (c != nullptr && !computed && as && as->size() == 2) {
    Dims cd(c->dims().begin(), c->dims().end());
    if (cd.size() == 3 && cd[0] == 1) cd.erase(cd.begin());
    if (cd == Dims(as->begin(), as->end())) {
      Attributes a;
      a.num_positions = (*as)[0];
      add_node(n, OpKind::pos_embedding, {v.node}, a);
      graph_.nodes.back().initial_values.push_back(initial("weight", c->name(), {cd[0], cd[1]}, floats(*c)));
      name_after_parameter(c->name());
      return;
    }
  }
  if (c != nullptr && map_relative_position_bias(n, act, *c)) return;
  map_operand(n, OpKind::add);
}

// Swin's relative position bias, as PyTorch's exporter writes it: the gathered
// relative_position_bias_table[relative_position_index], folded into a constant [1, heads, N, N]
// (or a Gather the importer evaluates), added to the scores [..., heads, N, N]. Such a constant
// has one value per head and relative offset of two positions in a wh × ww window (N = wh·ww):
// where that holds, it is a rel_pos_bias layer whose table [(2·wh − 1)·(2·ww − 1), heads] is
// recovered from it, counted as the module's parameter (docs/onnx.md, "How ops map", on
// windowed attention). A bias that depends on i − j alone (ALiBi's slopes, a causal mask, a
// table of one value) fits every window, since i − j = ww·(row offset) + (column offset): it is
// not taken, and nor are windows of one row or column. The most nearly square window that fits
// is taken.
bool Importer::map_relative_position_bias(const onnx::NodeProto& n, const std::string& act, const onnx::TensorProto& c) {
  const auto in = sample_shape(act);
  Dims cd(c.dims().begin(), c.dims().end());
  if (!in || in->size() < 3 || c.data_type() != onnx::TensorProto_DataType_FLOAT) return false;
  if (cd.size() == 4 && cd[0] == 1) cd.erase(cd.begin());
  const std::int64_t n_pos = in->back();
  const std::int64_t heads = (*in)[in->size() - 3];
  if (cd != Dims{heads, n_pos, n_pos} || (*in)[in->size() - 2] != n_pos || n_pos < 4) return false;
  const std::vector<float> bias = floats(c);
  bool by_difference = true;
  for (std::int64_t h = 0; h < heads && by_difference; ++h) {
    for (std::int64_t i = 1; i < n_pos && by_difference; ++i) {
      for (std::int64_t j = 1; j < n_pos && by_difference; ++j) {
        const auto at = [&](std::int64_t a, std::int64_t b) { return bias[static_cast<std::size_t>((h * n_pos + a) * n_pos + b)]; };
        by_difference = at(i, j) == at(i - 1, j - 1);
      }
    }
  }
  if (by_difference) return false;
  for (std::int64_t wh = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n_pos))); wh >= 2; --wh) {
    if (n_pos % wh != 0 || n_pos / wh < 2) continue;
    for (const Pair window : {Pair{wh, n_pos / wh}, Pair{n_pos / wh, wh}}) {
      const std::int64_t rows = (2 * window.h - 1) * (2 * window.w - 1);
      std::vector<float> table(static_cast<std::size_t>(rows * heads), 0.0f);
      std::vector<char> seen(table.size(), 0);
      bool fits = true;
      for (std::int64_t h = 0; h < heads && fits; ++h) {
        for (std::int64_t i = 0; i < n_pos && fits; ++i) {
          for (std::int64_t j = 0; j < n_pos && fits; ++j) {
            const std::int64_t r = rel_pos_row(i, j, window.h, window.w);
            const auto at = static_cast<std::size_t>(r * heads + h);
            const float v = bias[static_cast<std::size_t>((h * n_pos + i) * n_pos + j)];
            if (seen[at] == 0) {
              table[at] = v;
              seen[at] = 1;
            }
            fits = table[at] == v;
          }
        }
      }
      if (!fits) continue;
      Attributes a;
      a.window = window;
      add_node(n, OpKind::rel_pos_bias, {values_.at(act).node}, a);
      graph_.nodes.back().initial_values.push_back(initial("table", c.name(), {rows, heads}, std::move(table)));
      // Named after the bias the module adds (torchvision's attn.relative_position_bias_table).
      const std::string scope = module_path(scope_segments(n.name()));
      if (!scope.empty()) name_after_parameter(scope + ".relative_position_bias");
      return true;
    }
  }
  return false;
}

// Add, Sub, Mul or Div of two activations, broadcast as NumPy does: both [batch, ...] of one
// rank, each axis equal or 1 in one of them (a squeeze-and-excitation block's x * s).
void Importer::map_binary(const onnx::NodeProto& n, OpKind op) {
  const std::string& x = n.input(0);
  const std::string& y = n.input(1);
  if (!is_activation(x) || !is_activation(y)) return map_operand(n, op);
  const auto sx = sample_shape(x), sy = sample_shape(y);
  bool broadcastable = sx && sy && sx->size() == sy->size() && fold_of(x) == fold_of(y);
  for (std::size_t d = 0; broadcastable && d < sx->size(); ++d) broadcastable = (*sx)[d] == (*sy)[d] || (*sx)[d] == 1 || (*sy)[d] == 1;
  if (!broadcastable) {
    return unsupported(n, "only inputs of one rank whose axes are equal or 1 are mapped (broadcast), got " + dims_text(dims_of(x)) + " and " +
                              dims_text(dims_of(y)));
  }
  add_node(n, op, {values_.at(x).node, values_.at(y).node});
}

// Add, Sub, Mul or Div of an activation and a constant tensor broadcast to it: input
// normalisation's (x - mean) / std, a scale by 0.5, ConvNeXt's layer scale. An initializer
// named by the exporter after a module's tensor (not "onnx::...") is taken as a learned
// parameter (PyTorch writes nn.Parameter and registered buffers alike, by name); a Constant
// node's value or an "onnx::" initializer (a folded Python constant) is a constant, a buffer.
void Importer::map_operand(const onnx::NodeProto& n, OpKind op) {
  const bool first = is_activation(n.input(0));
  const std::string& x = first ? n.input(0) : n.input(1);
  const onnx::TensorProto* c = constant(first ? n.input(1) : n.input(0));
  if (c == nullptr || c->data_type() != onnx::TensorProto_DataType_FLOAT) {
    return unsupported(n, "the other operand is neither a layer's output nor a float32 constant");
  }
  if (const ops::BinaryDefinition* binary = ops::binary_definition(op); !first && binary != nullptr && !binary->commutes) {
    return unsupported(n, "a constant " + std::string(binary->between) + " an activation is not mapped");
  }
  const auto in = sample_shape(x);
  if (!in) return unsupported(n, "the activation's shape " + dims_text(dims_of(x)) + " is not [batch, ...] with known sizes");
  // Right-aligned to the full input [batch, ...]; its batch axis must be 1 (one tensor for all
  // samples). Of a folded input [batch·f, ...] (per sample [f, ...]) that axis stays, as 1 (or
  // f, with a batch of 1).
  Dims cd(c->dims().begin(), c->dims().end());
  if (fold_of(x) == 0 && (cd.size() > in->size() + 1 || (cd.size() == in->size() + 1 && cd[0] != 1))) {
    return unsupported(n, "the constant " + dims_text(cd) + " does not broadcast to " + dims_text(dims_of(x)) + " without widening it");
  }
  if (cd.size() == in->size() + 1) cd.erase(cd.begin());
  if (cd.size() > in->size()) {
    return unsupported(n, "the constant " + dims_text(cd) + " does not broadcast to " + dims_text(dims_of(x)) + " without widening it");
  }
  Shape operand(in->size() - cd.size(), 1);
  operand.insert(operand.end(), cd.begin(), cd.end());
  for (std::size_t d = 0; d < operand.size(); ++d) {
    if (operand[d] != (*in)[d] && operand[d] != 1) {
      return unsupported(n, "the constant " + dims_text(Dims(c->dims().begin(), c->dims().end())) + " does not broadcast to " +
                                dims_text(dims_of(x)) + " without widening it");
    }
  }
  Attributes a;
  a.operand = operand;
  a.operand_trainable = initializers_.count(c->name()) != 0 && c->name().rfind("onnx::", 0) != 0;
  add_node(n, op, {values_.at(x).node}, a);
  graph_.nodes.back().initial_values.push_back(initial(a.operand_trainable ? "weight" : "operand", c->name(), operand, floats(*c)));
  if (a.operand_trainable) name_after_parameter(c->name());  // ConvNeXt's features.1.0.layer_scale
}

void Importer::map_clip(const onnx::NodeProto& n) {
  auto bound = [&](int i, float fallback) -> std::optional<float> {
    if (n.input_size() <= i || n.input(i).empty()) return fallback;
    const onnx::TensorProto* t = constant(n.input(i));
    if (t == nullptr) return std::nullopt;
    const std::vector<float> v = floats(*t);
    return v.size() == 1 ? std::optional<float>(v[0]) : std::nullopt;
  };
  const auto lo = bound(1, -3.4e38f), hi = bound(2, 3.4e38f);
  if (lo && hi && *lo == 0.0f && *hi == 6.0f) return (void)add_node(n, OpKind::relu6, {values_.at(n.input(0)).node});
  if (lo && hi && *lo == 0.0f && *hi >= 3.4e38f) return (void)add_node(n, OpKind::relu, {values_.at(n.input(0)).node});
  unsupported(n, "only Clip(0, 6) (ReLU6) and Clip(0, ∞) (ReLU) are mapped");
}

void Importer::map_reshape_like(const onnx::NodeProto& n) {
  const auto in = sample_shape(n.input(0));
  const auto out = sample_shape(n.output(0));
  if (!in || !out) {
    return unsupported(n, "the output " + dims_text(dims_of(n.output(0))) + " neither keeps the batch as its first axis (batch " +
                              std::to_string(batch_) + ") nor folds it into that axis's outermost factor, or is unknown");
  }
  if (*in == *out) return alias(n, n.input(0));
  Attributes a;
  if (out->size() == 1) return (void)add_node(n, OpKind::flatten, {values_.at(n.input(0)).node}, a);
  a.shape = *out;
  add_node(n, OpKind::reshape, {values_.at(n.input(0)).node}, a);
}

// ReduceSum and ReduceMean onto `reduce`, except a mean over the spatial axes [2, 3] of
// [N, C, H, W]: that is global average pooling (x.mean([2, 3]), MnasNet's head), kept on
// adaptive_avgpool2d (+ flatten when keepdims is 0) as before; and so is a mean over [2, 3, 4]
// of [N, C, D, H, W], onto adaptive_avgpool3d (a video model's head written by hand). The axes are an attribute
// (ReduceMean before opset 18, ReduceSum before 13) or, for ReduceSum from opset 13, the
// second input, which must be a constant. An empty or absent axes list reduces every axis, the
// batch's included, and the batch axis is never reducible in a layer: both are refused.
void Importer::map_reduce(const onnx::NodeProto& n, ReduceMode mode) {
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input's first axis is not the batch (its shape " + dims_text(dims_of(n.input(0))) + ")");
  const bool axes_input = n.input_size() > 1 && !n.input(1).empty();
  std::vector<std::int64_t> axes = attr_ints(n, "axes");
  if (axes_input) {
    const onnx::TensorProto* t = constant(n.input(1));
    if (t == nullptr) return unsupported(n, "input axes ('" + common::printable_name(n.input(1)) + "') is computed in the graph, not a constant");
    axes = integers(*t);
  }
  std::string source = axes_input ? "input axes [" : "attribute axes [";
  for (std::size_t i = 0; i < axes.size(); ++i) source += (i > 0 ? ", " : "") + std::to_string(axes[i]);  // negative ones as written
  source += "]";
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes", 0) != 0)
      return unsupported(n, "attribute noop_with_empty_axes 1 with no axes (an identity) is not mapped");
    return unsupported(n, std::string("no axes: it reduces every axis, the batch's included; a layer cannot reduce over the batch axis"));
  }
  const auto rank = static_cast<std::int64_t>(in->size()) + 1;
  Attributes a;
  a.reduce_mode = mode;
  a.keepdims = attr_int(n, "keepdims", 1) != 0;
  for (std::int64_t axis : axes) {
    const std::int64_t d = axis < 0 ? axis + rank : axis;
    if (d < 0 || d >= rank) return unsupported(n, source + ": axis " + std::to_string(axis) + " is out of range");
    if (d == 0) return unsupported(n, source + " includes the batch axis 0; a layer cannot reduce over the batch");
    a.axes.push_back(d - 1);
  }
  std::vector<std::int64_t> sorted = a.axes;
  std::sort(sorted.begin(), sorted.end());
  // Every spatial axis (1 .. rank − 1 of the per-sample input) of an input some adaptive pool takes.
  std::vector<std::int64_t> spatial_axes(in->size() - 1);
  std::iota(spatial_axes.begin(), spatial_axes.end(), 1);
  const ops::PoolingDefinition* global = ops::pooling_for(ops::PoolReduction::adaptive_average, static_cast<int>(in->size()) - 1);
  if (mode == ReduceMode::mean && !axes_input && global != nullptr && sorted == spatial_axes) return map_global_mean(n, *global);
  if (!a.keepdims && static_cast<std::int64_t>(a.axes.size()) == rank - 1)
    return unsupported(n, source + " with keepdims 0 leaves a per-sample scalar, which hwprof's layers do not take");
  add_node(n, OpKind::reduce, {values_.at(n.input(0)).node}, a);
}

// A mean over [2, 3] of [N, C, H, W] (or [2, 3, 4] of [N, C, D, H, W]): global average pooling.
void Importer::map_global_mean(const onnx::NodeProto& n, const ops::PoolingDefinition& global) {
  const int pool = add_node(n, global.kind, {values_.at(n.input(0)).node});
  if (attr_int(n, "keepdims", 1) != 0) return;
  Node& pooled = graph_.nodes[static_cast<std::size_t>(pool)];
  expected.erase(pooled.name);  // ONNX's output is the flattened one
  Node flat;
  flat.name = pooled.name + ".flatten";
  flat.op = OpKind::flatten;
  flat.inputs = {pool};
  flat.spec_pointer = describe(n) + " (keepdims 0)";
  names_taken_[flat.name] = 1;
  if (const auto out = per_sample(n.output(0))) expected[flat.name] = *out;
  graph_.nodes.push_back(std::move(flat));
  set_output(n, static_cast<int>(graph_.nodes.size()) - 1);
}

void Importer::map_transpose(const onnx::NodeProto& n) {
  bool folded = false;
  const auto in = sample_shape(n.input(0), &folded);
  std::vector<std::int64_t> perm = attr_ints(n, "perm");
  if (!in) return unsupported(n, "the input's first axis is not the batch");
  if (perm.empty()) return unsupported(n, "a Transpose without perm reverses the batch axis");
  if (perm == std::vector<std::int64_t>{1, 0, 2}) {
    // [N, T, C] to ONNX's sequence-first [T, N, C], as PyTorch writes batch_first before an
    // LSTM or GRU: a view of the same node, which only a recurrent layer may read (onnx_recurrent.cpp).
    values_[n.output(0)] = values_.at(n.input(0));
    sequence_views_[n.output(0)] = SequenceView{SequenceView::Kind::sequence, values_.at(n.input(0)).node, 1, 0, {}};
    return;
  }
  if (perm[0] != 0) {
    if (moves_batch_for_gathers(n, perm)) return;
    return unsupported(n, "perm " + dims_text(perm) + " moves the batch axis");
  }
  Attributes a;
  if (folded) a.perm.push_back(0);  // the windows axis stays first
  for (std::size_t i = 1; i < perm.size(); ++i) a.perm.push_back(perm[i] - 1 + (folded ? 1 : 0));
  add_node(n, OpKind::transpose, {values_.at(n.input(0)).node}, a);
}

void Importer::map_axis_op(const onnx::NodeProto& n, OpKind op) {
  const Dims& d = dims_of(n.input(0));
  const auto rank = static_cast<std::int64_t>(d.size());
  // A softmax (ops/softmax.cpp) normalises along the last axis by default from opset 13 on, and
  // flattens the axes from `axis` on before it.
  const bool softmax = ops::softmax_definition(op) != nullptr;
  std::int64_t axis = attr_int(n, "axis", softmax ? (opset_ >= 13 ? -1 : 1) : 0);
  if (axis < 0) axis += rank;
  if (axis <= 0 || axis >= rank) return unsupported(n, "axis " + std::to_string(attr_int(n, "axis", 0)) + " is the batch axis or out of range");
  if (softmax && opset_ < 13 && axis != rank - 1) {
    return unsupported(n, "before opset 13 " + n.op_type() + " flattens the axes from `axis` on; only the last axis is mapped");
  }
  std::vector<int> inputs;
  std::vector<std::string> read;  // the inputs, a Concat's empty ones left out
  for (const std::string& in : n.input()) {
    if (!is_activation(in)) return unsupported(n, "an input is a constant, not an activation");
    if (op == OpKind::concat && empty_values_.count(in) != 0) continue;
    inputs.push_back(values_.at(in).node);
    read.push_back(in);
  }
  if (read.empty()) return unsupported(n, "every input is empty");
  if (op == OpKind::concat && read.size() == 1) return alias(n, read[0]);
  // Folded inputs ([batch·f, ...]) keep f as their first per-sample axis; all alike or none.
  const std::int64_t fold = fold_of(read[0]);
  for (const std::string& in : read) {
    if (fold_of(in) != fold) return unsupported(n, "its inputs fold the batch into their first axis differently");
  }
  Attributes a;
  a.axis = axis - 1 + fold;
  add_node(n, op, inputs, a);
}

// Gather: an embedding (a weight initializer indexed by token ids), the selection of one
// position (ViT's class token: x[:, 0]), or of several (map_gather_activation).
void Importer::map_gather(const onnx::NodeProto& n) {
  if (const auto m = moved_.find(n.input(0)); m != moved_.end()) return map_moved_gather(n, m->second);
  const std::int64_t axis = attr_int(n, "axis", 0);
  const onnx::TensorProto* w = constant(n.input(0));
  if (w != nullptr && is_activation(n.input(1))) {
    if (axis != 0 || w->dims_size() != 2) return unsupported(n, "only a Gather of rows of a 2-D weight (an embedding) is mapped");
    if (values_.at(n.input(1)).node != kModelInput && graph_.dtype_of(values_.at(n.input(1)).node) != DType::i32) {
      return unsupported(n, "the indices are not the model's token ids");
    }
    Attributes a;
    a.num_embeddings = w->dims(0);
    a.embedding_dim = w->dims(1);
    add_node(n, OpKind::embedding, {values_.at(n.input(1)).node}, a);
    graph_.nodes.back().initial_values.push_back(initial("weight", w->name(), {w->dims(0), w->dims(1)}, floats(*w)));
    own_weight(static_cast<int>(graph_.nodes.size()) - 1);
    return;
  }
  if (!is_activation(n.input(0))) return unsupported(n, "neither an embedding lookup nor a selection from an activation");
  const Dims& d = dims_of(n.input(0));
  const auto rank = static_cast<std::int64_t>(d.size());
  const std::int64_t ax = axis < 0 ? axis + rank : axis;
  const auto index = scalar(n.input(1));
  const onnx::TensorProto* it = constant(n.input(1));
  if (it != nullptr && it->dims_size() > 0) return map_gather_activation(n);
  if (!index || it == nullptr) return unsupported(n, "the indices are computed in the graph, not a constant");
  if (ax <= 0 || ax >= rank) return unsupported(n, "the Gather's axis is the batch axis or out of range");
  Attributes a;
  a.axis = ax - 1;
  const std::int64_t size = d[static_cast<std::size_t>(ax)];
  if (!(*index >= static_cast<double>(-size) && *index < static_cast<double>(size)) || *index != std::floor(*index)) {
    fail(node_label(n) + ": index " + std::to_string(*index) + " is out of range for axis " + std::to_string(ax) + " of size " +
         std::to_string(size) + " (valid: " + std::to_string(-size) + " to " + std::to_string(size - 1) + ")");
  }
  a.index = static_cast<std::int64_t>(*index);
  add_node(n, OpKind::select, {values_.at(n.input(0)).node}, a);
}

void Importer::map_layernorm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in || in->empty()) return unsupported(n, "the input's first axis is not the batch");
  std::int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += static_cast<std::int64_t>(in->size()) + 1;
  if (axis != static_cast<std::int64_t>(in->size())) return unsupported(n, "only a LayerNormalization of the last axis is mapped (nn.LayerNorm(D))");
  if (n.output_size() > 1 &&
      std::any_of(n.output().begin() + 1, n.output().end(), [&](const std::string& o) { return !o.empty() && use_count(o) > 0; })) {
    return unsupported(n, "its Mean or InvStdDev output is used");
  }
  const onnx::TensorProto* scale = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  const onnx::TensorProto* bias = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (scale == nullptr || bias == nullptr) return unsupported(n, "scale and bias must both be initializers (nn.LayerNorm with elementwise_affine)");
  const std::int64_t d = in->back();
  if (product(Dims(scale->dims().begin(), scale->dims().end())) != d || product(Dims(bias->dims().begin(), bias->dims().end())) != d) {
    return unsupported(n, "scale or bias is not [" + std::to_string(d) + "]");
  }
  Attributes a;
  a.eps = attr_float(n, "epsilon", 1e-5f);
  add_node(n, ops::normalization_for(ops::NormStatistics::per_row, 0)->kind, {values_.at(n.input(0)).node}, a);
  graph_.nodes.back().initial_values.push_back(initial("weight", scale->name(), {d}, floats(*scale)));
  graph_.nodes.back().initial_values.push_back(initial("bias", bias->name(), {d}, floats(*bias)));
}

// PyTorch exports avg_pool2d with count_include_pad (DenseNet's transitions) as an explicit
// zero Pad before the AveragePool, padded or not; F.pad before a Conv is the same. A zero Pad
// of nothing is dropped; a symmetric spatial one is folded into the Conv or AveragePool after it.
// Any other Pad of an activation is a pad layer (map_pad_layer).
void Importer::map_pad(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input's first axis is not the batch (its shape " + dims_text(dims_of(n.input(0))) + ")");
  const auto pads = n.input_size() > 1 ? int_values(n.input(1)) : std::nullopt;
  if (!pads) return unsupported(n, "input pads is computed in the graph from values hwprof cannot evaluate (not a constant or shape arithmetic)");
  if (n.input_size() > 3 && !n.input(3).empty()) return unsupported(n, "input axes (padding of chosen axes) is not mapped");
  if (pads->size() != 2 * (in->size() + 1))
    return unsupported(n, "input pads has " + std::to_string(pads->size()) + " values; the input " + dims_text(dims_of(n.input(0))) + " needs " +
                              std::to_string(2 * (in->size() + 1)));
  if (std::all_of(pads->begin(), pads->end(), [](std::int64_t x) { return x == 0; })) return alias(n, n.input(0));
  bool zeros = attr_string(n, "mode", "constant") == "constant";
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const onnx::TensorProto* v = constant(n.input(2));
    zeros = zeros && v != nullptr && floats(*v) == std::vector<float>{0.0f};
  }
  const std::vector<std::int64_t>& p = *pads;
  const std::size_t r = in->size() + 1;
  bool foldable = zeros && (r == 4 || r == 5) && p[0] == 0 && p[1] == 0 && p[r] == 0 && p[r + 1] == 0 && !is_graph_output(n.output(0));
  for (std::size_t i = 2; foldable && i < r; ++i) foldable = p[i] == p[r + i] && p[i] >= 0;
  for (const auto& consumer : model_.graph().node()) {
    if (std::find(consumer.input().begin(), consumer.input().end(), n.output(0)) == consumer.input().end()) continue;
    foldable = foldable && (consumer.op_type() == "Conv" || consumer.op_type() == "AveragePool");
  }
  if (!foldable) return map_pad_layer(n, p);
  alias(n, n.input(0));
  pads_[n.output(0)] = Dims(p.begin() + 2, p.begin() + static_cast<std::ptrdiff_t>(r));
}

void Importer::map_global_avgpool(const onnx::NodeProto& n, int x) {
  const auto in = per_sample(n.input(0));
  const ops::PoolingDefinition* pool = in ? ops::pooling_for(ops::PoolReduction::adaptive_average, static_cast<int>(in->size()) - 1) : nullptr;
  if (pool == nullptr) return unsupported(n, "only " + pooled_inputs(ops::PoolReduction::adaptive_average) + " inputs are mapped");
  add_node(n, pool->kind, {x});
}

// Resize (opset 11 on; hwprof reads no earlier opset, so neither Upsample nor Resize-10) of
// [N, C, H, W], in the forms PyTorch's exporter writes F.interpolate: mode "nearest" as
// coordinate_transformation_mode "asymmetric" with nearest_mode "floor" (PyTorch's legacy
// nearest: src = floor(dst / scale)); mode "bilinear" as mode "linear" with "half_pixel" or
// "pytorch_half_pixel" (align_corners=False; PyTorch 1.13 writes "half_pixel") or
// "align_corners". Every other combination computes other coordinates and is refused.
void Importer::map_resize(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in || in->size() != 3)
    return unsupported(n, "only 2-D resizing of [N, C, H, W] inputs is mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  const std::string mode = attr_string(n, "mode", "nearest");
  const std::string coordinates = attr_string(n, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = attr_string(n, "nearest_mode", "round_prefer_floor");
  // The mode's definition (ops/upsample.cpp) names Resize's mode; the coordinates each accepts
  // are PyTorch's exporter's.
  const ops::UpsampleModeDefinition* def = ops::upsample_mode_for_onnx(mode);
  if (def == nullptr) return unsupported(n, "attribute mode '" + common::printable_name(mode) + "': only nearest and linear (bilinear) are mapped");
  Attributes a;
  a.mode = def->mode;
  if (a.mode == UpsampleMode::bilinear) {
    if (coordinates != "half_pixel" && coordinates != "pytorch_half_pixel" && coordinates != "align_corners") {
      return unsupported(n, "attribute coordinate_transformation_mode '" + common::printable_name(coordinates) +
                                "': linear resizing is mapped with half_pixel, pytorch_half_pixel or align_corners (F.interpolate's bilinear)");
    }
    a.align_corners = coordinates == "align_corners";
  } else if (coordinates != "asymmetric" || nearest != "floor") {
    return unsupported(n, "attributes coordinate_transformation_mode '" + common::printable_name(coordinates) + "' and nearest_mode '" +
                              common::printable_name(nearest) +
                              "': nearest resizing is mapped as PyTorch's F.interpolate(mode=\"nearest\") writes it, asymmetric and floor");
  }
  if (attr_int(n, "antialias", 0) != 0) return unsupported(n, "attribute antialias 1 is not mapped");
  if (attr(n, "axes") != nullptr) return unsupported(n, "attribute axes is not mapped (resize all four axes)");
  if (attr_string(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return unsupported(
        n, "attribute keep_aspect_ratio_policy '" + common::printable_name(attr_string(n, "keep_aspect_ratio_policy", "")) + "' is not mapped");
  if (auto problem = resize_output(n, *in, a)) return unsupported(n, *problem);
  add_node(n, OpKind::upsample, {values_.at(n.input(0)).node}, a);
}

// Resize's output: constant scales (the batch and channels scaled by 1), or sizes, constant or
// computed (PyTorch writes Concat(Shape(x)[:2], [oh, ow]), which fold_shape_computations hands
// to ONNX's inference: the output's size is then known).
std::optional<std::string> Importer::resize_output(const onnx::NodeProto& n, const Shape& in, Attributes& a) const {
  const std::string scales = n.input_size() > 2 ? n.input(2) : std::string();
  const std::string sizes = n.input_size() > 3 ? n.input(3) : std::string();
  const onnx::TensorProto* s = scales.empty() ? nullptr : constant(scales);
  if (!scales.empty() && s == nullptr) return "the scales are computed in the graph, not a constant";
  const std::vector<float> factors = s != nullptr ? floats(*s) : std::vector<float>{};
  if (!factors.empty()) {
    if (factors.size() != 4 || factors[0] != 1.0f || factors[1] != 1.0f || !(factors[2] > 0.0f) || !(factors[3] > 0.0f)) {
      std::string text;
      for (float f : factors) text += (text.empty() ? "" : ", ") + std::to_string(f);
      return "scales [" + text + "]: only positive spatial factors, with the batch and channels scaled by 1, are mapped";
    }
    a.scale = {factors[2], factors[3]};
    return std::nullopt;
  }
  if (sizes.empty()) return "neither scales nor sizes is given";
  if (const onnx::TensorProto* t = constant(sizes)) {
    const std::vector<std::int64_t> v = integers(*t);
    if (v.size() != 4 || v[1] != in[0] || v[2] < 1 || v[3] < 1)
      return "sizes " + dims_text(v) + ": only the spatial sizes may change, to positive ones";
    a.size = {v[2], v[3]};
    return std::nullopt;
  }
  const auto out = per_sample(n.output(0));
  if (!out || out->size() != 3 || (*out)[0] != in[0])
    return "the sizes are computed in the graph and the output's size " + dims_text(dims_of(n.output(0))) + " is not known";
  a.size = {(*out)[1], (*out)[2]};
  return std::nullopt;
}

// An element-wise unary op, as its definition maps it (src/ops/elementwise_unary.cpp): attributes
// that must hold fixed values, and the one that carries the op's number.
void Importer::map_unary(const onnx::NodeProto& n, int x) {
  const UnaryDefinition* d = unary_for_onnx(n.op_type());
  if (d == nullptr) return unsupported(n, "no element-wise op is defined for it");
  const OnnxMapping& m = d->onnx;
  std::string fixed, wrong;
  for (const OnnxFixedAttribute& f : m.fixed) {
    const float v = attr_float(n, std::string(f.name).c_str(), static_cast<float>(f.onnx_default));
    fixed += (fixed.empty() ? "" : ", ") + std::string(f.name) + " " + std::to_string(v);
    if (!(std::abs(v - f.value) <= 1e-6)) wrong = "yes";
  }
  if (!wrong.empty()) return unsupported(n, fixed + " (" + std::string(m.why) + ")");
  Attributes a;
  if (!m.parameter.empty()) a.parameter = attr_float(n, std::string(m.parameter).c_str(), static_cast<float>(m.parameter_default));
  add_node(n, d->kind, {x}, a);
}

void Importer::map_flatten(const onnx::NodeProto& n, int x) {
  if (attr_int(n, "axis", 1) != 1) return unsupported(n, "Flatten with axis " + std::to_string(attr_int(n, "axis", 1)) + " (only 1 keeps the batch)");
  add_node(n, OpKind::flatten, {x});
}

void Importer::map_concat(const onnx::NodeProto& n) {
  if (n.input_size() != 2 || kind_of(n.input(0)) != Value::Kind::expanded || !is_activation(n.input(1))) return map_axis_op(n, OpKind::concat);
  // ViT's torch.cat([class_token.expand(n, -1, -1), x], dim=1): a class token.
  const onnx::TensorProto* t = values_.at(n.input(0)).tensor;
  const auto in = per_sample(n.input(1));
  const Dims td(t->dims().begin(), t->dims().end());
  std::int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += 3;
  if (!in || in->size() != 2 || axis != 1 || product(td) != (*in)[1] || td.back() != (*in)[1]) {
    return unsupported(n, "only a class token ([1, 1, D] expanded over the batch, put before [batch, T, D]) is mapped");
  }
  add_node(n, OpKind::cls_token, {values_.at(n.input(1)).node});
  graph_.nodes.back().initial_values.push_back(initial("weight", t->name(), {(*in)[1]}, floats(*t)));
  name_after_parameter(t->name());
}

void Importer::map_dropout(const onnx::NodeProto& n, int x) {
  if (n.output_size() > 1 && !n.output(1).empty() && use_count(n.output(1)) > 0) return unsupported(n, "Dropout's mask output is used");
  Attributes a;
  a.p = attr_float(n, "ratio", 0.5f);
  if (n.input_size() > 1 && !n.input(1).empty()) {
    const onnx::TensorProto* r = constant(n.input(1));
    if (r == nullptr) return unsupported(n, "the ratio is computed in the graph");
    const std::vector<float> ratio = floats(*r);
    if (ratio.size() != 1) return unsupported(n, "the ratio is not one value");
    a.p = ratio[0];
  }
  if (!(a.p >= 0.0f && a.p < 1.0f)) fail(node_label(n) + ": ratio " + std::to_string(a.p) + " is not a probability in [0, 1)");
  add_node(n, OpKind::dropout, {x}, a);
}

// The table map_node reads: one row per ONNX op type, in docs/onnx.md's order, each a line or
// two of dispatch onto the map_* functions above. Its lambdas are members' (they call the
// private map_* functions), so it is a static member function.
std::span<const OnnxOpRule> Importer::op_rules() {
  using In = OnnxOpRule::FirstInput;
  using N = const onnx::NodeProto&;
  using MapFn = decltype(OnnxOpRule::map);
  const auto maps = [](std::string_view type, MapFn map, In first = In::activation) { return OnnxOpRule{type, map, first, {}}; };
  const auto settled = [](std::string_view type, std::string_view how) { return OnnxOpRule{type, nullptr, In::activation, how}; };
  static const std::vector<OnnxOpRule> kRules = [&] {
    std::vector<OnnxOpRule> rules = {
        maps("Conv", [](Importer& m, N n, int) { m.map_conv(n); }),
        maps("ConvTranspose", [](Importer& m, N n, int) { m.map_conv_transpose(n); }),
        maps("Pad", [](Importer& m, N n, int) { m.map_pad(n); }),
        maps("Gemm", [](Importer& m, N n, int) { m.map_gemm(n); }),
        maps("MatMul", [](Importer& m, N n, int) { m.map_matmul(n); }),
        maps("BatchNormalization", [](Importer& m, N n, int) { m.map_batchnorm(n); }),
        maps("LayerNormalization", [](Importer& m, N n, int) { m.map_layernorm(n); }),
        maps("Clip", [](Importer& m, N n, int) { m.map_clip(n); }),
        maps("MaxPool", [](Importer& m, N n, int) { m.map_pool(n, ops::PoolReduction::max); }),
        maps("AveragePool", [](Importer& m, N n, int) { m.map_pool(n, ops::PoolReduction::average); }),
        maps("GlobalAveragePool", [](Importer& m, N n, int x) { m.map_global_avgpool(n, x); }),
        maps("Resize", [](Importer& m, N n, int) { m.map_resize(n); }),
        maps(
            "Concat", [](Importer& m, N n, int) { m.map_concat(n); }, In::any),
        maps(
            "Gather", [](Importer& m, N n, int) { m.map_gather(n); }, In::unread),
        maps("Flatten", [](Importer& m, N n, int x) { m.map_flatten(n, x); }),
        maps("Reshape", [](Importer& m, N n, int) { m.map_reshape_like(n); }),
        maps("Squeeze", [](Importer& m, N n, int) { m.map_reshape_like(n); }),
        maps("Unsqueeze", [](Importer& m, N n, int) { m.map_reshape_like(n); }),
        maps("Transpose", [](Importer& m, N n, int) { m.map_transpose(n); }),
        maps("Dropout", [](Importer& m, N n, int x) { m.map_dropout(n, x); }),
        maps("Identity", [](Importer& m, N n, int) { m.alias(n, n.input(0)); }),
        maps("Slice", [](Importer& m, N n, int) { m.map_slice(n); }),
        maps("Split", [](Importer& m, N n, int) { m.map_split(n); }),
        maps("Expand", [](Importer& m, N n, int) { m.map_expand(n); }),
        maps("Tile", [](Importer& m, N n, int) { m.map_tile(n); }),
        maps(
            "Where", [](Importer& m, N n, int) { m.map_where(n); }, In::unread),
        settled("Constant", "its value is a constant (decode_constants)"),
        settled("Shape", "computes a shape, not a layer"),
        settled("Size", "computes a shape, not a layer"),
    };
    // The element-wise unary ops, each as its definition maps it.
    for (const UnaryDefinition& d : unary_definitions()) {
      if (!d.onnx.type.empty()) rules.push_back(maps(d.onnx.type, [](Importer& m, N n, int x) { m.map_unary(n, x); }));
    }
    // The element-wise binary ops, each as its definition names it (either input may be the
    // constant); an Add is first tried as the patterns an exporter writes as one (map_add).
    for (const ops::BinaryDefinition& d : ops::binary_definitions()) {
      rules.push_back(maps(
          d.onnx,
          [](Importer& m, N n, int) {
            const OpKind op = ops::binary_for_onnx(n.op_type())->kind;
            op == OpKind::add ? m.map_add(n) : m.map_binary(n, op);
          },
          In::any));
    }
    for (const ops::ReduceModeDefinition& d : ops::reduce_modes())
      rules.push_back(maps(d.onnx_type, [](Importer& m, N n, int) { m.map_reduce(n, ops::reduce_mode_for_onnx(n.op_type())->mode); }));
    for (const ops::SoftmaxDefinition& d : ops::softmax_definitions())
      rules.push_back(maps(d.onnx_type, [](Importer& m, N n, int) { m.map_axis_op(n, ops::softmax_for_onnx(n.op_type())->kind); }));
    for (const ops::RecurrentDefinition& d : ops::recurrent_definitions())
      rules.push_back(maps(d.onnx_type, [](Importer& m, N n, int) { m.map_recurrent(n, *ops::recurrent_for_onnx(n.op_type())); }));
    return rules;
  }();
  return kRules;
}

const OnnxOpRule* Importer::op_rule(const std::string& type) {
  for (const OnnxOpRule& rule : op_rules()) {
    if (rule.type == type) return &rule;
  }
  return nullptr;
}

void Importer::map_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return unsupported(n, "operator domain '" + common::printable_name(n.domain()) + "' is not the default ONNX one");
  if (op == "Constant") return;                                     // decode_constants() registered its value
  if (op == "Identity" && constant(n.input(0)) != nullptr) return;  // index_values() aliased it
  // A node none of whose inputs is an activation computes shapes or folds constants: it is not
  // a layer (its outputs are known to ONNX's shape inference where a layer needs them).
  bool any_activation = false, any_unmapped = false;
  for (const std::string& in : n.input()) {
    any_activation |= is_activation(in);
    any_unmapped |= !in.empty() && kind_of(in) == Value::Kind::unmapped;
  }
  const OnnxOpRule* rule = op_rule(op);
  for (const std::string& in : n.input()) {
    if (empty_values_.count(in) != 0 && op != "Concat" && op != "Shape")
      return unsupported(n, "it reads '" + common::printable_name(in) + "', an empty slice, which only a Concat may read");
  }
  if (any_unmapped) {
    // After a node that cannot be mapped: this one is listed too when hwprof has no mapping for
    // its op at all (every unsupported node is named at once), or when the import keeps what it
    // cannot count (it is not counted either); else it is skipped silently.
    if (rule == nullptr) return unsupported(n, "no mapping onto hwprof's layers");
    if (options_.keep_unsupported) {
      std::string from;
      for (const std::string& in : n.input()) {
        if (!in.empty() && kind_of(in) == Value::Kind::unmapped && from.empty()) from = in;
      }
      return unsupported(n, "it reads '" + common::printable_name(from) + "', the output of a node hwprof cannot map");
    }
    for (const std::string& out : n.output()) values_[out].kind = Value::Kind::unmapped;
    return;
  }
  if (reads_sequence_view(n)) return map_sequence_view(n);
  if (op == "Expand" && constant(n.input(0)) != nullptr && evaluated_.count(n.input(0)) == 0 && !any_activation) {
    // A constant broadcast over the batch (ViT's class_token.expand(n, -1, -1)).
    values_[n.output(0)] = Value{Value::Kind::expanded, kModelInput, constant(n.input(0))};
    return;
  }
  if ((!any_activation || op == "Shape" || op == "Size") && evaluate_constant(n)) return;
  if (!any_activation || op == "Shape" || op == "Size") {
    for (const std::string& out : n.output()) values_[out] = Value{Value::Kind::shape_only, kModelInput, nullptr};
    return;
  }
  const OnnxOpRule::FirstInput first = rule != nullptr ? rule->first_input : OnnxOpRule::FirstInput::activation;
  if (first == OnnxOpRule::FirstInput::unread && rule->map != nullptr) return rule->map(*this, n, kModelInput);
  if (first == OnnxOpRule::FirstInput::activation && !is_activation(n.input(0)))
    return unsupported(n, "the first input is a constant, not an activation");
  const int x = values_.at(n.input(0)).node;
  if (rule == nullptr || rule->map == nullptr) return unsupported(n, "no mapping onto hwprof's layers");
  rule->map(*this, n, x);
}

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
