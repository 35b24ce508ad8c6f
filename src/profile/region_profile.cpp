// A program's own regions (<hwprof/regions.hpp>) as a Profile: what the report module and
// C++ callers of profile_of() turn a session into.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/timestamp.hpp"
#include "hwprof/profiler.hpp"
#include "hwprof/version.hpp"
#include "profile/causes.hpp"
#include "profile/layer_placement.hpp"

namespace hwprof {

using detail::add_calibration_warnings;
using detail::fill_launch_rank;
using detail::fill_machine;
using detail::fill_measurements;
using detail::resolve_threads;

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
// its name (a backward region's without the " (backward)" its region is told apart by: the
// phase says it).
void name_by_role(LayerProfile& l, const RegionReport& r) {
  constexpr std::string_view kBackward = " (backward)";
  const std::string_view name = r.name;
  const bool suffixed = name.size() > kBackward.size() && name.substr(name.size() - kBackward.size()) == kBackward;
  const std::string_view bare = suffixed ? name.substr(0, name.size() - kBackward.size()) : name;
  switch (r.role) {
    case RegionRole::scope:
      l.op = "region";
      l.phase = LayerPhase::region;
      return;
    case RegionRole::optimizer:
      l.op = "optimizer";
      l.phase = LayerPhase::optimizer;
      return;
    case RegionRole::module_forward:
    case RegionRole::module_backward:
      l.op = "module";
      break;
    case RegionRole::op_forward:
    case RegionRole::op_backward:
      l.op = std::string(bare.substr(0, bare.find(" [")));  // aten::conv2d [shapes]: aten::conv2d
      break;
  }
  const bool backward = r.role == RegionRole::module_backward || r.role == RegionRole::op_backward;
  l.phase = backward ? LayerPhase::backward : LayerPhase::forward;
  if (backward) l.name = std::string(bare);
}

// One region as a row: its measurement, and with the program's own work (set_work) its place
// on the roofline, like an element-wise op (FMA peak; its bytes held to the bandwidth of the
// cache they fit in). `root_ns`: the program total its share is of.
LayerProfile region_row(const RegionReport& r, const RegionProfileOptions& options, const Profile& p, double root_ns,
                        const char* work_source = "the program's own count (set_work)") {
  LayerProfile l;
  l.index = r.id;
  l.name = r.name;
  name_by_role(l, r);
  if (r.work_flops) l.flops = static_cast<std::int64_t>(std::llround(std::max(0.0, *r.work_flops)));
  if (r.work_bytes) l.bytes = static_cast<std::int64_t>(std::llround(std::max(0.0, *r.work_bytes)));
  if (r.work_flops || r.work_bytes) {
    // A GEMM's work (a convolution, a matrix product, or a module whose FLOPs are mostly
    // theirs) under the measured GEMM ceiling; the rest under the FMA peak.
    fill_measurements(l, r, options.machine, p.threads, r.gemm_backed ? OpKind::linear : OpKind::add,
                      WorkingSet{static_cast<double>(l.bytes), 0.0, 0.0});
    if (l.roofline) {
      l.roofline->flops.detail = work_source;
      if (l.roofline->bytes.source == ValueSource::analytic) l.roofline->bytes.detail = work_source;
    }
  } else {
    fill_measurements(l, r, std::nullopt, p.threads, OpKind::add, std::nullopt);
    l.work_note = !r.work_note.empty() ? r.work_note
                  : r.role == RegionRole::scope
                      ? "no work given: HWPROF_SCOPE_WORK(name, flops, bytes) or hwprof_set_work() places a region on the roofline"
                      : "no op run inside it has a count";
    l.roofline_error = l.work_note;
  }
  l.time_share = root_ns > 0 ? r.total_inclusive_ns / root_ns : 0.0;
  // What hwprof can say of a region without an op: its measurement, its roofline, its threads.
  l.why = detail::layer_causes({&l, nullptr, {}, 1, p.threads, p.overhead_ns, false, {}});
  return l;
}

// The program total on the roofline: its work over every call against its regions' roofs
// (each region's point counted once per call).
void place_program_total(Profile& p, const SessionSnapshot& s, const RegionProfileOptions& options, double root_ns) {
  if (!options.machine) {
    p.total.roofline_error = "no calibration of this machine: run `hwprof calibrate`";
    return;
  }
  if (root_ns <= 0 || (p.total.flops <= 0 && p.total.bytes <= 0)) return;
  RooflineInput input;
  input.op = OpKind::add;
  input.flops = {static_cast<double>(p.total.flops), ValueSource::analytic, CounterStatus::ok, 1.0, "the program's own count (set_work)"};
  input.bytes = {static_cast<double>(p.total.bytes), ValueSource::analytic, CounterStatus::ok, 1.0, "the program's own count (set_work)"};
  input.seconds = root_ns * 1e-9;
  input.threads = p.threads;
  auto placed = place_on_roofline(input, *options.machine);
  if (!placed) {
    p.total.roofline_error = placed.error().message;
    return;
  }
  std::vector<RooflinePoint> all_calls;
  all_calls.reserve(p.layers.size());
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    if (!p.layers[i].roofline) continue;
    const auto calls = static_cast<double>(s.regions[i].calls);
    RooflinePoint point = *p.layers[i].roofline;
    point.flops.value *= calls;
    point.bytes.value *= calls;
    point.seconds *= calls;
    all_calls.push_back(std::move(point));
  }
  std::vector<const RooflinePoint*> layers;
  for (const RooflinePoint& point : all_calls) layers.push_back(&point);
  p.total.roofline = place_total_by_layers(std::move(*placed), layers);
}

// A torch run (hwprof::torch): a region without work of its own — a module, a user scope —
// carries the work of the ops nested in it, over all its calls, from the call tree (each call
// path's calls × its op's work per call), so that a module's row has the FLOPs of what it ran
// (docs/torch.md, "Modules"). Only where the tree holds every call (no thread dropped paths);
// a region nested in itself counts its outermost calls once. Returns the regions with the
// work they got, by id.
// Whether the call tree holds every call: no thread entered more distinct paths than it keeps.
bool whole_call_tree(const SessionSnapshot& s) {
  return std::none_of(s.threads.begin(), s.threads.end(), [](const SessionThread& t) { return t.paths_dropped > 0; });
}

struct NestedWork {
  double flops = 0.0;
  double bytes = 0.0;
  double gemm_flops = 0.0;  // of the flops, those of GEMM-backed ops
};

std::vector<std::optional<NestedWork>> nested_work(const SessionSnapshot& s, const RegionIndex& regions) {
  std::vector<std::optional<NestedWork>> out(s.regions.size());
  if (!whole_call_tree(s)) return out;
  const std::vector<CallPath>& tree = s.call_tree;
  // Each path's own work, then summed into its ancestors, deepest first.
  std::vector<NestedWork> inclusive(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const RegionReport* r = regions.report(tree[i].region);
    if (r == nullptr || !(r->work_flops || r->work_bytes)) continue;
    const auto calls = static_cast<double>(tree[i].calls);
    const double flops = r->work_flops.value_or(0.0) * calls;
    inclusive[i] = {flops, r->work_bytes.value_or(0.0) * calls, r->gemm_backed ? flops : 0.0};
  }
  std::vector<std::size_t> order(tree.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tree[a].depth > tree[b].depth; });
  for (std::size_t i : order) {
    if (tree[i].parent < 0) continue;
    NestedWork& parent = inclusive[static_cast<std::size_t>(tree[i].parent)];
    parent.flops += inclusive[i].flops;
    parent.bytes += inclusive[i].bytes;
    parent.gemm_flops += inclusive[i].gemm_flops;
  }
  std::vector<NestedWork> total(regions.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const RegionReport* r = regions.report(tree[i].region);
    if (r == nullptr || r->work_flops || r->work_bytes) continue;
    bool outermost = true;  // no ancestor is the same region (recursion: its calls once)
    for (int k = tree[i].parent; k >= 0 && outermost; k = tree[static_cast<std::size_t>(k)].parent) {
      outermost = tree[static_cast<std::size_t>(k)].region != tree[i].region;
    }
    if (!outermost) continue;
    NestedWork& t = total[static_cast<std::size_t>(r->id)];
    t.flops += inclusive[i].flops;
    t.bytes += inclusive[i].bytes;
    t.gemm_flops += inclusive[i].gemm_flops;
  }
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const RegionReport& r = s.regions[k];
    if (r.id < 0 || r.calls == 0 || r.work_flops || r.work_bytes) continue;
    const NestedWork& t = total[static_cast<std::size_t>(r.id)];
    const auto calls = static_cast<double>(r.calls);
    if (t.flops > 0 || t.bytes > 0) out[k] = NestedWork{t.flops / calls, t.bytes / calls, t.gemm_flops / calls};
  }
  return out;
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
    p.call_paths.push_back({path_name(s.call_tree, i, region_name), c.depth, c.calls, c.inclusive_ns / 1e6, c.exclusive_ns / 1e6});
  }
  for (const TimelineEvent& e : s.timeline) {
    p.trace.push_back({region_name(e.region), "layer", e.region, 0, e.thread, e.start_ns / 1e3, e.duration_ns / 1e3});
  }
  p.trace_iterations = p.trace.empty() ? 0 : 1;
  if (s.timeline_dropped > 0) {
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

}  // namespace

Profile profile_of(const SessionSnapshot& s, const RegionProfileOptions& options) {
  Profile p;
  const RegionIndex region_name(s);
  p.created = detail::utc_timestamp();
  p.hwprof_version = kVersion;
  p.model = options.program.empty() ? "regions" : options.program;
  p.kind = s.observer == "torch" ? ProfileKind::torch : ProfileKind::regions;
  fill_launch_rank(p);
  p.threads = resolve_threads(options.threads);
  p.backend = s.backend;
  p.group = s.group;
  p.events = s.events;
  p.hints = s.hints;
  p.overhead_ns = s.overhead.pair_ns;
  fill_machine(p, options.machine, options.machine_source, p.threads);
  // The program total: the time in the outermost regions, summed over the threads.
  double root_ns = 0.0;
  for (const CallPath& c : s.call_tree) root_ns += c.parent < 0 ? c.inclusive_ns : 0.0;
  // The program's work over every call, summed in double: a sum past what a count holds (2^63)
  // is said, not wrapped round into a negative figure.
  double flops = 0.0;
  double bytes = 0.0;
  const auto nested = p.kind == ProfileKind::torch ? nested_work(s, region_name) : std::vector<std::optional<NestedWork>>(s.regions.size());
  const std::vector<bool> inside = p.kind == ProfileKind::torch ? only_inside_others(s) : std::vector<bool>(s.regions.size(), false);
  for (std::size_t k = 0; k < s.regions.size(); ++k) {
    const RegionReport& r = s.regions[k];
    if (nested[k]) {
      RegionReport with_work = r;
      with_work.work_flops = nested[k]->flops;
      with_work.work_bytes = nested[k]->bytes;
      with_work.gemm_backed = nested[k]->gemm_flops >= 0.5 * nested[k]->flops && nested[k]->flops > 0;  // mostly GEMMs
      p.layers.push_back(region_row(with_work, options, p, root_ns, "the ops run inside it (hwprof::torch)"));
    } else {
      p.layers.push_back(region_row(r, options, p, root_ns));
    }
    p.layers.back().nested_op = inside[k] && (r.role == RegionRole::op_forward || r.role == RegionRole::op_backward);
    flops += r.work_flops ? *r.work_flops * static_cast<double>(r.calls) : 0.0;
    bytes += r.work_bytes ? *r.work_bytes * static_cast<double>(r.calls) : 0.0;
    if (r.open > 0) {
      p.warnings.push_back(
          fmt::format("region {} was entered {} time{} and not left when the report was made (still open at exit, or "
                      "its thread ended inside it): {} not in its times",
                      r.name, r.open, r.open == 1 ? "" : "s", r.open == 1 ? "that call is" : "those calls are"));
    }
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
  p.total.time_ms = one_sample(root_ns / 1e6);
  p.total.time_share = 1.0;
  p.iterations = 1;
  place_program_total(p, s, options, root_ns);
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
