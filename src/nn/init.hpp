// Deterministic random numbers for the engine: parameter initialisation in PyTorch's default
// schemes, synthetic inputs and dropout seeds. Every stream is a counter-based generator keyed
// by (seed, layer, index), so element i of a parameter depends on nothing but those numbers
// and i: not on the build order, the thread count or the other layers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/tensor.hpp"

namespace hwprof::nn {

// The key of one random stream. `layer` and `index` name the consumer (a parameter: its node
// and its position in the layer's parameter list; other uses pick numbers of their own).
std::uint64_t stream_key(std::uint64_t seed, std::uint64_t layer, std::uint64_t index) noexcept;

// Element i of a stream: 64 random bits, or a uniform double in [0, 1).
std::uint64_t stream_bits(std::uint64_t key, std::uint64_t i) noexcept;
double stream_uniform(std::uint64_t key, std::uint64_t i) noexcept;

// x[i] = U(-bound, bound), N(mean, std²), or a uniform integer in [0, limit[i]) — element i
// drawn from the stream's element(s) i, so a fill is the same on any number of threads.
void fill_uniform(float* x, std::int64_t n, double bound, std::uint64_t key);
void fill_normal(float* x, std::int64_t n, double mean, double std, std::uint64_t key);
void fill_constant(float* x, std::int64_t n, float value);
void fill_integers(std::int32_t* x, const std::int64_t* limit, std::int64_t n, std::uint64_t key);

enum class InitScheme {
  uniform,   // U(-scale, scale)
  normal,    // N(0, scale²)
  constant,  // every element = scale
  tied,      // no storage of its own: the weight of layer `tied_to`
};

struct ParameterSpec {
  std::string name;  // PyTorch's name within the module: "weight", "in_proj_bias", ...
  Shape shape;       // PyTorch's layout
  InitScheme scheme = InitScheme::constant;
  double scale = 0.0;
  int tied_to = -1;
};

// The learnable parameters of graph.nodes[layer], in the order the layer expects them, with
// PyTorch's default initialisation (init.cpp cites each). Empty for ops without parameters.
std::vector<ParameterSpec> parameter_specs(const Graph& graph, int layer);

// Fills `value` (spec.shape, float32) by the spec's scheme from stream (seed, layer, index).
void initialize(const ParameterSpec& spec, Tensor& value, std::uint64_t seed, int layer, int index);

// The buffers a layer keeps besides its parameters that a model file may give values for
// (batchnorm2d's running statistics), by name and shape.
std::vector<std::pair<std::string, Shape>> buffer_specs(const Graph& graph, int layer);

// The node's initial value named `name` (Node::initial_values: an ONNX file's initializers),
// or nullptr when the engine initialises it.
const InitialValue* find_initial_value(const Node& node, std::string_view name) noexcept;

// Copies `initial` into `value` (float32, `shape`).
void load_initial_value(const InitialValue& initial, Tensor& value);

// Every initial value of the graph names a parameter or buffer of its layer and has its shape
// and size: an error naming the layer and the value otherwise (a model importer's mistake,
// caught before anything runs on it).
std::optional<Error> check_initial_values(const Graph& graph);

}  // namespace hwprof::nn
