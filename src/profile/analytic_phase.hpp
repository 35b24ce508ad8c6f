// What each layer should cost in each phase of an iteration — forward, backward, optimizer —
// at the profiled batch: the cost model's per-layer figures (src/cost) turned into per-call
// FLOPs and minimum bytes for the phase the profiler measures.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {

struct AnalyticPhaseCost {
  // Indexed by Phase: forward, backward, optimizer. Per call, at the cost's batch.
  std::array<std::int64_t, 3> flops{};
  std::array<std::int64_t, 3> bytes{};
  // Of those bytes, what only a later pass reuses: weights and buffers (forward), weights
  // and their gradients (backward), all of the optimizer's.
  std::array<std::int64_t, 3> reused_bytes{};
  std::array<bool, 3> runs{};  // whether the layer has this phase in the measured iteration
};

inline bool analytic_phase_runs(const AnalyticPhaseCost& c, Phase phase) noexcept {
  return c.runs[static_cast<std::size_t>(phase)];
}

// FLOPs per parameter of one optimizer step (the update's arithmetic, as torch.optim writes
// it): SGD p −= lr·g: 2; with momentum v = μ·v + g, p −= lr·v: 4; Adam m = β1·m + (1−β1)·g,
// v = β2·v + (1−β2)·g², bias corrections, p −= lr·m̂/(√v̂ + ε): 12. Weight decay adds 2.
// Bytes per parameter: every state tensor read and written, the gradient read.
std::int64_t optimizer_flops_per_parameter(const OptimizerOptions& o) noexcept;
std::int64_t optimizer_bytes_per_parameter(const OptimizerOptions& o) noexcept;

// One entry per Graph node. Forward: evaluation-mode FLOPs (training-mode ones when `train`)
// and the minimum traffic. Backward (train only, layers a step back-propagates through): the
// cost model's backward FLOPs, and as bytes the gradient reads and writes beside the forward
// tensors (dy and x read, dx written; weights read, their gradients read and written).
// Optimizer (train only, layers with parameters).
std::vector<AnalyticPhaseCost> analytic_phase_costs(const Graph& graph, const ModelCost& cost, const OptimizerOptions& optimizer, bool train);

}  // namespace hwprof
