// The sampled iterations of a profile as a Chrome trace event file (the "JSON Object Format" of
// the Trace Event Format document; Perfetto and chrome://tracing load it): one lane per thread,
// phase spans with the layer spans nested inside, each layer's arguments, and counter tracks
// with the layer's per-call rates and counters at the start of each of its spans.
//
// Nesting must survive rounding: Perfetto turns a microsecond `ts` into integer nanoseconds
// (llround(ts × 1000)) and nests complete events by [ts, ts + dur] on that grid. So every
// span is rounded to whole nanoseconds here first, each layer span is clamped into its phase
// span on that grid, and ts and dur are written as exact multiples of 0.001 µs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hwprof/report.hpp"
#include "report/profile_view.hpp"

namespace hwprof {
namespace {

using nlohmann::ordered_json;

constexpr int kPid = 1;

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

struct Event {
  std::int64_t ts = 0;
  int order = 0;         // at equal ts: phase spans, then layer spans, then counters
  std::int64_t dur = 0;  // longer first at equal ts and order, so parents precede children
  ordered_json json;
};

const LayerProfile* find_layer(const Profile& p, int index, const std::string& phase) {
  const LayerProfile* fallback = nullptr;
  for (const LayerProfile& l : p.layers) {
    if (l.index != index) continue;
    if (l.phase == phase) return &l;
    if (fallback == nullptr) fallback = &l;
  }
  return fallback;
}

std::string shape_text(const Shape& shape) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
  return out;
}

ordered_json layer_args(const Profile& p, const LayerProfile& l, int iteration) {
  const detail::LayerNumbers n = detail::layer_numbers(l);
  ordered_json a;
  a["op"] = l.op;
  a["phase"] = l.phase;
  a["iteration"] = iteration;
  a["output_shape"] = shape_text(l.output_shape) + " per sample, batch " + std::to_string(p.batch);
  a["flops"] = l.flops;
  a["bytes"] = n.bytes.value;
  a["bytes_source"] = detail::bytes_origin_words(n.bytes_origin);
  a["median_ms"] = l.time_ms.median;
  a["time_share"] = l.time_share;
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
  const auto complete = [&](const Span& s, int order, ordered_json args) {
    ordered_json e;
    e["name"] = s.span->name;
    e["cat"] = s.span->category;
    e["ph"] = "X";
    e["ts"] = to_us(s.start);
    e["dur"] = to_us(s.end - s.start);
    e["pid"] = kPid;
    e["tid"] = s.span->thread;
    e["args"] = std::move(args);
    events.push_back({s.start, order, s.end - s.start, std::move(e)});
  };
  const auto counter = [&](std::int64_t ts, int tid, const std::string& name, double value) {
    if (!std::isfinite(value)) return;
    ordered_json e;
    e["name"] = name;
    e["ph"] = "C";
    e["ts"] = to_us(ts);
    e["pid"] = kPid;
    e["tid"] = tid;
    e["args"] = {{name, value}};
    events.push_back({ts, 2, 0, std::move(e)});
  };
  for (const Span& s : spans.phases) complete(s, 0, {{"iteration", s.span->iteration}});
  for (const Span& s : spans.layers) {
    const std::string phase = s.parent != nullptr ? s.parent->span->name : std::string("forward");
    const LayerProfile* l = find_layer(p, s.span->layer, phase);
    if (l == nullptr) {
      complete(s, 1, {{"iteration", s.span->iteration}});
      continue;
    }
    complete(s, 1, layer_args(p, *l, s.span->iteration));
    const detail::LayerNumbers n = detail::layer_numbers(*l);
    if (n.gflops_per_s) counter(s.start, s.span->thread, "GFLOP/s", *n.gflops_per_s);
    if (n.gbytes_per_s) counter(s.start, s.span->thread, "GB/s", *n.gbytes_per_s);
    // An unavailable counter has no sample: a track that stops is honest, a 0 would not be.
    for (const LayerCounter& c : l->counters) {
      if (c.value) counter(s.start, s.span->thread, c.name, *c.value);
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.order != b.order) return a.order < b.order;
    return a.dur > b.dur;
  });
  return events;
}

// Metadata: the process and one named lane per thread.
std::vector<ordered_json> trace_metadata(const Profile& p) {
  std::vector<ordered_json> metadata;
  metadata.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0}, {"args", {{"name", "hwprof: " + p.model}}}});
  std::map<int, bool> threads;
  for (const TraceSpan& s : p.trace) threads[s.thread] = true;
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
  other["phase"] = p.phase;
  other["threads"] = p.threads;
  other["backend"] = p.backend;
  other["sampled_iterations"] = p.trace_iterations;
  other["measured_iterations"] = p.iterations;
  other["note"] =
      "Spans are the sampled iterations only. Counter tracks hold each layer's per-call value over all measured "
      "iterations (GFLOP/s and GB/s: FLOPs and bytes over the median time), set at the start of each of its spans; "
      "a counter that could not be read has no samples.";
  ordered_json unavailable = ordered_json::object();
  for (const auto& u : detail::unavailable_counters(p)) {
    unavailable[u.name] = std::string(counter_status_name(u.status)) + (u.reason.empty() ? "" : ": " + u.reason);
  }
  other["unavailable_counters"] = std::move(unavailable);
  return other;
}

}  // namespace

std::string chrome_trace(const Profile& p) {
  const Spans spans = spans_of(p);
  const std::vector<Event> events = trace_events(p, spans);
  // One event per line: small, and still readable in a text editor.
  const auto dump = [](const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); };
  std::string out = "{\"displayTimeUnit\": \"ms\",\n\"otherData\": " + dump(trace_other_data(p)) + ",\n\"traceEvents\": [\n";
  bool first = true;
  const auto add = [&](const ordered_json& e) {
    out += (first ? "" : ",\n") + dump(e);
    first = false;
  };
  for (const ordered_json& m : trace_metadata(p)) add(m);
  for (const Event& e : events) add(e.json);
  out += "\n]}\n";
  return out;
}

}  // namespace hwprof
