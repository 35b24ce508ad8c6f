// hwprof summary: the analytic cost of a model as a table, JSON (docs/cli.md, "JSON (`--format json`)") or CSV.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyze/number_format.hpp"
#include "common/count.hpp"
#include "hwprof/engine/report.hpp"

namespace hwprof {
namespace {

using analysis::group_digits;
using common::Count;

constexpr const char* kConvention =
    "per sample; MACs count conv2d, conv3d, conv_transpose2d, conv_transpose3d, linear and attention matmuls, biases excluded (torchvision/fvcore "
    "convention); FLOPs = 2*MACs + element-wise work (docs/cost.md, 'Counting convention')";

// One row of a report: a layer, or consecutive layers folded under a common name prefix.
struct Row {
  std::string name;
  std::string op;
  int layers = 1;
  Shape output_shape;
  std::int64_t params = 0, buffers = 0, macs = 0, flops = 0, train_forward_flops = 0, backward_flops = 0;
  std::int64_t input_bytes = 0, output_bytes = 0, weight_bytes = 0, bytes = 0;
  int not_counted = 0;    // layers in the row that are not counted (its sums are lower bounds)
  std::string reason;     // a single not-counted layer: why
  std::string source_op;  // a single not-counted layer: the file's op type
  bool counted() const { return not_counted == 0; }
  bool unknown() const { return not_counted == layers; }  // nothing in the row is counted
};

// The first `depth` dot-separated parts of `name`, or "" when the name has no more parts than that.
std::string fold_key(const std::string& name, int depth) {
  if (depth <= 0) return {};
  std::size_t pos = 0;
  for (int part = 0; part < depth; ++part) {
    pos = name.find('.', pos);
    if (pos == std::string::npos) return {};
    if (part + 1 < depth) ++pos;
  }
  return name.substr(0, pos);
}

Row row_of(const LayerCost& l) {
  Row r;
  r.name = l.name;
  r.op = std::string(op_name(l.op));
  r.output_shape = l.output_shape;
  r.params = l.params;
  r.buffers = l.buffers;
  r.macs = l.macs;
  r.flops = l.flops;
  r.train_forward_flops = l.train_forward_flops;
  r.backward_flops = l.backward_flops;
  r.input_bytes = l.input_bytes;
  r.output_bytes = l.output_bytes;
  r.weight_bytes = l.weight_bytes;
  r.bytes = l.bytes;
  if (!l.counted) {
    r.not_counted = 1;
    r.reason = l.not_counted;
    r.source_op = l.source_op;
  }
  return r;
}

std::vector<Row> rows_of(const ModelCost& cost, int depth) {
  std::vector<Row> rows;
  std::string open_key;
  for (const LayerCost& layer : cost.layers) {
    const std::string key = fold_key(layer.name, depth);
    if (!key.empty() && key == open_key) {
      // Sums of a folded block cannot overflow: they are partial sums of the model's totals.
      Row& r = rows.back();
      r.name = key;
      r.op = std::to_string(++r.layers) + " layers";
      r.output_shape = layer.output_shape;
      r.params += layer.params;
      r.buffers += layer.buffers;
      r.macs += layer.macs;
      r.flops += layer.flops;
      r.train_forward_flops += layer.train_forward_flops;
      r.backward_flops += layer.backward_flops;
      r.input_bytes += layer.input_bytes;
      r.output_bytes = layer.output_bytes;
      r.weight_bytes += layer.weight_bytes;
      r.bytes += layer.bytes;
      r.not_counted += layer.counted ? 0 : 1;
    } else {
      rows.push_back(row_of(layer));
    }
    open_key = key;
  }
  return rows;
}

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

nlohmann::ordered_json checked_product(std::int64_t a, std::int64_t b) {
  const Count c = Count(a) * b;
  return c.overflowed() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.value());
}

// Columns a UTF-8 text takes ("≥" is one column but three bytes), and the text right-aligned in
// `width` columns.
std::size_t display_width(const std::string& text) {
  std::size_t w = 0;
  for (unsigned char ch : text) w += (ch & 0xC0) != 0x80 ? 1 : 0;
  return w;
}
std::string right_aligned(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string shape_text(const Shape& shape, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? separator : "") + std::to_string(shape[i]);
  return out;
}

}  // namespace

// Long: one line per field of `summary --format json` (docs/cli.md, "JSON (`--format json`)"), in its order.
std::string summary_json(const ModelCost& cost, const SummaryOptions& options) {
  using nlohmann::ordered_json;
  const CostTotals& t = cost.totals;
  const MemoryEstimate& m = cost.memory;
  ordered_json j;
  j["schema"] = "hwprof.summary/1";
  j["model"] = cost.model;
  if (!options.source_file.empty()) j["spec"] = options.source_file;
  j["batch"] = cost.batch;
  j["input"] = {{"shape", cost.input.shape}, {"dtype", dtype_name(cost.input.dtype)}};
  j["source"] = "analytic";
  j["convention"] = kConvention;
  if (!cost.notes.empty()) j["notes"] = cost.notes;  // what the model file's reading found (Graph::notes)
  const auto lower_bound_note = [&] {
    return std::to_string(t.not_counted_layers) + " layer" + (t.not_counted_layers == 1 ? " is" : "s are") +
           " not counted (ops hwprof cannot map): every total is a lower bound";
  };
  j["totals"] = {
      {"complete", t.complete()},
      {"params", t.params},
      {"trainable_params", t.trainable_params},
      {"buffers", t.buffers},
      {"macs", t.macs},
      {"flops", t.flops},
      {"backward_flops", t.backward_flops},
      {"train_forward_flops", t.train_forward_flops},
      {"training_flops", t.training_flops},
      {"bytes", t.bytes},
      {"per_batch",
       {{"macs", checked_product(t.macs, cost.batch)},
        {"flops", checked_product(t.flops, cost.batch)},
        {"backward_flops", checked_product(t.backward_flops, cost.batch)},
        {"training_flops", checked_product(t.training_flops, cost.batch)}}},
  };
  if (!t.complete()) {
    j["totals"]["not_counted_layers"] = t.not_counted_layers;
    j["totals"]["note"] = lower_bound_note();
  }
  j["memory"] = {
      {"source", "analytic"},
      {"complete", t.complete()},
      {"unit", "bytes"},
      {"batch", m.batch},
      {"optimizer", optimizer_name(m.optimizer)},
      {"param_bytes", m.param_bytes},
      {"buffer_bytes", m.buffer_bytes},
      {"gradient_bytes", m.gradient_bytes},
      {"optimizer_bytes", m.optimizer_bytes},
      {"model_state_bytes", m.model_state_bytes},
      {"inference_activation_bytes", m.inference_activation_bytes},
      {"inference_peak_layer", m.inference_peak_layer},
      {"training_activation_bytes", m.training_activation_bytes},
      {"inference_total_bytes", m.inference_total_bytes},
      {"training_total_bytes", m.training_total_bytes},
  };
  ordered_json layers = ordered_json::array();
  for (const Row& r : rows_of(cost, options.depth)) {
    ordered_json l;
    l["name"] = r.name;
    l["op"] = r.op;
    if (r.layers > 1) l["folded_layers"] = r.layers;
    l["output_shape"] = r.output_shape;
    l["counted"] = r.counted();
    if (!r.counted()) {
      if (r.layers > 1) l["not_counted_layers"] = r.not_counted;
      if (r.layers == 1) {
        l["source_op"] = r.source_op;
        l["not_counted"] = r.reason;
      }
    }
    // A row with nothing counted has no figures (null, never 0); a partly counted fold's are lower bounds.
    const auto figure = [&](std::int64_t v) { return r.unknown() ? ordered_json(nullptr) : ordered_json(v); };
    l["params"] = figure(r.params);
    l["buffers"] = figure(r.buffers);
    l["macs"] = figure(r.macs);
    l["flops"] = figure(r.flops);
    l["flops_share"] = r.unknown() ? ordered_json(nullptr) : ordered_json(share(r.flops, t.flops));
    l["backward_flops"] = figure(r.backward_flops);
    l["train_forward_flops"] = figure(r.train_forward_flops);
    l["input_bytes"] = r.input_bytes;
    l["output_bytes"] = r.output_bytes;
    l["weight_bytes"] = figure(r.weight_bytes);
    l["bytes"] = figure(r.bytes);
    if (r.unknown()) {
      l["intensity"] = nullptr;  // not counted
    } else if (r.bytes > 0) {
      l["intensity"] = static_cast<double>(r.flops) * static_cast<double>(cost.batch) / static_cast<double>(r.bytes);
    } else {
      l["intensity"] = nullptr;  // moves no data (a view)
    }
    layers.push_back(std::move(l));
  }
  j["layers"] = std::move(layers);
  return j.dump(2) + "\n";
}

std::string summary_csv(const ModelCost& cost, const SummaryOptions& options) {
  auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::string out =
      "name,op,layers,output_shape,params,buffers,macs,flops,flops_share,backward_flops,train_forward_flops,"
      "input_bytes,output_bytes,weight_bytes,bytes,intensity,not_counted_layers\n";
  for (const Row& r : rows_of(cost, options.depth)) {
    // A row with nothing counted leaves its figures empty (never 0).
    const auto figure = [&](std::int64_t v) { return r.unknown() ? std::string() : std::to_string(v); };
    const std::string intensity =
        !r.unknown() && r.bytes > 0
            ? fmt::format("{:.6g}", static_cast<double>(r.flops) * static_cast<double>(cost.batch) / static_cast<double>(r.bytes))
            : "";
    const std::string flops_share = r.unknown() ? std::string() : fmt::format("{:.6f}", share(r.flops, cost.totals.flops));
    out +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", quote(r.name), quote(r.op), r.layers, shape_text(r.output_shape, "x"),
                    figure(r.params), figure(r.buffers), figure(r.macs), figure(r.flops), flops_share, figure(r.backward_flops),
                    figure(r.train_forward_flops), r.input_bytes, r.output_bytes, figure(r.weight_bytes), figure(r.bytes), intensity, r.not_counted);
  }
  return out;
}

namespace {

// The per-layer table of `summary`: columns as wide as their widest cell (at most 60).
std::string summary_layer_table(const ModelCost& cost, const std::vector<Row>& rows) {
  const CostTotals& t = cost.totals;
  struct Column {
    const char* title;
    bool right;
    std::vector<std::string> cells;
    std::size_t width = 0;
  };
  std::vector<Column> columns = {{"Layer", false, {}}, {"Op", false, {}},   {"Output shape", false, {}}, {"Params", true, {}},
                                 {"MACs", true, {}},   {"FLOPs", true, {}}, {"FLOPs %", true, {}}};
  for (const Row& r : rows) {
    // Not counted: the cells say so; a folded block with some of them gives lower bounds (≥).
    const auto figure = [&](const std::string& text) { return r.unknown() ? std::string("not counted") : r.counted() ? text : "≥ " + text; };
    columns[0].cells.push_back(r.name);
    columns[1].cells.push_back(r.source_op.empty() ? r.op : r.source_op);  // the file's op where hwprof has none
    columns[2].cells.push_back(format_shape(r.output_shape));
    columns[3].cells.push_back(figure(group_digits(r.params)));
    columns[4].cells.push_back(figure(group_digits(r.macs)));
    columns[5].cells.push_back(figure(group_digits(r.flops)));
    columns[6].cells.push_back(r.unknown() ? std::string("-") : analysis::percent(share(r.flops, t.flops)));
  }
  for (Column& c : columns) {
    c.width = std::string_view(c.title).size();
    for (const auto& cell : c.cells) c.width = std::max(c.width, display_width(cell));
    c.width = std::min<std::size_t>(c.width, 60);
  }
  auto line = [&](auto cell_of) {
    std::string s;
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const Column& c = columns[k];
      std::string text = cell_of(k);
      if (display_width(text) > c.width) text = text.substr(0, c.width - 1) + "~";
      if (k) s += "  ";
      s += c.right ? right_aligned(text, c.width) : text + std::string(c.width - display_width(text), ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::size_t total_width = 0;
  for (const Column& c : columns) total_width += c.width + 2;
  const std::string rule(total_width - 2, '-');
  std::string out = line([&](std::size_t k) { return std::string(columns[k].title); });
  out += rule + "\n";
  for (std::size_t i = 0; i < rows.size(); ++i) out += line([&](std::size_t k) { return columns[k].cells[i]; });
  return out + rule + "\n";
}

// The model's totals, lower bounds (≥) when layers are not counted, with those layers listed.
std::string summary_totals(const ModelCost& cost) {
  const CostTotals& t = cost.totals;
  const MemoryEstimate& m = cost.memory;
  auto batch_total = [&](std::int64_t per_sample) {
    const Count c = Count(per_sample) * cost.batch;
    return c.overflowed() ? std::string("overflows 64-bit") : analysis::si(static_cast<double>(c.value()));
  };
  const std::string at_least = t.complete() ? "" : "≥ ";
  const auto field = [&](const std::string& label, const std::string& value, const std::string& note = {}) {
    return fmt::format("{:<34}{}{}\n", label, right_aligned(at_least + value, 22), note.empty() ? "" : "   " + note);
  };
  std::string out = field("Total params:", group_digits(t.params), "(" + analysis::megabytes(m.param_bytes) + " fp32)");
  out += field("Trainable params:", group_digits(t.trainable_params));
  if (t.buffers > 0) out += field("Non-trainable buffers:", group_digits(t.buffers), "(batchnorm running statistics, constant operands)");
  out += field("MACs per sample:", group_digits(t.macs), "(" + analysis::si(static_cast<double>(t.macs)) + ")");
  out += field("Forward FLOPs per sample:", group_digits(t.flops), "(" + analysis::si(static_cast<double>(t.flops)) + ")");
  out += field("Backward FLOPs per sample:", group_digits(t.backward_flops), "(" + analysis::si(static_cast<double>(t.backward_flops)) + ")");
  out += field("Training-step FLOPs per sample:", group_digits(t.training_flops), "(forward in training mode + backward)");
  out += field(fmt::format("Forward FLOPs at batch {}:", cost.batch), batch_total(t.flops));
  out += field(fmt::format("Training FLOPs at batch {}:", cost.batch), batch_total(t.training_flops));
  out += field(fmt::format("Min. bytes moved at batch {}:", cost.batch), analysis::megabytes(t.bytes), "(fp32 inputs + weights + outputs)");
  if (!t.complete()) {
    out += fmt::format(
        "\nIncomplete: {} layer{} not counted (ops hwprof cannot map); the totals above and the parameter memory below are lower bounds:\n",
        t.not_counted_layers, t.not_counted_layers == 1 ? " is" : "s are");
    for (const LayerCost& l : cost.layers) {
      if (!l.counted) out += fmt::format("  {}  {}\n", l.name, l.not_counted);
    }
  }
  return out;
}

// Memory at the batch. Inference activations are sizes of tensors, known for every layer; the
// rest needs the weights and saved tensors of layers that may not be counted (≥).
std::string summary_memory(const ModelCost& cost) {
  const MemoryEstimate& m = cost.memory;
  const std::string at_least = cost.totals.complete() ? "" : "≥ ";
  std::string out = fmt::format("Memory at batch {} (analytic, decimal MB, optimizer {}):\n", m.batch, optimizer_name(m.optimizer));
  const auto mem = [&](const std::string& label, std::int64_t bytes, const std::string& note = {}, bool exact = false) {
    out += fmt::format("  {:<32}{}{}\n", label, right_aligned((exact ? "" : at_least) + analysis::megabytes(bytes), 22),
                       note.empty() ? "" : "   " + note);
  };
  mem("Parameters", m.param_bytes);
  if (m.buffer_bytes > 0) mem("Buffers", m.buffer_bytes);
  mem("Gradients", m.gradient_bytes);
  const std::string moments = m.optimizer == OptimizerKind::adam ? "(2 moments)" : m.optimizer == OptimizerKind::momentum ? "(1 velocity)" : "(none)";
  mem("Optimizer state", m.optimizer_bytes, moments);
  mem("Model state", m.model_state_bytes, "(params + buffers + grads + optimizer)");
  mem("Inference activations (peak)", m.inference_activation_bytes,
      m.inference_peak_layer.empty() ? "" : "(live tensors, peak at " + m.inference_peak_layer + ")", true);
  mem("Training activations", m.training_activation_bytes, "(kept for backward)");
  mem("Inference total", m.inference_total_bytes);
  mem("Training total", m.training_total_bytes);
  return out;
}

}  // namespace

std::string summary_table(const ModelCost& cost, const SummaryOptions& options) {
  std::string out;
  out += fmt::format("Model: {}{}\n", cost.model, options.source_file.empty() ? "" : "  (" + options.source_file + ")");
  out += fmt::format("Input: {} {} per sample, batch {}\n", format_shape(cost.input.shape), dtype_name(cost.input.dtype), cost.batch);
  out += "All figures are analytic (derived from shapes, not measured); layer counts are per sample.\n";
  for (const std::string& note : cost.notes) out += "Note: " + note + "\n";
  out += "\n";
  out += summary_layer_table(cost, rows_of(cost, options.depth));
  out += summary_totals(cost);
  out += "\n";
  out += summary_memory(cost);
  return out;
}

}  // namespace hwprof
