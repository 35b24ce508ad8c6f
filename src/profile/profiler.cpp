// The profiler joins the stages of docs/design.md, "The pipeline": the executor runs the model, a
// LayerObserver turns every layer boundary into a session region (one per layer and phase),
// and the regions' statistics and counters are joined with the analytic cost and placed on
// the calibrated roofline.
#include "hwprof/engine/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cpu_topology.hpp"
#include "common/memory_budget.hpp"
#include "common/statistics.hpp"
#include "common/timestamp.hpp"
#include "hwprof/statistics.hpp"
#include "hwprof/version.hpp"
#include "ops/ops.hpp"
#include "placement/causes.hpp"
#include "placement/layer_placement.hpp"
#include "placement/process_samples.hpp"
#include "placement/rate_guard.hpp"
#include "placement/sampled_layers.hpp"
#include "profile/analytic_phase.hpp"
#include "profile/counter_truth.hpp"
#include "profile/layer_regions.hpp"
#include "profile/workload.hpp"
#include "sampling/sampler.hpp"

namespace hwprof {

using placement::add_calibration_warnings;
using placement::fill_launch_rank;
using placement::fill_machine;
using placement::fill_measurements;
using placement::resolve_threads;

namespace {

struct ResourceUse {
  std::int64_t peak_rss_bytes = 0;
  std::int64_t faults = -1;
};

ResourceUse resource_use() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return {};
  return {static_cast<std::int64_t>(u.ru_maxrss) * 1024, static_cast<std::int64_t>(u.ru_minflt + u.ru_majflt)};
}

WarmupPolicy warmup_policy(int warmup) {
  return warmup >= 0 ? WarmupPolicy::runs(warmup) : WarmupPolicy::until_stable();
}
IterationPolicy iteration_policy(const ProfileOptions& o) {
  return o.iterations > 0 ? IterationPolicy::count(o.iterations) : IterationPolicy::min_time(o.min_seconds, 5, 100000);
}

// Warm-up runs without regions; returns how many ran.
// Begin/end pairs of the counted session's overhead measurement after the warm-up: few
// enough to finish while the engine's threads still spin (a few milliseconds).
constexpr std::size_t kOverheadPairsAfterWarmup = 50;

Result<int> warm_up(Workload& w, int warmup) {
  WarmupPolicy policy = warmup_policy(warmup);
  while (!policy.done()) {
    const std::uint64_t t0 = steady_ns();
    if (auto e = w.run()) return *e;
    policy.done_after(static_cast<double>(steady_ns() - t0) * 1e-9);
  }
  return policy.completed();
}

std::vector<TraceSpan> timeline(const std::vector<RawSpan>& raw, const Graph& graph) {
  std::vector<TraceSpan> spans;
  if (raw.empty()) return spans;
  std::uint64_t origin = raw.front().start_ns;
  for (const RawSpan& s : raw) origin = std::min(origin, s.start_ns);
  const auto us = [&](std::uint64_t ns) { return static_cast<double>(ns - origin) * 1e-3; };
  // Phase spans: from the first layer's start to the last layer's end of that phase in that
  // iteration, so that layer spans nest inside them.
  std::map<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>> phases;
  for (const RawSpan& s : raw) {
    auto [it, fresh] = phases.try_emplace({s.iteration, static_cast<int>(s.phase)}, s.start_ns, s.end_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, s.start_ns);
      it->second.second = std::max(it->second.second, s.end_ns);
    }
  }
  for (const auto& [key, range] : phases) {
    spans.push_back({phase_name(static_cast<Phase>(key.second)), "phase", -1, key.first, 0, us(range.first),
                     static_cast<double>(range.second - range.first) * 1e-3});
  }
  for (const RawSpan& s : raw) {
    spans.push_back({graph.nodes[static_cast<std::size_t>(s.layer)].name, "layer", s.layer, s.iteration, 0, us(s.start_ns),
                     static_cast<double>(s.end_ns - s.start_ns) * 1e-3});
  }
  std::stable_sort(spans.begin(), spans.end(), [](const TraceSpan& a, const TraceSpan& b) {
    return a.start_us < b.start_us || (a.start_us == b.start_us && a.category == "phase" && b.category != "phase");
  });
  return spans;
}

// The traced passes as timeline() lays them out (its origin, each iteration's first layer start
// to last layer end), for the samples shown on the trace. One lane: the model's thread, 0.
placement::TraceWindow trace_window(const std::vector<RawSpan>& raw) {
  placement::TraceWindow w;
  if (raw.empty()) return w;
  std::map<int, std::pair<std::uint64_t, std::uint64_t>> passes;
  w.origin_ns = raw.front().start_ns;
  for (const RawSpan& s : raw) {
    w.origin_ns = std::min(w.origin_ns, s.start_ns);
    auto [it, fresh] = passes.try_emplace(s.iteration, s.start_ns, s.end_ns);
    it->second = {std::min(it->second.first, s.start_ns), std::max(it->second.second, s.end_ns)};
  }
  for (const auto& [iteration, range] : passes) w.passes.push_back(range);
  std::sort(w.passes.begin(), w.passes.end());
  return w;
}

// ---- profile_model's stages, in the order it runs them ----

// The sessions of one profile: `counted` is the one the options ask for (counters, or time
// only). Times come from passes that read no counter: where `counted` reads counters, a
// second, time-only session times the layers, and the counters are summed over passes of their
// own (one after every other timed pass). A counter read can cost tens of microseconds (an
// interrupt to every other CPU running a counted thread), which a layer's time should not
// carry, and neither should the model's.
struct Sessions {
  std::unique_ptr<Session> counted;
  std::unique_ptr<Session> timer;  // only when `counted` reads counters
  std::shared_ptr<std::vector<std::string>> hints = std::make_shared<std::vector<std::string>>();
  bool counting() const { return timer != nullptr; }
  Session& timing() const { return timer ? *timer : *counted; }
};

// The samples each layer keeps: one per timed pass (all of them with --iterations N; up to the
// policy's most passes under --min-time, which few runs reach). They are committed only as
// passes run (session_open.cpp), and the address space they may take is bounded.
constexpr std::size_t kMostSamplesPerLayer = 100000;
constexpr std::size_t kMostSampleAddressSpace = std::size_t{1} << 25;  // samples: 256 MiB

SessionOptions measurement_options(const ProfileOptions& options, std::size_t layers) {
  SessionOptions so;
  // A region per layer and phase, its probe, and the model: never the aggregate of names past
  // the limit, which would merge layers.
  so.max_regions = 2 * layers * kPhaseCount + 4;
  so.samples_per_region =
      options.iterations > 0 ? std::min<std::size_t>(static_cast<std::size_t>(options.iterations), kMostSamplesPerLayer) : kMostSamplesPerLayer;
  so.sample_budget = std::min(kMostSampleAddressSpace, so.max_regions * so.samples_per_region);
  return so;
}

// A region's record, its first samples, its name and its place in the registry: about a
// kilobyte (bench/region_bench.cpp measures it).
constexpr std::int64_t kBytesPerRegion = 1024;

Result<Sessions> open_sessions(const ProfileOptions& options, std::size_t layers) {
  Sessions s;
  SessionOptions so = measurement_options(options, layers);
  so.backend = options.backend;
  so.events = options.events;
  so.group = options.group;
  so.counters_dirs = options.counters_dirs;
  so.on_hint = [hints = s.hints](const std::string& h) { hints->push_back(h); };
  auto opened = Session::open(so);
  if (!opened) return opened.error();
  s.counted = std::move(*opened);
  if (!s.counted->time_only()) {
    SessionOptions to;
    to.backend = BackendKind::timer;
    to.on_hint = [](const std::string&) {};
    to.max_regions = so.max_regions;
    to.samples_per_region = so.samples_per_region;
    to.sample_budget = so.sample_budget;
    auto timer = Session::open(to);
    if (!timer) return timer.error();
    s.timer = std::move(*timer);
  }
  return s;
}

// One region per layer and phase that runs, in each session (and a probe before each counted
// one: src/profile/counter_truth.hpp), and the model's own region.
struct ModelRegions {
  int timed = -1;
  int counted = -1;
};

Result<ModelRegions> register_regions(const Graph& graph, const std::vector<AnalyticPhaseCost>& analytic, const Sessions& s, LayerRegions& timed,
                                      LayerRegions& counted) {
  Session& timing = s.timing();
  Session& session = *s.counted;
  const bool counting = s.counting();
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    for (Phase phase : kPhases) {
      if (!analytic_phase_runs(analytic[i], phase)) continue;
      const std::string name = std::string(phase_name(phase)) + ":" + graph.nodes[i].name;
      const int id = timing.region(name);
      const int counted_id = counting ? session.region(name) : id;
      const int probe_id = counting ? session.region("[probe] " + name) : 0;
      if (id < 0 || counted_id < 0 || probe_id < 0) return Error{"the model has more layers than the profiler's region table holds"};
      timed.set_id(static_cast<int>(i), phase, id);
      counted.set_id(static_cast<int>(i), phase, counted_id);
      if (counting) counted.set_probe(static_cast<int>(i), phase, probe_id);
    }
  }
  const int model = timing.region("model");
  return ModelRegions{model, counting ? session.region("model") : model};
}

// What the measured passes did, and the process around them.
using placement::RowOfRegion;
using placement::SampledRow;
using sampling::parse_sample_spec;
using sampling::Sampler;
using sampling::SamplerStats;
using sampling::SampleStore;
using session::RegionSpan;
using session::spans_of;

// What sampling took while the passes ran (ProfileOptions::sample), and each measured pass's
// wall time with and without it.
struct PassSampling {
  SampleStore store{0, 0};
  SamplerStats stats;
  std::vector<std::string> warnings;
  std::vector<double> sampled_ms, unsampled_ms;
};

struct Passes {
  int warmup_runs = 0;
  int timed = 0;
  int counted = 0;
  std::shared_ptr<PassSampling> sampling;  // null: not asked for
  AllocationStats baseline;                // before the measured passes
  AllocationStats after;
  ResourceUse use_before;
  ResourceUse use_after;
};

Result<Passes> run_passes(Workload& w, const ProfileOptions& options, const Sessions& s, LayerRegions& timed, LayerRegions& counted,
                          const ModelRegions& model, int trace_iterations, const std::function<void(const std::string&)>& say) {
  Session& timing = s.timing();
  Session& session = *s.counted;
  Passes out;
  say("warming up");
  auto warm = warm_up(w, options.warmup);
  if (!warm) return warm.error();
  out.warmup_runs = *warm;
  // The counter reads' own cost, measured as the passes will see it: right after a pass, with
  // the engine's threads still spinning (a read then interrupts each of their CPUs).
  if (s.counting()) session.measure_overhead(kOverheadPairsAfterWarmup);

  // Measured memory: the allocator's peak over the measured iterations beyond what was live
  // before them (parameters, gradients, optimizer state, the input batch).
  out.baseline = allocation_stats();
  reset_peak_allocation();
  out.use_before = resource_use();
  session.reset();
  timing.reset();
  const IterationPolicy policy = iteration_policy(options);
  // Sampling: opened now (the engine's threads exist), on during every other measured pass, so
  // that the passes without it measure what it costs (docs/sampling.md).
  std::optional<Sampler> sampler;
  if (!options.sample.empty()) {
    auto spec = parse_sample_spec(options.sample);
    if (!spec) return Error{"--sample: " + spec.error().message};
    auto opened = Sampler::open(*spec);
    if (!opened) return Error{"--sample: " + opened.error().message};
    sampler.emplace(std::move(opened).value());
    sampler->start();
    sampler->pause();
    out.sampling = std::make_shared<PassSampling>();
  }
  const std::uint64_t start = steady_ns();
  say("measuring");
  // One pass observed by `regions`, inside the model region `id` of session `on`.
  const auto pass = [&](LayerRegions& regions, Session& on, int id) -> std::optional<Error> {
    w.executor().set_observer(&regions);
    on.begin(id);
    auto failed = w.run();
    on.end(id);
    w.executor().set_observer(nullptr);
    return failed;
  };
  while (policy.more(out.timed, static_cast<double>(steady_ns() - start) * 1e-9)) {
    if (out.timed < trace_iterations) {
      timed.record_iteration(out.timed);
    } else {
      timed.stop_recording();
    }
    const bool sampled = sampler && out.timed % 2 == 1;
    if (sampled) sampler->resume();
    const std::uint64_t pass_start = steady_ns();
    if (auto failed = pass(timed, timing, model.timed)) return *failed;
    const double pass_ms = static_cast<double>(steady_ns() - pass_start) * 1e-6;
    if (sampled) sampler->pause();
    if (sampler) (sampled ? out.sampling->sampled_ms : out.sampling->unsampled_ms).push_back(pass_ms);
    if (s.counting() && out.timed % 2 == 0) {
      if (auto failed = pass(counted, session, model.counted)) return *failed;
      ++out.counted;
    }
    ++out.timed;
  }
  out.after = allocation_stats();
  out.use_after = resource_use();
  if (sampler) {
    sampler->stop();
    out.sampling->stats = sampler->stats();
    out.sampling->warnings = sampler->warnings();
    out.sampling->store = sampler->take_data();
  }
  return out;
}

// The samples joined with the layers: each layer's (and phase's) region a row, the pass's own
// region the time between layers; addresses named by this process's symbolizer.
SamplingProfile sampled_layers(const Graph& graph, const ProfileOptions& options, const Session& timing, const LayerRegions& timed, int model_region,
                               PassSampling& taken) {
  std::unordered_map<int, SampledRow> rows;
  rows[model_region] = SampledRow{"(the pass, between layers)", -1};
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    for (Phase phase : kPhases) {
      const int id = timed.id(static_cast<int>(i), phase);
      if (id < 0) continue;
      const std::string& name = graph.nodes[i].name;
      rows[id] = SampledRow{phase == Phase::forward ? name : name + " (" + phase_name(phase) + ")", static_cast<int>(i)};
    }
  }
  const RowOfRegion row_of = [&](int region) -> std::optional<SampledRow> {
    const auto it = rows.find(region);
    return it == rows.end() ? std::nullopt : std::optional<SampledRow>(it->second);
  };
  const std::vector<RegionSpan> spans = spans_of(timing.snapshot());
  placement::ProcessSamples process{&taken.store, &taken.stats, taken.warnings, options.sample, static_cast<int>(::getpid())};
  const placement::TraceWindow window = trace_window(timed.spans());
  process.window = &window;
  SamplingProfile out = placement::sampling_of_process(process, spans, row_of);
  out.sampled_passes = static_cast<int>(taken.sampled_ms.size());
  out.unsampled_passes = static_cast<int>(taken.unsampled_ms.size());
  // Each kind of pass's median time; NaN where none of a kind ran: then no overhead is known.
  const double sampled = taken.sampled_ms.empty() ? std::nan("") : common::median_of(taken.sampled_ms);
  const double unsampled = taken.unsampled_ms.empty() ? std::nan("") : common::median_of(taken.unsampled_ms);
  out.overhead = sampled / unsampled - 1.0;
  if (!taken.unsampled_ms.empty()) {
    const auto [lo, hi] = std::minmax_element(taken.unsampled_ms.begin(), taken.unsampled_ms.end());
    out.overhead_noise = (*hi - *lo) / 2.0 / unsampled;
  }
  return out;
}

// The profile's description of the run: model, options, backend, events, machine, BLAS.
Profile profile_header(const Graph& graph, const ProfileOptions& options, int threads, const Sessions& s, const Passes& passes, int trace_iterations,
                       const BlasInfo& blas) {
  const Session& session = *s.counted;
  Profile p;
  p.created = common::utc_timestamp();
  p.hwprof_version = kVersion;
  p.model = graph.name;
  p.input_shape = graph.input.shape;
  p.batch = options.batch;
  p.phase = options.train ? RunPhase::train : RunPhase::inference;
  // The CLI's names (--optimizer): its sgd is SGD with momentum.
  if (options.train) p.optimizer = options.optimizer.kind == OptimizerKind::adam ? "adam" : "sgd";
  p.threads = threads;
  fill_launch_rank(p);
  p.backend = session.time_only() ? "timer" : std::string(backend_name(session.backend()));
  p.group = options.group;
  p.events = session.events();
  p.hints = *s.hints;
  for (const std::string& h : session.hints()) {
    if (std::find(p.hints.begin(), p.hints.end(), h) == p.hints.end()) p.hints.push_back(h);
  }
  p.warmup_runs = passes.warmup_runs;
  p.iterations = passes.timed;
  p.overhead_ns = s.timing().overhead().pair_ns;
  p.counter_iterations = passes.counted;
  p.trace_iterations = std::min(passes.timed, trace_iterations);
  fill_machine(p, options.machine, options.machine_source, threads);
  p.machine.blas_core = blas.core;
  p.machine.blas_core_source = blas.core_source;
  if (!blas.advice.empty()) p.hints.push_back(blas.advice);
  return p;
}

// What the counter readings themselves cost (src/profile/counter_truth.hpp): every probe's
// cost per call, and what the readings add to one model pass: two per layer call (its probe's
// closing one and its own), each costing about what a probe counts, and two more (the first
// probe's opening reading, which follows no end(), and the model region's own two halves) at
// the probes' mean. One reading's cost is the pass's resolution.
struct ReadCosts {
  std::vector<std::vector<double>> per_call;  // per layer and phase
  std::vector<double> pass;
  std::vector<double> one_read;
  const std::vector<double>& of(std::size_t layer, Phase phase) const { return per_call[layer * kPhaseCount + static_cast<std::size_t>(phase)]; }
};

ReadCosts read_costs(const Sessions& s, const LayerRegions& counted, std::size_t layers, int counter_passes) {
  ReadCosts c;
  c.per_call.resize(layers * kPhaseCount);
  const std::size_t events = s.counting() ? s.counted->events().size() : 0;
  c.pass.assign(events, 0.0);
  c.one_read.assign(events, 0.0);
  if (!s.counting()) return c;
  std::size_t probes = 0;
  for (std::size_t i = 0; i < layers; ++i) {
    for (Phase phase : kPhases) {
      const int probe = counted.probe(static_cast<int>(i), phase);
      if (probe < 0) continue;
      const RegionReport pr = s.counted->report(probe);
      std::vector<double>& per_call = c.per_call[i * kPhaseCount + static_cast<std::size_t>(phase)];
      per_call = profile::read_cost_per_call(pr);
      const double calls_per_pass = counter_passes > 0 ? static_cast<double>(pr.calls) / counter_passes : 0.0;
      for (std::size_t e = 0; e < per_call.size() && e < events; ++e) {
        c.pass[e] += 2.0 * per_call[e] * calls_per_pass;
        c.one_read[e] += per_call[e];
      }
      ++probes;
    }
  }
  for (std::size_t e = 0; e < events && probes > 0; ++e) {
    c.one_read[e] /= static_cast<double>(probes);
    c.pass[e] += 2.0 * c.one_read[e];
  }
  return c;
}

// A region's times from the timed passes; its counters from the counted ones, less what the
// readings themselves cost there (`read_cost`, per call), then checked against the time.
struct Measured {
  RegionReport report;
  std::vector<double> subtracted;
  std::vector<std::string> impossible;
};

// `machine`: what this machine allows per second (its CPUs, its highest clock).
Measured measure_region(const Sessions& s, const profile::WallBounds& machine, int time_id, int counter_id, const std::vector<double>& read_cost,
                        const std::vector<double>& resolution) {
  Measured m{s.timing().report(time_id), {}, {}};
  if (!s.counting()) return m;
  const Session& session = *s.counted;
  RegionReport c = session.report(counter_id);
  m.subtracted = profile::subtract_read_cost(c, read_cost, resolution);
  // The bound is the longer of the timed passes' wall and the counted passes' own (whose
  // readings frame the counts, and whose layers run slower for the reads around them).
  profile::WallBounds bounds = machine;
  bounds.wall_seconds = std::max(m.report.inclusive_ns.mean, c.inclusive_ns.mean) * 1e-9;
  m.impossible = profile::impossible_counters(c, bounds, resolution);
  m.report.counters = std::move(c.counters);
  m.report.metrics =
      session.group() != nullptr ? profile::metrics_of(m.report, *session.group(), bounds.wall_seconds, m.impossible) : std::vector<RegionMetric>{};
  return m;
}

// The model total: its analytic work summed over the phases that ran, its measured pass.
void fill_total(Profile& p, const Graph& graph, const ProfileOptions& options, int threads, const ModelCost& cost,
                const std::vector<AnalyticPhaseCost>& analytic, const Measured& total) {
  p.total.name = graph.name;
  p.total.op = "model";
  p.total.params = cost.totals.params;
  p.total.macs = cost.totals.macs * options.batch;
  for (const AnalyticPhaseCost& a : analytic) {
    for (Phase phase : kPhases) {
      if (!analytic_phase_runs(a, phase)) continue;
      p.total.flops += a.flops[static_cast<std::size_t>(phase)];
      p.total.bytes += a.bytes[static_cast<std::size_t>(phase)];
    }
  }
  fill_measurements(p.total, total.report, options.machine, threads,
                    {.kind = placement::RowWork::Kind::total, .roof = {}, .op = OpKind::add, .working_set = std::nullopt});
  profile::annotate_counters(p.total.counters, total.subtracted, total.impossible);
  p.total.time_share = 1.0;
}

// In inference, an in-place-capable op whose input nothing else reads overwrites it (the
// executor's rule, src/nn/executor.cpp): its output then adds no bytes of its own.
std::vector<bool> overwrites_its_input(const Graph& graph, const ProfileOptions& options) {
  const std::size_t n = graph.nodes.size();
  std::vector<int> readers(n, 0);
  for (const Node& node : graph.nodes) {
    for (int index : node.inputs) {
      if (index != kModelInput) ++readers[static_cast<std::size_t>(index)];
    }
  }
  std::vector<bool> out(n, false);
  for (std::size_t i = 0; i < n && !options.train; ++i) {
    if (!may_run_in_place(graph.nodes[i].op)) continue;
    const std::vector<int>& inputs = graph.nodes[i].inputs;
    out[i] =
        std::any_of(inputs.begin(), inputs.end(), [&](int index) { return index != kModelInput && readers[static_cast<std::size_t>(index)] == 1; });
  }
  return out;
}

// Everything profile_model's layers need besides the layer itself.
struct LayerContext {
  const Graph& graph;
  const ProfileOptions& options;
  int threads;
  const ModelCost& cost;
  const std::vector<AnalyticPhaseCost>& analytic;
  const BlasInfo& blas;
  std::vector<bool> in_place;
  double pass_bytes;  // what one whole pass touches: weights stay in cache between passes only if it fits
};

// The engine's phase as a row's.
LayerPhase layer_phase_of(Phase phase) noexcept {
  switch (phase) {
    case Phase::forward:
      return LayerPhase::forward;
    case Phase::backward:
      return LayerPhase::backward;
    case Phase::optimizer:
      return LayerPhase::optimizer;
  }
  return LayerPhase::forward;
}

// One layer in one phase, measured, placed on the roofline and explained.
LayerProfile layer_profile(const LayerContext& c, std::size_t i, Phase phase, const Measured& m, const Profile& p) {
  const Node& node = c.graph.nodes[i];
  const auto f = static_cast<std::size_t>(phase);
  LayerProfile layer;
  layer.index = static_cast<int>(i);
  layer.name = node.name;
  layer.op = std::string(op_name(node.op));
  layer.phase = layer_phase_of(phase);
  layer.output_shape = node.output_shape;
  layer.causal = node.op == OpKind::attention && node.attrs.causal;
  layer.params = c.cost.layers[i].params;
  layer.macs = phase == Phase::forward ? c.cost.layers[i].macs * c.options.batch : 0;
  layer.flops = c.analytic[i].flops[f];
  layer.bytes = c.analytic[i].bytes[f];
  WorkingSet working_set{static_cast<double>(c.analytic[i].bytes[f]), static_cast<double>(c.analytic[i].reused_bytes[f]), c.pass_bytes};
  if (phase == Phase::forward && c.in_place[i]) {
    working_set.call_bytes = std::max(0.0, working_set.call_bytes - static_cast<double>(c.cost.layers[i].output_bytes * c.options.batch));
  }
  // The op's compute roof; an exp/tanh/erf op's forward pass evaluates its function once per
  // output element.
  placement::RowWork work{.kind = placement::RowWork::Kind::layer,
                          .roof = ops::compute_roof_of(node, phase == Phase::forward),
                          .op = node.op,
                          .working_set = working_set};
  if (work.roof.kind == ComputeRoof::Kind::transcendental) {
    double elements = static_cast<double>(c.options.batch);
    for (std::int64_t d : node.output_shape) elements *= static_cast<double>(d);
    work.roof.flops_per_evaluation = elements > 0 ? static_cast<double>(layer.flops) / elements : 0.0;
  }
  fill_measurements(layer, m.report, c.options.machine, c.threads, work);
  if (c.options.machine) placement::guard_rate(layer, placement::rate_limit(*c.options.machine, c.threads), p.overhead_ns);
  profile::annotate_counters(layer.counters, m.subtracted, m.impossible);
  placement::CauseInputs why{&layer,
                             &node,
                             node.inputs.empty() ? Shape{} : c.graph.shape_of(node.inputs.front()),
                             c.options.batch,
                             c.threads,
                             p.overhead_ns,
                             c.blas.avx512_unused,
                             c.blas.core};
  layer.why = placement::layer_causes(why);
  layer.time_share = p.total.time_ms.median > 0 ? layer.time_ms.median / p.total.time_ms.median : 0.0;
  return layer;
}

// The model total against the roofs of its layers; memory; the doubts about the run.
void finish_profile(Profile& p, const ProfileOptions& options, int threads, const ModelCost& cost, Workload& w, const Passes& passes) {
  if (p.total.roofline) {
    std::vector<const RooflinePoint*> placed;
    std::vector<std::string> impossible;
    for (const LayerProfile& l : p.layers) {
      if (l.roofline && !l.impossible) placed.push_back(&*l.roofline);
      if (l.impossible) impossible.push_back(l.name);
    }
    p.total.roofline = place_total_by_layers(std::move(*p.total.roofline), placed);
    if (!impossible.empty()) {
      p.warnings.push_back(fmt::format("{} layer{} with an impossible rate, left out of the time to win: {} (each says why)", impossible.size(),
                                       impossible.size() == 1 ? "" : "s", fmt::join(impossible, ", ")));
    }
  }
  p.memory.analytic = cost.memory;
  p.memory.parameter_bytes = w.executor().parameter_bytes();
  p.memory.peak_allocated_bytes = std::max<std::int64_t>(0, passes.after.peak_bytes - passes.baseline.current_bytes);
  p.memory.peak_rss_bytes = passes.use_after.peak_rss_bytes;
  if (passes.use_before.faults >= 0 && passes.use_after.faults >= passes.use_before.faults) {
    p.memory.page_faults = passes.use_after.faults - passes.use_before.faults;
  }
  if (options.machine) p.warnings = calibration_doubts(*options.machine, threads);
  add_calibration_warnings(p, options.machine && options.machine->contention.contended);
  // The passes themselves disagreeing: the machine was busy while they ran.
  if (const double spread = placement::relative_uncertainty(p.total.time_ms); spread > 0.10) {
    p.warnings.push_back(fmt::format(
        "the passes' times varied by ±{:.0f}% of their median ({} to {} ms): the machine was busy while they ran (other processes, or "
        "the hypervisor's neighbours), so times and times to win can be off by as much; layers whose own time varied more than "
        "±{:.0f}% say \"noisy\". Profile again on a quiet machine, or with more --iterations",
        100 * spread, fmt::format("{:.4g}", p.total.time_ms.min), fmt::format("{:.4g}", p.total.time_ms.max), 100 * placement::kNoisyTime));
  }
}

}  // namespace

std::optional<Error> check_profile_memory(const Graph& graph, const ProfileOptions& options) {
  auto memory = estimate_memory(graph, options.batch, options.optimizer.kind);
  if (!memory) return memory.error();
  const std::int64_t model = options.train ? memory->training_total_bytes : memory->inference_total_bytes;
  // Both sessions' regions, and at worst every sample their room allows (committed as passes run).
  const SessionOptions so = measurement_options(options, graph.nodes.size());
  const auto regions = static_cast<std::int64_t>(2 * so.max_regions);
  const auto samples = static_cast<std::int64_t>(2 * so.sample_budget);
  const std::int64_t measuring = regions * kBytesPerRegion + samples * 8;
  const std::string what = "profiling model '" + graph.name + "' at batch " + std::to_string(options.batch) + (options.train ? " (training)" : "");
  const std::string breakdown = "the model " + common::binary_bytes(model) + ", measuring its " + std::to_string(graph.nodes.size()) +
                                " layers up to " + common::binary_bytes(measuring);
  if (auto error = common::check_memory_fits(model + measuring, what, breakdown, common::memory_budget())) {
    return Error{error->message + "; use a smaller --batch, fewer --iterations, or a machine with more memory"};
  }
  return std::nullopt;
}

Result<Profile> profile_model(const Graph& graph, const ProfileOptions& options) {
  const std::function<void(const std::string&)> say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  if (options.batch < 1) return Error{"--batch: must be at least 1"};
  const int threads = resolve_threads(options.threads);
  AnalysisOptions analysis;
  analysis.batch = options.batch;
  analysis.optimizer = options.optimizer.kind;
  auto cost = analyze(graph, analysis);
  if (!cost) return cost.error();

  say("building " + graph.name + " at batch " + std::to_string(options.batch));
  auto workload = Workload::create(graph, options, threads);
  if (!workload) return workload.error();
  auto sessions = open_sessions(options, graph.nodes.size());
  if (!sessions) return sessions.error();
  const Sessions& s = *sessions;

  const std::size_t n = graph.nodes.size();
  const int trace_iterations = std::max(0, options.trace_iterations);
  LayerRegions timed(s.timing(), n, n * kPhaseCount * static_cast<std::size_t>(trace_iterations));
  LayerRegions counted(*s.counted, n, 0);
  const std::vector<AnalyticPhaseCost> analytic = analytic_phase_costs(graph, *cost, options.optimizer, options.train);
  const auto model = register_regions(graph, analytic, s, timed, counted);
  if (!model) return model.error();
  const auto passes = run_passes(*workload, options, s, timed, counted, *model, trace_iterations, say);
  if (!passes) return passes.error();

  const BlasInfo blas = blas_info();
  Profile p = profile_header(graph, options, threads, s, *passes, trace_iterations, blas);
  const ReadCosts reads = read_costs(s, counted, n, passes->counted);
  const profile::WallBounds machine{0.0, profile::allowed_cpus(), profile::max_clock_ghz().value_or(0.0)};
  fill_total(p, graph, options, threads, *cost, analytic, measure_region(s, machine, model->timed, model->counted, reads.pass, reads.one_read));
  const LayerContext context{graph,
                             options,
                             threads,
                             *cost,
                             analytic,
                             blas,
                             overwrites_its_input(graph, options),
                             static_cast<double>(options.train ? cost->memory.training_total_bytes : cost->memory.inference_total_bytes)};
  // Every layer, phase by phase: forward in order, backward in the order it ran (reverse),
  // then the optimizer.
  for (Phase phase : kPhases) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = phase == Phase::backward ? n - 1 - k : k;
      if (!analytic_phase_runs(analytic[i], phase)) continue;
      const Measured m = measure_region(s, machine, timed.id(static_cast<int>(i), phase), counted.id(static_cast<int>(i), phase), reads.of(i, phase),
                                        reads.of(i, phase));
      if (m.report.calls == 0) continue;  // the engine had nothing to run for it in this phase
      p.layers.push_back(layer_profile(context, i, phase, m, p));
    }
  }
  p.trace = timeline(timed.spans(), graph);
  if (passes->sampling) p.sampling = sampled_layers(graph, options, s.timing(), timed, model->timed, *passes->sampling);
  finish_profile(p, options, threads, *cost, *workload, *passes);
  return p;
}

}  // namespace hwprof
