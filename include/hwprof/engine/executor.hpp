// The executor: a Graph made runnable on real kernels (src/nn, OpenBLAS underneath) —
// inference forward passes and training steps (forward, loss, backward, optimizer), with
// every buffer freed as soon as nothing later needs it. An observer sees every layer
// boundary; the profiler wraps each layer's kernels through it, and the engine knows nothing
// of the profiler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/optimizer.hpp"
#include "hwprof/engine/tensor.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

enum class Phase { forward, backward, optimizer };
const char* phase_name(Phase phase) noexcept;

// Called on the thread that runs the model, around each layer's kernels: on_begin just
// before its first kernel starts, on_end just after its last one returns (with all of its
// worker threads done). `layer` indexes Graph::nodes. Called for every node, including those
// that move no data (reshape, flatten, dropout in evaluation). Must not throw.
class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  virtual void on_begin(int layer, Phase phase) noexcept = 0;
  virtual void on_end(int layer, Phase phase) noexcept = 0;
};

// Whether the engine may write this op's forward output over one of its inputs: in inference,
// element-wise activations and `add` do so when nothing reads that input later (as
// torchvision's ReLU(inplace=True) and `out += identity`).
bool may_run_in_place(OpKind op) noexcept;

// The BLAS under the dense kernels, for reports: OpenBLAS's build, the kernels ("core") it
// loaded, and why those. `advice` is non-empty when an environment variable holds OpenBLAS
// to older kernels than this CPU can run (say so to the user: GEMMs run far slower).
struct BlasInfo {
  std::string config;       // openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string core;         // openblas_get_corename(), e.g. "SkylakeX"
  std::string core_source;  // "OpenBLAS's CPU detection", "set by hwprof: ...", "OPENBLAS_CORETYPE=... in the environment"
  // Kernels without AVX-512 ("Haswell", "Zen", "Prescott", ...) on a CPU with what the
  // SkylakeX kernels need (AVX-512 F, CD, BW, DQ, VL), whatever chose them.
  bool avx512_unused = false;
  std::string advice;
};
BlasInfo blas_info();

struct ExecutorOptions {
  std::int64_t batch = 1;
  int threads = 0;         // kernel threads (OpenMP loops and OpenBLAS); 0: one per core
  std::uint64_t seed = 0;  // parameter initialisation, dropout masks, synthetic inputs
  bool training = false;   // allocate gradients and optimizer state; enables train_step
  OptimizerOptions optimizer;
};

// A learnable tensor of one layer, for inspection (weight distributions, tests).
struct Parameter {
  int layer = 0;      // index into Graph::nodes
  std::string name;   // "weight", "bias", "in_proj_weight", ...
  Tensor value;       // shares storage with the executor's parameter
  Tensor gradient;    // undefined unless training
  bool tied = false;  // shares its storage with an earlier layer's parameter
};

class Executor {
 public:
  // Fails (with the layer named) when a layer cannot be built, e.g. an int32 input to an op
  // that needs float32.
  static Result<Executor> build(const Graph& graph, const ExecutorOptions& options);
  // The run's analytic memory (parameters; for training also gradients, optimizer state and the
  // activations kept for backward; else the peak of live activations) against what this
  // process may still take (MemAvailable, lowered by a cgroup limit): an error with the figures
  // when it does not fit. build() checks it before allocating anything.
  static std::optional<Error> check_memory(const Graph& graph, const ExecutorOptions& options);
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;
  ~Executor();

  const Graph& graph() const noexcept;
  const ExecutorOptions& options() const noexcept;
  // The kernel thread count in effect: options().threads, or one per online CPU for 0.
  int threads() const noexcept;

  // A deterministic synthetic batch: images N(0, 1); token ids uniform in the range every
  // consuming embedding accepts; labels uniform over the classes of the output's last axis.
  Tensor make_input(std::uint64_t seed) const;
  Tensor make_labels(std::uint64_t seed) const;

  // Inference: the model output, [batch, ...output shape]. Fails on an input of the wrong
  // shape or dtype, or a token id out of range (naming the layer).
  Result<Tensor> forward(const Tensor& input);
  // One training step: forward (training mode: batch statistics, dropout), mean
  // cross-entropy loss of the output's last axis against `labels` (int32, one per output
  // row), backward, optimizer. Returns the loss. Requires options().training.
  Result<float> train_step(const Tensor& input, const Tensor& labels);
  // train_step in two halves, for gradient accumulation and inspection. compute_gradients
  // runs forward (training mode), the loss and backward, and ADDS this batch's gradients to
  // the parameters' (Parameter::gradient; PyTorch's loss.backward()); optimizer_step updates
  // the parameters from them and zeroes them (optimizer.step(); zero_grad()). Dropout masks
  // change with each optimizer step, so compute_gradients repeated without one sees the same
  // masks. Both require options().training; optimizer_step does nothing otherwise.
  Result<float> compute_gradients(const Tensor& input, const Tensor& labels);
  void optimizer_step();

  // Not owned; nullptr removes it. Observed layers see on_begin/on_end for every node in
  // forward order, then (training) backward in reverse order, then one optimizer call per
  // node that has parameters of its own, in forward order (a node whose only parameter is a
  // weight tied to an earlier layer gets none: the shared weight is updated once, with the
  // layer that owns it).
  void set_observer(LayerObserver* observer) noexcept;

  std::vector<Parameter> parameters() const;
  std::int64_t parameter_bytes() const noexcept;  // tied weights once

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hwprof
HWPROF_API_END
