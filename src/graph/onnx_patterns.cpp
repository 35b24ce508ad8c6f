// Patterns of several ONNX nodes that are one hwprof layer, found before the mapping starts
// (docs/onnx.md, "How ops map"): LayerNorm as opsets before 17 write it, GELU in its erf and
// tanh forms, SiLU, and attention from each Softmax with Q·Kᵀ before it and A·V after it.
#include "graph/onnx_importer.hpp"

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::graph {

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
  // An Add of a constant to the scores (the additive mask): that constant, else nullptr.
  const auto additive_mask = [this](const onnx::NodeProto& n) -> const onnx::TensorProto* {
    if (n.op_type() != "Add") return nullptr;
    if (const onnx::TensorProto* c = constant(n.input(0))) return c;
    return constant(n.input(1));
  };
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
    } else if (const onnx::TensorProto* mask = additive_mask(p)) {
      const bool first = mask == constant(p.input(0));
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
          return "its intermediate value '" + common::printable_name(out) + "' is also read by " + describe(onnx_node(c));
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
  const std::string base = common::printable_name(name);
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

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
