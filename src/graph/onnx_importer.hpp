// The ONNX importer's internals, shared by its files (docs/onnx.md says what each maps):
//   onnx_import.cpp    import_onnx() and Importer::run(): the steps in order, layer names, the
//                      list of nodes that cannot be mapped, dead branches dropped
//   onnx_model.cpp     the ModelProto read: opset, the input and its batch, attributes checked,
//                      Constant nodes, initializers and external data decoded, values indexed
//   onnx_folding.cpp   ONNX's shape inference, and the shape arithmetic it leaves unknown
//   onnx_patterns.cpp  patterns of several nodes that are one layer: LayerNorm, GELU, SiLU,
//                      attention
//   onnx_ops.cpp       one node onto one layer, driven by one table of op types
//   onnx_recurrent.cpp LSTM and GRU nodes, and the sequence-first tensors around them
//
// The batch: hwprof's shapes are per sample. The graph input's first dimension is the batch.
// When the file leaves it symbolic ("batch_size") it is set to kProbeBatch, a prime no layer
// is likely to have, before ONNX's shape inference runs; then a value whose first dimension is
// not the batch (a Reshape that folds the batch into another axis) is recognisable and refused
// rather than silently mapped onto per-sample shapes.
#pragma once

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "common/printable.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/convolution.hpp"
#include "ops/pooling.hpp"
#include "ops/recurrent.hpp"

namespace hwprof::graph {

inline constexpr std::int64_t kProbeBatch = 9973;
inline constexpr int kMinOpset = 11;
inline constexpr int kMaxOpset = 17;

using Dims = std::vector<std::int64_t>;  // -1: unknown

// A constant the graph computes from constants (onnx_constants.cpp): float32, int64 or bool
// values (bool held as 0/1 in `i`), row-major.
struct ConstTensor {
  enum class Type { f32, i64, boolean };
  Type type = Type::f32;
  Dims shape;
  std::vector<float> f;         // f32
  std::vector<std::int64_t> i;  // i64, boolean
};
// The most elements a constant evaluated at import may have (16 MiB of float32).
inline constexpr std::int64_t kMaxEvaluated = std::int64_t{1} << 22;

struct ImportError {
  std::string message;
};

// One ONNX value as the import sees it.
struct Value {
  // expanded: a constant broadcast over the batch (a class token's Expand), for the Concat after it.
  enum class Kind { activation, constant, shape_only, unmapped, expanded };
  Kind kind = Kind::shape_only;
  int node = kModelInput;                     // activation: the hwprof node (or the model input)
  const onnx::TensorProto* tensor = nullptr;  // constant: its data
};

inline std::string dims_text(const Dims& d) {
  std::string out = "[";
  for (std::size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
  return out + "]";
}

// The element count of `d`; -1 when a dimension is negative (unknown) or the product does not
// fit in 64 bits, so that no comparison with a real count can succeed.
inline std::int64_t product(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t x : d) {
    if (x < 0 || __builtin_mul_overflow(n, x, &n)) return -1;
  }
  return n;
}

// The scope of a PyTorch node name: "/layer1/layer1.0/conv1/Conv" → {"layer1", "layer1.0",
// "conv1"} (the last segment, the op itself, dropped).
inline std::vector<std::string> scope_segments(const std::string& node_name) {
  std::vector<std::string> segments;
  if (node_name.empty() || node_name[0] != '/') return segments;
  std::size_t start = 1;
  while (start <= node_name.size()) {
    const std::size_t slash = node_name.find('/', start);
    const std::size_t end = slash == std::string::npos ? node_name.size() : slash;
    if (end > start) segments.push_back(node_name.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (!segments.empty()) segments.pop_back();
  return segments;
}

// The module path of a scope: PyTorch writes a child of a Sequential or ModuleList as
// "<parent's attribute>.<index>" ("/layer2/layer2.0/downsample/downsample.0/Conv"), a child
// of any other module by its attribute ("conv1"), so "layer2" + "layer2.0" + "downsample" +
// "downsample.0" is layer2.0.downsample.0.
inline std::string module_path(const std::vector<std::string>& segments) {
  std::string path, last;
  for (const std::string& s : segments) {
    const std::string rest = !last.empty() && s.rfind(last + ".", 0) == 0 ? s.substr(last.size() + 1) : s;
    path = path.empty() ? rest : path + "." + rest;
    last = s;
  }
  return path;
}

// The shape of every graph input, inferred value and output that has one (-1: an unknown size).
inline void record_dims(const onnx::GraphProto& g, std::unordered_map<std::string, Dims>& into) {
  auto record = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    Dims d;
    for (const auto& dim : v.type().tensor_type().shape().dim()) d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    into[v.name()] = std::move(d);
  };
  for (const auto& v : g.input()) record(v);
  for (const auto& v : g.value_info()) record(v);
  for (const auto& v : g.output()) record(v);
}

// A row-major [rows, cols] matrix as [cols, rows]: ONNX's MatMul weight [in, out] in the
// engine's [out, in] layout.
inline std::vector<float> transposed(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(m.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) t[static_cast<std::size_t>(j * rows + i)] = m[static_cast<std::size_t>(i * cols + j)];
  }
  return t;
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Importer;

// One ONNX op type that map_node knows (onnx_ops.cpp's table, in docs/onnx.md's order). The
// list of supported ops (op_rules(), the messages, docs/onnx.md's table) is this table.
struct OnnxOpRule {
  // What map_node asks of a node's first input before it maps the node.
  enum class FirstInput {
    activation,  // an activation, else the node is not mapped
    any,         // an activation or a constant (Add, Sub, Mul, Div, Concat)
    unread,      // nothing: the mapping reads it (Gather: an embedding's weight or an activation)
  };
  std::string_view type;
  // Maps a node of this type onto hwprof's layers, given the hwprof node of its first input
  // (kModelInput where FirstInput::unread); nullptr where map_node settles every node of the
  // type before the table is read, as `settled` says.
  void (*map)(Importer& importer, const onnx::NodeProto& n, int x) = nullptr;
  FirstInput first_input = FirstInput::activation;
  std::string_view settled;
};

class Importer {
 public:
  // One ONNX op's evaluation over constant inputs (onnx_constants.cpp, a function per op).
  struct Evaluation;

  Importer(onnx::ModelProto& model, std::string path, const LoadOptions& options) : model_(model), path_(std::move(path)), options_(options) {}

  Graph run();
  // Each layer's output shape as ONNX's shape inference has it, per sample, by layer name:
  // hwprof's own inference of the mapped graph must agree.
  std::unordered_map<std::string, Shape> expected;
  // Every op type map_node maps, or settles before mapping (Constant, Shape, Size).
  static std::span<const OnnxOpRule> op_rules();

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ImportError{path_ + ": " + message}; }
  // "Conv 'conv1'": the op and the node's name (its first output's where it has none), escaped.
  std::string describe(const onnx::NodeProto& n) const {
    return common::printable_name(n.op_type()) + " '" +
           common::printable_name(n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "'";
  }
  // "node 'conv1' (Conv)", for the messages about one node's attributes.
  static std::string node_label(const onnx::NodeProto& n) {
    const std::string name = n.name().empty()
                                 ? (n.output_size() ? "with output '" + common::printable_name(n.output(0)) + "'" : std::string("without a name"))
                                 : "'" + common::printable_name(n.name()) + "'";
    return "node " + name + " (" + common::printable_name(n.op_type()) + ")";
  }
  void validate_attributes(const onnx::GraphProto& g, int depth);
  // x (sign) y for fold_shape_computations, checked: a result that does not fit in 64 bits
  // (a Mul of a dimension by 2^62, INT64_MIN / -1) is an error naming the node.
  std::int64_t shape_arithmetic(const onnx::NodeProto& n, char sign, std::int64_t x, std::int64_t y) const {
    std::int64_t r = 0;
    bool overflow = false;
    if (sign == '+') overflow = __builtin_add_overflow(x, y, &r);
    if (sign == '-') overflow = __builtin_sub_overflow(x, y, &r);
    if (sign == '*') overflow = __builtin_mul_overflow(x, y, &r);
    if (sign == '/') {
      overflow = y == -1 && x == std::numeric_limits<std::int64_t>::min();
      r = overflow || y == 0 ? 0 : x / y;
    }
    if (overflow) {
      fail(node_label(n) + ": the shape arithmetic " + std::to_string(x) + " " + sign + " " + std::to_string(y) +
           " overflows 64-bit integers; no tensor has such a size");
    }
    return r;
  }

  int opset() const { return opset_; }
  void read_opset();
  void prepare_input();
  void infer();
  void infer_shapes_only();
  void type_every_shape_input();
  void decode_constants();
  void index_values();
  void map_node(const onnx::NodeProto& n);
  // Constants computed in the graph (onnx_constants.cpp).
  std::optional<ConstTensor> const_tensor(const std::string& name) const;
  std::optional<ConstTensor> evaluate(const onnx::NodeProto& n) const;
  bool evaluate_constant(const onnx::NodeProto& n);
  std::unordered_map<std::string, ConstTensor> evaluated_;
  void unsupported(const onnx::NodeProto& n, const std::string& why);

  // Attributes.
  const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) const {
    for (const auto& a : n.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  std::int64_t attr_int(const onnx::NodeProto& n, const char* name, std::int64_t fallback) const {
    const auto* a = attr(n, name);
    return a != nullptr ? a->i() : fallback;
  }
  float attr_float(const onnx::NodeProto& n, const char* name, float fallback) const {
    const auto* a = attr(n, name);
    return a != nullptr ? a->f() : fallback;
  }
  std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const char* name) const {
    const auto* a = attr(n, name);
    if (a == nullptr) return {};
    return {a->ints().begin(), a->ints().end()};
  }
  std::string attr_string(const onnx::NodeProto& n, const char* name, const std::string& fallback) const {
    const auto* a = attr(n, name);
    return a != nullptr ? a->s() : fallback;
  }

  // Values.
  const Dims& dims_of(const std::string& name) const {
    static const Dims kUnknown;
    auto it = dims_.find(name);
    return it == dims_.end() ? kUnknown : it->second;
  }
  Value::Kind kind_of(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? Value::Kind::shape_only : it->second.kind;
  }
  bool is_activation(const std::string& name) const { return !name.empty() && kind_of(name) == Value::Kind::activation; }
  const onnx::TensorProto* constant(const std::string& name) const {
    auto it = values_.find(name);
    return it != values_.end() && it->second.kind == Value::Kind::constant ? it->second.tensor : nullptr;
  }
  // The per-sample shape of an activation, checked: known, and its first axis the batch.
  std::optional<Shape> per_sample(const std::string& name) const {
    const Dims& d = dims_of(name);
    if (d.empty() || d[0] != batch_) return std::nullopt;
    for (std::int64_t x : d) {
      if (x < 0) return std::nullopt;
    }
    return Shape(d.begin() + 1, d.end());
  }

  // As per_sample, and also of an activation that folds the batch into its first axis:
  // [batch·f, ...] (a window partition's Reshape to [batch·windows, ...]) is per sample
  // [f, ...], the same memory, and `*folded` is set. Where the batch is the probe (a prime
  // no layer has) such a first axis cannot be anything else; with a batch of 1 every layout
  // is per sample. Mappings that translate ONNX axes to per-sample ones take the fold into
  // account (fold_of): an ONNX axis k >= 1 is per-sample axis k - 1 + fold.
  std::optional<Shape> sample_shape(const std::string& name, bool* folded = nullptr) const {
    if (folded != nullptr) *folded = false;
    if (auto s = per_sample(name)) return s;
    const Dims& d = dims_of(name);
    if (d.empty() || !folds_batch(d[0]) || std::any_of(d.begin(), d.end(), [](std::int64_t x) { return x < 0; })) return std::nullopt;
    if (folded != nullptr) *folded = true;
    Shape s{d[0] / batch_};
    s.insert(s.end(), d.begin() + 1, d.end());
    return s;
  }
  bool folds_batch(std::int64_t first) const {
    return (batch_ == kProbeBatch && first > batch_ && first % batch_ == 0) || (batch_ == 1 && first > 1);
  }
  std::int64_t fold_of(const std::string& name) const {
    bool folded = false;
    return sample_shape(name, &folded) && folded ? 1 : 0;
  }
  std::vector<float> floats(const onnx::TensorProto& t) const;
  std::vector<std::int64_t> integers(const onnx::TensorProto& t) const;
  std::string raw_bytes(const onnx::TensorProto& t) const;
  std::string external_file(const onnx::TensorProto& t) const;
  void check_external_data() const;
  InitialValue initial(const std::string& param, const std::string& value_name, Shape shape, std::vector<float> data) const {
    return InitialValue{param, std::move(shape), std::make_shared<const std::vector<float> >(std::move(data)),
                        "initializer '" + common::printable_name(value_name) + "'"};
  }

  std::string layer_name(const onnx::NodeProto& n);
  int add_node(const onnx::NodeProto& n, OpKind op, std::vector<int> inputs, Attributes attrs = {});
  void map_activation_product(const onnx::NodeProto& n, const Shape& a);
  void set_output(const onnx::NodeProto& n, int node) {
    if (n.output_size() > 0) values_[n.output(0)] = Value{Value::Kind::activation, node, nullptr};
  }
  void alias(const onnx::NodeProto& n, const std::string& from) {
    if (n.output_size() > 0) values_[n.output(0)] = values_.at(from);
  }

  void map_conv(const onnx::NodeProto& n);
  void map_gemm(const onnx::NodeProto& n);
  void map_conv_transpose(const onnx::NodeProto& n);
  void map_matmul(const onnx::NodeProto& n);
  void map_batchnorm(const onnx::NodeProto& n);
  void map_pool(const onnx::NodeProto& n, ops::PoolReduction reduction);
  void map_add(const onnx::NodeProto& n);
  void map_binary(const onnx::NodeProto& n, OpKind op);
  void map_operand(const onnx::NodeProto& n, OpKind op);
  bool map_relative_position_bias(const onnx::NodeProto& n, const std::string& act, const onnx::TensorProto& c);
  const onnx::TensorProto* position_lookup(const std::string& value, const std::string& act) const;
  void add_linear(const onnx::NodeProto& n, Attributes a, std::int64_t k, const std::string& weight_name, std::vector<float> weight);
  // Embeddings and linears whose weight another linear may share (add_linear).
  void own_weight(int node) { weight_owners_.push_back(node); }
  std::vector<int> weight_owners_;
  void add_conv(const onnx::NodeProto& n, const ops::ConvolutionDefinition& conv, Attributes a, const onnx::TensorProto& w,
                const onnx::TensorProto* b);
  // The convolution that first read each weight initializer (by name), and its bias
  // initializer's name ("" for none): a later one that reads both again shares its parameters
  // (an unrolled loop's).
  struct ConvOwner {
    int node;
    std::string bias;
  };
  std::unordered_map<std::string, ConvOwner> conv_weight_owners_;
  void map_clip(const onnx::NodeProto& n);
  void map_reshape_like(const onnx::NodeProto& n);
  void map_transpose(const onnx::NodeProto& n);
  void map_reduce(const onnx::NodeProto& n, ReduceMode mode);
  void map_global_mean(const onnx::NodeProto& n, const ops::PoolingDefinition& pool);
  void map_axis_op(const onnx::NodeProto& n, OpKind op);
  void map_pad(const onnx::NodeProto& n);
  void map_global_avgpool(const onnx::NodeProto& n, int x);
  void map_resize(const onnx::NodeProto& n);
  std::optional<std::string> resize_output(const onnx::NodeProto& n, const Shape& in, Attributes& a) const;
  void map_unary(const onnx::NodeProto& n, int x);
  void map_flatten(const onnx::NodeProto& n, int x);
  void map_concat(const onnx::NodeProto& n);
  void map_dropout(const onnx::NodeProto& n, int x);
  // The integer values of a constant, or of shape arithmetic fold_shape_computations evaluated
  // (a Slice's starts, computed from a shape by the exporter); nullopt when neither knows them.
  std::optional<std::vector<std::int64_t> > int_values(const std::string& name) const {
    if (name.empty()) return std::nullopt;
    if (const onnx::TensorProto* t = constant(name)) {
      if (t->data_type() != onnx::TensorProto_DataType_INT64 && t->data_type() != onnx::TensorProto_DataType_INT32) return std::nullopt;
      return integers(*t);
    }
    auto it = folded_.find(name);
    if (it == folded_.end()) return std::nullopt;
    return it->second;
  }
  std::unordered_map<std::string, std::vector<std::int64_t> > folded_;  // fold_shape_computations' values
  void map_slice(const onnx::NodeProto& n);
  std::set<std::string> empty_values_;  // empty slices of activations (map_slice): read by a Concat only
  void map_split(const onnx::NodeProto& n);
  void map_pad_layer(const onnx::NodeProto& n, const std::vector<std::int64_t>& pads);
  void map_gather_activation(const onnx::NodeProto& n);
  void map_expand(const onnx::NodeProto& n);
  void map_tile(const onnx::NodeProto& n);
  void map_where(const onnx::NodeProto& n);
  // A Transpose that moves the batch axis, read only by Gathers that put it first again
  // (attention's qkv.permute(2, 0, 3, 1, 4) then qkv[0], qkv[1], qkv[2]): not a layer itself;
  // each Gather is a select of its source and a transpose (onnx_data_movement.cpp).
  struct MovedBatch {
    std::string source;
    std::vector<std::int64_t> perm;
  };
  std::unordered_map<std::string, MovedBatch> moved_;
  bool moves_batch_for_gathers(const onnx::NodeProto& n, const std::vector<std::int64_t>& perm);
  void map_moved_gather(const onnx::NodeProto& n, const MovedBatch& m);
  // Recurrent layers (onnx_recurrent.cpp). A float tensor computed from constants alone:
  struct FloatConstant {
    Dims dims;
    std::vector<float> values;
  };
  std::optional<FloatConstant> float_constant(const std::string& value, int depth) const;
  bool all_zeros(const std::string& value, int depth) const;
  // An ONNX value in a recurrent node's sequence-first layout whose data is a batch-first hwprof
  // node's output (onnx_recurrent.cpp says which nodes make and read them).
  struct SequenceView {
    enum class Kind {
      sequence,      // [T, N, C]: node's [N, T, C]
      outputs,       // Y [T, D, N, H] of the lstm/gru node
      outputs_tndh,  // Y transposed to [T, N, D, H] (a bidirectional layer's, before its Reshape)
      states,        // Y_h [D, N, H], or several layers' concatenated: `states`, per index
      cells,         // LSTM's Y_c: not mapped
    };
    Kind kind = Kind::sequence;
    int node = kModelInput;
    std::int64_t directions = 1;
    std::int64_t hidden = 0;
    // states: per index of axis 0, the layer and direction whose final state it is.
    struct FinalState {
      int node = 0;
      int direction = 0;
      std::int64_t hidden = 0;
      bool bidirectional = false;
    };
    std::vector<FinalState> states;
  };
  std::unordered_map<std::string, SequenceView> sequence_views_;
  std::set<int> state_slices_;  // slice layers of initial states (map_sequence_slice), not yet named after their layer
  bool reads_sequence_view(const onnx::NodeProto& n) const;
  void map_sequence_view(const onnx::NodeProto& n);
  void map_recurrent(const onnx::NodeProto& n, const ops::RecurrentDefinition& def);
  void map_final_state(const onnx::NodeProto& n, const SequenceView& v);
  std::optional<std::string> initial_states(const onnx::NodeProto& n, const ops::RecurrentDefinition& def, std::int64_t dirs, std::int64_t hidden,
                                            std::vector<int>& inputs);
  void map_sequence_slice(const onnx::NodeProto& n, const SequenceView& v);
  void name_state_slices(const Node& layer);
  void name_stacked_layer(const onnx::NodeProto& n, Node& node);
  static const OnnxOpRule* op_rule(const std::string& type);
  // A layer that is a bare parameter in the exporter's module (ViT's class_token, pos_embedding)
  // is named after it: the last layer added takes the parameter's name where that is free.
  void name_after_parameter(const std::string& raw_parameter) {
    const std::string parameter = common::printable_name(raw_parameter);
    Node& node = graph_.nodes.back();
    if (parameter.empty() || parameter.rfind("onnx::", 0) == 0 || names_taken_.count(parameter) != 0) return;
    names_taken_.erase(node.name);
    const auto it = expected.find(node.name);
    if (it != expected.end()) {
      expected[parameter] = it->second;
      expected.erase(node.name);
    }
    node.name = parameter;
    names_taken_[parameter] = 1;
  }
  // The padding a Pad folded into this value's reader adds to each spatial axis; zeros when none.
  Dims take_pad(const std::string& value, std::size_t axes) const {
    auto it = pads_.find(value);
    return it == pads_.end() ? Dims(axes, 0) : it->second;
  }
  // The symmetric padding of each spatial axis of a Conv or pool window (2 or 3 axes, ONNX's
  // order: [d,] h, w), from pads or auto_pad; nullopt with the reason when it is not symmetric.
  std::optional<Dims> symmetric_pads(const onnx::NodeProto& n, const Shape& in, const Dims& kernel, const Dims& stride, const Dims& dilation,
                                     std::string* why);
  // A Conv's or pool's per-axis attribute (strides, dilations): one value per spatial axis, or
  // one for all of them; absent, `fallback` for each. nullopt for any other count.
  std::optional<Dims> spatial_attr(const onnx::NodeProto& n, const char* name, std::size_t axes, std::int64_t fallback) const;

  onnx::ModelProto& model_;
  std::string path_;
  LoadOptions options_;
  std::set<std::string> float_values_;  // values ONNX's inference types as float32
  std::set<std::string> initializers_;  // the graph's initializer names
  std::filesystem::path dir_;
  Graph graph_;
  int opset_ = 0;
  std::string input_name_;
  std::int64_t batch_ = 0;
  std::unordered_map<std::string, Dims> dims_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> names_taken_;
  std::set<std::string> containers_;            // module paths that have child modules
  std::unordered_map<std::string, Dims> pads_;  // values padded by a Pad that a Conv or AveragePool folds in: per spatial axis

  // Patterns of several ONNX nodes that are one hwprof layer (attention, GELU, SiLU): found
  // before the mapping starts; each becomes one node where its last ONNX node was, and the
  // others are absorbed (skipped).
  struct Fusion {
    OpKind op = OpKind::relu;
    Attributes attrs;
    std::string input;  // the ONNX value it reads
    std::string what;   // for messages: "attention (nn.MultiheadAttention pattern)"
    std::string name;   // the layer's name (module path)
    std::vector<InitialValue> initial;
  };
  // A projection x·W (+ b) as an exporter writes nn.Linear: MatMul(x, W) [+ Add b], or Gemm.
  struct Projection {
    std::string x;
    const onnx::TensorProto* weight = nullptr;  // [in, out] (MatMul, Gemm transB=0) or [out, in] (Gemm transB=1)
    bool out_major = false;                     // weight is [out, in]
    const onnx::TensorProto* bias = nullptr;
    std::vector<int> nodes;
  };
  bool fold_shape_computations();
  void find_patterns();
  void note_folded_batchnorm();
  void find_attention(int softmax);
  // A Softmax being matched as attention, stage by stage (find_attention).
  struct TracedProjection {
    Projection proj;
    std::int64_t begin = 0, end = -1;  // the slice of the projection's outputs (-2: start unknown)
  };
  struct AttentionMatch {
    std::vector<int> nodes;  // every ONNX node the layer absorbs
    double scale = 1.0;
    bool causal = false;
    int m1 = -1, m2 = -1;  // Q·Kᵀ and A·V
    TracedProjection q, k, v;
    std::int64_t d = 0, head = 0;  // model and head widths
    std::vector<float> in_w, in_b;
    int with_bias = 0;
    std::optional<Projection> out_proj;
    std::string input, value;  // the layer's [batch, T, D] input and output
  };
  // Each stage: nullopt when it matched; an empty string when the Softmax is not attention at
  // all (nothing to say); else why it looks like attention and cannot be mapped.
  using Mismatch = std::optional<std::string>;
  Mismatch match_scores(int softmax, AttentionMatch& a) const;
  Mismatch match_values(int softmax, AttentionMatch& a) const;
  bool trace_projection(std::string value, AttentionMatch& a, TracedProjection* out) const;
  Mismatch match_projections(int softmax, AttentionMatch& a) const;
  Mismatch match_out_projection(int softmax, AttentionMatch& a) const;
  Mismatch match_enclosure(int softmax, AttentionMatch& a) const;
  std::optional<std::string> causal_condition(std::string value, std::int64_t t) const;
  void find_activation_patterns(int index);
  void find_decomposed_layernorm(int index);
  std::optional<Projection> projection_at(const std::string& value) const;
  std::optional<double> scalar(const std::string& name) const;
  int only_consumer(const std::string& value) const;  // the one non-Shape consumer, or -1
  int use_count(const std::string& value) const;
  bool is_graph_output(const std::string& value) const;
  const onnx::NodeProto& onnx_node(int i) const { return model_.graph().node(i); }
  void map_fusion(int index, const Fusion& f);
  void map_gather(const onnx::NodeProto& n);
  void map_layernorm(const onnx::NodeProto& n);
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, std::vector<int> > consumers_;
  std::vector<char> absorbed_;
  std::unordered_map<int, Fusion> fusions_;
  std::vector<std::string> pattern_problems_;
  std::deque<onnx::TensorProto> made_tensors_;  // Constant nodes' values given as value_float etc.
  std::vector<std::string> unsupported_;
};

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
