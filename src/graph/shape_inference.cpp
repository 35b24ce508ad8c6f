// Shape rules of every op (docs/model-specs.md, "Ops and attributes"). Shapes are per sample; sizes are checked so
// that no element count overflows 64-bit integers.
#include "graph/shape_inference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/ops.hpp"
#include "ops/window.hpp"

namespace hwprof::graph {
namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Element count, or -1 on overflow.
std::int64_t checked_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0) return d == 0 ? 0 : -1;
    if (n > kInt64Max / d) return -1;
    n *= d;
  }
  return n;
}

struct Outcome {
  Shape shape;
  DType dtype = DType::f32;
  std::string problem;              // empty: fine
  const char* attribute = nullptr;  // the attribute the problem is about, if any
};

Outcome problem(std::string text, const char* attribute = nullptr) {
  Outcome o;
  o.problem = std::move(text);
  o.attribute = attribute;
  return o;
}

Outcome shaped(Shape shape, DType dtype = DType::f32) {
  Outcome o;
  o.shape = std::move(shape);
  o.dtype = dtype;
  return o;
}

std::string str(std::int64_t v) {
  return std::to_string(v);
}

// The output-size formulas use the windows' exact 128-bit arithmetic (ops::Wide, ops::saturate,
// ops/window.hpp): hostile specs give sizes, paddings and kernels near 2^63.
using ops::saturate;
using ops::Wide;

// PyTorch's upsample output size for a scale factor: floor(in × scale), computed in double;
// nullopt past 2^31 (no image is that large, and the product stays exact below it).
std::optional<std::int64_t> upsampled_size(std::int64_t in, double scale) {
  const double out = std::floor(static_cast<double>(in) * scale);
  if (!(out < 2147483648.0)) return std::nullopt;
  return static_cast<std::int64_t>(out);
}

std::string format_factor(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string kind_of(const Shape& s) {
  return format_shape(s);
}

// reduce's output: each axis reduced to 1 (keepdims) or removed. Axes are per-sample: the
// batch axis is not one of them, and a layer cannot reduce over it (every sample would no
// longer have its own output).
Outcome reduced_shape(const Shape& in, const Attributes& a) {
  const auto rank = static_cast<std::int64_t>(in.size());
  if (a.axes.empty()) return problem("needs at least one axis to reduce", "axes");
  std::vector<bool> reduced(in.size(), false);
  for (std::int64_t axis : a.axes) {
    if (axis < -rank || axis >= rank)
      return problem("axis " + str(axis) + " is out of range for a per-sample input " + kind_of(in) + " (valid: " + str(-rank) + " to " +
                         str(rank - 1) + "; the batch dimension is not counted, and a layer cannot reduce over it)",
                     "axes");
    const auto d = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
    if (reduced[d]) return problem("axis " + str(axis) + " is named twice in " + kind_of(a.axes), "axes");
    reduced[d] = true;
  }
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (!reduced[d]) {
      out.push_back(in[d]);
    } else if (a.keepdims) {
      out.push_back(1);
    }
  }
  if (out.empty())
    return problem("reduces every per-sample axis of " + kind_of(in) +
                       " with keepdims false: per-sample scalars are not supported; keep the axes (keepdims true)",
                   "keepdims");
  return shaped(out);
}

// One axis of a slice: ONNX Slice's clamping (opset 13's text), in 128-bit arithmetic so that
// bounds of ±2^63 (the exporter's "to the end") cannot overflow.
SliceRange resolve_slice_axis(std::int64_t size, std::int64_t start, std::int64_t end, std::int64_t step) {
  Wide s = start < 0 ? Wide{start} + size : Wide{start};
  Wide e = end < 0 ? Wide{end} + size : Wide{end};
  Wide count = 0;
  if (step > 0) {
    s = std::clamp<Wide>(s, 0, size);
    e = std::clamp<Wide>(e, 0, size);
    if (e > s) count = (e - s + step - 1) / step;
  } else {
    s = std::clamp<Wide>(s, 0, Wide{size} - 1);
    e = std::clamp<Wide>(e, -1, Wide{size} - 1);
    if (s > e) count = (s - e - Wide{step} - 1) / -Wide{step};
  }
  return SliceRange{static_cast<std::int64_t>(s), step, static_cast<std::int64_t>(count)};
}

// The per-sample axis `axis` names (Python-style), or nullopt when it is out of range.
std::optional<std::size_t> axis_of(std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
}

Outcome sliced_shape(const Shape& in, const Attributes& a, DType dtype) {
  const auto rank = static_cast<std::int64_t>(in.size());
  if (a.axes.empty()) return problem("needs at least one axis", "axes");
  if (a.starts.size() != a.axes.size() || a.ends.size() != a.axes.size() || a.steps.size() != a.axes.size())
    return problem("axes, starts, ends and steps must have one value per axis", "starts");
  std::vector<bool> named(in.size(), false);
  for (std::size_t i = 0; i < a.axes.size(); ++i) {
    const auto d = axis_of(a.axes[i], rank);
    if (!d)
      return problem("axis " + str(a.axes[i]) + " is out of range for a per-sample input " + kind_of(in) + " (valid: " + str(-rank) + " to " +
                         str(rank - 1) + "; the batch dimension is not counted, and a layer cannot slice it)",
                     "axes");
    if (named[*d]) return problem("axis " + str(a.axes[i]) + " is named twice in " + kind_of(a.axes), "axes");
    named[*d] = true;
    if (a.steps[i] == 0) return problem("a step of 0 along axis " + str(a.axes[i]), "steps");
  }
  Shape out = in;
  const std::vector<SliceRange> ranges = slice_ranges(in, a);
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (ranges[d].count < 1)
      return problem("leaves axis " + str(static_cast<std::int64_t>(d)) + " of " + kind_of(in) + " empty (an empty tensor is not supported)",
                     "starts");
    out[d] = ranges[d].count;
  }
  return shaped(out, dtype);
}

// pad: each axis grows by its start and end padding (negative ones crop, as ONNX allows).
// PyTorch's reflect padding needs each padding smaller than the axis it mirrors.
Outcome padded_shape(const Shape& in, const Attributes& a) {
  const std::size_t rank = in.size();
  if (a.pads.size() != 2 * rank)
    return problem("pads has " + str(static_cast<std::int64_t>(a.pads.size())) + " values for a per-sample input " + kind_of(in) + "; it needs " +
                       str(static_cast<std::int64_t>(2 * rank)) + " (every axis's start, then every axis's end)",
                   "pads");
  Shape out = in;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t before = a.pads[d];
    const std::int64_t after = a.pads[d + rank];
    const Wide size = Wide{in[d]} + before + after;
    if (size < 1) return problem("leaves axis " + str(static_cast<std::int64_t>(d)) + " of " + kind_of(in) + " empty", "pads");
    if (size > kInt64Max) return problem("the padded size overflows 64-bit integers", "pads");
    if (a.pad_mode == PadMode::reflect && (before >= in[d] || after >= in[d]))
      return problem("reflect padding of axis " + str(static_cast<std::int64_t>(d)) + " by " + str(std::max(before, after)) +
                         " must be smaller than its size " + str(in[d]) + " (PyTorch's rule)",
                     "pads");
    out[d] = static_cast<std::int64_t>(size);
  }
  return shaped(out);
}

Outcome gathered_shape(const Shape& in, const Attributes& a, DType dtype) {
  const auto rank = static_cast<std::int64_t>(in.size());
  const auto d = axis_of(a.axis, rank);
  if (!d) return problem("axis " + str(a.axis) + " is out of range for a per-sample input " + kind_of(in), "axis");
  if (a.indices.empty()) return problem("needs at least one index", "indices");
  const std::int64_t size = in[*d];
  for (std::int64_t i : a.indices) {
    if (i < -size || i >= size)
      return problem("index " + str(i) + " is out of range for axis " + str(static_cast<std::int64_t>(*d)) + " of size " + str(size), "indices");
  }
  Shape out = in;
  out[*d] = static_cast<std::int64_t>(a.indices.size());
  return shaped(out, dtype);
}

// expand: NumPy's broadcast of the input to `shape`, ranks equal (ONNX Expand's rule: an axis
// of 1 on either side takes the other's size).
Outcome expanded_shape(const Shape& in, const Attributes& a, DType dtype) {
  if (a.shape.size() != in.size())
    return problem("the target " + kind_of(a.shape) + " must have the per-sample input's rank (" + kind_of(in) + ")", "shape");
  Shape out = in;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) {
      if (a.shape[d] < 1) return problem("sizes must be positive, got " + kind_of(a.shape), "shape");
      out[d] = a.shape[d];
    } else if (a.shape[d] != 1 && a.shape[d] != in[d]) {
      return problem("cannot expand " + kind_of(in) + " to " + kind_of(a.shape) + " (each axis equal, or 1 in one of them)", "shape");
    }
  }
  return shaped(out, dtype);
}

Outcome tiled_shape(const Shape& in, const Attributes& a, DType dtype) {
  if (a.repeats.size() != in.size()) return problem("needs one count per axis of the per-sample input " + kind_of(in), "repeats");
  Shape out = in;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (a.repeats[d] < 1) return problem("counts must be at least 1, got " + kind_of(a.repeats), "repeats");
    const Wide size = Wide{in[d]} * a.repeats[d];
    if (size > kInt64Max) return problem("the tiled size overflows 64-bit integers", "repeats");
    out[d] = static_cast<std::int64_t>(size);
  }
  return shaped(out, dtype);
}

// where: the output is the input(s), the condition and a one-input form's constant operand
// broadcast together (ranks equal; each axis equal, or 1 in some of them).
Outcome where_shape(const Graph& g, const Node& node) {
  std::vector<std::pair<std::string, Shape>> parts;
  for (int input : node.inputs) {
    if (g.dtype_of(input) != DType::f32) return problem("takes float32 tensors, got int32 input");
    parts.emplace_back("the input " + format_shape(g.shape_of(input)), g.shape_of(input));
  }
  parts.emplace_back("the condition " + format_shape(node.attrs.condition), node.attrs.condition);
  if (node.inputs.size() == 1) parts.emplace_back("the operand " + format_shape(node.attrs.operand), node.attrs.operand);
  Shape out = parts[0].second;
  for (const auto& [what, shape] : parts) {
    if (shape.size() != out.size()) return problem(what + " does not have the rank of " + parts[0].first, "condition");
    for (std::size_t d = 0; d < out.size(); ++d) {
      if (shape[d] < 1) return problem(what + " has a size below 1", "condition");
      if (shape[d] != out[d] && shape[d] != 1 && out[d] != 1)
        return problem(what + " does not broadcast with " + parts[0].first + " (each axis equal, or 1 in one of them)", "condition");
      out[d] = std::max(out[d], shape[d]);
    }
  }
  return shaped(out);
}

// rel_pos_bias: attention scores [..., heads, N, N] (any leading axes: Swin's [nW, heads, N, N]
// or one window's [heads, N, N]) of a wh × ww window, so N = wh·ww; the same shape out.
Outcome rel_pos_bias_shape(const Shape& in, const Attributes& a) {
  const std::string expected = "expects attention scores [..., heads, N, N] (at least 3 per-sample axes, the last two equal), got ";
  if (in.size() < 3) return problem(expected + kind_of(in));
  const std::int64_t n = in.back();
  if (in[in.size() - 2] != n) return problem(expected + kind_of(in));
  const Wide positions = Wide{a.window.h} * a.window.w;
  if (positions != n) {
    const std::string count = positions <= Wide{kInt64Max} ? str(static_cast<std::int64_t>(positions)) : "more than 2^63";
    return problem("the window [" + str(a.window.h) + ", " + str(a.window.w) + "] has wh·ww = " + count + " positions but the scores " + kind_of(in) +
                       " are over N = " + str(n) + " (N must be wh·ww)",
                   "window");
  }
  return shaped(in);
}

// An element-wise binary op (ops/elementwise_binary.cpp): NumPy broadcasting between inputs of one
// rank, each axis equal or 1 in one of them. With one input, the operand is broadcast to it and
// never widens it.
Outcome binary_shape(const Graph& g, const Node& node, const Shape& in, DType dtype) {
  const Attributes& a = node.attrs;
  if (node.inputs.size() == 1) {
    if (dtype != DType::f32) return problem(std::string(op_name(node.op)) + " takes float32 tensors, got int32 input");
    bool fits = a.operand.size() == in.size();
    for (std::size_t d = 0; fits && d < in.size(); ++d) fits = a.operand[d] == in[d] || a.operand[d] == 1;
    if (!fits) {
      return problem("the operand " + format_shape(a.operand) + " does not broadcast to the input " + kind_of(in) +
                         " (one rank; each axis equal to the input's or 1)",
                     "operand");
    }
    return shaped(in);
  }
  const Shape& other = g.shape_of(node.inputs[1]);
  const std::string what = std::string(op_name(node.op)) + " takes two tensors of one rank whose every axis is equal or 1 in one of them, got ";
  if (other.size() != in.size()) return problem(what + kind_of(in) + " and " + kind_of(other), "inputs");
  Shape out = in;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] != other[d] && in[d] != 1 && other[d] != 1) return problem(what + kind_of(in) + " and " + kind_of(other), "inputs");
    out[d] = std::max(in[d], other[d]);
  }
  if (dtype != DType::f32 || g.dtype_of(node.inputs[1]) != DType::f32)
    return problem(std::string(op_name(node.op)) + " takes float32 tensors, got int32 input");
  return shaped(out);
}

// A recurrent op (ops/recurrent.cpp), batch_first: [T, C] per sample, the directions' states
// side by side; the initial states it is given (its definition's, in order) are [D, H] each, D
// the directions.
Outcome recurrent_shape(const ops::RecurrentDefinition& def, const Graph& g, const Node& node, const Shape& in, DType dtype) {
  const Attributes& a = node.attrs;
  if (dtype != DType::f32 || in.size() != 2)
    return problem("expects a float32 [T, C] input (time steps, features), got " + std::string(dtype_name(dtype)) + " " + kind_of(in));
  const Wide width = Wide{a.hidden_size} * (a.bidirectional ? 2 : 1);
  if (width > kInt64Max / 16) return problem("hidden_size " + str(a.hidden_size) + " is too large", "hidden_size");
  const Shape state{a.bidirectional ? 2 : 1, a.hidden_size};
  for (std::size_t i = 1; i < node.inputs.size() && i <= def.states.size(); ++i) {
    if (g.dtype_of(node.inputs[i]) != DType::f32 || g.shape_of(node.inputs[i]) != state) {
      return problem("input " + str(static_cast<std::int64_t>(i)) + ", the initial state " + std::string(def.states[i - 1]) + ", must be a float32 " +
                         format_shape(state) + " (directions, hidden_size), got " + std::string(dtype_name(g.dtype_of(node.inputs[i]))) + " " +
                         kind_of(g.shape_of(node.inputs[i])),
                     "inputs");
    }
  }
  return shaped({in[0], saturate(width)});
}

std::string float_problem(DType dtype) {
  return dtype == DType::f32 ? std::string() : "expects float32 input, got int32 token ids; add an embedding first";
}

// nn.Linear over the last axis; a weight tied to an earlier layer's must have its shape.
Outcome linear_shape(const Graph& g, const Node& node, const Shape& in, DType dtype) {
  const Attributes& a = node.attrs;
  if (auto p = float_problem(dtype); !p.empty()) return problem(p);
  const std::int64_t in_features = in.back();
  if (a.tied_to >= 0) {
    const Node& target = g.nodes[static_cast<std::size_t>(a.tied_to)];
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    if (target.op == OpKind::embedding) {
      rows = target.attrs.num_embeddings;
      cols = target.attrs.embedding_dim;
    } else {
      rows = target.attrs.out_features;
      cols = g.shape_of(target.inputs[0]).back();
    }
    if (rows != a.out_features || cols != in_features) {
      return problem("'tied_to' " + target.name + " has a weight of shape [" + str(rows) + ", " + str(cols) +
                         "] but this layer needs [out_features, in_features] = [" + str(a.out_features) + ", " + str(in_features) + "]",
                     "tied_to");
    }
  }
  Shape out = in;
  out.back() = a.out_features;
  return shaped(out);
}

Outcome softmax_shape(const Attributes& a, const Shape& in, DType dtype) {
  const auto rank = static_cast<std::int64_t>(in.size());
  if (auto p = float_problem(dtype); !p.empty()) return problem(p);
  if (a.axis < -rank || a.axis >= rank)
    return problem("axis " + str(a.axis) + " is out of range for a per-sample input " + kind_of(in) + " (valid: " + str(-rank) + " to " +
                       str(rank - 1) + "; the batch dimension is not counted)",
                   "axis");
  return shaped(in);
}

Outcome upsample_shape(const Attributes& a, const Shape& in, DType dtype) {
  // F.interpolate's output: `size`, or floor(in × scale) per axis.
  if (auto p = float_problem(dtype); !p.empty()) return problem(p);
  if (in.size() != 3) return problem("expects a [C, H, W] input, got " + kind_of(in));
  if (a.size.h > 0 && a.size.w > 0) return shaped({in[0], a.size.h, a.size.w});
  if (!(a.scale.h > 0.0 && a.scale.w > 0.0)) return problem("needs a positive 'size' or 'scale'", "scale");
  const std::optional<std::int64_t> oh = upsampled_size(in[1], a.scale.h);
  const std::optional<std::int64_t> ow = upsampled_size(in[2], a.scale.w);
  if (!oh || !ow) return problem("the scale gives an output of more than 2^31 rows or columns", "scale");
  if (*oh < 1 || *ow < 1) {
    return problem("the scale " + format_factor(a.scale.h) + "x" + format_factor(a.scale.w) + " of the input " + str(in[1]) + "x" + str(in[2]) +
                       " leaves an empty output (floor(in × scale) = " + str(*oh) + "x" + str(*ow) + ")",
                   "scale");
  }
  return shaped({in[0], *oh, *ow});
}

Outcome matmul_shape(const Graph& g, const Node& node, const Shape& in, DType dtype) {
  // [..., M, K]·[..., K, N]: the axes before the last two right-aligned and broadcast (each
  // equal, or 1 or missing in one of them), as torch.matmul and ONNX MatMul do.
  const Shape& other = g.shape_of(node.inputs[1]);
  if (dtype != DType::f32 || g.dtype_of(node.inputs[1]) != DType::f32) return problem("matmul takes float32 tensors, got int32 input");
  const std::string what = "matmul takes [..., M, K] and [..., K, N] whose leading axes broadcast, got ";
  if (in.size() < 2 || other.size() < 2) return problem(what + kind_of(in) + " and " + kind_of(other), "inputs");
  if (in.back() != other[other.size() - 2]) return problem(what + kind_of(in) + " and " + kind_of(other) + " (K differs)", "inputs");
  const std::size_t lead = std::max(in.size(), other.size()) - 2;
  Shape out(lead + 2, 1);
  for (std::size_t d = 0; d < lead; ++d) {
    const std::int64_t x = d + in.size() >= lead + 2 ? in[d + in.size() - lead - 2] : 1;
    const std::int64_t y = d + other.size() >= lead + 2 ? other[d + other.size() - lead - 2] : 1;
    if (x != y && x != 1 && y != 1) return problem(what + kind_of(in) + " and " + kind_of(other), "inputs");
    out[d] = std::max(x, y);
  }
  out[lead] = in[in.size() - 2];
  out[lead + 1] = other.back();
  return shaped(out);
}

// Self-attention over [T, D], the heads splitting D.
Outcome attention_shape(const Attributes& a, const Shape& in, DType dtype) {
  const auto rank = static_cast<std::int64_t>(in.size());
  if (dtype != DType::f32 || rank != 2) return problem("expects a float32 [T, D] input, got " + std::string(dtype_name(dtype)) + " " + kind_of(in));
  if (in[1] % a.heads != 0) return problem("heads = " + str(a.heads) + " must divide the model width D = " + str(in[1]), "heads");
  return shaped(in);
}

// Long: one case per op of the other families (the element-wise ones come from the op table), each
// a few lines of PyTorch's shape rule; split, the rules would only be further from one another.
Outcome infer_node(const Graph& g, const Node& node) {
  if (node.inputs.empty()) return problem("has no input");
  const Attributes& a = node.attrs;
  const Shape& in = g.shape_of(node.inputs[0]);
  const DType dtype = g.dtype_of(node.inputs[0]);
  const auto rank = static_cast<std::int64_t>(in.size());
  auto need_float = [&] { return float_problem(dtype); };

  // An element-wise unary op (the op table's family): float in, the same shape out.
  if (op_info(node.op).family == OpFamily::elementwise_unary) {
    if (auto p = need_float(); !p.empty()) return problem(p);
    return shaped(in);
  }
  if (binary_definition(node.op) != nullptr) return binary_shape(g, node, in, dtype);
  // A normalization (its definition's input, ops/normalization.cpp): the same shape out.
  if (const ops::NormalizationDefinition* norm = normalization_definition(node.op)) {
    std::string p = norm_input_problem(*norm, in, dtype);
    return p.empty() ? shaped(in) : problem(std::move(p));
  }
  // A pooling op (its definition's window, ops/pooling.cpp).
  if (const ops::PoolingDefinition* pool = pooling_definition(node.op)) {
    ops::WindowShape s = pool_shape(*pool, a, in, dtype);
    return s.problem.empty() ? shaped(std::move(s.shape)) : problem(std::move(s.problem), s.attribute);
  }
  // A convolution (its definition's window, ops/convolution.cpp).
  if (const ops::ConvolutionDefinition* conv = convolution_definition(node.op)) {
    // Shared with an earlier convolution (an ONNX import's tie): its weight and bias must be
    // this layer's shape.
    if (a.tied_to >= 0) {
      const Node& owner = g.nodes[static_cast<std::size_t>(a.tied_to)];
      const Shape& owner_in = g.shape_of(owner.inputs[0]);
      if (owner.op != node.op || owner.attrs.bias != a.bias || owner_in.empty() || in.empty() ||
          ops::conv_weight_shape(*conv, owner.attrs, owner_in[0]) != ops::conv_weight_shape(*conv, a, in[0]))
        return problem("'tied_to' " + owner.name + " is not a " + std::string(op_name(node.op)) + " of this layer's weight shape and bias",
                       "tied_to");
    }
    ops::WindowShape s = conv_shape(*conv, a, in, dtype);
    return s.problem.empty() ? shaped(std::move(s.shape)) : problem(std::move(s.problem), s.attribute);
  }
  if (const ops::RecurrentDefinition* recurrent = recurrent_definition(node.op)) return recurrent_shape(*recurrent, g, node, in, dtype);
  switch (node.op) {
    case OpKind::linear:
      return linear_shape(g, node, in, dtype);
      HWPROF_SOFTMAX_CASES
      return softmax_shape(a, in, dtype);
    case OpKind::upsample:
      return upsample_shape(a, in, dtype);
    case OpKind::reduce:
      if (auto p = need_float(); !p.empty()) return problem(p);
      return reduced_shape(in, a);
    case OpKind::slice:
      return sliced_shape(in, a, dtype);
    case OpKind::pad:
      if (auto p = need_float(); !p.empty()) return problem(p);
      return padded_shape(in, a);
    case OpKind::gather:
      return gathered_shape(in, a, dtype);
    case OpKind::expand:
      return expanded_shape(in, a, dtype);
    case OpKind::tile:
      return tiled_shape(in, a, dtype);
    case OpKind::where:
      return where_shape(g, node);
    case OpKind::flatten:
      return shaped({checked_numel(in)}, dtype);
    case OpKind::dropout:
      if (auto p = need_float(); !p.empty()) return problem(p);
      return shaped(in);
    case OpKind::matmul:
      return matmul_shape(g, node, in, dtype);
    case OpKind::concat: {
      if (a.axis < -rank || a.axis >= rank) return problem("axis " + str(a.axis) + " is out of range for a per-sample input " + kind_of(in), "axis");
      const std::int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      Shape out = in;
      for (std::size_t k = 1; k < node.inputs.size(); ++k) {
        const Shape& s = g.shape_of(node.inputs[k]);
        bool fits = s.size() == in.size() && g.dtype_of(node.inputs[k]) == dtype;
        for (std::int64_t d = 0; fits && d < rank; ++d) fits = d == axis || s[static_cast<std::size_t>(d)] == in[static_cast<std::size_t>(d)];
        if (!fits)
          return problem("inputs must match in dtype and in every axis but " + str(axis) + ": " + kind_of(in) + " and " + kind_of(s), "inputs");
        const std::int64_t extra = s[static_cast<std::size_t>(axis)];
        if (out[static_cast<std::size_t>(axis)] > kInt64Max - extra) return problem("the concatenated size overflows 64-bit integers");
        out[static_cast<std::size_t>(axis)] += extra;
      }
      return shaped(out, dtype);
    }
    case OpKind::reshape: {
      Shape out = a.shape;
      const auto unknown = std::count(out.begin(), out.end(), -1);
      if (unknown > 1) return problem("at most one size may be -1", "shape");
      std::int64_t known = 1;
      for (std::int64_t d : out) {
        if (d == -1) continue;
        if (known > kInt64Max / d) return problem("the shape's element count overflows 64-bit integers", "shape");
        known *= d;
      }
      const std::int64_t total = checked_numel(in);
      if (unknown == 1) {
        if (total % known != 0) return problem("cannot reshape " + kind_of(in) + " (" + str(total) + " elements) to " + kind_of(a.shape), "shape");
        *std::find(out.begin(), out.end(), -1) = total / known;
      } else if (known != total) {
        return problem("cannot reshape " + kind_of(in) + " (" + str(total) + " elements) to " + kind_of(a.shape) + " (" + str(known) + " elements)",
                       "shape");
      }
      return shaped(out, dtype);
    }
    case OpKind::transpose: {
      if (static_cast<std::int64_t>(a.perm.size()) != rank)
        return problem(
            "perm has " + str(static_cast<std::int64_t>(a.perm.size())) + " axes but the per-sample input " + kind_of(in) + " has " + str(rank),
            "perm");
      std::vector<bool> seen(in.size(), false);
      Shape out;
      for (std::int64_t p : a.perm) {
        if (p < 0 || p >= rank || seen[static_cast<std::size_t>(p)])
          return problem("perm must be a permutation of 0.." + str(rank - 1) + ", got " + kind_of(a.perm), "perm");
        seen[static_cast<std::size_t>(p)] = true;
        out.push_back(in[static_cast<std::size_t>(p)]);
      }
      return shaped(out, dtype);
    }
    case OpKind::embedding:
      if (dtype != DType::i32 || rank != 1)
        return problem("expects int32 token ids of shape [T], got " + std::string(dtype_name(dtype)) + " " + kind_of(in));
      return shaped({in[0], a.embedding_dim});
    case OpKind::pos_embedding:
    case OpKind::cls_token: {
      if (dtype != DType::f32 || rank != 2)
        return problem("expects a float32 [T, D] input, got " + std::string(dtype_name(dtype)) + " " + kind_of(in));
      if (node.op == OpKind::pos_embedding) {
        if (in[0] > a.num_positions)
          return problem("the sequence has " + str(in[0]) + " positions but num_positions is " + str(a.num_positions), "num_positions");
        return shaped(in);
      }
      if (in[0] == kInt64Max) return problem("the sequence length overflows");
      return shaped({in[0] + 1, in[1]});
    }
    case OpKind::rel_pos_bias:
      if (auto p = need_float(); !p.empty()) return problem(p);
      return rel_pos_bias_shape(in, a);
    case OpKind::select: {
      // Every op after it reads the last axis; a per-sample scalar has none.
      if (rank < 2) return problem("needs an input of at least 2 axes (it drops one, and per-sample scalars are not supported), got " + kind_of(in));
      if (a.axis < -rank || a.axis >= rank) return problem("axis " + str(a.axis) + " is out of range for a per-sample input " + kind_of(in), "axis");
      const std::int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
      const std::int64_t size = in[static_cast<std::size_t>(axis)];
      if (a.index < -size || a.index >= size)
        return problem("index " + str(a.index) + " is out of range for axis " + str(axis) + " of size " + str(size), "index");
      Shape out = in;
      out.erase(out.begin() + axis);
      return shaped(out, dtype);
    }
    case OpKind::attention:
      return attention_shape(a, in, dtype);
    case OpKind::unsupported:
      // The file's own shape: hwprof knows nothing of the op (with_input_shape refuses a new input).
      return shaped(a.shape, DType::f32);
      HWPROF_ELEMENTWISE_UNARY_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_RECURRENT_CASES
      HWPROF_CONVOLUTION_CASES
      break;  // above, from their definitions
  }
  return problem("unhandled op");
}

}  // namespace

std::optional<std::string> check_input_shape(const Shape& shape) {
  if (shape.empty()) return "the input shape needs at least one dimension";
  if (static_cast<std::int64_t>(shape.size()) > kMaxRank) return "the input shape has more than " + std::to_string(kMaxRank) + " dimensions";
  for (std::int64_t d : shape) {
    if (d < 1) return "input sizes must be positive, got " + format_shape(shape);
  }
  const std::int64_t n = checked_numel(shape);
  // The same headroom as every layer output (infer_shapes): bytes and batch products must fit.
  if (n < 0 || n > kInt64Max / 16)
    return "the input " + format_shape(shape) + " is too large: its byte and batch counts would overflow 64-bit integers";
  return std::nullopt;
}

std::vector<SliceRange> slice_ranges(const Shape& in, const Attributes& a) {
  std::vector<SliceRange> ranges(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) ranges[d] = SliceRange{0, 1, in[d]};
  const auto rank = static_cast<std::int64_t>(in.size());
  for (std::size_t i = 0; i < a.axes.size(); ++i) {
    const auto d = axis_of(a.axes[i], rank);
    if (d && i < a.starts.size() && i < a.ends.size() && i < a.steps.size() && a.steps[i] != 0)
      ranges[*d] = resolve_slice_axis(in[*d], a.starts[i], a.ends[i], a.steps[i]);
  }
  return ranges;
}

std::optional<Error> infer_shapes(Graph& graph) {
  for (Node& node : graph.nodes) {
    Outcome outcome = infer_node(graph, node);
    if (outcome.problem.empty()) {
      if (checked_numel(outcome.shape) < 0 || static_cast<std::int64_t>(outcome.shape.size()) > kMaxRank) {
        outcome = problem("the output " + format_shape(outcome.shape) + " has an element count that overflows 64-bit integers");
      } else if (checked_numel(outcome.shape) > kInt64Max / 16) {
        // Leave headroom: byte counts (x4) and batch products of this tensor must stay representable.
        outcome = problem("the output " + format_shape(outcome.shape) + " is too large: its byte and batch counts would overflow 64-bit integers");
      }
    }
    if (!outcome.problem.empty()) {
      return Error{graph.where(node, outcome.attribute ? outcome.attribute : "") + ": " + outcome.problem};
    }
    node.output_shape = std::move(outcome.shape);
    node.output_dtype = outcome.dtype;
  }
  return std::nullopt;
}

}  // namespace hwprof::graph
