// A program's own regions (<hwprof/regions.hpp>) as a Profile: what the report module and
// C++ callers of profile_of() turn a session into.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/timestamp.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/version.hpp"
#include "placement/causes.hpp"
#include "placement/layer_placement.hpp"
#include "placement/rate_guard.hpp"
#include "placement/row_time.hpp"

namespace hwprof {

using placement::add_calibration_warnings;
using placement::fill_launch_rank;
using placement::fill_machine;
using placement::fill_measurements;
using placement::guard_rate;
using placement::rate_limit;
using placement::RateLimit;
using placement::resolve_threads;

namespace {

Summary one_sample(double value) {
  Summary s;
  s.n = 1;
  s.median = s.mean = s.min = s.max = s.p5 = s.p95 = s.p99 = value;
  return s;
}

// The regions by id, looked up once for the paths, the threads, the timeline and a torch
// run's nested work.
class RegionIndex {
 public:
  explicit RegionIndex(const SessionSnapshot& s) {
    for (const RegionReport& r : s.regions) {
      if (r.id < 0) continue;
      if (static_cast<std::size_t>(r.id) >= reports_.size()) reports_.resize(static_cast<std::size_t>(r.id) + 1, nullptr);
      reports_[static_cast<std::size_t>(r.id)] = &r;
    }
  }
  const RegionReport* report(int id) const {
    return id >= 0 && static_cast<std::size_t>(id) < reports_.size() ? reports_[static_cast<std::size_t>(id)] : nullptr;
  }
  const std::string& operator()(int id) const {
    static const std::string unknown = "?";
    const RegionReport* r = report(id);
    return r != nullptr ? r->name : unknown;
  }
  std::size_t size() const { return reports_.size(); }

 private:
  std::vector<const RegionReport*> reports_;
};

std::string path_name(const std::vector<CallPath>& tree, std::size_t i, const RegionIndex& region_name) {
  std::string out;
  for (int k = static_cast<int>(i); k >= 0; k = tree[static_cast<std::size_t>(k)].parent) {
    const std::string& name = region_name(tree[static_cast<std::size_t>(k)].region);
    out = out.empty() ? name : name + "/" + out;
  }
  return out;
}

// What a row is, from its region's role (docs/torch.md, "Rows"): its op column, its phase, and
// its name (a backward or recompute region's without the " (backward)" / " (recompute)" its
// region is told apart by: the phase says it).
void name_by_role(LayerProfile& l, const RegionReport& r) {
  constexpr std::string_view kSuffixes[] = {" (backward)", " (recompute)"};
  std::string_view bare = r.name;
  for (std::string_view suffix : kSuffixes) {
    if (bare.size() > suffix.size() && bare.substr(bare.size() - suffix.size()) == suffix) bare = bare.substr(0, bare.size() - suffix.size());
  }
  switch (r.role) {
    case RegionRole::scope:
      l.op = "region";
      l.phase = LayerPhase::region;
      return;
    case RegionRole::optimizer:
      l.op = "optimizer";
      l.phase = LayerPhase::optimizer;
      return;
    case RegionRole::setup: {
      // "aten::uniform_ (setup)": an op of the program's setup.
      constexpr std::string_view kSetup = " (setup)";
      const std::string_view name = r.name;
      const std::string_view op = name.ends_with(kSetup) ? name.substr(0, name.size() - kSetup.size()) : name;
      l.op = std::string(op.substr(0, std::min(op.find(" ["), op.find(" ("))));
      l.name = std::string(op);
      l.phase = LayerPhase::setup;
      return;
    }
    case RegionRole::module_forward:
    case RegionRole::module_backward:
    case RegionRole::module_recompute:
      l.op = "module";
      break;
    case RegionRole::op_forward:
    case RegionRole::op_backward:
    case RegionRole::op_recompute:
      l.op = std::string(bare.substr(0, std::min(bare.find(" ["), bare.find(" ("))));  // "aten::mm (in backward)": aten::mm
      break;
  }
  const bool backward = r.role == RegionRole::module_backward || r.role == RegionRole::op_backward;
  const bool recompute = r.role == RegionRole::module_recompute || r.role == RegionRole::op_recompute;
  l.phase = backward ? LayerPhase::backward : recompute ? LayerPhase::recompute : LayerPhase::forward;
  if (backward || recompute) l.name = std::string(bare);
}

// A program's figures per step (or over the run): its rows' time over all their calls, divided.
struct Basis {
  TimeBasis basis = TimeBasis::run;
  double per = 1.0;  // the steps, or 1
  // The program's time in its outermost rows: over the run, and in its steps (without the setup
  // and what ran after the last step; the run's where it has no steps). Shares are of these.
  double run_ns = 0.0;
  double steps_ns = 0.0;
};

// One region as a row: its measurement, and with the program's own work (set_work) its place
// on the roofline, like an element-wise op (FMA peak; its bytes held to the bandwidth of the
// cache they fit in), over its mean time per call (its work per call is its calls' mean).
LayerProfile region_row(const RegionReport& r, const RegionProfileOptions& options, const Profile& p, const Basis& basis,
                        const char* work_source = "the program's own count (set_work)") {
  LayerProfile l;
  l.index = r.id;
  l.name = r.name;
  name_by_role(l, r);
  l.calls = r.calls;
  l.total_ms = r.total_inclusive_ns / 1e6;
  // The setup ran once, before the steps: its time is not spread over them. Per step, a row's
  // time is what it ran in the steps: its calls after the last step (an evaluation, a final
  // print) are apart (docs/torch.md, "Steps").
  const bool setup = l.phase == LayerPhase::setup;
  if (basis.basis == TimeBasis::step && !setup) {
    l.after_steps_calls = std::min(r.after_steps_calls, r.calls);
    l.after_steps_ms = std::min(r.after_steps_ns / 1e6, l.total_ms);
  }
  l.basis_ms = setup ? l.total_ms : (l.total_ms - l.after_steps_ms) / basis.per;
  l.threads = r.threads_max;
  l.threads_min = r.threads_min;
  if (r.params >= 0) l.params = r.params;
  // Calls told apart by a scalar that changes neither the shapes nor the work (normal_'s mean
  // and std) are one shape to a reader: variants of the same label are summed.
  for (const RegionVariant& v : r.variants) {
    const auto same = std::find_if(l.shapes.begin(), l.shapes.end(), [&v](const ShapeRow& s) { return s.shape == v.label && s.other == v.other; });
    if (same == l.shapes.end()) {
      l.shapes.push_back({v.label, v.calls, v.total_ns / 1e6, v.flops, v.other});
      continue;
    }
    same->calls += v.calls;
    same->time_ms += v.total_ns / 1e6;
    same->flops += v.flops;
  }
  if (r.work_flops) l.flops = static_cast<std::int64_t>(std::llround(std::max(0.0, *r.work_flops)));
  if (r.work_bytes) l.bytes = static_cast<std::int64_t>(std::llround(std::max(0.0, *r.work_bytes)));
  // Placed under the calibration of the threads it ran on, where the observer said (PyTorch's).
  const int threads = options.threads > 0 || r.threads_max <= 0 ? p.threads : r.threads_max;
  const double mean_seconds = r.calls > 0 ? r.total_inclusive_ns / static_cast<double>(r.calls) * 1e-9 : 0.0;
  if (r.work_flops || r.work_bytes) {
    // Under its compute roof: the measured GEMM ceiling for a convolution, a matrix product or a
    // module whose FLOPs are mostly theirs, a function's rate for an activation, else the FMA peak.
    fill_measurements(l, r, options.machine, threads, {.roof = r.roof, .working_set = WorkingSet{static_cast<double>(l.bytes), 0.0, 0.0}},
                      mean_seconds);
    if (l.roofline) {
      l.roofline->flops.detail = work_source;
      if (l.roofline->bytes.source == ValueSource::analytic) l.roofline->bytes.detail = work_source;
    }
  } else {
    fill_measurements(l, r, std::nullopt, threads, {.roof = r.roof, .working_set = std::nullopt});
    l.work_note = !r.work_note.empty() ? r.work_note
                  : r.role == RegionRole::scope
                      ? "no work given: HWPROF_SCOPE_WORK(name, flops, bytes) or hwprof_set_work() places a region on the roofline"
                      : "no op run inside it has a count";
    l.roofline_error = l.work_note;
  }
  l.time_share = setup ? (basis.run_ns > 0 ? r.total_inclusive_ns / basis.run_ns : 0.0)
                       : (basis.steps_ns > 0 ? l.basis_ms * basis.per * 1e6 / basis.steps_ns : 0.0);
  return l;
}

// Whether the call tree holds every call: no thread entered more distinct paths than it keeps.
bool whole_call_tree(const SessionSnapshot& s) {
  return std::none_of(s.threads.begin(), s.threads.end(), [](const SessionThread& t) { return t.paths_dropped > 0; });
}

bool has_own_work(const RegionReport* r) {
  return r != nullptr && (r->work_flops || r->work_bytes);
}

// An op row that no formula counts (not one counted in the op around it).
bool uncounted_op(const RegionReport* r) {
  if (r == nullptr || has_own_work(r)) return false;
  const bool op = r->role == RegionRole::op_forward || r->role == RegionRole::op_backward || r->role == RegionRole::op_recompute;
  return op && r->work_note.starts_with("not counted");
}

// Per region (s.regions order): its work is its own (set_work, an op's count) and no region
// around any of its calls has work of its own: the rows whose work adds up to the program's,
// each FLOP once.
std::vector<bool> outermost_work(const SessionSnapshot& s, const RegionIndex& regions) {
  std::vector<bool> out(s.regions.size(), false);
  std::vector<int> state(regions.size(), 0);  // by id: 1 some path with no work around it, 2 every path inside work
  const std::vector<CallPath>& tree = s.call_tree;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    if (!has_own_work(regions.report(tree[i].region))) continue;
    bool inside = false;
    for (int k = tree[i].parent; k >= 0 && !inside; k = tree[static_cast<std::size_t>(k)].parent) {
      inside = has_own_work(regions.report(tree[static_cast<std::size_t>(k)].region));
    }
    int& st = state[static_cast<std::size_t>(tree[i].region)];
    st = inside ? (st == 0 ? 2 : st) : 1;
  }
  const bool whole = whole_call_tree(s);
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const RegionReport& r = s.regions[k];
    if (!has_own_work(&r)) continue;
    const int st = r.id >= 0 && static_cast<std::size_t>(r.id) < state.size() ? state[static_cast<std::size_t>(r.id)] : 0;
    out[k] = st == 1 || (st == 0) || !whole;  // without the whole tree, none is known to be inside another
  }
  return out;
}

// Per row (s.regions order): the share of its time in calls that no row with a count is around
// (a module's, an op's that covers the ops inside it), so that each millisecond is in the
// program's time to win once, at the outermost row that counts it: a module's and the ops'
// inside it are not both. 1 for every row without the call tree.
std::vector<double> outermost_counted_share(const SessionSnapshot& s, const RegionIndex& regions, const Profile& p) {
  std::vector<double> out(s.regions.size(), 1.0);
  if (s.call_tree.empty()) return out;
  std::vector<bool> counted(regions.size(), false);  // by id
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const int id = s.regions[k].id;
    if (id >= 0 && static_cast<std::size_t>(id) < counted.size() && p.layers[k].phase != LayerPhase::setup)
      counted[static_cast<std::size_t>(id)] = placement::headroom_ms(p.layers[k]).has_value();
  }
  std::vector<double> outer(regions.size(), 0.0);
  std::vector<double> all(regions.size(), 0.0);
  const std::vector<CallPath>& tree = s.call_tree;
  for (const CallPath& c : tree) {
    if (c.region < 0 || static_cast<std::size_t>(c.region) >= all.size()) continue;
    bool inside = false;
    for (int k = c.parent; k >= 0 && !inside; k = tree[static_cast<std::size_t>(k)].parent) {
      const int around = tree[static_cast<std::size_t>(k)].region;
      inside = around >= 0 && static_cast<std::size_t>(around) < counted.size() && counted[static_cast<std::size_t>(around)];
    }
    all[static_cast<std::size_t>(c.region)] += c.inclusive_ns;
    if (!inside) outer[static_cast<std::size_t>(c.region)] += c.inclusive_ns;
  }
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const int id = s.regions[k].id;
    if (id < 0 || static_cast<std::size_t>(id) >= all.size() || all[static_cast<std::size_t>(id)] <= 0) continue;
    out[k] = std::clamp(outer[static_cast<std::size_t>(id)] / all[static_cast<std::size_t>(id)], 0.0, 1.0);
  }
  return out;
}

// The program total on the roofline, per step (or over the run): its rate is its counted work
// over its time (each FLOP once: outermost_work); its time to win is its rows' with a count, each
// millisecond once (`outer_share`), less the time in ops without a count inside them
// (`uncounted_share`), so that the time of such ops, of the program's own code and of the gaps
// between rows is never claimed as winnable.
void place_program_total(Profile& p, const RegionProfileOptions& options, double total_ms, const std::vector<double>& outer_share,
                         const std::vector<double>& uncounted_share) {
  if (!options.machine) {
    p.total.roofline_error = "no calibration of this machine: run `hwprof calibrate`";
    return;
  }
  if (total_ms <= 0 || (p.total.flops <= 0 && p.total.bytes <= 0)) return;
  RooflineInput input;  // the FMA peak is the program's compute roof
  input.flops = {static_cast<double>(p.total.flops), ValueSource::analytic, CounterStatus::ok, 1.0, "the rows' counts, each FLOP once"};
  input.bytes = {static_cast<double>(p.total.bytes), ValueSource::analytic, CounterStatus::ok, 1.0, "the rows' counts, each byte once"};
  input.seconds = total_ms * 1e-3;
  input.threads = p.threads;
  auto placed = place_on_roofline(input, *options.machine);
  if (!placed) {
    p.total.roofline_error = placed.error().message;
    return;
  }
  std::vector<RooflinePoint> points;
  double counted_ms = 0.0;
  double roof_ms = 0.0;
  double win_ms = 0.0;
  for (std::size_t i = 0; i < outer_share.size() && i < p.layers.size(); ++i) {
    const LayerProfile& l = p.layers[i];
    const auto h = placement::headroom_ms(l);
    if (outer_share[i] <= 0 || !h || l.phase == LayerPhase::setup) continue;
    const double share = outer_share[i];
    const double counted = placement::row_ms(l) * (1.0 - std::clamp(uncounted_share[i], 0.0, 1.0));
    counted_ms += counted * share;
    roof_ms += std::min(h->roof_ms, counted) * share;
    win_ms += std::max(0.0, counted - h->roof_ms) * share;
    RooflinePoint point = *l.roofline;
    const double calls = placement::calls_per_basis(l) * share;
    point.flops.value *= calls;
    point.bytes.value *= calls;
    point.seconds *= calls;
    points.push_back(std::move(point));
  }
  std::vector<const RooflinePoint*> rows;
  for (const RooflinePoint& point : points) rows.push_back(&point);
  RooflinePoint r = place_total_by_layers(std::move(*placed), rows);
  r.efficiency = std::clamp(1.0 - win_ms / total_ms, 0.0, 1.0);
  r.headroom = r.efficiency > 0 ? 1.0 / r.efficiency : 0.0;
  r.attainable_gflops_per_s = r.efficiency > 0 ? r.gflops_per_s / r.efficiency : 0.0;
  r.why = fmt::format(
      "its rows with a count ({:.0f}% of its time) would take {:.4g} ms at their roofs instead of {:.4g} ms: {:.4g} ms to win; the rest of its "
      "time (ops without a count, the program's own code, the gaps between rows) is not counted as time to win",
      100 * counted_ms / total_ms, roof_ms, counted_ms, win_ms);
  p.total.roofline = std::move(r);
}

struct NestedWork {
  double flops = 0.0;
  double bytes = 0.0;
  double gemm_flops = 0.0;    // of the flops, those of GEMM-backed ops
  double uncounted_ns = 0.0;  // time in ops hwprof has no formula for
};

// A torch run (hwprof::torch): a region without work of its own — a module, a user scope —
// carries the work of the ops nested in it, over all its calls, from the call tree (each call
// path's work, summed as its calls left), so that a module's row has the FLOPs of what it ran
// (docs/torch.md, "Modules"), exact however its ops' calls differ. Only where the tree holds
// every call (no thread dropped paths); a region nested in itself counts its outermost calls
// once. Also the time in ops without a count inside it (its count is then partial).
std::vector<std::optional<NestedWork>> nested_work(const SessionSnapshot& s, const RegionIndex& regions) {
  std::vector<std::optional<NestedWork>> out(s.regions.size());
  if (!whole_call_tree(s)) return out;
  const std::vector<CallPath>& tree = s.call_tree;
  // Each path's own work, then summed into its ancestors, deepest first.
  std::vector<NestedWork> inclusive(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const RegionReport* r = regions.report(tree[i].region);
    if (uncounted_op(r)) {
      // Its own time: the ops inside it are counted (or not) by themselves.
      inclusive[i].uncounted_ns = tree[i].exclusive_ns;
      continue;
    }
    if (!has_own_work(r)) continue;
    inclusive[i] = {tree[i].flops, tree[i].bytes, r->roof.kind == ComputeRoof::Kind::gemm ? tree[i].flops : 0.0, 0.0};
  }
  std::vector<std::size_t> order(tree.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tree[a].depth > tree[b].depth; });
  for (std::size_t i : order) {
    if (tree[i].parent < 0) continue;
    const auto parent_index = static_cast<std::size_t>(tree[i].parent);
    NestedWork& parent = inclusive[parent_index];
    parent.flops += inclusive[i].flops;
    parent.bytes += inclusive[i].bytes;
    parent.gemm_flops += inclusive[i].gemm_flops;
    parent.uncounted_ns += inclusive[i].uncounted_ns;
  }
  std::vector<NestedWork> total(regions.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const RegionReport* r = regions.report(tree[i].region);
    if (r == nullptr || has_own_work(r)) continue;
    bool outermost = true;  // no ancestor is the same region (recursion: its calls once)
    for (int k = tree[i].parent; k >= 0 && outermost; k = tree[static_cast<std::size_t>(k)].parent) {
      outermost = tree[static_cast<std::size_t>(k)].region != tree[i].region;
    }
    if (!outermost) continue;
    NestedWork& t = total[static_cast<std::size_t>(r->id)];
    t.flops += inclusive[i].flops;
    t.bytes += inclusive[i].bytes;
    t.gemm_flops += inclusive[i].gemm_flops;
    t.uncounted_ns += inclusive[i].uncounted_ns;
  }
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const RegionReport& r = s.regions[k];
    if (r.id < 0 || r.calls == 0 || has_own_work(&r)) continue;
    const NestedWork& t = total[static_cast<std::size_t>(r.id)];
    const auto calls = static_cast<double>(r.calls);
    if (t.flops > 0 || t.bytes > 0) out[k] = NestedWork{t.flops / calls, t.bytes / calls, t.gemm_flops / calls, t.uncounted_ns};
  }
  return out;
}

// "22% of its time in ops without a count: aten::addcmul_, aten::sqrt": the uncounted ops under
// a region's calls, most time first, where they hold at least kPartialShare of its time.
constexpr double kPartialShare = 0.01;
std::string partial_note(const SessionSnapshot& s, const RegionIndex& regions, const RegionReport& row, double uncounted_ns) {
  if (row.total_inclusive_ns <= 0 || uncounted_ns < kPartialShare * row.total_inclusive_ns) return {};
  std::map<std::string, double> by_op;
  const std::vector<CallPath>& tree = s.call_tree;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const RegionReport* r = regions.report(tree[i].region);
    if (!uncounted_op(r)) continue;
    bool under = tree[i].region == row.id;  // an op without a formula: its own code too
    for (int k = tree[i].parent; k >= 0 && !under; k = tree[static_cast<std::size_t>(k)].parent)
      under = tree[static_cast<std::size_t>(k)].region == row.id;
    if (under) by_op[r->name] += tree[i].exclusive_ns;
  }
  std::vector<std::pair<double, std::string>> ops;
  for (const auto& [name, ns] : by_op) ops.emplace_back(ns, name);
  std::sort(ops.rbegin(), ops.rend());
  std::string names;
  for (std::size_t i = 0; i < ops.size() && i < 4; ++i) names += (i ? ", " : "") + ops[i].second;
  if (ops.size() > 4) names += fmt::format(" and {} more", ops.size() - 4);
  return fmt::format("{:.0f}% of its time is in ops hwprof has no formula for ({}): its FLOPs and rates are lower bounds",
                     100 * std::min(1.0, uncounted_ns / row.total_inclusive_ns), names);
}

// Per region (s.regions order): whether every call path of it is inside another region's, so
// that its time is in theirs (a region with no path in the tree is not).
std::vector<bool> only_inside_others(const SessionSnapshot& s) {
  std::vector<bool> out(s.regions.size(), false);
  if (!whole_call_tree(s)) return out;  // the tree misses calls: none is known to be inside only
  std::vector<int> paths;               // by id: -1 none, 0 some, 1 a root path
  for (const CallPath& c : s.call_tree) {
    if (c.region < 0) continue;
    if (static_cast<std::size_t>(c.region) >= paths.size()) paths.resize(static_cast<std::size_t>(c.region) + 1, -1);
    int& seen = paths[static_cast<std::size_t>(c.region)];
    seen = std::max(seen, c.parent < 0 ? 1 : 0);
  }
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const int id = s.regions[k].id;
    out[k] = id >= 0 && static_cast<std::size_t>(id) < paths.size() && paths[static_cast<std::size_t>(id)] == 0;
  }
  return out;
}

// Per thread, per call path, the timeline, and what the session could not keep.
void add_threads_paths_and_timeline(Profile& p, const SessionSnapshot& s, const RegionIndex& region_name) {
  for (const SessionThread& t : s.threads) {
    for (const ThreadRegionTotal& r : t.regions) {
      p.region_threads.push_back({t.number, t.name, region_name(r.region), r.calls, r.inclusive_ns / 1e6, r.exclusive_ns / 1e6});
    }
    if (t.paths_dropped > 0) {
      p.hints.push_back(fmt::format(
          "thread {} entered more distinct call paths than the session keeps per thread; {} calls are in "
          "their regions' rows but not in the call tree (SessionOptions::call_paths_per_thread; HWPROF_CALL_PATHS=N for the default session)",
          t.number, t.paths_dropped));
    }
  }
  for (std::size_t i = 0; i < s.call_tree.size(); ++i) {
    const CallPath& c = s.call_tree[i];
    const RegionReport* r = region_name.report(c.region);
    const bool counts = r != nullptr && (r->work_flops || r->work_bytes);
    p.call_paths.push_back({path_name(s.call_tree, i, region_name), c.depth, c.calls, c.inclusive_ns / 1e6, c.exclusive_ns / 1e6,
                            counts ? std::optional<double>(c.flops) : std::nullopt});
  }
  for (const TimelineEvent& e : s.timeline) {
    p.trace.push_back({region_name(e.region), "layer", e.region, 0, e.thread, e.start_ns / 1e3, e.duration_ns / 1e3});
  }
  p.trace_iterations = p.trace.empty() ? 0 : 1;
  if (s.timeline_cut) {
    // A timeline of whole steps: the first and the last.
    const std::string first = s.timeline_first_steps == 0   ? std::string()
                              : s.timeline_first_steps == 1 ? "step 1"
                                                            : fmt::format("steps 1-{}", s.timeline_first_steps);
    const std::string last = s.timeline_last_from == 0             ? std::string()
                             : s.timeline_last_from >= s.steps + 1 ? "what ran after the last step"
                             : s.timeline_last_from == s.steps     ? fmt::format("step {}", s.steps)
                                                                   : fmt::format("steps {}-{}", s.timeline_last_from, s.steps);
    p.trace_note = fmt::format("{}{}{} of {} steps, whole; the {} region calls between them are in the tables only", first,
                               !first.empty() && !last.empty() ? " and " : "", last, s.steps, s.timeline_dropped);
    p.hints.push_back("the timeline (trace.json) holds " + p.trace_note);
  } else if (s.timeline_dropped > 0) {
    p.hints.push_back(
        fmt::format("the timeline (trace.json) holds the first {} region calls; {} later ones are in the tables only "
                    "(SessionOptions::timeline_events)",
                    s.timeline.size(), s.timeline_dropped));
  }
  if (s.dropped_threads > 0) {
    p.warnings.push_back(
        fmt::format("{} region entries came from threads beyond the session's max_threads and were not measured", s.dropped_threads));
  }
  if (s.dropped_depth > 0) {
    p.warnings.push_back(fmt::format("{} region entries were nested deeper than max_depth and were not measured", s.dropped_depth));
  }
}

// The program's setup as one row: what it ran before its first module call (building and
// initialising its model), one call; its ops' rows are in the setup phase.
LayerProfile setup_row(double setup_ns, double root_ns, const Profile& p) {
  LayerProfile l;
  l.index = -1;
  l.name = "setup";
  l.op = "setup";
  l.phase = LayerPhase::setup;
  l.calls = 1;
  l.threads = p.threads;
  l.total_ms = l.basis_ms = setup_ns / 1e6;
  l.time_ms = one_sample(l.total_ms);
  l.time_share = root_ns > 0 ? setup_ns / root_ns : 0.0;
  l.work_note =
      "not counted: the program's setup, what it ran before its first module call (building and initialising its model; its ops' rows are in the "
      "setup phase)";
  l.roofline_error = l.work_note;
  l.why = placement::layer_causes({&l, nullptr, {}, 1, p.threads, p.overhead_ns, false, {}, p.machine.cpu.cores});
  return l;
}

// The threads a torch program's work ran on: the most its rows said (PyTorch's intra-op
// threads), else the option's (or one per core).
int program_threads(const SessionSnapshot& s, const RegionProfileOptions& options) {
  if (options.threads > 0) return options.threads;
  int most = 0;
  for (const RegionReport& r : s.regions) most = std::max(most, r.threads_max);
  return most > 0 ? most : resolve_threads(0);
}

// The steps' own times, from their ends (the first from where it began, where that was said).
Summary step_times(const SessionSnapshot& s) {
  std::vector<double> ms;
  for (std::size_t i = 0; i < s.step_ends_ns.size(); ++i) {
    const double start = i > 0 ? s.step_ends_ns[i - 1] : s.first_step_start_ns;
    if (start >= 0 && s.step_ends_ns[i] > start) ms.push_back((s.step_ends_ns[i] - start) / 1e6);
  }
  return summarize(ms);
}

}  // namespace

namespace {

// What the rows are made from: the snapshot, its regions by id, the options, the time basis and
// the program's time in its outermost rows.
struct RowInputs {
  const SessionSnapshot& s;
  const RegionIndex& regions;
  const RegionProfileOptions& options;
  Basis basis;
  double root_ns = 0.0;
  double setup_ns = 0.0;
  double after_steps_ns = 0.0;  // the outermost rows' time after the last step
  bool setup_ended = false;
};

// One row per region: its own work, or the work of the ops run inside it (torch), placed, guarded
// against impossible rates, and its causes. Returns each row's share of time in ops without a
// count inside it (s.regions order).
std::vector<double> add_rows(Profile& p, const RowInputs& in) {
  const SessionSnapshot& s = in.s;
  const auto nested = nested_work(s, in.regions);
  const std::vector<bool> inside = p.kind == ProfileKind::torch ? only_inside_others(s) : std::vector<bool>(s.regions.size(), false);
  const RateLimit limit = in.options.machine ? rate_limit(*in.options.machine, p.threads) : RateLimit{};
  std::vector<double> uncounted(s.regions.size(), 0.0);
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    RegionReport r = s.regions[k];
    // A program that never called a module had no setup: its ops are rows as any.
    if (r.role == RegionRole::setup && !in.setup_ended) {
      r.role = RegionRole::op_forward;
      if (r.name.ends_with(" (setup)")) r.name.resize(r.name.size() - 8);
    }
    if (nested[k] && p.kind == ProfileKind::torch) {
      RegionReport with_work = r;
      with_work.work_flops = nested[k]->flops;
      with_work.work_bytes = nested[k]->bytes;
      if (nested[k]->gemm_flops >= 0.5 * nested[k]->flops && nested[k]->flops > 0) with_work.roof.kind = ComputeRoof::Kind::gemm;  // mostly GEMMs
      p.layers.push_back(region_row(with_work, in.options, p, in.basis, "the ops run inside it (hwprof::torch)"));
      p.layers.back().work_partial = partial_note(s, in.regions, r, nested[k]->uncounted_ns);
      if (r.total_inclusive_ns > 0) uncounted[k] = nested[k]->uncounted_ns / r.total_inclusive_ns;
    } else {
      p.layers.push_back(region_row(r, in.options, p, in.basis));
    }
    LayerProfile& l = p.layers.back();
    l.nested_op = inside[k] && (r.role == RegionRole::op_forward || r.role == RegionRole::op_backward || r.role == RegionRole::op_recompute);
    guard_rate(l, limit.gflops_per_s > 0 && l.threads > 0 && l.threads != p.threads ? rate_limit(*in.options.machine, l.threads) : limit,
               p.overhead_ns);
    l.why = placement::layer_causes({&l, nullptr, {}, 1, l.threads > 0 ? l.threads : p.threads, p.overhead_ns, false, {}, p.machine.cpu.cores});
    if (r.open > 0) {
      p.warnings.push_back(
          fmt::format("region {} was entered {} time{} and not left when the report was made (still open at exit, or "
                      "its thread ended inside it): {} not in its times",
                      r.name, r.open, r.open == 1 ? "" : "s", r.open == 1 ? "that call is" : "those calls are"));
    }
  }
  if (in.setup_ended && in.setup_ns > 0) p.layers.push_back(setup_row(in.setup_ns, in.root_ns, p));
  return uncounted;
}

// The program total: its work per step (or over the run), each FLOP once, from its possible rows
// (summed in double: a sum past what a count holds, 2^63, is said, not wrapped round), its time,
// and its place against its rows' roofs.
void add_total(Profile& p, const RowInputs& in, const std::vector<double>& uncounted_share) {
  const SessionSnapshot& s = in.s;
  // hwprof::torch counts each FLOP at one op (the rest carry none): every row with work of its
  // own adds up; a program's own regions may nest work in work, so only the outermost do.
  const std::vector<bool> work_rows = p.kind == ProfileKind::torch ? std::vector<bool>(s.regions.size(), true) : outermost_work(s, in.regions);
  double flops = 0.0;
  double bytes = 0.0;
  std::vector<std::string> impossible;
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const LayerProfile& l = p.layers[k];
    if (l.impossible) impossible.push_back(l.phase == LayerPhase::forward ? l.name : l.name + " (" + std::string(layer_phase_name(l.phase)) + ")");
    if (!work_rows[k] || l.impossible || l.phase == LayerPhase::setup) continue;
    const double calls = static_cast<double>(s.regions[k].calls - l.after_steps_calls) / in.basis.per;
    flops += s.regions[k].work_flops.value_or(0.0) * calls;
    bytes += s.regions[k].work_bytes.value_or(0.0) * calls;
  }
  if (!impossible.empty()) {
    std::string names;
    for (std::size_t i = 0; i < impossible.size() && i < 4; ++i) names += (i ? ", " : "") + impossible[i];
    if (impossible.size() > 4) names += fmt::format(" and {} more", impossible.size() - 4);
    p.warnings.push_back(fmt::format("{} row{} with an impossible rate, left out of the time to win and the totals: {} (each says why)",
                                     impossible.size(), impossible.size() == 1 ? "" : "s", names));
  }
  constexpr double kMostCount = 9.2e18;
  if (flops > kMostCount || bytes > kMostCount) {
    p.warnings.push_back("the regions' work over all their calls is past 9.2e18 FLOPs or bytes, more than a count holds: the program total has none");
    flops = 0.0;
    bytes = 0.0;
  }
  p.total.flops = static_cast<std::int64_t>(flops);
  p.total.bytes = static_cast<std::int64_t>(bytes);
  p.total.name = p.model;
  p.total.op = "model";
  p.total.time_ms = one_sample(in.root_ns / 1e6);
  p.total.total_ms = in.root_ns / 1e6;
  // Per step: the time of the steps (the setup, before them, and what ran after the last, apart).
  p.total.basis_ms = in.basis.steps_ns / 1e6 / in.basis.per;
  p.total.after_steps_ms = p.after_steps_ms;
  p.total.time_share = 1.0;
  p.total.threads = p.threads;
  place_program_total(p, in.options, p.total.basis_ms, outermost_counted_share(s, in.regions, p), uncounted_share);
}

}  // namespace

Profile profile_of(const SessionSnapshot& s, const RegionProfileOptions& options) {
  Profile p;
  const RegionIndex region_name(s);
  p.created = common::utc_timestamp();
  p.hwprof_version = kVersion;
  p.model = options.program.empty() ? "regions" : options.program;
  p.kind = s.observer == "torch" ? ProfileKind::torch : ProfileKind::regions;
  p.batch = 0;  // a program's batch is its own: not known here
  fill_launch_rank(p);
  p.threads = program_threads(s, options);
  p.backend = s.backend;
  p.group = s.group;
  p.events = s.events;
  p.hints = s.hints;
  p.overhead_ns = s.overhead.pair_ns;
  fill_machine(p, options.machine, options.machine_source, p.threads);
  p.steps = s.steps;
  p.step_time_ms = step_times(s);
  RowInputs in{s, region_name, options, {s.steps > 0 ? TimeBasis::step : TimeBasis::run, s.steps > 0 ? static_cast<double>(s.steps) : 1.0}};
  p.time_basis = in.basis.basis;
  // The program's time: in its outermost regions, summed over the threads; its setup's (before
  // its first module call, or a step) where the setup ended.
  in.setup_ended = s.first_step_start_ns >= 0;
  for (const CallPath& c : s.call_tree) {
    if (c.parent >= 0) continue;
    in.root_ns += c.inclusive_ns;
    const RegionReport* r = region_name.report(c.region);
    if (r != nullptr && r->role == RegionRole::setup) in.setup_ns += c.inclusive_ns;
  }
  if (in.basis.basis == TimeBasis::step) in.after_steps_ns = std::clamp(s.after_steps_root_ns, 0.0, in.root_ns - in.setup_ns);
  p.after_steps_ms = in.after_steps_ns / 1e6;
  in.basis.run_ns = in.root_ns;
  in.basis.steps_ns = in.basis.basis == TimeBasis::step ? in.root_ns - in.setup_ns - in.after_steps_ns : in.root_ns;
  const std::vector<double> uncounted = add_rows(p, in);
  add_total(p, in, uncounted);
  p.iterations = 1;
  add_threads_paths_and_timeline(p, s, region_name);
  if (options.machine) {
    const std::vector<std::string> doubts = calibration_doubts(*options.machine, p.threads);
    p.warnings.insert(p.warnings.begin(), doubts.begin(), doubts.end());
    add_calibration_warnings(p, options.machine->contention.contended);
  }
  return p;
}

Profile profile_of(const Session& session, const RegionProfileOptions& options) {
  return profile_of(session.snapshot(), options);
}

}  // namespace hwprof
