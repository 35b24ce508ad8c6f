// One small class per op kind: what a Graph node does on real tensors, forward and backward,
// and what its training forward keeps for backward. The executor (executor.cpp) owns the
// schedule — which tensors live, who frees them, the observer, the optimizer — and calls these.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/tensor.hpp"
#include "hwprof/result.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {

// A learnable tensor as the executor owns it. A tied slot holds handles to its owner's
// value and gradient (same storage) and no optimizer state of its own.
struct ParameterSlot {
  int layer = 0;
  std::string name;
  Tensor value;
  Tensor gradient;       // training only; accumulated by backward, zeroed by the optimizer
  Tensor first_moment;   // SGD's momentum buffer, or Adam's m
  Tensor second_moment;  // Adam's v
  bool tied = false;
};

struct ForwardContext {
  bool training = false;
  std::uint64_t dropout_key = 0;  // this step's stream for this layer's dropout mask
  // Bit k: nothing reads input k's storage after this layer, so the layer may write its output
  // there (inference only; the executor sees the shared storage and accounts for it).
  std::uint32_t reusable_inputs = 0;
};

class Layer {
 public:
  virtual ~Layer() = default;
  Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // `inputs` are the full-shape tensors the node reads, in Node::inputs order. Returns the
  // output; an Error only for bad data (a token id out of range), naming the layer. In
  // training, keeps what backward needs until release_saved().
  virtual Result<Tensor> forward(std::span<const Tensor* const> inputs, const ForwardContext& context) = 0;
  // `dy` is the gradient of the output. Sets dx[k] for every input with need[k]; adds the
  // parameters' gradients to their slots. Called once after each training forward.
  virtual void backward(const Tensor& dy, std::span<Tensor> dx, std::span<const char> need) = 0;
  virtual void release_saved() noexcept {}
  // True when the input gradients backward returns share dy's storage (add, views): the
  // executor must not accumulate into them in place.
  virtual bool input_gradients_alias_dy() const noexcept { return false; }
};

// `params` are the node's slots in parameter_specs() order (init.hpp).
std::unique_ptr<Layer> make_layer(const Graph& graph, int layer, std::span<ParameterSlot* const> params);

// The batch prepended to a per-sample shape.
Shape batched(std::int64_t batch, const Shape& per_sample);

}  // namespace hwprof::nn
