// ONNX's shape inference on the model, and the shape arithmetic it leaves unknown, evaluated
// here and handed back to it in rounds (docs/onnx.md, "Attributes checked before anything
// reads them", on the shape arithmetic hwprof evaluates itself).
#include "graph/onnx_importer.hpp"

#if HWPROF_HAVE_ONNX

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "common/stages.hpp"
#include "graph/shape_inference.hpp"

namespace hwprof::graph {
namespace {

// ONNX's schemas, except that an op taking a shape as a tensor (Reshape's and Expand's second
// input, ConstantOfShape's first, Resize's sizes) refuses one declared longer than a tensor's
// rank can be. ONNX 1.12's getShapeInput, given neither the values nor a propagated shape,
// makes one dimension per element of the declared length ("rank inference"), so a shape input
// declared [10^12] (in the model or by an op inferred before it) held the import for minutes and
// exhausted memory. The op's own inference runs unchanged for every other input.
class ShapeInputGuardedSchemas final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version, const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_inclusive_version, domain);
    const int index = shape_input_of(domain, key);
    if (schema == nullptr || index < 0) return schema;
    auto& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction([inner = schema->GetTypeAndShapeInferenceFunction(), index, key](onnx::InferenceContext& ctx) {
        refuse_a_long_shape(ctx, static_cast<std::size_t>(index), key);
        inner(ctx);
      });
    }
    return guarded.get();
  }

 private:
  static int shape_input_of(const std::string& domain, const std::string& op) {
    if (!domain.empty() && domain != "ai.onnx") return -1;
    if (op == "Reshape" || op == "Expand") return 1;
    if (op == "ConstantOfShape") return 0;
    if (op == "Resize") return 3;
    return -1;
  }
  static void refuse_a_long_shape(onnx::InferenceContext& ctx, std::size_t index, const std::string& op) {
    if (index >= ctx.getNumInputs() || ctx.getInputData(index) != nullptr || ctx.getSymbolicInput(index) != nullptr) return;
    const onnx::TypeProto* type = ctx.getInputType(index);
    if (type == nullptr || !type->has_tensor_type() || !type->tensor_type().has_shape()) return;
    const auto& shape = type->tensor_type().shape();
    if (shape.dim_size() != 1 || !shape.dim(0).has_dim_value() || shape.dim(0).dim_value() <= kMaxRank) return;
    fail_shape_inference(op, "'s input ", index, " is a shape of ", shape.dim(0).dim_value(), " values; a tensor has at most ", kMaxRank, " axes");
  }
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

// A slice of a small int64 value (shape arithmetic): its shape and elements, or nullopt where
// the attributes do not describe a slice of it (an axis out of range or named twice, a step of
// 0, lengths that differ).
std::optional<std::pair<Dims, std::vector<std::int64_t>>> slice_value(const Dims& shape, const std::vector<std::int64_t>& v, const Attributes& s) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (s.ends.size() != s.starts.size() || s.axes.size() != s.starts.size() || s.steps.size() != s.starts.size()) return std::nullopt;
  std::vector<bool> named(shape.size(), false);
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    const std::int64_t axis = s.axes[i] < 0 ? s.axes[i] + rank : s.axes[i];
    if (axis < 0 || axis >= rank || named[static_cast<std::size_t>(axis)] || s.steps[i] == 0) return std::nullopt;
    named[static_cast<std::size_t>(axis)] = true;
  }
  const std::vector<SliceRange> ranges = slice_ranges(shape, s);
  Dims out_shape;
  std::int64_t count = 1;
  for (const SliceRange& r : ranges) {
    out_shape.push_back(r.count);
    count *= r.count;
  }
  std::vector<std::int64_t> out;
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i, offset = 0, stride = 1;
    for (auto d = shape.size(); d-- > 0;) {
      offset += (ranges[d].start + rest % ranges[d].count * ranges[d].step) * stride;
      rest /= ranges[d].count;
      stride *= shape[d];
    }
    out.push_back(v[static_cast<std::size_t>(offset)]);
  }
  return std::make_pair(out_shape, out);
}

}  // namespace

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
    } else if (op == "Slice" && a != nullptr && b != nullptr && get(n, 2) != nullptr) {
      // x[starts:ends:steps] of a value (PyTorch's F.interpolate sizes: Shape(x)[:2]; F.pad's
      // pads, reversed pairs: [::-1] of a [rank, 2] value).
      Attributes s;
      s.starts = b->v;
      s.ends = get(n, 2)->v;
      for (std::size_t i = 0; i < s.starts.size(); ++i) s.axes.push_back(static_cast<std::int64_t>(i));
      if (const IntValue* axes = get(n, 3)) s.axes = axes->v;
      s.steps.assign(s.starts.size(), 1);
      if (const IntValue* steps = get(n, 4)) s.steps = steps->v;
      if (auto sliced = slice_value(a->shape, a->v, s)) out = IntValue{sliced->first, sliced->second};
    } else if (op == "Transpose" && a != nullptr && a->shape.size() == 2 && attr_ints(n, "perm") == std::vector<std::int64_t>{1, 0}) {
      IntValue t{{a->shape[1], a->shape[0]}, {}};
      for (std::int64_t j = 0; j < a->shape[1]; ++j) {
        for (std::int64_t i = 0; i < a->shape[0]; ++i) t.v.push_back(a->v[static_cast<std::size_t>(i * a->shape[1] + j)]);
      }
      out = t;
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
    } else if (op == "Mod" && a != nullptr && b != nullptr && std::none_of(b->v.begin(), b->v.end(), [](std::int64_t y) { return y == 0; })) {
      // Swin's padding to whole windows, (ws - W % ws) % ws. fmod 0: the sign of the divisor,
      // as Python's % (x % -1 is 0, also for INT64_MIN, where C++'s % would overflow).
      const bool fmod = attr_int(n, "fmod", 0) != 0;
      out = broadcast(*a, *b, [fmod](std::int64_t x, std::int64_t y) {
        if (y == -1) return std::int64_t{0};
        std::int64_t r = x % y;
        if (!fmod && r != 0 && (r < 0) != (y < 0)) r += y;
        return r;
      });
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
  // Kept for the mappings that read such a value themselves (a Slice's starts and ends, a
  // Pad's pads, a Tile's repeats), which ONNX's inference may know the output of already.
  for (const auto& [name, value] : known) folded_[name] = value.v;
  // Hand the values to the nodes that take a shape and whose output inference does not know.
  for (int index = 0; index < g.node_size(); ++index) {
    onnx::NodeProto& n = *g.mutable_node(index);
    const std::string& op = n.op_type();
    std::vector<int> shape_inputs;
    if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Unsqueeze" || op == "Squeeze" || op == "Pad") shape_inputs = {1};
    if (op == "ConstantOfShape") shape_inputs = {0};
    if (op == "Slice") shape_inputs = {1, 2, 3, 4};
    if (op == "Resize") shape_inputs = {3};
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
  const ShapeInputGuardedSchemas schemas;
  for (const bool propagate : {false, true}) {
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/1, /*enable_data_propagation=*/propagate);
      onnx::shape_inference::InferShapes(model_, &schemas, options);
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

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
