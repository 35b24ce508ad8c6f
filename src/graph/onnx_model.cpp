// The ONNX importer's reading of the ModelProto (docs/onnx.md, "What a file must be"): the
// opset, the one input and its batch, every node's attributes checked before ONNX's inference
// reads them, Constant nodes decoded, initializers read from the file or from external data
// files inside the model's folder, and the index of every value by name.
#include "graph/onnx_importer.hpp"

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/input_file.hpp"
#include "common/stages.hpp"
#include "graph/onnx_attributes.hpp"

namespace hwprof::graph {

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
  if (!in.type().has_tensor_type()) fail("input '" + common::printable_name(input_name_) + "' is not a tensor");
  const int elem = in.type().tensor_type().elem_type();
  if (elem == onnx::TensorProto_DataType_FLOAT) {
    graph_.input.dtype = DType::f32;
  } else if (elem == onnx::TensorProto_DataType_INT64 || elem == onnx::TensorProto_DataType_INT32) {
    graph_.input.dtype = DType::i32;
  } else {
    fail("input '" + common::printable_name(input_name_) + "' has element type " +
         onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem)) +
         "; hwprof reads float32 inputs (images, features) and int64/int32 token ids");
  }
  if (!in.type().tensor_type().has_shape() || in.type().tensor_type().shape().dim_size() < 2) {
    fail("input '" + common::printable_name(input_name_) + "' needs a shape [batch, ...] of rank 2 or more");
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
      fail("input '" + common::printable_name(input_name_) + "' dimension " + std::to_string(i) + " is " +
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
    if (auto problem = graph::onnx_attribute_problem(n, opset_)) fail(node_label(n) + ": " + *problem);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) validate_attributes(a.g(), depth + 1);
      for (const auto& sub : a.graphs()) validate_attributes(sub, depth + 1);
    }
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
    fail("initializer '" + common::printable_name(t.name()) + "': external data location '" + location +
         "' must be a path relative to the model's folder");
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(dir_, ec);
  const fs::path file = fs::weakly_canonical(dir_ / rel, ec);
  const auto [end, _] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (ec || end != base.end()) {
    fail("initializer '" + common::printable_name(t.name()) + "': external data location '" + location + "' is outside the model's folder " +
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
      fail("initializer '" + common::printable_name(t.name()) + "': external data '" + kv.key() + "' is not a number: '" + kv.value() + "'");
    }
  }
  const std::filesystem::path file = external_file(t);
  auto text = common::read_input_file(file.string(), "ONNX external data", static_cast<std::size_t>(kMaxOnnxBytes));
  if (!text) fail("initializer '" + common::printable_name(t.name()) + "': " + text.error().message);
  if (offset < 0 || offset > static_cast<std::int64_t>(text->size())) {
    fail("initializer '" + common::printable_name(t.name()) + "': external data offset " + std::to_string(offset) + " is past the end of " +
         file.string());
  }
  if (length < 0) length = static_cast<std::int64_t>(text->size()) - offset;
  if (length > static_cast<std::int64_t>(text->size()) - offset) {
    fail("initializer '" + common::printable_name(t.name()) + "': external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
         ") runs past the end of " + file.string() + " (" + std::to_string(text->size()) + " bytes)");
  }
  return text->substr(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
}

std::vector<float> Importer::floats(const onnx::TensorProto& t) const {
  std::int64_t n = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && n > (std::int64_t{1} << 40) / d)) fail("initializer '" + common::printable_name(t.name()) + "' has an impossible shape");
    n *= d;
  }
  std::vector<float> out;
  if (t.data_type() == onnx::TensorProto_DataType_FLOAT) {
    if (t.float_data_size() > 0) {
      out.assign(t.float_data().begin(), t.float_data().end());
    } else {
      const std::string raw = raw_bytes(t);
      if (static_cast<std::int64_t>(raw.size()) != n * 4) {
        fail("initializer '" + common::printable_name(t.name()) + "' holds " + std::to_string(raw.size()) + " bytes; its shape " +
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
        fail("initializer '" + common::printable_name(t.name()) + "' has the wrong number of bytes");
      for (std::int64_t i = 0; i < n; ++i) {
        double v = 0;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out.push_back(static_cast<float>(v));
      }
    }
  } else {
    fail("initializer '" + common::printable_name(t.name()) + "' has element type " +
         onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t.data_type())) + "; hwprof's engine reads float32 weights");
  }
  if (static_cast<std::int64_t>(out.size()) != n) {
    fail("initializer '" + common::printable_name(t.name()) + "' holds " + std::to_string(out.size()) + " values; its shape needs " +
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

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
