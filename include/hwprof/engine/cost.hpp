// The analytic cost model: what each layer of a Graph should cost — parameters, MACs, FLOPs
// (forward and backward), the minimum bytes it moves and the memory a run needs. Every figure
// here is analytic: derived from shapes by the formulas documented in src/cost/op_cost.cpp
// and docs/cost.md, never measured.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/optimizer.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct AnalysisOptions {
  std::int64_t batch = 1;
  OptimizerKind optimizer = OptimizerKind::adam;
};

struct LayerCost {
  std::string name;
  OpKind op = OpKind::relu;
  Shape output_shape;
  DType output_dtype = DType::f32;
  // Per sample unless said otherwise.
  std::int64_t params = 0;               // trainable; a tied weight counts 0 here (its bias counts)
  std::int64_t buffers = 0;              // non-trainable state, e.g. batchnorm running statistics
  std::int64_t macs = 0;                 // docs/cost.md "Counting convention": conv2d, linear, attention matmuls
  std::int64_t flops = 0;                // forward, evaluation mode: 2*macs + element-wise work
  std::int64_t train_forward_flops = 0;  // forward in training mode (batchnorm stats, dropout)
  std::int64_t backward_flops = 0;       // input and weight gradients that a training step computes
  std::int64_t input_bytes = 0;          // activations read (distinct inputs)
  std::int64_t output_bytes = 0;         // output activation bytes
  std::int64_t weight_bytes = 0;         // parameters and buffers read, per batch (not per sample)
  std::int64_t bytes = 0;                // minimum traffic at the analysed batch: batch*(in+out)+weights
  bool requires_grad = false;            // a training step back-propagates through this layer
  // False for an OpKind::unsupported layer (an ONNX op hwprof cannot map): its params, MACs,
  // FLOPs and bytes are unknown, not 0 (they read 0 here; reports print "not counted").
  // input_bytes and output_bytes are still its activations' sizes.
  bool counted = true;
  std::string not_counted;  // why: "LogSoftmax (opset 17): no mapping onto hwprof's layers"
  std::string source_op;    // the file's op type: "LogSoftmax"
};

struct CostTotals {
  std::int64_t params = 0;            // trainable, shared weights counted once
  std::int64_t trainable_params = 0;  // equal to params: every parameter of hwprof's ops trains
  std::int64_t buffers = 0;
  std::int64_t macs = 0;
  std::int64_t flops = 0;
  std::int64_t train_forward_flops = 0;
  std::int64_t backward_flops = 0;
  std::int64_t training_flops = 0;  // train_forward_flops + backward_flops
  std::int64_t bytes = 0;           // at the analysed batch
  // Layers that are not counted (LayerCost::counted false): while > 0 every total above, and
  // the memory's parameter part, is a lower bound.
  int not_counted_layers = 0;
  bool complete() const noexcept { return not_counted_layers == 0; }
};

struct MemoryEstimate {
  std::int64_t batch = 1;
  OptimizerKind optimizer = OptimizerKind::adam;
  std::int64_t param_bytes = 0;
  std::int64_t buffer_bytes = 0;
  std::int64_t gradient_bytes = 0;
  std::int64_t optimizer_bytes = 0;             // sgd 0, momentum 1x, adam 2x the parameters
  std::int64_t model_state_bytes = 0;           // params + buffers + gradients + optimizer state
  std::int64_t inference_activation_bytes = 0;  // peak of live tensors over the graph's order
  std::string inference_peak_layer;             // the layer during which that peak occurs
  std::int64_t training_activation_bytes = 0;   // the union of tensors kept for backward
  std::int64_t inference_total_bytes = 0;       // params + buffers + inference activations
  std::int64_t training_total_bytes = 0;        // model state + training activations
};

struct ModelCost {
  std::string model;
  ModelInput input;
  std::int64_t batch = 1;
  std::vector<LayerCost> layers;  // one per Graph node, same order
  CostTotals totals;
  MemoryEstimate memory;
  std::vector<std::string> notes;  // the graph's (Graph::notes)
};

// Fails only when a count would overflow 64-bit integers (message names the layer). A graph
// with OpKind::unsupported layers is analysed around them (totals.not_counted_layers).
Result<ModelCost> analyze(const Graph& graph, const AnalysisOptions& options = {});

// One figure of a whole model each (analytic, like analyze()). Each fails when a layer is not
// counted (an unsupported ONNX op): a partial total is not the model's.
Result<std::int64_t> count_parameters(const Graph& graph);
// Per-sample forward FLOPs; `input_shape` re-infers the graph (empty: the spec's shape).
Result<std::int64_t> count_flops(const Graph& graph, const Shape& input_shape = {});
Result<std::int64_t> count_macs(const Graph& graph, const Shape& input_shape = {});
Result<MemoryEstimate> estimate_memory(const Graph& graph, std::int64_t batch, OptimizerKind optimizer = OptimizerKind::adam);

}  // namespace hwprof
HWPROF_API_END
