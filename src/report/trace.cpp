// The sampled iterations of a profile as a Chrome trace event file (the "JSON Object Format" of
// the Trace Event Format document; Perfetto and chrome://tracing load it): one lane per thread,
// phase spans with the layer spans nested inside, each layer's arguments, and counter tracks
// with the layer's per-call rates and counters at the start of each of its spans; with
// sampling, each sample of the traced passes as an instant on its layer's lane.
//
// Nesting must survive rounding: Perfetto turns a microsecond `ts` into integer nanoseconds
// (llround(ts × 1000)) and nests complete events by [ts, ts + dur] on that grid. So every
// span is rounded to whole nanoseconds here first, each layer span is clamped into its phase
// span on that grid, and ts and dur are written as exact multiples of 0.001 µs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "hwprof/engine/report.hpp"
#include "report/profile_view.hpp"
#include "report/report_parts.hpp"

namespace hwprof {
namespace {

using nlohmann::ordered_json;

constexpr int kPid = 1;
constexpr int kCounterOrder = 2;  // the order of counter samples among events at one time

std::int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}
double to_us(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

struct Span {
  const TraceSpan* span = nullptr;
  std::int64_t start = 0;  // ns
  std::int64_t end = 0;
  const Span* parent = nullptr;  // the phase span a layer span belongs to
};

// An event to write: a span (its layer found when it is a layer span) or a counter sample.
// Only this small record is kept per event; its JSON is made and written one event at a time
// (a JSON document of 100,000 spans took 30 times the memory of the program that made them).
struct Event {
  std::int64_t ts = 0;
  int order = 0;         // at equal ts: phase spans, then layer spans, then counters
  std::int64_t dur = 0;  // longer first at equal ts and order, so parents precede children
  const Span* span = nullptr;
  const LayerProfile* layer = nullptr;  // a layer span's layer, if found
  std::string_view counter;             // a counter sample's name
  double value = 0.0;
};

// The row of a span: the layer of its index in its phase, else the layer's first row. Built once
// per trace: a scan of the rows per span would be quadratic in a program of thousands of
// region names (each with its spans).
class LayerRows {
 public:
  explicit LayerRows(const Profile& p) {
    for (const LayerProfile& l : p.layers) {
      rows_.try_emplace({l.index, l.phase}, &l);
      first_.try_emplace(l.index, &l);
    }
  }
  const LayerProfile* find(int index, std::optional<LayerPhase> phase) const {
    if (auto it = rows_.find({index, phase}); it != rows_.end()) return it->second;
    auto it = first_.find(index);
    return it != first_.end() ? it->second : nullptr;
  }

 private:
  std::map<std::pair<int, std::optional<LayerPhase>>, const LayerProfile*> rows_;
  std::map<int, const LayerProfile*> first_;
};

std::string shape_text(const Shape& shape) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

ordered_json layer_args(const Profile& p, const LayerProfile& l, int iteration) {
  const analysis::LayerNumbers n = analysis::layer_numbers(l);
  ordered_json a;
  a["op"] = l.op;
  a["phase"] = layer_phase_name(l.phase);
  // A torch program's row has thousands of spans (one per call): each says what it is, and the
  // row's figures, the same for all of them, are in profile.json and report.html, once.
  if (p.kind == ProfileKind::torch) return a;
  a["iteration"] = iteration;
  if (!is_program_run(p.kind)) a["output_shape"] = shape_text(l.output_shape) + " per sample, batch " + std::to_string(p.batch);
  a["flops"] = l.flops;
  a["bytes"] = n.bytes.value;
  a["bytes_source"] = report::bytes_origin_words(n.bytes_origin);
  a["median_ms"] = l.time_ms.median;
  a["time_share"] = l.time_share;
  if (is_program_run(p.kind)) {
    // A program's row: its calls and time over the run, and per step where it had steps.
    a["calls"] = l.calls;
    a["total_ms"] = l.total_ms;
    a[report::per_step(p) ? "ms_per_step" : "ms_over_run"] = placement::row_ms(l);
    if (!l.work_partial.empty()) a["work_partial"] = l.work_partial;
  }
  if (l.impossible) {
    // An impossible rate is no figure: the reason instead of a rate, a bound or an efficiency.
    a["impossible"] = l.impossible_reason;
    if (n.intensity) a["intensity"] = *n.intensity;
    return a;
  }
  if (n.gflops_per_s) a["gflops_per_s"] = *n.gflops_per_s;
  if (n.intensity) a["intensity"] = *n.intensity;
  a["bound"] = n.bound ? std::string(bound_name(*n.bound)) : std::string("not placed");
  if (n.efficiency) a["efficiency"] = *n.efficiency;
  if (l.below_resolution) a["below_resolution"] = true;
  return a;
}

// Spans on the nanosecond grid, layer spans attached to their phase span (the one of the same
// thread and iteration that overlaps it most) and clamped inside it.
struct Spans {
  std::vector<Span> phases;
  std::vector<Span> layers;
};

Spans spans_of(const Profile& p) {
  Spans out;
  for (const TraceSpan& s : p.trace) {
    Span g{&s, to_ns(s.start_us), to_ns(s.start_us + s.duration_us), nullptr};
    if (g.end < g.start) g.end = g.start;
    (s.category == "phase" ? out.phases : out.layers).push_back(g);
  }
  for (Span& l : out.layers) {
    std::int64_t best = -1;
    for (const Span& ph : out.phases) {
      if (ph.span->thread != l.span->thread || ph.span->iteration != l.span->iteration) continue;
      const std::int64_t overlap = std::min(l.end, ph.end) - std::max(l.start, ph.start);
      if (overlap > best) {
        best = overlap;
        l.parent = &ph;
      }
    }
    if (l.parent != nullptr) {
      l.start = std::clamp(l.start, l.parent->start, l.parent->end);
      l.end = std::clamp(l.end, l.start, l.parent->end);
    }
  }
  return out;
}

// The events: a complete event per span, and counter samples at each layer span's start
// (GFLOP/s, GB/s and every counter that was read), in time order.
std::vector<Event> trace_events(const Profile& p, const Spans& spans) {
  std::vector<Event> events;
  events.reserve(spans.phases.size() + spans.layers.size());
  const LayerRows rows(p);
  const auto counter = [&](const Span& s, std::string_view name, double value) {
    if (std::isfinite(value)) events.push_back({s.start, kCounterOrder, 0, &s, nullptr, name, value});
  };
  for (const Span& s : spans.phases) events.push_back({s.start, 0, s.end - s.start, &s, nullptr, {}, 0.0});
  for (const Span& s : spans.layers) {
    // A layer span outside every phase span is a forward one; a phase span of another name matches no row.
    const std::optional<LayerPhase> phase = s.parent != nullptr ? parse_layer_phase(s.parent->span->name) : LayerPhase::forward;
    const LayerProfile* l = rows.find(s.span->layer, phase);
    events.push_back({s.start, 1, s.end - s.start, &s, l, {}, 0.0});
    // A torch program's rows' rates and counters are per row, not per call: no track of them.
    if (l == nullptr || p.kind == ProfileKind::torch) continue;
    const analysis::LayerNumbers n = analysis::layer_numbers(*l);
    if (n.gflops_per_s && !l->impossible) counter(s, "GFLOP/s", *n.gflops_per_s);
    if (n.gbytes_per_s) counter(s, "GB/s", *n.gbytes_per_s);
    // An unavailable counter has no sample: a track that stops is honest, a 0 would not be.
    for (const LayerCounter& c : l->counters) {
      if (c.value) counter(s, c.name, *c.value);
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.order != b.order) return a.order < b.order;
    return a.dur > b.dur;
  });
  return events;
}

std::string compact_text(const ordered_json& j) {
  return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// Each event as one line of JSON: a complete event for a span, a counter event for a sample.
// A layer's arguments are the same in each of its spans of one iteration: their text is made
// once and set in as the event's last member, as a dump of the whole event would place it.
class EventText {
 public:
  explicit EventText(const Profile& p) : p_(p) {}

  std::string operator()(const Event& e) {
    const Span& s = *e.span;
    ordered_json j;
    if (e.order == kCounterOrder) {
      const std::string name(e.counter);
      j["name"] = name;
      j["ph"] = "C";
      j["ts"] = to_us(e.ts);
      j["pid"] = kPid;
      j["tid"] = s.span->thread;
      j["args"] = {{name, e.value}};
      return compact_text(j);
    }
    j["name"] = s.span->name;
    j["cat"] = s.span->category;
    j["ph"] = "X";
    j["ts"] = to_us(s.start);
    j["dur"] = to_us(s.end - s.start);
    j["pid"] = kPid;
    j["tid"] = s.span->thread;
    if (e.layer == nullptr) {
      j["args"] = {{"iteration", s.span->iteration}};
      return compact_text(j);
    }
    if (e.layer != args_layer_ || s.span->iteration != args_iteration_) {
      args_layer_ = e.layer;
      args_iteration_ = s.span->iteration;
      args_text_ = compact_text(layer_args(p_, *e.layer, s.span->iteration));
    }
    std::string text = compact_text(j);
    text.pop_back();  // the closing brace, after which "args" goes
    text += ",\"args\":";
    text += args_text_;
    text += '}';
    return text;
  }

 private:
  const Profile& p_;
  const LayerProfile* args_layer_ = nullptr;
  int args_iteration_ = 0;
  std::string args_text_;
};

// Metadata: the process and one named lane per thread.
std::vector<ordered_json> trace_metadata(const Profile& p) {
  std::vector<ordered_json> metadata;
  metadata.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0}, {"args", {{"name", "hwprof: " + p.model}}}});
  std::map<int, bool> threads;
  for (const TraceSpan& s : p.trace) threads[s.thread] = true;
  if (p.sampling) {
    for (const SampleInstant& i : p.sampling->instants) threads[i.thread] = true;
  }
  for (const auto& [tid, unused] : threads) {
    const std::string name = tid == 0 ? "model (thread 0)" : "thread " + std::to_string(tid);
    metadata.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}});
    metadata.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  return metadata;
}

// otherData: what the trace is of, and the counters that could not be read.
ordered_json trace_other_data(const Profile& p) {
  ordered_json other;
  other["generator"] = "hwprof " + p.hwprof_version;
  other["created"] = p.created;
  other["model"] = p.model;
  other["batch"] = p.batch;
  other["phase"] = profile_phase_name(p);
  other["threads"] = p.threads;
  other["backend"] = p.backend;
  other["sampled_iterations"] = p.trace_iterations;
  other["measured_iterations"] = p.iterations;
  if (!p.trace_note.empty()) other["kept"] = p.trace_note;
  other["note"] = p.kind == ProfileKind::torch
                      ? "Spans are the program's region calls the timeline kept (see kept, where it is not every call), each with its "
                        "op and phase; each row's figures (calls, time per step, rates, roofline) are in profile.json and report.html."
                      : "Spans are the sampled iterations only. Counter tracks hold each layer's per-call value over all measured "
                        "iterations (GFLOP/s and GB/s: FLOPs and bytes over the median time), set at the start of each of its spans; "
                        "a counter that could not be read has no samples.";
  ordered_json unavailable = ordered_json::object();
  for (const auto& u : analysis::unavailable_counters(p)) {
    unavailable[u.name] = std::string(counter_status_name(u.status)) + (u.reason.empty() ? "" : ": " + u.reason);
  }
  other["unavailable_counters"] = std::move(unavailable);
  if (p.sampling) {
    other["sample_instants"] = p.sampling->instants.size();
    other["sample_instants_left_out"] = p.sampling->instants_left_out;
    other["sample_note"] =
        "Instant events of category \"sample\": each sample taken inside a traced pass, on the lane of the layer it was attributed to "
        "(a pool worker's on its launching thread's), named by its leaf function. sample_instants_left_out: samples inside the traced "
        "passes past the cap (docs/sampling.md, \"Outputs\").";
  }
  return other;
}

// A sample as a thread-scoped instant event on its layer's lane, at a time on the spans'
// nanosecond grid.
std::string sample_instant_text(const SamplingProfile& s, const SampleInstant& i) {
  const auto name = [&](int frame) {
    return frame >= 0 && static_cast<std::size_t>(frame) < s.frame_names.size() ? s.frame_names[static_cast<std::size_t>(frame)]
                                                                                : std::string("[unknown]");
  };
  const std::string module =
      i.frame >= 0 && static_cast<std::size_t>(i.frame) < s.frame_modules.size() ? s.frame_modules[static_cast<std::size_t>(i.frame)] : std::string();
  ordered_json j;
  j["name"] = name(i.frame);
  j["cat"] = "sample";
  j["ph"] = "i";
  j["s"] = "t";
  j["ts"] = to_us(to_ns(i.time_us));
  j["pid"] = kPid;
  j["tid"] = i.thread;
  j["args"] = {{"layer", name(i.row)}, {"function", name(i.frame)}, {"module", module}};
  return compact_text(j);
}

}  // namespace

namespace report {

void chrome_trace_parts(const Profile& p, const TextSink& sink) {
  const Spans spans = spans_of(p);
  const std::vector<Event> events = trace_events(p, spans);
  // One event per line: small, and still readable in a text editor.
  sink("{\"displayTimeUnit\": \"ms\",\n\"otherData\": " + compact_text(trace_other_data(p)) + ",\n\"traceEvents\": [\n");
  bool first = true;
  const auto add = [&](const std::string& line) {
    if (!first) sink(",\n");
    sink(line);
    first = false;
  };
  for (const ordered_json& m : trace_metadata(p)) add(compact_text(m));
  EventText text(p);
  for (const Event& e : events) add(text(e));
  if (p.sampling) {
    for (const SampleInstant& i : p.sampling->instants) add(sample_instant_text(*p.sampling, i));
  }
  sink("\n]}\n");
}

}  // namespace report

std::string chrome_trace(const Profile& p) {
  std::string out;
  report::chrome_trace_parts(p, [&out](std::string_view part) { out += part; });
  return out;
}

}  // namespace hwprof
