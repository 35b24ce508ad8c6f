// Model spec (models/*.json, docs/model-specs.md, "Model specs") → Graph: JSON parsing with
// positions for every error, repeat expansion, name resolution, attribute validation; then
// shape inference. Errors inside this file travel as SpecError and are turned into a Result
// at parse_model(); no exception leaves the library.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/input_file.hpp"
#include "common/suggest.hpp"
#include "common/text_position.hpp"
#include "graph/shape_inference.hpp"
#include "hwprof/engine/graph.hpp"
#include "ops/ops.hpp"

namespace hwprof {
namespace {

// Integer lists of the data-movement ops (slice, pad, tile): one value per axis at most, each
// within ±2^62 so that a size plus a padding or a bound cannot overflow.
constexpr auto kMaxAxes = static_cast<std::size_t>(kMaxRank);
constexpr std::int64_t kListValueLimit = std::int64_t{1} << 62;

using nlohmann::json;

struct SpecError {
  std::string message;
};

// Compact JSON of `value`, stopping soon after `limit` characters. json::dump() would recurse
// once per nesting level, and a hostile spec nests arrays 100000 deep.
void render_prefix(const json& value, std::size_t limit, std::string& out) {
  if (out.size() > limit) return;
  if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.size() && out.size() <= limit; ++i) {
      if (i > 0) out += ',';
      render_prefix(value[i], limit, out);
    }
    out += ']';
  } else if (value.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() <= limit; ++it) {
      if (!first) out += ',';
      first = false;
      out += json(it.key()).dump() + ':';
      render_prefix(it.value(), limit, out);
    }
    out += '}';
  } else {
    out += value.dump();
  }
}

// The names of a mode's definitions, quoted, for "expected ...": "\"a\" or \"b\"" (ops/upsample.cpp,
// ops/reduce.cpp).
template <typename Definition>
std::string either_of(std::span<const Definition> modes) {
  std::string out;
  for (std::size_t i = 0; i < modes.size(); ++i) {
    if (i > 0) out += i + 1 == modes.size() ? " or " : ", ";
    out += "\"" + std::string(modes[i].name) + "\"";
  }
  return out;
}

std::string describe(const json& value) {
  std::string text;
  render_prefix(value, 40, text);
  if (text.size() > 40) {
    std::size_t cut = 37;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    text = text.substr(0, cut) + "...";
  }
  switch (value.type()) {
    case json::value_t::string:
      return "the string " + text;
    case json::value_t::boolean:
      return "the boolean " + text;
    case json::value_t::null:
      return "null";
    case json::value_t::array:
      return "the array " + text;
    case json::value_t::object:
      return "an object";
    default:
      return text;
  }
}

// Tracks the JSON pointer of the value being parsed, to report duplicate keys — which
// nlohmann::json would otherwise resolve silently by keeping the last.
class DuplicateKeyCheck {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames_.push_back({false, 0, {}, {}});
        break;
      case json::parse_event_t::array_start:
        frames_.push_back({true, 0, {}, {}});
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          duplicate_pointer = pointer();
          duplicate_key = f.key;
          throw SpecError{};
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        leave();
        break;
      case json::parse_event_t::value:
        leave();
        break;
    }
    return true;
  }

  std::string duplicate_pointer;
  std::string duplicate_key;

 private:
  struct Frame {
    bool array;
    std::size_t index;
    std::set<std::string> keys;
    std::string key;
  };
  void leave() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string pointer() const {
    std::string out;
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      out += "/" + (frames_[i].array ? std::to_string(frames_[i].index) : frames_[i].key);
    }
    return out;
  }
  std::vector<Frame> frames_;
};

struct Scope {
  const Scope* parent = nullptr;
  std::string prefix;            // "h.3."
  int input_node = kModelInput;  // what "$input" means inside this copy
  std::unordered_map<std::string, int> locals;
};

class SpecReader {
 public:
  SpecReader(Graph& graph) : graph_(graph) {}  // NOLINT

  void read(const json& root) {
    if (!root.is_object()) fail("", "the model spec must be a JSON object {\"name\", \"input\", \"layers\"}, got " + describe(root));
    check_keys(root, "", {"name", "input", "layers", "description", "comment"}, "model spec");
    if (root.contains("name")) {
      if (!root["name"].is_string() || root["name"].get<std::string>().empty())
        fail("/name", "\"name\" must be a non-empty string, got " + describe(root["name"]));
      graph_.name = root["name"].get<std::string>();
    }
    read_input(root);
    if (!root.contains("layers")) fail("", "missing \"layers\": expected an array of layer objects");
    const json& layers = root["layers"];
    if (!layers.is_array() || layers.empty()) fail("/layers", "\"layers\" must be a non-empty array of layer objects, got " + describe(layers));
    const std::int64_t total = count_layers(layers, "/layers", 0);
    if (total > kMaxLayers) fail("/layers", "the model expands to more than " + std::to_string(kMaxLayers) + " layers; that is the limit");
    graph_.nodes.reserve(static_cast<std::size_t>(total));
    int previous = kModelInput;
    expand(layers, "/layers", nullptr, previous, 0);
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw SpecError{graph_.source.locate(pointer) + ": " + problem};
  }
  [[noreturn]] void fail_at_key(const std::string& pointer, const std::string& problem) const {
    throw SpecError{graph_.source.locate(pointer, true) + ": " + problem};
  }
  [[noreturn]] void fail_layer(const std::string& pointer, const std::string& layer, std::string_view op, const std::string& problem) const {
    fail_layer(pointer, layer, op, false, problem);
  }
  [[noreturn]] void fail_layer(const std::string& pointer, const std::string& layer, std::string_view op, bool at_key,
                               const std::string& problem) const {
    std::string who = "layer '" + layer + "'";
    if (!op.empty()) who += " (" + std::string(op) + ")";
    throw SpecError{graph_.source.locate(pointer, at_key) + ": " + who + ": " + problem};
  }

  void check_keys(const json& object, const std::string& pointer, const std::vector<std::string_view>& allowed, const std::string& what) const {
    for (const auto& item : object.items()) {
      const std::string& key = item.key();
      bool known = false;
      for (auto a : allowed) known = known || a == key;
      if (!known) {
        fail_at_key(pointer + "/" + key,
                    "unknown key \"" + key + "\" in " + what + common::did_you_mean(key, allowed) + "; expected one of: " + common::join(allowed));
      }
    }
  }

  void read_input(const json& root) {
    if (!root.contains("input")) fail("", "missing \"input\": expected {\"shape\": [C, H, W]} (per sample, no batch dimension)");
    const json& input = root["input"];
    if (!input.is_object()) fail("/input", "\"input\" must be an object {\"shape\": [...], \"dtype\": ...}, got " + describe(input));
    check_keys(input, "/input", {"shape", "dtype"}, "\"input\"");
    if (!input.contains("shape")) fail("/input", "\"input\" has no \"shape\": expected a list of positive sizes, e.g. [3, 224, 224]");
    graph_.input.shape = read_shape_list(input["shape"], "/input/shape", "input shape", false);
    if (auto problem = graph::check_input_shape(graph_.input.shape)) fail("/input/shape", *problem);
    if (input.contains("dtype")) {
      const json& d = input["dtype"];
      if (d == "float32") {
        graph_.input.dtype = DType::f32;
      } else if (d == "int32") {
        graph_.input.dtype = DType::i32;
      } else {
        fail("/input/dtype", "\"dtype\" must be \"float32\" or \"int32\", got " + describe(d));
      }
    }
  }

  Shape read_shape_list(const json& value, const std::string& pointer, const std::string& what, bool allow_minus_one) const {
    if (!value.is_array() || value.empty()) fail(pointer, what + " must be a non-empty list of positive integers, got " + describe(value));
    if (static_cast<std::int64_t>(value.size()) > kMaxRank)
      fail(pointer, what + " has " + std::to_string(value.size()) + " dimensions; at most " + std::to_string(kMaxRank) + " are supported");
    Shape shape;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const auto v = as_integer(value[i]);
      const bool ok = v && (*v >= 1 || (allow_minus_one && *v == -1));
      if (!ok) {
        fail(pointer + "/" + std::to_string(i), what + ": dimension " + std::to_string(i) + " must be a positive integer" +
                                                    (allow_minus_one ? " or -1" : "") + ", got " + describe(value[i]));
      }
      shape.push_back(*v);
    }
    return shape;
  }

  static std::optional<std::int64_t> as_integer(const json& value) {
    if (value.is_number_integer()) {
      if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return std::nullopt;
      return value.get<std::int64_t>();
    }
    if (value.is_number_float()) {
      const double d = value.get<double>();
      // Integral floats such as 3.0 or 1e3 are accepted while they are exact.
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740992.0) return static_cast<std::int64_t>(d);
    }
    return std::nullopt;
  }

  // Counts layers after expansion without building them, so that a hostile repeat is caught
  // before it costs time or memory. Saturates just above kMaxLayers.
  std::int64_t count_layers(const json& layers, const std::string& pointer, int depth) const {
    if (depth > kMaxRepeatNesting) fail(pointer, "repeats nest more than " + std::to_string(kMaxRepeatNesting) + " deep");
    std::int64_t total = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const json& item = layers[i];
      std::int64_t n = 1;
      if (item.is_object() && item.contains("repeat") && item.contains("layers") && item["layers"].is_array()) {
        const auto times = as_integer(item["repeat"]);
        const std::int64_t inner = count_layers(item["layers"], pointer + "/" + std::to_string(i) + "/layers", depth + 1);
        n = times && *times > 0 ? *times : 1;
        if (n > kMaxLayers || inner > kMaxLayers || n * inner > kMaxLayers) return kMaxLayers + 1;
        n *= inner;
      }
      total += n;
      if (total > kMaxLayers) return kMaxLayers + 1;
    }
    return total;
  }

  void expand(const json& layers, const std::string& pointer, Scope* scope, int& previous, int depth) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::string item_pointer = pointer + "/" + std::to_string(i);
      const json& item = layers[i];
      if (!item.is_object()) fail(item_pointer, "each layer must be an object with \"name\" and \"op\", got " + describe(item));
      if (item.contains("repeat")) {
        expand_repeat(item, item_pointer, scope, previous, depth);
      } else {
        previous = add_node(item, item_pointer, scope, previous);
      }
    }
  }

  void expand_repeat(const json& item, const std::string& pointer, Scope* scope, int& previous, int depth) {
    check_keys(item, pointer, {"repeat", "name", "start", "layers", "comment"}, "repeat block");
    const auto times = as_integer(item["repeat"]);
    if (!times || *times < 1) fail(pointer + "/repeat", "\"repeat\" must be a positive integer, got " + describe(item["repeat"]));
    if (!item.contains("name") || !item["name"].is_string())
      fail(pointer, "a repeat block needs a \"name\" (a string) that prefixes its copies, e.g. \"h\" gives h.0.<layer>");
    const std::string name = item["name"].get<std::string>();
    check_name(name, pointer + "/name");
    std::int64_t start = 0;
    if (item.contains("start")) {
      const auto s = as_integer(item["start"]);
      if (!s || *s < 0) fail(pointer + "/start", "\"start\" must be a non-negative integer, got " + describe(item["start"]));
      start = *s;
    }
    if (!item.contains("layers") || !item["layers"].is_array() || item["layers"].empty())
      fail(pointer, "repeat block '" + name + "' needs \"layers\": a non-empty array of layers to repeat");
    if (depth + 1 > kMaxRepeatNesting) fail(pointer, "repeats nest more than " + std::to_string(kMaxRepeatNesting) + " deep");
    const std::string outer_prefix = scope ? scope->prefix : std::string();
    for (std::int64_t c = 0; c < *times; ++c) {
      if (start > std::numeric_limits<std::int64_t>::max() - c) fail(pointer + "/start", "\"start\" is too large");
      Scope copy;
      copy.parent = scope;
      copy.prefix = outer_prefix + name + "." + std::to_string(start + c) + ".";
      copy.input_node = previous;
      expand(item["layers"], pointer + "/layers", &copy, previous, depth + 1);
    }
  }

  void check_name(const std::string& name, const std::string& pointer) const {
    if (name.empty()) fail(pointer, "names must not be empty");
    if (name.size() > 256) fail(pointer, "names are limited to 256 characters");
    if (name[0] == '$') fail(pointer, "names must not start with '$' (reserved for \"$input\")");
    for (char c : name) {
      if (static_cast<unsigned char>(c) < 0x20) fail(pointer, "names must not contain control characters");
    }
  }

  // Resolves a reference as docs/model-specs.md, "Model specs" says: "$input" is the copy's input (the model input at
  // top level); other names resolve in the innermost copy first, then outwards, then to full
  // names. Only earlier nodes are visible.
  int resolve(const std::string& reference, const Scope* scope) const {
    if (reference == "$input") return scope ? scope->input_node : kModelInput;
    for (const Scope* s = scope; s != nullptr; s = s->parent) {
      auto it = s->locals.find(reference);
      if (it != s->locals.end()) return it->second;
    }
    auto it = full_names_.find(reference);
    return it == full_names_.end() ? -2 : it->second;
  }

  std::string unknown_reference(const std::string& reference, const Scope* scope) const {
    std::vector<std::string_view> candidates;
    for (const Scope* s = scope; s != nullptr; s = s->parent) {
      for (const auto& local : s->locals) candidates.push_back(local.first);
    }
    const std::size_t limit = 20000;  // keep the error path fast on huge models
    for (std::size_t i = graph_.nodes.size(); i-- > 0 && candidates.size() < limit;) candidates.push_back(graph_.nodes[i].name);
    std::string message = "no earlier layer is named '" + reference + "'" + common::did_you_mean(reference, candidates);
    message += "; inputs name earlier layers (inside a repeat, layers of the same copy first) or \"$input\"";
    return message;
  }

  int add_node(const json& item, const std::string& pointer, Scope* scope, int previous) {
    if (!item.contains("name") || !item["name"].is_string())
      fail(pointer, "layer has no \"name\" (a unique string)" + (item.contains("name") ? ", got " + describe(item["name"]) : std::string()));
    const std::string local = item["name"].get<std::string>();
    check_name(local, pointer + "/name");
    const std::string full = (scope ? scope->prefix : std::string()) + local;
    if (!item.contains("op") || !item["op"].is_string()) fail_layer(pointer, full, "", "missing \"op\": expected one of " + common::join(op_names()));
    const std::string op_text = item["op"].get<std::string>();
    const auto op = ops::find_op(op_text);
    if (!op) {
      fail_layer(pointer + "/op", full, "",
                 "unknown op '" + op_text + "'" + common::did_you_mean(op_text, op_names()) + "; valid ops: " + common::join(op_names()));
    }
    const ops::OpInfo& info = ops::op_info(*op);
    if (full_names_.count(full)) {
      const Node& other = graph_.nodes[static_cast<std::size_t>(full_names_.at(full))];
      fail_layer(pointer + "/name", full, info.name, "duplicate name; first defined at " + graph_.source.locate(other.spec_pointer));
    }

    Node node;
    node.name = full;
    node.op = *op;
    node.spec_pointer = pointer;
    std::vector<std::string_view> allowed(std::begin(ops::kCommonLayerKeys), std::end(ops::kCommonLayerKeys));
    allowed.insert(allowed.end(), info.attributes.begin(), info.attributes.end());
    for (const auto& entry : item.items()) {
      bool known = false;
      for (auto a : allowed) known = known || a == entry.key();
      if (!known) {
        std::string takes = info.attributes.empty() ? std::string("no attributes") : "attributes " + common::join(info.attributes);
        fail_layer(pointer + "/" + entry.key(), full, info.name, /*at_key=*/true,
                   "unknown attribute '" + entry.key() + "'" + common::did_you_mean(entry.key(), allowed) + "; " + std::string(info.name) +
                       " takes " + takes);
      }
    }

    if (item.contains("inputs")) {
      const json& inputs = item["inputs"];
      if (!inputs.is_array() || inputs.empty())
        fail_layer(pointer + "/inputs", full, info.name, "\"inputs\" must be a non-empty list of layer names, got " + describe(inputs));
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        const std::string input_pointer = pointer + "/inputs/" + std::to_string(k);
        if (!inputs[k].is_string()) fail_layer(input_pointer, full, info.name, "inputs are layer names (strings), got " + describe(inputs[k]));
        const std::string reference = inputs[k].get<std::string>();
        const int index = resolve(reference, scope);
        if (index == -2) fail_layer(input_pointer, full, info.name, unknown_reference(reference, scope));
        node.inputs.push_back(index);
      }
    } else {
      node.inputs.push_back(previous);
    }
    const auto count = static_cast<int>(node.inputs.size());
    if (count < info.min_inputs || (info.max_inputs >= 0 && count > info.max_inputs)) {
      std::string expected = info.min_inputs == info.max_inputs ? "exactly " + std::to_string(info.min_inputs)
                             : info.max_inputs < 0              ? "at least " + std::to_string(info.min_inputs)
                                                                : std::to_string(info.min_inputs) + " to " + std::to_string(info.max_inputs);
      fail_layer(item.contains("inputs") ? pointer + "/inputs" : pointer, full, info.name,
                 "takes " + expected + " input" + (info.min_inputs == 1 && info.max_inputs == 1 ? "" : "s") + ", got " + std::to_string(count) +
                     (item.contains("inputs") ? "" : " (no \"inputs\" given: the previous layer's output)"));
    }

    AttributeReader attrs{*this, item, pointer, full, info.name};
    read_attributes(node, attrs, scope);

    const int index = static_cast<int>(graph_.nodes.size());
    full_names_.emplace(full, index);
    if (scope) scope->locals[local] = index;
    graph_.nodes.push_back(std::move(node));
    return index;
  }

  struct AttributeReader {
    const SpecReader& reader;
    const json& item;
    const std::string& pointer;
    const std::string& layer;
    std::string_view op;

    bool has(const char* key) const { return item.contains(key); }
    std::string at(const char* key) const { return pointer + "/" + key; }
    [[noreturn]] void bad(const char* key, const std::string& expected) const {
      reader.fail_layer(at(key), layer, op, "attribute '" + std::string(key) + "' must be " + expected + ", got " + describe(item[key]));
    }
    void require(const char* key, const std::string& expected) const {
      if (!has(key)) reader.fail_layer(pointer, layer, op, "missing attribute '" + std::string(key) + "' (" + expected + ")");
    }
    std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t min, const std::string& expected) const {
      if (!has(key)) return fallback;
      const auto v = as_integer(item[key]);
      if (!v || *v < min) bad(key, expected);
      return *v;
    }
    std::int64_t signed_integer(const char* key, std::int64_t fallback) const {
      if (!has(key)) return fallback;
      const auto v = as_integer(item[key]);
      if (!v) bad(key, "an integer");
      return *v;
    }
    bool boolean(const char* key, bool fallback) const {
      if (!has(key)) return fallback;
      if (!item[key].is_boolean()) bad(key, "true or false");
      return item[key].get<bool>();
    }
    double number(const char* key, double fallback, double min, double max, bool min_open, const std::string& expected) const {
      if (!has(key)) return fallback;
      if (!item[key].is_number()) bad(key, expected);
      const double v = item[key].get<double>();
      if (!std::isfinite(v) || v < min || v > max || (min_open && v == min)) bad(key, expected);
      return v;
    }
    Pair pair(const char* key, Pair fallback, std::int64_t min, const std::string& what) const {
      if (!has(key)) return fallback;
      const json& v = item[key];
      const std::string expected = what + " integer or a pair [h, w] of them";
      if (v.is_array()) {
        if (v.size() != 2) bad(key, expected);
        const auto h = as_integer(v[0]);
        const auto w = as_integer(v[1]);
        if (!h || !w || *h < min || *w < min) bad(key, expected);
        return {*h, *w};
      }
      const auto s = as_integer(v);
      if (!s || *s < min) bad(key, expected);
      return {*s, *s};
    }
    // A 1-D op's window attribute: one integer, or a list [l] of one. The height is `height`, the
    // window's along an axis of size 1 (a kernel, stride and dilation of 1, no padding).
    Pair single(const char* key, std::int64_t height, Pair fallback, std::int64_t min, const std::string& what) const {
      if (!has(key)) return fallback;
      const json& v = item[key];
      const std::string expected = what + " integer or a list [l] of one";
      const auto e = as_integer(v.is_array() && v.size() == 1 ? v[0] : v);
      if (!e || *e < min) bad(key, expected);
      return {height, *e};
    }
    // A 3-D op's window attribute: one integer for the depth, height and width, or a triple
    // [d, h, w] of them. The depth goes to `depth`, the height and width are returned.
    Pair triple(const char* key, std::int64_t& depth, Pair fallback, std::int64_t min, const std::string& what) const {
      if (!has(key)) return fallback;
      const json& v = item[key];
      const std::string expected = what + " integer or a triple [d, h, w] of them";
      std::int64_t x[3] = {};
      if (v.is_array()) {
        if (v.size() != 3) bad(key, expected);
        for (std::size_t i = 0; i < 3; ++i) {
          const auto e = as_integer(v[i]);
          if (!e || *e < min) bad(key, expected);
          x[i] = *e;
        }
      } else {
        const auto e = as_integer(v);
        if (!e || *e < min) bad(key, expected);
        x[0] = x[1] = x[2] = *e;
      }
      depth = x[0];
      return {x[1], x[2]};
    }
    // A positive finite number or a pair [h, w] of them.
    Scale factors(const char* key) const {
      const json& v = item[key];
      const std::string expected = "a positive number or a pair [h, w] of them";
      const auto positive = [](const json& x) { return x.is_number() && std::isfinite(x.get<double>()) && x.get<double>() > 0.0; };
      if (v.is_array()) {
        if (v.size() != 2 || !positive(v[0]) || !positive(v[1])) bad(key, expected);
        return {v[0].get<double>(), v[1].get<double>()};
      }
      if (!positive(v)) bad(key, expected);
      return {v.get<double>(), v.get<double>()};
    }
  };

  // A convolution (its definition, ops/convolution.cpp): out_channels, the window per axis (one
  // integer, or a list [l] in 1-D, a pair [h, w] in 2-D and a triple [d, h, w] in 3-D), a
  // transposed one's output_padding, groups and bias, with nn.ConvNd's defaults
  // (docs/model-specs.md, "Ops and attributes").
  void read_conv(const ops::ConvolutionDefinition& conv, Attributes& at, const AttributeReader& a) const {
    const std::string positive = "a positive integer";
    const bool three = conv.spatial_axes == 3;
    const bool one = conv.spatial_axes == 1;
    // `fallback.h` is also a 1-D window's height: the attribute's value along an axis it leaves
    // as it is.
    const auto window = [&](const char* key, std::int64_t& depth, Pair fallback, std::int64_t min, const char* what) {
      if (one) return a.single(key, fallback.h, fallback, min, what);
      return three ? a.triple(key, depth, fallback, min, what) : a.pair(key, fallback, min, what);
    };
    a.require("out_channels", positive);
    a.require("kernel", one     ? "a positive integer or a list [l]"
                        : three ? "a positive integer or a triple [d, h, w]"
                                : "a positive integer or a pair [h, w]");
    at.out_channels = a.integer("out_channels", 0, 1, positive);
    at.kernel = window("kernel", at.depth.kernel, {1, 1}, 1, "a positive");
    at.stride = window("stride", at.depth.stride, {1, 1}, 1, "a positive");
    at.padding = window("padding", at.depth.padding, {0, 0}, 0, "a non-negative");
    if (conv.transposed) at.output_padding = window("output_padding", at.depth.output_padding, {0, 0}, 0, "a non-negative");
    at.dilation = window("dilation", at.depth.dilation, {1, 1}, 1, "a positive");
    at.groups = a.integer("groups", 1, 1, positive);
    at.bias = a.boolean("bias", true);
  }

  // A pooling op (its definition, ops/pooling.cpp): a window's kernel, stride (its kernel by
  // default, as PyTorch's), padding, a max pool's dilation and ceil_mode, or an adaptive pool's
  // output size; per axis
  // one integer, or a list [l] in 1-D, a pair [h, w] in 2-D and a triple [d, h, w] in 3-D.
  void read_pool(const ops::PoolingDefinition& pool, Attributes& at, const AttributeReader& a) const {
    const bool three = pool.spatial_axes == 3;
    const bool max = pool.reduction == ops::PoolReduction::max;  // PyTorch's MaxPoolNd takes a dilation
    if (pool.spatial_axes == 1) {
      // The height is a window of 1 (ops/pooling.cpp): kernel, stride and output 1, padding 0.
      if (pool.reduction == ops::PoolReduction::adaptive_average) {
        at.output = a.single("output", 1, {1, 1}, 1, "a positive");
        return;
      }
      a.require("kernel", "a positive integer or a list [l]");
      at.kernel = a.single("kernel", 1, {1, 1}, 1, "a positive");
      at.stride = a.single("stride", 1, at.kernel, 1, "a positive");
      at.padding = a.single("padding", 0, {0, 0}, 0, "a non-negative");
      if (max) at.dilation = a.single("dilation", 1, {1, 1}, 1, "a positive");
      at.ceil_mode = a.boolean("ceil_mode", false);
      return;
    }
    if (pool.reduction == ops::PoolReduction::adaptive_average) {
      at.output = three ? a.triple("output", at.depth.output, {1, 1}, 1, "a positive") : a.pair("output", {1, 1}, 1, "a positive");
      return;
    }
    a.require("kernel", three ? "a positive integer or a triple [d, h, w]" : "a positive integer or a pair [h, w]");
    if (three) {
      at.kernel = a.triple("kernel", at.depth.kernel, {}, 1, "a positive");
      at.depth.stride = at.depth.kernel;
      at.stride = a.triple("stride", at.depth.stride, at.kernel, 1, "a positive");
      at.padding = a.triple("padding", at.depth.padding, {0, 0}, 0, "a non-negative");
      if (max) at.dilation = a.triple("dilation", at.depth.dilation, {1, 1}, 1, "a positive");
    } else {
      at.kernel = a.pair("kernel", {}, 1, "a positive");
      at.stride = a.pair("stride", at.kernel, 1, "a positive");
      at.padding = a.pair("padding", {0, 0}, 0, "a non-negative");
      if (max) at.dilation = a.pair("dilation", {1, 1}, 1, "a positive");
    }
    at.ceil_mode = a.boolean("ceil_mode", false);
  }

  // upsample: a mode, and the output given either by its size or by a scale of the input's.
  void read_upsample(Attributes& at, const AttributeReader& a) const {
    if (a.has("mode")) {
      const json& m = a.item["mode"];
      const ops::UpsampleModeDefinition* mode = m.is_string() ? ops::upsample_mode_named(m.get<std::string>()) : nullptr;
      if (mode == nullptr) a.bad("mode", either_of(ops::upsample_modes()));
      at.mode = mode->mode;
    }
    if (a.has("size") == a.has("scale")) {
      fail_layer(a.has("size") ? a.at("scale") : a.pointer, a.layer, a.op,
                 std::string(a.has("size") ? "give 'size' or 'scale', not both" : "missing attribute 'size' ([oh, ow]) or 'scale' ([sh, sw])"));
    }
    if (a.has("size")) at.size = a.pair("size", {}, 1, "a positive");
    if (a.has("scale")) at.scale = a.factors("scale");
    if (a.has("align_corners") && !ops::upsample_mode(at.mode).align_corners)
      fail_layer(a.at("align_corners"), a.layer, a.op, "'align_corners' is for mode \"bilinear\" only (PyTorch's rule)");
    at.align_corners = a.boolean("align_corners", false);
  }

  // reduce: a mode, a non-empty list of per-sample axes, keepdims (ONNX's default, true).
  void read_reduce(Attributes& at, const AttributeReader& a) const {
    a.require("mode", either_of(ops::reduce_modes()));
    const json& m = a.item["mode"];
    const ops::ReduceModeDefinition* mode = m.is_string() ? ops::reduce_mode_named(m.get<std::string>()) : nullptr;
    if (mode == nullptr) a.bad("mode", either_of(ops::reduce_modes()));
    at.reduce_mode = mode->mode;
    const std::string expected =
        "a non-empty list of at most " + std::to_string(kMaxRank) + " per-sample axes, e.g. [1, 2] (the batch axis is not one)";
    a.require("axes", expected);
    const json& axes = a.item["axes"];
    if (!axes.is_array() || axes.empty() || static_cast<std::int64_t>(axes.size()) > kMaxRank) a.bad("axes", expected);
    for (const json& v : axes) {
      const auto axis = as_integer(v);
      if (!axis) a.bad("axes", expected);
      at.axes.push_back(*axis);
    }
    at.keepdims = a.boolean("keepdims", true);
  }

  // A list of integers (each within ±2^62, so that sums of two stay in 64 bits); `required`
  // refuses an absent or empty list. Long lists are refused: at most `limit` values.
  // `clamp`: values past ±2^62 are taken as ±2^62 instead (a slice's bounds and steps, where
  // they mean "past the end" for any size a tensor can have).
  std::vector<std::int64_t> integer_list(const AttributeReader& a, const char* key, const std::string& expected, std::size_t limit,
                                         bool clamp = false) const {
    std::vector<std::int64_t> out;
    if (!a.has(key)) return out;
    const json& list = a.item[key];
    if (!list.is_array() || list.size() > limit) a.bad(key, expected);
    for (const json& v : list) {
      auto i = as_integer(v);
      if (i && clamp) i = std::clamp(*i, -kListValueLimit, kListValueLimit);
      if (!i || *i > kListValueLimit || *i < -kListValueLimit) a.bad(key, expected);
      out.push_back(*i);
    }
    return out;
  }

  // slice: axes, starts, ends of one length each (steps too, 1 each where absent): Python's
  // x[start:end:step] along each per-sample axis (ONNX Slice's rules for out-of-range values).
  void read_slice(Attributes& at, const AttributeReader& a) const {
    const std::string axes = "a non-empty list of at most " + std::to_string(kMaxRank) + " per-sample axes, e.g. [0]";
    const std::string bounds = "a list of integers, one per axis";
    a.require("axes", axes);
    a.require("starts", bounds);
    a.require("ends", bounds);
    at.axes = integer_list(a, "axes", axes, kMaxAxes);
    if (at.axes.empty()) a.bad("axes", axes);
    at.starts = integer_list(a, "starts", bounds, at.axes.size(), true);
    at.ends = integer_list(a, "ends", bounds, at.axes.size(), true);
    at.steps = integer_list(a, "steps", "a list of non-zero integers, one per axis", at.axes.size(), true);
    if (at.starts.size() != at.axes.size()) a.bad("starts", bounds);
    if (at.ends.size() != at.axes.size()) a.bad("ends", bounds);
    if (!a.has("steps")) at.steps.assign(at.axes.size(), 1);
    if (at.steps.size() != at.axes.size() || std::count(at.steps.begin(), at.steps.end(), 0) != 0)
      a.bad("steps", "a list of non-zero integers, one per axis");
  }

  // where: the condition's shape (its values true unless a model file gives them), and with one
  // input the constant operand's shape (0 unless a model file gives it) and which side it is.
  void read_where(const Node& node, Attributes& at, const AttributeReader& a) const {
    const std::string what = "layer '" + node.name + "' (where): attribute ";
    a.require("condition", "the per-sample shape of the boolean condition, broadcast to the output, e.g. [1, 8, 8]");
    at.condition = read_shape_list(a.item["condition"], a.at("condition"), what + "'condition'", false);
    if (node.inputs.size() == 1) {
      if (!a.has("operand"))
        fail_layer(a.pointer, a.layer, a.op, "takes 2 inputs, or 1 and an 'operand' (the per-sample shape of the constant it picks from), got 1");
      at.operand = read_shape_list(a.item["operand"], a.at("operand"), what + "'operand'", false);
      at.constant_first = a.boolean("constant_first", false);
    } else if (a.has("operand") || a.has("constant_first")) {
      fail_layer(a.at(a.has("operand") ? "operand" : "constant_first"), a.layer, a.op,
                 "'operand' and 'constant_first' are for a layer of one input; this one has 2");
    }
  }

  // pad: pads (every per-sample axis's start, then every end: ONNX's order), mode, value.
  void read_pad(Attributes& at, const AttributeReader& a) const {
    const std::string pads = "a list of 2 integers per per-sample axis: every axis's start, then every axis's end, e.g. [0, 1, 1, 0, 1, 1]";
    a.require("pads", pads);
    at.pads = integer_list(a, "pads", pads, 2 * kMaxAxes);
    if (at.pads.empty() || at.pads.size() % 2 != 0) a.bad("pads", pads);
    if (a.has("mode")) {
      const json& m = a.item["mode"];
      if (m == "constant") {
        at.pad_mode = PadMode::constant;
      } else if (m == "reflect") {
        at.pad_mode = PadMode::reflect;
      } else if (m == "edge") {
        at.pad_mode = PadMode::edge;
      } else {
        a.bad("mode", "\"constant\", \"reflect\" or \"edge\"");
      }
    }
    at.pad_value = a.number("value", 0.0, -3.4e38, 3.4e38, false, "a finite float32 number");
    if (a.has("value") && at.pad_mode != PadMode::constant) a.bad("value", "absent: only mode \"constant\" pads with a value");
  }

  // rel_pos_bias: window, exactly [wh, ww]. Unlike the pairs of the pools, one integer is not
  // taken for both: the table's layout depends on which is the height and which the width.
  void read_window(Attributes& at, const AttributeReader& a) const {
    const std::string expected = "a pair [wh, ww] of positive integers (the attention window's height and width)";
    a.require("window", "the attention window [wh, ww]");
    const json& v = a.item["window"];
    if (!v.is_array() || v.size() != 2) a.bad("window", expected);
    const auto wh = as_integer(v[0]);
    const auto ww = as_integer(v[1]);
    if (!wh || !ww || *wh < 1 || *ww < 1) a.bad("window", expected);
    at.window = {*wh, *ww};
  }

  // An element-wise binary op (ops/elementwise_binary.cpp): two inputs, or one and an operand
  // tensor (a constant, or learned with "trainable").
  void read_binary(const Node& node, Attributes& at, const AttributeReader& a) const {
    if (node.inputs.size() == 1) {
      if (!a.has("operand")) {
        fail_layer(a.pointer + (a.has("inputs") ? "/inputs" : ""), a.layer, a.op,
                   "takes 2 inputs, or 1 and an 'operand' (the per-sample shape of the tensor it is combined with), got 1" +
                       std::string(a.has("inputs") ? "" : " (no \"inputs\" given: the previous layer's output)"));
      }
      at.operand =
          read_shape_list(a.item["operand"], a.at("operand"), "layer '" + node.name + "' (" + std::string(a.op) + "): attribute 'operand'", false);
      at.operand_trainable = a.boolean("trainable", false);
    } else if (a.has("operand") || a.has("trainable")) {
      fail_layer(a.at(a.has("operand") ? "operand" : "trainable"), a.layer, a.op,
                 "'operand' and 'trainable' are for a layer of one input; this one has 2");
    }
  }

  // Long: one case per op with attributes, each a few reads with the spec's defaults (docs/model-specs.md,
  // "Ops and attributes"), in the table's order.
  void read_attributes(Node& node, const AttributeReader& a, const Scope* scope) {
    Attributes& at = node.attrs;
    const std::string positive = "a positive integer";
    if (const ops::PoolingDefinition* pool = ops::pooling_definition(node.op)) return read_pool(*pool, at, a);
    if (const ops::ConvolutionDefinition* conv = ops::convolution_definition(node.op)) return read_conv(*conv, at, a);
    if (ops::binary_definition(node.op) != nullptr) return read_binary(node, at, a);
    if (ops::normalization_definition(node.op) != nullptr) {
      at.eps = a.number("eps", 1e-5, 0.0, 1.0, true, "a number in (0, 1]");
      return;
    }
    if (ops::recurrent_definition(node.op) != nullptr) {  // nn.LSTM's and nn.GRU's defaults
      a.require("hidden_size", positive);
      at.hidden_size = a.integer("hidden_size", 0, 1, positive);
      at.bidirectional = a.boolean("bidirectional", false);
      at.bias = a.boolean("bias", true);
      return;
    }
    switch (node.op) {
      case OpKind::linear:
        a.require("out_features", positive);
        at.out_features = a.integer("out_features", 0, 1, positive);
        at.bias = a.boolean("bias", true);
        if (a.has("tied_to")) {
          const json& t = a.item["tied_to"];
          if (!t.is_string()) a.bad("tied_to", "the name of an earlier embedding or linear layer");
          if (t.get<std::string>() == "$input")
            fail_layer(a.at("tied_to"), node.name, "linear", "'tied_to' must name an earlier embedding or linear layer, not \"$input\"");
          const int target = resolve(t.get<std::string>(), scope);
          if (target < 0) {
            fail_layer(a.at("tied_to"), node.name, "linear", "'tied_to': " + unknown_reference(t.get<std::string>(), scope));
          }
          const OpKind kind = graph_.nodes[static_cast<std::size_t>(target)].op;
          if (kind != OpKind::embedding && kind != OpKind::linear)
            fail_layer(a.at("tied_to"), node.name, "linear",
                       "'tied_to' must name an embedding or linear layer; '" + t.get<std::string>() + "' is " + std::string(op_name(kind)));
          at.tied_to = target;
        }
        break;
        HWPROF_SOFTMAX_CASES
        at.axis = a.signed_integer("axis", -1);
        break;
      case OpKind::upsample:
        read_upsample(at, a);
        break;
      case OpKind::reduce:
        read_reduce(at, a);
        break;
      case OpKind::slice:
        read_slice(at, a);
        break;
      case OpKind::pad:
        read_pad(at, a);
        break;
      case OpKind::gather: {
        const std::string expected = "a non-empty list of at most 2^20 positions along 'axis' (negative count from the end)";
        a.require("indices", expected);
        at.axis = a.signed_integer("axis", 0);
        at.indices = integer_list(a, "indices", expected, std::size_t{1} << 20);
        if (at.indices.empty()) a.bad("indices", expected);
        break;
      }
      case OpKind::expand:
        a.require("shape", "the per-sample target shape, of the input's rank; each input axis equal to it or 1");
        at.shape = read_shape_list(a.item["shape"], a.at("shape"), "layer '" + node.name + "' (expand): attribute 'shape'", false);
        break;
      case OpKind::tile: {
        const std::string expected = "a list of positive copy counts, one per per-sample axis";
        a.require("repeats", expected);
        at.repeats = integer_list(a, "repeats", expected, kMaxAxes);
        if (at.repeats.empty() || std::any_of(at.repeats.begin(), at.repeats.end(), [](std::int64_t r) { return r < 1; })) a.bad("repeats", expected);
        break;
      }
      case OpKind::dropout:
        at.p = a.number("p", 0.5, 0.0, 1.0, false, "a probability in [0, 1)");
        if (at.p >= 1.0) a.bad("p", "a probability in [0, 1)");
        break;
      case OpKind::concat:
        at.axis = a.signed_integer("axis", 0);
        break;
      case OpKind::reshape:
        a.require("shape", "the per-sample target shape, e.g. [16, 64]; one size may be -1");
        at.shape = read_shape_list(a.item["shape"], a.at("shape"), "layer '" + node.name + "' (reshape): attribute 'shape'", true);
        break;
      case OpKind::transpose:
        a.require("perm", "a permutation of the per-sample axes, e.g. [1, 0]");
        if (!a.item["perm"].is_array() || a.item["perm"].empty()) a.bad("perm", "a non-empty list of axes");
        if (static_cast<std::int64_t>(a.item["perm"].size()) > kMaxRank) a.bad("perm", "at most " + std::to_string(kMaxRank) + " axes");
        for (const json& v : a.item["perm"]) {
          const auto axis = as_integer(v);
          if (!axis) a.bad("perm", "a list of integer axes");
          at.perm.push_back(*axis);
        }
        break;
      case OpKind::embedding:
        a.require("num_embeddings", "the vocabulary size");
        a.require("embedding_dim", "the width of each embedding row");
        at.num_embeddings = a.integer("num_embeddings", 0, 1, positive);
        at.embedding_dim = a.integer("embedding_dim", 0, 1, positive);
        break;
      case OpKind::pos_embedding:
        a.require("num_positions", "the largest sequence length it covers");
        at.num_positions = a.integer("num_positions", 0, 1, positive);
        break;
      case OpKind::rel_pos_bias:
        read_window(at, a);
        break;
      case OpKind::select:
        a.require("index", "the index to keep along 'axis'");
        at.axis = a.signed_integer("axis", 0);
        at.index = a.signed_integer("index", 0);
        break;
      case OpKind::attention:
        a.require("heads", positive);
        at.heads = a.integer("heads", 0, 1, positive);
        at.causal = a.boolean("causal", false);
        at.bias = a.boolean("bias", true);
        break;
      case OpKind::where:
        read_where(node, at, a);
        break;
      case OpKind::flatten:
      case OpKind::cls_token:
      case OpKind::matmul:
      case OpKind::unsupported:  // find_op() never yields it: a spec cannot name it
        break;
        HWPROF_POOLING_CASES
        HWPROF_NORMALIZATION_CASES
        HWPROF_ELEMENTWISE_BINARY_CASES
        HWPROF_RECURRENT_CASES
        HWPROF_CONVOLUTION_CASES
        break;                            // above, from their definitions
        HWPROF_ELEMENTWISE_UNARY_CASES {  // their definitions name their attributes
          const ops::UnaryDefinition* unary = ops::unary_definition(node.op);
          if (unary == nullptr) break;
          if (const ops::UnaryParameter& p = unary->parameter; !p.name.empty()) {
            at.parameter = a.number(std::string(p.name).c_str(), p.fallback, -1e6, 1e6, false, std::string(p.expected));
          }
          if (unary->tanh_form && a.has("approximate")) {
            const json& v = a.item["approximate"];
            if (v == "none") {
              at.approximate = GeluApproximation::none;
            } else if (v == "tanh") {
              at.approximate = GeluApproximation::tanh;
            } else {
              a.bad("approximate", "\"none\" (the erf form) or \"tanh\"");
            }
          }
          break;
        }
    }
  }

  Graph& graph_;
  std::unordered_map<std::string, int> full_names_;
};

std::string stem_of(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const auto dot = base.rfind(".json");
  if (dot != std::string::npos && dot + 5 == base.size()) base.resize(dot);
  return base;
}

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." → the part
// after the first ": "; "[json.exception.out_of_range.406] number overflow ..." → after "] ".
std::string strip_exception_id(const std::string& what) {
  const auto colon = what.find(": ");
  if (colon != std::string::npos) return what.substr(colon + 2);
  const auto bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// "file:line:col" of the number that nlohmann quotes in "number overflow parsing '1e400'": its
// first occurrence in the text that stands alone as a token; just "file" when none does.
std::string locate_number_error(std::string_view text, const std::string& what, const std::string& source_name) {
  const auto open = what.find(" '");
  const auto close = what.rfind('\'');
  if (open == std::string::npos || close == std::string::npos || close <= open + 2) return source_name;
  const std::string token = what.substr(open + 2, close - open - 2);
  auto is_number_char = [](char c) { return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'; };
  for (auto pos = text.find(token); pos != std::string_view::npos; pos = text.find(token, pos + 1)) {
    const bool starts = pos == 0 || !is_number_char(text[pos - 1]);
    const bool ends = pos + token.size() == text.size() || !is_number_char(text[pos + token.size()]);
    if (starts && ends) return source_name + ":" + common::line_column(text, pos);
  }
  return source_name;
}

}  // namespace

Result<Graph> parse_model(std::string_view json_text, const std::string& source_name) {
  if (static_cast<std::int64_t>(json_text.size()) > kMaxSpecBytes) {
    return Error{source_name + ": the spec is " + std::to_string(json_text.size()) + " bytes; the limit is " + std::to_string(kMaxSpecBytes) +
                 " bytes"};
  }
  Graph graph;
  graph.name = stem_of(source_name);
  graph.source = SourceText(source_name, std::string(json_text));
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{source_name + ":1:1: invalid JSON: the file is empty; expected a model spec object"};
  }
  if (std::string nesting = common::json_nesting_error(json_text, source_name); !nesting.empty()) return Error{nesting};
  json root;
  DuplicateKeyCheck duplicates;
  try {
    root = json::parse(json_text.begin(), json_text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    // nlohmann reports the byte after the offending token; point at the last byte it read.
    const std::size_t byte = e.byte > 0 ? e.byte - 1 : 0;
    return Error{source_name + ":" + common::line_column(json_text, byte) + ": invalid JSON: " + strip_exception_id(e.what())};
  } catch (const SpecError&) {
    return Error{graph.source.locate(duplicates.duplicate_pointer) + ": duplicate key \"" + duplicates.duplicate_key +
                 "\" in this object; each key may appear once"};
  } catch (const json::exception& e) {
    // A number too large for a double (1e400) is an out_of_range error that carries no position.
    return Error{locate_number_error(json_text, e.what(), source_name) + ": invalid JSON: " + strip_exception_id(e.what())};
  }
  try {
    SpecReader reader(graph);
    reader.read(root);
  } catch (const SpecError& e) {
    return Error{e.message};
  }
  if (auto error = graph::infer_shapes(graph)) return *error;
  return graph;
}

Result<Graph> load_model(const std::string& path, const LoadOptions& options) {
  const bool onnx_name = path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
  auto text =
      common::read_input_file(path, onnx_name ? "ONNX model" : "model spec", static_cast<std::size_t>(onnx_name ? kMaxOnnxBytes : kMaxSpecBytes));
  if (!text) return text.error();
  // Under any other name an ONNX ModelProto is known by its first byte: field 1, ir_version, a
  // varint (tag 0x08), which no JSON text starts with.
  if (onnx_name || (!text->empty() && (*text)[0] == '\x08')) return import_onnx(*text, path, options);
  return parse_model(*text, path);
}

}  // namespace hwprof
