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
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/input_file.hpp"
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

bool onnx_supported() noexcept { return false; }

Result<Graph> import_onnx(std::string_view, const std::string& path) {
  return Error{path + ": this hwprof was built without ONNX support; install libonnx-dev (scripts/install-deps.sh) and build "
                      "again, or describe the model as a JSON spec (docs/ in the repository)"};
}

#else

bool onnx_supported() noexcept { return true; }

namespace {

constexpr std::int64_t kProbeBatch = 9973;
constexpr int kMinOpset = 11;
constexpr int kMaxOpset = 17;

using Dims = std::vector<std::int64_t>;  // -1: unknown

struct ImportError {
  std::string message;
};

// One ONNX value as the import sees it.
struct Value {
  enum class Kind { activation, constant, shape_only, unmapped };
  Kind kind = Kind::shape_only;
  int node = kModelInput;                    // activation: the hwprof node (or the model input)
  const onnx::TensorProto* tensor = nullptr; // constant: its data
};

std::string dims_text(const Dims& d) {
  std::string out = "[";
  for (std::size_t i = 0; i < d.size(); ++i) out += (i ? ", " : "") + (d[i] < 0 ? std::string("?") : std::to_string(d[i]));
  return out + "]";
}

std::int64_t product(const Dims& d) {
  std::int64_t n = 1;
  for (std::int64_t x : d) n *= x;
  return n;
}

// "/layer1/layer1.0/conv1/Conv" → "layer1.0.conv1": each segment is either the full dotted
// path so far extended ("layer1" → "layer1.0") or a child's own name ("conv1").
std::string module_path(const std::string& node_name) {
  if (node_name.empty() || node_name[0] != '/') return {};
  std::vector<std::string> segments;
  std::size_t start = 1;
  while (start <= node_name.size()) {
    const std::size_t slash = node_name.find('/', start);
    const std::size_t end = slash == std::string::npos ? node_name.size() : slash;
    if (end > start) segments.push_back(node_name.substr(start, end - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (segments.size() < 2) return {};
  segments.pop_back();  // the op itself ("Conv", "Add_1")
  std::string path;
  for (const std::string& s : segments) {
    if (!path.empty() && s.rfind(path + ".", 0) == 0) {
      path = s;
    } else {
      path = path.empty() ? s : path + "." + s;
    }
  }
  return path;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class Importer {
 public:
  Importer(onnx::ModelProto& model, std::string path) : model_(model), path_(std::move(path)) {}

  Graph run();
  // Each layer's output shape as ONNX's shape inference has it, per sample, by layer name:
  // hwprof's own inference of the mapped graph must agree.
  std::unordered_map<std::string, Shape> expected;

 private:
  [[noreturn]] void fail(const std::string& message) const { throw ImportError{path_ + ": " + message}; }
  std::string describe(const onnx::NodeProto& n) const {
    return n.op_type() + " '" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "'";
  }

  int opset() const { return opset_; }
  void read_opset();
  void prepare_input();
  void infer();
  void index_values();
  void map_node(const onnx::NodeProto& n);
  void unsupported(const onnx::NodeProto& n, const std::string& why) {
    unsupported_.push_back(describe(n) + " (opset " + std::to_string(opset_) + "): " + why);
    for (const std::string& out : n.output()) values_[out].kind = Value::Kind::unmapped;
  }

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
  std::string raw_bytes(const onnx::TensorProto& t) const;
  InitialValue initial(const std::string& param, const std::string& value_name, Shape shape, std::vector<float> data) const {
    return InitialValue{param, std::move(shape), std::make_shared<const std::vector<float>>(std::move(data)), "initializer '" + value_name + "'"};
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
  void map_matmul(const onnx::NodeProto& n);
  void map_batchnorm(const onnx::NodeProto& n);
  void map_pool(const onnx::NodeProto& n, OpKind op);
  void map_add(const onnx::NodeProto& n);
  void map_clip(const onnx::NodeProto& n);
  void map_reshape_like(const onnx::NodeProto& n);
  void map_transpose(const onnx::NodeProto& n);
  void map_axis_op(const onnx::NodeProto& n, OpKind op);
  std::optional<Pair> symmetric_pads(const onnx::NodeProto& n, const Shape& in, Pair kernel, Pair stride, Pair dilation, std::string* why);

  onnx::ModelProto& model_;
  std::string path_;
  std::filesystem::path dir_;
  Graph graph_;
  int opset_ = 0;
  std::string input_name_;
  std::int64_t batch_ = 0;
  std::unordered_map<std::string, Dims> dims_;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> uses_;  // consumers of each value (graph outputs count)
  std::unordered_map<std::string, int> names_taken_;
  std::unordered_map<std::string, int> initializer_owner_;  // initializer → first layer that used it as a weight
  std::deque<onnx::TensorProto> made_tensors_;             // Constant nodes' values given as value_float etc.
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
  if (!in.type().has_tensor_type()) fail("input '" + input_name_ + "' is not a tensor");
  const int elem = in.type().tensor_type().elem_type();
  if (elem == onnx::TensorProto_DataType_FLOAT) {
    graph_.input.dtype = DType::f32;
  } else if (elem == onnx::TensorProto_DataType_INT64 || elem == onnx::TensorProto_DataType_INT32) {
    graph_.input.dtype = DType::i32;
  } else {
    fail("input '" + input_name_ + "' has element type " + onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem)) +
         "; hwprof reads float32 inputs (images, features) and int64/int32 token ids");
  }
  if (!in.type().tensor_type().has_shape() || in.type().tensor_type().shape().dim_size() < 2) {
    fail("input '" + input_name_ + "' needs a shape [batch, ...] of rank 2 or more");
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
      fail("input '" + input_name_ + "' dimension " + std::to_string(i) + " is " +
           (d.has_dim_param() ? "symbolic ('" + d.dim_param() + "')" : std::string("unknown")) +
           "; hwprof needs every dimension but the batch fixed (export with a fixed example input and without dynamic_axes for it)");
    }
    graph_.input.shape.push_back(d.dim_value());
  }
}

void Importer::infer() {
  try {
    onnx::checker::check_model(model_);
  } catch (const std::exception& e) {
    fail(std::string("the ONNX checker refuses the model: ") + e.what());
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1, /*enable_data_propagation=*/true);
    onnx::shape_inference::InferShapes(model_, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    fail(std::string("ONNX shape inference failed: ") + e.what());
  }
}

void Importer::index_values() {
  const auto& g = model_.graph();
  auto record = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    Dims d;
    for (const auto& dim : v.type().tensor_type().shape().dim()) d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    dims_[v.name()] = std::move(d);
  };
  for (const auto& v : g.input()) record(v);
  for (const auto& v : g.value_info()) record(v);
  for (const auto& v : g.output()) record(v);
  for (const auto& t : g.initializer()) {
    values_[t.name()] = Value{Value::Kind::constant, kModelInput, &t};
    dims_[t.name()] = Dims(t.dims().begin(), t.dims().end());
  }
  values_[input_name_] = Value{Value::Kind::activation, kModelInput, nullptr};
  for (const auto& n : g.node()) {
    for (const std::string& in : n.input()) ++uses_[in];
  }
  for (const auto& out : g.output()) ++uses_[out.name()];
}

std::string Importer::raw_bytes(const onnx::TensorProto& t) const {
  if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return t.raw_data();
  std::string location;
  std::int64_t offset = 0;
  std::int64_t length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      fail("initializer '" + t.name() + "': external data '" + kv.key() + "' is not a number: '" + kv.value() + "'");
    }
  }
  namespace fs = std::filesystem;
  const fs::path rel(location);
  if (location.empty() || rel.is_absolute()) {
    fail("initializer '" + t.name() + "': external data location '" + location + "' must be a path relative to the model's folder");
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir_, ec);
  const fs::path file = fs::weakly_canonical(dir_ / rel, ec);
  const auto [end, _] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (ec || end != base.end()) {
    fail("initializer '" + t.name() + "': external data location '" + location + "' is outside the model's folder " + base.string() +
         "; refused");
  }
  auto text = detail::read_input_file(file.string(), "ONNX external data", static_cast<std::size_t>(kMaxOnnxBytes));
  if (!text) fail("initializer '" + t.name() + "': " + text.error().message);
  if (offset < 0 || offset > static_cast<std::int64_t>(text->size())) {
    fail("initializer '" + t.name() + "': external data offset " + std::to_string(offset) + " is past the end of " + file.string());
  }
  if (length < 0) length = static_cast<std::int64_t>(text->size()) - offset;
  if (length > static_cast<std::int64_t>(text->size()) - offset) {
    fail("initializer '" + t.name() + "': external data [" + std::to_string(offset) + ", +" + std::to_string(length) + ") runs past the end of " +
         file.string() + " (" + std::to_string(text->size()) + " bytes)");
  }
  return text->substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

std::vector<float> Importer::floats(const onnx::TensorProto& t) const {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > (std::int64_t{1} << 40) / d)) fail("initializer '" + t.name() + "' has an impossible shape");
    n *= d;
  }
  std::vector<float> out;
  if (t.data_type() == onnx::TensorProto_DataType_FLOAT) {
    if (t.float_data_size() > 0) {
      out.assign(t.float_data().begin(), t.float_data().end());
    } else {
      const std::string raw = raw_bytes(t);
      if (static_cast<std::int64_t>(raw.size()) != n * 4) {
        fail("initializer '" + t.name() + "' holds " + std::to_string(raw.size()) + " bytes; its shape " +
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
      if (static_cast<std::int64_t>(raw.size()) != n * 8) fail("initializer '" + t.name() + "' has the wrong number of bytes");
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out.push_back(static_cast<float>(v));
      }
    }
  } else {
    fail("initializer '" + t.name() + "' has element type " + onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())) +
         "; hwprof's engine reads float32 weights");
  }
  if (static_cast<std::int64_t>(out.size()) != n) {
    fail("initializer '" + t.name() + "' holds " + std::to_string(out.size()) + " values; its shape needs " + std::to_string(n));
  }
  return out;
}

std::string Importer::layer_name(const onnx::NodeProto& n) {
  std::string base = module_path(n.name());
  if (base.empty()) {
    // A top-level op ("/Flatten", "/Add_1") or a file without module paths.
    const std::string& full = n.name();
    const std::size_t slash = full.rfind('/');
    base = full.empty() ? lower(n.op_type()) : slash == std::string::npos ? full : lower(full.substr(slash + 1));
    if (base.empty()) base = lower(n.op_type());
  }
  std::string name = base;
  for (int k = 1; names_taken_.count(name) != 0; ++k) name = base + "." + lower(n.op_type()) + (k > 1 ? "_" + std::to_string(k) : "");
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

std::optional<Pair> Importer::symmetric_pads(const onnx::NodeProto& n, const Shape& in, Pair kernel, Pair stride, Pair dilation,
                                             std::string* why) {
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
  if (!in || in->size() != 3) return unsupported(n, "only 2-D convolutions of [N, C, H, W] inputs are mapped (input " + dims_text(dims_of(n.input(0))) + ")");
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
  a.padding = *pads;
  a.bias = b != nullptr;
  const int index = add_node(n, OpKind::conv2d, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  node.initial_values.push_back(initial("weight", w->name(), {w->dims(0), w->dims(1), w->dims(2), w->dims(3)}, floats(*w)));
  if (b != nullptr) node.initial_values.push_back(initial("bias", b->name(), {a.out_channels}, floats(*b)));
  initializer_owner_.emplace(w->name(), index);
}

void Importer::map_gemm(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->size() != 1) return unsupported(n, "Gemm is mapped as a linear layer of [N, K] inputs (input " + dims_text(dims_of(n.input(0))) + ")");
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
  std::vector<float> weight = floats(*w);
  if (!trans_b) {  // [K, N] → [N, K]
    std::vector<float> t(weight.size());
    for (std::int64_t i = 0; i < k; ++i) {
      for (std::int64_t j = 0; j < out; ++j) t[static_cast<std::size_t>(j * k + i)] = weight[static_cast<std::size_t>(i * out + j)];
    }
    weight.swap(t);
  }
  Attributes a;
  a.out_features = out;
  a.bias = c != nullptr;
  const int index = add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
  Node& node = graph_.nodes.back();
  node.initial_values.push_back(initial("weight", w->name(), {out, k}, std::move(weight)));
  if (c != nullptr) node.initial_values.push_back(initial("bias", c->name(), {out}, floats(*c)));
  initializer_owner_.emplace(w->name(), index);
}

void Importer::map_matmul(const onnx::NodeProto& n) {
  const auto in = per_sample(n.input(0));
  const onnx::TensorProto* w = constant(n.input(1));
  if (!in || in->empty()) return unsupported(n, "the input's first axis is not the batch");
  if (w == nullptr) return unsupported(n, "a product of two activations is not mapped yet");
  if (w->dims_size() != 2) return unsupported(n, "B is an initializer of rank " + std::to_string(w->dims_size()) + ", not 2");
  const std::int64_t k = w->dims(0), out = w->dims(1);
  if (k != in->back()) return unsupported(n, "B's rows do not match the input's last axis");
  const std::vector<float> weight = floats(*w);
  std::vector<float> t(weight.size());
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < out; ++j) t[static_cast<std::size_t>(j * k + i)] = weight[static_cast<std::size_t>(i * out + j)];
  }
  Attributes a;
  a.out_features = out;
  a.bias = false;  // an Add of a bias right after it is folded in (map_add)
  const int index = add_node(n, OpKind::linear, {values_.at(n.input(0)).node}, a);
  graph_.nodes.back().initial_values.push_back(initial("weight", w->name(), {out, k}, std::move(t)));
  initializer_owner_.emplace(w->name(), index);
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
  if (op == OpKind::avgpool2d && (a.padding.h != 0 || a.padding.w != 0) && attr_int(n, "count_include_pad", 0) == 0) {
    return unsupported(n, "padded average pooling without count_include_pad (hwprof divides by the padded window, as PyTorch's default)");
  }
  if (op == OpKind::maxpool2d && attr_int(n, "storage_order", 0) != 0) return unsupported(n, "storage_order 1 is not mapped");
  add_node(n, op, {values_.at(n.input(0)).node}, a);
}

void Importer::map_add(const onnx::NodeProto& n) {
  const std::string& x = n.input(0);
  const std::string& y = n.input(1);
  if (is_activation(x) && is_activation(y)) {
    const auto sx = per_sample(x), sy = per_sample(y);
    if (!sx || !sy || *sx != *sy) return unsupported(n, "adds of different shapes (broadcasting) are not mapped yet: " + dims_text(dims_of(x)) + " + " + dims_text(dims_of(y)));
    add_node(n, OpKind::add, {values_.at(x).node, values_.at(y).node});
    return;
  }
  // A bias after a MatMul (PyTorch exports nn.Linear on 3-D inputs as MatMul + Add).
  const std::string& act = is_activation(x) ? x : y;
  const onnx::TensorProto* c = constant(is_activation(x) ? y : x);
  const Value& v = values_.at(act);
  if (c != nullptr && v.node >= 0 && uses_[act] == 1) {
    Node& producer = graph_.nodes[static_cast<std::size_t>(v.node)];
    if (producer.op == OpKind::linear && !producer.attrs.bias && product(Dims(c->dims().begin(), c->dims().end())) == producer.attrs.out_features) {
      producer.attrs.bias = true;
      producer.initial_values.push_back(initial("bias", c->name(), {producer.attrs.out_features}, floats(*c)));
      alias(n, act);
      return;
    }
  }
  unsupported(n, "an add of a constant tensor is not mapped yet (only a linear layer's bias is)");
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

void Importer::map_node(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return unsupported(n, "operator domain '" + n.domain() + "' is not the default ONNX one");
  if (op == "Constant") {
    const auto* value = attr(n, "value");
    if (value != nullptr && value->has_t()) {
      values_[n.output(0)] = Value{Value::Kind::constant, kModelInput, &value->t()};
    } else {
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
        return;
      }
      made_tensors_.push_back(std::move(t));
      values_[n.output(0)] = Value{Value::Kind::constant, kModelInput, &made_tensors_.back()};
    }
    return;
  }
  // A node none of whose inputs is an activation computes shapes or folds constants: it is not
  // a layer (its outputs are known to ONNX's shape inference where a layer needs them).
  bool any_activation = false, any_unmapped = false;
  for (const std::string& in : n.input()) {
    any_activation |= is_activation(in);
    any_unmapped |= !in.empty() && kind_of(in) == Value::Kind::unmapped;
  }
  if (any_unmapped) {
    for (const std::string& out : n.output()) values_[out].kind = Value::Kind::unmapped;
    return;
  }
  if (!any_activation || op == "Shape" || op == "Size") {
    for (const std::string& out : n.output()) values_[out] = Value{Value::Kind::shape_only, kModelInput, nullptr};
    return;
  }
  if (!is_activation(n.input(0)) && op != "Add" && op != "Concat") return unsupported(n, "the first input is a constant, not an activation");
  const int x = values_.at(n.input(0)).node;
  if (op == "Conv") return map_conv(n);
  if (op == "Gemm") return map_gemm(n);
  if (op == "MatMul") return map_matmul(n);
  if (op == "BatchNormalization") return map_batchnorm(n);
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
  if (op == "Flatten") {
    if (attr_int(n, "axis", 1) != 1) return unsupported(n, "Flatten with axis " + std::to_string(attr_int(n, "axis", 1)) + " (only 1 keeps the batch)");
    return (void)add_node(n, OpKind::flatten, {x});
  }
  if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze") return map_reshape_like(n);
  if (op == "Transpose") return map_transpose(n);
  if (op == "Softmax") return map_axis_op(n, OpKind::softmax);
  if (op == "Concat") return map_axis_op(n, OpKind::concat);
  if (op == "Identity") return alias(n, n.input(0));
  if (op == "Dropout") {
    if (n.output_size() > 1 && !n.output(1).empty() && uses_[n.output(1)] > 0) return unsupported(n, "Dropout's mask output is used");
    Attributes a;
    a.p = attr_float(n, "ratio", 0.5f);
    if (n.input_size() > 1 && !n.input(1).empty()) {
      const onnx::TensorProto* r = constant(n.input(1));
      if (r == nullptr) return unsupported(n, "the ratio is computed in the graph");
      a.p = floats(*r).at(0);
    }
    return (void)add_node(n, OpKind::dropout, {x}, a);
  }
  unsupported(n, "no mapping onto hwprof's layers");
}

Graph Importer::run() {
  dir_ = std::filesystem::path(path_).parent_path();
  if (dir_.empty()) dir_ = ".";
  read_opset();
  prepare_input();
  infer();
  index_values();
  const auto& g = model_.graph();
  if (g.output_size() != 1) fail("the graph has " + std::to_string(g.output_size()) + " outputs; hwprof runs models with one output");
  for (const auto& n : g.node()) map_node(n);
  if (!unsupported_.empty()) {
    std::string list;
    for (const std::string& u : unsupported_) list += "\n  - " + u;
    fail(std::to_string(unsupported_.size()) + " node" + (unsupported_.size() == 1 ? "" : "s") + " cannot be mapped onto hwprof's layers:" + list);
  }
  const std::string& out = g.output(0).name();
  if (!is_activation(out)) fail("the graph's output '" + out + "' does not depend on its input");
  const int last = values_.at(out).node;
  if (last == kModelInput) fail("the graph's output is its input: there are no layers");
  // Layers that do not lead to the output (dead branches) are dropped; what is left ends at it.
  std::vector<char> live(graph_.nodes.size(), 0);
  live[static_cast<std::size_t>(last)] = 1;
  for (int i = last; i >= 0; --i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    for (int in : graph_.nodes[static_cast<std::size_t>(i)].inputs) {
      if (in >= 0) live[static_cast<std::size_t>(in)] = 1;
    }
  }
  std::vector<int> remap(graph_.nodes.size(), -2);
  std::vector<Node> kept;
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    if (!live[i]) continue;
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(graph_.nodes[i]));
    for (int& in : kept.back().inputs) in = in >= 0 ? remap[static_cast<std::size_t>(in)] : in;
  }
  graph_.nodes = std::move(kept);
  if (graph_.nodes.size() > static_cast<std::size_t>(kMaxLayers)) fail("the model has more than " + std::to_string(kMaxLayers) + " layers");
  return std::move(graph_);
}

}  // namespace

Result<Graph> import_onnx(std::string_view bytes, const std::string& path) {
  if (static_cast<std::int64_t>(bytes.size()) > kMaxOnnxBytes) {
    return Error{path + ": the file is " + std::to_string(bytes.size()) + " bytes; an ONNX file is at most 2 GiB (protobuf's limit; larger models keep their weights in external data files)"};
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
    Importer importer(model, path);
    graph = importer.run();
    expected = std::move(importer.expected);
  } catch (const ImportError& e) {
    return Error{e.message};
  } catch (const std::exception& e) {
    return Error{path + ": cannot import the ONNX model: " + e.what()};
  }
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0) base.resize(base.size() - 5);
  graph.name = model.graph().name().empty() || model.graph().name() == "main_graph" || model.graph().name() == "torch_jit" ? base : model.graph().name();
  graph.source = SpecSource(path, std::string());
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
