// The model graph: what a model spec (models/*.json, format in docs/model-specs.md, "Model specs") becomes once it is
// parsed, its repeats expanded, its names resolved and every shape inferred.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/result.hpp"
#include "hwprof/source_text.hpp"

HWPROF_API_BEGIN

namespace hwprof {

enum class DType { f32, i32 };

// A per-sample shape: the batch dimension is never part of it.
using Shape = std::vector<std::int64_t>;

// The element-wise unary ops (y[i] = f(x[i]), the activations), each defined, cost, kernels and
// mappings, in src/ops/elementwise_unary.cpp (docs/adding-an-op.md): their names in C++.
#define HWPROF_ELEMENTWISE_UNARY_OPS(X) \
  X(relu)                               \
  X(relu6)                              \
  X(gelu)                               \
  X(silu)                               \
  X(sigmoid)                            \
  X(tanh)                               \
  X(hardswish)                          \
  X(hardsigmoid)                        \
  X(softplus)                           \
  X(mish)                               \
  X(leaky_relu)                         \
  X(elu)                                \
  X(hardshrink)

// The pooling ops (the maximum or the mean of each window over 2 or 3 spatial axes, or of
// adaptive windows that tile the input), each defined in src/ops/pooling.cpp
// (docs/adding-an-op.md): their names in C++.
#define HWPROF_POOLING_OPS(X) \
  X(maxpool1d)                \
  X(avgpool1d)                \
  X(adaptive_avgpool1d)       \
  X(maxpool2d)                \
  X(avgpool2d)                \
  X(adaptive_avgpool2d)       \
  X(maxpool3d)                \
  X(avgpool3d)                \
  X(adaptive_avgpool3d)

// The normalization ops (a batch norm's per-channel statistics over 1, 2 or 3 spatial axes, a
// layer norm's per row), each defined in src/ops/normalization.cpp (docs/adding-an-op.md):
// their names in C++.
#define HWPROF_NORMALIZATION_OPS(X) \
  X(batchnorm1d)                    \
  X(batchnorm2d)                    \
  X(batchnorm3d)                    \
  X(layernorm)

// The element-wise binary ops (y = a ∘ b, broadcast as NumPy does), each defined in
// src/ops/elementwise_binary.cpp (docs/adding-an-op.md): their names in C++.
#define HWPROF_ELEMENTWISE_BINARY_OPS(X) \
  X(add)                                 \
  X(mul)                                 \
  X(sub)                                 \
  X(div)

// The convolution ops (a learned kernel slid over 2 or 3 spatial axes, or scattered through them:
// the transposed convolution), each defined in src/ops/convolution.cpp (docs/adding-an-op.md):
// their names in C++. conv3d and conv_transpose3d take a per-sample [C, D, H, W].
#define HWPROF_CONVOLUTION_OPS(X) \
  X(conv1d)                       \
  X(conv_transpose1d)             \
  X(conv2d)                       \
  X(conv_transpose2d)             \
  X(conv3d)                       \
  X(conv_transpose3d)

// The recurrent ops (one layer of nn.LSTM or nn.GRU over [T, C] per sample), each defined in
// src/ops/recurrent.cpp (docs/adding-an-op.md): their names in C++.
#define HWPROF_RECURRENT_OPS(X) \
  X(lstm)                       \
  X(gru)

// The data-movement ops (copies and views between per-sample axes), each defined in
// src/ops/data_movement.cpp (docs/adding-an-op.md): their names in C++.
#define HWPROF_DATA_MOVEMENT_OPS(X) \
  X(flatten)                        \
  X(dropout)                        \
  X(concat)                         \
  X(reshape)                        \
  X(transpose)                      \
  X(select)                         \
  X(slice)                          \
  X(pad)                            \
  X(gather)                         \
  X(expand)                         \
  X(tile)                           \
  X(where)

// The lookup ops (a learned table read by token or by position), each defined in
// src/ops/lookup.cpp (docs/adding-an-op.md): their names in C++. rel_pos_bias is Swin
// Transformer's relative position bias, a learned [(2·wh − 1)·(2·ww − 1), heads] table added to
// the attention scores [..., heads, N, N] of a wh × ww window (docs/model-specs.md, "Ops and
// attributes").
#define HWPROF_LOOKUP_OPS(X) \
  X(embedding)               \
  X(pos_embedding)           \
  X(cls_token)               \
  X(rel_pos_bias)

// The matrix products (an activation times the layer's weights, or two activations, run as
// GEMMs), each defined in src/ops/product.cpp (docs/adding-an-op.md): their names in C++.
#define HWPROF_PRODUCT_OPS(X) \
  X(linear)                   \
  X(attention)                \
  X(matmul)

// The softmax ops (a normalised exponential along one axis), each defined in src/ops/softmax.cpp
// (docs/adding-an-op.md): their names in C++.
#define HWPROF_SOFTMAX_OPS(X) X(softmax)

#define HWPROF_OP_ENUMERATOR(name) name,

// The families' lists, then the ops that are their own (clang-format would run the lists together).
// clang-format off
enum class OpKind {
  HWPROF_PRODUCT_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_CONVOLUTION_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_NORMALIZATION_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_ELEMENTWISE_UNARY_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_SOFTMAX_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_POOLING_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_ELEMENTWISE_BINARY_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_DATA_MOVEMENT_OPS(HWPROF_OP_ENUMERATOR)
  HWPROF_LOOKUP_OPS(HWPROF_OP_ENUMERATOR)
  upsample,
  reduce,
  HWPROF_RECURRENT_OPS(HWPROF_OP_ENUMERATOR)
  // An imported node hwprof cannot map (an ONNX op it has no layer for), kept only when the
  // import is asked to keep them (LoadOptions::keep_unsupported, for `summary`): its output
  // shape is the file's, and nothing about its cost is known. No spec can name it and the
  // engine refuses it.
  unsupported,
};
// clang-format on

#undef HWPROF_OP_ENUMERATOR

enum class GeluApproximation { none, tanh };

// upsample's interpolation: PyTorch's F.interpolate mode "nearest" (its legacy nearest, the
// source index floored) or "bilinear"; each defined in src/ops/upsample.cpp.
enum class UpsampleMode { nearest, bilinear };

// reduce's reduction: torch.sum / torch.mean over the given axes (ONNX ReduceSum / ReduceMean);
// each defined in src/ops/reduce.cpp.
enum class ReduceMode { sum, mean };

// pad's fill: a constant value, the input mirrored without repeating the edge (PyTorch's
// "reflect", numpy's "reflect"), or the edge element repeated ("replicate", ONNX's "edge").
enum class PadMode { constant, reflect, edge };

struct Pair {
  std::int64_t h = 0;
  std::int64_t w = 0;
};

// A pair of real factors, per spatial axis (upsample's scale).
struct Scale {
  double h = 0.0;
  double w = 0.0;
};

// The depth axis of a 3-D op's window (conv3d, conv_transpose3d, maxpool3d, avgpool3d, adaptive_avgpool3d): the
// Pair fields beside it hold the height and width. 2-D ops leave it as it is, a window of depth
// 1, so their formulas are the 3-D ones with D = 1.
struct DepthWindow {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t dilation = 1;        // conv3d, conv_transpose3d, maxpool3d
  std::int64_t output = 1;          // adaptive_avgpool3d
  std::int64_t output_padding = 0;  // conv_transpose3d
};

// The attributes of every op in one flat record; each op reads only its own (docs/model-specs.md,
// "Ops and attributes") and the parser rejects the others. Defaults are those of that table.
struct Attributes {
  std::int64_t out_features = 0;  // linear
  bool bias = true;               // linear, conv2d, attention
  int tied_to = -1;               // linear: index of the embedding/linear whose weight it shares
  std::int64_t out_channels = 0;  // conv2d, conv3d, conv_transpose2d
  Pair kernel;                    // conv2d, pools (3-D ops: h, w; depth below)
  Pair stride{1, 1};              // conv2d, pools (pools default to the kernel)
  Pair padding{0, 0};
  Pair dilation{1, 1};                                      // the convolutions and the max pools
  Pair output_padding{0, 0};                                // conv_transpose2d: added to one side of the output
  std::int64_t groups = 1;                                  // conv2d, conv3d
  bool ceil_mode = false;                                   // pools
  DepthWindow depth;                                        // 3-D ops: kernel, stride, padding, dilation, output along D
  Pair output{1, 1};                                        // adaptive_avgpool2d, adaptive_avgpool3d
  UpsampleMode mode = UpsampleMode::nearest;                // upsample
  Pair size{0, 0};                                          // upsample: the output [oh, ow]; 0 when given by scale
  Scale scale;                                              // upsample: output = floor(in × scale); 0 when given by size
  bool align_corners = false;                               // upsample (bilinear only)
  ReduceMode reduce_mode = ReduceMode::sum;                 // reduce ("mode" in a spec)
  std::vector<std::int64_t> axes;                           // reduce, slice: per-sample axes, as written (may be < 0)
  bool keepdims = true;                                     // reduce: reduced axes kept with size 1 (ONNX's default)
  std::vector<std::int64_t> starts, ends, steps;            // slice (with axes): Python's x[start:end:step] per axis
  std::vector<std::int64_t> pads;                           // pad: every per-sample axis's start, then every axis's end (ONNX's order)
  PadMode pad_mode = PadMode::constant;                     // pad ("mode" in a spec)
  double pad_value = 0.0;                                   // pad, constant mode ("value" in a spec)
  std::vector<std::int64_t> indices;                        // gather: positions along axis, as written (may be < 0)
  std::vector<std::int64_t> repeats;                        // tile: copies per per-sample axis
  Shape condition;                                          // where: the condition's per-sample shape (broadcast to the output)
  bool constant_first = false;                              // where with one input: the operand is the "true" side
  std::int64_t hidden_size = 0;                             // lstm, gru: the state's width H (per direction)
  bool bidirectional = false;                               // lstm, gru: a second, reversed pass; output [T, 2H]
  double eps = 1e-5;                                        // batchnorm2d, layernorm
  double p = 0.5;                                           // dropout
  std::int64_t axis = 0;                                    // softmax [-1], concat [0], select [0], gather [0]; as written (may be < 0)
  std::int64_t index = 0;                                   // select; as written (may be < 0)
  Shape shape;                                              // reshape (-1 resolved after inference), expand (the target)
  std::vector<std::int64_t> perm;                           // transpose
  std::int64_t num_embeddings = 0;                          // embedding
  std::int64_t embedding_dim = 0;                           // embedding
  std::int64_t num_positions = 0;                           // pos_embedding
  Pair window;                                              // rel_pos_bias: the window [wh, ww]; N = wh·ww
  std::int64_t heads = 0;                                   // attention
  bool causal = false;                                      // attention
  GeluApproximation approximate = GeluApproximation::none;  // gelu
  // An element-wise unary op's one number, named by its definition: leaky_relu's negative_slope,
  // elu's alpha. Unset: the definition's default (PyTorch's).
  std::optional<double> parameter;
  // add, sub, mul, div (and where) with one input: the per-sample shape of the tensor it is combined with
  // (same rank as the input, each axis equal to the input's or 1), a constant (a buffer,
  // "operand") or, when trainable, a learned parameter ("weight", ConvNeXt's layer scale).
  Shape operand;
  bool operand_trainable = false;
  std::string source_op;  // unsupported: the file's op, e.g. "ConvTranspose (opset 17)"
  std::string reason;     // unsupported: why hwprof cannot map it
};

// A value a layer's parameter or buffer starts from instead of the seeded initialisation (an
// ONNX file's initializers), float32, row-major, in the layout the engine keeps for that
// parameter (docs/model-specs.md, "Ops and attributes": linear weight [out, in], conv2d weight [out, in/groups, kh, kw]).
struct InitialValue {
  std::string name;  // the parameter: "weight", "bias", "running_mean", "running_var"
  Shape shape;       // its full shape (no batch dimension is involved)
  std::shared_ptr<const std::vector<float>> data;
  std::string origin;  // where it came from, for messages: "initializer 'fc.weight'"
};

// The model input is node index kModelInput wherever an input index appears.
inline constexpr int kModelInput = -1;

struct Node {
  std::string name;  // full name, e.g. "h.3.attn"
  OpKind op = OpKind::relu;
  std::vector<int> inputs;  // indices of earlier nodes, or kModelInput
  Attributes attrs;
  Shape output_shape;  // per sample
  DType output_dtype = DType::f32;
  std::string spec_pointer;                  // JSON pointer of the layer in the spec, for messages
  std::vector<InitialValue> initial_values;  // empty: the engine initialises it (seeded)
};

struct ModelInput {
  Shape shape;
  DType dtype = DType::f32;
};

struct Graph {
  std::string name;
  ModelInput input;
  std::vector<Node> nodes;  // in execution order; inputs always point backwards
  SourceText source;
  // What a reader of the counts should know about the model file, found while reading it (an
  // ONNX export whose BatchNorms were folded into its convolutions); sentences, each whole.
  std::vector<std::string> notes;

  // Index of the node with this full name, or -2 when there is none.
  int find(std::string_view node_name) const;
  const Shape& shape_of(int index) const { return index == kModelInput ? input.shape : nodes[static_cast<std::size_t>(index)].output_shape; }
  DType dtype_of(int index) const { return index == kModelInput ? input.dtype : nodes[static_cast<std::size_t>(index)].output_dtype; }
  // "file:line:col: layer 'name' (op)" — the prefix of every message about that layer.
  std::string where(const Node& node, std::string_view attribute = {}) const;
  // How many layers are OpKind::unsupported (an ONNX import with LoadOptions::keep_unsupported).
  int unsupported_layers() const;
};

// Limits that keep hostile specs from hanging or exhausting memory.
inline constexpr std::int64_t kMaxSpecBytes = 64LL << 20;
inline constexpr std::int64_t kMaxLayers = 1'000'000;
inline constexpr std::int64_t kMaxRank = 16;
inline constexpr int kMaxRepeatNesting = 32;

// An ONNX file can be this large (protobuf's own limit is 2 GiB; larger models keep their
// weights in external data files beside it, which are read too).
inline constexpr std::int64_t kMaxOnnxBytes = (2LL << 30) - 1;

struct LoadOptions {
  // An ONNX node hwprof cannot map becomes an OpKind::unsupported layer (its shape from the
  // file, its cost unknown) instead of failing the import; only where its output shape is known.
  // For counting around such nodes (`summary`); a graph with them cannot run.
  bool keep_unsupported = false;
};

// A model spec (JSON) or an ONNX file (by its .onnx name, or by content when it is not JSON).
Result<Graph> load_model(const std::string& path, const LoadOptions& options = {});
// An ONNX ModelProto in memory; `path` names it in messages and locates external data.
Result<Graph> import_onnx(std::string_view bytes, const std::string& path, const LoadOptions& options = {});
// Whether this build can read ONNX files (built with libonnx-dev).
bool onnx_supported() noexcept;
Result<Graph> parse_model(std::string_view json_text, const std::string& source_name);
// The same graph with another per-sample input shape; every shape is inferred again.
Result<Graph> with_input_shape(const Graph& graph, const Shape& input_shape);

std::string_view op_name(OpKind op) noexcept;
const std::vector<std::string_view>& op_names();
std::string_view dtype_name(DType dtype) noexcept;
std::string format_shape(const Shape& shape);
std::int64_t numel(const Shape& shape) noexcept;  // shapes in a Graph never overflow
// A Python-style axis or index (negative counts from the end) made non-negative.
inline std::int64_t normalized_axis(std::int64_t axis, std::int64_t size) noexcept {
  return axis < 0 ? axis + size : axis;
}

}  // namespace hwprof
HWPROF_API_END
