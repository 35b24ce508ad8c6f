// ONNX import: an .onnx ModelProto read with Debian's libonnx (its protobuf types, checker and
// shape inference), mapped onto hwprof's Graph, one node per layer, named after the exporter's
// module path, with the initializers as the layers' initial values. This file holds the entry
// point and Importer::run, the steps in order; onnx_importer.hpp lists the files of each step.
//
// Op semantics follow the ONNX operator specification (https://onnx.ai/onnx/operators/, opsets
// 11 to 17); PyTorch's node naming ("/layer1/layer1.0/conv1/Conv", torch >= 1.13) is what the
// module paths are read from.
#include <algorithm>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/printable.hpp"
#include "graph/shape_inference.hpp"
#include "hwprof/engine/graph.hpp"

#if HWPROF_HAVE_ONNX
#include "common/stages.hpp"
#include "graph/onnx_attributes.hpp"
#include "graph/onnx_importer.hpp"
#include "ops/convolution.hpp"
#include "ops/normalization.hpp"
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

namespace graph {

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
  base = common::printable_name(base);
  std::string name = base;
  for (int k = 1; names_taken_.count(name) != 0; ++k) {
    name = base + "." + common::printable_name(lower(n.op_type())) + (k > 1 ? "_" + std::to_string(k) : "");
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
    if (const auto out = sample_shape(n.output(0))) expected[node.name] = *out;
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
  const std::string source_op = common::printable_name(n.op_type()) + " (opset " + std::to_string(opset_) + ")";
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

Graph Importer::run() {
  dir_ = std::filesystem::path(path_).parent_path();
  if (dir_.empty()) dir_ = ".";
  read_opset();
  prepare_input();
  check_external_data();
  validate_attributes(model_.graph(), 0);
  for (const auto& f : model_.functions()) {
    for (const auto& n : f.node()) {
      if (auto problem = graph::onnx_attribute_problem(n, opset_))
        fail("function '" + common::printable_name(f.name()) + "': " + node_label(n) + ": " + *problem);
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
  if (!is_activation(out)) fail("the graph's output '" + common::printable_name(out) + "' does not depend on its input");
  if (pads_.count(out) != 0)
    fail("the graph's output '" + common::printable_name(out) + "' is a Pad's, which hwprof only folds into a following Conv or AveragePool");
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
  note_folded_batchnorm();
  return std::move(graph_);
}

// torch.onnx.export in evaluation mode (its default, training=TrainingMode.EVAL) folds each
// BatchNorm into the convolution before it: the convolution gets a bias, and a weight the
// exporter computed, an initializer named "onnx::Conv_<n>" instead of after a module's
// parameter ("layer1.0.conv1.weight"). The file then has no batch norm, and its parameters are
// fewer than the module's sum(p.numel()). A convolution with a bias of its own and no batch norm
// in the graph (VGG's) keeps its parameter's name and is not taken for a folded one.
void Importer::note_folded_batchnorm() {
  int folded = 0;
  for (const Node& node : graph_.nodes) {
    const ops::NormalizationDefinition* norm = ops::normalization_definition(node.op);
    if (norm != nullptr && norm->statistics == ops::NormStatistics::per_channel) return;
    if (ops::convolution_definition(node.op) == nullptr || !node.attrs.bias) continue;
    for (const InitialValue& v : node.initial_values) {
      if (v.name == "weight" && v.origin.starts_with("initializer 'onnx::")) ++folded;
    }
  }
  if (folded == 0) return;
  graph_.notes.push_back(std::to_string(folded) + " convolution" + (folded == 1 ? " has" : "s have") +
                         " a bias and a weight the exporter computed (initializers named onnx::Conv_...), and the file has no batch norm: "
                         "PyTorch folded each BatchNorm into the convolution before it (torch.onnx.export's default, "
                         "training=TrainingMode.EVAL). The parameters counted are the file's, fewer than the model's sum(p.numel()) by "
                         "each BatchNorm's weight and bias, and the batch norms' own FLOPs and bytes are not counted. Export with "
                         "training=torch.onnx.TrainingMode.PRESERVE (the model in eval mode) to see each BatchNorm as a layer of its own.");
}

}  // namespace graph

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
    graph::Importer importer(model, path, options);
    graph = importer.run();
    expected = std::move(importer.expected);
  } catch (const graph::ImportError& e) {
    return Error{common::printable_message(e.message)};
  } catch (const std::exception& e) {
    return Error{path + ": cannot import the ONNX model: " + common::printable_message(e.what())};
  }

  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.size() > 5 && base.compare(base.size() - 5, 5, ".onnx") == 0) base.resize(base.size() - 5);
  graph.name = model.graph().name().empty() || model.graph().name() == "main_graph" || model.graph().name() == "torch_jit"
                   ? base
                   : common::printable_name(model.graph().name());
  graph.source = SourceText(path, std::string());
  if (auto error = graph::infer_shapes(graph)) return Error{path + ": the mapped graph is inconsistent (" + error->message + ")"};
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
