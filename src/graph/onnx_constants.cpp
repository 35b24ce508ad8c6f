// Constants the graph computes at run time from constants alone, evaluated at import
// (docs/onnx.md, "How ops map", on constants computed in the graph): Swin's shifted-window attention mask is
// built from the feature map's size with ConstantOfShape, Range, ScatterND, Equal and Where,
// a learned table may reach its reader through Transpose or Unsqueeze. Such a node reads no
// activation; where its op is one evaluated here and every input is known, its output becomes
// a constant that the layers reading it take as an operand. Values are bounded in size, and a
// value sized by the probe batch is never made (it would depend on the batch).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "graph/onnx_importer.hpp"
#include "graph/shape_inference.hpp"

#if HWPROF_HAVE_ONNX

namespace hwprof::graph {
namespace {

using T = ConstTensor;

// Row-major strides of `shape`.
std::vector<std::int64_t> strides_of(const Dims& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// NumPy's broadcast of two shapes, right-aligned; nullopt where an axis differs and neither is 1.
std::optional<Dims> broadcast_shape(const Dims& a, const Dims& b) {
  Dims out(std::max(a.size(), b.size()), 1);
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
    const std::int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// For each element of a tensor of `shape` (row-major), base + Σ index[d]·strides[d]: the
// offset it reads in its source. A transpose, a slice and a broadcast differ only in the
// strides (permuted, stepped, 0 for a repeated axis) and the base.
std::vector<std::int64_t> strided_offsets(const Dims& shape, const std::vector<std::int64_t>& strides, std::int64_t base) {
  const std::int64_t count = product(shape);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t e = 0; e < count; ++e) {
    std::int64_t offset = base;
    for (std::size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    offsets[static_cast<std::size_t>(e)] = offset;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

// For each element of `out`, the offset of the element of a tensor of shape `in` broadcast to
// it (right-aligned; an axis of size 1 repeats).
std::vector<std::int64_t> broadcast_offsets(const Dims& in, const Dims& out) {
  const std::vector<std::int64_t> in_strides = strides_of(in);
  std::vector<std::int64_t> strides(out.size(), 0);
  const std::size_t lead = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d) strides[lead + d] = in[d] == 1 ? 0 : in_strides[d];
  return strided_offsets(out, strides, 0);
}

// The elements of `x` at `offsets`, as a tensor of `shape`.
T pick(const T& x, const std::vector<std::int64_t>& offsets, Dims shape) {
  T out{x.type, std::move(shape), {}, {}};
  if (x.type == T::Type::f32) {
    out.f.reserve(offsets.size());
    for (std::int64_t o : offsets) out.f.push_back(x.f[static_cast<std::size_t>(o)]);
  } else {
    out.i.reserve(offsets.size());
    for (std::int64_t o : offsets) out.i.push_back(x.i[static_cast<std::size_t>(o)]);
  }
  return out;
}

// A shape of known sizes whose element count is at most kMaxEvaluated.
bool within_bounds(const Dims& shape) {
  const std::int64_t count = product(shape);
  return count >= 0 && count <= kMaxEvaluated;
}

double number(const T& x, std::size_t k) {
  return x.type == T::Type::f32 ? static_cast<double>(x.f[k]) : static_cast<double>(x.i[k]);
}

std::optional<std::int64_t> axis_in(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return axis < 0 ? axis + r : axis;
}

std::optional<T> binary(const std::string& op, const T& a, const T& b, std::int64_t fmod) {
  const auto shape = broadcast_shape(a.shape, b.shape);
  if (!shape || !within_bounds(*shape)) return std::nullopt;
  const std::vector<std::int64_t> oa = broadcast_offsets(a.shape, *shape), ob = broadcast_offsets(b.shape, *shape);
  const bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
  const bool logic = op == "And" || op == "Or" || op == "Xor";
  const bool floating = a.type == T::Type::f32 || b.type == T::Type::f32;
  T out{compare || logic ? T::Type::boolean : floating ? T::Type::f32 : a.type, *shape, {}, {}};
  for (std::size_t e = 0; e < oa.size(); ++e) {
    const auto ka = static_cast<std::size_t>(oa[e]), kb = static_cast<std::size_t>(ob[e]);
    if (compare || logic || floating) {
      const double x = number(a, ka), y = number(b, kb);
      if (compare) {
        const bool r = op == "Equal" ? x == y : op == "Less" ? x < y : op == "Greater" ? x > y : op == "LessOrEqual" ? x <= y : x >= y;
        out.i.push_back(r);
        continue;
      }
      if (logic) {
        const bool p = x != 0, q = y != 0;
        out.i.push_back(op == "And" ? (p && q) : op == "Or" ? (p || q) : (p != q));
        continue;
      }
      double r = 0;
      if (op == "Add")
        r = x + y;
      else if (op == "Sub")
        r = x - y;
      else if (op == "Mul")
        r = x * y;
      else if (op == "Div")
        r = x / y;
      else if (op == "Pow")
        r = std::pow(x, y);
      else if (op == "Max")
        r = std::max(x, y);
      else if (op == "Min")
        r = std::min(x, y);
      else if (op == "Mod")
        r = fmod != 0 ? std::fmod(x, y) : x - std::floor(x / y) * y;
      else
        return std::nullopt;
      out.f.push_back(static_cast<float>(r));
      continue;
    }
    const std::int64_t x = a.i[ka], y = b.i[kb];
    std::int64_t r = 0;
    bool overflow = false;
    if (op == "Add")
      overflow = __builtin_add_overflow(x, y, &r);
    else if (op == "Sub")
      overflow = __builtin_sub_overflow(x, y, &r);
    else if (op == "Mul")
      overflow = __builtin_mul_overflow(x, y, &r);
    else if (op == "Max")
      r = std::max(x, y);
    else if (op == "Min")
      r = std::min(x, y);
    else if (op == "Div" || op == "Mod") {
      // C's truncating division (ONNX's integer Div); Mod with fmod 0 takes the divisor's sign, as Python's %.
      if (y == 0 || (y == -1 && x == INT64_MIN)) return std::nullopt;
      if (op == "Div") {
        r = x / y;
      } else {
        r = x % y;
        if (fmod == 0 && r != 0 && (r < 0) != (y < 0)) r += y;
      }
    } else if (op == "Pow") {
      if (y < 0 || y > 62) return std::nullopt;
      r = 1;
      for (std::int64_t k = 0; k < y && !overflow; ++k) overflow = __builtin_mul_overflow(r, x, &r);
    } else {
      return std::nullopt;
    }
    if (overflow) return std::nullopt;
    out.i.push_back(r);
  }
  return out;
}

std::optional<T> unary(const std::string& op, const T& x) {
  T out{x.type == T::Type::f32 ? T::Type::f32 : x.type, x.shape, {}, {}};
  const std::size_t count = x.type == T::Type::f32 ? x.f.size() : x.i.size();
  for (std::size_t k = 0; k < count; ++k) {
    if (op == "Not") {
      if (x.type != T::Type::boolean) return std::nullopt;
      out.i.push_back(x.i[k] == 0);
    } else if (x.type == T::Type::f32) {
      const float v = x.f[k];
      if (op == "Neg")
        out.f.push_back(-v);
      else if (op == "Abs")
        out.f.push_back(std::fabs(v));
      else if (op == "Sqrt")
        out.f.push_back(std::sqrt(v));
      else if (op == "Floor")
        out.f.push_back(std::floor(v));
      else if (op == "Ceil")
        out.f.push_back(std::ceil(v));
      else if (op == "Reciprocal")
        out.f.push_back(1.0f / v);
      else
        return std::nullopt;
    } else {
      const std::int64_t v = x.i[k];
      if (v == INT64_MIN) return std::nullopt;
      if (op == "Neg")
        out.i.push_back(-v);
      else if (op == "Abs")
        out.i.push_back(v < 0 ? -v : v);
      else
        return std::nullopt;
    }
  }
  return out;
}

T cast(const T& x, std::int64_t to) {
  const bool to_float = to == onnx::TensorProto_DataType_FLOAT || to == onnx::TensorProto_DataType_DOUBLE ||
                        to == onnx::TensorProto_DataType_FLOAT16 || to == onnx::TensorProto_DataType_BFLOAT16;
  const bool to_bool = to == onnx::TensorProto_DataType_BOOL;
  T out{to_float ? T::Type::f32 : to_bool ? T::Type::boolean : T::Type::i64, x.shape, {}, {}};
  const std::size_t count = x.type == T::Type::f32 ? x.f.size() : x.i.size();
  for (std::size_t k = 0; k < count; ++k) {
    const double v = number(x, k);
    if (to_float) {
      out.f.push_back(static_cast<float>(v));
    } else if (to_bool) {
      out.i.push_back(v != 0);
    } else {
      // A float beyond int64's range casts to the nearest bound (the ONNX specification leaves it undefined).
      out.i.push_back(x.type != T::Type::f32 ? x.i[k] : !(v > -9.2e18) ? INT64_MIN : v > 9.2e18 ? INT64_MAX : static_cast<std::int64_t>(v));
    }
  }
  return out;
}

}  // namespace

std::optional<ConstTensor> Importer::const_tensor(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  if (auto it = evaluated_.find(name); it != evaluated_.end()) return it->second;
  const onnx::TensorProto* t = constant(name);
  if (t == nullptr) return std::nullopt;
  const Dims shape(t->dims().begin(), t->dims().end());
  const std::int64_t count = product(shape);
  if (count < 0 || count > kMaxEvaluated) return std::nullopt;
  T out{T::Type::f32, shape, {}, {}};
  switch (t->data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
    case onnx::TensorProto_DataType_DOUBLE:
      out.f = floats(*t);
      return out;
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32:
      out.type = T::Type::i64;
      out.i = integers(*t);
      break;
    case onnx::TensorProto_DataType_BOOL: {
      out.type = T::Type::boolean;
      if (t->int32_data_size() > 0) {
        out.i.assign(t->int32_data().begin(), t->int32_data().end());
      } else {
        const std::string raw = raw_bytes(*t);
        for (char c : raw) out.i.push_back(c != 0);
      }
      break;
    }
    default:
      return std::nullopt;
  }
  if (static_cast<std::int64_t>(out.i.size()) != count) return std::nullopt;
  return out;
}

// What an op's evaluation reads: the node, its inputs (an absent optional input has the shape
// [-1]) and, through the importer, its attributes and the opset.
struct Importer::Evaluation {
  const Importer& m;
  const onnx::NodeProto& n;
  const std::vector<ConstTensor>& in;

  bool present(int k) const { return k < static_cast<int>(in.size()) && !(in[static_cast<std::size_t>(k)].shape == Dims{-1}); }
  std::optional<std::vector<std::int64_t>> ints(int k) const {
    if (!present(k) || in[static_cast<std::size_t>(k)].type == T::Type::f32) return std::nullopt;
    return in[static_cast<std::size_t>(k)].i;
  }
  const onnx::AttributeProto* attr(const char* name) const { return m.attr(n, name); }
  std::int64_t attr_int(const char* name, std::int64_t fallback) const { return m.attr_int(n, name, fallback); }
  std::vector<std::int64_t> attr_ints(const char* name) const { return m.attr_ints(n, name); }
  std::string attr_string(const char* name, const std::string& fallback) const { return m.attr_string(n, name, fallback); }
  std::vector<float> floats(const onnx::TensorProto& t) const { return m.floats(t); }
  std::vector<std::int64_t> integers(const onnx::TensorProto& t) const { return m.integers(t); }
  int opset() const { return m.opset(); }
};

namespace {

std::optional<T> evaluate_identity(const Importer::Evaluation& ev) {
  return ev.in[0];
}

// Dropout in inference is the identity on its data (its mask output is not evaluated).
std::optional<T> evaluate_dropout(const Importer::Evaluation& ev) {
  if (!ev.present(0)) return std::nullopt;
  return ev.in[0];
}

std::optional<T> evaluate_cast(const Importer::Evaluation& ev) {
  return cast(ev.in[0], ev.attr_int("to", onnx::TensorProto_DataType_FLOAT));
}

std::optional<T> evaluate_unary(const Importer::Evaluation& ev) {
  return unary(ev.n.op_type(), ev.in[0]);
}

std::optional<T> evaluate_binary(const Importer::Evaluation& ev) {
  if (ev.in.size() != 2 || !ev.present(1)) return std::nullopt;
  return binary(ev.n.op_type(), ev.in[0], ev.in[1], ev.attr_int("fmod", 0));
}

std::optional<T> evaluate_where(const Importer::Evaluation& ev) {
  const std::vector<T>& in = ev.in;
  const T& x = ev.in[0];
  if (in.size() != 3) return std::nullopt;
  const auto s1 = broadcast_shape(x.shape, in[1].shape);
  const auto shape = s1 ? broadcast_shape(*s1, in[2].shape) : std::nullopt;
  if (!shape || !within_bounds(*shape) || in[1].type != in[2].type) return std::nullopt;
  const auto oc = broadcast_offsets(x.shape, *shape), oa = broadcast_offsets(in[1].shape, *shape), ob = broadcast_offsets(in[2].shape, *shape);
  T out{in[1].type, *shape, {}, {}};
  for (std::size_t e = 0; e < oc.size(); ++e) {
    const T& from = number(x, static_cast<std::size_t>(oc[e])) != 0 ? in[1] : in[2];
    const auto k = static_cast<std::size_t>((&from == &in[1] ? oa : ob)[e]);
    if (out.type == T::Type::f32) {
      out.f.push_back(from.f[k]);
    } else {
      out.i.push_back(from.i[k]);
    }
  }
  return out;
}

std::optional<T> evaluate_constant_of_shape(const Importer::Evaluation& ev) {
  const auto shape = ev.ints(0);
  if (!shape) return std::nullopt;
  const std::int64_t count = product(*shape);
  if (count < 0 || count > kMaxEvaluated) return std::nullopt;
  T fill{T::Type::f32, {}, {0.0f}, {}};
  if (const auto* value = ev.attr("value"); value != nullptr && value->has_t()) {
    // One element of float or integer type (its dims, [1] or none, are dropped).
    onnx::TensorProto copy = value->t();
    copy.clear_dims();
    T one{};
    if (copy.data_type() == onnx::TensorProto_DataType_FLOAT || copy.data_type() == onnx::TensorProto_DataType_DOUBLE) {
      one = T{T::Type::f32, {}, ev.floats(copy), {}};
    } else if (copy.data_type() == onnx::TensorProto_DataType_INT64 || copy.data_type() == onnx::TensorProto_DataType_INT32) {
      one = T{T::Type::i64, {}, {}, ev.integers(copy)};
    } else {
      return std::nullopt;
    }
    if ((one.type == T::Type::f32 ? one.f.size() : one.i.size()) != 1) return std::nullopt;
    fill = one;
  }
  T out{fill.type, *shape, {}, {}};
  if (fill.type == T::Type::f32) {
    out.f.assign(static_cast<std::size_t>(count), fill.f[0]);
  } else {
    out.i.assign(static_cast<std::size_t>(count), fill.i[0]);
  }
  return out;
}

std::optional<T> evaluate_range(const Importer::Evaluation& ev) {
  const std::vector<T>& in = ev.in;
  const T& x = ev.in[0];
  if (in.size() != 3 || !x.shape.empty() || !in[1].shape.empty() || !in[2].shape.empty()) return std::nullopt;
  const double start = number(x, 0), limit = number(in[1], 0), delta = number(in[2], 0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) return std::nullopt;
  const double steps = std::max(std::ceil((limit - start) / delta), 0.0);
  if (steps > static_cast<double>(kMaxEvaluated)) return std::nullopt;
  const auto count = static_cast<std::int64_t>(steps);
  T out{x.type, {count}, {}, {}};
  for (std::int64_t k = 0; k < count; ++k) {
    if (x.type == T::Type::f32) {
      out.f.push_back(static_cast<float>(start + static_cast<double>(k) * delta));
    } else {
      out.i.push_back(x.i[0] + k * in[2].i[0]);
    }
  }
  return out;
}

std::optional<T> evaluate_unsqueeze_or_squeeze(const Importer::Evaluation& ev) {
  const T& x = ev.in[0];
  const std::string& op = ev.n.op_type();
  std::vector<std::int64_t> axes = ev.opset() >= 13 ? ev.ints(1).value_or(std::vector<std::int64_t>{}) : ev.attr_ints("axes");
  if (ev.opset() >= 13 && ev.present(1) && !ev.ints(1)) return std::nullopt;
  Dims shape = x.shape;
  if (op == "Unsqueeze") {
    const std::size_t rank = shape.size() + axes.size();
    std::vector<bool> added(rank, false);
    for (std::int64_t a : axes) {
      const auto d = axis_in(a, rank);
      if (!d || added[static_cast<std::size_t>(*d)]) return std::nullopt;
      added[static_cast<std::size_t>(*d)] = true;
    }
    Dims out;
    std::size_t from = 0;
    for (std::size_t d = 0; d < rank; ++d) out.push_back(added[d] ? 1 : shape[from++]);
    shape = out;
  } else {
    std::vector<bool> removed(shape.size(), false);
    for (std::int64_t a : axes) {
      const auto d = axis_in(a, shape.size());
      if (!d || shape[static_cast<std::size_t>(*d)] != 1) return std::nullopt;
      removed[static_cast<std::size_t>(*d)] = true;
    }
    Dims out;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (axes.empty() ? shape[d] != 1 : !removed[d]) out.push_back(shape[d]);
    }
    shape = out;
  }
  T out = x;
  out.shape = shape;
  return out;
}

std::optional<T> evaluate_reshape(const Importer::Evaluation& ev) {
  const T& x = ev.in[0];
  const auto target = ev.ints(1);
  if (!target || target->size() > static_cast<std::size_t>(kMaxRank)) return std::nullopt;
  Dims shape = *target;
  std::int64_t known = 1, infer_at = -1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0 && ev.attr_int("allowzero", 0) == 0) {
      if (d >= x.shape.size()) return std::nullopt;
      shape[d] = x.shape[d];
    }
    if (shape[d] == -1) {
      if (infer_at >= 0) return std::nullopt;
      infer_at = static_cast<std::int64_t>(d);
    } else if (shape[d] < 0 || __builtin_mul_overflow(known, shape[d], &known)) {
      return std::nullopt;
    }
  }
  const std::int64_t count = product(x.shape);
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0) return std::nullopt;
    shape[static_cast<std::size_t>(infer_at)] = count / known;
  }
  if (product(shape) != count) return std::nullopt;
  T out = x;
  out.shape = shape;
  return out;
}

std::optional<T> evaluate_transpose(const Importer::Evaluation& ev) {
  const T& x = ev.in[0];
  std::vector<std::int64_t> perm = ev.attr_ints("perm");
  if (perm.empty()) {
    for (std::size_t d = x.shape.size(); d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  if (perm.size() != x.shape.size()) return std::nullopt;
  std::vector<bool> seen(perm.size(), false);
  Dims shape;
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(perm.size()) || seen[static_cast<std::size_t>(p)]) return std::nullopt;
    seen[static_cast<std::size_t>(p)] = true;
    shape.push_back(x.shape[static_cast<std::size_t>(p)]);
  }
  // The transposed tensor reads the input with permuted strides.
  const std::vector<std::int64_t> in_strides = strides_of(x.shape);
  std::vector<std::int64_t> strides;
  for (std::int64_t p : perm) strides.push_back(in_strides[static_cast<std::size_t>(p)]);
  const std::vector<std::int64_t> offsets = strided_offsets(shape, strides, 0);
  return pick(x, offsets, shape);
}

std::optional<T> evaluate_expand(const Importer::Evaluation& ev) {
  const T& x = ev.in[0];
  const auto target = ev.ints(1);
  if (!target) return std::nullopt;
  const auto shape = broadcast_shape(x.shape, *target);
  if (!shape || !within_bounds(*shape)) return std::nullopt;
  return pick(x, broadcast_offsets(x.shape, *shape), *shape);
}

std::optional<T> evaluate_gather(const Importer::Evaluation& ev) {
  const std::vector<T>& in = ev.in;
  const T& x = ev.in[0];
  const auto idx = ev.ints(1);
  const auto axis = axis_in(ev.attr_int("axis", 0), x.shape.size());
  if (!idx || !axis) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= x.shape[d];
  for (std::size_t d = a + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const std::int64_t size = x.shape[a];
  Dims shape(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(a));
  shape.insert(shape.end(), in[1].shape.begin(), in[1].shape.end());
  shape.insert(shape.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.shape.end());
  if (!within_bounds(shape)) return std::nullopt;
  std::vector<std::int64_t> offsets;
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i : *idx) {
      const std::int64_t k = i < 0 ? i + size : i;
      if (k < 0 || k >= size) return std::nullopt;
      for (std::int64_t j = 0; j < inner; ++j) offsets.push_back((o * size + k) * inner + j);
    }
  }
  return pick(x, offsets, shape);
}

std::optional<T> evaluate_slice(const Importer::Evaluation& ev) {
  const T& x = ev.in[0];
  const auto starts = ev.ints(1), ends = ev.ints(2);
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  Attributes s;
  s.starts = *starts;
  s.ends = *ends;
  if (ev.present(3)) {
    if (!ev.ints(3)) return std::nullopt;
    s.axes = *ev.ints(3);
  } else {
    for (std::size_t k = 0; k < s.starts.size(); ++k) s.axes.push_back(static_cast<std::int64_t>(k));
  }
  s.steps.assign(s.starts.size(), 1);
  if (ev.present(4)) {
    if (!ev.ints(4)) return std::nullopt;
    s.steps = *ev.ints(4);
  }
  if (s.axes.size() != s.starts.size() || s.steps.size() != s.starts.size()) return std::nullopt;
  std::vector<bool> named(x.shape.size(), false);
  for (std::size_t k = 0; k < s.axes.size(); ++k) {
    const auto d = axis_in(s.axes[k], x.shape.size());
    if (!d || named[static_cast<std::size_t>(*d)] || s.steps[k] == 0) return std::nullopt;
    named[static_cast<std::size_t>(*d)] = true;
  }
  const std::vector<SliceRange> ranges = slice_ranges(Shape(x.shape.begin(), x.shape.end()), s);
  Dims shape;
  for (const SliceRange& r : ranges) shape.push_back(r.count);
  const std::vector<std::int64_t> in_strides = strides_of(x.shape);
  std::vector<std::int64_t> strides;
  std::int64_t base = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    strides.push_back(ranges[d].step * in_strides[d]);
    base += ranges[d].start * in_strides[d];
  }
  const std::vector<std::int64_t> offsets = strided_offsets(shape, strides, base);
  return pick(x, offsets, shape);
}

std::optional<T> evaluate_concat(const Importer::Evaluation& ev) {
  const std::vector<T>& in = ev.in;
  const T& x = ev.in[0];
  const auto axis = axis_in(ev.attr_int("axis", 0), x.shape.size());
  if (!axis) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  Dims shape = x.shape;
  shape[a] = 0;
  for (const T& p : in) {
    if (p.shape.size() != x.shape.size() || p.type != x.type) return std::nullopt;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d != a && p.shape[d] != x.shape[d]) return std::nullopt;
    }
    shape[a] += p.shape[a];
    if (!within_bounds(shape)) return std::nullopt;
  }
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < a; ++d) outer *= x.shape[d];
  T out{x.type, shape, {}, {}};
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const T& p : in) {
      const std::int64_t block = product(p.shape) / std::max<std::int64_t>(outer, 1);
      const auto from = static_cast<std::ptrdiff_t>(o * block), to = static_cast<std::ptrdiff_t>((o + 1) * block);
      if (x.type == T::Type::f32) {
        out.f.insert(out.f.end(), p.f.begin() + from, p.f.begin() + to);
      } else {
        out.i.insert(out.i.end(), p.i.begin() + from, p.i.begin() + to);
      }
    }
  }
  return out;
}

std::optional<T> evaluate_scatter_nd(const Importer::Evaluation& ev) {
  const std::vector<T>& in = ev.in;
  const T& x = ev.in[0];
  // data[indices[..., :k]] = updates, ONNX's ScatterND without a reduction.
  if (in.size() != 3 || ev.attr_string("reduction", "none") != "none" || in[1].type == T::Type::f32 || in[2].type != x.type) return std::nullopt;
  const T& indices = in[1];
  const T& updates = in[2];
  if (indices.shape.empty()) return std::nullopt;
  const auto k = static_cast<std::size_t>(indices.shape.back());
  if (k > x.shape.size()) return std::nullopt;
  std::int64_t slab = 1;
  for (std::size_t d = k; d < x.shape.size(); ++d) slab *= x.shape[d];
  const std::int64_t rows = k == 0 ? 1 : static_cast<std::int64_t>(indices.i.size() / k);
  if (product(updates.shape) != rows * slab) return std::nullopt;
  const std::vector<std::int64_t> st = strides_of(x.shape);
  T out = x;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t base = 0;
    for (std::size_t d = 0; d < k; ++d) {
      std::int64_t i = indices.i[static_cast<std::size_t>(r) * k + d];
      if (i < 0) i += x.shape[d];
      if (i < 0 || i >= x.shape[d]) return std::nullopt;
      base += i * st[d];
    }
    for (std::int64_t j = 0; j < slab; ++j) {
      const auto to = static_cast<std::size_t>(base + j), from = static_cast<std::size_t>(r * slab + j);
      if (x.type == T::Type::f32) {
        out.f[to] = updates.f[from];
      } else {
        out.i[to] = updates.i[from];
      }
    }
  }
  return out;
}

// The ops evaluated (with Shape and Size, which Importer::evaluate reads from the known shapes),
// each by its function above.
struct EvaluatedOp {
  std::string_view type;
  std::optional<T> (*evaluate)(const Importer::Evaluation&);
};
constexpr EvaluatedOp kEvaluatedOps[] = {
    {"Identity", evaluate_identity},
    {"Dropout", evaluate_dropout},
    {"Cast", evaluate_cast},
    {"Not", evaluate_unary},
    {"Neg", evaluate_unary},
    {"Abs", evaluate_unary},
    {"Sqrt", evaluate_unary},
    {"Floor", evaluate_unary},
    {"Ceil", evaluate_unary},
    {"Reciprocal", evaluate_unary},
    {"Add", evaluate_binary},
    {"Sub", evaluate_binary},
    {"Mul", evaluate_binary},
    {"Div", evaluate_binary},
    {"Pow", evaluate_binary},
    {"Mod", evaluate_binary},
    {"Max", evaluate_binary},
    {"Min", evaluate_binary},
    {"Equal", evaluate_binary},
    {"Less", evaluate_binary},
    {"Greater", evaluate_binary},
    {"LessOrEqual", evaluate_binary},
    {"GreaterOrEqual", evaluate_binary},
    {"And", evaluate_binary},
    {"Or", evaluate_binary},
    {"Xor", evaluate_binary},
    {"Where", evaluate_where},
    {"ConstantOfShape", evaluate_constant_of_shape},
    {"Range", evaluate_range},
    {"Unsqueeze", evaluate_unsqueeze_or_squeeze},
    {"Squeeze", evaluate_unsqueeze_or_squeeze},
    {"Reshape", evaluate_reshape},
    {"Transpose", evaluate_transpose},
    {"Expand", evaluate_expand},
    {"Gather", evaluate_gather},
    {"Slice", evaluate_slice},
    {"Concat", evaluate_concat},
    {"ScatterND", evaluate_scatter_nd},
};

}  // namespace

// An ONNX op over constant inputs, by the table above; nullopt where the op is not evaluated
// here, an input is not known or the result would not be exact.
std::optional<ConstTensor> Importer::evaluate(const onnx::NodeProto& n) const {
  const std::string& op = n.op_type();
  if (n.output_size() != 1 && !(op == "Dropout" && n.output_size() >= 1)) return std::nullopt;
  std::vector<T> in;
  if (op == "Shape" || op == "Size") {
    const Dims& d = dims_of(n.input(0));
    if (d.empty() && kind_of(n.input(0)) != Value::Kind::constant) return std::nullopt;
    if (std::any_of(d.begin(), d.end(), [](std::int64_t x) { return x < 0; })) return std::nullopt;
    if (op == "Size") return T{T::Type::i64, {}, {}, {product(d)}};
    const auto r = static_cast<std::int64_t>(d.size());
    std::int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
    start = std::clamp<std::int64_t>(start < 0 ? start + r : start, 0, r);
    end = std::clamp<std::int64_t>(end < 0 ? end + r : end, start, r);
    return T{T::Type::i64, {end - start}, {}, std::vector<std::int64_t>(d.begin() + start, d.begin() + end)};
  }
  const auto it = std::find_if(std::begin(kEvaluatedOps), std::end(kEvaluatedOps), [&](const EvaluatedOp& e) { return e.type == op; });
  if (it == std::end(kEvaluatedOps)) return std::nullopt;
  for (int k = 0; k < n.input_size(); ++k) {
    if (n.input(k).empty()) {
      in.emplace_back();
      in.back().shape = {-1};  // absent (an optional input left out)
      continue;
    }
    auto t = const_tensor(n.input(k));
    if (!t) return std::nullopt;
    in.push_back(std::move(*t));
  }
  if (in.empty()) return std::nullopt;
  return it->evaluate(Evaluation{*this, n, in});
}

// A node that reads no activation, evaluated (above) and its output registered as a constant:
// false where it cannot be (an op not evaluated here, an input not known, a value too large or
// sized by the probe batch), and the node stays shape arithmetic only.
bool Importer::evaluate_constant(const onnx::NodeProto& n) {
  if (n.output_size() < 1 || n.output(0).empty()) return false;
  std::optional<T> value = evaluate(n);
  if (!value) return false;
  const std::int64_t count = product(value->shape);
  if (count < 0 || count > kMaxEvaluated) return false;
  if (batch_ == kProbeBatch && std::find(value->shape.begin(), value->shape.end(), kProbeBatch) != value->shape.end()) return false;
  const std::size_t held = value->type == T::Type::f32 ? value->f.size() : value->i.size();
  if (static_cast<std::int64_t>(held) != count) return false;
  onnx::TensorProto t;
  // A learned tensor moved by a view (Transpose, Reshape, Unsqueeze, Identity) keeps its
  // initializer's name: the layer that reads it takes it as that parameter.
  const std::string& source = n.input_size() > 0 ? n.input(0) : n.output(0);
  const bool view =
      n.op_type() == "Transpose" || n.op_type() == "Reshape" || n.op_type() == "Unsqueeze" || n.op_type() == "Squeeze" || n.op_type() == "Identity";
  const onnx::TensorProto* from = view ? constant(source) : nullptr;
  t.set_name(from != nullptr ? from->name() : n.output(0));
  for (std::int64_t d : value->shape) t.add_dims(d);
  if (value->type == T::Type::f32) {
    t.set_data_type(onnx::TensorProto_DataType_FLOAT);
    t.mutable_float_data()->Assign(value->f.begin(), value->f.end());
  } else if (value->type == T::Type::i64) {
    t.set_data_type(onnx::TensorProto_DataType_INT64);
    t.mutable_int64_data()->Assign(value->i.begin(), value->i.end());
  } else {
    t.set_data_type(onnx::TensorProto_DataType_BOOL);
    for (std::int64_t v : value->i) t.add_int32_data(v != 0);
  }
  made_tensors_.push_back(std::move(t));
  values_[n.output(0)] = Value{Value::Kind::constant, kModelInput, &made_tensors_.back()};
  dims_[n.output(0)] = value->shape;
  evaluated_[n.output(0)] = std::move(*value);
  return true;
}

}  // namespace hwprof::graph

#endif  // HWPROF_HAVE_ONNX
