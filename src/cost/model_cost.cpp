// analyze(): the per-layer cost table, totals and the memory model of a Graph.
#include <algorithm>
#include <string>
#include <vector>

#include "common/count.hpp"
#include "cost/op_cost.hpp"
#include "hwprof/engine/cost.hpp"

namespace hwprof {
namespace {

using common::Count;
using cost::OpCost;

constexpr std::int64_t kFloatBytes = 4;

std::optional<std::string> first_overflow(const OpCost& c) {
  const std::pair<const char*, Count> fields[] = {
      {"parameter count", c.params},
      {"buffer count", c.buffers},
      {"MACs", c.macs},
      {"FLOPs", c.flops},
      {"training FLOPs", c.train_forward_flops},
      {"backward FLOPs", c.weight_grad_flops},
      {"backward FLOPs", c.input_grad_flops},
      {"backward FLOPs", c.internal_grad_flops},
      {"input bytes", c.input_bytes},
      {"output bytes", c.output_bytes},
      {"weight bytes", c.weight_bytes},
      {"saved bytes", c.saved_bytes_per_sample},
      {"saved bytes", c.saved_bytes_fixed},
  };
  for (const auto& [name, value] : fields) {
    if (value.overflowed()) return std::string(name);
  }
  return std::nullopt;
}

// Storage a node's output lives in: a view shares its input's storage. Index shifted by one
// so that the model input (kModelInput = -1) is storage 0.
std::vector<int> storages(const Graph& g, const std::vector<OpCost>& costs, bool training) {
  std::vector<int> storage(g.nodes.size() + 1, 0);  // storage 0: the model input
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    const bool view = costs[i].is_view && !(training && node.op == OpKind::dropout);
    storage[i + 1] = view ? storage[static_cast<std::size_t>(node.inputs[0] + 1)] : static_cast<int>(i + 1);
  }
  return storage;
}

std::int64_t tensor_bytes(const Graph& g, int node_index) {
  return numel(g.shape_of(node_index)) * kFloatBytes;  // float32 and int32 are both 4 bytes
}

struct Peak {
  Count bytes;
  int layer = -1;
};

// Peak of live tensors over the execution order, at `batch`. A tensor is live from the step
// that produces it to the last step that reads it (the model input from the start, the last
// node's output to the end); a view keeps its storage alive.
Peak inference_peak(const Graph& g, const std::vector<OpCost>& costs, std::int64_t batch) {
  const std::size_t n = g.nodes.size();
  const std::vector<int> storage = storages(g, costs, false);
  std::vector<std::int64_t> last_use(n + 1, -1);
  auto use = [&](int node_index, std::int64_t step) {
    auto& last = last_use[static_cast<std::size_t>(storage[static_cast<std::size_t>(node_index + 1)])];
    last = std::max(last, step);
  };
  use(kModelInput, 0);
  for (std::size_t i = 0; i < n; ++i) {
    use(static_cast<int>(i), static_cast<std::int64_t>(i));
    for (int input : g.nodes[i].inputs) use(input, static_cast<std::int64_t>(i));
  }
  use(static_cast<int>(n) - 1, static_cast<std::int64_t>(n));  // the model's output survives the pass
  // delta[step]: bytes allocated at step (storages born there) minus those freed after step-1.
  std::vector<Count> born(n + 1), freed(n + 2);
  for (std::size_t s = 0; s <= n; ++s) {
    if (storage[s] != static_cast<int>(s)) continue;  // a view, not a storage of its own
    const Count bytes = Count(tensor_bytes(g, static_cast<int>(s) - 1)) * batch;
    const std::size_t birth = s == 0 ? 0 : s - 1;
    born[birth] += bytes;
    freed[static_cast<std::size_t>(last_use[s]) + 1] += bytes;
  }
  Peak peak;
  Count live = 0;
  for (std::size_t step = 0; step < n; ++step) {
    live = live + born[step] - freed[step];
    const Count during = live + costs[step].workspace_bytes_per_sample * batch;
    if (during.overflowed() || during.value() > peak.bytes.value()) {
      peak.bytes = during;
      peak.layer = static_cast<int>(step);
    }
  }
  return peak;
}

// One layer's row: its op's cost, its backward FLOPs where a gradient reaches it, its bytes at
// the batch. Errors: a figure that overflows 64 bits.
Result<LayerCost> layer_cost(const Graph& graph, const Node& node, const OpCost& c, bool requires_grad, bool input_requires_grad,
                             std::int64_t batch) {
  Count backward_flops = 0;
  if (requires_grad) {
    backward_flops = backward_flops_of(c, true, input_requires_grad);
  }
  const Count layer_bytes = c.is_view ? Count(0) : forward_min_bytes(c, batch);
  std::optional<std::string> overflow = first_overflow(c);
  if (!overflow && backward_flops.overflowed()) overflow = "backward FLOPs";
  if (overflow) return Error{graph.where(node) + ": its " + *overflow + " would overflow 64-bit integers; check the sizes"};
  if (layer_bytes.overflowed()) {
    return Error{graph.where(node) + ": its bytes at batch " + std::to_string(batch) + " overflow 64-bit integers; use a smaller batch"};
  }
  LayerCost layer;
  layer.name = node.name;
  layer.op = node.op;
  layer.output_shape = node.output_shape;
  layer.output_dtype = node.output_dtype;
  layer.params = c.params.value();
  layer.buffers = c.buffers.value();
  layer.macs = c.macs.value();
  layer.flops = c.flops.value();
  layer.train_forward_flops = c.train_forward_flops.value();
  layer.backward_flops = backward_flops.value();
  layer.input_bytes = c.input_bytes.value();
  layer.output_bytes = c.output_bytes.value();
  layer.weight_bytes = c.weight_bytes.value();
  layer.bytes = layer_bytes.value();
  layer.requires_grad = requires_grad;
  if (node.op == OpKind::unsupported) {
    layer.counted = false;
    layer.not_counted = node.attrs.source_op + ": " + node.attrs.reason;
    layer.source_op = node.attrs.source_op.substr(0, node.attrs.source_op.find(" ("));
    layer.bytes = 0;  // its weights are unknown, so is its traffic
  }
  return layer;
}

// Memory at the batch: model state (parameters, buffers, gradients, optimizer moments), the
// inference peak, and training's kept activations (the union of tensors kept for backward,
// by storage, plus per-op extras).
std::optional<Error> estimate_model_memory(ModelCost& model, const Graph& graph, const std::vector<OpCost>& costs,
                                           const std::vector<bool>& requires_grad, const AnalysisOptions& options) {
  const std::int64_t batch = options.batch;
  const std::size_t n = graph.nodes.size();
  MemoryEstimate& m = model.memory;
  m.batch = batch;
  m.optimizer = options.optimizer;
  const int moments = options.optimizer == OptimizerKind::adam ? 2 : options.optimizer == OptimizerKind::momentum ? 1 : 0;
  const Count param_bytes = Count(model.totals.params) * kFloatBytes;
  const Count buffer_bytes = Count(model.totals.buffers) * kFloatBytes;
  const Count optimizer_bytes = param_bytes * moments;
  const Count state = param_bytes + buffer_bytes + param_bytes + optimizer_bytes;
  const Peak peak = inference_peak(graph, costs, batch);
  const std::vector<int> storage = storages(graph, costs, true);
  std::vector<bool> kept(n + 1, false);
  Count extra_per_sample = 0;
  Count extra_fixed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!requires_grad[i]) continue;
    const OpCost& c = costs[i];
    if (c.saves_input) kept[static_cast<std::size_t>(storage[static_cast<std::size_t>(graph.nodes[i].inputs[0] + 1)])] = true;
    if (c.saves_output) kept[static_cast<std::size_t>(storage[i + 1])] = true;
    extra_per_sample += c.saved_bytes_per_sample;
    extra_fixed += c.saved_bytes_fixed;
  }
  Count kept_per_sample = extra_per_sample;
  for (std::size_t s = 0; s <= n; ++s) {
    if (kept[s]) kept_per_sample += tensor_bytes(graph, static_cast<int>(s) - 1);
  }
  const Count training_activations = kept_per_sample * batch + extra_fixed;
  const Count inference_total = param_bytes + buffer_bytes + peak.bytes;
  const Count training_total = state + training_activations;
  for (const Count& value : {state, peak.bytes, training_activations, inference_total, training_total}) {
    if (value.overflowed())
      return Error{graph.source.file() + ": the memory needed at batch " + std::to_string(batch) + " would overflow 64-bit integers"};
  }
  m.param_bytes = param_bytes.value();
  m.buffer_bytes = buffer_bytes.value();
  m.gradient_bytes = param_bytes.value();
  m.optimizer_bytes = optimizer_bytes.value();
  m.model_state_bytes = state.value();
  m.inference_activation_bytes = peak.bytes.value();
  m.inference_peak_layer = peak.layer >= 0 ? graph.nodes[static_cast<std::size_t>(peak.layer)].name : std::string();
  m.training_activation_bytes = training_activations.value();
  m.inference_total_bytes = inference_total.value();
  m.training_total_bytes = training_total.value();
  return std::nullopt;
}

}  // namespace

Result<ModelCost> analyze(const Graph& graph, const AnalysisOptions& options) {
  if (options.batch < 1) return Error{"batch must be a positive integer, got " + std::to_string(options.batch)};
  const std::int64_t batch = options.batch;
  ModelCost model;
  model.model = graph.name;
  model.input = graph.input;
  model.notes = graph.notes;
  model.batch = batch;
  const std::size_t n = graph.nodes.size();
  std::vector<OpCost> costs;
  costs.reserve(n);
  std::vector<bool> requires_grad(n, false);
  auto input_requires_grad = [&](int index) { return index != kModelInput && requires_grad[static_cast<std::size_t>(index)]; };
  CostTotals& t = model.totals;
  Count params, buffers, macs, flops, train_forward, backward, bytes;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    costs.push_back(cost::op_cost(graph, node, batch));
    const OpCost& c = costs.back();
    bool any_input_grad = false;
    for (int input : node.inputs) any_input_grad = any_input_grad || input_requires_grad(input);
    requires_grad[i] = c.has_weights || any_input_grad;
    auto layer = layer_cost(graph, node, c, requires_grad[i], !node.inputs.empty() && input_requires_grad(node.inputs[0]), batch);
    if (!layer) return layer.error();
    if (layer->counted) {
      bytes += Count(layer->bytes);
    } else {
      ++t.not_counted_layers;
    }
    params += c.params;
    buffers += c.buffers;
    macs += c.macs;
    flops += c.flops;
    train_forward += c.train_forward_flops;
    backward += Count(layer->backward_flops);
    model.layers.push_back(std::move(*layer));
  }
  const Count training = train_forward + backward;
  const std::pair<const char*, Count> totals[] = {{"parameter count", params},  {"buffer count", buffers}, {"MACs", macs}, {"FLOPs", flops},
                                                  {"training FLOPs", training}, {"bytes", bytes}};
  for (const auto& [name, value] : totals) {
    if (value.overflowed()) return Error{graph.source.file() + ": the model's total " + name + " would overflow 64-bit integers"};
  }
  t.params = params.value();
  t.trainable_params = params.value();
  t.buffers = buffers.value();
  t.macs = macs.value();
  t.flops = flops.value();
  t.train_forward_flops = train_forward.value();
  t.backward_flops = backward.value();
  t.training_flops = training.value();
  t.bytes = bytes.value();
  if (auto error = estimate_model_memory(model, graph, costs, requires_grad, options)) return *error;
  return model;
}

namespace {
// The totals, refused when some layer is not counted: a partial sum is not the model's.
Result<CostTotals> complete_totals(const Graph& graph, const Result<ModelCost>& cost) {
  if (!cost) return cost.error();
  if (!cost->totals.complete()) {
    for (const LayerCost& layer : cost->layers) {
      if (!layer.counted) {
        return Error{graph.source.file() + ": " + std::to_string(cost->totals.not_counted_layers) + " layer(s) cannot be counted, the first '" +
                     layer.name + "' (" + layer.not_counted + "); the total would be incomplete (analyze() gives the counted part)"};
      }
    }
  }
  return cost->totals;
}

Result<CostTotals> totals_at(const Graph& graph, const Shape& input_shape) {
  if (input_shape.empty()) return complete_totals(graph, analyze(graph));
  auto reshaped = with_input_shape(graph, input_shape);
  if (!reshaped) return reshaped.error();
  return complete_totals(*reshaped, analyze(*reshaped));
}
}  // namespace

Result<std::int64_t> count_parameters(const Graph& graph) {
  auto totals = totals_at(graph, {});
  if (!totals) return totals.error();
  return totals->params;
}

Result<std::int64_t> count_flops(const Graph& graph, const Shape& input_shape) {
  auto totals = totals_at(graph, input_shape);
  if (!totals) return totals.error();
  return totals->flops;
}

Result<std::int64_t> count_macs(const Graph& graph, const Shape& input_shape) {
  auto totals = totals_at(graph, input_shape);
  if (!totals) return totals.error();
  return totals->macs;
}

Result<MemoryEstimate> estimate_memory(const Graph& graph, std::int64_t batch, OptimizerKind optimizer) {
  auto cost = analyze(graph, {batch, optimizer});
  auto totals = complete_totals(graph, cost);
  if (!totals) return totals.error();
  return cost->memory;
}

}  // namespace hwprof
