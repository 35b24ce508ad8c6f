// ONNX LSTM and GRU nodes onto hwprof's lstm and gru layers (docs/onnx.md, "How ops map", its
// paragraph on recurrent layers).
//
// ONNX's recurrent nodes read X [T, N, C] and write Y [T, D, N, H], Y_h (and LSTM's Y_c)
// [D, N, H]: the batch is on axis 1 or 2. hwprof keeps the batch on axis 0 of every tensor,
// and its lstm and gru layers read [N, T, C] and write [N, T, D·H]. PyTorch exports
// nn.LSTM(batch_first=True) as Transpose[1, 0, 2] → LSTM → Squeeze(1) (one direction) or
// Transpose[0, 2, 1, 3] + Reshape [T, N, 2H] (two) → the next layer's LSTM … → Transpose[1, 0, 2]
// back. The values between the two Transposes are "sequence views": ONNX tensors in the
// sequence-first layout whose data is an hwprof node's batch-first output. The importer tracks
// them and maps only what reads them as above (and Gather of one state of Y_h); anything else
// that reads one is refused by name, so no layer ever sees a batch that is not on axis 0.
//
// Weights: ONNX's W [D, G·H, C], R [D, G·H, H] and B [D, 2·G·H] (W's bias, then R's) hold the
// gates in ONNX's order, i o f c (LSTM) and z r h (GRU); PyTorch's are i f g o and r z n.
// PyTorch writes its weights through Slice and Concat nodes that reorder them (when exported
// without constant folding), which are evaluated here.
#include <algorithm>
#include <string>
#include <vector>

#include "common/printable.hpp"
#include "common/stages.hpp"
#include "common/suggest.hpp"
#include "graph/onnx_importer.hpp"

#if HWPROF_HAVE_ONNX

namespace hwprof::graph {
namespace {

// The rows of one direction's gates [G·H, cols] reordered into PyTorch's gate order (the
// definition's, ops/recurrent.cpp).
std::vector<float> pytorch_gate_order(const ops::RecurrentDefinition& def, const float* onnx, std::int64_t hidden, std::int64_t cols) {
  const std::int64_t gates = def.gates;
  std::vector<float> out(static_cast<std::size_t>(gates * hidden * cols));
  const std::int64_t block = hidden * cols;
  for (std::int64_t k = 0; k < gates; ++k) {
    const std::int64_t from = def.onnx_gate_order[static_cast<std::size_t>(k)];
    std::copy_n(onnx + from * block, block, out.begin() + k * block);
  }
  return out;
}

}  // namespace

// A float tensor computed from constants only by Slice (step 1), Concat, Unsqueeze, Squeeze
// and Identity (PyTorch's gate reordering), or nullopt.
std::optional<Importer::FloatConstant> Importer::float_constant(const std::string& value, int depth) const {
  if (depth > 16 || value.empty()) return std::nullopt;
  if (const onnx::TensorProto* t = constant(value)) {
    if (t->data_type() != onnx::TensorProto_DataType_FLOAT) return std::nullopt;
    return FloatConstant{Dims(t->dims().begin(), t->dims().end()), floats(*t)};
  }
  const auto at = producer_.find(value);
  if (at == producer_.end()) return std::nullopt;
  const onnx::NodeProto& n = onnx_node(at->second);
  const std::string& op = n.op_type();
  if (op == "Identity") return float_constant(n.input(0), depth + 1);
  const auto ints_input = [&](int i) -> std::optional<std::vector<std::int64_t>> {
    if (n.input_size() <= i || n.input(i).empty()) return std::nullopt;
    const onnx::TensorProto* t = constant(n.input(i));
    if (t == nullptr) return std::nullopt;
    return integers(*t);
  };
  if (op == "Unsqueeze" || op == "Squeeze") {
    auto x = float_constant(n.input(0), depth + 1);
    if (!x) return std::nullopt;
    const Dims& d = dims_of(n.output(0));
    if (d.empty() || product(d) != static_cast<std::int64_t>(x->values.size())) return std::nullopt;
    x->dims = d;  // the data is the same; ONNX's inference knows the new shape
    return x;
  }
  if (op == "Slice") {
    auto x = float_constant(n.input(0), depth + 1);
    const auto starts = ints_input(1), ends = ints_input(2), axes = ints_input(3), steps = ints_input(4);
    if (!x || !starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (steps && *steps != std::vector<std::int64_t>{1}) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(x->dims.size());
    std::int64_t axis = axes && axes->size() == 1 ? (*axes)[0] : 0;
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    const std::int64_t size = x->dims[static_cast<std::size_t>(axis)];
    const auto clamp = [size](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + size : i, 0, size); };
    const std::int64_t b = clamp((*starts)[0]), e = std::max(b, clamp((*ends)[0]));
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t k = 0; k < axis; ++k) outer *= x->dims[static_cast<std::size_t>(k)];
    for (std::int64_t k = axis + 1; k < rank; ++k) inner *= x->dims[static_cast<std::size_t>(k)];
    FloatConstant out{x->dims, {}};
    out.dims[static_cast<std::size_t>(axis)] = e - b;
    out.values.reserve(static_cast<std::size_t>(outer * (e - b) * inner));
    for (std::int64_t o = 0; o < outer; ++o) {
      const auto first = x->values.begin() + (o * size + b) * inner;
      out.values.insert(out.values.end(), first, first + (e - b) * inner);
    }
    return out;
  }
  if (op == "Concat") {
    std::vector<FloatConstant> parts;
    for (const std::string& in : n.input()) {
      auto p = float_constant(in, depth + 1);
      if (!p || (!parts.empty() && p->dims.size() != parts[0].dims.size())) return std::nullopt;
      parts.push_back(std::move(*p));
    }
    if (parts.empty()) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(parts[0].dims.size());
    std::int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    std::int64_t outer = 1;
    for (std::int64_t k = 0; k < axis; ++k) outer *= parts[0].dims[static_cast<std::size_t>(k)];
    FloatConstant out{parts[0].dims, {}};
    out.dims[static_cast<std::size_t>(axis)] = 0;
    for (const FloatConstant& p : parts) out.dims[static_cast<std::size_t>(axis)] += p.dims[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o) {
      for (const FloatConstant& p : parts) {
        const std::int64_t chunk = static_cast<std::int64_t>(p.values.size()) / std::max<std::int64_t>(outer, 1);
        out.values.insert(out.values.end(), p.values.begin() + o * chunk, p.values.begin() + (o + 1) * chunk);
      }
    }
    return out;
  }
  return std::nullopt;
}

// Whether a value is zeros whatever the batch: a constant of zeros, or zeros broadcast
// (Expand, as PyTorch writes h0 when none is given) or made (ConstantOfShape), sliced or reshaped.
bool Importer::all_zeros(const std::string& value, int depth) const {
  if (depth > 16) return false;
  if (auto c = float_constant(value, depth)) return std::all_of(c->values.begin(), c->values.end(), [](float v) { return v == 0.0f; });
  const auto at = producer_.find(value);
  if (at == producer_.end()) return false;
  const onnx::NodeProto& n = onnx_node(at->second);
  const std::string& op = n.op_type();
  if (op == "Expand" || op == "Slice" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Identity")
    return all_zeros(n.input(0), depth + 1);
  if (op == "ConstantOfShape") {
    const auto* v = attr(n, "value");
    if (v == nullptr || !v->has_t()) return true;  // ONNX's default: zeros
    const std::vector<float> f = floats(v->t());
    return std::all_of(f.begin(), f.end(), [](float x) { return x == 0.0f; });
  }
  return false;
}

// An ONNX LSTM or GRU node onto one lstm or gru layer; its input must be a sequence view
// (the batch-first tensor behind PyTorch's Transpose, or the previous layer's output).
// Long: the checks of every attribute and input ONNX allows, each refused by name, then the
// weights' reordering; splitting it would only pass the node around.
void Importer::map_recurrent(const onnx::NodeProto& n, const ops::RecurrentDefinition& def) {
  const bool lstm = def.cell == ops::RecurrentCell::lstm;
  const std::int64_t gates = def.gates;
  const auto view = sequence_views_.find(n.input(0));
  if (view == sequence_views_.end() || view->second.kind != SequenceView::Kind::sequence) {
    const bool model_input = is_activation(n.input(0)) && values_.at(n.input(0)).node == kModelInput;
    return unsupported(n, std::string("input X ('") + common::printable_name(n.input(0)) + "') is in ONNX's layout [T, N, C], the batch on axis 1" +
                              (model_input ? " of the model's input" : "") +
                              "; hwprof keeps the batch on axis 0: export the model with batch_first=True (nn.LSTM/nn.GRU(..., "
                              "batch_first=True)), whose Transpose before the layer hwprof folds in");
  }
  if (attr_int(n, "layout", 0) != 0) return unsupported(n, "attribute layout 1 (batch-major X and Y) is not mapped; PyTorch writes layout 0");
  if (attr(n, "clip") != nullptr) return unsupported(n, "attribute clip (a cell clip) is not mapped; PyTorch's layers do not clip");
  if (lstm && attr_int(n, "input_forget", 0) != 0) return unsupported(n, "attribute input_forget 1 (coupled input and forget gates) is not mapped");
  if (!lstm && attr_int(n, "linear_before_reset", 0) != 1)
    return unsupported(n, "attribute linear_before_reset 0 is not mapped: PyTorch's GRU applies r to W_hn·h + b_hn (linear_before_reset 1)");
  if (attr(n, "activation_alpha") != nullptr || attr(n, "activation_beta") != nullptr)
    return unsupported(n, "attributes activation_alpha and activation_beta are not mapped (the default activations take none)");
  const std::string direction = attr_string(n, "direction", "forward");
  if (direction != "forward" && direction != "bidirectional")
    return unsupported(
        n, "attribute direction '" + common::printable_name(direction) + "': forward and bidirectional are mapped (PyTorch writes no other)");
  const std::int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (const auto* acts = attr(n, "activations")) {
    const std::span<const std::string_view> one = def.onnx_activations;
    bool defaults = acts->strings_size() == static_cast<int>(one.size() * static_cast<std::size_t>(dirs));
    for (int i = 0; defaults && i < acts->strings_size(); ++i) defaults = acts->strings(i) == one[static_cast<std::size_t>(i) % one.size()];
    if (!defaults)
      return unsupported(n, "attribute activations: only the defaults (" + common::join({one.begin(), one.end()}) + " per direction) are mapped");
  }
  const auto present = [&](int i) { return n.input_size() > i && !n.input(i).empty(); };
  if (present(4)) return unsupported(n, "input sequence_lens is not mapped: every sequence runs all T steps");
  if (lstm && present(7)) return unsupported(n, "input P (peephole weights) is not mapped; PyTorch's LSTM has none");
  // A value whose data does not fill its shape (a malformed file) is no constant here.
  const auto whole = [](std::optional<FloatConstant> c) {
    return c && product(c->dims) == static_cast<std::int64_t>(c->values.size()) ? c : std::nullopt;
  };
  const auto w = whole(float_constant(n.input(1), 0)), r = whole(float_constant(n.input(2), 0));
  if (!w || !r) return unsupported(n, "the weights W and R are not constants");
  const std::int64_t hidden = attr_int(n, "hidden_size", r->dims.size() == 3 ? r->dims[2] : 0);
  const Dims& x = dims_of(n.input(0));
  const std::int64_t c = x.size() == 3 ? x[2] : -1;
  if (hidden < 1 || w->dims != Dims{dirs, gates * hidden, c} || r->dims != Dims{dirs, gates * hidden, hidden}) {
    return unsupported(n, "W " + dims_text(w->dims) + " and R " + dims_text(r->dims) + " are not [" + std::to_string(dirs) + ", " +
                              std::to_string(gates) + "·hidden_size, input] and [" + std::to_string(dirs) + ", " + std::to_string(gates) +
                              "·hidden_size, hidden_size] for hidden_size " + std::to_string(hidden));
  }
  std::optional<FloatConstant> b;
  if (present(3)) {
    b = whole(float_constant(n.input(3), 0));
    if (!b || b->dims != Dims{dirs, 2 * gates * hidden}) return unsupported(n, "the bias B is not a constant [D, 2·G·H]");
  }
  std::vector<int> inputs{view->second.node};
  if (const auto refused = initial_states(n, def, dirs, hidden, inputs)) return unsupported(n, *refused);
  Attributes a;
  a.hidden_size = hidden;
  a.bidirectional = dirs == 2;
  a.bias = b.has_value();
  const int index = add_node(n, def.kind, inputs, a);
  Node& node = graph_.nodes[static_cast<std::size_t>(index)];
  expected.erase(node.name);
  name_stacked_layer(n, node);
  name_state_slices(node);
  expected[node.name] = Shape{x[0], dirs * hidden};  // ONNX's Y is [T, D, N, H]: not per-sample
  const std::int64_t gh = gates * hidden;
  std::vector<float> w_ih, w_hh, b_ih, b_hh;
  for (std::int64_t d = 0; d < dirs; ++d) {
    const auto append = [&](std::vector<float>& to, const float* from, std::int64_t cols) {
      const std::vector<float> part = pytorch_gate_order(def, from, hidden, cols);
      to.insert(to.end(), part.begin(), part.end());
    };
    append(w_ih, w->values.data() + d * gh * c, c);
    append(w_hh, r->values.data() + d * gh * hidden, hidden);
    if (b) {
      append(b_ih, b->values.data() + d * 2 * gh, 1);
      append(b_hh, b->values.data() + d * 2 * gh + gh, 1);
    }
  }
  node.initial_values.push_back(initial("weight_ih", n.input(1), {dirs, gh, c}, std::move(w_ih)));
  node.initial_values.push_back(initial("weight_hh", n.input(2), {dirs, gh, hidden}, std::move(w_hh)));
  if (b) {
    node.initial_values.push_back(initial("bias_ih", n.input(3), {dirs, gh}, std::move(b_ih)));
    node.initial_values.push_back(initial("bias_hh", n.input(3), {dirs, gh}, std::move(b_hh)));
  }
  SequenceView y{SequenceView::Kind::outputs, index, dirs, hidden, {}};
  sequence_views_[n.output(0)] = y;
  if (n.output_size() > 1 && !n.output(1).empty()) {
    SequenceView h{SequenceView::Kind::states, index, dirs, hidden, {}};
    for (int d = 0; d < dirs; ++d) h.states.push_back({index, d, hidden, dirs == 2});
    values_[n.output(1)] = Value{Value::Kind::activation, index, nullptr};
    sequence_views_[n.output(1)] = h;
  }
  if (n.output_size() > 2 && !n.output(2).empty()) {
    values_[n.output(2)] = Value{Value::Kind::activation, index, nullptr};
    sequence_views_[n.output(2)] = SequenceView{SequenceView::Kind::cells, index, dirs, hidden, {}};
  }
}

// The initial states initial_h and initial_c (inputs 5 and 6, as many as the definition takes)
// onto the layer's inputs h0 and c0 (appended to `inputs`), or why not (docs/onnx.md, "How ops
// map", recurrent layers). Zeros (PyTorch's default, h0 not given) are no input. A state computed in the model reaches the node
// in ONNX's layout [D, N, H]: PyTorch writes its h0 [L·D, N, H] as the Transpose [1, 0, 2] of a
// batch-first [N, L·D, H] tensor and each layer's [D, N, H] as a Slice of it, both sequence views
// here (the Slice a slice layer of the batch-first tensor), whose node holds [D, H] per sample.
std::optional<std::string> Importer::initial_states(const onnx::NodeProto& n, const ops::RecurrentDefinition& def, std::int64_t dirs,
                                                    std::int64_t hidden, std::vector<int>& inputs) {
  const char* names[] = {"initial_h", "initial_c"};
  const int last = 5 + static_cast<int>(std::min<std::size_t>(def.states.size(), std::size(names)));
  for (int i = 5; i < last; ++i) {
    if (n.input_size() <= i || n.input(i).empty() || all_zeros(n.input(i), 0)) continue;
    const std::string what = std::string("input ") + names[i - 5] + " ('" + common::printable_name(n.input(i)) + "')";
    const auto view = sequence_views_.find(n.input(i));
    if (view == sequence_views_.end() || view->second.kind != SequenceView::Kind::sequence) {
      if (is_activation(n.input(i)) && values_.at(n.input(i)).node == kModelInput)
        return what + " is the model's input: hwprof models take one input, the batch; compute the state in the model";
      if (!is_activation(n.input(i))) {
        return what + " is not zeros and not computed from the model's input (a constant): hwprof maps zero states " +
               "and states computed in the model";
      }
      return what + " is computed in the model but is not a batch-first [N, L·D, H] tensor in ONNX's layout (its Transpose [1, 0, 2], " +
             "sliced per layer on axis 0), as PyTorch writes h0";
    }
    const Dims& d = dims_of(n.input(i));
    if (d.size() == 3 && ((d[0] > 0 && d[0] != dirs) || (d[2] > 0 && d[2] != hidden)))
      return what + " is [" + std::to_string(d[0]) + ", N, " + std::to_string(d[2]) + "], not [" + std::to_string(dirs) + ", N, " +
             std::to_string(hidden) + "] (directions, batch, hidden_size)";
    if (i == 6 && inputs.size() == 1)
      return what + " is given and initial_h is zeros: mapped are h0 alone or h0 and c0 (the lstm layer's inputs [x, h0] and [x, h0, c0])";
    inputs.push_back(view->second.node);
  }
  return std::nullopt;
}

// Slice on axis 0 of a sequence view ([S, N, C], its node's [N, S, C]): PyTorch's slice of one
// layer's initial states out of h0 (or steps of X): a slice layer on the node's per-sample
// axis 0, itself a sequence view.
void Importer::map_sequence_slice(const onnx::NodeProto& n, const SequenceView& v) {
  const auto value = [&](int i, std::int64_t otherwise) -> std::optional<std::vector<std::int64_t>> {
    if (n.input_size() <= i || n.input(i).empty()) return std::vector<std::int64_t>{otherwise};
    return int_values(n.input(i));
  };
  const auto starts = value(1, 0), ends = value(2, 0), axes = value(3, 0), steps = value(4, 1);
  const bool axis0 = axes && axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -3);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || !axis0 || steps != std::vector<std::int64_t>{1}) {
    return unsupported(n, "it slices '" + common::printable_name(n.input(0)) +
                              "', a tensor in ONNX's sequence-first layout (the batch on axis 1): mapped is a Slice of constant bounds on axis 0, "
                              "step 1 (PyTorch's slice of one layer's initial states)");
  }
  constexpr std::int64_t kLimit = std::int64_t{1} << 62;  // "to the end" (±2^63 − 1), as map_slice clamps
  Attributes a;
  a.axes = {0};
  a.starts = {std::clamp((*starts)[0], -kLimit, kLimit)};
  a.ends = {std::clamp((*ends)[0], -kLimit, kLimit)};
  a.steps = {1};
  const int index = add_node(n, OpKind::slice, {v.node}, a);
  Node& node = graph_.nodes[static_cast<std::size_t>(index)];
  expected.erase(node.name);  // ONNX's output is [S, N, C]: not per-sample
  // Its scope is the recurrent module's: the module's name is left to its layer, and the slice
  // is named after the layer it feeds (name_state_slices).
  std::string name = node.name + ".slice";
  for (int k = 2; names_taken_.count(name) != 0; ++k) name = node.name + ".slice_" + std::to_string(k);
  names_taken_.erase(node.name);
  node.name = name;
  names_taken_[name] = 1;
  sequence_views_[n.output(0)] = SequenceView{SequenceView::Kind::sequence, index, 1, 0, {}};
  state_slices_.insert(index);
}

// A slice of initial states is named after the layer it feeds ("gru.l1.h0", "lstm.c0") rather
// than after the Slice node's scope (the recurrent module's, as its layers' are).
void Importer::name_state_slices(const Node& layer) {
  for (std::size_t k = 1; k < layer.inputs.size(); ++k) {
    const auto it = state_slices_.find(layer.inputs[k]);
    if (it == state_slices_.end()) continue;
    state_slices_.erase(it);
    Node& slice = graph_.nodes[static_cast<std::size_t>(layer.inputs[k])];
    const std::string name = layer.name + (k == 1 ? ".h0" : ".c0");
    if (names_taken_.count(name) != 0) continue;
    names_taken_.erase(slice.name);
    slice.name = name;
    names_taken_[name] = 1;
  }
}

// A multi-layer nn.LSTM / nn.GRU is one module with one node per layer ("/lstm/LSTM",
// "/lstm/LSTM_1"): its layers are named "lstm.l0", "lstm.l1", after PyTorch's parameter
// suffixes (weight_ih_l0), rather than "lstm" and "lstm.lstm".
void Importer::name_stacked_layer(const onnx::NodeProto& n, Node& node) {
  const std::vector<std::string> scope = scope_segments(n.name());
  if (scope.empty()) return;
  int layer = -1, layers = 0;
  for (const onnx::NodeProto& other : model_.graph().node()) {
    if (other.op_type() != n.op_type() || scope_segments(other.name()) != scope) continue;
    if (&other == &n) layer = layers;
    ++layers;
  }
  if (layers < 2 || layer < 0) return;
  const std::string name = common::printable_name(module_path(scope)) + ".l" + std::to_string(layer);
  if (names_taken_.count(name) != 0) return;
  names_taken_.erase(node.name);
  node.name = name;
  names_taken_[name] = 1;
}

bool Importer::reads_sequence_view(const onnx::NodeProto& n) const {
  if (n.op_type() == "Shape" || n.op_type() == "Size") return false;  // a shape computation, known to ONNX's inference
  return std::any_of(n.input().begin(), n.input().end(), [&](const std::string& in) { return sequence_views_.count(in) != 0; });
}

// A node that reads a sequence view: the layouts' round trip, a recurrent layer, or one state.
void Importer::map_sequence_view(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (const ops::RecurrentDefinition* recurrent = ops::recurrent_for_onnx(op)) return map_recurrent(n, *recurrent);
  const auto it = sequence_views_.find(n.input(0));
  const SequenceView* v = it == sequence_views_.end() ? nullptr : &it->second;
  const std::vector<std::int64_t> perm = attr_ints(n, "perm");
  if (v != nullptr && v->kind == SequenceView::Kind::sequence && op == "Transpose" && perm == std::vector<std::int64_t>{1, 0, 2})
    return alias(n, n.input(0));  // back to batch-first: the node itself
  if (v != nullptr && v->kind == SequenceView::Kind::sequence && op == "Slice") return map_sequence_slice(n, *v);
  if (v != nullptr && v->kind == SequenceView::Kind::outputs) {
    std::vector<std::int64_t> axes = attr_ints(n, "axes");
    if (op == "Squeeze" && n.input_size() > 1 && constant(n.input(1)) != nullptr) axes = integers(*constant(n.input(1)));
    if (op == "Squeeze" && v->directions == 1 && axes == std::vector<std::int64_t>{1}) {
      values_[n.output(0)] = values_.at(n.input(0));
      sequence_views_[n.output(0)] = SequenceView{SequenceView::Kind::sequence, v->node, 1, v->hidden, {}};
      return;
    }
    if (op == "Transpose" && perm == std::vector<std::int64_t>{0, 2, 1, 3}) {
      values_[n.output(0)] = values_.at(n.input(0));
      sequence_views_[n.output(0)] = SequenceView{SequenceView::Kind::outputs_tndh, v->node, v->directions, v->hidden, {}};
      return;
    }
  }
  if (v != nullptr && v->kind == SequenceView::Kind::outputs_tndh && op == "Reshape") {
    const Dims& out = dims_of(n.output(0));
    if (out.size() == 3 && out[2] == v->directions * v->hidden) {
      values_[n.output(0)] = values_.at(n.input(0));
      sequence_views_[n.output(0)] = SequenceView{SequenceView::Kind::sequence, v->node, 1, v->hidden, {}};
      return;
    }
  }
  if (op == "Concat" && attr_int(n, "axis", 0) == 0) {
    SequenceView all{SequenceView::Kind::states, -1, 1, 0, {}};
    for (const std::string& in : n.input()) {
      const auto s = sequence_views_.find(in);
      if (s == sequence_views_.end() || s->second.kind != SequenceView::Kind::states) {
        all.states.clear();
        break;
      }
      all.hidden = s->second.hidden;
      all.states.insert(all.states.end(), s->second.states.begin(), s->second.states.end());
    }
    if (!all.states.empty()) {
      values_[n.output(0)] = values_.at(n.input(0));
      sequence_views_[n.output(0)] = all;
      return;
    }
  }
  if (v != nullptr && v->kind == SequenceView::Kind::states && op == "Gather" && attr_int(n, "axis", 0) == 0) return map_final_state(n, *v);
  const std::string read =
      v != nullptr ? n.input(0)
                   : *std::find_if(n.input().begin(), n.input().end(), [&](const std::string& in) { return sequence_views_.count(in) != 0; });
  const SequenceView::Kind kind = sequence_views_.at(read).kind;
  std::string what = kind == SequenceView::Kind::cells ? "the final cell state Y_c of a recurrent layer, which hwprof's lstm layer does not output"
                                                       : "a recurrent layer's tensor in ONNX's sequence-first layout (the batch not on axis 0)";
  unsupported(n, "it reads '" + common::printable_name(read) + "', " + what +
                     "; mapped are the batch_first round trip (Transpose [1, 0, 2], LSTM/GRU, Squeeze of Y, Transpose back), Gather "
                     "of one layer's final state from Y_h, and Slice on axis 0 of initial states");
}

// h_n[k] (Gather on axis 0 of Y_h, or of several layers' Y_h concatenated): the state of one
// layer and direction after its last step, a step of that layer's output: select the step
// (the last for the forward direction, the first for the reverse one), and for a
// bidirectional layer its direction's half ([2H] → reshape [2, H] → select).
void Importer::map_final_state(const onnx::NodeProto& n, const SequenceView& v) {
  const onnx::TensorProto* it = constant(n.input(1));
  const auto index = scalar(n.input(1));
  const auto count = static_cast<std::int64_t>(v.states.size());
  if (it == nullptr || it->dims_size() != 0 || !index || *index < static_cast<double>(-count) || *index >= static_cast<double>(count))
    return unsupported(n, "only a Gather of one constant index of the final states (h_n[k]) is mapped");
  const auto k = static_cast<std::int64_t>(*index) + (*index < 0 ? count : 0);
  const SequenceView::FinalState state = v.states[static_cast<std::size_t>(k)];
  const bool both = state.bidirectional;
  const std::string base = layer_name(n);
  const auto push = [&](OpKind op, int input, Attributes a, const std::string& suffix) {
    Node node;
    node.name = base + suffix;
    node.op = op;
    node.inputs = {input};
    node.attrs = std::move(a);
    node.spec_pointer = describe(n);
    names_taken_[node.name] = 1;
    graph_.nodes.push_back(std::move(node));
    return static_cast<int>(graph_.nodes.size()) - 1;
  };
  Attributes step;
  step.axis = 0;
  step.index = state.direction == 0 ? -1 : 0;  // -1: the last step, whatever the input's T
  int last = push(OpKind::select, state.node, step, both ? ".step" : "");
  if (both) {
    Attributes split;
    split.shape = {2, state.hidden};
    last = push(OpKind::reshape, last, split, ".directions");
    Attributes half;
    half.axis = 0;
    half.index = state.direction;
    last = push(OpKind::select, last, half, "");
  }
  if (const auto out = per_sample(n.output(0))) expected[graph_.nodes[static_cast<std::size_t>(last)].name] = *out;
  set_output(n, last);
}

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
