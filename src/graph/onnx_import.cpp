// ONNX import: an .onnx ModelProto read with Debian's libonnx (its protobuf types, checker and
// shape inference), mapped onto hwprof's Graph, one node per layer, named after the exporter's
// module path, with the initializers as the layers' initial values.
//
// The batch: hwprof's shapes are per sample. The graph input's first dimension is the batch.
// When the file leaves it symbolic ("batch_size") it is set to kProbeBatch, a prime no layer
// is likely to have, before ONNX's shape inference runs; then a value whose first dimension is
// not the batch (a Reshape that folds the batch into another axis) is recognisable and refused
// rather than silently mapped onto per-sample shapes.
//
// Op semantics follow the ONNX operator specification (https://onnx.ai/onnx/operators/, opsets
// 11 to 17); PyTorch's node naming ("/layer1/layer1.0/conv1/Conv", torch >= 1.13) is what the
// module paths are read from.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/input_file.hpp"
#include "common/printable.hpp"
#include "graph/onnx_attributes.hpp"
#include "graph/shape_inference.hpp"
#include "hwprof/graph.hpp"

#if HWPROF_HAVE_ONNX
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#endif

namespace hwprof {

#if !HWPROF_HAVE_ONNX

bool onnx_supported() noexcept {
  return false;
}

Result<Graph> import_onnx(std::string_view, const std::string& path, const LoadOptions&) {
  return Error{path +
               ": this hwprof was built without ONNX support; install libonnx-dev (scripts/install-deps.sh) and build "
               "again, or describe the model as a JSON spec (docs/ in the repository)"};
}

#else

bool onnx_supported() noexcept {
  return true;
}

namespace {

constexpr std::int64_t kProbeBatch = 9973;
// The op types map_node maps on their own (an Erf maps only inside a GELU pattern), and those
// that only read shapes.
const std::set<std::string> kMappedOps = {"Conv",
                                          "Gemm",
                                          "MatMul",
                                          "BatchNormalization",
                                          "LayerNormalization",
                                          "Relu",
                                          "Sigmoid",
                                          "Tanh",
                                          "Clip",
                                          "MaxPool",
                                          "AveragePool",
                                          "GlobalAveragePool",
                                          "Add",
                                          "Softmax",
                                          "Flatten",
                                          "Reshape",
                                          "Squeeze",
                                          "Unsqueeze",
                                          "Transpose",
                                          "Concat",
                                          "Identity",
                                          "Dropout",
                                          "Pad",
                                          "Gather",
                                          "Expand",
                                          "Shape",
                                          "Size",
                                          "Constant",
                                          "Mul",
                                          "Sub",
                                          "Div",
                                          "HardSwish",
                                          "HardSigmoid",
                                          "ConvTranspose",
                                          "ReduceMean"};
constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;

using Dims = std::vector<std::int64_t>;  // -1: unknown

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

std::string dims_text(const Dims& d) {
  std::string out = "[";
  for (std::size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
  return out + "]";
}

// The element count of `d`; -1 when a dimension is negative (unknown) or the product does not
// fit in 64 bits, so that no comparison with a real count can succeed.
std::int64_t product(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t x : d) {
    if (x < 0 || __builtin_mul_overflow(n, x, &n)) return -1;
  }
  return n;
}

// The scope of a PyTorch node name: "/layer1/layer1.0/conv1/Conv" → {"layer1", "layer1.0",
// "conv1"} (the last segment, the op itself, dropped).
std::vector<std::string> scope_segments(const std::string& node_name) {
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
std::string module_path(const std::vector<std::string>& segments) {
  std::string path, last;
  for (const std::string& s : segments) {
    const std::string rest = !last.empty() && s.rfind(last + ".", 0) == 0 ? s.substr(last.size() + 1) : s;
    path = path.empty() ? rest : path + "." + rest;
    last = s;
  }
  return path;
}

// The shape of every graph input, inferred value and output that has one (-1: an unknown size).
void record_dims(const onnx::GraphProto& g, std::unordered_map<std::string, Dims>& into) {
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
std::vector<float> transposed(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(m.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) t[static_cast<std::size_t>(j * rows + i)] = m[static_cast<std::size_t>(i * cols + j)];
  }
  return t;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Importer {
 public:
  Importer(onnx::ModelProto& model, std::string path, const LoadOptions& options) : model_(model), path_(std::move(path)), options_(options) {}

  Graph run();
  // Each layer's output shape as ONNX's shape inference has it, per sample, by layer name:
  // hwprof's own inference of the mapped graph must agree.
  std::unordered_map<std::string, Shape> expected;

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ImportError{path_ + ": " + message}; }
  // "Conv 'conv1'": the op and the node's name (its first output's where it has none), escaped.
  std::string describe(const onnx::NodeProto& n) const {
    return detail::printable_name(n.op_type()) + " '" +
           detail::printable_name(n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "'";
  }
  // "node 'conv1' (Conv)", for the messages about one node's attributes.
  static std::string node_label(const onnx::NodeProto& n) {
    const std::string name = n.name().empty()
                                 ? (n.output_size() ? "with output '" + detail::printable_name(n.output(0)) + "'" : std::string("without a name"))
                                 : "'" + detail::printable_name(n.name()) + "'";
    return "node " + name + " (" + detail::printable_name(n.op_type()) + ")";
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

  std::vector<float> floats(const onnx::TensorProto& t) const;
  std::vector<std::int64_t> integers(const onnx::TensorProto& t) const;
  std::string raw_bytes(const onnx::TensorProto& t) const;
  std::string external_file(const onnx::TensorProto& t) const;
  void check_external_data() const;
  InitialValue initial(const std::string& param, const std::string& value_name, Shape shape, std::vector<float> data) const {
    return InitialValue{param, std::move(shape), std::make_shared<const std::vector<float> >(std::move(data)),
                        "initializer '" + detail::printable_name(value_name) + "'"};
  }

  std::string layer_name(const onnx::NodeProto& n);
  int add_node(const onnx::NodeProto& n, OpKind op, std::vector<int> inputs, Attributes attrs = {});
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
  void map_pool(const onnx::NodeProto& n, OpKind op);
  void map_add(const onnx::NodeProto& n);
  void map_binary(const onnx::NodeProto& n, OpKind op);
  void map_operand(const onnx::NodeProto& n, OpKind op);
  const onnx::TensorProto* position_lookup(const std::string& value, const std::string& act) const;
  void add_linear(const onnx::NodeProto& n, Attributes a, std::int64_t k, const std::string& weight_name, std::vector<float> weight);
  // Embeddings and linears whose weight another linear may share (add_linear).
  void own_weight(int node) { weight_owners_.push_back(node); }
  std::vector<int> weight_owners_;
  void map_clip(const onnx::NodeProto& n);
  void map_reshape_like(const onnx::NodeProto& n);
  void map_transpose(const onnx::NodeProto& n);
  void map_reduce_mean(const onnx::NodeProto& n);
  void map_axis_op(const onnx::NodeProto& n, OpKind op);
  void map_pad(const onnx::NodeProto& n);
  // A layer that is a bare parameter in the exporter's module (ViT's class_token, pos_embedding)
  // is named after it: the last layer added takes the parameter's name where that is free.
  void name_after_parameter(const std::string& raw_parameter) {
    const std::string parameter = detail::printable_name(raw_parameter);
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
  Pair take_pad(const std::string& value) const {
    auto it = pads_.find(value);
    return it == pads_.end() ? Pair{0, 0} : it->second;
  }
  std::optional<Pair> symmetric_pads(const onnx::NodeProto& n, const Shape& in, Pair kernel, Pair stride, Pair dilation, std::string* why);

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
  std::unordered_map<std::string, Pair> pads_;  // values padded by a Pad that a Conv or AveragePool folds in

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

void Importer::read_opset() {
  for (const auto& op : model_.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = static_cast<int>(op.version());
  }
  if (opset_ == 0) fail("the model imports no version of the default ONNX operator set (ai.onnx)");
  if (opset_ < kMinOpset || opset_ > kMaxOpset) {
    fail("the model uses ONNX opset " + std::to_string(opset_) + "; hwprof reads opsets " + std::to_string(kMinOpset) + " to " +
         std::to_string(kMaxOpset) + " (export again with torch.onnx.export(..., opset_version=17))");
  }
}

void Importer::prepare_input() {
  std::set<std::string> initializers;
  for (const auto& t : model_.graph().initializer()) initializers.insert(t.name());
  std::vector<onnx::ValueInfoProto*> inputs;
  for (auto& in : *model_.mutable_graph()->mutable_input()) {
    if (initializers.count(in.name()) == 0) inputs.push_back(&in);
  }
  if (inputs.empty()) fail("the graph has no input (only initializers)");
  if (inputs.size() > 1) {
    std::string names;
    for (const auto* in : inputs) names += (names.empty() ? "'" : ", '") + in->name() + "'";
    fail("the graph has " + std::to_string(inputs.size()) + " inputs (" + names +
         "); hwprof runs models with one input tensor (export the model with one input)");
  }
  onnx::ValueInfoProto& in = *inputs[0];
  input_name_ = in.name();
  if (!in.type().has_tensor_type()) fail("input '" + detail::printable_name(input_name_) + "' is not a tensor");
  const int elem = in.type().tensor_type().elem_type();
  if (elem == onnx::TensorProto_DataType_FLOAT) {
    graph_.input.dtype = DType::f32;
  } else if (elem == onnx::TensorProto_DataType_INT64 || elem == onnx::TensorProto_DataType_INT32) {
    graph_.input.dtype = DType::i32;
  } else {
    fail("input '" + detail::printable_name(input_name_) + "' has element type " +
         onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem)) +
         "; hwprof reads float32 inputs (images, features) and int64/int32 token ids");
  }
  if (!in.type().tensor_type().has_shape() || in.type().tensor_type().shape().dim_size() < 2) {
    fail("input '" + detail::printable_name(input_name_) + "' needs a shape [batch, ...] of rank 2 or more");
  }
  auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
  auto* d0 = shape->mutable_dim(0);
  if (d0->has_dim_value() && d0->dim_value() > 0) {
    batch_ = d0->dim_value();
  } else {
    d0->set_dim_value(kProbeBatch);
    batch_ = kProbeBatch;
  }
  for (int i = 1; i < shape->dim_size(); ++i) {
    const auto& d = shape->dim(i);
    if (!d.has_dim_value() || d.dim_value() <= 0) {
      fail("input '" + detail::printable_name(input_name_) + "' dimension " + std::to_string(i) + " is " +
           (d.has_dim_param() ? "symbolic ('" + d.dim_param() + "')" : std::string("unknown")) +
           "; hwprof needs every dimension but the batch fixed (export with a fixed example input and without dynamic_axes for it)");
    }
    graph_.input.shape.push_back(d.dim_value());
  }
}

// Every node's attributes, the nodes of subgraphs (an If's branches, a Loop's body) too: ONNX's
// shape inference reads them all.
void Importer::validate_attributes(const onnx::GraphProto& g, int depth) {
  if (depth > kMaxRepeatNesting) fail("subgraphs are nested more than " + std::to_string(kMaxRepeatNesting) + " deep");
  for (const auto& n : g.node()) {
    if (auto problem = detail::onnx_attribute_problem(n, opset_)) fail(node_label(n) + ": " + *problem);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) validate_attributes(a.g(), depth + 1);
      for (const auto& sub : a.graphs()) validate_attributes(sub, depth + 1);
    }
  }
}

void Importer::infer() {
  try {
    onnx::checker::check_model(model_);
  } catch (const std::exception& e) {
    fail(std::string("the ONNX checker refuses the model: ") + e.what());
  }
  infer_shapes_only();
}

// Shape arithmetic that ONNX's data propagation leaves unknown (PyTorch computes ViT's
// n_h = h // p and expand(n, -1, -1) through Div, Cast, ConstantOfShape, Equal and Where):
// evaluated here on int64 values, from the shapes inference knows, and handed back to ONNX's
// inference as initializers of the nodes that take a shape (Reshape, Expand, ...), so that it
// knows their outputs. Each value is small (at most kMaxShapeValue elements); only ops that
// compute shapes are evaluated.
// Long: one branch per ONNX op it evaluates (Shape, Gather, Div, Cast, Concat, Equal, Where,
// ...), each a few lines of int64 arithmetic over the same table of known values.
bool Importer::fold_shape_computations() {
  constexpr std::size_t kMaxShapeValue = 64;
  auto& g = *model_.mutable_graph();
  std::unordered_map<std::string, Dims> dims;  // every value's shape, as inference has it
  record_dims(g, dims);
  struct IntValue {
    Dims shape;
    std::vector<std::int64_t> v;
  };
  std::unordered_map<std::string, IntValue> known;
  auto int_tensor = [&](const onnx::TensorProto& t) -> std::optional<IntValue> {
    if (t.data_type() != onnx::TensorProto_DataType_INT64 && t.data_type() != onnx::TensorProto_DataType_INT32) return std::nullopt;
    IntValue iv{Dims(t.dims().begin(), t.dims().end()), integers(t)};
    if (iv.v.size() > kMaxShapeValue || static_cast<std::int64_t>(iv.v.size()) != product(iv.shape)) return std::nullopt;
    return iv;
  };
  for (const auto& t : g.initializer()) {
    if (auto iv = int_tensor(t)) known[t.name()] = *iv;
  }
  auto get = [&](const onnx::NodeProto& n, int i) -> const IntValue* {
    if (n.input_size() <= i) return nullptr;
    auto it = known.find(n.input(i));
    return it == known.end() ? nullptr : &it->second;
  };
  auto broadcast = [](const IntValue& a, const IntValue& b, auto f) -> std::optional<IntValue> {
    if (a.v.size() == b.v.size()) {
      IntValue out{a.shape.size() >= b.shape.size() ? a.shape : b.shape, {}};
      for (std::size_t i = 0; i < a.v.size(); ++i) out.v.push_back(f(a.v[i], b.v[i]));
      return out;
    }
    if (a.v.size() == 1 || b.v.size() == 1) {
      const IntValue& big = a.v.size() == 1 ? b : a;
      IntValue out{big.shape, {}};
      for (std::size_t i = 0; i < big.v.size(); ++i) out.v.push_back(f(a.v.size() == 1 ? a.v[0] : a.v[i], b.v.size() == 1 ? b.v[0] : b.v[i]));
      return out;
    }
    return std::nullopt;
  };
  bool changed = false;
  std::set<std::string> initializer_names;
  for (const auto& t : g.initializer()) initializer_names.insert(t.name());
  for (int index = 0; index < g.node_size(); ++index) {
    onnx::NodeProto& n = *g.mutable_node(index);
    const std::string& op = n.op_type();
    std::optional<IntValue> out;
    const IntValue* a = get(n, 0);
    const IntValue* b = get(n, 1);
    if (op == "Constant") {
      if (const onnx::TensorProto* t = constant(n.output(0))) out = int_tensor(*t);
    } else if (op == "Shape") {
      auto it = dims.find(n.input(0));
      if (it != dims.end() && std::all_of(it->second.begin(), it->second.end(), [](std::int64_t x) { return x >= 0; })) {
        const auto r = static_cast<std::int64_t>(it->second.size());
        std::int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<std::int64_t>(start, 0, r);
        end = std::clamp<std::int64_t>(end, start, r);
        out = IntValue{{end - start}, Dims(it->second.begin() + start, it->second.begin() + end)};
      }
    } else if (op == "Gather" && a != nullptr && b != nullptr && a->shape.size() == 1 && attr_int(n, "axis", 0) == 0) {
      IntValue r{b->shape, {}};
      for (std::int64_t i : b->v) {
        const std::int64_t k = i < 0 ? i + static_cast<std::int64_t>(a->v.size()) : i;
        if (k < 0 || k >= static_cast<std::int64_t>(a->v.size())) break;
        r.v.push_back(a->v[static_cast<std::size_t>(k)]);
      }
      if (r.v.size() == b->v.size()) out = r;
    } else if ((op == "Unsqueeze" || op == "Squeeze") && a != nullptr && a->shape.size() <= 1) {
      out = IntValue{op == "Unsqueeze" ? Dims{static_cast<std::int64_t>(a->v.size())} : Dims{}, a->v};
      if (op == "Squeeze" && a->v.size() != 1) out.reset();
    } else if (op == "Concat" && attr_int(n, "axis", 0) == 0) {
      IntValue r{{0}, {}};
      bool all = true;
      for (int i = 0; i < n.input_size() && all; ++i) {
        const IntValue* x = get(n, i);
        all = x != nullptr && x->shape.size() == 1;
        if (all) r.v.insert(r.v.end(), x->v.begin(), x->v.end());
      }
      r.shape[0] = static_cast<std::int64_t>(r.v.size());
      if (all && r.v.size() <= kMaxShapeValue) out = r;
    } else if (op == "Reshape" && a != nullptr && b != nullptr && b->shape.size() == 1 && b->v.size() <= 8) {
      Dims shape = b->v;
      std::int64_t fixed = 1, infer_at = -1;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && i < a->shape.size()) shape[i] = a->shape[i];
        if (shape[i] == -1) {
          infer_at = static_cast<std::int64_t>(i);
        } else {
          fixed = shape_arithmetic(n, '*', fixed, std::max<std::int64_t>(shape[i], 0));
        }
      }
      if (infer_at >= 0 && fixed > 0) shape[static_cast<std::size_t>(infer_at)] = static_cast<std::int64_t>(a->v.size()) / fixed;
      if (product(shape) == static_cast<std::int64_t>(a->v.size())) out = IntValue{shape, a->v};
    } else if (op == "Cast" && a != nullptr) {
      const std::int64_t to = attr_int(n, "to", 0);
      if (to == onnx::TensorProto_DataType_INT64 || to == onnx::TensorProto_DataType_INT32 || to == onnx::TensorProto_DataType_FLOAT ||
          to == onnx::TensorProto_DataType_DOUBLE || to == onnx::TensorProto_DataType_BOOL) {
        out = *a;  // integers stay integers through float and back (shape sizes are far below 2^24)
        if (to == onnx::TensorProto_DataType_BOOL) {
          for (auto& x : out->v) x = x != 0;
        }
      }
    } else if ((op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Equal") && a != nullptr && b != nullptr) {
      const char sign = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
      if (op == "Equal") {
        out = broadcast(*a, *b, [](std::int64_t x, std::int64_t y) { return std::int64_t{x == y}; });
      } else if (op != "Div" || std::none_of(b->v.begin(), b->v.end(), [](std::int64_t y) { return y == 0; })) {
        out = broadcast(*a, *b, [&](std::int64_t x, std::int64_t y) { return shape_arithmetic(n, sign, x, y); });
      }
    } else if (op == "Where" && a != nullptr && b != nullptr && get(n, 2) != nullptr) {
      const IntValue* c = get(n, 2);
      if (a->v.size() == b->v.size() && b->v.size() == c->v.size()) {
        IntValue r{b->shape, {}};
        for (std::size_t i = 0; i < a->v.size(); ++i) r.v.push_back(a->v[i] != 0 ? b->v[i] : c->v[i]);
        out = r;
      }
    } else if (op == "ConstantOfShape" && a != nullptr && a->shape.size() == 1) {
      const auto* value = attr(n, "value");
      std::int64_t fill = 0;
      bool integral = value == nullptr;
      if (value != nullptr && value->has_t()) {
        if (auto iv = int_tensor(value->t()); iv && iv->v.size() == 1) {
          fill = iv->v[0];
          integral = true;
        }
      }
      const std::int64_t count = product(a->v);
      if (integral && count >= 0 && count <= static_cast<std::int64_t>(kMaxShapeValue))
        out = IntValue{a->v, std::vector<std::int64_t>(static_cast<std::size_t>(count), fill)};
    }
    if (out && n.output_size() == 1) known[n.output(0)] = *out;
  }
  // Hand the values to the nodes that take a shape and whose output inference does not know.
  for (int index = 0; index < g.node_size(); ++index) {
    onnx::NodeProto& n = *g.mutable_node(index);
    const std::string& op = n.op_type();
    std::vector<int> shape_inputs;
    if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Unsqueeze" || op == "Squeeze" || op == "Pad") shape_inputs = {1};
    if (op == "ConstantOfShape") shape_inputs = {0};
    if (op == "Slice") shape_inputs = {1, 2, 3, 4};
    if (shape_inputs.empty() || n.output_size() < 1) continue;
    auto out = dims.find(n.output(0));
    // (An empty shape here is an unknown one: these ops' outputs are never scalars in a model hwprof reads.)
    const bool unknown =
        out == dims.end() || out->second.empty() || std::any_of(out->second.begin(), out->second.end(), [](std::int64_t x) { return x < 0; });
    if (!unknown) continue;
    for (int shape_input : shape_inputs) {
      if (n.input_size() <= shape_input || n.input(shape_input).empty()) continue;
      auto value = known.find(n.input(shape_input));
      if (value == known.end()) continue;
      if (initializer_names.count(n.input(shape_input)) != 0) continue;
      auto* t = g.add_initializer();
      // One name per (node, input): rounds never hand the same input over twice.
      t->set_name("hwprof::shape::" + std::to_string(index) + "." + std::to_string(shape_input));
      t->set_data_type(onnx::TensorProto_DataType_INT64);
      for (std::int64_t d : value->second.shape) t->add_dims(d);
      for (std::int64_t v : value->second.v) t->add_int64_data(v);
      n.set_input(shape_input, t->name());
      changed = true;
    }
  }
  return changed;
}

void Importer::infer_shapes_only() {
  // Entries inference could not complete stay as they are in a second run: drop them first.
  auto* infos = model_.mutable_graph()->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    const auto& t = infos->Get(i).type();
    bool complete = t.has_tensor_type() && t.tensor_type().has_shape();
    if (complete) {
      for (const auto& dim : t.tensor_type().shape().dim()) complete &= dim.has_dim_value();
    }
    if (!complete) infos->DeleteSubrange(i, 1);
  }
  // Twice: types and shapes first, without data propagation, then with it. ONNX 1.12's data
  // propagator of Shape (opset 15 on) reads its input's type without checking that there is
  // one, and a value has none where the node making it failed in that same run (a Reshape to a
  // propagated shape of -5) or has no schema: the first run gives every value the type it can,
  // and a value still without one gets an empty tensor type, so that the second run never
  // meets a Shape of an untyped value.
  for (const bool propagate : {false, true}) {
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1, /*enable_data_propagation=*/propagate);
      onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      fail(std::string("ONNX shape inference failed: ") + e.what());
    }
    if (!propagate) type_every_shape_input();
  }
}

void Importer::type_every_shape_input() {
  auto& g = *model_.mutable_graph();
  std::set<std::string> typed;
  for (const auto& v : g.input()) typed.insert(v.name());
  for (const auto& v : g.value_info()) typed.insert(v.name());
  for (const auto& v : g.output()) typed.insert(v.name());
  for (const auto& t : g.initializer()) typed.insert(t.name());
  for (const auto& n : g.node()) {
    if (n.op_type() != "Shape" || n.input_size() < 1 || typed.count(n.input(0)) != 0) continue;
    auto* info = g.add_value_info();
    info->set_name(n.input(0));
    info->mutable_type()->mutable_tensor_type();
    typed.insert(n.input(0));
  }
}

// Constant nodes' values, as tensors, registered like initializers (value_float, value_ints,
// ... made into TensorProtos): every later step reads a constant through constant().
void Importer::decode_constants() {
  for (const auto& n : model_.graph().node()) {
    if (n.op_type() != "Constant" || n.output_size() != 1) continue;
    const auto* value = attr(n, "value");
    if (value != nullptr && value->has_t()) {
      values_[n.output(0)] = Value{Value::Kind::constant, kModelInput, &value->t()};
      continue;
    }
    onnx::TensorProto t;
    t.set_name(n.output(0));
    if (const auto* f = attr(n, "value_float")) {
      t.set_data_type(onnx::TensorProto_DataType_FLOAT);
      t.add_float_data(f->f());
    } else if (const auto* i = attr(n, "value_int")) {
      t.set_data_type(onnx::TensorProto_DataType_INT64);
      t.add_int64_data(i->i());
    } else if (const auto* is = attr(n, "value_ints")) {
      t.set_data_type(onnx::TensorProto_DataType_INT64);
      t.add_dims(is->ints_size());
      for (auto v : is->ints()) t.add_int64_data(v);
    } else if (const auto* fs = attr(n, "value_floats")) {
      t.set_data_type(onnx::TensorProto_DataType_FLOAT);
      t.add_dims(fs->floats_size());
      for (auto v : fs->floats()) t.add_float_data(v);
    } else {
      values_[n.output(0)] = Value{Value::Kind::shape_only, kModelInput, nullptr};
      continue;
    }
    made_tensors_.push_back(std::move(t));
    values_[n.output(0)] = Value{Value::Kind::constant, kModelInput, &made_tensors_.back()};
  }
}

void Importer::index_values() {
  const auto& g = model_.graph();
  record_dims(g, dims_);
  auto record_type = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == onnx::TensorProto_DataType_FLOAT) float_values_.insert(v.name());
  };
  for (const auto& v : g.value_info()) record_type(v);
  for (const auto& v : g.output()) record_type(v);
  for (const auto& t : g.initializer()) {
    initializers_.insert(t.name());
    values_[t.name()] = Value{Value::Kind::constant, kModelInput, &t};
    dims_[t.name()] = Dims(t.dims().begin(), t.dims().end());
  }
  values_[input_name_] = Value{Value::Kind::activation, kModelInput, nullptr};
  // PyTorch's exporter writes initializers of equal values once and the others as Identity of
  // it (an untrained model's BatchNorm γ, β and running statistics): those are the same constant.
  for (const auto& n : g.node()) {
    if (n.op_type() == "Identity" && n.input_size() == 1 && n.output_size() == 1 && constant(n.input(0)) != nullptr) {
      values_[n.output(0)] = values_.at(n.input(0));
    }
  }
  for (const auto& n : g.node()) {
    std::vector<std::string> segments = scope_segments(n.name());
    while (!segments.empty()) {
      segments.pop_back();
      if (!segments.empty()) containers_.insert(module_path(segments));
    }
  }
  absorbed_.assign(static_cast<std::size_t>(g.node_size()), 0);
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& out : g.node(i).output()) producer_[out] = i;
    for (const std::string& in : g.node(i).input()) consumers_[in].push_back(i);
  }
}

// How many inputs read `value`, the graph's output counting as one.
int Importer::use_count(const std::string& value) const {
  auto it = consumers_.find(value);
  const int readers = it == consumers_.end() ? 0 : static_cast<int>(it->second.size());
  return readers + (is_graph_output(value) ? 1 : 0);
}

bool Importer::is_graph_output(const std::string& value) const {
  const auto& outs = model_.graph().output();
  return std::any_of(outs.begin(), outs.end(), [&](const auto& o) { return o.name() == value; });
}

// The file an initializer's external data is in: a relative path that stays inside the model's
// folder (checked before ONNX's checker, which would open any path it is given).
std::string Importer::external_file(const onnx::TensorProto& t) const {
  std::string location;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
  }
  namespace fs = std::filesystem;
  const fs::path rel(location);
  if (location.empty() || rel.is_absolute()) {
    fail("initializer '" + detail::printable_name(t.name()) + "': external data location '" + location +
         "' must be a path relative to the model's folder");
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir_, ec);
  const fs::path file = fs::weakly_canonical(dir_ / rel, ec);
  const auto [end, _] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (ec || end != base.end()) {
    fail("initializer '" + detail::printable_name(t.name()) + "': external data location '" + location + "' is outside the model's folder " +
         base.string() + "; refused");
  }
  return file.string();
}

void Importer::check_external_data() const {
  for (const auto& t : model_.graph().initializer()) {
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) external_file(t);
  }
}

std::string Importer::raw_bytes(const onnx::TensorProto& t) const {
  if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return t.raw_data();
  std::int64_t offset = 0;
  std::int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      fail("initializer '" + detail::printable_name(t.name()) + "': external data '" + kv.key() + "' is not a number: '" + kv.value() + "'");
    }
  }
  const std::filesystem::path file = external_file(t);
  auto text = detail::read_input_file(file.string(), "ONNX external data", static_cast<std::size_t>(kMaxOnnxBytes));
  if (!text) fail("initializer '" + detail::printable_name(t.name()) + "': " + text.error().message);
  if (offset < 0 || offset > static_cast<std::int64_t>(text->size())) {
    fail("initializer '" + detail::printable_name(t.name()) + "': external data offset " + std::to_string(offset) + " is past the end of " +
         file.string());
  }
  if (length < 0) length = static_cast<std::int64_t>(text->size()) - offset;
  if (length > static_cast<std::int64_t>(text->size()) - offset) {
    fail("initializer '" + detail::printable_name(t.name()) + "': external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
         ") runs past the end of " + file.string() + " (" + std::to_string(text->size()) + " bytes)");
  }
  return text->substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

std::vector<float> Importer::floats(const onnx::TensorProto& t) const {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > (std::int64_t{1} << 40) / d)) fail("initializer '" + detail::printable_name(t.name()) + "' has an impossible shape");
    n *= d;
  }
  std::vector<float> out;
  if (t.data_type() == onnx::TensorProto_DataType_FLOAT) {
    if (t.float_data_size() > 0) {
      out.assign(t.float_data().begin(), t.float_data().end());
    } else {
      const std::string raw = raw_bytes(t);
      if (static_cast<std::int64_t>(raw.size()) != n * 4) {
        fail("initializer '" + detail::printable_name(t.name()) + "' holds " + std::to_string(raw.size()) + " bytes; its shape " +
             dims_text(Dims(t.dims().begin(), t.dims().end())) + " needs " + std::to_string(n * 4));
      }
      out.resize(static_cast<std::size_t>(n));
      std::memcpy(out.data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as is x86-64
    }
  } else if (t.data_type() == onnx::TensorProto_DataType_DOUBLE) {
    if (t.double_data_size() > 0) {
      for (double v : t.double_data()) out.push_back(static_cast<float>(v));
    } else {
      const std::string raw = raw_bytes(t);
      if (static_cast<std::int64_t>(raw.size()) != n * 8)
        fail("initializer '" + detail::printable_name(t.name()) + "' has the wrong number of bytes");
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out.push_back(static_cast<float>(v));
      }
    }
  } else {
    fail("initializer '" + detail::printable_name(t.name()) + "' has element type " +
         onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())) + "; hwprof's engine reads float32 weights");
  }
  if (static_cast<std::int64_t>(out.size()) != n) {
    fail("initializer '" + detail::printable_name(t.name()) + "' holds " + std::to_string(out.size()) + " values; its shape needs " +
         std::to_string(n));
  }
  return out;
}

std::vector<std::int64_t> Importer::integers(const onnx::TensorProto& t) const {
  std::vector<std::int64_t> out;
  if (t.data_type() == onnx::TensorProto_DataType_INT64) {
    if (t.int64_data_size() > 0) return {t.int64_data().begin(), t.int64_data().end()};
    const std::string raw = raw_bytes(t);
    if (raw.size() % 8 != 0 || raw.size() > (std::size_t{1} << 20))
      fail("tensor '" + t.name() + "' holds " + std::to_string(raw.size()) + " bytes of int64");
    out.resize(raw.size() / 8);
    std::memcpy(out.data(), raw.data(), raw.size());
  } else if (t.data_type() == onnx::TensorProto_DataType_INT32) {
    if (t.int32_data_size() > 0) return {t.int32_data().begin(), t.int32_data().end()};
    const std::string raw = raw_bytes(t);
    if (raw.size() % 4 != 0 || raw.size() > (std::size_t{1} << 20))
      fail("tensor '" + t.name() + "' holds " + std::to_string(raw.size()) + " bytes of int32");
    for (std::size_t i = 0; i < raw.size(); i += 4) {
      std::int32_t v = 0;
      std::memcpy(&v, raw.data() + i, 4);
      out.push_back(v);
    }
  } else {
    fail("tensor '" + t.name() + "' should hold integers; it has element type " +
         onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())));
  }
  return out;
}

std::string Importer::layer_name(const onnx::NodeProto& n) {
  // A leaf module's node is named after the module ("layer1.0.conv1"); an op that a
  // container's forward() calls (ResNet's residual Add in "/layer1/layer1.0/Add") after the
  // container and the op ("layer1.0.add"), and so is a top-level op ("/Flatten": "flatten").
  const std::vector<std::string> segments = scope_segments(n.name());
  std::string base = module_path(segments);
  const std::string& full = n.name();
  const std::size_t slash = full.rfind('/');
  const std::string op = lower(full.empty() ? n.op_type() : slash == std::string::npos ? full : full.substr(slash + 1));
  if (base.empty()) {
    base = op.empty() ? lower(n.op_type()) : op;
  } else if (containers_.count(base) != 0) {
    base += "." + (op.empty() ? lower(n.op_type()) : op);
  }
  // Escaped: a control character in a node's name reaches no terminal or report (and a NUL
  // does not cut the name short into another layer's).
  base = detail::printable_name(base);
  std::string name = base;
  for (int k = 1; names_taken_.count(name) != 0; ++k) {
    name = base + "." + detail::printable_name(lower(n.op_type())) + (k > 1 ? "_" + std::to_string(k) : "");
  }
  names_taken_[name] = 1;
  return name;
}

int Importer::add_node(const onnx::NodeProto& n, OpKind op, std::vector<int> inputs, Attributes attrs) {
  Node node;
  node.name = layer_name(n);
  node.op = op;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.spec_pointer = describe(n);
  if (n.output_size() > 0) {
    if (const auto out = per_sample(n.output(0))) expected[node.name] = *out;
  }
  graph_.nodes.push_back(std::move(node));
  const int index = static_cast<int>(graph_.nodes.size()) - 1;
  set_output(n, index);
  return index;
}

// A node hwprof cannot map: listed, and kept as an OpKind::unsupported layer where the import
// keeps them (summary counts around it): where it reads an activation and ONNX's inference
// knows its float32 output's shape. Else its outputs are unmapped, and what reads them is not
// counted either.
void Importer::unsupported(const onnx::NodeProto& n, const std::string& why) {
  const std::string source_op = detail::printable_name(n.op_type()) + " (opset " + std::to_string(opset_) + ")";
  unsupported_.push_back(describe(n) + " (opset " + std::to_string(opset_) + "): " + why);
  for (const std::string& out : n.output()) values_[out].kind = Value::Kind::unmapped;
  if (!options_.keep_unsupported || n.output_size() == 0) return;
  std::vector<int> inputs;
  for (const std::string& in : n.input()) {
    if (!is_activation(in)) continue;
    const int node = values_.at(in).node;
    if (std::find(inputs.begin(), inputs.end(), node) == inputs.end()) inputs.push_back(node);
  }
  const auto shape = per_sample(n.output(0));
  if (inputs.empty() || !shape || float_values_.count(n.output(0)) == 0) return;
  Attributes a;
  a.shape = *shape;
  a.source_op = source_op;
  a.reason = why;
  add_node(n, OpKind::unsupported, std::move(inputs), std::move(a));
}

std::optional<Pair> Importer::symmetric_pads(const onnx::NodeProto& n, const Shape& in, Pair kernel, Pair stride, Pair dilation, std::string* why) {
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    Pair pad;
    const std::int64_t sizes[2] = {in[1], in[2]};
    const std::int64_t k[2] = {kernel.h, kernel.w}, s[2] = {stride.h, stride.w}, d[2] = {dilation.h, dilation.w};
    std::int64_t total[2];
    for (int i = 0; i < 2; ++i) {
      const std::int64_t out = (sizes[i] + s[i] - 1) / s[i];
      total[i] = std::max<std::int64_t>(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - sizes[i]);
      if (total[i] % 2 != 0) {
        *why = "auto_pad " + auto_pad + " needs uneven padding here (hwprof's conv and pools pad both sides alike)";
        return std::nullopt;
      }
    }
    pad.h = total[0] / 2;
    pad.w = total[1] / 2;
    return pad;
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    *why = "auto_pad '" + auto_pad + "' is not an ONNX value";
    return std::nullopt;
  }
  const std::vector<std::int64_t> pads = attr_ints(n, "pads");
  if (pads.empty() || auto_pad == "VALID") return Pair{0, 0};
  if (pads.size() != 4) {
    *why = "pads has " + std::to_string(pads.size()) + " values; a 2-D window needs 4";
    return std::nullopt;
  }
  if (pads[0] != pads[2] || pads[1] != pads[3]) {
    *why = "uneven padding " + dims_text(pads) + " (hwprof's conv and pools pad both sides alike)";
    return std::nullopt;
  }
  return Pair{pads[0], pads[1]};
}

void Importer::map_conv(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  if (!in || in->size() != 3)
    return unsupported(n, "only 2-D convolutions of [N, C, H, W] inputs are mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  if (w == nullptr) return unsupported(n, "the weight is computed in the graph, not an initializer");
  if (w->dims_size() != 4) return unsupported(n, "the weight has rank " + std::to_string(w->dims_size()) + ", not 4");
  const onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && b == nullptr) return unsupported(n, "the bias is computed in the graph, not an initializer");
  Attributes a;
  a.out_channels = w->dims(0);
  a.kernel = {w->dims(2), w->dims(3)};
  const auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != a.kernel.h || ks[1] != a.kernel.w)) return unsupported(n, "kernel_shape disagrees with the weight");
  const auto strides = attr_ints(n, "strides");
  if (!strides.empty()) a.stride = {strides.at(0), strides.size() > 1 ? strides[1] : strides[0]};
  const auto dil = attr_ints(n, "dilations");
  if (!dil.empty()) a.dilation = {dil.at(0), dil.size() > 1 ? dil[1] : dil[0]};
  a.groups = attr_int(n, "group", 1);
  std::string why;
  const auto pads = symmetric_pads(n, *in, a.kernel, a.stride, a.dilation, &why);
  if (!pads) return unsupported(n, why);
  const Pair extra = take_pad(n.input(0));  // a Pad folded in (map_pad)
  a.padding = {pads->h + extra.h, pads->w + extra.w};
  a.bias = b != nullptr;
  add_node(n, OpKind::conv2d, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  node.initial_values.push_back(initial("weight", w->name(), {w->dims(0), w->dims(1), w->dims(2), w->dims(3)}, floats(*w)));
  if (b != nullptr) node.initial_values.push_back(initial("bias", b->name(), {a.out_channels}, floats(*b)));
}

// ConvTranspose (2-D): weight [C_in, C_out/group, kh, kw] as PyTorch's ConvTranspose2d keeps it.
// Explicit symmetric pads and output_padding are mapped; output_shape and auto_pad SAME_*
// (which choose pads from a requested size) are not.
void Importer::map_conv_transpose(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  if (!in || in->size() != 3)
    return unsupported(n, "only 2-D transposed convolutions of [N, C, H, W] inputs are mapped (input " + dims_text(dims_of(n.input(0))) + ")");
  if (w == nullptr) return unsupported(n, "the weight is computed in the graph, not an initializer");
  if (w->dims_size() != 4) return unsupported(n, "the weight has rank " + std::to_string(w->dims_size()) + ", not 4");
  const onnx::TensorProto* b = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && b == nullptr) return unsupported(n, "the bias is computed in the graph, not an initializer");
  if (attr(n, "output_shape") != nullptr) return unsupported(n, "output_shape is not mapped (give pads and output_padding instead)");
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return unsupported(n, "auto_pad '" + auto_pad + "' is not mapped for ConvTranspose");
  Attributes a;
  a.groups = attr_int(n, "group", 1);
  if (a.groups < 1 || w->dims(0) != (*in)[0]) return unsupported(n, "the weight's first axis does not match the input's channels");
  a.out_channels = w->dims(1) * a.groups;
  a.kernel = {w->dims(2), w->dims(3)};
  const auto ks = attr_ints(n, "kernel_shape");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != a.kernel.h || ks[1] != a.kernel.w)) return unsupported(n, "kernel_shape disagrees with the weight");
  const auto pair_of = [](const std::vector<std::int64_t>& v, Pair fallback) {
    return v.empty() ? fallback : Pair{v.at(0), v.size() > 1 ? v[1] : v[0]};
  };
  a.stride = pair_of(attr_ints(n, "strides"), {1, 1});
  a.dilation = pair_of(attr_ints(n, "dilations"), {1, 1});
  a.output_padding = pair_of(attr_ints(n, "output_padding"), {0, 0});
  const std::vector<std::int64_t> pads = attr_ints(n, "pads");
  if (auto_pad == "NOTSET" && !pads.empty()) {
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
      return unsupported(n, "uneven padding " + dims_text(pads) + " (hwprof pads both sides alike)");
    a.padding = {pads[0], pads[1]};
  }
  a.bias = b != nullptr;
  add_node(n, OpKind::conv_transpose2d, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  node.initial_values.push_back(initial("weight", w->name(), {w->dims(0), w->dims(1), w->dims(2), w->dims(3)}, floats(*w)));
  if (b != nullptr) node.initial_values.push_back(initial("bias", b->name(), {a.out_channels}, floats(*b)));
}

void Importer::map_gemm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->size() != 1)
    return unsupported(n, "Gemm is mapped as a linear layer of [N, K] inputs (input " + dims_text(dims_of(n.input(0))) + ")");
  if (w == nullptr || w->dims_size() != 2) return unsupported(n, "B is not a 2-D initializer");
  if (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1.0f) != 1.0f || attr_float(n, "beta", 1.0f) != 1.0f) {
    return unsupported(n, "transA, alpha or beta differ from a linear layer's (0, 1, 1)");
  }
  const bool trans_b = attr_int(n, "transB", 0) != 0;
  const std::int64_t out = trans_b ? w->dims(0) : w->dims(1);
  const std::int64_t k = trans_b ? w->dims(1) : w->dims(0);
  if (k != (*in)[0]) return unsupported(n, "B's shape does not match the input's " + std::to_string((*in)[0]) + " features");
  const onnx::TensorProto* c = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (n.input_size() > 2 && !n.input(2).empty() && (c == nullptr || product(Dims(c->dims().begin(), c->dims().end())) != out)) {
    return unsupported(n, "C is not a per-output bias initializer");
  }
  std::vector<float> weight = trans_b ? floats(*w) : transposed(floats(*w), k, out);
  Attributes a;
  a.out_features = out;
  a.bias = c != nullptr;
  add_linear(n, a, k, w->name(), std::move(weight));
  if (c != nullptr) graph_.nodes.back().initial_values.push_back(initial("bias", c->name(), {out}, floats(*c)));
}

void Importer::map_matmul(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->empty()) return unsupported(n, "the input's first axis is not the batch");
  if (w == nullptr) return unsupported(n, "a product of two activations is not mapped yet");
  if (w->dims_size() != 2) return unsupported(n, "B is an initializer of rank " + std::to_string(w->dims_size()) + ", not 2");
  const std::int64_t k = w->dims(0), out = w->dims(1);
  if (k != in->back()) return unsupported(n, "B's rows do not match the input's last axis");
  Attributes a;
  a.out_features = out;
  a.bias = false;  // an Add of a bias right after it is folded in (map_add)
  add_linear(n, a, k, w->name(), transposed(floats(*w), k, out));
}

// A linear layer with weight [out, k]. A weight equal to an earlier embedding's or linear's is
// that layer's, shared (GPT-2's lm_head tied to wte: PyTorch's exporter writes the tied weight
// again, transposed, as a folded constant): the layer is tied_to it and its weight is counted
// once. Equality of every value is the test; a constant weight (all zeros) is never taken as
// shared.
void Importer::add_linear(const onnx::NodeProto& n, Attributes a, std::int64_t k, const std::string& weight_name, std::vector<float> weight) {
  const std::int64_t out = a.out_features;
  const bool constant_weight = std::all_of(weight.begin(), weight.end(), [&](float v) { return v == weight.front(); });
  for (int owner : weight_owners_) {
    const Node& o = graph_.nodes[static_cast<std::size_t>(owner)];
    const InitialValue* w = nullptr;
    for (const InitialValue& v : o.initial_values) {
      if (v.name == "weight") w = &v;
    }
    if (constant_weight || w == nullptr || w->shape != Shape{out, k} || *w->data != weight) continue;
    a.tied_to = owner;
    add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
    return;
  }
  add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
  graph_.nodes.back().initial_values.push_back(initial("weight", weight_name, {out, k}, std::move(weight)));
  own_weight(static_cast<int>(graph_.nodes.size()) - 1);
}

void Importer::map_batchnorm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in || in->size() != 3) return unsupported(n, "only BatchNormalization of [N, C, H, W] inputs is mapped (batchnorm2d)");
  if (n.output_size() > 1) return unsupported(n, "a training-mode BatchNormalization (running-statistics outputs) is not mapped");
  const onnx::TensorProto* parts[4] = {};
  for (int i = 0; i < 4; ++i) {
    parts[i] = n.input_size() > i + 1 ? constant(n.input(i + 1)) : nullptr;
    if (parts[i] == nullptr) return unsupported(n, "scale, B, mean and var must be initializers");
  }
  Attributes a;
  a.eps = attr_float(n, "epsilon", 1e-5f);
  for (int i = 0; i < 4; ++i) {
    const Dims dims(parts[i]->dims().begin(), parts[i]->dims().end());
    if (product(dims) != (*in)[0]) {
      fail(node_label(n) + ": input '" + detail::printable_name(parts[i]->name()) + "' has shape " + dims_text(dims) +
           "; it needs one value per channel (" + std::to_string((*in)[0]) + ")");
    }
  }
  add_node(n, OpKind::batchnorm2d, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int i = 0; i < 4; ++i) node.initial_values.push_back(initial(names[i], parts[i]->name(), {(*in)[0]}, floats(*parts[i])));
}

void Importer::map_pool(const onnx::NodeProto& n, OpKind op) {
  const auto in = per_sample(n.input(0));
  if (!in || in->size() != 3) return unsupported(n, "only 2-D pooling of [N, C, H, W] inputs is mapped");
  if (n.output_size() > 1 && !n.output(1).empty()) return unsupported(n, "MaxPool's Indices output is not mapped");
  Attributes a;
  const auto ks = attr_ints(n, "kernel_shape");
  if (ks.size() != 2) return unsupported(n, "kernel_shape must have 2 values");
  a.kernel = {ks[0], ks[1]};
  const auto strides = attr_ints(n, "strides");
  a.stride = strides.size() == 2 ? Pair{strides[0], strides[1]} : Pair{1, 1};  // ONNX's default stride is 1, not the kernel
  const auto dil = attr_ints(n, "dilations");
  if (!dil.empty() && (dil.size() != 2 || dil[0] != 1 || dil[1] != 1)) return unsupported(n, "dilated pooling is not mapped");
  a.ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  std::string why;
  const auto pads = symmetric_pads(n, *in, a.kernel, a.stride, Pair{1, 1}, &why);
  if (!pads) return unsupported(n, why);
  a.padding = *pads;
  if (const Pair extra = take_pad(n.input(0)); extra.h != 0 || extra.w != 0) {
    // Zeros padded explicitly are averaged in: count_include_pad semantics, hwprof's.
    if (op != OpKind::avgpool2d || ((a.padding.h != 0 || a.padding.w != 0) && attr_int(n, "count_include_pad", 0) == 0)) {
      return unsupported(n, "its input is zero-padded by a Pad node, which only a Conv or an AveragePool can take in");
    }
    a.padding = {a.padding.h + extra.h, a.padding.w + extra.w};
    return (void)add_node(n, op, {values_.at(n.input(0)).node}, a);
  }
  if (op == OpKind::avgpool2d && (a.padding.h != 0 || a.padding.w != 0) && attr_int(n, "count_include_pad", 0) == 0) {
    return unsupported(n, "padded average pooling without count_include_pad (hwprof divides by the padded window, as PyTorch's default)");
  }
  if (op == OpKind::maxpool2d && attr_int(n, "storage_order", 0) != 0) return unsupported(n, "storage_order 1 is not mapped");
  add_node(n, op, {values_.at(n.input(0)).node}, a);
}

// The [P, D] table whose rows 0..T-1 `value` gathers, T the activation `act`'s length
// (position ids made by torch.arange(x.shape[1]): Gather(W, Unsqueeze(Range(0, T, 1)))), or null.
const onnx::TensorProto* Importer::position_lookup(const std::string& value, const std::string& act) const {
  const auto shape = per_sample(act);
  auto producer = [&](const std::string& v, const char* op) -> const onnx::NodeProto* {
    auto it = producer_.find(v);
    return it != producer_.end() && onnx_node(it->second).op_type() == op ? &onnx_node(it->second) : nullptr;
  };
  const onnx::NodeProto* gather = producer(value, "Gather");
  if (!shape || shape->size() != 2 || gather == nullptr || attr_int(*gather, "axis", 0) != 0) return nullptr;
  const onnx::TensorProto* table = constant(gather->input(0));
  if (table == nullptr || table->dims_size() != 2 || table->dims(1) != (*shape)[1] || table->dims(0) < (*shape)[0]) return nullptr;
  std::string ids = gather->input(1);
  if (const onnx::NodeProto* u = producer(ids, "Unsqueeze")) ids = u->input(0);
  const onnx::NodeProto* range = producer(ids, "Range");
  if (range == nullptr || range->input_size() != 3 || scalar(range->input(0)) != 0.0 || scalar(range->input(2)) != 1.0) return nullptr;
  // The limit: T itself, or the size of an axis that is T (x.shape[1]), perhaps cast.
  std::string limit = range->input(1);
  if (const onnx::NodeProto* c = producer(limit, "Cast")) limit = c->input(0);
  if (const auto t = scalar(limit)) return *t == static_cast<double>((*shape)[0]) ? table : nullptr;
  const onnx::NodeProto* axis = producer(limit, "Gather");
  const onnx::NodeProto* of = axis != nullptr ? producer(axis->input(0), "Shape") : nullptr;
  const auto k = axis != nullptr ? scalar(axis->input(1)) : std::nullopt;
  if (of == nullptr || !k) return nullptr;
  const Dims& d = dims_of(of->input(0));
  const auto index = static_cast<std::size_t>(*k);
  return index < d.size() && d[index] == (*shape)[0] ? table : nullptr;
}

void Importer::map_add(const onnx::NodeProto& n) {
  const std::string& x = n.input(0);
  const std::string& y = n.input(1);
  if (is_activation(x) && is_activation(y)) return map_binary(n, OpKind::add);
  // A bias after a MatMul (PyTorch exports nn.Linear on 3-D inputs as MatMul + Add).
  const std::string& act = is_activation(x) ? x : y;
  if (const onnx::TensorProto* table = position_lookup(is_activation(x) ? y : x, act)) {
    // Hugging Face's x + wpe(arange(T)): the first T rows of a [P, D] table, counted whole.
    Attributes a;
    a.num_positions = table->dims(0);
    add_node(n, OpKind::pos_embedding, {values_.at(act).node}, a);
    graph_.nodes.back().initial_values.push_back(initial("weight", table->name(), {table->dims(0), table->dims(1)}, floats(*table)));
    const std::string& t = table->name();  // "wpe.weight": the layer is "wpe"
    name_after_parameter(t.size() > 7 && t.compare(t.size() - 7, 7, ".weight") == 0 ? t.substr(0, t.size() - 7) : t);
    return;
  }
  const onnx::TensorProto* c = constant(is_activation(x) ? y : x);
  const Value& v = values_.at(act);
  if (c != nullptr && v.node >= 0 && use_count(act) == 1) {
    Node& producer = graph_.nodes[static_cast<std::size_t>(v.node)];
    if (producer.op == OpKind::linear && !producer.attrs.bias && product(Dims(c->dims().begin(), c->dims().end())) == producer.attrs.out_features) {
      producer.attrs.bias = true;
      producer.initial_values.push_back(initial("bias", c->name(), {producer.attrs.out_features}, floats(*c)));
      alias(n, act);
      return;
    }
  }
  // A learned position embedding added to [batch, T, D] (ViT's x + self.pos_embedding).
  const auto as = per_sample(act);
  if (c != nullptr && as && as->size() == 2) {
    Dims cd(c->dims().begin(), c->dims().end());
    if (cd.size() == 3 && cd[0] == 1) cd.erase(cd.begin());
    if (cd == Dims(as->begin(), as->end())) {
      Attributes a;
      a.num_positions = (*as)[0];
      add_node(n, OpKind::pos_embedding, {v.node}, a);
      graph_.nodes.back().initial_values.push_back(initial("weight", c->name(), {cd[0], cd[1]}, floats(*c)));
      name_after_parameter(c->name());
      return;
    }
  }
  map_operand(n, OpKind::add);
}

// Add, Sub, Mul or Div of two activations, broadcast as NumPy does: both [batch, ...] of one
// rank, each axis equal or 1 in one of them (a squeeze-and-excitation block's x * s).
void Importer::map_binary(const onnx::NodeProto& n, OpKind op) {
  const std::string& x = n.input(0);
  const std::string& y = n.input(1);
  if (!is_activation(x) || !is_activation(y)) return map_operand(n, op);
  const auto sx = per_sample(x), sy = per_sample(y);
  bool broadcastable = sx && sy && sx->size() == sy->size();
  for (std::size_t d = 0; broadcastable && d < sx->size(); ++d) broadcastable = (*sx)[d] == (*sy)[d] || (*sx)[d] == 1 || (*sy)[d] == 1;
  if (!broadcastable) {
    return unsupported(n, "only inputs of one rank whose axes are equal or 1 are mapped (broadcast), got " + dims_text(dims_of(x)) + " and " +
                              dims_text(dims_of(y)));
  }
  add_node(n, op, {values_.at(x).node, values_.at(y).node});
}

// Add, Sub, Mul or Div of an activation and a constant tensor broadcast to it: input
// normalisation's (x - mean) / std, a scale by 0.5, ConvNeXt's layer scale. An initializer
// named by the exporter after a module's tensor (not "onnx::...") is taken as a learned
// parameter (PyTorch writes nn.Parameter and registered buffers alike, by name); a Constant
// node's value or an "onnx::" initializer (a folded Python constant) is a constant, a buffer.
void Importer::map_operand(const onnx::NodeProto& n, OpKind op) {
  const bool first = is_activation(n.input(0));
  const std::string& x = first ? n.input(0) : n.input(1);
  const onnx::TensorProto* c = constant(first ? n.input(1) : n.input(0));
  if (c == nullptr || c->data_type() != onnx::TensorProto_DataType_FLOAT) {
    return unsupported(n, "the other operand is neither a layer's output nor a float32 constant");
  }
  if (!first && (op == OpKind::sub || op == OpKind::div)) {
    return unsupported(n, "a constant " + std::string(op == OpKind::sub ? "minus" : "divided by") + " an activation is not mapped");
  }
  const auto in = per_sample(x);
  if (!in) return unsupported(n, "the activation's shape " + dims_text(dims_of(x)) + " is not [batch, ...] with known sizes");
  // Right-aligned to the full input [batch, ...]; its batch axis must be 1 (one tensor for all samples).
  Dims cd(c->dims().begin(), c->dims().end());
  if (cd.size() > in->size() + 1 || (cd.size() == in->size() + 1 && cd[0] != 1)) {
    return unsupported(n, "the constant " + dims_text(cd) + " does not broadcast to " + dims_text(dims_of(x)) + " without widening it");
  }
  if (cd.size() == in->size() + 1) cd.erase(cd.begin());
  Shape operand(in->size() - cd.size(), 1);
  operand.insert(operand.end(), cd.begin(), cd.end());
  for (std::size_t d = 0; d < operand.size(); ++d) {
    if (operand[d] != (*in)[d] && operand[d] != 1) {
      return unsupported(n, "the constant " + dims_text(Dims(c->dims().begin(), c->dims().end())) + " does not broadcast to " +
                                dims_text(dims_of(x)) + " without widening it");
    }
  }
  Attributes a;
  a.operand = operand;
  a.operand_trainable = initializers_.count(c->name()) != 0 && c->name().rfind("onnx::", 0) != 0;
  add_node(n, op, {values_.at(x).node}, a);
  graph_.nodes.back().initial_values.push_back(initial(a.operand_trainable ? "weight" : "operand", c->name(), operand, floats(*c)));
  if (a.operand_trainable) name_after_parameter(c->name());  // ConvNeXt's features.1.0.layer_scale
}

void Importer::map_clip(const onnx::NodeProto& n) {
  auto bound = [&](int i, float fallback) -> std::optional<float> {
    if (n.input_size() <= i || n.input(i).empty()) return fallback;
    const onnx::TensorProto* t = constant(n.input(i));
    if (t == nullptr) return std::nullopt;
    const std::vector<float> v = floats(*t);
    return v.size() == 1 ? std::optional<float>(v[0]) : std::nullopt;
  };
  const auto lo = bound(1, -3.4e38f), hi = bound(2, 3.4e38f);
  if (lo && hi && *lo == 0.0f && *hi == 6.0f) return (void)add_node(n, OpKind::relu6, {values_.at(n.input(0)).node});
  if (lo && hi && *lo == 0.0f && *hi >= 3.4e38f) return (void)add_node(n, OpKind::relu, {values_.at(n.input(0)).node});
  unsupported(n, "only Clip(0, 6) (ReLU6) and Clip(0, ∞) (ReLU) are mapped");
}

void Importer::map_reshape_like(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const auto out = per_sample(n.output(0));
  if (!in || !out) {
    return unsupported(n, "the output " + dims_text(dims_of(n.output(0))) + " does not keep the batch as its first axis (batch " +
                              std::to_string(batch_) + "), or is unknown");
  }
  if (*in == *out) return alias(n, n.input(0));
  Attributes a;
  if (out->size() == 1) return (void)add_node(n, OpKind::flatten, {values_.at(n.input(0)).node}, a);
  a.shape = *out;
  add_node(n, OpKind::reshape, {values_.at(n.input(0)).node}, a);
}

// x.mean([2, 3]) over an image's spatial axes (MnasNet's head, global pooling written by hand):
// adaptive_avgpool2d to 1x1, then a flatten where the axes are not kept.
void Importer::map_reduce_mean(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  std::vector<std::int64_t> axes = attr_ints(n, "axes");
  for (std::int64_t& a : axes) a = a < 0 ? a + 4 : a;
  std::sort(axes.begin(), axes.end());
  if (!in || in->size() != 3 || axes != std::vector<std::int64_t>{2, 3} || n.input_size() != 1) {
    return unsupported(n, "only a mean over the spatial axes [2, 3] of [N, C, H, W] is mapped (global average pooling)");
  }
  const int pool = add_node(n, OpKind::adaptive_avgpool2d, {values_.at(n.input(0)).node});
  if (attr_int(n, "keepdims", 1) != 0) return;
  Node& pooled = graph_.nodes[static_cast<std::size_t>(pool)];
  expected.erase(pooled.name);  // ONNX's output is the flattened one
  Node flat;
  flat.name = pooled.name + ".flatten";
  flat.op = OpKind::flatten;
  flat.inputs = {pool};
  flat.spec_pointer = describe(n) + " (keepdims 0)";
  names_taken_[flat.name] = 1;
  if (const auto out = per_sample(n.output(0))) expected[flat.name] = *out;
  graph_.nodes.push_back(std::move(flat));
  set_output(n, static_cast<int>(graph_.nodes.size()) - 1);
}

void Importer::map_transpose(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  std::vector<std::int64_t> perm = attr_ints(n, "perm");
  if (!in) return unsupported(n, "the input's first axis is not the batch");
  if (perm.empty()) return unsupported(n, "a Transpose without perm reverses the batch axis");
  if (perm[0] != 0) return unsupported(n, "perm " + dims_text(perm) + " moves the batch axis");
  Attributes a;
  for (std::size_t i = 1; i < perm.size(); ++i) a.perm.push_back(perm[i] - 1);
  add_node(n, OpKind::transpose, {values_.at(n.input(0)).node}, a);
}

void Importer::map_axis_op(const onnx::NodeProto& n, OpKind op) {
  const Dims& d = dims_of(n.input(0));
  const auto rank = static_cast<std::int64_t>(d.size());
  std::int64_t axis = attr_int(n, "axis", op == OpKind::softmax ? (opset_ >= 13 ? -1 : 1) : 0);
  if (axis < 0) axis += rank;
  if (axis <= 0 || axis >= rank) return unsupported(n, "axis " + std::to_string(attr_int(n, "axis", 0)) + " is the batch axis or out of range");
  if (op == OpKind::softmax && opset_ < 13 && axis != rank - 1) {
    return unsupported(n, "before opset 13 Softmax flattens the axes from `axis` on; only the last axis is mapped");
  }
  std::vector<int> inputs;
  for (const std::string& in : n.input()) {
    if (!is_activation(in)) return unsupported(n, "an input is a constant, not an activation");
    inputs.push_back(values_.at(in).node);
  }
  Attributes a;
  a.axis = axis - 1;
  add_node(n, op, inputs, a);
}

std::optional<double> Importer::scalar(const std::string& name) const {
  const onnx::TensorProto* t = constant(name);
  if (t == nullptr || product(Dims(t->dims().begin(), t->dims().end())) != 1) return std::nullopt;
  if (t->data_type() == onnx::TensorProto_DataType_FLOAT || t->data_type() == onnx::TensorProto_DataType_DOUBLE) return floats(*t).at(0);
  if (t->data_type() == onnx::TensorProto_DataType_INT64 || t->data_type() == onnx::TensorProto_DataType_INT32) {
    return static_cast<double>(integers(*t).at(0));
  }
  return std::nullopt;
}

int Importer::only_consumer(const std::string& value) const {
  auto it = consumers_.find(value);
  if (it == consumers_.end()) return -1;
  int found = -1;
  for (int c : it->second) {
    if (onnx_node(c).op_type() == "Shape") continue;
    if (found >= 0 && found != c) return -1;
    found = c;
  }
  return is_graph_output(value) ? -1 : found;
}

std::optional<Importer::Projection> Importer::projection_at(const std::string& value) const {
  auto it = producer_.find(value);
  if (it == producer_.end()) return std::nullopt;
  const int i = it->second;
  const onnx::NodeProto& n = onnx_node(i);
  Projection p;
  if (n.op_type() == "Gemm") {
    if (attr_int(n, "transA", 0) != 0 || attr_float(n, "alpha", 1.0f) != 1.0f || attr_float(n, "beta", 1.0f) != 1.0f) return std::nullopt;
    p.weight = constant(n.input(1));
    if (p.weight == nullptr || p.weight->dims_size() != 2) return std::nullopt;
    p.out_major = attr_int(n, "transB", 0) != 0;
    if (n.input_size() > 2 && !n.input(2).empty()) {
      p.bias = constant(n.input(2));
      if (p.bias == nullptr || p.bias->dims_size() != 1) return std::nullopt;
    }
    p.x = n.input(0);
    p.nodes = {i};
    return p;
  }
  int matmul = i;
  if (n.op_type() == "Add") {
    for (int side = 0; side < 2; ++side) {
      const onnx::TensorProto* b = constant(n.input(side));
      auto from = producer_.find(n.input(1 - side));
      if (b != nullptr && b->dims_size() == 1 && from != producer_.end() && onnx_node(from->second).op_type() == "MatMul") {
        p.bias = b;
        matmul = from->second;
        p.nodes.push_back(i);
      }
    }
    if (p.bias == nullptr) return std::nullopt;
  }
  const onnx::NodeProto& m = onnx_node(matmul);
  if (m.op_type() != "MatMul") return std::nullopt;
  p.weight = constant(m.input(1));
  if (p.weight == nullptr || p.weight->dims_size() != 2 || constant(m.input(0)) != nullptr) return std::nullopt;
  p.x = m.input(0);
  p.nodes.push_back(matmul);
  return p;
}

// GELU as PyTorch exports nn.GELU() / F.gelu (opset < 20 has no Gelu op): the erf form
// x·0.5·(1 + erf(x/√2)) as Div(x, √2) → Erf → Add 1 → Mul x → Mul 0.5; the tanh form
// (approximate='tanh') 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). SiLU: Sigmoid(x) → Mul x.
// nn.LayerNorm(D) as PyTorch exports it before opset 17 (torch 1.13's default opset is 14):
//   mean = ReduceMean(x, axes=[-1]); d = Sub(x, mean); var = ReduceMean(Pow(d, 2), axes=[-1]);
//   y = Div(d, Sqrt(Add(var, eps))) · weight + bias   (weight, bias initializers of [D])
// found from its first ReduceMean; every node but the last is absorbed into one layernorm.
void Importer::find_decomposed_layernorm(int index) {
  const onnx::NodeProto& n = onnx_node(index);
  auto is = [&](int i, const char* op) { return i >= 0 && onnx_node(i).op_type() == op && onnx_node(i).input_size() >= 1; };
  const std::string& x = n.input(0);
  const Dims& dx = dims_of(x);
  const auto last_axis = [&](const onnx::NodeProto& r) {
    const auto axes = attr_ints(r, "axes");
    return axes.size() == 1 && (axes[0] == -1 || axes[0] == static_cast<std::int64_t>(dx.size()) - 1) && attr_int(r, "keepdims", 1) == 1 &&
           r.input_size() == 1;
  };
  if (dx.empty() || dx.back() <= 0 || !last_axis(n)) return;
  const std::int64_t d = dx.back();
  const int sub = only_consumer(n.output(0));
  if (!is(sub, "Sub") || onnx_node(sub).input(0) != x || onnx_node(sub).input(1) != n.output(0)) return;
  const std::string& centred = onnx_node(sub).output(0);
  auto readers = consumers_.find(centred);
  if (readers == consumers_.end() || readers->second.size() != 2 || is_graph_output(centred)) return;
  int pow = -1, div = -1;
  for (int r : readers->second) {
    if (is(r, "Pow") && onnx_node(r).input(0) == centred && scalar(onnx_node(r).input(1)) == 2.0) pow = r;
    if (is(r, "Div") && onnx_node(r).input(0) == centred) div = r;
  }
  if (pow < 0 || div < 0) return;
  const int var = only_consumer(onnx_node(pow).output(0));
  if (!is(var, "ReduceMean") || !last_axis(onnx_node(var))) return;
  const int add_eps = only_consumer(onnx_node(var).output(0));
  if (!is(add_eps, "Add") || onnx_node(add_eps).input(0) != onnx_node(var).output(0)) return;
  const auto eps = scalar(onnx_node(add_eps).input(1));
  const int sqrt = only_consumer(onnx_node(add_eps).output(0));
  if (!eps || !is(sqrt, "Sqrt") || only_consumer(onnx_node(sqrt).output(0)) != div || onnx_node(div).input(1) != onnx_node(sqrt).output(0)) return;
  // The affine part: Mul by weight [D], then Add bias [D] (nn.LayerNorm's elementwise_affine).
  const auto vector_of = [&](const std::string& name) -> const onnx::TensorProto* {
    const onnx::TensorProto* t = constant(name);
    return t != nullptr && t->data_type() == onnx::TensorProto_DataType_FLOAT && product(Dims(t->dims().begin(), t->dims().end())) == d ? t : nullptr;
  };
  const int mul = only_consumer(onnx_node(div).output(0));
  if (!is(mul, "Mul") || onnx_node(mul).input(0) != onnx_node(div).output(0)) return;
  const onnx::TensorProto* weight = vector_of(onnx_node(mul).input(1));
  const int add = only_consumer(onnx_node(mul).output(0));
  if (weight == nullptr || !is(add, "Add") || onnx_node(add).input(0) != onnx_node(mul).output(0)) return;
  const onnx::TensorProto* bias = vector_of(onnx_node(add).input(1));
  if (bias == nullptr) return;
  for (int i : {index, sub, pow, var, add_eps, sqrt, div, mul}) absorbed_[static_cast<std::size_t>(i)] = 1;
  Attributes attrs;
  attrs.eps = *eps;
  fusions_[add] = Fusion{OpKind::layernorm,
                         attrs,
                         x,
                         "LayerNorm (decomposed: ReduceMean, Sub, Pow, Sqrt, Div)",
                         module_path(scope_segments(n.name())),
                         {initial("weight", weight->name(), {d}, floats(*weight)), initial("bias", bias->name(), {d}, floats(*bias))}};
}

// Long: one pattern per activation an exporter decomposes (GELU in its erf and tanh forms, SiLU,
// hard-swish, hard-sigmoid), each matched in turn from the same node with the same helpers.
void Importer::find_activation_patterns(int index) {
  const onnx::NodeProto& n = onnx_node(index);
  auto near = [](std::optional<double> v, double want) { return v && std::abs(*v - want) <= 1e-5 * std::max(1.0, std::abs(want)); };
  auto other = [](const onnx::NodeProto& node, const std::string& one) -> const std::string& {
    return node.input(0) == one ? node.input(1) : node.input(0);
  };
  auto is = [&](int i, const char* op) { return i >= 0 && onnx_node(i).op_type() == op && onnx_node(i).input_size() >= 1; };
  if (n.op_type() == "ReduceMean") return find_decomposed_layernorm(index);
  if (n.op_type() == "Sigmoid") {
    const int m = only_consumer(n.output(0));
    if (is(m, "Mul") && other(onnx_node(m), n.output(0)) == n.input(0)) {
      absorbed_[static_cast<std::size_t>(index)] = 1;
      fusions_[m] = Fusion{OpKind::silu, {}, n.input(0), "SiLU (Sigmoid · x)", module_path(scope_segments(n.name())), {}};
    }
    return;
  }
  // erf form
  const bool div_sqrt2 = n.op_type() == "Div" && near(scalar(n.input(1)), std::sqrt(2.0));
  const bool mul_rsqrt2 = n.op_type() == "Mul" && (near(scalar(n.input(1)), 1.0 / std::sqrt(2.0)) || near(scalar(n.input(0)), 1.0 / std::sqrt(2.0)));
  if (div_sqrt2 || mul_rsqrt2) {
    const std::string x = div_sqrt2 || scalar(n.input(1)) ? n.input(0) : n.input(1);
    const int e = only_consumer(n.output(0));
    if (!is(e, "Erf")) return;
    const int a = only_consumer(onnx_node(e).output(0));
    if (!is(a, "Add") || !near(scalar(other(onnx_node(a), onnx_node(e).output(0))), 1.0)) return;
    const int m1 = only_consumer(onnx_node(a).output(0));
    if (!is(m1, "Mul")) return;
    int last = -1;
    const std::string& m1_other = other(onnx_node(m1), onnx_node(a).output(0));
    if (m1_other == x) {  // x·(1 + erf) then · 0.5
      const int m2 = only_consumer(onnx_node(m1).output(0));
      if (is(m2, "Mul") && near(scalar(other(onnx_node(m2), onnx_node(m1).output(0))), 0.5)) last = m2;
      if (last >= 0) absorbed_[static_cast<std::size_t>(m1)] = 1;
    } else if (auto half = producer_.find(m1_other); half != producer_.end()) {  // (0.5·x)·(1 + erf)
      const onnx::NodeProto& h = onnx_node(half->second);
      if (h.op_type() == "Mul" && (h.input(0) == x || h.input(1) == x) && near(scalar(other(h, x)), 0.5) && only_consumer(h.output(0)) == m1) {
        last = m1;
        absorbed_[static_cast<std::size_t>(half->second)] = 1;
      }
    }
    if (last < 0) return;
    for (int i : {index, e, a}) absorbed_[static_cast<std::size_t>(i)] = 1;
    Attributes attrs;
    attrs.approximate = GeluApproximation::none;
    fusions_[last] = Fusion{OpKind::gelu, attrs, x, "GELU (erf form)", module_path(scope_segments(n.name())), {}};
    return;
  }
  // tanh form, from the Pow(x, 3) or Mul(x, Mul(x, x)) that starts it: x³ → Mul 0.044715 →
  // Add x → Mul √(2/π) → Tanh → Add 1 → Mul with 0.5·x (either order of the two products).
  std::vector<int> chain;
  std::string cube;  // x³, as Pow(x, 3) or Mul(x, Mul(x, x)) (PyTorch's form)
  if (n.op_type() == "Pow" && near(scalar(n.input(1)), 3.0)) {
    chain = {index};
    cube = n.output(0);
  } else if (n.op_type() == "Mul" && n.input_size() == 2 && n.input(0) == n.input(1)) {
    const int c3 = only_consumer(n.output(0));
    if (is(c3, "Mul") && other(onnx_node(c3), n.output(0)) == n.input(0)) {
      chain = {index, c3};
      cube = onnx_node(c3).output(0);
    }
  }
  if (!cube.empty()) {
    const std::string x = n.input(0);
    int c = only_consumer(cube);
    if (!is(c, "Mul") || !near(scalar(other(onnx_node(c), cube)), 0.044715)) return;
    chain.push_back(c);
    int d = only_consumer(onnx_node(c).output(0));
    if (!is(d, "Add") || other(onnx_node(d), onnx_node(c).output(0)) != x) return;
    chain.push_back(d);
    int k = only_consumer(onnx_node(d).output(0));
    if (!is(k, "Mul") || !near(scalar(other(onnx_node(k), onnx_node(d).output(0))), std::sqrt(2.0 / std::numbers::pi))) return;
    chain.push_back(k);
    int t = only_consumer(onnx_node(k).output(0));
    if (!is(t, "Tanh")) return;
    chain.push_back(t);
    int a = only_consumer(onnx_node(t).output(0));
    if (!is(a, "Add") || !near(scalar(other(onnx_node(a), onnx_node(t).output(0))), 1.0)) return;
    chain.push_back(a);
    int m = only_consumer(onnx_node(a).output(0));
    if (!is(m, "Mul")) return;
    const std::string& half_x = other(onnx_node(m), onnx_node(a).output(0));
    int last = -1;
    if (auto h = producer_.find(half_x); h != producer_.end() && onnx_node(h->second).op_type() == "Mul" &&
                                         (onnx_node(h->second).input(0) == x || onnx_node(h->second).input(1) == x) &&
                                         near(scalar(other(onnx_node(h->second), x)), 0.5)) {
      chain.push_back(h->second);
      last = m;
    } else if (half_x == x) {
      const int m2 = only_consumer(onnx_node(m).output(0));
      if (is(m2, "Mul") && near(scalar(other(onnx_node(m2), onnx_node(m).output(0))), 0.5)) {
        chain.push_back(m);
        last = m2;
      }
    }
    if (last < 0) return;
    for (int i : chain) absorbed_[static_cast<std::size_t>(i)] = 1;
    Attributes attrs;
    attrs.approximate = GeluApproximation::tanh;
    fusions_[last] = Fusion{OpKind::gelu, attrs, x, "GELU (tanh form)", module_path(scope_segments(n.name())), {}};
  }
}

// Attention as exporters write it (torch.nn.MultiheadAttention, GPT-2/BERT/ViT blocks): from
// each Softmax, Q·Kᵀ before it (a MatMul of two activations, scaled, maybe masked) and A·V
// after it; Q, K and V traced back through the reshapes and transposes that split the heads
// to their projections of one input x (one fused in-projection sliced three ways, or three);
// the output traced forward through the heads' merge to the out-projection and back to
// [batch, T, D]. All of it is one hwprof `attention` layer with PyTorch's in_proj_weight
// [3D, D] layout; the scale must be 1/√(D/heads), and a mask must be causal.
// Why the Where condition `value` is not a causal mask over T×T scores, or nothing when it is: a
// constant boolean [..., N, N] (N >= T, leading axes 1), perhaps sliced from index 0 (GPT-2's
// bias[:, :, :T, :T]), whose first T rows and columns are true exactly on and below the diagonal.
std::optional<std::string> Importer::causal_condition(std::string value, std::int64_t t) const {
  for (int guard = 0; guard < 8 && constant(value) == nullptr; ++guard) {
    auto it = producer_.find(value);
    if (it == producer_.end() || onnx_node(it->second).op_type() != "Slice") return "its Where mask is computed in the graph";
    const onnx::NodeProto& slice = onnx_node(it->second);
    const onnx::TensorProto* starts = slice.input_size() > 1 ? constant(slice.input(1)) : nullptr;
    const onnx::TensorProto* steps = slice.input_size() > 4 && !slice.input(4).empty() ? constant(slice.input(4)) : nullptr;
    if (starts == nullptr) return "its Where mask is sliced from a computed start";
    for (std::int64_t s : integers(*starts)) {
      if (s != 0) return "its Where mask is sliced from a start other than 0";
    }
    if (steps != nullptr) {
      for (std::int64_t s : integers(*steps)) {
        if (s != 1) return "its Where mask is sliced with a step";
      }
    }
    value = slice.input(0);
  }
  const onnx::TensorProto* mask = constant(value);
  if (mask == nullptr || mask->data_type() != onnx::TensorProto_DataType_BOOL) return "its Where mask is not a constant boolean tensor";
  const Dims md(mask->dims().begin(), mask->dims().end());
  if (md.size() < 2 || md[md.size() - 1] != md[md.size() - 2] || md.back() < t || product(md) != md.back() * md.back()) {
    return "its Where mask " + dims_text(md) + " is not one [N, N] matrix covering the " + std::to_string(t) + " positions";
  }
  const std::string bytes = raw_bytes(*mask);
  const std::int64_t n = md.back();
  auto at = [&](std::int64_t r, std::int64_t c) {
    const auto i = static_cast<std::size_t>(r * n + c);
    return bytes.size() == static_cast<std::size_t>(n * n) ? bytes[i] != 0
                                                           : mask->int32_data_size() == n * n && mask->int32_data(static_cast<int>(i)) != 0;
  };
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = 0; c < t; ++c) {
      if (at(r, c) != (c <= r)) return "its Where mask is not causal (true on and below the diagonal)";
    }
  }
  return std::nullopt;
}

// Back from the scores to Q·Kᵀ: scales, and a causal mask (additive, or a Where).
Importer::Mismatch Importer::match_scores(int softmax, AttentionMatch& a) const {
  const onnx::NodeProto& sm = onnx_node(softmax);
  const Dims& sd = dims_of(sm.input(0));
  if (sd.size() < 2) return "";
  const auto rank = static_cast<std::int64_t>(sd.size());
  std::int64_t axis = attr_int(sm, "axis", opset_ >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return "";
  std::string v = sm.input(0);
  for (int guard = 0; guard < 8; ++guard) {
    auto it = producer_.find(v);
    if (it == producer_.end()) return "";
    const onnx::NodeProto& p = onnx_node(it->second);
    if (p.op_type() == "MatMul" && constant(p.input(0)) == nullptr && constant(p.input(1)) == nullptr) {
      a.m1 = it->second;
      a.nodes.push_back(a.m1);
      return std::nullopt;
    }
    if ((p.op_type() == "Div" || p.op_type() == "Mul") && scalar(p.input(1))) {
      a.scale = p.op_type() == "Div" ? a.scale / *scalar(p.input(1)) : a.scale * *scalar(p.input(1));
      v = p.input(0);
    } else if (p.op_type() == "Add" && (constant(p.input(0)) != nullptr || constant(p.input(1)) != nullptr)) {
      const bool first = constant(p.input(0)) != nullptr;
      const onnx::TensorProto* mask = constant(p.input(first ? 0 : 1));
      const Dims md(mask->dims().begin(), mask->dims().end());
      if (md.size() < 2 || md[md.size() - 1] != md[md.size() - 2] || product(md) != md.back() * md.back()) {
        return "its mask " + dims_text(md) + " is not one [T, T] matrix";
      }
      const std::vector<float> m = floats(*mask);
      const std::int64_t t = md.back();
      for (std::int64_t r = 0; r < t; ++r) {
        for (std::int64_t c = 0; c < t; ++c) {
          const float x = m[static_cast<std::size_t>(r * t + c)];
          if ((c <= r && x != 0.0f) || (c > r && x > -1e4f)) return "its additive mask is not causal (0 on and below the diagonal, ≤ -1e4 above)";
        }
      }
      a.causal = true;
      v = p.input(first ? 1 : 0);
    } else if (p.op_type() == "Where" && p.input_size() == 3) {
      // torch.where(mask, scores, very negative) (Hugging Face's GPT-2): the mask a constant
      // lower-triangular boolean, perhaps sliced to the first T rows and columns.
      const auto fill = scalar(p.input(2));
      if (!fill || *fill > -1e4) return "its Where does not fill masked scores with a very negative constant";
      if (auto problem = causal_condition(p.input(0), sd.back())) return *problem;
      a.causal = true;
      v = p.input(1);
    } else {
      return "";
    }
    a.nodes.push_back(it->second);
  }
  return "";
}

// Forward from the probabilities (through dropout) to A·V.
Importer::Mismatch Importer::match_values(int softmax, AttentionMatch& a) const {
  const onnx::NodeProto& sm = onnx_node(softmax);
  int m2 = only_consumer(sm.output(0));
  std::string probs = sm.output(0);
  while (m2 >= 0 && (onnx_node(m2).op_type() == "Dropout" || onnx_node(m2).op_type() == "Identity")) {
    a.nodes.push_back(m2);
    probs = onnx_node(m2).output(0);
    m2 = only_consumer(probs);
  }
  if (m2 < 0 || onnx_node(m2).op_type() != "MatMul" || onnx_node(m2).input(0) != probs) {
    return "its probabilities are used by more than one A·V product (are the attention weights returned? call it with need_weights=False)";
  }
  a.m2 = m2;
  a.nodes.push_back(m2);
  return std::nullopt;
}

// Q, K or V back to its projection through head splits and scales (a Split or Slice of one
// fused projection gives the part's columns).
bool Importer::trace_projection(std::string value, AttentionMatch& a, TracedProjection* out) const {
  for (int guard = 0; guard < 16; ++guard) {
    if (auto proj = projection_at(value)) {
      out->proj = *proj;
      return true;
    }
    auto it = producer_.find(value);
    if (it == producer_.end()) return false;
    const onnx::NodeProto& p = onnx_node(it->second);
    const std::string& op = p.op_type();
    if (op == "Reshape" || op == "Transpose" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
      value = p.input(0);
    } else if ((op == "Div" || op == "Mul") && scalar(p.input(1))) {
      a.scale = op == "Div" ? a.scale / *scalar(p.input(1)) : a.scale * *scalar(p.input(1));
      value = p.input(0);
    } else if (op == "Split") {
      // One part of a fused projection split along its last axis (c_attn(x).split(D, dim=2)):
      // it starts after the widths of the parts before it.
      const Dims& in = dims_of(p.input(0));
      std::int64_t split_axis = attr_int(p, "axis", 0);
      if (split_axis < 0) split_axis += static_cast<std::int64_t>(in.size());
      if (in.empty() || split_axis != static_cast<std::int64_t>(in.size()) - 1) return false;
      std::int64_t begin = 0;
      int part = 0;
      for (; part < p.output_size() && p.output(part) != value; ++part) {
        const Dims& od = dims_of(p.output(part));
        if (od.empty() || od.back() < 0) return false;
        begin += od.back();
      }
      if (part == p.output_size() || dims_of(value).empty()) return false;
      out->begin = begin;
      out->end = dims_of(value).back();
      value = p.input(0);
    } else if (op == "Slice") {
      const onnx::TensorProto* starts = p.input_size() > 1 ? constant(p.input(1)) : nullptr;
      std::vector<std::int64_t> st;
      if (starts != nullptr) st = integers(*starts);
      // PyTorch computes the slice bounds from the shape (E // 3 · k): use inference's answer.
      const Dims& in = dims_of(p.input(0));
      const Dims& o = dims_of(p.output(0));
      if (in.empty() || o.size() != in.size() || in.back() < 0 || o.back() < 0) return false;
      for (std::size_t d = 0; d + 1 < in.size(); ++d) {
        if (in[d] != o[d]) return false;
      }
      // Bounds computed in the graph: ONNX's data propagation gives their values through the
      // graph's value_info only for shapes, so the slices of a fused projection whose starts
      // are not constants are taken in the order they appear (q, k, v: PyTorch's order).
      out->begin = st.size() == 1 && st[0] >= 0 ? st[0] : -2;
      out->end = o.back();  // the width; begin fixed by match_projections
      value = p.input(0);
    } else {
      return false;
    }
    a.nodes.push_back(it->second);
  }
  return false;
}

// Q, K, V from projections of one input, scaled by 1/√head; their weights in PyTorch's
// layout: in_proj_weight [3D, D] (rows q, k, v).
Importer::Mismatch Importer::match_projections(int /*softmax*/, AttentionMatch& a) const {
  if (!trace_projection(onnx_node(a.m1).input(0), a, &a.q) || !trace_projection(onnx_node(a.m1).input(1), a, &a.k) ||
      !trace_projection(onnx_node(a.m2).input(1), a, &a.v)) {
    return "Q, K and V do not all come from projections (MatMul by a weight, + bias) of the input";
  }
  if (a.q.proj.x != a.k.proj.x || a.q.proj.x != a.v.proj.x) return "Q, K and V are projections of different inputs (cross-attention is not mapped)";
  for (const TracedProjection* t : {&a.q, &a.k, &a.v}) a.nodes.insert(a.nodes.end(), t->proj.nodes.begin(), t->proj.nodes.end());
  const Dims& xd = dims_of(a.q.proj.x);
  if (xd.empty() || xd.back() <= 0) return "the input's width is unknown";
  const std::int64_t d = a.d = xd.back();
  const Dims& qd = dims_of(onnx_node(a.m1).input(0));
  if (qd.empty() || qd.back() <= 0 || d % qd.back() != 0) return "the head width does not divide the model width";
  a.head = qd.back();
  // Slices of one fused projection: in the order q, k, v when their starts are not constants.
  if (a.q.proj.nodes == a.k.proj.nodes && a.q.proj.nodes == a.v.proj.nodes) {
    if (a.q.begin == -2 || a.k.begin == -2 || a.v.begin == -2) {
      a.q.begin = 0;
      a.k.begin = d;
      a.v.begin = 2 * d;
    }
    for (TracedProjection* t : {&a.q, &a.k, &a.v}) t->end = t->begin + d;
  } else {
    for (TracedProjection* t : {&a.q, &a.k, &a.v}) {
      t->begin = 0;
      t->end = d;
    }
  }
  if (std::abs(a.scale * std::sqrt(static_cast<double>(a.head)) - 1.0) > 1e-5) {
    return "its scale is " + std::to_string(a.scale) + ", not 1/√" + std::to_string(a.head);
  }
  a.in_w.assign(static_cast<std::size_t>(3 * d * d), 0.0f);
  a.in_b.assign(static_cast<std::size_t>(3 * d), 0.0f);
  for (int part = 0; part < 3; ++part) {
    const TracedProjection& t = part == 0 ? a.q : part == 1 ? a.k : a.v;
    const onnx::TensorProto& w = *t.proj.weight;
    const std::int64_t rows = w.dims(0), cols = w.dims(1);
    const std::int64_t in = t.proj.out_major ? cols : rows, outs = t.proj.out_major ? rows : cols;
    if (in != d || t.begin < 0 || t.end > outs)
      return "a projection's weight " + dims_text({rows, cols}) + " does not fit width " + std::to_string(d);
    const std::vector<float> wv = floats(w);
    for (std::int64_t o = 0; o < d; ++o) {
      for (std::int64_t i = 0; i < d; ++i) {
        const std::int64_t src = t.proj.out_major ? (t.begin + o) * in + i : i * outs + (t.begin + o);
        a.in_w[static_cast<std::size_t>((part * d + o) * d + i)] = wv[static_cast<std::size_t>(src)];
      }
    }
    if (t.proj.bias != nullptr) {
      ++a.with_bias;
      const std::vector<float> bv = floats(*t.proj.bias);
      if (static_cast<std::int64_t>(bv.size()) != outs) return "a projection's bias does not match its weight";
      std::copy(bv.begin() + t.begin, bv.begin() + t.begin + d, a.in_b.begin() + part * d);
    }
  }
  return std::nullopt;
}

// Forward from A·V through the heads' merge to the out-projection [D, D].
Importer::Mismatch Importer::match_out_projection(int /*softmax*/, AttentionMatch& a) const {
  std::string value = onnx_node(a.m2).output(0);
  for (int guard = 0; guard < 16 && !a.out_proj; ++guard) {
    const int c = only_consumer(value);
    if (c < 0) return "A·V is used by more than one node";
    const onnx::NodeProto& cn = onnx_node(c);
    if (cn.op_type() == "Reshape" || cn.op_type() == "Transpose") {
      a.nodes.push_back(c);
      value = cn.output(0);
      continue;
    }
    // The out-projection: this node (Gemm, or MatMul) and perhaps an Add after it.
    std::string end = cn.output(0);
    if (cn.op_type() == "MatMul") {
      const int add = only_consumer(end);
      if (add >= 0 && onnx_node(add).op_type() == "Add" && projection_at(onnx_node(add).output(0))) end = onnx_node(add).output(0);
    }
    a.out_proj = projection_at(end);
    if (!a.out_proj || a.out_proj->x != value) return "A·V does not lead to an out-projection";
    a.nodes.insert(a.nodes.end(), a.out_proj->nodes.begin(), a.out_proj->nodes.end());
    value = end;
  }
  if (!a.out_proj) return "no out-projection after A·V";
  const std::int64_t ow0 = a.out_proj->weight->dims(0), ow1 = a.out_proj->weight->dims(1);
  if (ow0 != a.d || ow1 != a.d) return "the out-projection's weight " + dims_text({ow0, ow1}) + " is not [D, D]";
  if ((a.out_proj->bias != nullptr) != (a.with_bias == 3) || (a.with_bias != 0 && a.with_bias != 3)) {
    return "some projections have a bias and others not (hwprof's attention has all four or none)";
  }
  a.value = value;
  return std::nullopt;
}

// The layer reads and writes [batch, T, D] (a sequence-first module's transposes around it are
// part of it), and nothing outside reads what it keeps inside (but Shape nodes, which only read
// shapes).
Importer::Mismatch Importer::match_enclosure(int /*softmax*/, AttentionMatch& a) const {
  auto batch_first = [&](const std::string& name) {
    const Dims& dd = dims_of(name);
    return dd.size() == 3 && dd[0] == batch_ && dd[2] == a.d;
  };
  a.input = a.q.proj.x;
  for (int guard = 0; guard < 4 && !batch_first(a.input); ++guard) {
    auto it = producer_.find(a.input);
    if (it == producer_.end() || (onnx_node(it->second).op_type() != "Transpose" && onnx_node(it->second).op_type() != "Reshape")) break;
    a.nodes.push_back(it->second);
    a.input = onnx_node(it->second).input(0);
  }
  for (int guard = 0; guard < 4 && !batch_first(a.value); ++guard) {
    const int c = only_consumer(a.value);
    if (c < 0 || (onnx_node(c).op_type() != "Transpose" && onnx_node(c).op_type() != "Reshape")) break;
    a.nodes.push_back(c);
    a.value = onnx_node(c).output(0);
  }
  if (!batch_first(a.input) || !batch_first(a.value)) return "its input or output is not [batch, T, " + std::to_string(a.d) + "]";
  std::sort(a.nodes.begin(), a.nodes.end());
  a.nodes.erase(std::unique(a.nodes.begin(), a.nodes.end()), a.nodes.end());
  const int last = producer_.at(a.value);
  for (int i : a.nodes) {
    if (i == last) continue;
    for (const std::string& out : onnx_node(i).output()) {
      const auto readers = consumers_.find(out);
      if (readers == consumers_.end()) continue;
      for (int c : readers->second) {
        if (!std::binary_search(a.nodes.begin(), a.nodes.end(), c) && onnx_node(c).op_type() != "Shape") {
          return "its intermediate value '" + detail::printable_name(out) + "' is also read by " + describe(onnx_node(c));
        }
      }
    }
  }
  return std::nullopt;
}

// Q·Kᵀ, a softmax, A·V and the four projections around them, as PyTorch's
// nn.MultiheadAttention and Hugging Face's GPT-2/BERT export them: one attention layer.
void Importer::find_attention(int softmax) {
  AttentionMatch a;
  a.nodes = {softmax};
  using Stage = Mismatch (Importer::*)(int, AttentionMatch&) const;
  for (Stage stage : {&Importer::match_scores, &Importer::match_values, &Importer::match_projections, &Importer::match_out_projection,
                      &Importer::match_enclosure}) {
    if (Mismatch why = (this->*stage)(softmax, a)) {
      if (!why->empty()) pattern_problems_.push_back(describe(onnx_node(softmax)) + ": looks like attention, but " + *why);
      return;
    }
  }
  const std::int64_t d = a.d;
  const int last = producer_.at(a.value);
  for (int i : a.nodes) absorbed_[static_cast<std::size_t>(i)] = i == last ? 0 : 1;
  Fusion f;
  f.op = OpKind::attention;
  f.attrs.heads = d / a.head;
  f.attrs.causal = a.causal;
  f.attrs.bias = a.with_bias == 3;
  f.input = a.input;
  f.what = "attention (Q·Kᵀ, softmax, A·V and the projections)";
  f.name = module_path(scope_segments(onnx_node(softmax).name()));
  if (f.name.empty()) f.name = "attention";
  std::vector<float> out_w = a.out_proj->out_major ? floats(*a.out_proj->weight) : transposed(floats(*a.out_proj->weight), d, d);
  f.initial.push_back(initial("in_proj_weight", a.q.proj.weight->name(), {3 * d, d}, std::move(a.in_w)));
  if (f.attrs.bias) f.initial.push_back(initial("in_proj_bias", a.q.proj.bias->name(), {3 * d}, std::move(a.in_b)));
  f.initial.push_back(initial("out_proj.weight", a.out_proj->weight->name(), {d, d}, std::move(out_w)));
  if (f.attrs.bias) f.initial.push_back(initial("out_proj.bias", a.out_proj->bias->name(), {d}, floats(*a.out_proj->bias)));
  fusions_[last] = std::move(f);
}

void Importer::find_patterns() {
  const auto& g = model_.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    if (g.node(i).op_type() == "Softmax") find_attention(i);
  }
  for (int i = 0; i < g.node_size(); ++i) {
    if (!absorbed_[static_cast<std::size_t>(i)] && fusions_.count(i) == 0) find_activation_patterns(i);
  }
}

void Importer::map_fusion(int index, const Fusion& f) {
  const onnx::NodeProto& last = onnx_node(index);
  if (!is_activation(f.input)) {
    if (kind_of(f.input) == Value::Kind::unmapped) {
      for (const std::string& out : last.output()) values_[out].kind = Value::Kind::unmapped;
      return;
    }
    return unsupported(last, f.what + ": its input is not an activation of the model");
  }
  Node node;
  std::string name = f.name.empty() ? lower(op_name(f.op).data()) : f.name;
  if (containers_.count(name) != 0 && f.op != OpKind::attention) name += "." + std::string(op_name(f.op));
  const std::string base = detail::printable_name(name);
  name = base;
  for (int k = 2; names_taken_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  names_taken_[name] = 1;
  node.name = name;
  node.op = f.op;
  node.inputs = {values_.at(f.input).node};
  node.attrs = f.attrs;
  node.spec_pointer = describe(last) + ", end of " + f.what;
  node.initial_values = f.initial;
  if (const auto out = per_sample(last.output(0))) expected[node.name] = *out;
  graph_.nodes.push_back(std::move(node));
  set_output(last, static_cast<int>(graph_.nodes.size()) - 1);
}

// Gather: an embedding (a weight initializer indexed by token ids), or the selection of one
// position (ViT's class token: x[:, 0]).
void Importer::map_gather(const onnx::NodeProto& n) {
  const std::int64_t axis = attr_int(n, "axis", 0);
  const onnx::TensorProto* w = constant(n.input(0));
  if (w != nullptr && is_activation(n.input(1))) {
    if (axis != 0 || w->dims_size() != 2) return unsupported(n, "only a Gather of rows of a 2-D weight (an embedding) is mapped");
    if (values_.at(n.input(1)).node != kModelInput && graph_.dtype_of(values_.at(n.input(1)).node) != DType::i32) {
      return unsupported(n, "the indices are not the model's token ids");
    }
    Attributes a;
    a.num_embeddings = w->dims(0);
    a.embedding_dim = w->dims(1);
    add_node(n, OpKind::embedding, {values_.at(n.input(1)).node}, a);
    graph_.nodes.back().initial_values.push_back(initial("weight", w->name(), {w->dims(0), w->dims(1)}, floats(*w)));
    own_weight(static_cast<int>(graph_.nodes.size()) - 1);
    return;
  }
  if (!is_activation(n.input(0))) return unsupported(n, "neither an embedding lookup nor a selection from an activation");
  const Dims& d = dims_of(n.input(0));
  const auto rank = static_cast<std::int64_t>(d.size());
  const std::int64_t ax = axis < 0 ? axis + rank : axis;
  const auto index = scalar(n.input(1));
  const onnx::TensorProto* it = constant(n.input(1));
  if (!index || it == nullptr || it->dims_size() != 0) return unsupported(n, "only a Gather of one constant index (x[:, i]) is mapped");
  if (ax <= 0 || ax >= rank) return unsupported(n, "the Gather's axis is the batch axis or out of range");
  Attributes a;
  a.axis = ax - 1;
  const std::int64_t size = d[static_cast<std::size_t>(ax)];
  if (!(*index >= static_cast<double>(-size) && *index < static_cast<double>(size)) || *index != std::floor(*index)) {
    fail(node_label(n) + ": index " + std::to_string(*index) + " is out of range for axis " + std::to_string(ax) + " of size " +
         std::to_string(size) + " (valid: " + std::to_string(-size) + " to " + std::to_string(size - 1) + ")");
  }
  a.index = static_cast<std::int64_t>(*index);
  add_node(n, OpKind::select, {values_.at(n.input(0)).node}, a);
}

void Importer::map_layernorm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (!in || in->empty()) return unsupported(n, "the input's first axis is not the batch");
  std::int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += static_cast<std::int64_t>(in->size()) + 1;
  if (axis != static_cast<std::int64_t>(in->size())) return unsupported(n, "only a LayerNormalization of the last axis is mapped (nn.LayerNorm(D))");
  if (n.output_size() > 1 &&
      std::any_of(n.output().begin() + 1, n.output().end(), [&](const std::string& o) { return !o.empty() && use_count(o) > 0; })) {
    return unsupported(n, "its Mean or InvStdDev output is used");
  }
  const onnx::TensorProto* scale = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  const onnx::TensorProto* bias = n.input_size() > 2 && !n.input(2).empty() ? constant(n.input(2)) : nullptr;
  if (scale == nullptr || bias == nullptr) return unsupported(n, "scale and bias must both be initializers (nn.LayerNorm with elementwise_affine)");
  const std::int64_t d = in->back();
  if (product(Dims(scale->dims().begin(), scale->dims().end())) != d || product(Dims(bias->dims().begin(), bias->dims().end())) != d) {
    return unsupported(n, "scale or bias is not [" + std::to_string(d) + "]");
  }
  Attributes a;
  a.eps = attr_float(n, "epsilon", 1e-5f);
  add_node(n, OpKind::layernorm, {values_.at(n.input(0)).node}, a);
  graph_.nodes.back().initial_values.push_back(initial("weight", scale->name(), {d}, floats(*scale)));
  graph_.nodes.back().initial_values.push_back(initial("bias", bias->name(), {d}, floats(*bias)));
}

// PyTorch exports avg_pool2d with count_include_pad (DenseNet's transitions) as an explicit
// zero Pad before the AveragePool, padded or not; F.pad before a Conv is the same. A zero Pad
// of nothing is dropped; a symmetric spatial one is folded into the Conv or AveragePool after it.
void Importer::map_pad(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  if (attr_string(n, "mode", "constant") != "constant") return unsupported(n, "only constant (zero) padding is mapped");
  const onnx::TensorProto* p = n.input_size() > 1 ? constant(n.input(1)) : nullptr;
  if (p == nullptr) return unsupported(n, "the pads are computed in the graph");
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const onnx::TensorProto* v = constant(n.input(2));
    if (v == nullptr || floats(*v) != std::vector<float>{0.0f}) return unsupported(n, "only padding with zeros is mapped");
  }
  if (n.input_size() > 3 && !n.input(3).empty()) return unsupported(n, "padding of chosen axes is not mapped");
  const std::vector<std::int64_t> pads = integers(*p);
  if (!in || pads.size() != 2 * (in->size() + 1)) return unsupported(n, "the pads do not match the input's rank");
  if (std::all_of(pads.begin(), pads.end(), [](std::int64_t x) { return x == 0; })) return alias(n, n.input(0));
  const std::size_t r = in->size() + 1;
  bool foldable = r == 4 && pads[0] == 0 && pads[1] == 0 && pads[r] == 0 && pads[r + 1] == 0 && pads[2] == pads[r + 2] && pads[3] == pads[r + 3] &&
                  pads[2] >= 0 && pads[3] >= 0;
  if (!foldable) return unsupported(n, "pads " + dims_text(pads) + " are not a symmetric spatial zero padding of [N, C, H, W]");
  for (const auto& consumer : model_.graph().node()) {
    if (std::find(consumer.input().begin(), consumer.input().end(), n.output(0)) == consumer.input().end()) continue;
    if (consumer.op_type() != "Conv" && consumer.op_type() != "AveragePool") {
      return unsupported(n, "the padded tensor goes to " + describe(consumer) + "; only a Conv or an AveragePool takes a Pad in");
    }
  }
  alias(n, n.input(0));
  pads_[n.output(0)] = Pair{pads[2], pads[3]};
}

// Long: one branch per ONNX op type (docs/onnx.md's table, in its order), each a few lines
// of attribute translation; the patterns spanning several nodes are found elsewhere.
void Importer::map_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return unsupported(n, "operator domain '" + detail::printable_name(n.domain()) + "' is not the default ONNX one");
  if (op == "Constant") return;                                     // decode_constants() registered its value
  if (op == "Identity" && constant(n.input(0)) != nullptr) return;  // index_values() aliased it
  // A node none of whose inputs is an activation computes shapes or folds constants: it is not
  // a layer (its outputs are known to ONNX's shape inference where a layer needs them).
  bool any_activation = false, any_unmapped = false;
  for (const std::string& in : n.input()) {
    any_activation |= is_activation(in);
    any_unmapped |= !in.empty() && kind_of(in) == Value::Kind::unmapped;
  }
  if (any_unmapped) {
    // After a node that cannot be mapped: this one is listed too when hwprof has no mapping for
    // its op at all (every unsupported node is named at once), or when the import keeps what it
    // cannot count (it is not counted either); else it is skipped silently.
    if (kMappedOps.count(op) == 0) return unsupported(n, "no mapping onto hwprof's layers");
    if (options_.keep_unsupported) {
      std::string from;
      for (const std::string& in : n.input()) {
        if (!in.empty() && kind_of(in) == Value::Kind::unmapped && from.empty()) from = in;
      }
      return unsupported(n, "it reads '" + detail::printable_name(from) + "', the output of a node hwprof cannot map");
    }
    for (const std::string& out : n.output()) values_[out].kind = Value::Kind::unmapped;
    return;
  }
  if (op == "Expand" && constant(n.input(0)) != nullptr) {
    // A constant broadcast over the batch (ViT's class_token.expand(n, -1, -1)).
    values_[n.output(0)] = Value{Value::Kind::expanded, kModelInput, constant(n.input(0))};
    return;
  }
  if (!any_activation || op == "Shape" || op == "Size") {
    for (const std::string& out : n.output()) values_[out] = Value{Value::Kind::shape_only, kModelInput, nullptr};
    return;
  }
  if (op == "Gather") return map_gather(n);
  if (!is_activation(n.input(0)) && op != "Add" && op != "Mul" && op != "Sub" && op != "Div" && op != "Concat")
    return unsupported(n, "the first input is a constant, not an activation");
  const int x = values_.at(n.input(0)).node;
  if (op == "Conv") return map_conv(n);
  if (op == "ConvTranspose") return map_conv_transpose(n);
  if (op == "Gemm") return map_gemm(n);
  if (op == "MatMul") return map_matmul(n);
  if (op == "BatchNormalization") return map_batchnorm(n);
  if (op == "LayerNormalization") return map_layernorm(n);
  if (op == "Relu") return (void)add_node(n, OpKind::relu, {x});
  if (op == "Sigmoid") return (void)add_node(n, OpKind::sigmoid, {x});
  if (op == "Tanh") return (void)add_node(n, OpKind::tanh, {x});
  if (op == "Clip") return map_clip(n);
  if (op == "MaxPool") return map_pool(n, OpKind::maxpool2d);
  if (op == "AveragePool") return map_pool(n, OpKind::avgpool2d);
  if (op == "GlobalAveragePool") {
    const auto in = per_sample(n.input(0));
    if (!in || in->size() != 3) return unsupported(n, "only [N, C, H, W] inputs are mapped");
    return (void)add_node(n, OpKind::adaptive_avgpool2d, {x});
  }
  if (op == "Add") return map_add(n);
  if (op == "Mul") return map_binary(n, OpKind::mul);
  if (op == "Sub") return map_binary(n, OpKind::sub);
  if (op == "Div") return map_binary(n, OpKind::div);
  if (op == "HardSwish") return (void)add_node(n, OpKind::hardswish, {x});
  if (op == "HardSigmoid") {
    // PyTorch's Hardsigmoid is relu6(x + 3)/6: ONNX's max(0, min(1, alpha·x + beta)) with
    // alpha = 1/6, beta = 0.5 (ONNX's defaults are 0.2 and 0.5, Keras's hard sigmoid).
    const float alpha = attr_float(n, "alpha", 0.2f), beta = attr_float(n, "beta", 0.5f);
    if (std::abs(alpha - 1.0f / 6.0f) > 1e-6f || beta != 0.5f) {
      return unsupported(
          n, "alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta) + " (hwprof's hardsigmoid is PyTorch's: alpha 1/6, beta 0.5)");
    }
    return (void)add_node(n, OpKind::hardsigmoid, {x});
  }
  if (op == "Flatten") {
    if (attr_int(n, "axis", 1) != 1)
      return unsupported(n, "Flatten with axis " + std::to_string(attr_int(n, "axis", 1)) + " (only 1 keeps the batch)");
    return (void)add_node(n, OpKind::flatten, {x});
  }
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") return map_reshape_like(n);
  if (op == "Transpose") return map_transpose(n);
  if (op == "ReduceMean") return map_reduce_mean(n);
  if (op == "Pad") return map_pad(n);
  if (op == "Softmax") return map_axis_op(n, OpKind::softmax);
  if (op == "Concat" && n.input_size() == 2 && kind_of(n.input(0)) == Value::Kind::expanded && is_activation(n.input(1))) {
    // ViT's torch.cat([class_token.expand(n, -1, -1), x], dim=1): a class token.
    const onnx::TensorProto* t = values_.at(n.input(0)).tensor;
    const auto in = per_sample(n.input(1));
    const Dims td(t->dims().begin(), t->dims().end());
    std::int64_t axis = attr_int(n, "axis", 0);
    if (axis < 0) axis += 3;
    if (!in || in->size() != 2 || axis != 1 || product(td) != (*in)[1] || td.back() != (*in)[1]) {
      return unsupported(n, "only a class token ([1, 1, D] expanded over the batch, put before [batch, T, D]) is mapped");
    }
    add_node(n, OpKind::cls_token, {values_.at(n.input(1)).node});
    graph_.nodes.back().initial_values.push_back(initial("weight", t->name(), {(*in)[1]}, floats(*t)));
    name_after_parameter(t->name());
    return;
  }
  if (op == "Concat") return map_axis_op(n, OpKind::concat);
  if (op == "Identity") return alias(n, n.input(0));
  if (op == "Dropout") {
    if (n.output_size() > 1 && !n.output(1).empty() && use_count(n.output(1)) > 0) return unsupported(n, "Dropout's mask output is used");
    Attributes a;
    a.p = attr_float(n, "ratio", 0.5f);
    if (n.input_size() > 1 && !n.input(1).empty()) {
      const onnx::TensorProto* r = constant(n.input(1));
      if (r == nullptr) return unsupported(n, "the ratio is computed in the graph");
      const std::vector<float> ratio = floats(*r);
      if (ratio.size() != 1) return unsupported(n, "the ratio is not one value");
      a.p = ratio[0];
    }
    if (!(a.p >= 0.0f && a.p < 1.0f)) fail(node_label(n) + ": ratio " + std::to_string(a.p) + " is not a probability in [0, 1)");
    return (void)add_node(n, OpKind::dropout, {x}, a);
  }
  unsupported(n, "no mapping onto hwprof's layers");
}

Graph Importer::run() {
  dir_ = std::filesystem::path(path_).parent_path();
  if (dir_.empty()) dir_ = ".";
  read_opset();
  prepare_input();
  check_external_data();
  validate_attributes(model_.graph(), 0);
  for (const auto& f : model_.functions()) {
    for (const auto& n : f.node()) {
      if (auto problem = detail::onnx_attribute_problem(n, opset_))
        fail("function '" + detail::printable_name(f.name()) + "': " + node_label(n) + ": " + *problem);
    }
  }
  infer();
  decode_constants();
  // Shape arithmetic that inference leaves unknown is evaluated and handed back, in rounds: each
  // makes the shapes after it known, which the next round's arithmetic reads (one round per
  // block of a deep transformer). Each round hands over at least one value, so they end.
  while (fold_shape_computations()) infer_shapes_only();
  index_values();
  const auto& g = model_.graph();
  if (g.output_size() != 1) fail("the graph has " + std::to_string(g.output_size()) + " outputs; hwprof runs models with one output");
  find_patterns();
  for (int i = 0; i < g.node_size(); ++i) {
    if (absorbed_[static_cast<std::size_t>(i)] != 0) continue;
    if (auto f = fusions_.find(i); f != fusions_.end()) {
      map_fusion(i, f->second);
    } else {
      map_node(g.node(i));
    }
  }
  const std::string& out = g.output(0).name();
  if (!unsupported_.empty() && (!options_.keep_unsupported || !is_activation(out))) {
    std::string list;
    for (const std::string& u : unsupported_) list += "\n  - " + u;
    for (const std::string& p : pattern_problems_) list += "\n  note: " + p;
    if (options_.keep_unsupported) {
      list +=
          "\n  The output's shape cannot be followed past them (ONNX's inference does not know a shape on the way), so the rest cannot be counted "
          "either.";
    }
    fail(std::to_string(unsupported_.size()) + " node" + (unsupported_.size() == 1 ? "" : "s") + " cannot be mapped onto hwprof's layers:" + list);
  }
  if (!is_activation(out)) fail("the graph's output '" + detail::printable_name(out) + "' does not depend on its input");
  if (pads_.count(out) != 0)
    fail("the graph's output '" + detail::printable_name(out) + "' is a Pad's, which hwprof only folds into a following Conv or AveragePool");
  const int last = values_.at(out).node;
  if (last == kModelInput) fail("the graph's output is its input: there are no layers");
  // Layers that do not lead to the output (dead branches) are dropped; what is left ends at it.
  std::vector<char> live(graph_.nodes.size(), 0);
  live[static_cast<std::size_t>(last)] = 1;
  for (int i = last; i >= 0; --i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    const Node& node = graph_.nodes[static_cast<std::size_t>(i)];
    for (int in : node.inputs) {
      if (in >= 0) live[static_cast<std::size_t>(in)] = 1;
    }
    if (node.attrs.tied_to >= 0) live[static_cast<std::size_t>(node.attrs.tied_to)] = 1;  // it holds the weight
  }
  std::vector<int> remap(graph_.nodes.size(), -2);
  std::vector<Node> kept;
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(graph_.nodes[i]));
    for (int& in : kept.back().inputs) in = in >= 0 ? remap[static_cast<std::size_t>(in)] : in;
    int& tied = kept.back().attrs.tied_to;
    if (tied >= 0) tied = remap[static_cast<std::size_t>(tied)];
  }
  graph_.nodes = std::move(kept);
  if (graph_.nodes.size() > static_cast<std::size_t>(kMaxLayers)) fail("the model has more than " + std::to_string(kMaxLayers) + " layers");
  return std::move(graph_);
}

}  // namespace

Result<Graph> import_onnx(std::string_view bytes, const std::string& path, const LoadOptions& options) {
  if (static_cast<std::int64_t>(bytes.size()) > kMaxOnnxBytes) {
    return Error{path + ": the file is " + std::to_string(bytes.size()) +
                 " bytes; an ONNX file is at most 2 GiB (protobuf's limit; larger models keep their weights in external data files)"};
  }
  if (bytes.empty()) return Error{path + ": the file is empty; expected an ONNX model"};
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Error{path + ": not a valid ONNX model (the protobuf message does not parse: truncated or not an .onnx file?)"};
  }
  if (!model.has_graph()) return Error{path + ": the ONNX model has no graph"};
  Graph graph;
  std::unordered_map<std::string, Shape> expected;
  try {
    Importer importer(model, path, options);
    graph = importer.run();
    expected = std::move(importer.expected);
  } catch (const ImportError& e) {
    return Error{detail::printable_message(e.message)};
  } catch (const std::exception& e) {
    return Error{path + ": cannot import the ONNX model: " + detail::printable_message(e.what())};
  }

  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0) base.resize(base.size() - 5);
  graph.name = model.graph().name().empty() || model.graph().name() == "main_graph" || model.graph().name() == "torch_jit"
                   ? base
                   : detail::printable_name(model.graph().name());
  graph.source = SourceText(path, std::string());
  if (auto error = detail::infer_shapes(graph)) return Error{path + ": the mapped graph is inconsistent (" + error->message + ")"};
  for (const Node& node : graph.nodes) {
    auto it = expected.find(node.name);
    if (it != expected.end() && it->second != node.output_shape) {
      return Error{path + ": layer '" + node.name + "' (" + node.spec_pointer + "): hwprof's shape " + format_shape(node.output_shape) +
                   " differs from ONNX's " + format_shape(it->second) + "; the mapping is wrong, please report it"};
    }
  }
  return graph;
}

#endif  // HWPROF_HAVE_ONNX

}  // namespace hwprof
