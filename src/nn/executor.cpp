// The executor: a Graph's layers run in order on the kernels, with the schedule of every
// tensor's life made explicit.
//
// Inference counts, for every node, the input slots that read its output (plus one for the
// model's output) and drops the output the moment its last reader has run; a view (flatten,
// reshape, dropout in evaluation) shares its input's storage, which stays alive while either
// handle does. The peak of live bytes then follows the analytic liveness of src/cost
// (inference_activation_bytes), plus the kernels' own workspaces.
//
// Training runs the same schedule; each layer keeps, between its forward and its backward,
// the tensors its backward reads (layers.cpp), and drops them once its backward has run.
// Gradients flow in reverse order; a tensor read by several layers sums their gradients.
#include "hwprof/engine/executor.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "common/memory_budget.hpp"
#include "hwprof/engine/cost.hpp"
#include "nn/init.hpp"
#include "nn/kernels.hpp"
#include "nn/layers.hpp"
#include "nn/optimizer.hpp"
#include "ops/ops.hpp"

namespace hwprof {
namespace {

using nn::ParameterSlot;

// Stream numbers (init.hpp) of what is not a parameter; parameters use (layer, index < 4).
constexpr std::uint64_t kInputStream = ~std::uint64_t{0};
constexpr std::uint64_t kLabelStream = ~std::uint64_t{0} - 1;
constexpr std::uint64_t kDropoutIndexBase = std::uint64_t{1} << 32;
// Ids of an int32 input that no embedding reads are drawn from [0, kFreeTokenLimit).
constexpr std::int64_t kFreeTokenLimit = 2;
constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

class ObserverScope {
 public:
  ObserverScope(LayerObserver* observer, int layer, Phase phase) noexcept : observer_(observer), layer_(layer), phase_(phase) {
    if (observer_ != nullptr) observer_->on_begin(layer_, phase_);
  }
  ~ObserverScope() {
    if (observer_ != nullptr) observer_->on_end(layer_, phase_);
  }
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;

 private:
  LayerObserver* observer_;
  int layer_;
  Phase phase_;
};

std::string shape_text(const Shape& shape) {
  return format_shape(shape);
}

Result<bool> check_options(const ExecutorOptions& o) {
  auto bad = [](const std::string& what) { return Error{"executor options: " + what}; };
  if (o.batch < 1) return bad("batch must be at least 1, got " + std::to_string(o.batch));
  if (o.threads < 0) return bad("threads must be 0 (one per core) or positive, got " + std::to_string(o.threads));
  const OptimizerOptions& p = o.optimizer;
  // The checks torch.optim's constructors make, with their ranges.
  if (!(p.learning_rate >= 0.0)) return bad("learning_rate must be >= 0, got " + std::to_string(p.learning_rate));
  if (!(p.momentum >= 0.0)) return bad("momentum must be >= 0, got " + std::to_string(p.momentum));
  if (!(p.weight_decay >= 0.0)) return bad("weight_decay must be >= 0, got " + std::to_string(p.weight_decay));
  if (!(p.beta1 >= 0.0 && p.beta1 < 1.0)) return bad("beta1 must be in [0, 1), got " + std::to_string(p.beta1));
  if (!(p.beta2 >= 0.0 && p.beta2 < 1.0)) return bad("beta2 must be in [0, 1), got " + std::to_string(p.beta2));
  if (!(p.epsilon >= 0.0)) return bad("epsilon must be >= 0, got " + std::to_string(p.epsilon));
  return true;
}

// For each element of an int32 tensor's per-sample shape, the exclusive upper bound that every
// embedding reading it (through select, reshape, transpose, concat) accepts. Element positions
// are followed through data movement by running the movement kernels on position indices.
std::vector<std::vector<std::int64_t>> token_limits(const Graph& g) {
  const std::size_t n = g.nodes.size();
  std::vector<std::vector<std::int64_t>> limits(n + 1);  // index + 1; 0 is the model input
  auto slot = [](int index) { return static_cast<std::size_t>(index + 1); };
  for (int i = -1; i < static_cast<int>(n); ++i) {
    if (g.dtype_of(i) == DType::i32) limits[slot(i)].assign(static_cast<std::size_t>(numel(g.shape_of(i))), kUnlimited);
  }
  for (int i = static_cast<int>(n) - 1; i >= 0; --i) {
    const Node& node = g.nodes[static_cast<std::size_t>(i)];
    const std::vector<std::int64_t>& out = limits[slot(i)];
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const int input = node.inputs[k];
      if (g.dtype_of(input) != DType::i32) continue;
      std::vector<std::int64_t>& in = limits[slot(input)];
      const Shape& in_shape = g.shape_of(input);
      const Shape full_in = nn::batched(1, in_shape);
      if (node.op == OpKind::embedding) {
        for (auto& l : in) l = std::min(l, node.attrs.num_embeddings);
        continue;
      }
      if (node.op == OpKind::reshape || node.op == OpKind::flatten) {
        for (std::size_t e = 0; e < in.size(); ++e) in[e] = std::min(in[e], out[e]);
        continue;
      }
      // source[o]: the input element that output element o copies (-1: another input's).
      std::vector<std::int32_t> positions(in.size());
      for (std::size_t e = 0; e < positions.size(); ++e) positions[e] = static_cast<std::int32_t>(e);
      std::vector<std::int32_t> source(out.size(), -1);
      if (node.op == OpKind::select) {
        const auto axis = static_cast<std::size_t>(normalized_axis(node.attrs.axis, static_cast<std::int64_t>(in_shape.size())) + 1);
        nn::i64 outer = 1, inner = 1;
        for (std::size_t d = 0; d < full_in.size(); ++d) {
          if (d < axis) outer *= full_in[d];
          if (d > axis) inner *= full_in[d];
        }
        nn::select_forward(positions.data(), source.data(), outer, full_in[axis], inner, normalized_axis(node.attrs.index, full_in[axis]));
      } else if (node.op == OpKind::transpose) {
        std::vector<nn::i64> perm{0};
        for (std::int64_t p : node.attrs.perm) perm.push_back(p + 1);
        nn::permute(positions.data(), source.data(), full_in, perm);
      } else if (node.op == OpKind::concat) {
        const auto axis = static_cast<std::size_t>(normalized_axis(node.attrs.axis, static_cast<std::int64_t>(in_shape.size())) + 1);
        std::vector<std::vector<std::int32_t>> parts;
        std::vector<const void*> xs;
        std::vector<nn::i64> sizes;
        for (std::size_t j = 0; j < node.inputs.size(); ++j) {
          parts.push_back(j == k ? positions : std::vector<std::int32_t>(static_cast<std::size_t>(numel(g.shape_of(node.inputs[j]))), -1));
          sizes.push_back(g.shape_of(node.inputs[j])[axis - 1]);
        }
        for (const auto& part : parts) xs.push_back(part.data());
        nn::i64 outer = 1, inner = 1;
        for (std::size_t d = 0; d < full_in.size(); ++d) {
          if (d < axis) outer *= full_in[d];
          if (d > axis) inner *= full_in[d];
        }
        nn::concat_forward(xs, sizes, source.data(), outer, inner);
      } else {
        continue;  // no other op reads int32 (shape inference enforces it)
      }
      for (std::size_t o = 0; o < source.size(); ++o) {
        if (source[o] >= 0) in[static_cast<std::size_t>(source[o])] = std::min(in[static_cast<std::size_t>(source[o])], out[o]);
      }
    }
  }
  std::vector<std::int64_t>& input = limits[0];
  for (auto& l : input) l = l == kUnlimited ? kFreeTokenLimit : l;
  return limits;
}

}  // namespace

const char* phase_name(Phase phase) noexcept {
  switch (phase) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::optimizer:
      return "optimizer";
  }
  return "unknown";
}

struct Executor::Impl {
  Graph graph;
  ExecutorOptions options;
  LayerObserver* observer = nullptr;
  int threads = 1;
  std::vector<std::unique_ptr<nn::Layer>> layers;
  std::vector<std::unique_ptr<ParameterSlot>> slots;     // every parameter, tied ones included
  std::vector<std::vector<ParameterSlot*>> layer_slots;  // per node, in parameter_specs order
  std::vector<int> readers;                              // per node: input slots reading it (+1 for the output)
  std::vector<char> requires_grad;                       // per node: a gradient flows into it
  std::vector<std::vector<char>> needs_input_grad;       // per node, per input
  std::vector<std::int64_t> token_limit;                 // per element of an int32 model input
  std::int64_t step = 0;                                 // optimizer steps taken

  // Scratch sized at build, so that a pass allocates no bookkeeping of its own.
  std::vector<Tensor> values;
  std::vector<Tensor> gradients;
  std::vector<char> gradient_owned;  // gradients[i] is storage of its own (may be summed into)
  std::vector<int> remaining;
  std::vector<int> storage_of;       // the storage group each live output belongs to (node index; n: the model input's)
  std::vector<int> storage_readers;  // per group: reads still to come of any handle in it
  std::vector<const Tensor*> inputs;
  std::vector<Tensor> input_gradients;

  Result<bool> check_input(const Tensor& input) const;
  Result<Tensor> run_forward(const Tensor& input, bool training);
  void run_backward(Tensor output_gradient);
  void run_optimizer();
  void add_gradient(int node, Tensor gradient, bool fresh);
  void clear_pass() noexcept;
};

Executor::Executor(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;
Executor::~Executor() = default;

const Graph& Executor::graph() const noexcept {
  return impl_->graph;
}
const ExecutorOptions& Executor::options() const noexcept {
  return impl_->options;
}
int Executor::threads() const noexcept {
  return impl_->threads;
}
void Executor::set_observer(LayerObserver* observer) noexcept {
  impl_->observer = observer;
}

std::optional<Error> Executor::check_memory(const Graph& graph, const ExecutorOptions& o) {
  auto memory = estimate_memory(graph, o.batch, o.optimizer.kind);
  if (!memory) return memory.error();
  const MemoryEstimate& m = *memory;
  const std::int64_t needed = o.training ? m.training_total_bytes : m.inference_total_bytes;
  const std::string breakdown = o.training ? "model state " + common::binary_bytes(m.model_state_bytes) + ", activations kept for backward " +
                                                 common::binary_bytes(m.training_activation_bytes)
                                           : "parameters and buffers " + common::binary_bytes(m.param_bytes + m.buffer_bytes) +
                                                 ", peak activations " + common::binary_bytes(m.inference_activation_bytes);
  const std::string what = "model '" + graph.name + "' at batch " + std::to_string(o.batch) + (o.training ? " (training)" : "");
  if (auto error = common::check_memory_fits(needed, what, breakdown, common::memory_budget())) {
    return Error{error->message + "; use a smaller --batch or a machine with more memory"};
  }
  return std::nullopt;
}

namespace {

// A layer's parameter slot: tied to its owner's tensors, or its own, from the model file or
// initialised like PyTorch, with a gradient and the optimizer's moments when training.
std::unique_ptr<ParameterSlot> parameter_slot(const Graph& g, int layer, const nn::ParameterSpec& spec, int index,
                                              const std::vector<std::vector<ParameterSlot*>>& layer_slots, const ExecutorOptions& options) {
  auto s = std::make_unique<ParameterSlot>();
  s->layer = layer;
  s->name = spec.name;
  if (spec.scheme == nn::InitScheme::tied) {
    // The owner's parameter of this name (a linear's weight tied to an embedding's "weight", a
    // shared convolution's weight and bias), else its first; a tie to a tied one reaches the
    // owner through the handles already shared.
    const std::vector<ParameterSlot*>& owned = layer_slots[static_cast<std::size_t>(spec.tied_to)];
    const auto same_name = std::find_if(owned.begin(), owned.end(), [&](const ParameterSlot* o) { return o->name == spec.name; });
    const ParameterSlot& owner = same_name != owned.end() ? **same_name : *owned[0];
    s->value = owner.value;
    s->gradient = owner.gradient;
    s->tied = true;
    return s;
  }
  s->value = Tensor::empty(spec.shape);
  if (const InitialValue* initial = nn::find_initial_value(g.nodes[static_cast<std::size_t>(layer)], spec.name)) {
    nn::load_initial_value(*initial, s->value);
  } else {
    nn::initialize(spec, s->value, options.seed, layer, index);
  }
  if (options.training) {
    s->gradient = Tensor::zeros(spec.shape);
    const OptimizerKind kind = options.optimizer.kind;
    if (kind != OptimizerKind::sgd) s->first_moment = Tensor::zeros(spec.shape);  // the velocity, or Adam's first moment
    if (kind == OptimizerKind::adam) s->second_moment = Tensor::zeros(spec.shape);
  }
  return s;
}

// Refused before anything is allocated: layers hwprof cannot run (an import kept for
// counting), initial values that do not fit.
std::optional<Error> check_runnable(const Graph& graph) {
  if (graph.nodes.empty()) return Error{"model '" + graph.name + "' has no layers to run"};
  if (const int n = graph.unsupported_layers(); n > 0) {
    std::string list;
    for (const Node& node : graph.nodes) {
      if (node.op == OpKind::unsupported) list += "\n  - " + node.spec_pointer + " (" + node.attrs.source_op + "): " + node.attrs.reason;
    }
    return Error{graph.source.file() + ": " + std::to_string(n) + " layer" + (n == 1 ? "" : "s") +
                 " cannot run (ops hwprof cannot map; the graph was imported for counting only):" + list};
  }
  return nn::check_initial_values(graph);
}

}  // namespace

Result<Executor> Executor::build(const Graph& graph, const ExecutorOptions& options) {
  if (auto ok = check_options(options); !ok) return ok.error();
  if (auto error = check_runnable(graph)) return *error;
  if (auto error = check_memory(graph, options)) return *error;
  auto impl = std::make_unique<Impl>();
  impl->graph = graph;
  impl->options = options;
  const Graph& g = impl->graph;
  const std::size_t n = g.nodes.size();
  impl->threads = nn::set_kernel_threads(options.threads);
  std::size_t widest = 1;
  try {
    impl->layer_slots.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int layer = static_cast<int>(i);
      const std::vector<nn::ParameterSpec> specs = nn::parameter_specs(g, layer);
      for (std::size_t k = 0; k < specs.size(); ++k) {
        std::unique_ptr<ParameterSlot> s = parameter_slot(g, layer, specs[k], static_cast<int>(k), impl->layer_slots, options);
        impl->layer_slots[i].push_back(s.get());
        impl->slots.push_back(std::move(s));
      }
      impl->layers.push_back(nn::make_layer(g, layer, impl->layer_slots[i]));
      widest = std::max(widest, g.nodes[i].inputs.size());
    }
  } catch (const std::bad_alloc&) {
    return Error{"model '" + g.name + "': out of memory allocating its parameters" +
                 (options.training ? std::string(", gradients and optimizer state") : std::string()) +
                 "; try a machine with more memory or a smaller model"};
  }
  impl->readers.assign(n, 0);
  impl->requires_grad.assign(n, 0);
  impl->needs_input_grad.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    bool grad = !impl->layer_slots[i].empty();
    for (int input : node.inputs) {
      const bool input_grad = input != kModelInput && impl->requires_grad[static_cast<std::size_t>(input)] != 0 && g.dtype_of(input) == DType::f32;
      impl->needs_input_grad[i].push_back(input_grad ? 1 : 0);
      grad = grad || input_grad;
      if (input != kModelInput) ++impl->readers[static_cast<std::size_t>(input)];
    }
    impl->requires_grad[i] = grad ? 1 : 0;
  }
  ++impl->readers[n - 1];  // the model's output outlives the pass
  if (g.input.dtype == DType::i32) impl->token_limit = std::move(token_limits(g)[0]);
  impl->values.resize(n);
  impl->gradients.resize(n);
  impl->gradient_owned.assign(n, 0);
  impl->remaining.resize(n);
  impl->storage_of.resize(n);
  impl->storage_readers.resize(n + 1);
  impl->inputs.resize(widest);
  impl->input_gradients.resize(widest);
  return Executor(std::move(impl));
}

Result<bool> Executor::Impl::check_input(const Tensor& input) const {
  const Shape& want = graph.input.shape;
  const Shape& got = input.shape();
  const bool fits = input.defined() && got.size() == want.size() + 1 && got[0] >= 1 && std::equal(want.begin(), want.end(), got.begin() + 1) &&
                    input.dtype() == graph.input.dtype;
  if (fits) return true;
  const std::string got_text = input.defined() ? shape_text(got) + " " + std::string(dtype_name(input.dtype())) : "an empty tensor";
  return Error{"model '" + graph.name + "' takes input [batch, " + shape_text(want).substr(1) + " " + std::string(dtype_name(graph.input.dtype)) +
               ", got " + got_text +
               "; pass a tensor of that shape (make_input builds one), or rebuild the model for another input with "
               "with_input_shape (hwprof: --input-shape)"};
}

void Executor::Impl::clear_pass() noexcept {
  for (auto& v : values) v = Tensor();
  for (auto& v : gradients) v = Tensor();
  for (auto& layer : layers) layer->release_saved();
}

Result<Tensor> Executor::Impl::run_forward(const Tensor& input, bool training) {
  const std::size_t n = graph.nodes.size();
  const auto input_group = static_cast<int>(n);  // the caller's tensor: never overwritten
  std::copy(readers.begin(), readers.end(), remaining.begin());
  std::fill(storage_readers.begin(), storage_readers.end(), 0);
  auto group_of = [&](int index) { return index == kModelInput ? input_group : storage_of[static_cast<std::size_t>(index)]; };
  nn::ForwardContext context;
  context.training = training;
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    const std::size_t arity = node.inputs.size();
    context.reusable_inputs = 0;
    for (std::size_t k = 0; k < arity; ++k) {
      const int index = node.inputs[k];
      inputs[k] = index == kModelInput ? &input : &values[static_cast<std::size_t>(index)];
      // In inference, an input whose storage nobody reads after this layer may become its
      // output (an in-place activation or add, as torchvision's ReLU(inplace=True) and
      // `out += identity`). Training keeps inputs for backward, so never there.
      const int group = group_of(index);
      if (training || group == input_group || k >= 32) continue;
      const auto reads_here = std::count_if(node.inputs.begin(), node.inputs.end(), [&](int other) { return group_of(other) == group; });
      if (storage_readers[static_cast<std::size_t>(group)] == reads_here) context.reusable_inputs |= 1U << k;
    }
    if (training) {
      context.dropout_key = nn::stream_key(options.seed, i, kDropoutIndexBase + static_cast<std::uint64_t>(step));
    }
    Result<Tensor> output = Error{};
    {
      ObserverScope scope(observer, static_cast<int>(i), Phase::forward);
      output = layers[i]->forward(std::span<const Tensor* const>(inputs.data(), arity), context);
    }
    if (!output) {
      clear_pass();
      return output.error();
    }
    values[i] = std::move(*output);
    // A view or an in-place output joins its input's storage group; anything else starts one.
    int group = static_cast<int>(i);
    for (std::size_t k = 0; k < arity; ++k) {
      if (values[i].shares_storage_with(*inputs[k])) group = group_of(node.inputs[k]);
    }
    storage_of[i] = group;
    storage_readers[static_cast<std::size_t>(group)] += readers[i];
    if (readers[i] == 0) values[i] = Tensor();  // a dead end of the graph: nothing reads it
    for (int index : node.inputs) {
      --storage_readers[static_cast<std::size_t>(group_of(index))];
      if (index != kModelInput && --remaining[static_cast<std::size_t>(index)] == 0) values[static_cast<std::size_t>(index)] = Tensor();
    }
  }
  return std::move(values[n - 1]);
}

void Executor::Impl::add_gradient(int node, Tensor gradient, bool fresh) {
  const auto i = static_cast<std::size_t>(node);
  Tensor& sum = gradients[i];
  if (!sum.defined()) {
    sum = std::move(gradient);
    gradient_owned[i] = fresh ? 1 : 0;
  } else if (gradient_owned[i] != 0) {
    nn::accumulate(sum.f32(), gradient.f32(), sum.numel());
  } else if (fresh) {
    nn::accumulate(gradient.f32(), sum.f32(), sum.numel());
    sum = std::move(gradient);
    gradient_owned[i] = 1;
  } else {
    // Both share storage with other gradients (add, views): the sum needs storage of its own.
    Tensor total = Tensor::empty(sum.shape());
    nn::add_forward(sum.f32(), gradient.f32(), total.f32(), total.numel());
    sum = std::move(total);
    gradient_owned[i] = 1;
  }
}

void Executor::Impl::run_backward(Tensor output_gradient) {
  const std::size_t n = graph.nodes.size();
  gradients[n - 1] = std::move(output_gradient);
  gradient_owned[n - 1] = 1;
  for (std::size_t r = n; r-- > 0;) {
    const Node& node = graph.nodes[r];
    const std::size_t arity = node.inputs.size();
    {
      ObserverScope scope(observer, static_cast<int>(r), Phase::backward);
      // A node off every path to the loss has no gradient; one that neither has parameters
      // nor feeds any has nothing to compute.
      if (requires_grad[r] != 0 && gradients[r].defined()) {
        layers[r]->backward(gradients[r], std::span<Tensor>(input_gradients.data(), arity), needs_input_grad[r]);
        const bool fresh = !layers[r]->input_gradients_alias_dy();
        for (std::size_t k = 0; k < arity; ++k) {
          if (input_gradients[k].defined()) add_gradient(node.inputs[k], std::move(input_gradients[k]), fresh);
          input_gradients[k] = Tensor();
        }
      }
    }
    gradients[r] = Tensor();
    layers[r]->release_saved();
  }
}

void Executor::Impl::run_optimizer() {
  ++step;
  const OptimizerOptions& o = options.optimizer;
  for (std::size_t i = 0; i < layer_slots.size(); ++i) {
    const auto& own = layer_slots[i];
    // A layer whose only parameter is tied to an earlier layer's has nothing of its own to
    // update: the shared weight is updated once, with the layer that owns it.
    if (std::none_of(own.begin(), own.end(), [](const ParameterSlot* s) { return !s->tied; })) continue;
    ObserverScope scope(observer, static_cast<int>(i), Phase::optimizer);
    for (ParameterSlot* s : own) {
      if (s->tied) continue;
      if (o.kind != OptimizerKind::adam) {
        const double momentum = o.kind == OptimizerKind::momentum ? o.momentum : 0.0;
        const nn::SgdHyper h{static_cast<float>(o.learning_rate), static_cast<float>(momentum), static_cast<float>(o.weight_decay)};
        nn::sgd_update(h, s->value.f32(), s->gradient.f32(), s->first_moment.defined() ? s->first_moment.f32() : nullptr, s->value.numel(),
                       step == 1);
      } else {
        const nn::AdamHyper h{static_cast<float>(o.learning_rate), static_cast<float>(o.beta1), static_cast<float>(o.beta2),
                              static_cast<float>(o.epsilon), static_cast<float>(o.weight_decay)};
        nn::adam_update(h, s->value.f32(), s->gradient.f32(), s->first_moment.f32(), s->second_moment.f32(), s->value.numel(), step);
      }
    }
  }
}

Result<Tensor> Executor::forward(const Tensor& input) {
  Impl& m = *impl_;
  if (auto ok = m.check_input(input); !ok) return ok.error();
  nn::set_kernel_threads(m.threads);
  try {
    return m.run_forward(input, false);
  } catch (const std::bad_alloc&) {
    m.clear_pass();
    return Error{"model '" + m.graph.name + "': out of memory during the forward pass at batch " + std::to_string(input.dim(0)) +
                 "; try a smaller batch"};
  }
}

Result<float> Executor::compute_gradients(const Tensor& input, const Tensor& labels) {
  Impl& m = *impl_;
  if (!m.options.training) {
    return Error{"model '" + m.graph.name + "': training needs an executor built with ExecutorOptions::training = true"};
  }
  if (auto ok = m.check_input(input); !ok) return ok.error();
  if (m.graph.nodes.back().output_dtype != DType::f32) {
    return Error{m.graph.where(m.graph.nodes.back()) + ": the model's output is int32; training needs float32 logits from its last layer"};
  }
  const Shape& out = m.graph.nodes.back().output_shape;
  const std::int64_t classes = out.back();
  const std::int64_t rows = input.dim(0) * (numel(out) / classes);
  if (!labels.defined() || labels.dtype() != DType::i32 || labels.numel() != rows) {
    return Error{"model '" + m.graph.name + "': labels must be int32, one per row of the output's last axis (" + std::to_string(rows) +
                 " for a batch of " + std::to_string(input.dim(0)) + "), got " +
                 (labels.defined() ? shape_text(labels.shape()) + " " + std::string(dtype_name(labels.dtype())) : "an empty tensor")};
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int32_t label = labels.i32()[r];
    if (label < 0 || label >= classes) {
      return Error{"model '" + m.graph.name + "': label " + std::to_string(label) + " at row " + std::to_string(r) + " is outside the output's " +
                   std::to_string(classes) + " classes [0, " + std::to_string(classes) + "); labels index the last axis of layer '" +
                   m.graph.nodes.back().name + "'"};
    }
  }
  nn::set_kernel_threads(m.threads);
  try {
    auto output = m.run_forward(input, true);
    if (!output) return output.error();
    Tensor logits = std::move(*output);
    Tensor dlogits = Tensor::empty(logits.shape());
    const double loss = nn::cross_entropy(logits.f32(), labels.i32(), dlogits.f32(), rows, classes);
    logits = Tensor();  // a layer that needs it (softmax) keeps its own handle
    m.run_backward(std::move(dlogits));
    return static_cast<float>(loss);
  } catch (const std::bad_alloc&) {
    m.clear_pass();
    return Error{"model '" + m.graph.name + "': out of memory during a training step at batch " + std::to_string(input.dim(0)) +
                 "; try a smaller batch"};
  }
}

void Executor::optimizer_step() {
  if (!impl_->options.training) return;
  nn::set_kernel_threads(impl_->threads);
  impl_->run_optimizer();
}

Result<float> Executor::train_step(const Tensor& input, const Tensor& labels) {
  auto loss = compute_gradients(input, labels);
  if (loss) optimizer_step();
  return loss;
}

Tensor Executor::make_input(std::uint64_t seed) const {
  const Impl& m = *impl_;
  Tensor input = Tensor::empty(nn::batched(m.options.batch, m.graph.input.shape), m.graph.input.dtype);
  const std::uint64_t key = nn::stream_key(seed, kInputStream, 0);
  if (input.dtype() == DType::f32) {
    nn::fill_normal(input.f32(), input.numel(), 0.0, 1.0, key);
  } else {
    std::vector<std::int64_t> limits;
    limits.reserve(static_cast<std::size_t>(input.numel()));
    for (std::int64_t b = 0; b < m.options.batch; ++b) limits.insert(limits.end(), m.token_limit.begin(), m.token_limit.end());
    nn::fill_integers(input.i32(), limits.data(), input.numel(), key);
  }
  return input;
}

Tensor Executor::make_labels(std::uint64_t seed) const {
  const Impl& m = *impl_;
  Shape rows = m.graph.nodes.back().output_shape;
  const std::int64_t classes = rows.back();
  rows.pop_back();
  Tensor labels = Tensor::empty(nn::batched(m.options.batch, rows), DType::i32);
  const std::vector<std::int64_t> limits(static_cast<std::size_t>(labels.numel()), classes);
  nn::fill_integers(labels.i32(), limits.data(), labels.numel(), nn::stream_key(seed, kLabelStream, 0));
  return labels;
}

std::vector<Parameter> Executor::parameters() const {
  std::vector<Parameter> result;
  for (const auto& s : impl_->slots) result.push_back(Parameter{s->layer, s->name, s->value, s->gradient, s->tied});
  return result;
}

std::int64_t Executor::parameter_bytes() const noexcept {
  std::int64_t bytes = 0;
  for (const auto& s : impl_->slots) bytes += s->tied ? 0 : s->value.bytes();
  return bytes;
}

}  // namespace hwprof
