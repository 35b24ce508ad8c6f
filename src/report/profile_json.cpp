// A Profile as JSON (docs/profile.md, "`profile.json`"; `hwprof profile --format json`), and back: the file
// holds everything the Profile holds, so that `hwprof report` re-renders every output from it.
// Reading checks each field with the project's JSON reader: a problem names the file, the
// line and column, the JSON pointer and what was expected; a newer schema is refused, an
// older one migrated (docs/profile.md, "Schema history").
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/input_file.hpp"
#include "common/json_reader.hpp"
#include "common/stages.hpp"
#include "common/text_position.hpp"
#include "hwprof/engine/profile.hpp"
#include "machine/machine_json.hpp"
#include "report/file_kind.hpp"
#include "report/profile_view.hpp"
#include "report/report_parts.hpp"
#include "report/sampling_report.hpp"
#include "session/merged_ranks.hpp"

namespace hwprof {
namespace {

using common::json_pointer_token;
using nlohmann::json;
using nlohmann::ordered_json;
using Reader = common::BasicJsonReader<ordered_json>;

constexpr std::size_t kMaxProfileBytes = std::size_t{512} << 20;

// JSON has no NaN or infinity; a non-finite number is written as null, which the reader
// refuses where a number is required.
ordered_json number(double v) {
  return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr);
}
ordered_json optional_number(const std::optional<double>& v) {
  return v ? number(*v) : ordered_json(nullptr);
}

ordered_json sourced_to_json(const SourcedValue& v) {
  return {{"value", number(v.value)},
          {"source", value_source_name(v.source)},
          {"status", counter_status_name(v.status)},
          {"running_fraction", number(v.running_fraction)},
          {"detail", v.detail}};
}

ordered_json summary_to_json(const Summary& s) {
  return {{"median", number(s.median)},
          {"mean", number(s.mean)},
          {"min", number(s.min)},
          {"max", number(s.max)},
          {"p95", number(s.p95)},
          {"p99", number(s.p99)},
          {"n", s.n},
          {"stddev", number(s.stddev)},
          {"p5", number(s.p5)},
          {"mad", number(s.mad)},
          {"outliers", s.outliers},
          {"median_ci_low", number(s.median_ci_low)},
          {"median_ci_high", number(s.median_ci_high)},
          {"median_ci_coverage", number(s.median_ci_coverage)}};
}

// Long: one line per field of a layer in the documented format (docs/profile.md), in its order.
// `phase`: the layer's, or for the total the profile's (profile_phase_name).
ordered_json layer_to_json(const LayerProfile& l, std::string_view phase) {
  const analysis::LayerNumbers n = analysis::layer_numbers(l);
  ordered_json j;
  j["index"] = l.index;
  j["name"] = l.name;
  j["op"] = l.op;
  j["phase"] = phase;
  j["output_shape"] = l.output_shape;
  j["causal"] = l.causal;
  j["params"] = l.params;
  j["macs"] = l.macs;
  j["flops"] = l.flops;
  if (!l.work_note.empty()) j["work_note"] = l.work_note;           // no analytic count: flops and bytes unknown
  if (!l.work_partial.empty()) j["work_partial"] = l.work_partial;  // the count leaves part out: its rates are lower bounds
  if (l.nested_op) j["nested_op"] = true;
  // A program's row: its calls, its time over them and per the profile's basis, its threads, shapes.
  if (l.calls > 0 || l.total_ms > 0) {
    j["calls"] = l.calls;
    j["total_ms"] = number(l.total_ms);
    j["basis_ms"] = number(l.basis_ms);
    if (l.after_steps_calls > 0) {  // its calls after the last step: in total_ms, not in basis_ms
      j["after_steps_calls"] = l.after_steps_calls;
      j["after_steps_ms"] = number(l.after_steps_ms);
    }
  }
  if (l.threads > 0) {
    j["threads"] = l.threads;
    j["threads_min"] = l.threads_min;
  }
  if (!l.shapes.empty()) {
    ordered_json shapes = ordered_json::array();
    for (const ShapeRow& r : l.shapes) {
      shapes.push_back({{"shape", r.shape}, {"calls", r.calls}, {"time_ms", number(r.time_ms)}, {"flops", number(r.flops)}, {"other", r.other}});
    }
    j["shapes"] = std::move(shapes);
  }
  // A program's row always says; a model's layer only where it is (older files read the same).
  if (l.impossible || l.calls > 0) j["impossible"] = l.impossible;
  if (l.impossible) j["impossible_reason"] = l.impossible_reason;
  // The bytes the roofline used (docs/profile.md, "How a profile is measured": DRAM, then LLC, then analytic), with the analytic minimum beside.
  ordered_json bytes = sourced_to_json(n.bytes);
  bytes["origin"] = bytes_origin_name(l.bytes_origin);
  bytes["analytic_minimum"] = l.bytes;
  bytes["skipped"] = l.bytes_skipped;
  j["bytes"] = std::move(bytes);
  j["time_ms"] = summary_to_json(l.time_ms);
  ordered_json samples = ordered_json::array();
  for (double s : l.samples_ms) samples.push_back(number(s));
  j["samples_ms"] = std::move(samples);
  j["time_share"] = number(l.time_share);
  j["below_resolution"] = l.below_resolution;
  if (l.own_cost_ns > 0) j["own_cost_ns"] = number(l.own_cost_ns);  // below_resolution's yardstick for the row
  j["gflops_per_s"] = optional_number(n.gflops_per_s);
  j["gbytes_per_s"] = optional_number(n.gbytes_per_s);
  j["intensity"] = optional_number(n.intensity);
  j["attainable_gflops_per_s"] = optional_number(n.attainable_gflops_per_s);
  j["efficiency"] = optional_number(n.efficiency);
  j["bound"] = n.bound ? ordered_json(bound_name(*n.bound)) : ordered_json(nullptr);
  // Headroom in time (derived): the time at the roof and the time to win.
  const auto headroom = placement::headroom_ms(l);
  j["roof_ms"] = headroom ? ordered_json(number(headroom->roof_ms)) : ordered_json(nullptr);
  j["win_ms"] = headroom ? ordered_json(number(headroom->win_ms)) : ordered_json(nullptr);
  ordered_json why = ordered_json::array();
  for (const LayerCause& c : l.why) why.push_back({{"rule", c.rule}, {"label", c.label}, {"text", c.text}, {"advice", c.advice}});
  j["why"] = std::move(why);
  if (l.roofline) {
    const RooflinePoint& r = *l.roofline;
    ordered_json levels = ordered_json::array();
    for (const LevelRoof& level : r.levels) {
      levels.push_back(
          {{"level", level.level}, {"gbytes_per_s", number(level.gbytes_per_s)}, {"attainable_gflops_per_s", number(level.attainable_gflops_per_s)}});
    }
    j["roofline"] = {{"flops", sourced_to_json(r.flops)},
                     {"seconds", number(r.seconds)},
                     {"compute_roof", r.compute_roof},
                     {"compute_roof_gflops_per_s", number(r.compute_roof_gflops_per_s)},
                     {"peak_gflops_per_s", number(r.peak_gflops_per_s)},
                     {"dram_gbytes_per_s", number(r.dram_gbytes_per_s)},
                     {"memory_gbytes_per_s", number(r.memory_gbytes_per_s)},
                     {"memory_level", r.memory_level},
                     {"memory_roof", r.memory_roof},
                     {"ridge_intensity", number(r.ridge_intensity)},
                     {"headroom", number(r.headroom)},
                     {"levels", std::move(levels)},
                     {"why", r.why},
                     {"notes", r.notes}};
  } else {
    j["roofline"] = nullptr;
  }
  j["roofline_error"] = l.roofline_error;
  ordered_json counters = ordered_json::object();
  for (const LayerCounter& c : l.counters) {
    counters[c.name] = {{"value", optional_number(c.value)},
                        {"unit", c.unit},
                        {"kind", event_kind_name(c.kind)},
                        {"status", counter_status_name(c.status)},
                        {"running_fraction", number(c.running_fraction)},
                        {"below_resolution", c.below_resolution},
                        {"read_cost", number(c.read_cost)},
                        {"impossible", c.impossible},
                        {"impossible_reason", c.impossible_reason},
                        {"reason", c.reason}};
  }
  j["counters"] = std::move(counters);
  ordered_json metrics = ordered_json::object();
  for (const LayerMetric& m : l.metrics) {
    metrics[m.name] = {{"value", optional_number(m.value)}, {"unit", m.unit}, {"below_resolution", m.below_resolution}, {"reason", m.reason}};
  }
  j["metrics"] = std::move(metrics);
  if (l.flops_check) {
    const FlopsComparison& f = *l.flops_check;
    j["flops_check"] = {
        {"measured", number(f.measured)}, {"analytic", number(f.analytic)}, {"ratio", number(f.ratio)}, {"agrees", f.agrees}, {"reasons", f.reasons}};
  } else {
    j["flops_check"] = nullptr;
  }
  return j;
}

// A machine section the profiler could not fill (no machine report, a hand-made Profile) is
// written as null rather than as zeros the machine report's reader would rightly refuse.
bool known(const MachineCpu& c) {
  return !c.vendor.empty() || !c.brand.empty() || c.logical_cpus != 0 || c.cores != 0 || !c.caches.empty() || !c.flags.empty();
}
bool known(const TheoreticalPeaks& t) {
  return !t.isa.empty() || t.cores != 0 || t.sp_gflops != 0 || t.dp_gflops != 0;
}

ordered_json memory_to_json(const ProfileMemory& m) {
  const MemoryEstimate& a = m.analytic;
  return {{"analytic",
           {{"batch", a.batch},
            {"optimizer", optimizer_name(a.optimizer)},
            {"param_bytes", a.param_bytes},
            {"buffer_bytes", a.buffer_bytes},
            {"gradient_bytes", a.gradient_bytes},
            {"optimizer_bytes", a.optimizer_bytes},
            {"model_state_bytes", a.model_state_bytes},
            {"inference_activation_bytes", a.inference_activation_bytes},
            {"inference_peak_layer", a.inference_peak_layer},
            {"training_activation_bytes", a.training_activation_bytes},
            {"inference_total_bytes", a.inference_total_bytes},
            {"training_total_bytes", a.training_total_bytes}}},
          {"measured",
           {{"parameter_bytes", m.parameter_bytes},
            {"peak_allocated_bytes", m.peak_allocated_bytes},
            {"peak_rss_bytes", m.peak_rss_bytes},
            {"page_faults", m.page_faults ? ordered_json(*m.page_faults) : ordered_json(nullptr)}}}};
}

// ---- reading --------------------------------------------------------------------------------

std::string at_key(const std::string& pointer, std::string_view key) {
  return pointer + "/" + json_pointer_token(key);
}

// Numbers that may be null (written for "not available").
std::optional<double> nullable_number(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key, bool non_negative) {
  const ordered_json& v = in.member(object, pointer, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) in.fail(at_key(pointer, key), std::string("expected a number or null, got ") + v.type_name());
  const double d = v.get<double>();
  if (!std::isfinite(d) || (non_negative && d < 0)) {
    in.fail(at_key(pointer, key), std::string("expected a ") + (non_negative ? "non-negative " : "") + "finite number, got " + v.dump());
  }
  return d;
}

// A number of any sign (metrics, ratios that may be negative are not expected, but a metric
// formula may produce one).
double any_number(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key) {
  const ordered_json& v = in.member(object, pointer, key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) {
    in.fail(at_key(pointer, key), std::string("expected a finite number, got ") + (v.is_number() ? v.dump() : v.type_name()));
  }
  return v.get<double>();
}

template <class T>
T enumerated(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key,
             std::optional<T> (*parse)(std::string_view) noexcept, const char* expected) {
  const std::string text = in.string(object, pointer, key);
  const std::optional<T> value = parse(text);
  if (!value) in.fail(at_key(pointer, key), "unknown value \"" + text + "\"; expected " + expected);
  return *value;
}

// What a counter measures: its "kind", or in a profile written before counters carried one
// (docs/profile.md, "Older profiles"), what hwprof then took it for from its name and unit:
// a clock in ns was CPU time (the timer's wall-time apart), the kernel's software events and
// the core-cycle events by their names.
EventKind event_kind(const Reader& in, const ordered_json& object, const std::string& pointer, const std::string& name, const std::string& unit) {
  if (object.contains("kind")) {
    return enumerated<EventKind>(in, object, pointer, "kind", parse_event_kind,
                                 "other, software, task-clock, wall-time, core-cycles, reference-cycles, instructions, fp or memory");
  }
  if (name == "wall-time") return EventKind::wall_time;
  if (unit == "ns") return EventKind::task_clock;
  std::string n = name;
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (n.starts_with("perf::")) n = n.substr(6);
  // Linux include/uapi/linux/perf_event.h, enum perf_sw_ids, as perf(1) names them.
  static constexpr std::string_view kSoftware[] = {"page-faults", "faults",         "minor-faults",   "major-faults",     "context-switches",
                                                   "cs",          "cpu-migrations", "migrations",     "alignment-faults", "emulation-faults",
                                                   "dummy",       "bpf-output",     "cgroup-switches"};
  if (n.starts_with("software/") || std::find(std::begin(kSoftware), std::end(kSoftware), n) != std::end(kSoftware)) return EventKind::software;
  std::string u = name;
  for (char& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (const std::size_t colon = u.rfind("::"); colon != std::string::npos) u = u.substr(colon + 2);  // PAPI's perf::CYCLES
  if (u.find("REF") != std::string::npos) return EventKind::other;
  const bool core = u == "CYCLES" || u == "CPU-CYCLES" || u == "PAPI_TOT_CYC" || u.starts_with("CYCLES_NOT_IN_HALT") ||
                    u.starts_with("CPU_CLK_UNHALTED") || u == "LS_NOT_HALTED_CYC";
  return core ? EventKind::core_cycles : EventKind::other;
}

std::vector<std::string> strings(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key) {
  const ordered_json& v = in.member(object, pointer, key);
  if (!v.is_array()) in.fail(at_key(pointer, key), std::string("expected a list of strings, got ") + v.type_name());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) in.fail(at_key(pointer, key) + "/" + std::to_string(i), std::string("expected a string, got ") + v[i].type_name());
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

// A layer's kept per-call times: finite, non-negative milliseconds, at most kMaxKeptSamples.
std::vector<double> samples_from_json(const Reader& in, const ordered_json& layer, const std::string& pointer) {
  const ordered_json& v = in.member(layer, pointer, "samples_ms");
  const std::string at = at_key(pointer, "samples_ms");
  if (!v.is_array()) in.fail(at, std::string("expected a list of times in ms, got ") + v.type_name());
  if (v.size() > kMaxKeptSamples) {
    in.fail(at, "holds " + std::to_string(v.size()) + " samples; a profile keeps at most " + std::to_string(kMaxKeptSamples));
  }
  std::vector<double> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) in.fail(at + "/" + std::to_string(i), std::string("expected a time in ms, got ") + v[i].type_name());
    const double s = v[i].get<double>();
    if (!std::isfinite(s) || s < 0) in.fail(at + "/" + std::to_string(i), "expected a finite, non-negative time in ms");
    out.push_back(s);
  }
  return out;
}

Shape shape(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key) {
  const ordered_json& v = in.member(object, pointer, key);
  if (!v.is_array()) in.fail(at_key(pointer, key), std::string("expected a list of dimensions, got ") + v.type_name());
  Shape out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const ordered_json& d = v[i];
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) {
      in.fail(at_key(pointer, key) + "/" + std::to_string(i), "expected a non-negative integer dimension, got " + d.dump());
    }
    out.push_back(d.get<std::int64_t>());
  }
  return out;
}

int small_integer(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key, std::int64_t min) {
  const std::int64_t v = in.integer(object, pointer, key, min);
  if (v > INT32_MAX) in.fail(at_key(pointer, key), "expected an integer below 2^31, got " + std::to_string(v));
  return static_cast<int>(v);
}

// A share and its interval, each within [0, 1], low <= share <= high.
// A function's or a part's share of its row (both carry share, low and high).
template <typename WithShare>
void read_share(const Reader& in, const ordered_json& v, const std::string& at, WithShare& f) {
  f.share = in.number(v, at, "share", false);
  f.low = in.number(v, at, "low", false);
  f.high = in.number(v, at, "high", false);
  if (f.high > 1.0 || f.low > f.share || f.share > f.high) {
    in.fail(at, fmt::format("share {} with interval [{}, {}]: expected 0 <= low <= share <= high <= 1", f.share, f.low, f.high));
  }
}

// A number that may be negative or null (a cost measured faster than without): NaN for null.
double signed_or_null(const Reader& in, const ordered_json& object, const std::string& pointer, const char* key) {
  const ordered_json& v = in.member(object, pointer, key);
  if (v.is_null()) return std::nan("");
  if (!v.is_number() || !std::isfinite(v.get<double>())) in.fail(pointer + "/" + key, "expected a finite number or null, got " + v.dump());
  return v.get<double>();
}

// A sampled row's parts of the code ("GEMM kernel", "im2col" ...), each with its share.
std::vector<SampledPart> read_parts(const Reader& in, const ordered_json& row_json, const std::string& row, std::uint64_t row_samples) {
  const ordered_json& parts = in.member(row_json, row, "parts");
  if (!parts.is_array()) in.fail(row + "/parts", std::string("expected a list, got ") + parts.type_name());
  std::vector<SampledPart> out;
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::string p_at = row + "/parts/" + std::to_string(k);
    SampledPart part;
    part.part = in.string(parts[k], p_at, "part");
    part.samples = static_cast<std::uint64_t>(in.integer(parts[k], p_at, "samples", 0));
    total += part.samples;
    if (part.samples > row_samples || total > row_samples) in.fail(p_at + "/samples", "the parts hold more samples than their row has");
    read_share(in, parts[k], p_at, part);
    out.push_back(std::move(part));
  }
  return out;
}

// Whitespace-separated fields of one compact line ("0;5;9 12", "1.5 0 3 17"): each parsed
// whole, or the line is refused at `at`.
std::vector<std::string_view> sampling_line_fields(const Reader& in, const std::string& line, const std::string& at, std::size_t count) {
  std::vector<std::string_view> fields;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t end = std::min(line.find(' ', pos), line.size());
    if (end == pos) in.fail(at, "\"" + line + "\": fields are separated by one space");
    fields.emplace_back(line.data() + pos, end - pos);
    pos = end + 1;
  }
  if (fields.size() != count || (!line.empty() && line.back() == ' '))
    in.fail(at, "\"" + line + "\": expected " + std::to_string(count) + " fields separated by spaces");
  return fields;
}

// An index into frame_names (or any non-negative integer below `limit`).
int sampling_index(const Reader& in, std::string_view text, const std::string& at, std::size_t limit, const char* what) {
  long long v = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0 || static_cast<unsigned long long>(v) >= limit)
    in.fail(at, std::string(what) + " \"" + std::string(text) + "\" is not an index below " + std::to_string(limit));
  return static_cast<int>(v);
}

// The stacks and instants of "sampling" (absent in profiles written before them: docs/profile.md,
// "Older profiles"): every frame an index into frame_names, no more samples than the profile's,
// every instant at a finite, non-negative time.
void read_sampling_stacks(const Reader& in, const ordered_json& v, const std::string& at, SamplingProfile& s) {
  if (!v.contains("frame_names")) return;
  s.frame_names = strings(in, v, at, "frame_names");
  if (v.contains("frame_modules")) s.frame_modules = strings(in, v, at, "frame_modules");
  if (!s.frame_modules.empty() && s.frame_modules.size() != s.frame_names.size())
    in.fail(at + "/frame_modules",
            "holds " + std::to_string(s.frame_modules.size()) + " modules for " + std::to_string(s.frame_names.size()) + " frame_names");
  const std::size_t names = s.frame_names.size();
  std::uint64_t in_stacks = 0;
  const std::vector<std::string> stacks = strings(in, v, at, "stacks");
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    const std::string row = at + "/stacks/" + std::to_string(i);
    const std::vector<std::string_view> f = sampling_line_fields(in, stacks[i], row, 2);
    SampledStackRow r;
    r.samples = static_cast<std::uint64_t>(sampling_index(in, f[1], row, std::numeric_limits<int>::max(), "the sample count"));
    if (r.samples == 0) in.fail(row, "a stack with no samples");
    for (std::size_t pos = 0; pos <= f[0].size();) {
      const std::size_t end = std::min(f[0].find(';', pos), f[0].size());
      r.frames.push_back(sampling_index(in, f[0].substr(pos, end - pos), row, names, "the frame"));
      pos = end + 1;
    }
    in_stacks += r.samples;
    s.stacks.push_back(std::move(r));
  }
  if (in_stacks > s.samples) in.fail(at + "/stacks", "holds " + std::to_string(in_stacks) + " samples; the profile has " + std::to_string(s.samples));
  const std::vector<std::string> instants = strings(in, v, at, "instants");
  if (instants.size() > s.samples) in.fail(at + "/instants", "more instants than the profile has samples");
  for (std::size_t i = 0; i < instants.size(); ++i) {
    const std::string row = at + "/instants/" + std::to_string(i);
    const std::vector<std::string_view> f = sampling_line_fields(in, instants[i], row, 4);
    SampleInstant x;
    const auto [end, ec] = std::from_chars(f[0].data(), f[0].data() + f[0].size(), x.time_us);
    if (ec != std::errc() || end != f[0].data() + f[0].size() || !std::isfinite(x.time_us) || x.time_us < 0)
      in.fail(row, "the time \"" + std::string(f[0]) + "\" is not a finite, non-negative number of microseconds");
    x.thread = sampling_index(in, f[1], row, 1u << 20, "the lane");
    x.row = sampling_index(in, f[2], row, names, "the row");
    x.frame = sampling_index(in, f[3], row, names, "the frame");
    s.instants.push_back(x);
  }
  s.instants_left_out = static_cast<std::uint64_t>(in.integer(v, at, "instants_left_out", 0));
}

// "sampling" as sampling_json writes it.
SamplingProfile read_sampling(const Reader& in, const ordered_json& v) {
  const std::string at = "/sampling";
  SamplingProfile s;
  s.spec = in.string(v, at, "spec");
  s.rate = in.string(v, at, "rate");
  s.samples = static_cast<std::uint64_t>(in.integer(v, at, "samples", 0));
  s.lost = static_cast<std::uint64_t>(in.integer(v, at, "lost", 0));
  s.throttled = static_cast<std::uint64_t>(in.integer(v, at, "throttled", 0));
  s.dropped = static_cast<std::uint64_t>(in.integer(v, at, "dropped", 0));
  s.ambiguous = static_cast<std::uint64_t>(in.integer(v, at, "ambiguous", 0));
  s.outside = static_cast<std::uint64_t>(in.integer(v, at, "outside", 0));
  s.overhead = signed_or_null(in, v, at, "overhead");
  if (v.contains("overhead_noise")) s.overhead_noise = signed_or_null(in, v, at, "overhead_noise");
  s.sampled_passes = small_integer(in, v, at, "sampled_passes", 0);
  s.unsampled_passes = small_integer(in, v, at, "unsampled_passes", 0);
  // Written since regions programs sample (HWPROF_SAMPLE); a file without them is a profile's.
  if (v.contains("cost_from")) {
    s.cost_from = in.string(v, at, "cost_from");
    if (s.cost_from != "passes" && s.cost_from != "windows")
      in.fail(at + "/cost_from", "expected \"passes\" or \"windows\", got \"" + s.cost_from + "\"");
  }
  if (v.contains("overhead_reason")) s.overhead_reason = in.string(v, at, "overhead_reason");
  if (v.contains("timeline_full")) s.timeline_full = static_cast<std::uint64_t>(in.integer(v, at, "timeline_full", 0));
  if (v.contains("timeline_calls")) s.timeline_calls = static_cast<std::uint64_t>(in.integer(v, at, "timeline_calls", 0));
  if (s.timeline_full > s.samples) in.fail(at + "/timeline_full", "more samples than the profile has");
  const ordered_json& warnings = in.member(v, at, "warnings");
  if (!warnings.is_array()) in.fail(at + "/warnings", std::string("expected a list, got ") + warnings.type_name());
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    if (!warnings[i].is_string()) in.fail(at + "/warnings/" + std::to_string(i), std::string("expected a string, got ") + warnings[i].type_name());
    s.warnings.push_back(warnings[i].get<std::string>());
  }
  const ordered_json& layers = in.member(v, at, "layers");
  if (!layers.is_array()) in.fail(at + "/layers", std::string("expected a list, got ") + layers.type_name());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string row = at + "/layers/" + std::to_string(i);
    SampledLayer l;
    l.name = in.string(layers[i], row, "name");
    l.layer = small_integer(in, layers[i], row, "layer", -1);
    l.samples = static_cast<std::uint64_t>(in.integer(layers[i], row, "samples", 0));
    l.by_pool_workers = static_cast<std::uint64_t>(in.integer(layers[i], row, "by_pool_workers", 0));
    l.enough = in.boolean(layers[i], row, "enough");
    l.rest = static_cast<std::uint64_t>(in.integer(layers[i], row, "rest", 0));
    l.outside = layers[i].contains("outside") && in.boolean(layers[i], row, "outside");
    if (l.samples > s.samples || l.by_pool_workers > l.samples) in.fail(row, "more samples than the profile (or the row) has");
    const ordered_json& top = in.member(layers[i], row, "top");
    if (!top.is_array()) in.fail(row + "/top", std::string("expected a list, got ") + top.type_name());
    for (std::size_t k = 0; k < top.size(); ++k) {
      const std::string f_at = row + "/top/" + std::to_string(k);
      SampledFunction f;
      f.function = in.string(top[k], f_at, "function");
      f.module = in.string(top[k], f_at, "module");
      f.samples = static_cast<std::uint64_t>(in.integer(top[k], f_at, "samples", 0));
      if (f.samples > l.samples) in.fail(f_at + "/samples", "more samples than its row has");
      read_share(in, top[k], f_at, f);
      l.top.push_back(std::move(f));
    }
    if (layers[i].contains("parts")) l.parts = read_parts(in, layers[i], row, l.samples);  // absent before parts were kept
    s.layers.push_back(std::move(l));
  }
  read_sampling_stacks(in, v, at, s);
  return s;
}

constexpr const char* kStatuses = "ok, multiplexed, unsupported, no-permission or not-counted";

SourcedValue sourced_from_json(const Reader& in, const ordered_json& v, const std::string& at) {
  SourcedValue s;
  s.value = in.number(v, at, "value", false);
  s.source = enumerated<ValueSource>(in, v, at, "source", report::parse_value_source, "measured, analytic or estimated");
  s.status = enumerated<CounterStatus>(in, v, at, "status", report::parse_counter_status, kStatuses);
  s.running_fraction = in.number(v, at, "running_fraction", false);
  s.detail = in.string(v, at, "detail");
  return s;
}

Summary summary_from_json(const Reader& in, const ordered_json& v, const std::string& at) {
  Summary s;
  s.median = in.number(v, at, "median", false);
  s.mean = in.number(v, at, "mean", false);
  s.min = in.number(v, at, "min", false);
  s.max = in.number(v, at, "max", false);
  s.p95 = in.number(v, at, "p95", false);
  s.p99 = in.number(v, at, "p99", false);
  s.n = static_cast<std::size_t>(in.integer(v, at, "n", 0));
  s.stddev = in.number(v, at, "stddev", false);
  s.p5 = in.number(v, at, "p5", false);
  s.mad = in.number(v, at, "mad", false);
  s.outliers = static_cast<std::size_t>(in.integer(v, at, "outliers", 0));
  s.median_ci_low = in.number(v, at, "median_ci_low", false);
  s.median_ci_high = in.number(v, at, "median_ci_high", false);
  s.median_ci_coverage = in.number(v, at, "median_ci_coverage", false);
  if (s.n > 0 && (s.min > s.median || s.median > s.max)) in.fail(at_key(at, "median"), "the median lies outside [min, max]");
  if (s.outliers > s.n) in.fail(at_key(at, "outliers"), "more outliers than samples");
  if (s.median_ci_coverage > 1.0) in.fail(at_key(at, "median_ci_coverage"), "a coverage is a probability, at most 1");
  return s;
}

// The first schema with a "kind" and checked row phases; older ones are migrated on reading
// (docs/profile.md, "Schema history").
constexpr int kSchemaWithKind = 2;

// The profile's kind and phase. Version 1 had no "kind": its phase said which, "regions" a
// program's regions and anything else a model.
void kind_and_phase_from_json(const Reader& in, const ordered_json& root, Profile& p) {
  const std::string phase = in.string(root, "", "phase");
  const bool migrated = p.schema < kSchemaWithKind;
  if (migrated) {
    p.kind = phase == "regions" ? ProfileKind::regions : ProfileKind::model;
  } else {
    p.kind = enumerated<ProfileKind>(in, root, "", "kind", parse_profile_kind, "model, regions, merged or torch");
  }
  if (is_program_run(p.kind)) {
    if (phase != "regions") in.fail("/phase", "\"" + phase + "\"; a " + std::string(profile_kind_name(p.kind)) + " profile's phase is \"regions\"");
    return;
  }
  const std::optional<RunPhase> run = parse_run_phase(phase);
  if (!run) {
    const std::string expected =
        migrated ? std::string("forward, train or regions") : "forward or train (a " + std::string(profile_kind_name(p.kind)) + " profile)";
    in.fail("/phase", "unknown phase \"" + phase + "\"; expected " + expected);
  }
  p.phase = *run;
}

// A row's "phase". The total spans the run: its phase repeats the profile's (checked from
// kSchemaWithKind on) and the row keeps none. A version-1 layer may have "" (a Profile made by
// hand), which the reports read as forward.
LayerPhase phase_from_json(const Reader& in, const ordered_json& v, const std::string& at, const Profile& p, bool total) {
  const std::string text = in.string(v, at, "phase");
  if (total) {
    const std::string_view expected = profile_phase_name(p);
    if (p.schema >= kSchemaWithKind && text != expected) {
      in.fail(at_key(at, "phase"), "\"" + text + "\"; the total's phase is the profile's, \"" + std::string(expected) + "\"");
    }
    return LayerPhase::forward;
  }
  if (p.schema < kSchemaWithKind && text.empty()) return LayerPhase::forward;
  return enumerated<LayerPhase>(in, v, at, "phase", parse_layer_phase, "forward, backward, optimizer, region, recompute or setup");
}

// Long: one read per field of a layer in the documented format (docs/profile.md), in its order.
// `p`: the profile read so far (its schema, kind and phase); `total`: this is Profile::total.
LayerProfile layer_from_json(const Reader& in, const ordered_json& v, const std::string& at, const Profile& p, bool total) {
  LayerProfile l;
  l.index = small_integer(in, v, at, "index", -1);
  l.name = in.string(v, at, "name");
  l.op = in.string(v, at, "op");
  l.phase = phase_from_json(in, v, at, p, total);
  l.output_shape = shape(in, v, at, "output_shape");
  l.causal = in.boolean(v, at, "causal");
  l.params = in.integer(v, at, "params", 0);
  l.macs = in.integer(v, at, "macs", 0);
  l.flops = in.integer(v, at, "flops", 0);
  if (v.contains("work_note")) l.work_note = in.string(v, at, "work_note");
  if (v.contains("work_partial")) l.work_partial = in.string(v, at, "work_partial");
  if (v.contains("nested_op")) l.nested_op = in.boolean(v, at, "nested_op");
  // A program's row (absent in a model's, and in profiles from before they were kept).
  if (v.contains("calls")) {
    l.calls = static_cast<std::uint64_t>(in.integer(v, at, "calls", 0));
    l.total_ms = in.number(v, at, "total_ms", false);
    l.basis_ms = in.number(v, at, "basis_ms", false);
    if (v.contains("after_steps_calls")) {
      l.after_steps_calls = static_cast<std::uint64_t>(in.integer(v, at, "after_steps_calls", 0));
      l.after_steps_ms = in.number(v, at, "after_steps_ms", false);
      if (l.after_steps_calls > l.calls || l.after_steps_ms > l.total_ms * (1 + 1e-9)) {
        in.fail(at + "/after_steps_calls", "more calls or time after the last step than the row has in all");
      }
    }
  }
  if (v.contains("threads")) {
    l.threads = small_integer(in, v, at, "threads", 1);
    l.threads_min = small_integer(in, v, at, "threads_min", 0);
  }
  if (v.contains("shapes")) {
    const ordered_json& shapes = in.member(v, at, "shapes");
    if (!shapes.is_array()) in.fail(at + "/shapes", std::string("expected a list of shapes, got ") + shapes.type_name());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::string sat = at + "/shapes/" + std::to_string(i);
      ShapeRow r;
      r.shape = in.string(shapes[i], sat, "shape");
      r.calls = static_cast<std::uint64_t>(in.integer(shapes[i], sat, "calls", 0));
      r.time_ms = in.number(shapes[i], sat, "time_ms", false);
      r.flops = in.number(shapes[i], sat, "flops", false);
      r.other = in.boolean(shapes[i], sat, "other");
      l.shapes.push_back(std::move(r));
    }
  }
  if (v.contains("impossible")) l.impossible = in.boolean(v, at, "impossible");
  if (l.impossible) l.impossible_reason = in.string(v, at, "impossible_reason");
  const std::string bytes_at = at + "/bytes";
  const ordered_json& bytes = in.member(v, at, "bytes");
  const SourcedValue bytes_value = sourced_from_json(in, bytes, bytes_at);
  l.bytes_origin =
      enumerated<BytesOrigin>(in, bytes, bytes_at, "origin", report::parse_bytes_origin, "dram-counters, llc-misses or analytic-minimum");
  l.bytes = in.integer(bytes, bytes_at, "analytic_minimum", 0);
  l.bytes_skipped = strings(in, bytes, bytes_at, "skipped");
  l.time_ms = summary_from_json(in, in.member(v, at, "time_ms"), at + "/time_ms");
  if (v.contains("samples_ms")) l.samples_ms = samples_from_json(in, v, at);  // absent in older profiles (docs/profile.md, "Older profiles")
  // The profiler divides by the model's median: noise may put a one-layer model's share a
  // hair above 1, so no upper bound.
  l.time_share = in.number(v, at, "time_share", false);
  l.below_resolution = in.boolean(v, at, "below_resolution");
  if (v.contains("own_cost_ns")) l.own_cost_ns = in.number(v, at, "own_cost_ns", false);
  const auto gflops = nullable_number(in, v, at, "gflops_per_s", true);
  const auto gbytes = nullable_number(in, v, at, "gbytes_per_s", true);
  const auto intensity = nullable_number(in, v, at, "intensity", true);
  const auto attainable = nullable_number(in, v, at, "attainable_gflops_per_s", true);
  const auto efficiency = nullable_number(in, v, at, "efficiency", true);
  const ordered_json& bound = in.member(v, at, "bound");
  const ordered_json& roof = in.member(v, at, "roofline");
  if (!roof.is_null()) {
    const std::string rat = at + "/roofline";
    RooflinePoint r;
    r.flops = sourced_from_json(in, in.member(roof, rat, "flops"), rat + "/flops");
    r.bytes = bytes_value;
    r.seconds = in.number(roof, rat, "seconds", false);
    r.compute_roof = in.string(roof, rat, "compute_roof");
    r.compute_roof_gflops_per_s = in.number(roof, rat, "compute_roof_gflops_per_s", false);
    r.peak_gflops_per_s = in.number(roof, rat, "peak_gflops_per_s", false);
    r.dram_gbytes_per_s = in.number(roof, rat, "dram_gbytes_per_s", false);
    // Profiles written before the working-set memory roof were placed under DRAM's.
    if (roof.contains("memory_gbytes_per_s")) {
      r.memory_gbytes_per_s = in.number(roof, rat, "memory_gbytes_per_s", false);
      r.memory_level = in.string(roof, rat, "memory_level");
      r.memory_roof = in.string(roof, rat, "memory_roof");
    } else {
      r.memory_gbytes_per_s = r.dram_gbytes_per_s;
      r.memory_level = "dram";
      r.memory_roof = "DRAM triad ceiling (a profile written before working-set memory roofs)";
    }
    r.ridge_intensity = in.number(roof, rat, "ridge_intensity", false);
    r.headroom = in.number(roof, rat, "headroom", false);
    const ordered_json& levels = in.member(roof, rat, "levels");
    if (!levels.is_array()) in.fail(rat + "/levels", std::string("expected a list of memory levels, got ") + levels.type_name());
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const std::string lat = rat + "/levels/" + std::to_string(i);
      LevelRoof level;
      level.level = in.string(levels[i], lat, "level");
      level.gbytes_per_s = in.number(levels[i], lat, "gbytes_per_s", false);
      level.attainable_gflops_per_s = in.number(levels[i], lat, "attainable_gflops_per_s", false);
      r.levels.push_back(std::move(level));
    }
    r.why = in.string(roof, rat, "why");
    r.notes = strings(in, roof, rat, "notes");
    // The placement's own numbers sit beside the roofline object (docs/profile.md, "A layer");
    // with a placement they must all be there.
    const auto require = [&](const std::optional<double>& value, const char* key) {
      if (!value) in.fail(at + "/" + key, "null, but the layer has a roofline placement");
      return *value;
    };
    r.intensity = intensity ? *intensity : 0.0;
    if (!intensity && bytes_value.value > 0) require(intensity, "intensity");
    if (r.seconds > 0) {
      r.gflops_per_s = require(gflops, "gflops_per_s");
      r.gbytes_per_s = require(gbytes, "gbytes_per_s");
    }
    r.attainable_gflops_per_s = require(attainable, "attainable_gflops_per_s");
    r.efficiency = require(efficiency, "efficiency");
    r.bound = enumerated<Bound>(in, v, at, "bound", report::parse_bound, "compute, memory or overhead");
    l.roofline = std::move(r);
  } else if (!bound.is_null()) {
    in.fail(at + "/bound", "a bound without a roofline placement (\"roofline\" is null)");
  }
  l.roofline_error = in.string(v, at, "roofline_error");

  const ordered_json& counters = in.member(v, at, "counters");
  if (!counters.is_object()) in.fail(at + "/counters", std::string("expected an object of counters by name, got ") + counters.type_name());
  for (const auto& [name, c] : counters.items()) {
    const std::string cat = at_key(at + "/counters", name);
    LayerCounter counter;
    counter.name = name;
    counter.value = nullable_number(in, c, cat, "value", true);
    counter.unit = in.string(c, cat, "unit");
    counter.kind = event_kind(in, c, cat, counter.name, counter.unit);
    counter.status = enumerated<CounterStatus>(in, c, cat, "status", report::parse_counter_status, kStatuses);
    counter.running_fraction = in.number(c, cat, "running_fraction", false);
    counter.reason = in.string(c, cat, "reason");
    if (c.contains("below_resolution")) counter.below_resolution = in.boolean(c, cat, "below_resolution");  // absent before 2026-11
    // Absent before the counters' reading cost was measured per layer (docs/profile.md, "Older profiles").
    if (c.contains("read_cost")) counter.read_cost = in.number(c, cat, "read_cost", false);
    if (c.contains("impossible")) counter.impossible = in.boolean(c, cat, "impossible");
    if (c.contains("impossible_reason")) counter.impossible_reason = in.string(c, cat, "impossible_reason");
    const bool readable = counter.status == CounterStatus::ok || counter.status == CounterStatus::multiplexed;
    if (counter.value && !readable) {
      in.fail(cat + "/value", std::string("a value for a counter whose status is ") + std::string(counter_status_name(counter.status)) +
                                  "; an unavailable counter has \"value\": null");
    }
    if (!counter.value && readable) in.fail(cat + "/value", "null, but the status says the counter was read");
    l.counters.push_back(std::move(counter));
  }
  const ordered_json& metrics = in.member(v, at, "metrics");
  if (!metrics.is_object()) in.fail(at + "/metrics", std::string("expected an object of metrics by name, got ") + metrics.type_name());
  for (const auto& [name, m] : metrics.items()) {
    const std::string mat = at_key(at + "/metrics", name);
    LayerMetric metric;
    metric.name = name;
    if (!in.member(m, mat, "value").is_null()) metric.value = any_number(in, m, mat, "value");
    metric.unit = in.string(m, mat, "unit");
    metric.reason = in.string(m, mat, "reason");
    if (m.contains("below_resolution")) metric.below_resolution = in.boolean(m, mat, "below_resolution");
    l.metrics.push_back(std::move(metric));
  }
  const ordered_json& check = in.member(v, at, "flops_check");
  if (!check.is_null()) {
    const std::string fat = at + "/flops_check";
    FlopsComparison f;
    f.measured = in.number(check, fat, "measured", false);
    f.analytic = in.number(check, fat, "analytic", false);
    f.ratio = in.number(check, fat, "ratio", false);
    f.agrees = in.boolean(check, fat, "agrees");
    f.reasons = strings(in, check, fat, "reasons");
    l.flops_check = std::move(f);
  }
  if (v.contains("why")) {  // absent in older profiles
    const ordered_json& why = in.member(v, at, "why");
    if (!why.is_array()) in.fail(at + "/why", std::string("expected an array of causes, got ") + why.type_name());
    for (std::size_t i = 0; i < why.size(); ++i) {
      const std::string wat = at + "/why/" + std::to_string(i);
      if (!why[i].is_object()) in.fail(wat, std::string("expected a cause object, got ") + why[i].type_name());
      l.why.push_back(
          {in.string(why[i], wat, "rule"), in.string(why[i], wat, "label"), in.string(why[i], wat, "text"), in.string(why[i], wat, "advice")});
    }
  }
  return l;
}

MemoryEstimate memory_estimate_from_json(const Reader& in, const ordered_json& v, const std::string& at) {
  MemoryEstimate m;
  m.batch = in.integer(v, at, "batch", 1);
  const std::string optimizer = in.string(v, at, "optimizer");
  const auto parsed = parse_optimizer(optimizer);
  if (!parsed) in.fail(at + "/optimizer", "unknown optimizer \"" + optimizer + "\"; expected sgd, momentum or adam");
  m.optimizer = *parsed;
  m.param_bytes = in.integer(v, at, "param_bytes", 0);
  m.buffer_bytes = in.integer(v, at, "buffer_bytes", 0);
  m.gradient_bytes = in.integer(v, at, "gradient_bytes", 0);
  m.optimizer_bytes = in.integer(v, at, "optimizer_bytes", 0);
  m.model_state_bytes = in.integer(v, at, "model_state_bytes", 0);
  m.inference_activation_bytes = in.integer(v, at, "inference_activation_bytes", 0);
  m.inference_peak_layer = in.string(v, at, "inference_peak_layer");
  m.training_activation_bytes = in.integer(v, at, "training_activation_bytes", 0);
  m.inference_total_bytes = in.integer(v, at, "inference_total_bytes", 0);
  m.training_total_bytes = in.integer(v, at, "training_total_bytes", 0);
  return m;
}

// The machine's parts are read by the machine report's own readers (src/calibrate), which
// take nlohmann::json; the profile is read as ordered_json to keep counter order. The subtree
// is converted, and its messages still locate in the profile's text, since the pointers
// are the profile's.
json plain(const ordered_json& v) {
  return json::parse(v.dump());
}

ProfileMachine machine_from_json(const Reader& in, const common::JsonReader& plain_in, const ordered_json& v, const std::string& at) {
  ProfileMachine m;
  m.host = in.string(v, at, "host");
  const ordered_json& cpu = in.member(v, at, "cpu");
  if (!cpu.is_null()) m.cpu = machine::cpu_from_json(plain_in, plain(cpu), at + "/cpu");
  const ordered_json& theoretical = in.member(v, at, "theoretical");
  if (!theoretical.is_null()) m.theoretical = machine::theoretical_from_json(plain_in, plain(theoretical), at + "/theoretical");
  const ordered_json& calibration = in.member(v, at, "calibration");
  const std::string cat = at + "/calibration";
  m.calibration_file = in.string(calibration, cat, "file");
  m.calibration_created = in.string(calibration, cat, "created");
  m.calibration_quick = in.boolean(calibration, cat, "quick");
  // Profiles written before hwprof named its BLAS kernels have no "blas": left empty then.
  if (v.contains("blas")) {
    const ordered_json& blas = in.member(v, at, "blas");
    m.blas_core = in.string(blas, at + "/blas", "core");
    m.blas_core_source = in.string(blas, at + "/blas", "core_source");
  }
  const ordered_json& ceilings = in.member(v, at, "ceilings");
  if (!ceilings.is_null()) m.ceilings = machine::run_from_json(plain_in, plain(ceilings), at + "/ceilings");
  return m;
}

}  // namespace

namespace {

ordered_json groups_to_json(const Profile& p, ProfileGrouping by, int depth) {
  ordered_json rows = ordered_json::array();
  for (const analysis::LayerGroup& g : analysis::group_layers(p, analysis::layer_grouping(by), depth)) {
    rows.push_back({{"key", g.key},
                    {"layers", g.layers},
                    {"time_ms", number(g.time_ms)},
                    {"share", number(g.share)},
                    {"flops", number(g.flops)},
                    {"efficiency", optional_number(g.efficiency)},
                    {"bound", g.bound.empty() ? ordered_json(nullptr) : ordered_json(g.bound)},
                    {"roof_ms", optional_number(g.roof_ms)},
                    {"win_ms", optional_number(g.win_ms)},
                    {"why", g.why}});
  }
  return {{"by", analysis::grouping_name(by)},
          {"depth", by == ProfileGrouping::op ? ordered_json(nullptr) : ordered_json(depth)},
          {"rows", std::move(rows)}};
}

}  // namespace

std::string profile_to_json(const Profile& p) {
  return profile_to_json(p, ProfileGrouping::layer, 1);
}

std::string profile_to_json(const Profile& p, ProfileGrouping by, int depth) {
  std::string out;
  report::profile_json_parts(p, by, depth, [&out](std::string_view part) { out += part; });
  return out;
}

namespace {

// Strings come from files and the system (host names, strerror); invalid UTF-8 is replaced
// rather than thrown on.
std::string dump_pretty(const ordered_json& j) {
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

// The document without its spans (an empty "trace" list stands in for them).
ordered_json profile_without_trace(const Profile& p, ProfileGrouping by, int depth) {
  ordered_json j;
  j["schema"] = kProfileSchema;  // whatever it was read from: this is the current format
  j["kind"] = profile_kind_name(p.kind);
  j["created"] = p.created;
  j["hwprof_version"] = p.hwprof_version;
  j["machine"] = {
      {"host", p.machine.host},
      {"cpu", known(p.machine.cpu) ? machine::cpu_to_json(p.machine.cpu) : ordered_json(nullptr)},
      {"theoretical", known(p.machine.theoretical) ? machine::theoretical_to_json(p.machine.theoretical) : ordered_json(nullptr)},
      {"calibration", {{"file", p.machine.calibration_file}, {"created", p.machine.calibration_created}, {"quick", p.machine.calibration_quick}}},
      {"ceilings", p.machine.ceilings ? machine::run_to_json(*p.machine.ceilings) : ordered_json(nullptr)},
      {"blas", {{"core", p.machine.blas_core}, {"core_source", p.machine.blas_core_source}}}};
  j["model"] = p.model;
  j["input_shape"] = p.input_shape;
  j["batch"] = p.batch > 0 ? ordered_json(p.batch) : ordered_json(nullptr);  // 0: not known (a program's run)
  j["phase"] = profile_phase_name(p);
  j["optimizer"] = p.optimizer;
  j["rank"] = p.rank >= 0 ? ordered_json{{"rank", p.rank}, {"size", p.rank_count}, {"from", p.rank_variable}} : ordered_json(nullptr);
  j["threads"] = p.threads;
  if (p.kind == ProfileKind::torch) j["torch_threads"] = p.threads;  // PyTorch's intra-op threads, the ones its rows ran on
  j["backend"] = p.backend;
  j["group"] = p.group;
  ordered_json events = ordered_json::array();
  for (const EventInfo& e : p.events) {
    events.push_back(
        {{"name", e.name}, {"unit", e.unit}, {"kind", event_kind_name(e.kind)}, {"status", counter_status_name(e.status)}, {"reason", e.reason}});
  }
  j["events"] = std::move(events);
  j["warnings"] = p.warnings;
  j["hints"] = p.hints;
  j["warmup_runs"] = p.warmup_runs;
  j["iterations"] = p.iterations;
  j["overhead_ns"] = number(p.overhead_ns);
  j["time_basis"] = time_basis_name(p.time_basis);
  j["steps"] = p.steps;
  j["step_time_ms"] = p.steps > 0 && p.step_time_ms.n > 0 ? summary_to_json(p.step_time_ms) : ordered_json(nullptr);
  if (p.after_steps_ms > 0) j["after_steps_ms"] = number(p.after_steps_ms);
  j["total"] = layer_to_json(p.total, profile_phase_name(p));
  ordered_json layers = ordered_json::array();
  for (const LayerProfile& l : p.layers) layers.push_back(layer_to_json(l, layer_phase_name(l.phase)));
  j["layers"] = std::move(layers);
  j["memory"] = memory_to_json(p.memory);
  j["trace_iterations"] = p.trace_iterations;
  if (!p.trace_note.empty()) j["trace_note"] = p.trace_note;
  j["counter_iterations"] = p.counter_iterations;
  j["trace"] = ordered_json::array();
  if (is_program_run(p.kind)) {
    ordered_json threads = ordered_json::array();
    for (const RegionThreadRow& r : p.region_threads) {
      threads.push_back({{"thread", r.thread},
                         {"thread_name", r.thread_name},
                         {"region", r.region},
                         {"calls", r.calls},
                         {"inclusive_ms", number(r.inclusive_ms)},
                         {"exclusive_ms", number(r.exclusive_ms)}});
    }
    j["region_threads"] = std::move(threads);
    ordered_json paths = ordered_json::array();
    for (const CallPathRow& c : p.call_paths) {
      paths.push_back({{"path", c.path},
                       {"depth", c.depth},
                       {"calls", c.calls},
                       {"inclusive_ms", number(c.inclusive_ms)},
                       {"exclusive_ms", number(c.exclusive_ms)}});
      if (c.flops) paths.back()["flops"] = number(*c.flops);
    }
    j["call_paths"] = std::move(paths);
  }
  // Sampling (--sample): its rows, read back; its stacks are in the flame graph's files.
  if (p.sampling) j["sampling"] = report::sampling_json(*p.sampling);
  // Derived rows of layers summed per op or block, when asked for (--by): not read back.
  if (by != ProfileGrouping::layer) j["groups"] = groups_to_json(p, by, depth);
  return j;
}

// One span of "trace", laid out as the document's dump lays out an object in a list at its
// depth (4 spaces in), so that the parts read as one dump of the whole document.
std::string span_text(const TraceSpan& s) {
  const ordered_json j = {{"name", s.name},
                          {"category", s.category},
                          {"layer", s.layer},
                          {"iteration", s.iteration},
                          {"thread", s.thread},
                          {"start_us", number(s.start_us)},
                          {"duration_us", number(s.duration_us)}};
  const std::string flat = dump_pretty(j);
  std::string out = "    ";
  out.reserve(flat.size() + 64);
  for (const char c : flat) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

}  // namespace

namespace report {

// The document is dumped without its spans, which are then written one at a time where its
// empty "trace" list is: a JSON document of 100,000 spans is never built.
void profile_json_parts(const Profile& p, ProfileGrouping by, int depth, const TextSink& sink) {
  const std::string document = dump_pretty(profile_without_trace(p, by, depth)) + "\n";
  // A newline in a string is written as \n, so this is the top-level key and nothing else.
  const std::string_view empty_trace = "\n  \"trace\": []";
  const std::size_t at = document.find(empty_trace);
  if (p.trace.empty() || at == std::string::npos) {
    sink(document);
    return;
  }
  const std::size_t list_start = at + empty_trace.size() - 1;  // at the ']' of "[]"
  sink(std::string_view(document).substr(0, list_start));
  sink("\n");
  for (std::size_t i = 0; i < p.trace.size(); ++i) {
    sink(span_text(p.trace[i]));
    sink(i + 1 < p.trace.size() ? ",\n" : "\n  ");
  }
  sink(std::string_view(document).substr(list_start));
}

}  // namespace report

namespace {
// A program's profile from before its rows said their calls and their time over them (no
// time_basis): over the run, each row's calls from its per-thread rows and its time over them
// from its share of the outermost regions' time, which is what that share was
// (docs/profile.md, "Older profiles").
void migrate_program_rows(Profile& p) {
  p.time_basis = TimeBasis::run;
  const double root_ms = p.total.time_ms.median;
  p.total.total_ms = root_ms;
  p.total.basis_ms = root_ms;
  for (LayerProfile& l : p.layers) {
    const std::string region = analysis::region_name_of(p, l);
    for (const RegionThreadRow& r : p.region_threads) l.calls += r.region == region ? r.calls : 0;
    l.total_ms = l.time_share * root_ms;
    l.basis_ms = l.total_ms;
  }
}
}  // namespace

// Long: one read per top-level field of the documented format (docs/profile.md), in its order.
Result<Profile> profile_from_json(std::string_view text, const std::string& source_name) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{source_name + ": the profile is empty (truncated?); run `hwprof profile` again"};
  }
  if (std::string nesting = common::json_nesting_error(text, source_name); !nesting.empty()) return Error{nesting};
  ordered_json root;
  try {
    root = ordered_json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    const auto colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    return Error{source_name + ":" + common::line_column(text, at) + ": not a valid profile (corrupt or truncated JSON: " + what +
                 "); run `hwprof profile` again"};
  } catch (const json::exception& e) {
    return Error{source_name + ": not a valid profile (" + std::string(e.what()) + ")"};
  }
  const SourceText source(source_name, std::string(text));
  const Reader in(source);
  const common::JsonReader plain_in(source);
  Profile p;
  try {
    if (auto other = report::other_hwprof_file(root, source_name)) in.fail("", "this is " + *other + "; not a profile");
    if (!root.is_object()) in.fail("", std::string("a profile is a JSON object, got ") + root.type_name());
    // Every version from 1 up is read; an older one is migrated (docs/profile.md, "Schema history").
    const std::int64_t schema = in.integer(root, "", "schema", 1);
    if (schema > kProfileSchema) {
      in.fail("/schema", "schema " + std::to_string(schema) + " was written by a newer hwprof (this one reads schema " +
                             std::to_string(kProfileSchema) + " and older): upgrade hwprof");
    }
    p.schema = static_cast<int>(schema);
    p.created = in.string(root, "", "created");
    p.hwprof_version = in.string(root, "", "hwprof_version");
    p.machine = machine_from_json(in, plain_in, in.member(root, "", "machine"), "/machine");
    p.model = in.string(root, "", "model");
    p.input_shape = shape(in, root, "", "input_shape");
    p.batch = in.member(root, "", "batch").is_null() ? 0 : in.integer(root, "", "batch", 1);  // null: not known
    kind_and_phase_from_json(in, root, p);
    p.optimizer = in.string(root, "", "optimizer");
    if (root.contains("rank") && !root["rank"].is_null()) {  // absent in older profiles
      const ordered_json& rank = root["rank"];
      if (!rank.is_object()) in.fail("/rank", std::string("expected null or {rank, size, from}, got ") + rank.type_name());
      p.rank = small_integer(in, rank, "/rank", "rank", 0);
      p.rank_count = small_integer(in, rank, "/rank", "size", 0);
      p.rank_variable = in.string(rank, "/rank", "from");
      if (p.rank_count > session::kMaxRanks) {
        in.fail("/rank/size", std::to_string(p.rank_count) + " ranks is more than any launcher starts (at most " +
                                  std::to_string(session::kMaxRanks) + "): a damaged profile");
      }
      if (p.rank_count > 0 && p.rank >= p.rank_count)
        in.fail("/rank/rank", "rank " + std::to_string(p.rank) + " of " + std::to_string(p.rank_count) + " ranks");
    }
    p.threads = small_integer(in, root, "", "threads", 1);
    p.backend = in.string(root, "", "backend");
    p.group = in.string(root, "", "group");
    const ordered_json& events = in.member(root, "", "events");
    if (!events.is_array()) in.fail("/events", std::string("expected a list of events, got ") + events.type_name());
    for (std::size_t i = 0; i < events.size(); ++i) {
      const std::string at = "/events/" + std::to_string(i);
      EventInfo e;
      e.name = in.string(events[i], at, "name");
      e.unit = in.string(events[i], at, "unit");
      e.kind = event_kind(in, events[i], at, e.name, e.unit);
      e.status = enumerated<CounterStatus>(in, events[i], at, "status", report::parse_counter_status, kStatuses);
      e.reason = in.string(events[i], at, "reason");
      p.events.push_back(std::move(e));
    }
    if (root.contains("warnings")) p.warnings = strings(in, root, "", "warnings");  // absent in older profiles
    p.hints = strings(in, root, "", "hints");
    p.warmup_runs = small_integer(in, root, "", "warmup_runs", 0);
    p.iterations = small_integer(in, root, "", "iterations", 0);
    p.overhead_ns = in.number(root, "", "overhead_ns", false);
    if (root.contains("time_basis")) {  // absent in profiles from before program runs had steps
      p.time_basis = enumerated<TimeBasis>(in, root, "", "time_basis", parse_time_basis, "pass, step or run");
      p.steps = static_cast<std::uint64_t>(in.integer(root, "", "steps", 0));
      if (!in.member(root, "", "step_time_ms").is_null())
        p.step_time_ms = summary_from_json(in, in.member(root, "", "step_time_ms"), "/step_time_ms");
      if (root.contains("after_steps_ms")) p.after_steps_ms = in.number(root, "", "after_steps_ms", false);
    }
    p.total = layer_from_json(in, in.member(root, "", "total"), "/total", p, true);
    const ordered_json& layers = in.member(root, "", "layers");
    if (!layers.is_array()) in.fail("/layers", std::string("expected a list of layers, got ") + layers.type_name());
    for (std::size_t i = 0; i < layers.size(); ++i) p.layers.push_back(layer_from_json(in, layers[i], "/layers/" + std::to_string(i), p, false));
    const ordered_json& memory = in.member(root, "", "memory");
    p.memory.analytic = memory_estimate_from_json(in, in.member(memory, "/memory", "analytic"), "/memory/analytic");
    const ordered_json& measured = in.member(memory, "/memory", "measured");
    p.memory.parameter_bytes = in.integer(measured, "/memory/measured", "parameter_bytes", 0);
    p.memory.peak_allocated_bytes = in.integer(measured, "/memory/measured", "peak_allocated_bytes", 0);
    p.memory.peak_rss_bytes = in.integer(measured, "/memory/measured", "peak_rss_bytes", 0);
    if (!in.member(measured, "/memory/measured", "page_faults").is_null()) {
      p.memory.page_faults = in.integer(measured, "/memory/measured", "page_faults", 0);
    }
    p.trace_iterations = small_integer(in, root, "", "trace_iterations", 0);
    if (root.contains("trace_note")) p.trace_note = in.string(root, "", "trace_note");
    // Absent in profiles from before counters had passes of their own.
    if (root.contains("counter_iterations")) p.counter_iterations = small_integer(in, root, "", "counter_iterations", 0);
    const ordered_json& trace = in.member(root, "", "trace");
    if (!trace.is_array()) in.fail("/trace", std::string("expected a list of spans, got ") + trace.type_name());
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const std::string at = "/trace/" + std::to_string(i);
      TraceSpan s;
      s.name = in.string(trace[i], at, "name");
      s.category = in.string(trace[i], at, "category");
      if (s.category != "phase" && s.category != "layer") {
        in.fail(at + "/category", "unknown category \"" + s.category + "\"; expected phase or layer");
      }
      s.layer = small_integer(in, trace[i], at, "layer", -1);
      s.iteration = small_integer(in, trace[i], at, "iteration", 0);
      s.thread = small_integer(in, trace[i], at, "thread", 0);
      s.start_us = in.number(trace[i], at, "start_us", false);
      s.duration_us = in.number(trace[i], at, "duration_us", false);
      p.trace.push_back(std::move(s));
    }
    if (root.contains("region_threads")) {
      const ordered_json& rows = in.member(root, "", "region_threads");
      if (!rows.is_array()) in.fail("/region_threads", std::string("expected a list, got ") + rows.type_name());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string at = "/region_threads/" + std::to_string(i);
        RegionThreadRow r;
        r.thread = small_integer(in, rows[i], at, "thread", 0);
        r.thread_name = in.string(rows[i], at, "thread_name");
        r.region = in.string(rows[i], at, "region");
        r.calls = static_cast<std::uint64_t>(in.integer(rows[i], at, "calls", 0));
        r.inclusive_ms = in.number(rows[i], at, "inclusive_ms", false);
        r.exclusive_ms = in.number(rows[i], at, "exclusive_ms", false);
        p.region_threads.push_back(std::move(r));
      }
    }
    if (root.contains("sampling")) p.sampling = read_sampling(in, root["sampling"]);
    if (is_program_run(p.kind) && !root.contains("time_basis")) migrate_program_rows(p);
    if (root.contains("call_paths")) {
      const ordered_json& rows = in.member(root, "", "call_paths");
      if (!rows.is_array()) in.fail("/call_paths", std::string("expected a list, got ") + rows.type_name());
      for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string at = "/call_paths/" + std::to_string(i);
        CallPathRow c;
        c.path = in.string(rows[i], at, "path");
        c.depth = small_integer(in, rows[i], at, "depth", 0);
        c.calls = static_cast<std::uint64_t>(in.integer(rows[i], at, "calls", 0));
        c.inclusive_ms = in.number(rows[i], at, "inclusive_ms", false);
        c.exclusive_ms = in.number(rows[i], at, "exclusive_ms", false);
        if (rows[i].contains("flops")) c.flops = in.number(rows[i], at, "flops", false);
        p.call_paths.push_back(std::move(c));
      }
    }
  } catch (const common::JsonReadError& e) {
    return Error{e.message};
  }
  return p;
}

Result<Profile> load_profile(const std::string& path) {
  auto text = common::read_input_file(path, "profile", kMaxProfileBytes);
  if (!text) return text.error();
  return profile_from_json(*text, path);
}

}  // namespace hwprof
