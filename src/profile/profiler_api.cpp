// The seed's Profiler API on engine models: latency, measured memory, one layer alone, the
// forward and training profiles, a quick look, and weight distributions.
#include <algorithm>
#include <chrono>
#include <cmath>

#include <sys/resource.h>

#include "common/statistics.hpp"
#include "hwprof/engine/profiler.hpp"
#include "profile/workload.hpp"

namespace hwprof {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The measured iterations: each one's wall time, and the largest allocation peak of any of them
// above the bytes live before it.
std::optional<Error> run_measured(Workload& workload, const IterationPolicy& policy, LatencyStats& stats) {
  std::vector<double> ms;
  const auto start = std::chrono::steady_clock::now();
  while (policy.more(static_cast<int>(ms.size()), seconds_since(start))) {
    const std::int64_t before = allocation_stats().current_bytes;
    reset_peak_allocation();
    const auto t0 = std::chrono::steady_clock::now();
    if (auto e = workload.run()) return e;
    ms.push_back(seconds_since(t0) * 1e3);
    stats.peak_activation_bytes = std::max(stats.peak_activation_bytes, allocation_stats().peak_bytes - before + workload.input_bytes());
  }
  stats.ms = summarize(std::move(ms));
  return std::nullopt;
}

}  // namespace

Result<LatencyStats> measure_latency(const Graph& graph, const ProfileOptions& options) {
  if (options.batch < 1) return Error{"--batch: must be at least 1"};
  auto built = Workload::create(graph, options, options.threads);
  if (!built) return built.error();
  LatencyStats stats;
  stats.batch = options.batch;
  stats.threads = built->executor().threads();
  stats.phase = options.train ? RunPhase::train : RunPhase::inference;
  stats.parameter_bytes = built->executor().parameter_bytes();
  WarmupPolicy warmup = options.warmup >= 0 ? WarmupPolicy::runs(options.warmup) : WarmupPolicy::until_stable();
  while (!warmup.done()) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto e = built->run()) return *e;
    warmup.done_after(seconds_since(t0));
  }
  stats.warmup_runs = warmup.completed();
  const IterationPolicy policy =
      options.iterations > 0 ? IterationPolicy::count(options.iterations) : IterationPolicy::min_time(options.min_seconds, 5, 100000);
  if (auto e = run_measured(*built, policy, stats)) return *e;
  stats.samples_per_s = stats.ms.median > 0 ? static_cast<double>(options.batch) / (stats.ms.median * 1e-3) : 0.0;
  stats.loss = options.train ? built->last_loss() : 0.0;
  return stats;
}

Result<MemoryReport> measure_memory_used(const Graph& graph, const ProfileOptions& options) {
  AnalysisOptions analysis;
  analysis.batch = options.batch;
  analysis.optimizer = options.optimizer.kind;
  auto cost = analyze(graph, analysis);
  if (!cost) return cost.error();
  auto built = Workload::create(graph, options, options.threads);
  if (!built) return built.error();
  MemoryReport report;
  report.analytic = cost->memory;
  report.parameter_bytes = built->executor().parameter_bytes();
  // One run first: lazily created workspaces and optimizer state belong to the steady state.
  if (auto e = built->run()) return *e;
  rusage before{};
  const bool have_before = ::getrusage(RUSAGE_SELF, &before) == 0;
  const std::int64_t baseline = allocation_stats().current_bytes;
  reset_peak_allocation();
  if (auto e = built->run()) return *e;
  report.peak_allocated_bytes = std::max<std::int64_t>(0, allocation_stats().peak_bytes - baseline);
  rusage after{};
  if (::getrusage(RUSAGE_SELF, &after) == 0) {
    report.peak_rss_bytes = static_cast<std::int64_t>(after.ru_maxrss) * 1024;
    if (have_before) report.page_faults = static_cast<std::int64_t>((after.ru_minflt + after.ru_majflt) - (before.ru_minflt + before.ru_majflt));
  }
  return report;
}

Result<LayerProfile> profile_layer(const Graph& graph, const std::string& layer_name, const ProfileOptions& options) {
  const int index = graph.find(layer_name);
  if (index < 0) return Error{graph.source.file() + ": no layer named '" + layer_name + "'"};
  const Node& node = graph.nodes[static_cast<std::size_t>(index)];
  if (node.inputs.size() != 1) {
    return Error{graph.where(node) + ": takes " + std::to_string(node.inputs.size()) +
                 " inputs; profile it inside the whole model (profile_forward_pass)"};
  }
  // A model of this layer alone, fed a synthetic input of the shape it sees in the model.
  Graph alone;
  alone.name = graph.name + "/" + node.name;
  alone.input = {graph.shape_of(node.inputs[0]), graph.dtype_of(node.inputs[0])};
  alone.source = graph.source;
  Node copy = node;
  copy.inputs = {kModelInput};
  copy.attrs.tied_to = -1;  // alone, a tied weight is its own
  alone.nodes.push_back(std::move(copy));
  auto profile = profile_model(alone, options);
  if (!profile) return profile.error();
  for (LayerProfile& layer : profile->layers) {
    if (layer.phase == LayerPhase::forward) return std::move(layer);
  }
  return Error{graph.where(node) + ": the engine ran nothing for this layer"};
}

Result<Profile> profile_forward_pass(const Graph& graph, const ProfileOptions& options) {
  ProfileOptions o = options;
  o.train = false;
  return profile_model(graph, o);
}

Result<Profile> profile_training_step(const Graph& graph, const ProfileOptions& options) {
  ProfileOptions o = options;
  o.train = true;
  return profile_model(graph, o);
}

Result<Profile> quick_profile(const Graph& graph, std::int64_t batch) {
  ProfileOptions o;
  o.batch = batch;
  o.warmup = 1;
  o.iterations = 3;
  o.backend = BackendKind::timer;
  return profile_model(graph, o);
}

std::vector<WeightStats> analyze_weight_distribution(const Executor& executor, double near_zero_threshold) {
  std::vector<WeightStats> out;
  const Graph& graph = executor.graph();
  for (const Parameter& p : executor.parameters()) {
    if (p.tied) continue;  // its values are those of the layer it is tied to
    WeightStats s;
    s.layer = graph.nodes[static_cast<std::size_t>(p.layer)].name;
    s.parameter = p.name;
    s.count = p.value.numel();
    s.near_zero_threshold = near_zero_threshold;
    if (s.count == 0) {
      out.push_back(s);
      continue;
    }
    const float* v = p.value.f32();
    std::vector<float> sorted(v, v + s.count);
    double sum = 0.0;
    std::int64_t zeros = 0, near = 0;
    for (float x : sorted) {
      sum += x;
      zeros += x == 0.0f;
      near += std::fabs(x) < near_zero_threshold;
    }
    s.mean = sum / static_cast<double>(s.count);
    double squares = 0.0;
    for (float x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = s.count > 1 ? std::sqrt(squares / static_cast<double>(s.count - 1)) : 0.0;
    std::sort(sorted.begin(), sorted.end());
    s.min = sorted.front();
    s.max = sorted.back();
    s.p1 = common::percentile_sorted(sorted.data(), sorted.size(), 1);
    s.p5 = common::percentile_sorted(sorted.data(), sorted.size(), 5);
    s.p25 = common::percentile_sorted(sorted.data(), sorted.size(), 25);
    s.p50 = common::percentile_sorted(sorted.data(), sorted.size(), 50);
    s.p75 = common::percentile_sorted(sorted.data(), sorted.size(), 75);
    s.p95 = common::percentile_sorted(sorted.data(), sorted.size(), 95);
    s.p99 = common::percentile_sorted(sorted.data(), sorted.size(), 99);
    s.sparsity = static_cast<double>(zeros) / static_cast<double>(s.count);
    s.near_zero = static_cast<double>(near) / static_cast<double>(s.count);
    out.push_back(s);
  }
  return out;
}

}  // namespace hwprof
