// aten ops onto the op table: each call becomes one node of a one-node Graph (its input's
// per-sample shape, its attributes from the call's scalars), shape inference gives its output,
// and op_cost (src/cost/op_cost.cpp) gives its FLOPs and bytes; the part of the cost a call
// does (forward in evaluation or training, input or weight gradient) is picked here, never
// computed. The mapping and its limits: docs/torch.md.
#include "torch/aten_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "common/stages.hpp"
#include "cost/op_cost.hpp"
#include "graph/shape_inference.hpp"
#include "ops/elementwise_unary.hpp"
#include "ops/ops.hpp"

namespace hwprof::pytorch {
namespace {

// One node of the op table on an input, at a batch.
struct NodeCost {
  OpCost cost;
  std::int64_t batch = 1;
  std::int64_t out_elements = 0;  // per sample
  ComputeRoof roof;               // its forward pass's
};

std::optional<NodeCost> node_cost(OpKind op, Shape in, const Attributes& attrs, std::int64_t batch, DType dtype = DType::f32) {
  Graph g;
  g.name = "aten";
  g.input = {std::move(in), dtype};
  Node node;
  node.name = "op";
  node.op = op;
  node.inputs = {kModelInput};
  node.attrs = attrs;
  g.nodes.push_back(std::move(node));
  if (infer_shapes(g)) return std::nullopt;
  NodeCost out{op_cost(g, g.nodes[0], batch), batch, numel(g.nodes[0].output_shape), compute_roof_of(g.nodes[0], true)};
  // A function evaluated once per output element, at the FLOPs the cost model counts for it.
  if (out.roof.kind == ComputeRoof::Kind::transcendental && out.out_elements > 0) {
    out.roof.flops_per_evaluation = static_cast<double>(out.cost.flops.value()) / static_cast<double>(out.out_elements);
  }
  return out;
}

double count(Count c, std::int64_t times = 1) {
  return static_cast<double>((c * times).value());
}
// The minimum bytes of a layer's passes, by the cost model's own rule (op_cost.hpp).
double forward_bytes(const NodeCost& n) {
  return n.cost.is_view ? 0.0 : count(forward_min_bytes(n.cost, n.batch));
}
double backward_bytes(const NodeCost& n) {
  return count(backward_min_bytes(n.cost, n.batch));
}
AtenCost forward(const NodeCost& n, bool training = false) {
  AtenCost out{count(training ? n.cost.train_forward_flops : n.cost.flops, n.batch), forward_bytes(n), std::nullopt, n.roof};
  const Count weights = n.cost.has_weights ? n.cost.weight_grad_flops : Count(0);
  out.backward = AtenCost::Backward{count(n.cost.internal_grad_flops, n.batch), count(weights, n.batch), count(n.cost.input_grad_flops, n.batch),
                                    n.cost.is_view ? 0.0 : backward_bytes(n)};
  return out;
}

// ---- reading the call's inputs ----

const AtenArg* arg(const AtenCall& c, std::size_t i) {
  return i < c.arg_count ? &c.args[i] : nullptr;
}
const AtenArg* tensor(const AtenCall& c, std::size_t i) {
  const AtenArg* a = arg(c, i);
  return a != nullptr && a->kind == AtenArgKind::tensor ? a : nullptr;
}
bool floating(const AtenArg* t) {
  return t != nullptr && t->element == AtenElement::floating;
}
// A tensor's (or a tensor list's) bytes; 0 for an argument that is neither, or absent.
double bytes_of(const AtenArg* a) {
  const bool tensor_like = a != nullptr && (a->kind == AtenArgKind::tensor || a->kind == AtenArgKind::tensors);
  return tensor_like ? static_cast<double>(a->elements) * a->element_bytes : 0.0;
}
Shape dims(const AtenArg& t) {
  return Shape(t.dims, t.dims + t.rank);
}
std::int64_t integer(const AtenCall& c, std::size_t i, std::int64_t fallback) {
  const AtenArg* a = arg(c, i);
  return a != nullptr && (a->kind == AtenArgKind::integer || a->kind == AtenArgKind::boolean) ? a->integer : fallback;
}
bool flag(const AtenCall& c, std::size_t i, bool fallback) {
  return integer(c, i, fallback ? 1 : 0) != 0;
}
// An int list as `n` values: one value repeats (PyTorch's `int[2] stride=1` may arrive as [1]).
std::optional<std::array<std::int64_t, 3>> ints(const AtenCall& c, std::size_t i, std::size_t n, std::int64_t fallback) {
  std::array<std::int64_t, 3> out{fallback, fallback, fallback};
  const AtenArg* a = arg(c, i);
  if (a == nullptr || a->kind == AtenArgKind::none || (a->kind == AtenArgKind::ints && a->rank == 0)) return out;
  if (a->kind == AtenArgKind::integer) {
    out.fill(a->integer);
    return out;
  }
  if (a->kind != AtenArgKind::ints || (a->rank != 1 && a->rank != n)) return std::nullopt;
  for (std::size_t k = 0; k < n; ++k) out[k] = a->dims[a->rank == 1 ? 0 : k];
  return out;
}
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
// "aten::relu_" → "relu": the in-place form costs what the other does.
std::string_view base_name(std::string_view op) {
  if (starts_with(op, "aten::")) op.remove_prefix(6);
  if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') op.remove_suffix(1);
  return op;
}

// ---- convolutions ----

// Where a convolution's arguments are: aten::convolution and _convolution, conv1d/2d/3d,
// conv_transpose1d/2d/3d, mkldnn_convolution (padding before stride), convolution_backward, and
// the 3-D kernels PyTorch 1.13 dispatches a CPU conv3d to when oneDNN does not take it:
// slow_conv3d and slow_conv3d_forward (self, weight, kernel_size, bias, stride, padding: no
// dilation, one group) and slow_conv_dilated3d (its dilation after the padding); and
// slow_conv_transpose3d, its transposed convolution (self, weight, kernel_size, bias, stride,
// padding, output_padding, dilation: one group).
struct ConvLayout {
  std::size_t input, weight, bias, stride, padding, dilation, groups;
  std::size_t transposed = kAtenMaxArgs;  // an index, or none: `transposed_always`
  std::size_t output_padding = kAtenMaxArgs;
  bool transposed_always = false;
};

std::optional<ConvLayout> conv_layout(std::string_view op) {
  if (op == "convolution" || op == "_convolution") return ConvLayout{0, 1, 2, 3, 4, 5, 8, 6, 7};
  if (op == "conv1d" || op == "conv2d" || op == "conv3d") return ConvLayout{0, 1, 2, 3, 4, 5, 6};
  if (op == "conv_transpose1d" || op == "conv_transpose2d" || op == "conv_transpose3d") return ConvLayout{0, 1, 2, 3, 4, 7, 6, kAtenMaxArgs, 5, true};
  if (op == "mkldnn_convolution") return ConvLayout{0, 1, 2, 4, 3, 5, 6};
  if (op == "slow_conv3d" || op == "slow_conv3d_forward") return ConvLayout{0, 1, 3, 4, 5, kAtenMaxArgs, kAtenMaxArgs};
  if (op == "slow_conv_dilated3d") return ConvLayout{0, 1, 3, 4, 5, 6, kAtenMaxArgs};
  if (op == "slow_conv_transpose3d") return ConvLayout{0, 1, 3, 4, 5, 7, kAtenMaxArgs, kAtenMaxArgs, 6, true};
  if (op == "convolution_backward") return ConvLayout{1, 2, kAtenMaxArgs, 4, 5, 6, 9, 7, 8};
  return std::nullopt;
}

// The call as the node of the convolution of its form over its spatial axes (ops/convolution.cpp),
// read from one layout.
std::optional<NodeCost> conv_node(const AtenCall& c, const ConvLayout& l) {
  const AtenArg* x = tensor(c, l.input);
  const AtenArg* w = tensor(c, l.weight);
  if (!floating(x) || !floating(w) || x->rank != w->rank || x->rank < 3 || x->rank > 5) return std::nullopt;
  const std::size_t spatial = x->rank - 2;
  const bool transposed = l.transposed_always || flag(c, l.transposed, false);
  const auto stride = ints(c, l.stride, spatial, 1);
  const auto padding = ints(c, l.padding, spatial, 0);
  const auto dilation = ints(c, l.dilation, spatial, 1);
  const auto output_padding = ints(c, l.output_padding, spatial, 0);
  if (!stride || !padding || !dilation || !output_padding) return std::nullopt;
  Attributes a;
  a.groups = integer(c, l.groups, 1);
  if (a.groups <= 0) return std::nullopt;
  a.out_channels = transposed ? w->dims[1] * a.groups : w->dims[0];
  a.bias = l.bias == kAtenMaxArgs ? false : tensor(c, l.bias) != nullptr;
  const ops::ConvolutionDefinition* conv = ops::convolution_for(transposed, static_cast<int>(spatial));
  if (conv == nullptr) return std::nullopt;
  ops::ConvAxes window;
  window.count = conv->spatial_axes;
  Shape in{x->dims[1]};
  for (std::size_t k = 0; k < spatial; ++k) {
    window.axis[k] = {w->dims[2 + k], (*stride)[k], (*padding)[k], (*dilation)[k], (*output_padding)[k]};
    in.push_back(x->dims[2 + k]);
  }
  ops::set_conv_axes(*conv, window, a);
  return node_cost(conv->kind, in, a, x->dims[0]);
}

std::optional<AtenCost> convolution(const AtenCall& c, std::string_view op) {
  const auto layout = conv_layout(op);
  if (!layout) return std::nullopt;
  auto n = conv_node(c, *layout);
  if (!n) return std::nullopt;
  if (op != "convolution_backward") return forward(*n);
  // output_mask: [grad_input, grad_weight, grad_bias]; the bias gradient is n adds.
  const AtenArg* mask = arg(c, 10);
  const bool input_grad = mask == nullptr || mask->kind != AtenArgKind::ints || mask->rank < 3 || mask->dims[0] != 0;
  const bool weight_grad = mask == nullptr || mask->kind != AtenArgKind::ints || mask->rank < 3 || mask->dims[1] != 0;
  const bool bias_grad = mask != nullptr && mask->kind == AtenArgKind::ints && mask->rank >= 3 && mask->dims[2] != 0;
  // The node has no bias (convolution_backward gives its sizes, not a tensor): its weight
  // gradient is the weight's alone.
  Count flops = (input_grad ? n->cost.input_grad_flops : Count(0)) + (weight_grad ? n->cost.weight_grad_flops : Count(0));
  if (bias_grad) flops += Count(n->out_elements);
  return AtenCost{count(flops, n->batch), backward_bytes(*n), std::nullopt, {}};
}

// ---- matrix products: a linear layer over the rows of the left operand ----

std::optional<AtenCost> matrix_product(const AtenCall& c, std::string_view op) {
  std::size_t left = 0;
  std::size_t right = 1;
  bool bias = false;
  if (op == "addmm" || op == "baddbmm") {
    left = 1;
    right = 2;
    bias = tensor(c, 0) != nullptr;
  } else if (op == "linear") {
    bias = tensor(c, 2) != nullptr;
  } else if (op != "mm" && op != "bmm" && op != "matmul") {
    return std::nullopt;
  }
  const AtenArg* x = tensor(c, left);
  const AtenArg* w = tensor(c, right);
  if (!floating(x) || !floating(w) || w->rank == 0 || x->rank == 0) return std::nullopt;
  std::int64_t k = x->dims[x->rank - 1];
  std::int64_t out = 0;
  if (op == "linear") {
    out = w->rank == 2 ? w->dims[0] : 1;  // weight [out, in]
  } else {
    out = w->rank == 1 ? 1 : w->dims[w->rank - 1];
    if ((w->rank == 1 ? w->dims[0] : w->dims[w->rank - 2]) != k) return std::nullopt;
  }
  // Rows: every row of the left operand, times the batch axes only the right one has.
  std::int64_t rows = x->elements / std::max<std::int64_t>(k, 1);
  for (std::size_t d = 0; op == "matmul" && w->rank > 2 && x->rank <= 2 && d + 2 < w->rank; ++d) rows *= w->dims[d];
  Attributes a;
  a.out_features = out;
  a.bias = bias;
  auto n = node_cost(OpKind::linear, Shape{rows, k}, a, 1);
  if (!n) return std::nullopt;
  AtenCost cost = forward(*n);
  if (w->elements > k * out) {
    // A right operand with batch axes (bmm, a matmul of two activations): the linear row reads
    // one [k, out] weight, where each batch reads its own. The minimum bytes are the matmul
    // row's (op_cost.hpp's rule with both operands as inputs): forward both operands, the bias
    // and the output; backward the output's gradient and both operands read and written.
    const double elements = static_cast<double>(x->elements + w->elements);
    const double output = static_cast<double>(rows * out);
    const AtenArg* added = bias ? tensor(c, 0) : nullptr;
    const double bias_elements = added != nullptr ? static_cast<double>(added->elements) : 0.0;
    const auto width = static_cast<double>(x->element_bytes);
    cost.bytes = (elements + output + bias_elements) * width;
    if (cost.backward) cost.backward->bytes = (output + 2 * elements + 3 * bias_elements) * width;
  }
  return cost;
}

// ---- normalisation ----

// Per sample [C, rest, 1]: the 2-D batch norm's layout for any rank (a batch norm's cost is its
// element count's and its channels', ops/normalization.cpp, whatever its spatial axes).
std::optional<NodeCost> batch_norm_node(const AtenArg* x) {
  if (!floating(x) || x->rank < 2) return std::nullopt;
  std::int64_t rest = 1;
  for (std::size_t d = 2; d < x->rank; ++d) rest *= x->dims[d];
  const ops::NormalizationDefinition* norm = ops::normalization_for(ops::NormStatistics::per_channel, 2);
  return node_cost(norm->kind, Shape{x->dims[1], rest, 1}, Attributes{}, x->dims[0]);
}

std::optional<AtenCost> normalization(const AtenCall& c, std::string_view op) {
  if (op == "batch_norm" || op == "_batch_norm_impl_index" || op == "native_batch_norm" || op == "_native_batch_norm_legit") {
    auto n = batch_norm_node(tensor(c, 0));
    if (!n) return std::nullopt;
    return forward(*n, flag(c, 5, false));
  }
  if (op == "native_batch_norm_backward") {
    auto n = batch_norm_node(tensor(c, 1));
    if (!n) return std::nullopt;
    const AtenArg* mask = arg(c, 9);
    const bool all = mask == nullptr || mask->kind != AtenArgKind::ints || mask->rank < 3;
    const Count flops = (all || mask->dims[0] != 0 ? n->cost.input_grad_flops : Count(0)) +
                        (all || mask->dims[1] != 0 || mask->dims[2] != 0 ? n->cost.weight_grad_flops : Count(0));
    return AtenCost{count(flops, n->batch), backward_bytes(*n), std::nullopt, {}};
  }
  // layer_norm(input, normalized_shape, ...), group_norm(input, groups, ...): a layernorm over
  // rows of the normalised width (a group norm's rows are its groups).
  const AtenArg* x = tensor(c, op == "native_layer_norm_backward" ? 1 : 0);
  if (!floating(x)) return std::nullopt;
  std::int64_t width = 1;
  if (op == "layer_norm" || op == "native_layer_norm" || op == "native_layer_norm_backward") {
    const AtenArg* shape = arg(c, op == "native_layer_norm_backward" ? 2 : 1);
    if (shape == nullptr || shape->kind != AtenArgKind::ints || shape->rank == 0 || shape->rank > x->rank) return std::nullopt;
    for (std::size_t d = 0; d < shape->rank; ++d) width *= shape->dims[d];
  } else if (op == "group_norm") {
    const std::int64_t groups = integer(c, 1, 0);
    if (groups <= 0 || x->rank < 2 || x->dims[1] % groups != 0) return std::nullopt;
    width = x->elements / (x->dims[0] * groups);
  } else {
    return std::nullopt;
  }
  if (width <= 0 || x->elements % width != 0) return std::nullopt;
  auto n = node_cost(ops::normalization_for(ops::NormStatistics::per_row, 0)->kind, Shape{x->elements / width, width}, Attributes{}, 1);
  if (!n) return std::nullopt;
  if (op != "native_layer_norm_backward") return forward(*n);
  return AtenCost{count(n->cost.input_grad_flops + n->cost.weight_grad_flops), backward_bytes(*n), std::nullopt, {}};
}

// ---- element-wise ops ----

// The element-wise op of a call, as the definitions map PyTorch's ops onto them
// (src/ops/elementwise_unary.cpp): its forward or backward name, and the arguments that must
// hold fixed values (hardtanh(x, 0, 6) is relu6).
std::optional<OpKind> unary_kind(std::string_view op, const AtenCall& c) {
  for (const UnaryDefinition& d : unary_definitions()) {
    const AtenMapping& m = d.aten;
    const bool forward = op == m.forward;
    const bool backward =
        m.backward.empty() ? op.size() == m.forward.size() + 9 && op.starts_with(m.forward) && op.ends_with("_backward") : op == m.backward;
    if (!forward && !backward) continue;
    for (const AtenFixedArgument& f : m.fixed) {
      const AtenArg* v = arg(c, static_cast<std::size_t>(forward ? f.forward_index : f.backward_index));
      const bool holds = v == nullptr                      ? f.absent_is_value
                         : v->kind == AtenArgKind::real    ? v->real == f.value
                         : v->kind == AtenArgKind::integer ? static_cast<double>(v->integer) == f.value
                                                           : false;
      if (!holds) return std::nullopt;
    }
    return d.kind;
  }
  return std::nullopt;
}

bool is_backward_name(std::string_view op) {
  return op.size() > 9 && op.substr(op.size() - 9) == "_backward";
}

std::optional<AtenCost> unary(const AtenCall& c, std::string_view op, OpKind kind) {
  const bool backward = is_backward_name(op);
  // Forward: (self, ...); backward: (grad_output, self or output, ...), but elu_backward's
  // self_or_result comes last: grad_output has its shape.
  const AtenArg* x = backward && tensor(c, 1) != nullptr ? tensor(c, 1) : tensor(c, 0);
  if (!floating(x)) return std::nullopt;
  Attributes a;
  if (unary_definition(kind)->tanh_form) {
    const AtenArg* approximate = arg(c, backward ? 2 : 1);
    a.approximate = approximate != nullptr && approximate->kind == AtenArgKind::text && approximate->integer == 1 ? GeluApproximation::tanh
                                                                                                                  : GeluApproximation::none;
  }
  auto n = node_cost(kind, Shape{x->elements}, a, 1);
  if (!n) return std::nullopt;
  if (!backward) return forward(*n);
  return AtenCost{count(n->cost.input_grad_flops), backward_bytes(*n), std::nullopt, {}};
}

// add/sub/mul/div of two tensors or a tensor and a scalar: the larger tensor is the input and
// the other its operand (right-aligned, as PyTorch broadcasts).
std::optional<AtenCost> binary(const AtenCall& c, OpKind kind) {
  const AtenArg* x = tensor(c, 0);
  const AtenArg* y = tensor(c, 1);
  if (!floating(x) || (y != nullptr && !floating(y))) return std::nullopt;
  if (y != nullptr && y->elements > x->elements) std::swap(x, y);
  Attributes a;
  const Shape in = x->rank == 0 ? Shape{1} : dims(*x);
  a.operand = Shape(in.size(), 1);
  if (y != nullptr && y->rank > in.size()) return std::nullopt;
  for (std::size_t d = 0; y != nullptr && d < y->rank; ++d) a.operand[in.size() - y->rank + d] = y->dims[d];
  auto n = node_cost(kind, in, a, 1);
  if (!n) return std::nullopt;
  return forward(*n);
}

// ---- pooling ----

// A pooling op's forward (its definition's aten name: max_pool2d and max_pool2d_with_indices,
// avg_pool3d, _adaptive_avg_pool2d, ...) and its _backward: forward (self, kernel_size, stride,
// padding, ...) or (self, output_size), backward (grad_output, self, ...).
// Long: max, average and adaptive pooling, forward and backward, share the reading of one layout.
std::optional<AtenCost> pooling(const AtenCall& c, std::string_view op) {
  const bool backward = is_backward_name(op);
  const ops::PoolingDefinition* pool = ops::pooling_for_aten(backward ? op.substr(0, op.size() - 9) : op);
  if (pool == nullptr) return std::nullopt;
  const auto spatial = static_cast<std::size_t>(pool->spatial_axes);
  const std::size_t first = backward ? 2 : 1;  // backward: (grad_output, self, ...)
  const AtenArg* x = tensor(c, backward ? 1 : 0);
  const std::size_t rank = x != nullptr ? x->rank : 0;
  if (!floating(x) || (rank != spatial + 1 && rank != spatial + 2)) return std::nullopt;
  const std::int64_t batch = rank == spatial + 2 ? x->dims[0] : 1;
  const Shape in(x->dims + (rank - spatial - 1), x->dims + rank);
  ops::PoolAxes axes;
  axes.count = pool->spatial_axes;
  if (pool->reduction == ops::PoolReduction::adaptive_average) {
    std::optional<std::array<std::int64_t, 3>> size = ints(c, first, spatial, 1);
    if (backward) {
      const AtenArg* dy = tensor(c, 0);
      const std::size_t dy_rank = dy != nullptr ? dy->rank : 0;
      if (dy_rank < spatial) return std::nullopt;
      size = std::array<std::int64_t, 3>{};
      for (std::size_t k = 0; k < spatial; ++k) (*size)[k] = dy->dims[dy_rank - spatial + k];
    }
    if (!size) return std::nullopt;
    for (std::size_t k = 0; k < spatial; ++k) axes.axis[k].output = (*size)[k];
  } else {
    const auto kernel = ints(c, first, spatial, 1);
    const auto stride = ints(c, first + 1, spatial, 0);
    const auto padding = ints(c, first + 2, spatial, 0);
    if (!kernel || !stride || !padding) return std::nullopt;
    for (std::size_t k = 0; k < spatial; ++k) {
      // An empty stride is the kernel.
      axes.axis[k] = {(*kernel)[k], (*stride)[0] == 0 ? (*kernel)[k] : (*stride)[k], (*padding)[k], 1};
    }
    if (pool->reduction == ops::PoolReduction::max) {  // (self, kernel, stride, padding, dilation, ceil_mode)
      const auto dilation = ints(c, first + 3, spatial, 1);
      if (!dilation) return std::nullopt;
      for (std::size_t k = 0; k < spatial; ++k) axes.axis[k].dilation = (*dilation)[k];
    }
  }
  Attributes a;
  set_pool_axes(*pool, axes, a);
  if (pool->reduction != ops::PoolReduction::adaptive_average)
    a.ceil_mode = flag(c, pool->reduction == ops::PoolReduction::max ? first + 4 : first + 3, false);
  auto n = node_cost(pool->kind, in, a, batch);
  if (!n) return std::nullopt;
  if (!backward) return forward(*n);
  return AtenCost{count(n->cost.input_grad_flops, batch), backward_bytes(*n), std::nullopt, {}};
}

// ---- upsampling ----

// upsample_nearest2d and upsample_bilinear2d (their `.vec` overloads too) as `upsample` nodes.
// Forward: (self, output_size, [align_corners,] scales...); backward: (grad_output,
// output_size, input_size, [align_corners,] scales...). The output's size is output_size, or
// for a backward the gradient's own, or for a `.vec` forward given scale factors and no
// output_size, floor(input × scale) (PyTorch's rule, the node's `scale`).
std::optional<AtenCost> upsampling(const AtenCall& c, std::string_view op) {
  op = op.substr(0, op.find('.'));  // "upsample_nearest2d.vec" → "upsample_nearest2d"
  const bool backward = is_backward_name(op);
  const std::string_view forward_op = backward ? op.substr(0, op.size() - 9) : op;
  const ops::UpsampleModeDefinition* mode = ops::upsample_mode_for_aten(forward_op);
  if (mode == nullptr) return std::nullopt;
  Attributes a;
  a.mode = mode->mode;
  const AtenArg* x = tensor(c, 0);  // the input, or the output's gradient
  const AtenArg* in_size = backward ? arg(c, 2) : nullptr;
  const AtenArg* out_size = arg(c, 1);
  if (!floating(x) || x->rank != 4) return std::nullopt;
  if (backward && (in_size == nullptr || in_size->kind != AtenArgKind::ints || in_size->rank != 4)) return std::nullopt;
  const std::int64_t* in = backward ? in_size->dims : x->dims;  // [N, C, H, W]
  if (backward) {
    a.size = {x->dims[2], x->dims[3]};
  } else if (out_size != nullptr && out_size->kind == AtenArgKind::ints && out_size->rank == 2) {
    a.size = {out_size->dims[0], out_size->dims[1]};
  } else if (const AtenArg* scales = arg(c, mode->align_corners ? 3 : 2);
             scales != nullptr && scales->kind == AtenArgKind::reals && scales->rank == 2) {
    a.scale = {scales->reals[0], scales->reals[1]};  // .vec(input, None, [align_corners,] scale_factors)
  } else {
    return std::nullopt;
  }
  a.align_corners = mode->align_corners && flag(c, backward ? 3 : 2, false);
  auto n = node_cost(OpKind::upsample, Shape{in[1], in[2], in[3]}, a, in[0]);
  if (!n) return std::nullopt;
  if (!backward) return forward(*n);
  return AtenCost{count(n->cost.input_grad_flops, in[0]), backward_bytes(*n), std::nullopt, {}};
}

// ---- reductions ----

// aten::sum and aten::mean: (self, dtype) over the whole tensor, or the dim_IntList / dim
// overloads (self, dim, keepdim, dtype). Either is one `reduce` node over the call's whole
// tensor as a single sample (batch 1, its batch axis an ordinary axis: a call may reduce over
// it, as x.sum() does); the FLOPs depend only on the element counts in and out, which keepdim
// does not change, so the node keeps the reduced axes (a per-sample scalar is not a shape the
// op table has). An absent or empty dim is every axis, as PyTorch reads it. Their backward
// (sum: dy expanded, a view; mean: that divided by k, an aten::div) is dispatched as those
// ops, so no backward name is mapped here; the forward carries the node's backward.
std::optional<AtenCost> reduction(const AtenCall& c, const ops::ReduceModeDefinition& mode) {
  const AtenArg* x = tensor(c, 0);
  if (!floating(x)) return std::nullopt;
  Attributes a;
  a.reduce_mode = mode.mode;
  const Shape in = x->rank == 0 ? Shape{1} : dims(*x);
  // (self, dtype) has at most two inputs, and its dtype arrives as an integer: not a dim.
  const AtenArg* dim = c.arg_count >= 3 ? arg(c, 1) : nullptr;
  if (dim != nullptr && dim->kind == AtenArgKind::integer) {
    a.axes = {dim->integer};
  } else if (dim != nullptr && dim->kind == AtenArgKind::ints && dim->rank > 0) {
    a.axes.assign(dim->dims, dim->dims + dim->rank);
  } else {
    for (std::size_t d = 0; d < in.size(); ++d) a.axes.push_back(static_cast<std::int64_t>(d));
  }
  auto n = node_cost(OpKind::reduce, in, a, 1);
  if (!n) return std::nullopt;
  return forward(*n);
}

// ---- recurrent layers ----

// aten::lstm and aten::gru (the `.input` overloads nn.LSTM and nn.GRU call on a padded tensor):
// (input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first).
// Each layer is one lstm / gru node on [T, C] at the batch (the first layer's C is the input's
// last axis, the others' H·directions), H from the first weight of params, weight_ih_l0
// [G·H, C]. Inside, on the CPU, aten::lstm is composite (its steps are aten::linear and the gate
// ops, which count nothing under it: docs/torch.md, "Who counts what"); its backward is their
// autograd functions, which carry the nodes' backward from the forward call. hx, the initial
// states, is always given (nn.LSTM / nn.GRU pass zeros where the model gives none): h0 [L·D, N, H]
// (LSTM: h0 and c0, a list). Its values do not change the count (the first step's W_hh·h0 is one of
// the T steps the node counts either way); the forward reads its bytes once, as a graph's lstm
// reads h0 and c0 given as inputs. An hx of another size is not counted (never a wrong count).
std::optional<AtenCost> recurrent(const AtenCall& c, const ops::RecurrentDefinition& def) {
  const AtenArg* x = tensor(c, 0);
  const AtenArg* params = arg(c, 2);
  if (!floating(x) || x->rank != 3 || params == nullptr || params->kind != AtenArgKind::tensors || params->rank != 2) return std::nullopt;
  const std::int64_t gates = def.gates;
  const std::int64_t layers = integer(c, 4, 0);
  const bool batch_first = flag(c, 8, false);
  const std::int64_t steps = x->dims[batch_first ? 1 : 0], batch = x->dims[batch_first ? 0 : 1], features = x->dims[2];
  if (params->dims[0] % gates != 0 || params->dims[1] != features || layers < 1) return std::nullopt;
  Attributes a;
  a.hidden_size = params->dims[0] / gates;
  a.bidirectional = flag(c, 7, false);
  a.bias = flag(c, 3, true);
  const AtenArg* hx = arg(c, 1);
  const std::int64_t states = layers * (a.bidirectional ? 2 : 1) * batch * a.hidden_size * static_cast<std::int64_t>(def.states.size());
  const bool hx_fits = hx != nullptr && hx->element == AtenElement::floating &&
                       (hx->kind == AtenArgKind::tensors || hx->kind == AtenArgKind::tensor) && hx->elements == states;
  if (!hx_fits) return std::nullopt;
  AtenCost total{0.0, static_cast<double>(hx->elements) * hx->element_bytes, AtenCost::Backward{}, {}};
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const std::int64_t width = layer == 0 ? features : a.hidden_size * (a.bidirectional ? 2 : 1);
    const auto n = node_cost(def.kind, Shape{steps, width}, a, batch);
    if (!n) return std::nullopt;
    const AtenCost one = forward(*n, flag(c, 6, false));
    total.flops += one.flops;
    total.bytes += one.bytes;
    total.backward->base_flops += one.backward->base_flops;
    total.backward->weight_flops += one.backward->weight_flops;
    total.backward->input_flops += one.backward->input_flops;
    total.backward->bytes += one.backward->bytes;
  }
  return total;
}

// ---- the rest: softmax, dropout, embedding, data movement ----

// Forward (self, dim, ...) or the input's gradient (grad_output, output, dim, ...), as the
// definition that names the op (ops/softmax.cpp) counts it.
std::optional<AtenCost> softmax(const AtenCall& c, ops::SoftmaxCall call) {
  const bool backward = call.backward;
  const AtenArg* x = tensor(c, backward ? 1 : 0);
  if (!floating(x) || x->rank == 0) return std::nullopt;
  Attributes a;
  a.axis = integer(c, backward ? 2 : 1, -1);
  auto n = node_cost(call.definition->kind, dims(*x), a, 1);
  if (!n) return std::nullopt;
  if (!backward) return forward(*n);
  return AtenCost{count(n->cost.input_grad_flops), backward_bytes(*n), std::nullopt, {}};
}

std::optional<AtenCost> dropout(const AtenCall& c, std::string_view op) {
  const AtenArg* x = tensor(c, 0);
  if (!floating(x)) return std::nullopt;
  auto n = node_cost(OpKind::dropout, Shape{x->elements}, Attributes{}, 1);
  if (!n) return std::nullopt;
  if (op == "native_dropout_backward") return AtenCost{count(n->cost.input_grad_flops), backward_bytes(*n), std::nullopt, {}};
  const bool training = flag(c, 2, true);
  AtenCost out = forward(*n, training);
  if (training) out.bytes = count((n->cost.input_bytes + n->cost.output_bytes) * n->batch);  // the mask is applied: data moves
  return out;
}

std::optional<AtenCost> embedding(const AtenCall& c, std::string_view op) {
  const bool backward = op == "embedding_dense_backward" || op == "embedding_backward";
  const AtenArg* table = tensor(c, 0);
  const AtenArg* ids = tensor(c, 1);
  if (backward) {
    const AtenArg* dy = tensor(c, 0);
    if (!floating(dy) || dy->rank == 0 || ids == nullptr) return std::nullopt;
    Attributes a;
    a.num_embeddings = integer(c, 2, 0);
    a.embedding_dim = dy->dims[dy->rank - 1];
    auto n = node_cost(OpKind::embedding, Shape{std::max<std::int64_t>(ids->elements, 1)}, a, 1, DType::i32);
    if (!n) return std::nullopt;
    return AtenCost{count(n->cost.weight_grad_flops), backward_bytes(*n), std::nullopt, {}};
  }
  if (!floating(table) || table->rank != 2 || ids == nullptr || ids->element != AtenElement::integer) return std::nullopt;
  Attributes a;
  a.num_embeddings = table->dims[0];
  a.embedding_dim = table->dims[1];
  auto n = node_cost(OpKind::embedding, Shape{std::max<std::int64_t>(ids->elements, 1)}, a, 1, DType::i32);
  if (!n) return std::nullopt;
  return forward(*n);
}

// Views move nothing (a reshape node); copies and concatenations move their input once (a
// transpose node: no arithmetic, its input read and its output written).
std::optional<AtenCost> data_movement(const AtenCall& c, std::string_view op) {
  static constexpr std::string_view kViews[] = {
      "view",       "reshape",   "_reshape_alias", "flatten",   "t",       "transpose",        "permute",      "unsqueeze",
      "squeeze",    "expand",    "as_strided",     "slice",     "select",  "detach",           "alias",        "_unsafe_view",
      "numpy_T",    "unflatten", "narrow",         "chunk",     "split",   "split_with_sizes", "unsafe_split", "unsafe_chunk",
      "unbind",     "view_as",   "reshape_as",     "expand_as", "movedim", "swapaxes",         "resolve_conj", "resolve_neg",
      "lift_fresh", "diagonal"};
  static constexpr std::string_view kCopies[] = {"copy", "clone", "contiguous", "cat", "concat", "stack", "_to_copy"};
  // Memory handed out, nothing read or written: counted, as 0.
  static constexpr std::string_view kAllocations[] = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_"};
  if (std::find(std::begin(kAllocations), std::end(kAllocations), op) != std::end(kAllocations)) return AtenCost{0.0, 0.0, std::nullopt, {}};
  const bool view = std::find(std::begin(kViews), std::end(kViews), op) != std::end(kViews);
  const bool copy = std::find(std::begin(kCopies), std::end(kCopies), op) != std::end(kCopies);
  if (!view && !copy) return std::nullopt;
  const AtenArg* x = arg(c, 0);
  if (x == nullptr || (x->kind != AtenArgKind::tensor && x->kind != AtenArgKind::tensors)) return std::nullopt;
  // copy_(self, src): what is read is src.
  if (op == "copy" && tensor(c, 1) != nullptr) x = tensor(c, 1);
  const std::int64_t elements = std::max<std::int64_t>(x->elements, 1);
  Attributes a;
  OpKind kind = OpKind::reshape;
  if (view) {
    a.shape = {elements};
  } else {
    kind = OpKind::transpose;
    a.perm = {0};
  }
  auto n = node_cost(kind, Shape{elements}, a, 1);
  if (!n) return std::nullopt;
  AtenCost out = forward(*n);
  // The op table's bytes are float32's; a copy of another element type moves its own.
  if (copy && x->element_bytes > 0) out.bytes = out.bytes / 4.0 * x->element_bytes;
  return out;
}

// ---- element-wise arithmetic that no layer is: an optimizer's update, a model's own math ----

// FLOPs per output element by PyTorch's formula for the op: addcmul self + value·t1·t2 and
// addcdiv self + value·t1/t2 (3 each), lerp self + weight·(end − self) (3); sqrt, rsqrt, exp,
// log and reciprocal one evaluation each (1, as the op table counts tanh: docs/cost.md,
// "Counting convention"); clamp a comparison per bound given; the _foreach_ forms of these and
// of add, sub, mul and div (one tensor list's elements, torch.optim's foreach path). The fills
// (random numbers: bernoulli_, uniform_, normal_, ... for dropout's masks and initialisation;
// zeros_like, zero_, fill_) write their tensor without reading it and do no counted FP
// arithmetic: 0 FLOPs, the bytes written. item() reads one scalar.
struct PointwiseRule {
  enum class Kind {
    arithmetic,  // reads its tensors, writes self's size
    clamp,       // arithmetic with one comparison per bound given (min, max)
    fill,        // writes self's size, reads no tensor of self's
    scalar,      // reads one element of self
  };
  std::string_view name;
  double flops;
  Kind kind = Kind::arithmetic;
};
using PK = PointwiseRule::Kind;
constexpr PointwiseRule kPointwise[] = {
    {"addcmul", 3},
    {"addcdiv", 3},
    {"lerp", 3},
    {"sqrt", 1},
    {"rsqrt", 1},
    {"exp", 1},
    {"log", 1},
    {"reciprocal", 1},
    {"neg", 1},
    {"clamp", 1, PK::clamp},
    {"clamp_min", 1},
    {"clamp_max", 1},
    {"bernoulli", 0, PK::fill},
    {"uniform", 0, PK::fill},
    {"normal", 0, PK::fill},
    {"random", 0, PK::fill},
    {"exponential", 0, PK::fill},
    {"zeros_like", 0, PK::fill},
    {"ones_like", 0, PK::fill},
    {"zero", 0, PK::fill},
    {"fill", 0, PK::fill},
    {"item", 0, PK::scalar},
    {"_local_scalar_dense", 0, PK::scalar},
};
// Under _foreach_ only (their single-tensor forms are the op table's binary ops).
constexpr PointwiseRule kForeachArithmetic[] = {{"add", 1}, {"sub", 1}, {"mul", 1}, {"div", 1}};

std::optional<AtenCost> pointwise(const AtenCall& c, std::string_view op) {
  constexpr std::string_view kForeach = "_foreach_";
  const bool foreach = starts_with(op, kForeach);
  if (foreach) op.remove_prefix(kForeach.size());
  const auto find = [&](std::span<const PointwiseRule> rules) -> const PointwiseRule* {
    const auto it = std::find_if(rules.begin(), rules.end(), [&](const PointwiseRule& r) { return r.name == op; });
    return it != rules.end() ? &*it : nullptr;
  };
  const PointwiseRule* rule = find(kPointwise);
  if (rule == nullptr && foreach) rule = find(kForeachArithmetic);
  if (rule == nullptr) return std::nullopt;
  const AtenArg* self = arg(c, 0);
  if (self == nullptr || (self->kind != AtenArgKind::tensor && self->kind != AtenArgKind::tensors) || !floating(self)) return std::nullopt;
  const auto n = static_cast<double>(self->elements);
  if (rule->kind == PK::scalar) return AtenCost{0.0, static_cast<double>(self->element_bytes), std::nullopt, {}};
  // Every tensor it reads (a fill reads none of self's), and self's size written: over self (in
  // place, a name ending in '_') or as a new tensor (of a list, each).
  double read = 0.0;
  for (std::size_t i = rule->kind == PK::fill ? 1 : 0; i < c.arg_count; ++i) read += bytes_of(&c.args[i]);
  double flops = rule->flops * n;
  if (rule->kind == PK::clamp) {
    flops = 0.0;
    for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
      const AtenArg* bound = arg(c, i);
      if (bound != nullptr && bound->kind != AtenArgKind::none) flops += rule->flops * n;
    }
  }
  return AtenCost{flops, read + n * self->element_bytes, std::nullopt, {}};
}

// ---- vector norms ----

// aten::norm (self, p[, dim, keepdim]) and linalg_vector_norm (self, ord, dim, keepdim, dtype):
// clip_grad_norm_'s per-parameter norms. The 2-norm (the default) squares and sums every
// element and takes one square root: 2n; the 1-norm sums the absolute values: 2n; the ∞-norm
// compares: n. Read n, write the reduced output (one element without `dim`).
std::optional<AtenCost> vector_norm(const AtenCall& c) {
  const AtenArg* x = tensor(c, 0);
  if (!floating(x)) return std::nullopt;
  const AtenArg* order = arg(c, 1);
  double p = 2.0;
  if (order != nullptr && order->kind == AtenArgKind::real) p = order->real;
  if (order != nullptr && order->kind == AtenArgKind::integer) p = static_cast<double>(order->integer);
  const auto n = static_cast<double>(x->elements);
  double out = 1.0;
  const AtenArg* dim = arg(c, 2);
  if (dim != nullptr && (dim->kind == AtenArgKind::ints || dim->kind == AtenArgKind::integer) && x->rank > 0) {
    double reduced = 1.0;
    const std::size_t count = dim->kind == AtenArgKind::integer ? 1 : dim->rank;
    for (std::size_t k = 0; k < count; ++k) {
      std::int64_t d = dim->kind == AtenArgKind::integer ? dim->integer : dim->dims[k];
      if (d < 0) d += x->rank;
      if (d < 0 || d >= x->rank) return std::nullopt;
      reduced *= static_cast<double>(x->dims[d]);
    }
    if (count > 0) out = n / std::max(reduced, 1.0);
  }
  const double flops = std::isinf(p) ? n : 2.0 * n;
  return AtenCost{flops, (n + out) * x->element_bytes, std::nullopt, {}};
}

// ---- losses ----

// The losses (binary_cross_entropy_with_logits, a composite of exp, log, clamp_min and
// arithmetic, is counted in the ops it runs). nll_loss_forward (self [N, C] or [C], nll_loss2d_forward's [N, C, H, W];
// target, weight, reduction): each target picks one value, summed (one add each, a mean's
// division folded in; a weight multiplies each: one more); its backward writes the input's
// whole gradient, zeros but the picked values (one FLOP each, two with a weight). mse_loss
// (self, target, reduction): (x − y)² summed: 3n (2n unreduced); its backward 2·(x − y)·dy
// (scaled by 1/n for a mean): 3n.
std::optional<AtenCost> loss(const AtenCall& c, std::string_view op) {
  const bool backward = op.ends_with("_backward");
  // cross_entropy_loss (self [N, C] or [C], target of class indices, weight, reduction,
  // ignore_index, label_smoothing): log_softmax over the classes (counted as softmax,
  // ops/softmax.cpp) and nll_loss's picks; label smoothing adds the mean of every log
  // probability (one add each). Its backward runs as theirs (LogSoftmaxBackward0,
  // NllLossBackward0). Class probabilities as the target (a float target) are not mapped.
  if (op == "cross_entropy_loss") {
    const AtenArg* x = tensor(c, 0);
    const AtenArg* target = tensor(c, 1);
    if (!floating(x) || x->rank == 0 || x->rank > 2 || target == nullptr || floating(target)) return std::nullopt;
    Attributes a;
    a.axis = x->rank == 1 ? 0 : 1;
    auto n = node_cost(ops::softmax_for_aten("log_softmax").definition->kind, dims(*x), a, 1);
    if (!n) return std::nullopt;
    const AtenArg* smoothing = arg(c, 5);
    const bool smoothed = smoothing != nullptr && smoothing->kind == AtenArgKind::real && smoothing->real != 0.0;
    const auto picks = static_cast<double>(target->elements);
    const double flops = count(n->cost.flops) + picks * (tensor(c, 2) != nullptr ? 2.0 : 1.0) + (smoothed ? static_cast<double>(x->elements) : 0.0);
    return AtenCost{flops, static_cast<double>(x->elements + 1) * x->element_bytes + bytes_of(target), std::nullopt, {}};
  }
  // nll_loss and nll_loss_nd are the composites around nll_loss_forward (nll_loss2d_forward past
  // [N, C]), with its arguments and its count.
  if (op == "nll_loss" || op == "nll_loss_nd") op = "nll_loss_forward";
  if (op == "nll_loss_forward" || op == "nll_loss2d_forward" || op == "nll_loss_backward" || op == "nll_loss2d_backward") {
    const std::size_t first = backward ? 1 : 0;  // backward: (grad_output, self, target, weight, ...)
    const AtenArg* x = tensor(c, first);
    const AtenArg* target = tensor(c, first + 1);
    if (!floating(x) || target == nullptr) return std::nullopt;
    const bool weighted = tensor(c, first + 2) != nullptr;
    const auto picks = static_cast<double>(target->elements);
    const double flops = picks * (weighted ? 2.0 : 1.0);
    const double target_bytes = bytes_of(target);
    if (backward) return AtenCost{flops, bytes_of(x) + target_bytes + bytes_of(tensor(c, 0)), std::nullopt, {}};
    const bool unreduced = integer(c, first + 3, 1) == 0;
    return AtenCost{flops, (picks + (unreduced ? picks : 1.0)) * x->element_bytes + target_bytes, std::nullopt, {}};
  }
  if (op == "mse_loss" || op == "mse_loss_backward") {
    const std::size_t first = backward ? 1 : 0;
    const AtenArg* x = tensor(c, first);
    const AtenArg* y = tensor(c, first + 1);
    if (!floating(x) || !floating(y)) return std::nullopt;
    const auto n = static_cast<double>(x->elements);
    const double inputs = (n + static_cast<double>(y->elements)) * x->element_bytes;
    if (backward) return AtenCost{3.0 * n, inputs + bytes_of(tensor(c, 0)) + bytes_of(x), std::nullopt, {}};
    const bool unreduced = integer(c, 2, 1) == 0;
    return AtenCost{(unreduced ? 2.0 : 3.0) * n, inputs + (unreduced ? n : 1.0) * x->element_bytes, std::nullopt, {}};
  }
  return std::nullopt;
}

// Long: the dispatch from an aten name to its family, one line each.
std::optional<AtenCost> cost_of(const AtenCall& call) {
  try {
    const std::string_view op = base_name(call.op);
    if (!starts_with(call.op, "aten::")) return std::nullopt;
    if (conv_layout(op)) return convolution(call, op);
    if (ops::product_for_aten(op) != nullptr) return matrix_product(call, op);
    if (op == "norm" || op == "linalg_vector_norm") return vector_norm(call);
    if (op.find("norm") != std::string_view::npos) return normalization(call, op);
    if (const auto kind = unary_kind(op, call)) return unary(call, op, *kind);
    if (const ops::BinaryDefinition* d = ops::binary_for_aten(op)) return binary(call, d->kind);
    if (op.find("pool") != std::string_view::npos) return pooling(call, op);  // nullopt where no definition names it
    if (starts_with(op, "upsample_")) return upsampling(call, op);
    if (const ops::ReduceModeDefinition* mode = ops::reduce_mode_for_aten(op)) return reduction(call, *mode);
    if (const ops::RecurrentDefinition* d = ops::recurrent_for_aten(op.substr(0, op.find('.')))) return recurrent(call, *d);
    if (const ops::SoftmaxCall softmax_call = ops::softmax_for_aten(op); softmax_call.definition != nullptr) return softmax(call, softmax_call);
    if (op == "dropout" || op == "native_dropout" || op == "feature_dropout" || op == "native_dropout_backward") return dropout(call, op);
    if (op == "embedding" || op == "embedding_dense_backward" || op == "embedding_backward") return embedding(call, op);
    if (auto cost = pointwise(call, op)) return cost;
    if (auto cost = loss(call, op)) return cost;
    return data_movement(call, op);
  } catch (const std::exception&) {
    return std::nullopt;  // out of memory while building the node: not counted
  }
}

}  // namespace

// A PyTorch row's roof bounds PyTorch's implementation of the op, which is not always the one a
// calibration measured. The GEMM ceiling is OpenBLAS's SGEMM (the calibration names its kernel:
// "openblas Haswell" where OPENBLAS_CORETYPE holds it to AVX2), the library PyTorch's matrix
// products call: it holds them. PyTorch's convolutions run oneDNN (mkldnn_convolution) or its
// own loops, which it does not bound: an AVX-512 oneDNN convolution's backward ran at 143 GFLOP/s
// against a 127 GFLOP/s OpenBLAS-Haswell ceiling on one thread of this project's VM. A function's
// calibrated rate is hwprof's own erf and exp kernels' (src/nn/activation.cpp), which PyTorch's
// vectorised ones outrun (aten::gelu at 4.1 to 4.7 GFLOP/s by the table's count against the erf
// kernel's 2.3). Those rows are held to the FMA peak, which bounds any implementation of the
// counted arithmetic; `hwprof profile` holds hwprof's own engine, whose kernels these are, to them.
std::optional<AtenCost> aten_cost(const AtenCall& call) {
  std::optional<AtenCost> cost = cost_of(call);
  if (cost) cost->roof = aten_gemm_backed(call) ? ComputeRoof{ComputeRoof::Kind::gemm, {}, 0.0} : ComputeRoof{};
  return cost;
}

bool aten_gemm_backed(const AtenCall& call) noexcept {
  if (!starts_with(call.op, "aten::")) return false;
  return ops::product_for_aten(base_name(call.op)) != nullptr;
}

std::int64_t blas_gemm_mnk(const AtenCall& call) noexcept {
  if (!starts_with(call.op, "aten::")) return 0;
  const std::string_view op = base_name(call.op);
  const bool batched = op == "bmm" || op == "baddbmm" || op == "addbmm";
  const std::size_t first = op == "mm" || op == "bmm" ? 0 : op == "addmm" || op == "baddbmm" || op == "addbmm" ? 1 : kAtenMaxArgs;
  if (first + 1 >= call.arg_count) return 0;
  const AtenArg& a = call.args[first];
  const AtenArg& b = call.args[first + 1];
  const std::uint8_t rank = batched ? 3 : 2;
  if (a.kind != AtenArgKind::tensor || b.kind != AtenArgKind::tensor || a.rank != rank || b.rank != rank) return 0;
  const std::int64_t m = a.dims[rank - 2];
  const std::int64_t k = a.dims[rank - 1];
  const std::int64_t n = b.dims[rank - 1];
  return m > 0 && k > 0 && n > 0 && b.dims[rank - 2] == k ? m * k * n : 0;
}

int openblas_gemm_threads(std::int64_t mnk, int pool) noexcept {
  constexpr double kPerThread = 65536.0 * 4.0;
  const double work = static_cast<double>(mnk);
  if (pool <= 1 || work <= kPerThread) return 1;
  return static_cast<int>(std::min(static_cast<double>(pool), std::floor(work / kPerThread)));
}

namespace {

// A word at a time (a byte-wise hash of every input cost more than the rest of a call), the
// scalars folded into one word per input.
std::uint64_t hash_inputs(const AtenCall& call, std::uint64_t h) noexcept {
  const auto mix = [&h](std::uint64_t v) { h = (h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdULL; };
  for (std::size_t i = 0; i < call.arg_count && i < kAtenMaxArgs; ++i) {
    const AtenArg& a = call.args[i];
    mix(static_cast<std::uint64_t>(a.kind) | static_cast<std::uint64_t>(a.element) << 8 | static_cast<std::uint64_t>(a.element_bytes) << 16 |
        static_cast<std::uint64_t>(a.rank) << 24 | static_cast<std::uint64_t>(i) << 32);
    for (std::size_t d = 0; d < a.rank && d < kAtenMaxRank; ++d) mix(static_cast<std::uint64_t>(a.dims[d]));
    std::uint64_t real_bits = 0;
    std::memcpy(&real_bits, &a.real, sizeof real_bits);
    mix(static_cast<std::uint64_t>(a.elements) ^ (static_cast<std::uint64_t>(a.count) << 40) ^
        (static_cast<std::uint64_t>(a.integer) * 0xC2B2AE3D27D4EB4FULL) ^ (real_bits * 0x165667B19E3779F9ULL));
    for (std::size_t d = 0; a.kind == AtenArgKind::reals && d < a.rank && d < kAtenMaxReals; ++d) {
      std::memcpy(&real_bits, &a.reals[d], sizeof real_bits);
      mix(real_bits);
    }
  }
  return h;
}

}  // namespace

std::uint64_t aten_signature(const AtenCall& call) noexcept {
  return hash_inputs(call, std::hash<std::string_view>{}(call.op));
}

std::uint64_t aten_call_key(const AtenCall& call) noexcept {
  return hash_inputs(call, reinterpret_cast<std::uintptr_t>(call.op.data()) * 0x9E3779B97F4A7C15ULL);
}

}  // namespace hwprof::pytorch
