// Seeded initialisation in PyTorch's default schemes, on a counter-based generator.
//
// The generator is SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
// generators", OOPSLA 2014) used as a counter: element i of a stream is the mixer applied to
// key + (i + 1)·γ. Random access by index makes a fill independent of how many threads run it.
#include "nn/init.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/stages.hpp"
#include "ops/ops.hpp"

namespace hwprof::nn {
namespace {

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;  // SplitMix64's odd increment (2^64/φ)
// Below this many elements a fill runs on the calling thread: starting OpenMP workers costs
// more than the fill.
constexpr std::int64_t kInitParallelMin = 1 << 16;

constexpr std::uint64_t mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t stream_key(std::uint64_t seed, std::uint64_t layer, std::uint64_t index) noexcept {
  // Each component goes through the mixer before the next joins, so (seed, layer, index)
  // triples that differ anywhere give unrelated keys.
  return mix(mix(mix(seed + kGamma) + layer * kGamma) + index * kGamma);
}

std::uint64_t stream_bits(std::uint64_t key, std::uint64_t i) noexcept {
  return mix(key + (i + 1) * kGamma);
}

double stream_uniform(std::uint64_t key, std::uint64_t i) noexcept {
  return static_cast<double>(stream_bits(key, i) >> 11) * 0x1.0p-53;  // 53 random bits
}

void fill_uniform(float* x, std::int64_t n, double bound, std::uint64_t key) {
#pragma omp parallel for if (n > kInitParallelMin) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>((2.0 * stream_uniform(key, static_cast<std::uint64_t>(i)) - 1.0) * bound);
  }
}

void fill_normal(float* x, std::int64_t n, double mean, double std, std::uint64_t key) {
  // Box–Muller: stream elements 2p and 2p+1 give x[2p] and x[2p+1]. In float (24-bit
  // uniforms reach 5.8σ in the tails): glibc's logf and sincosf take a third of the double
  // versions' time, which matters for a 38-million-row embedding.
  const std::int64_t pairs = (n + 1) / 2;
  const auto m = static_cast<float>(mean);
  const auto s = static_cast<float>(std);
  constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;
#pragma omp parallel for if (n > kInitParallelMin) schedule(static)
  for (std::int64_t p = 0; p < pairs; ++p) {
    const auto i = static_cast<std::uint64_t>(2 * p);
    // 24 random bits each; u1 in (0, 1] so that the log is finite.
    const float u1 = static_cast<float>((stream_bits(key, i) >> 40) + 1) * 0x1.0p-24f;
    const float u2 = static_cast<float>(stream_bits(key, i + 1) >> 40) * 0x1.0p-24f;
    const float r = s * std::sqrt(-2.0f * std::log(u1));
    float sine = 0.0f, cosine = 0.0f;
    ::sincosf(kTwoPi * u2, &sine, &cosine);
    x[2 * p] = m + r * cosine;
    if (2 * p + 1 < n) x[2 * p + 1] = m + r * sine;
  }
}

void fill_constant(float* x, std::int64_t n, float value) {
#pragma omp parallel for if (n > kInitParallelMin) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) x[i] = value;
}

void fill_integers(std::int32_t* x, const std::int64_t* limit, std::int64_t n, std::uint64_t key) {
  for (std::int64_t i = 0; i < n; ++i) {
    // 53 random bits scaled onto [0, limit): for limits below 2^31 (int32 ids) every value's
    // probability is within 2^-22 of 1/limit. The min guards the rounding at the top end.
    const auto drawn = static_cast<std::int64_t>(stream_uniform(key, static_cast<std::uint64_t>(i)) * static_cast<double>(limit[i]));
    x[i] = static_cast<std::int32_t>(std::min(drawn, limit[i] - 1));
  }
}

// The schemes, from PyTorch 1.13's reset_parameters():
// - nn.Linear and nn.Conv2d (torch/nn/modules/linear.py, conv.py): weight
//   kaiming_uniform_(a=√5), whose bound gain·√(3/fan_in) with gain = √(2/(1+a²)) = √(1/3) is
//   1/√fan_in; bias U(±1/√fan_in) with the weight's fan_in (in_features; in/groups·kh·kw).
// - nn.BatchNorm2d, nn.LayerNorm: weight (γ) 1, bias (β) 0. (Running statistics are buffers,
//   not parameters; the executor starts them at mean 0, variance 1, as reset_running_stats.)
// - nn.Embedding: weight N(0, 1).
// - nn.MultiheadAttention._reset_parameters: in_proj_weight xavier_uniform_, bound
//   √(6/(fan_in+fan_out)) = √(6/(D+3D)); in_proj_bias and out_proj.bias 0; out_proj.weight as
//   nn.Linear's (U(±1/√D)).
// - pos_embedding and cls_token have no torch.nn module: N(0, 0.02²), the std of
//   torchvision's ViT pos_embedding (normal_(std=0.02), "from BERT"), GPT-2's wpe and timm's
//   trunc_normal_(std=.02) — whose cut at ±2 (absolute, i.e. 100σ) changes nothing in
//   practice, so it is drawn untruncated here. (torchvision starts class_token at zeros; the
//   small normal keeps the token's gradient checks from starting on a degenerate point.)
// - rel_pos_bias, Swin's relative_position_bias_table: trunc_normal_(std=.02) in the Swin
//   Transformer's code (Liu et al., ICCV 2021) and torchvision's swin_transformer.py, cut at ±2
//   as timm's: N(0, 0.02²) untruncated, as pos_embedding's.
// Long: one case per op, each its parameters' shapes and scheme; no default, so that the compiler
// names an op it lacks (docs/adding-an-op.md).
std::vector<ParameterSpec> parameter_specs(const Graph& graph, int layer) {
  const Node& node = graph.nodes[static_cast<std::size_t>(layer)];
  const Attributes& a = node.attrs;
  const Shape& in = graph.shape_of(node.inputs.empty() ? kModelInput : node.inputs[0]);
  auto kaiming_bound = [](std::int64_t fan_in) { return fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0; };
  std::vector<ParameterSpec> specs;
  // An element-wise binary op's learned operand starts at its definition's identity (ConvNeXt's
  // layer scale starts at 1e-6, a model file gives its own values).
  if (const ops::BinaryDefinition* binary = ops::binary_definition(node.op)) {
    if (node.inputs.size() == 1 && a.operand_trainable) specs.push_back({"weight", a.operand, InitScheme::constant, binary->identity, -1});
    return specs;
  }
  // A normalization's scale (1) and shift (0), per channel or per feature (ops/normalization.cpp).
  if (const ops::NormalizationDefinition* norm = ops::normalization_definition(node.op)) {
    const std::int64_t width = ops::normalized_width(*norm, in).size;
    specs.push_back({"weight", {width}, InitScheme::constant, 1.0, -1});
    specs.push_back({"bias", {width}, InitScheme::constant, 0.0, -1});
    return specs;
  }
  // A convolution's weight in PyTorch's layout (ops/convolution.cpp), uniform in ±1/√fan_in as
  // nn.ConvNd's reset_parameters, fan_in the weight's dim 1 times the kernel's positions
  // (torch.nn.init._calculate_fan_in_and_fan_out): in/groups·kernel, or for a transposed one
  // out/groups·kernel.
  if (const ops::ConvolutionDefinition* conv = ops::convolution_definition(node.op)) {
    const Shape weight = ops::conv_weight_shape(*conv, a, in[0]);
    std::int64_t fan_in = 1;
    for (std::size_t i = 1; i < weight.size(); ++i) fan_in *= weight[i];
    const double bound = kaiming_bound(fan_in);
    // Shared with an earlier convolution (tied_to): its weight and bias are that layer's.
    const InitScheme scheme = a.tied_to >= 0 ? InitScheme::tied : InitScheme::uniform;
    specs.push_back({"weight", weight, scheme, bound, a.tied_to});
    if (a.bias) specs.push_back({"bias", {a.out_channels}, scheme, bound, a.tied_to});
    return specs;
  }
  // PyTorch's nn.LSTM / nn.GRU (ops/recurrent.cpp): every weight and bias uniform in ±1/√H
  // (reset_parameters), both directions stacked on the first axis, the definition's gates in
  // PyTorch's order within each.
  if (const ops::RecurrentDefinition* recurrent = ops::recurrent_definition(node.op)) {
    const std::int64_t dirs = a.bidirectional ? 2 : 1;
    const std::int64_t gh = recurrent->gates * a.hidden_size;
    const double bound = kaiming_bound(a.hidden_size);
    specs.push_back({"weight_ih", {dirs, gh, in.back()}, InitScheme::uniform, bound, -1});
    specs.push_back({"weight_hh", {dirs, gh, a.hidden_size}, InitScheme::uniform, bound, -1});
    if (a.bias) {
      specs.push_back({"bias_ih", {dirs, gh}, InitScheme::uniform, bound, -1});
      specs.push_back({"bias_hh", {dirs, gh}, InitScheme::uniform, bound, -1});
    }
    return specs;
  }
  switch (node.op) {
    case OpKind::linear: {
      const std::int64_t k = in.back();
      const double bound = kaiming_bound(k);
      if (a.tied_to >= 0) {
        specs.push_back({"weight", {a.out_features, k}, InitScheme::tied, 0.0, a.tied_to});
      } else {
        specs.push_back({"weight", {a.out_features, k}, InitScheme::uniform, bound, -1});
      }
      if (a.bias) specs.push_back({"bias", {a.out_features}, InitScheme::uniform, bound, -1});
      break;
    }
    case OpKind::embedding:
      specs.push_back({"weight", {a.num_embeddings, a.embedding_dim}, InitScheme::normal, 1.0, -1});
      break;
    case OpKind::pos_embedding:
      specs.push_back({"weight", {a.num_positions, in[1]}, InitScheme::normal, 0.02, -1});
      break;
    case OpKind::cls_token:
      specs.push_back({"weight", {in[1]}, InitScheme::normal, 0.02, -1});
      break;
    case OpKind::rel_pos_bias: {
      const std::int64_t rows = (2 * a.window.h - 1) * (2 * a.window.w - 1);
      specs.push_back({"table", {rows, in[in.size() - 3]}, InitScheme::normal, 0.02, -1});
      break;
    }
    case OpKind::attention: {
      const std::int64_t d = in[1];
      specs.push_back({"in_proj_weight", {3 * d, d}, InitScheme::uniform, std::sqrt(6.0 / static_cast<double>(4 * d)), -1});
      if (a.bias) specs.push_back({"in_proj_bias", {3 * d}, InitScheme::constant, 0.0, -1});
      specs.push_back({"out_proj.weight", {d, d}, InitScheme::uniform, kaiming_bound(d), -1});
      if (a.bias) specs.push_back({"out_proj.bias", {d}, InitScheme::constant, 0.0, -1});
      break;
    }
    case OpKind::matmul:
      HWPROF_SOFTMAX_CASES
    case OpKind::upsample:
    case OpKind::reduce:
    case OpKind::unsupported:
      HWPROF_DATA_MOVEMENT_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_ELEMENTWISE_UNARY_CASES
      HWPROF_RECURRENT_CASES
      HWPROF_CONVOLUTION_CASES
      break;
  }
  return specs;
}

void initialize(const ParameterSpec& spec, Tensor& value, std::uint64_t seed, int layer, int index) {
  const std::uint64_t key = stream_key(seed, static_cast<std::uint64_t>(layer), static_cast<std::uint64_t>(index));
  switch (spec.scheme) {
    case InitScheme::uniform:
      fill_uniform(value.f32(), value.numel(), spec.scale, key);
      break;
    case InitScheme::normal:
      fill_normal(value.f32(), value.numel(), 0.0, spec.scale, key);
      break;
    case InitScheme::constant:
      fill_constant(value.f32(), value.numel(), static_cast<float>(spec.scale));
      break;
    case InitScheme::tied:
      break;  // the owner's initialisation is the tied layer's
  }
}

std::vector<std::pair<std::string, Shape>> buffer_specs(const Graph& graph, int layer) {
  const Node& node = graph.nodes[static_cast<std::size_t>(layer)];
  const bool binary = ops::binary_definition(node.op) != nullptr;
  if (binary && node.inputs.size() == 1 && !node.attrs.operand_trainable) return {{"operand", node.attrs.operand}};
  if (node.op == OpKind::where) {
    std::vector<std::pair<std::string, Shape>> buffers = {{"condition", node.attrs.condition}};
    if (node.inputs.size() == 1) buffers.emplace_back("operand", node.attrs.operand);
    return buffers;
  }
  // A batch norm's running statistics, per channel.
  const ops::NormalizationDefinition* norm = ops::normalization_definition(node.op);
  if (norm == nullptr || norm->statistics != ops::NormStatistics::per_channel) return {};
  const std::int64_t c = ops::normalized_width(*norm, graph.shape_of(node.inputs[0])).size;
  return {{"running_mean", {c}}, {"running_var", {c}}};
}

const InitialValue* find_initial_value(const Node& node, std::string_view name) noexcept {
  for (const InitialValue& v : node.initial_values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void load_initial_value(const InitialValue& initial, Tensor& value) {
  std::copy(initial.data->begin(), initial.data->end(), value.f32());
}

std::optional<Error> check_initial_values(const Graph& graph) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (node.initial_values.empty()) continue;
    const int layer = static_cast<int>(i);
    std::vector<std::pair<std::string, Shape>> wanted;
    for (const ParameterSpec& spec : parameter_specs(graph, layer)) {
      if (spec.scheme != InitScheme::tied) wanted.emplace_back(spec.name, spec.shape);
    }
    for (auto& buffer : buffer_specs(graph, layer)) wanted.push_back(std::move(buffer));
    for (const InitialValue& v : node.initial_values) {
      auto it = std::find_if(wanted.begin(), wanted.end(), [&](const auto& w) { return w.first == v.name; });
      const std::string what = graph.where(node) + ": initial value '" + v.name + "' (" + v.origin + ")";
      if (it == wanted.end()) return Error{what + ": the layer has no parameter or buffer of that name"};
      if (v.shape != it->second) return Error{what + " has shape " + format_shape(v.shape) + "; the layer's is " + format_shape(it->second)};
      if (v.data == nullptr || static_cast<std::int64_t>(v.data->size()) != numel(v.shape)) {
        return Error{what + " holds " + std::to_string(v.data == nullptr ? 0 : v.data->size()) + " values; its shape needs " +
                     std::to_string(numel(v.shape))};
      }
      if (std::count_if(node.initial_values.begin(), node.initial_values.end(), [&](const InitialValue& o) { return o.name == v.name; }) > 1) {
        return Error{what + " is given twice"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace hwprof::nn
