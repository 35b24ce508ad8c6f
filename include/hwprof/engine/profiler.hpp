// The profiler: runs a model on the engine (include/hwprof/engine/executor.hpp) under a counter
// session (include/hwprof/session.hpp) with one region per layer and phase, and joins what
// each layer did cost with what it should cost (include/hwprof/engine/cost.hpp) and with this
// machine's calibrated ceilings (include/hwprof/engine/machine.hpp) into a Profile.
//
// The functions below answer one question each about a whole model (its latency, its memory,
// one layer, a forward pass or a training step); they work on a Graph (a parsed model spec)
// and build the executor themselves (docs/library.md, "A whole model on the engine").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/optimizer.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"
#include "hwprof/session.hpp"

HWPROF_API_BEGIN

namespace hwprof {

class Executor;  // hwprof/engine/executor.hpp: the engine, for analyze_weight_distribution

struct ProfileOptions {
  std::int64_t batch = 1;
  bool train = false;          // forward, loss, backward and optimizer per iteration
  OptimizerOptions optimizer;  // train only
  int threads = 0;             // 0: one per physical core
  std::uint64_t seed = 0;      // random numbers: the synthetic input, initial parameters
  // Warm-up: a fixed count, or (negative) until the last 5 runs' coefficient of variation is
  // below 5 % (at most 50 runs).
  int warmup = -1;
  // Iterations: a fixed count, or (0) as many as fit in min_seconds (at least 5).
  int iterations = 0;
  double min_seconds = 1.0;
  BackendKind backend = BackendKind::automatic;
  std::vector<std::string> events;
  std::string group;                       // a counter group (counters/<family>/<name>.txt)
  std::vector<std::string> counters_dirs;  // where group files live
  // Ceilings: a loaded machine report (nullopt: none — the profile has no roofline and says so).
  std::optional<Machine> machine;
  std::string machine_source;  // the report's file, for the profile
  int trace_iterations = 2;    // iterations kept on the timeline
  // "EVENT[@RATE]": sample every other measured pass and attribute the samples to the layers
  // (docs/sampling.md); empty: no sampling.
  std::string sample;
  std::function<void(const std::string&)> progress;  // short status lines (the CLI: stderr on a terminal)
};

// Profiles every layer of `graph` (forward, or a training step). Errors: a graph the engine
// cannot run, a session that cannot open (unknown group or event).
Result<Profile> profile_model(const Graph& graph, const ProfileOptions& options);

// Whether the model and what measuring it holds (every layer's regions in the two sessions,
// and the samples its passes keep) fit in the memory this process may take; the error gives
// both figures. profile_model's caller checks it before a quick calibration could run.
std::optional<Error> check_profile_memory(const Graph& graph, const ProfileOptions& options);

// ---- a program's own regions (<hwprof/regions.hpp>) as a Profile ---------------------------

struct RegionProfileOptions {
  std::optional<Machine> machine;  // the ceilings; nullopt: no roofline, and the profile says so
  std::string machine_source;      // the calibration file, for the profile
  std::string program;             // the profile's name (the program)
  int threads = 0;                 // the calibration run to place against (0: one per physical core)
};
// Every region a row (op "region"), its time from the session and its work from set_work
// (the program's own count of FLOPs and bytes per call) placed on the roofline; the program
// total is the time spent in the outermost regions. Per-thread totals, the call tree and
// the timeline come along; regions still open are warnings.
Profile profile_of(const SessionSnapshot& snapshot, const RegionProfileOptions& options);
Profile profile_of(const Session& session, const RegionProfileOptions& options);

// ---- one question each: a model's latency and memory, one layer, a pass, a step -------------
// count_parameters, count_flops and the analytic estimate_memory are in cost.hpp.

struct LatencyStats {
  std::int64_t batch = 1;
  int threads = 1;                       // the kernel threads in effect (0 in the options: one per online CPU)
  RunPhase phase = RunPhase::inference;  // a forward pass, or a training step
  Summary ms;                            // per iteration: wall time (steady_clock) of each measured iteration
  double samples_per_s = 0.0;            // batch / median
  int warmup_runs = 0;
  std::int64_t parameter_bytes = 0;  // the model's parameters and buffers
  // Measured by the tensor allocator: the largest peak of a measured iteration above the bytes
  // live before it (parameters, buffers, gradients, optimizer state), plus the input, which the
  // analytic estimate counts as an activation; kernel workspaces included.
  std::int64_t peak_activation_bytes = 0;
  double loss = 0.0;  // train: the loss of the last step; forward: 0
};
// Whole-model latency, no per-layer regions (what `hwprof bench` reports). Warm-up and
// iterations follow ProfileOptions (warmup, iterations, min_seconds); the input is the synthetic
// one profile_model uses for the same ProfileOptions::seed.
Result<LatencyStats> measure_latency(const Graph& graph, const ProfileOptions& options);

// Analytic memory (cost.hpp) beside what a run of the model measured: the tensor allocator's
// peak (parameters excluded), the process's peak RSS and its page faults.
struct MemoryReport {
  MemoryEstimate analytic;
  std::int64_t parameter_bytes = 0;
  std::int64_t peak_allocated_bytes = 0;
  std::int64_t peak_rss_bytes = 0;
  std::optional<std::int64_t> page_faults;
};
Result<MemoryReport> measure_memory_used(const Graph& graph, const ProfileOptions& options);

// One layer alone: a model of that layer fed a synthetic input of its input shape (a layer
// with several inputs or an int32 input is profiled inside the whole model instead).
Result<LayerProfile> profile_layer(const Graph& graph, const std::string& layer_name, const ProfileOptions& options);
// Inference profile, and training profile (forward + backward + optimizer: training cost,
// gradient and optimizer memory).
Result<Profile> profile_forward_pass(const Graph& graph, const ProfileOptions& options);
Result<Profile> profile_training_step(const Graph& graph, const ProfileOptions& options);
// A fast look: 1 warm-up, 3 iterations, timer only.
Result<Profile> quick_profile(const Graph& graph, std::int64_t batch = 1);

// The distribution of each parameter tensor's values (after initialisation, or of a trained
// executor's).
struct WeightStats {
  std::string layer;
  std::string parameter;
  std::int64_t count = 0;
  double mean = 0.0;
  double stddev = 0.0;
  double min = 0.0;
  double max = 0.0;
  double p1 = 0.0, p5 = 0.0, p25 = 0.0, p50 = 0.0, p75 = 0.0, p95 = 0.0, p99 = 0.0;
  double sparsity = 0.0;   // share of exact zeros
  double near_zero = 0.0;  // share with |x| < near_zero_threshold
  double near_zero_threshold = 1e-3;
};
std::vector<WeightStats> analyze_weight_distribution(const Executor& executor, double near_zero_threshold = 1e-3);

}  // namespace hwprof
HWPROF_API_END
