#include "profile/analytic_phase.hpp"

#include <algorithm>

#include "cost/op_cost.hpp"

namespace hwprof {

std::int64_t optimizer_flops_per_parameter(const OptimizerOptions& o) noexcept {
  std::int64_t flops = 2;
  if (o.kind == OptimizerKind::adam) {
    flops = 12;
  } else if (o.kind == OptimizerKind::momentum) {
    flops = 4;
  }
  return flops + (o.weight_decay != 0.0 ? 2 : 0);
}

std::int64_t optimizer_bytes_per_parameter(const OptimizerOptions& o) noexcept {
  // Read p and g, write p; plus each state tensor read and written.
  const std::int64_t states = o.kind == OptimizerKind::adam ? 2 : (o.kind == OptimizerKind::momentum ? 1 : 0);
  return 4 * (3 + 2 * states);
}

std::vector<AnalyticPhaseCost> analytic_phase_costs(const Graph& graph, const ModelCost& cost, const OptimizerOptions& optimizer, bool train) {
  std::vector<AnalyticPhaseCost> out(graph.nodes.size());
  const std::int64_t batch = cost.batch;
  for (std::size_t i = 0; i < graph.nodes.size() && i < cost.layers.size(); ++i) {
    const LayerCost& c = cost.layers[i];
    AnalyticPhaseCost& a = out[i];
    const auto f = static_cast<std::size_t>(Phase::forward);
    const auto b = static_cast<std::size_t>(Phase::backward);
    const auto o = static_cast<std::size_t>(Phase::optimizer);
    a.runs[f] = true;
    a.flops[f] = (train ? c.train_forward_flops : c.flops) * batch;
    a.bytes[f] = c.bytes;
    a.reused_bytes[f] = std::min(c.weight_bytes, c.bytes);
    if (!train) continue;
    a.runs[b] = c.requires_grad;
    a.flops[b] = c.backward_flops * batch;
    a.bytes[b] = c.bytes == 0 ? 0 : cost::backward_min_bytes(c, batch);  // a view (no bytes forward) moves none back
    a.reused_bytes[b] = c.bytes == 0 ? 0 : 3 * c.weight_bytes;
    a.runs[o] = c.params > 0;
    a.flops[o] = c.params * optimizer_flops_per_parameter(optimizer);
    a.bytes[o] = c.params * optimizer_bytes_per_parameter(optimizer);
    a.reused_bytes[o] = a.bytes[o];
  }
  return out;
}

}  // namespace hwprof
