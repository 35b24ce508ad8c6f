// The analytic cost of one node, from its shapes and attributes alone.
#pragma once

#include "common/count.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof::cost {

struct OpCost {
  Count params;   // trainable elements this node owns (tied weights: 0)
  Count buffers;  // non-trainable elements (batchnorm running mean and variance)
  Count macs;
  Count flops;                       // forward, evaluation mode
  Count train_forward_flops;         // forward, training mode
  Count weight_grad_flops;           // backward: gradients of this node's parameters
  Count input_grad_flops;            // backward: gradient of its input (only when the input needs one)
  Count internal_grad_flops;         // backward work needed whenever it back-propagates at all
  Count input_bytes;                 // per sample, distinct inputs
  Count output_bytes;                // per sample
  Count weight_bytes;                // per batch: parameters and buffers read (at the given batch)
  bool has_weights = false;          // owns or shares a trainable weight (tied linear: true)
  bool is_view = false;              // evaluation-mode output aliases the input: moves no data
  Count workspace_bytes_per_sample;  // transient tensors alive only while the op runs
  // Kept for backward (training): which tensors, and extra bytes.
  bool saves_input = false;
  bool saves_output = false;
  Count saved_bytes_per_sample;  // e.g. pooling indices, Q/K/V and attention probabilities
  Count saved_bytes_fixed;       // per batch, e.g. batchnorm's batch statistics
};

OpCost op_cost(const Graph& graph, const Node& node, std::int64_t batch);

// The minimum bytes a layer's passes move at `batch` (docs/profile.md): forward reads its
// input and its weights and writes its output; backward reads dy and x, writes dx, reads the
// weights and reads and writes their gradients. Cost: OpCost (in Count) or LayerCost (in
// int64): the cost model, the profiler's phases and hwprof::torch all count by these. A view
// moves nothing; the callers say which of their layers are views.
template <class Cost>
auto forward_min_bytes(const Cost& c, std::int64_t batch) {
  return (c.input_bytes + c.output_bytes) * batch + c.weight_bytes;
}
template <class Cost>
auto backward_min_bytes(const Cost& c, std::int64_t batch) {
  return (c.output_bytes + c.input_bytes * 2) * batch + c.weight_bytes * 3;
}

// A node's backward FLOPs where a gradient reaches it (docs/cost.md, "Counting convention"): what
// it needs whenever it back-propagates, its parameters' gradients where they are trained, and
// its input's gradient where its input needs one. The cost model and hwprof::torch count by it.
inline Count backward_flops_of(const OpCost& c, bool weights_need_grad, bool input_needs_grad) {
  return c.internal_grad_flops + (c.has_weights && weights_need_grad ? c.weight_grad_flops : Count(0)) +
         (input_needs_grad ? c.input_grad_flops : Count(0));
}

}  // namespace hwprof::cost
