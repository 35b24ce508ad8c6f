// ONNX's data-movement ops on activations onto hwprof's slice, pad, gather, expand and tile
// layers (docs/onnx.md, "How ops map"). Each works on per-sample axes: a node that would slice,
// pad, gather, tile or broadcast the batch axis is refused, naming the node and the input or
// attribute, since every layer keeps one output per sample. Bounds, pads and repeats are
// constants or shape arithmetic the importer evaluates (fold_shape_computations): PyTorch
// computes x.chunk(2, dim=1)'s bounds from Shape(x). Op semantics follow the ONNX operator
// specification (https://onnx.ai/onnx/operators/, opsets 11 to 17).
#include "graph/onnx_importer.hpp"

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "graph/shape_inference.hpp"

namespace hwprof::graph {
namespace {

// Bounds past ±2^62 mean "to the end" (the exporter writes ±2^63 − 1); clamped, they keep that
// meaning for any real size and cannot overflow a sum.
constexpr std::int64_t kBoundLimit = std::int64_t{1} << 62;

std::int64_t clamp_bound(std::int64_t v) {
  return std::clamp(v, -kBoundLimit, kBoundLimit);
}

std::string list_text(const std::vector<std::int64_t>& v) {
  return dims_text(v);
}

}  // namespace

// A Transpose whose perm moves the batch axis (ONNX axis 0) to axis 1, every reader of which
// (Shape aside) is a Gather of one constant index on axis 0: the gathered tensors have the
// batch first again. PyTorch's attention writes it so: qkv.reshape(B, N, 3, heads, d)
// .permute(2, 0, 3, 1, 4), then q, k, v = qkv[0], qkv[1], qkv[2] (Swin's, timm's ViT's).
bool Importer::moves_batch_for_gathers(const onnx::NodeProto& n, const std::vector<std::int64_t>& perm) {
  const Dims& d = dims_of(n.input(0));
  if (perm.size() < 3 || perm.size() != d.size() || perm[1] != 0 || n.output_size() != 1 || is_graph_output(n.output(0))) return false;
  std::vector<bool> seen(perm.size(), false);
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(perm.size()) || seen[static_cast<std::size_t>(p)]) return false;
    seen[static_cast<std::size_t>(p)] = true;
  }
  const auto readers = consumers_.find(n.output(0));
  if (readers == consumers_.end()) return false;
  int gathers = 0;
  for (int i : readers->second) {
    const onnx::NodeProto& r = onnx_node(i);
    if (r.op_type() == "Shape") continue;
    const onnx::TensorProto* index = r.input_size() == 2 ? constant(r.input(1)) : nullptr;
    if (r.op_type() != "Gather" || r.input(0) != n.output(0) || index == nullptr || index->dims_size() != 0) return false;
    const std::int64_t axis = attr_int(r, "axis", 0);
    if (axis != 0 && axis != -static_cast<std::int64_t>(perm.size())) return false;
    ++gathers;
  }
  if (gathers == 0) return false;
  moved_[n.output(0)] = MovedBatch{n.input(0), perm};
  values_[n.output(0)] = values_.at(n.input(0));  // read by the Gathers only, through moved_
  return true;
}

// One Gather of a moved-batch Transpose (moves_batch_for_gathers): the index k of source axis
// a = perm[0] is a select of that per-sample axis; the remaining axes come out in perm's order
// after it, which a transpose makes where it is not already the source's.
void Importer::map_moved_gather(const onnx::NodeProto& n, const MovedBatch& m) {
  bool folded = false;
  const auto in = sample_shape(m.source, &folded);
  const auto out = sample_shape(n.output(0));
  const onnx::TensorProto* it = constant(n.input(1));
  const auto index = scalar(n.input(1));
  if (!in || !out || it == nullptr || !index) return unsupported(n, "the gathered tensor's shape is not known per sample");
  const std::int64_t fold = folded ? 1 : 0;
  const std::int64_t source_axis = m.perm[0];
  const std::int64_t axis = source_axis - 1 + fold;  // per-sample
  const std::int64_t size = (*in)[static_cast<std::size_t>(axis)];
  if (!(*index >= static_cast<double>(-size) && *index < static_cast<double>(size)) || *index != std::floor(*index)) {
    fail(node_label(n) + ": index " + std::to_string(*index) + " is out of range for axis 0 of size " + std::to_string(size));
  }
  Attributes s;
  s.axis = axis;
  s.index = static_cast<std::int64_t>(*index);
  const int selected = add_node(n, OpKind::select, {values_.at(m.source).node}, s);
  // The result's per-sample axes, in order, as axes of the selected tensor (the source's with
  // `axis` dropped): ONNX axis j of the result is source axis perm[j + 1].
  std::vector<std::int64_t> order;
  for (std::size_t j = folded ? 0 : 1; j + 1 < m.perm.size(); ++j) {
    const std::int64_t q = m.perm[j + 1] - 1 + fold;
    order.push_back(q > axis ? q - 1 : q);
  }
  bool identity = true;
  for (std::size_t j = 0; j < order.size(); ++j) identity = identity && order[j] == static_cast<std::int64_t>(j);
  if (identity) return;
  expected.erase(graph_.nodes[static_cast<std::size_t>(selected)].name);  // ONNX's output is the transposed one
  Attributes t;
  t.perm = order;
  add_node(n, OpKind::transpose, {selected}, t);
}

// Slice (opset 10 on: starts, ends, axes and steps are inputs) of an activation.
void Importer::map_slice(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input " + dims_text(dims_of(n.input(0))) + " does not have the batch as its first axis, or is unknown");
  const auto value = [&](int i) { return n.input_size() > i && !n.input(i).empty() ? int_values(n.input(i)) : std::nullopt; };
  const auto starts = value(1), ends = value(2);
  if (!starts || !ends)
    return unsupported(n, "input starts or ends is computed in the graph from values hwprof cannot evaluate (not a constant or shape arithmetic)");
  const auto rank = static_cast<std::int64_t>(in->size()) + 1;
  std::vector<std::int64_t> axes(starts->size());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
  if (n.input_size() > 3 && !n.input(3).empty()) {
    const auto given = value(3);
    if (!given) return unsupported(n, "input axes is computed in the graph, not a constant");
    axes = *given;
  }
  std::vector<std::int64_t> steps(starts->size(), 1);
  if (n.input_size() > 4 && !n.input(4).empty()) {
    const auto given = value(4);
    if (!given) return unsupported(n, "input steps is computed in the graph, not a constant");
    steps = *given;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() || steps.size() != starts->size())
    return unsupported(n, "inputs starts " + list_text(*starts) + ", ends " + list_text(*ends) + ", axes " + list_text(axes) + " and steps " +
                              list_text(steps) + " differ in length");
  Attributes a;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return unsupported(n, "input axes " + list_text(axes) + ": axis " + std::to_string(axes[i]) + " is out of range");
    if (steps[i] == 0) return unsupported(n, "input steps " + list_text(steps) + " has a step of 0");
    if (axis == 0) {
      // Slicing the batch is refused, unless the slice keeps it whole ([:, ...] written out).
      Attributes whole;
      whole.axes = {0};
      whole.starts = {clamp_bound((*starts)[i])};
      whole.ends = {clamp_bound((*ends)[i])};
      whole.steps = {clamp_bound(steps[i])};
      const SliceRange batch = slice_ranges({batch_}, whole)[0];
      if (batch.start != 0 || batch.step != 1 || batch.count != batch_)
        return unsupported(n, "input axes " + list_text(axes) + ": it slices the batch axis 0; a layer keeps every sample");
      continue;
    }
    a.axes.push_back(axis - 1);
    a.starts.push_back(clamp_bound((*starts)[i]));
    a.ends.push_back(clamp_bound((*ends)[i]));
    a.steps.push_back(clamp_bound(steps[i]));
  }
  const std::vector<SliceRange> ranges = slice_ranges(*in, a);
  bool whole = true;
  for (std::size_t d = 0; d < in->size(); ++d) whole = whole && ranges[d].start == 0 && ranges[d].step == 1 && ranges[d].count == (*in)[d];
  if (whole) return alias(n, n.input(0));
  if (std::any_of(ranges.begin(), ranges.end(), [](const SliceRange& r) { return r.count == 0; })) {
    // torch.roll by 0 (Swin's shift where the window covers the axis) writes x[:, :0]: an empty
    // tensor, which only a Concat may read (it contributes nothing there).
    empty_values_.insert(n.output(0));
    return alias(n, n.input(0));
  }
  add_node(n, OpKind::slice, {values_.at(n.input(0)).node}, a);
}

// Split: one slice layer per output, along the axis, each as long as ONNX's inference makes
// that output (from the split sizes, an input from opset 13 and an attribute before).
void Importer::map_split(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input " + dims_text(dims_of(n.input(0))) + " does not have the batch as its first axis, or is unknown");
  const auto rank = static_cast<std::int64_t>(in->size()) + 1;
  const std::int64_t given = attr_int(n, "axis", 0);
  const std::int64_t axis = given < 0 ? given + rank : given;
  if (axis <= 0 || axis >= rank) return unsupported(n, "attribute axis " + std::to_string(given) + " is the batch axis or out of range");
  std::vector<std::int64_t> sizes;
  for (const std::string& out : n.output()) {
    const auto shape = per_sample(out);
    if (!shape || shape->size() != in->size())
      return unsupported(n, "output '" + common::printable_name(out) + "' has a shape " + dims_text(dims_of(out)) + " that is unknown");
    sizes.push_back((*shape)[static_cast<std::size_t>(axis - 1)]);
  }
  std::int64_t total = 0;
  for (std::int64_t size : sizes) total += size;
  if (total != (*in)[static_cast<std::size_t>(axis - 1)])
    return unsupported(n, "its outputs' sizes along axis " + std::to_string(axis) + " add up to " + std::to_string(total) + ", not the input's " +
                              std::to_string((*in)[static_cast<std::size_t>(axis - 1)]));
  const int x = values_.at(n.input(0)).node;
  std::int64_t offset = 0;
  int first = -1;
  std::vector<int> layers(static_cast<std::size_t>(n.output_size()), -1);
  for (int i = 0; i < n.output_size(); ++i) {
    const std::int64_t size = sizes[static_cast<std::size_t>(i)];
    Attributes a;
    a.axes = {axis - 1};
    a.starts = {offset};
    a.ends = {offset + size};
    a.steps = {1};
    offset += size;
    if (n.output(i).empty()) continue;
    const int index = add_node(n, OpKind::slice, {x}, a);
    Node& node = graph_.nodes[static_cast<std::size_t>(index)];
    if (first < 0) {
      first = index;
    } else {
      // Named after the first output's layer: "stage2.split", "stage2.split_1", ...
      const std::string name = graph_.nodes[static_cast<std::size_t>(first)].name + "_" + std::to_string(i);
      if (names_taken_.count(name) == 0) {
        expected.erase(node.name);
        names_taken_.erase(node.name);
        node.name = name;
        names_taken_[name] = 1;
      }
    }
    expected[node.name] = *per_sample(n.output(i));
    layers[static_cast<std::size_t>(i)] = index;
  }
  // add_node gave output 0 each layer in turn: every output its own.
  for (int i = 0; i < n.output_size(); ++i) {
    if (!n.output(i).empty()) values_[n.output(i)] = Value{Value::Kind::activation, layers[static_cast<std::size_t>(i)], nullptr};
  }
}

// A Pad that is not folded into a Conv or an AveragePool (map_pad): a pad layer. ONNX's modes
// constant, reflect and edge are PyTorch's F.pad modes constant, reflect and replicate.
void Importer::map_pad_layer(const onnx::NodeProto& n, const std::vector<std::int64_t>& pads) {
  const auto in = per_sample(n.input(0));
  const std::string mode = attr_string(n, "mode", "constant");
  Attributes a;
  if (mode == "reflect") {
    a.pad_mode = PadMode::reflect;
  } else if (mode == "edge") {
    a.pad_mode = PadMode::edge;
  } else if (mode != "constant") {
    return unsupported(n, "attribute mode '" + common::printable_name(mode) + "' is not mapped (constant, reflect and edge are)");
  }
  if (mode == "constant" && n.input_size() > 2 && !n.input(2).empty()) {
    const onnx::TensorProto* v = constant(n.input(2));
    if (v == nullptr || v->data_type() != onnx::TensorProto_DataType_FLOAT) return unsupported(n, "input constant_value is not a float32 constant");
    const std::vector<float> values = floats(*v);
    if (values.size() != 1 || !std::isfinite(values[0])) return unsupported(n, "input constant_value is not one finite value");
    a.pad_value = values[0];
  }
  const std::size_t r = in->size() + 1;
  if (pads[0] != 0 || pads[r] != 0) return unsupported(n, "input pads " + list_text(pads) + " pads the batch axis 0; a layer keeps every sample");
  for (std::size_t d = 1; d < r; ++d) {
    const std::int64_t size = (*in)[d - 1];
    if (pads[d] < -size || pads[r + d] < -size || pads[d] > kBoundLimit || pads[r + d] > kBoundLimit)
      return unsupported(n, "input pads " + list_text(pads) + ": axis " + std::to_string(d) + " of size " + std::to_string(size) +
                                " is cropped past its end or padded beyond 2^62");
    if (a.pad_mode == PadMode::reflect && (pads[d] >= size || pads[r + d] >= size))
      return unsupported(n, "input pads " + list_text(pads) + ": reflect padding of axis " + std::to_string(d) + " must be smaller than its size " +
                                std::to_string(size));
  }
  for (std::size_t d = 1; d < r; ++d) a.pads.push_back(pads[d]);
  for (std::size_t d = 1; d < r; ++d) a.pads.push_back(pads[r + d]);
  add_node(n, OpKind::pad, {values_.at(n.input(0)).node}, a);
}

// Gather of an activation along a per-sample axis by a constant tensor of indices (x[:, idx]):
// a gather layer over the flattened indices, then a reshape where the indices have more than
// one axis (ONNX puts the index tensor's shape where the axis was).
void Importer::map_gather_activation(const onnx::NodeProto& n) {
  const onnx::TensorProto* t = constant(n.input(1));
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input " + dims_text(dims_of(n.input(0))) + " does not have the batch as its first axis, or is unknown");
  const auto rank = static_cast<std::int64_t>(in->size()) + 1;
  const std::int64_t given = attr_int(n, "axis", 0);
  const std::int64_t axis = given < 0 ? given + rank : given;
  if (axis <= 0 || axis >= rank) return unsupported(n, "attribute axis " + std::to_string(given) + " is the batch axis or out of range");
  if (t->data_type() != onnx::TensorProto_DataType_INT64 && t->data_type() != onnx::TensorProto_DataType_INT32)
    return unsupported(n, "the indices are not int64 or int32");
  Attributes a;
  a.axis = axis - 1;
  a.indices = integers(*t);
  if (a.indices.empty()) return unsupported(n, "the indices are empty");
  const std::int64_t size = (*in)[static_cast<std::size_t>(axis - 1)];
  for (std::int64_t i : a.indices) {
    if (i < -size || i >= size)
      fail(node_label(n) + ": index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(size) +
           " (valid: " + std::to_string(-size) + " to " + std::to_string(size - 1) + ")");
  }
  const int gather = add_node(n, OpKind::gather, {values_.at(n.input(0)).node}, a);
  if (t->dims_size() == 1) return;
  const auto out = per_sample(n.output(0));
  Node& gathered = graph_.nodes[static_cast<std::size_t>(gather)];
  expected.erase(gathered.name);  // ONNX's output is the reshaped one
  if (!out) return unsupported(n, "the output's shape " + dims_text(dims_of(n.output(0))) + " is unknown");
  Node reshape;
  reshape.name = gathered.name + ".reshape";
  reshape.op = OpKind::reshape;
  reshape.inputs = {gather};
  reshape.attrs.shape = *out;
  reshape.spec_pointer = describe(n) + " (indices of " + std::to_string(t->dims_size()) + " axes)";
  names_taken_[reshape.name] = 1;
  expected[reshape.name] = *out;
  graph_.nodes.push_back(std::move(reshape));
  set_output(n, static_cast<int>(graph_.nodes.size()) - 1);
}

// Expand of an activation: its per-sample axes broadcast to the output ONNX's inference gives
// (the shape input, constant or computed). An Expand that adds axes in front would move the
// batch off the first axis.
void Importer::map_expand(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const auto out = per_sample(n.output(0));
  if (!in || !out)
    return unsupported(n, "the output " + dims_text(dims_of(n.output(0))) + " does not keep the batch as its first axis (batch " +
                              std::to_string(batch_) + "), or is unknown");
  if (out->size() != in->size())
    return unsupported(n, "it adds axes in front of the input " + dims_text(dims_of(n.input(0))) + ", which would move the batch axis");
  if (*out == *in) return alias(n, n.input(0));
  Attributes a;
  a.shape = *out;
  add_node(n, OpKind::expand, {values_.at(n.input(0)).node}, a);
}

// Tile of an activation: the repeats a constant or shape arithmetic, 1 for the batch axis.
void Importer::map_tile(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in) return unsupported(n, "the input " + dims_text(dims_of(n.input(0))) + " does not have the batch as its first axis, or is unknown");
  const auto repeats = n.input_size() > 1 ? int_values(n.input(1)) : std::nullopt;
  if (!repeats) return unsupported(n, "input repeats is computed in the graph from values hwprof cannot evaluate");
  if (repeats->size() != in->size() + 1)
    return unsupported(n, "input repeats " + list_text(*repeats) + " does not have one value per axis of " + dims_text(dims_of(n.input(0))));
  if ((*repeats)[0] != 1) return unsupported(n, "input repeats " + list_text(*repeats) + " repeats the batch axis 0; a layer keeps every sample");
  if (std::any_of(repeats->begin(), repeats->end(), [](std::int64_t r) { return r < 1 || r > kBoundLimit; }))
    return unsupported(n, "input repeats " + list_text(*repeats) + " has a count below 1 (an empty tensor) or above 2^62");
  if (std::all_of(repeats->begin(), repeats->end(), [](std::int64_t r) { return r == 1; })) return alias(n, n.input(0));
  Attributes a;
  a.repeats.assign(repeats->begin() + 1, repeats->end());
  add_node(n, OpKind::tile, {values_.at(n.input(0)).node}, a);
}

// Where(condition, X, Y) with a constant boolean condition (x.masked_fill(mask, v) exports as
// Where(mask, v, x)): X and Y two activations, or one activation and a float32 constant; each
// broadcast to the output without widening the batch (right-aligned, a full-rank constant's
// batch axis 1, an activation of the output's rank).
void Importer::map_where(const onnx::NodeProto& n) {
  const auto out = per_sample(n.output(0));
  if (!out) return unsupported(n, "the output " + dims_text(dims_of(n.output(0))) + " does not have the batch as its first axis, or is unknown");
  const onnx::TensorProto* cond = constant(n.input(0));
  if (cond == nullptr || cond->data_type() != onnx::TensorProto_DataType_BOOL)
    return unsupported(n, "input condition is not a constant boolean tensor (a condition computed from activations is not mapped)");
  // A constant's per-sample shape: right-aligned to the output's rank, its batch axis 1.
  const auto per_sample_constant = [&](const onnx::TensorProto& t) -> std::optional<Shape> {
    Dims d(t.dims().begin(), t.dims().end());
    if (d.size() > out->size() + 1 || (d.size() == out->size() + 1 && d[0] != 1)) return std::nullopt;
    if (d.size() == out->size() + 1) d.erase(d.begin());
    Shape s(out->size() - d.size(), 1);
    s.insert(s.end(), d.begin(), d.end());
    return s;
  };
  const auto cshape = per_sample_constant(*cond);
  if (!cshape) return unsupported(n, "input condition " + dims_text(Dims(cond->dims().begin(), cond->dims().end())) + " varies over the batch axis");
  Attributes a;
  a.condition = *cshape;
  std::vector<int> inputs;
  const onnx::TensorProto* operand = nullptr;
  for (int i = 1; i <= 2; ++i) {
    const std::string& v = n.input(i);
    if (is_activation(v)) {
      const auto shape = per_sample(v);
      if (!shape || shape->size() != out->size())
        return unsupported(n, "input '" + common::printable_name(v) + "' " + dims_text(dims_of(v)) + " does not have the output's rank");
      inputs.push_back(values_.at(v).node);
      continue;
    }
    operand = constant(v);
    if (operand == nullptr || operand->data_type() != onnx::TensorProto_DataType_FLOAT)
      return unsupported(n, "input '" + common::printable_name(v) + "' is neither a layer's output nor a float32 constant");
    const auto shape = per_sample_constant(*operand);
    if (!shape) return unsupported(n, "input '" + common::printable_name(v) + "' varies over the batch axis");
    a.operand = *shape;
    a.constant_first = i == 1;
  }
  // The condition's values: one byte each (raw data) or int32_data, as ONNX stores booleans.
  const std::string bytes = raw_bytes(*cond);
  const auto count = static_cast<std::size_t>(product(Dims(cond->dims().begin(), cond->dims().end())));
  if (bytes.size() != count && static_cast<std::size_t>(cond->int32_data_size()) != count)
    return unsupported(n, "input condition holds no " + std::to_string(count) + " boolean values (neither raw bytes nor int32_data)");
  std::vector<float> mask(count);
  for (std::size_t i = 0; i < count; ++i) {
    const bool on = bytes.size() == count ? bytes[i] != 0
                                          : static_cast<std::size_t>(cond->int32_data_size()) == count && cond->int32_data(static_cast<int>(i)) != 0;
    mask[i] = on ? 1.0f : 0.0f;
  }
  add_node(n, OpKind::where, inputs, a);
  Node& node = graph_.nodes.back();
  node.initial_values.push_back(initial("condition", cond->name(), a.condition, std::move(mask)));
  if (operand != nullptr) node.initial_values.push_back(initial("operand", operand->name(), a.operand, floats(*operand)));
}

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
