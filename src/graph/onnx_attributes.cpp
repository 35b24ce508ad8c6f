// Rules from the ONNX operator specification (https://onnx.ai/onnx/operators/, opsets 11 to
// 17): what each attribute means decides what it must be. ONNX's reference shape inference
// (onnx/defs/nn/defs.cc, convPoolShapeInference) divides by strides and group and sizes with
// kernel_shape, dilations and pads without checking them; DepthToSpace and SpaceToDepth divide
// by blocksize.
#include "graph/onnx_attributes.hpp"

#if HWPROF_HAVE_ONNX

#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/elementwise_unary.hpp"

namespace hwprof::graph {
namespace {

const std::set<std::string_view> kWindowOps = {"Conv",   "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",   "AveragePool",
                                               "LpPool", "MaxUnpool",     "DeformConv",  "Col2Im",      "MaxRoiPool"};
const std::set<std::string_view> kGroupOps = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv"};
const std::set<std::string_view> kAxisOps = {
    "Softmax", "LogSoftmax", "Hardmax", "Concat",   "Flatten", "Gather",          "GatherElements", "Split",           "LayerNormalization",
    "ArgMax",  "ArgMin",     "CumSum",  "Compress", "OneHot",  "ScatterElements", "QuantizeLinear", "DequantizeLinear"};
const std::set<std::string_view> kAxesOps = {"Squeeze",
                                             "Unsqueeze",
                                             "ReduceMean",
                                             "ReduceSum",
                                             "ReduceMax",
                                             "ReduceMin",
                                             "ReduceProd",
                                             "ReduceL1",
                                             "ReduceL2",
                                             "ReduceLogSum",
                                             "ReduceLogSumExp",
                                             "ReduceSumSquare",
                                             "MeanVarianceNormalization"};
const std::set<std::string_view> kEpsilonOps = {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization"};

const onnx::AttributeProto* find(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::string show(std::int64_t v) {
  return std::to_string(v);
}

// Every value of the ints attribute `name` within [low, high]; `what` says why
// ("strides must be >= 1").
std::optional<std::string> ints_within(const onnx::NodeProto& n, std::string_view name, std::int64_t low, std::int64_t high) {
  const auto* a = find(n, name);
  if (a == nullptr) return std::nullopt;
  if (a->ints_size() > kMaxRank * 2) {
    return "attribute " + std::string(name) + " has " + show(a->ints_size()) + " values; hwprof reads tensors of at most " + show(kMaxRank) + " axes";
  }
  for (int i = 0; i < a->ints_size(); ++i) {
    const std::int64_t v = a->ints(i);
    if (v < low)
      return "attribute " + std::string(name) + " has " + show(v) + " at position " + show(i) + "; " + std::string(name) + " must be >= " + show(low);
    if (v > high)
      return "attribute " + std::string(name) + " has " + show(v) + " at position " + show(i) + "; " + std::string(name) + " must be at most " +
             show(high);
  }
  return std::nullopt;
}

std::optional<std::string> int_within(const onnx::NodeProto& n, std::string_view name, std::int64_t low, std::int64_t high) {
  const auto* a = find(n, name);
  if (a == nullptr) return std::nullopt;
  if (a->i() < low) return "attribute " + std::string(name) + " is " + show(a->i()) + "; " + std::string(name) + " must be >= " + show(low);
  if (a->i() > high) return "attribute " + std::string(name) + " is " + show(a->i()) + "; " + std::string(name) + " must be at most " + show(high);
  return std::nullopt;
}

// Conv, ConvTranspose and the pools: every window attribute within range, and their lengths
// agreeing (one value per spatial axis; pads two).
std::optional<std::string> window_problem(const onnx::NodeProto& n) {
  const std::int64_t kMax = kMaxWindowAttribute;
  for (const char* name : {"kernel_shape", "strides", "dilations"}) {
    if (auto p = ints_within(n, name, 1, kMax)) return p;
  }
  for (const char* name : {"pads", "output_padding"}) {
    if (auto p = ints_within(n, name, 0, kMax)) return p;
  }
  if (auto p = ints_within(n, "output_shape", 1, kMax)) return p;
  if (kGroupOps.count(n.op_type()) != 0) {
    if (auto p = int_within(n, "group", 1, kMax)) return p;
  }
  const auto* kernel = find(n, "kernel_shape");
  if (kernel == nullptr && (n.op_type() == "MaxPool" || n.op_type() == "AveragePool" || n.op_type() == "LpPool")) {
    return "attribute kernel_shape is missing; " + n.op_type() + " needs one";
  }
  if (kernel != nullptr && kernel->ints_size() == 0) return "attribute kernel_shape is empty; it needs one value per spatial axis";
  std::int64_t axes = kernel != nullptr ? kernel->ints_size() : -1;
  const char* axes_from = "kernel_shape";
  for (const char* name : {"strides", "dilations", "output_padding", "output_shape"}) {
    const auto* a = find(n, name);
    if (a == nullptr) continue;
    if (axes < 0) {
      axes = a->ints_size();
      axes_from = name;
    } else if (a->ints_size() != axes) {
      return "attribute " + std::string(name) + " has " + show(a->ints_size()) + " values but " + axes_from + " has " + show(axes) +
             "; both need one per spatial axis";
    }
  }
  if (const auto* pads = find(n, "pads")) {
    if (pads->ints_size() % 2 != 0 || (axes >= 0 && pads->ints_size() != 2 * axes)) {
      return "attribute pads has " + show(pads->ints_size()) + " values; it needs two per spatial axis (begin and end" +
             (axes >= 0 ? ", " + show(2 * axes) + " here" : std::string()) + ")";
    }
  }
  if (const auto* auto_pad = find(n, "auto_pad")) {
    const std::string& v = auto_pad->s();
    if (v != "NOTSET" && v != "SAME_UPPER" && v != "SAME_LOWER" && v != "VALID") {
      return "attribute auto_pad is '" + v + "'; ONNX's values are NOTSET, SAME_UPPER, SAME_LOWER and VALID";
    }
  }
  if (auto p = int_within(n, "ceil_mode", 0, 1)) return p;
  return int_within(n, "storage_order", 0, 1);
}

// A float attribute that a formula adds under a square root or multiplies by: finite, and
// within [low, high).
std::optional<std::string> float_within(const onnx::NodeProto& n, std::string_view name, double low, double high, std::string_view rule) {
  const auto* a = find(n, name);
  if (a == nullptr) return std::nullopt;
  const double v = a->f();
  if (std::isfinite(v) && v >= low && v < high) return std::nullopt;
  return "attribute " + std::string(name) + " is " + std::to_string(v) + "; " + std::string(name) + " must be " + std::string(rule);
}

}  // namespace

std::optional<std::string> onnx_attribute_problem(const onnx::NodeProto& n, int opset) {
  const std::string& op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return std::nullopt;  // another domain's op: not read, not inferred
  if (kWindowOps.count(op) != 0) {
    if (auto p = window_problem(n)) return p;
  }
  if (kAxisOps.count(op) != 0) {
    if (auto p = int_within(n, "axis", -kMaxRank, kMaxRank - 1)) return *p + " (a tensor has at most " + show(kMaxRank) + " axes)";
  }
  if (kAxesOps.count(op) != 0) {
    if (auto p = ints_within(n, "axes", -kMaxRank, kMaxRank - 1)) return *p + " (a tensor has at most " + show(kMaxRank) + " axes)";
  }
  if (op == "Transpose") {
    if (auto p = ints_within(n, "perm", 0, kMaxRank - 1)) return p;
  }
  if (op == "Split") {
    if (auto p = ints_within(n, "split", 0, std::int64_t{1} << 40)) return p;
  }
  if (op == "DepthToSpace" || op == "SpaceToDepth") {
    if (auto p = int_within(n, "blocksize", 1, kMaxWindowAttribute)) return p;
    if (find(n, "blocksize") == nullptr) return "attribute blocksize is missing; " + op + " needs one";
  }
  if (op == "LRN") {
    if (auto p = int_within(n, "size", 1, kMaxWindowAttribute)) return p;
  }
  if (kEpsilonOps.count(op) != 0) {
    if (auto p = float_within(n, "epsilon", 0.0, HUGE_VAL, "a finite number >= 0")) return p;
    if (auto p = float_within(n, "momentum", 0.0, HUGE_VAL, "a finite number >= 0")) return p;
  }
  // An element-wise op's number (LeakyRelu's slope, Shrink's lambd), multiplied into or compared
  // with what its kernel computes, and the attributes its definition fixes: finite.
  if (const UnaryDefinition* d = unary_for_onnx(op); d != nullptr) {
    if (!d->onnx.parameter.empty()) {
      if (auto p = float_within(n, d->onnx.parameter, -HUGE_VAL, HUGE_VAL, "a finite number")) return p;
    }
    for (const OnnxFixedAttribute& f : d->onnx.fixed) {
      if (auto p = float_within(n, f.name, -HUGE_VAL, HUGE_VAL, "a finite number")) return p;
    }
  }
  if (op == "Dropout" && opset < 12) {
    if (auto p = float_within(n, "ratio", 0.0, 1.0, "a probability in [0, 1)")) return p;
  }
  if (op == "Reshape") {
    if (auto p = int_within(n, "allowzero", 0, 1)) return p;
  }
  return std::nullopt;
}

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
