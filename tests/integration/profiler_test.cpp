// The profiler on the real engine, kernel counters and clocks: a 2-thread linear layer is
// charged the CPU time of both threads, layer times add up to no more than the model's, every
// layer appears exactly once per phase, the profile's JSON carries every documented field, and
// samples taken on the engine's pool workers are attributed to the layers that launched them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/cpu_topology.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/engine/profiler.hpp"

namespace hwprof {
namespace {

Graph model(const std::string& json) {
  auto g = parse_model(json, "test.json");
  EXPECT_TRUE(g) << (g ? "" : g.error().message);
  return g ? *g : Graph{};
}

// A small synthetic machine, so the tests need no calibration run.
Machine synthetic_machine(int threads) {
  Machine m;
  m.cpu = describe_this_cpu();
  CalibrationRun run;
  run.threads = threads;
  for (const char* level : {"l1", "l2", "l3", "dram"}) {
    BandwidthLevel b;
    b.from_bytes = 1024;
    b.to_bytes = 2048;
    Ceiling c;
    c.best = std::string(level) == "dram" ? 20.0 : 100.0;
    c.median = c.best;
    c.repetitions = 3;  // as a real calibration has (a report's reader refuses fewer than 1)
    b.kernels["triad"] = c;
    run.bandwidth[level] = b;
  }
  Ceiling fma;
  fma.best = fma.median = 200.0;
  fma.repetitions = 3;
  run.compute["fma_sp"] = fma;
  Ceiling gemm;
  gemm.best = gemm.median = 150.0;
  gemm.repetitions = 3;
  run.compute["gemm_sp"] = gemm;
  m.runs.push_back(run);
  return m;
}

// A short single-threaded run: one warm-up, `iterations` measured.
ProfileOptions short_run(std::int64_t batch, int iterations, BackendKind backend) {
  ProfileOptions o;
  o.batch = batch;
  o.threads = 1;
  o.warmup = 1;
  o.iterations = iterations;
  o.backend = backend;
  return o;
}

const LayerCounter* counter(const LayerProfile& layer, const std::string& name) {
  for (const LayerCounter& c : layer.counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(Profiler, TwoThreadLinearLayerIsChargedBothThreadsCpuTime) {
  if (common::cpus_one_per_core().size() < 2) GTEST_SKIP() << "needs 2 physical cores; this machine has fewer";
  const Graph g = model(R"({"name": "big_linear", "input": {"shape": [1024]},
                             "layers": [{"name": "fc", "op": "linear", "out_features": 2048}]})");
  ProfileOptions o;
  o.batch = 256;
  o.threads = 2;
  o.warmup = 2;
  o.min_seconds = 0.4;
  o.backend = BackendKind::perf;
  o.events = {"task-clock"};
  o.machine = synthetic_machine(2);
  // The calling thread's share of a CPU while profiling: on a machine busy with other work the
  // layer's threads wait for a CPU, and no CPU-time-over-wall-time figure can reach 1.6.
  const auto thread_cpu_ns = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
  };
  const double cpu0 = thread_cpu_ns();
  const auto wall0 = std::chrono::steady_clock::now();
  auto p = profile_model(g, o);
  const double wall = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0).count());
  const double own_share = (thread_cpu_ns() - cpu0) / wall;
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_EQ(p->layers.size(), 1u);
  const LayerProfile& fc = p->layers[0];
  const LayerCounter* clock = counter(fc, "task-clock");
  ASSERT_NE(clock, nullptr);
  if (!clock->value) GTEST_SKIP() << "task-clock unavailable: " << clock->reason;
  // task-clock is in ns per call; the layer's mean time in ms per call.
  const double ratio = *clock->value / (fc.time_ms.mean * 1e6);
  if (own_share < 0.9 && ratio < 1.6) {
    GTEST_SKIP() << "the machine is busy: the profiling thread ran " << own_share * 100
                 << "% of the wall time, so the layer's CPU time over wall time (" << ratio << ") says nothing";
  }
  EXPECT_GE(ratio, 1.6) << "task-clock " << *clock->value << " ns per call over " << fc.time_ms.mean << " ms wall";
  EXPECT_TRUE(fc.roofline.has_value()) << fc.roofline_error;
}

TEST(Profiler, EveryLayerOncePerPhaseAndLayerTimesFitInTheModelTime) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(g) << g.error().message;
  for (bool train : {false, true}) {
    ProfileOptions o = short_run(4, 5, BackendKind::timer);
    o.train = train;
    o.machine = synthetic_machine(1);
    auto p = profile_model(*g, o);
    ASSERT_TRUE(p) << p.error().message;
    std::map<std::string, std::multiset<std::string>> seen;
    for (const LayerProfile& l : p->layers) seen[std::string(layer_phase_name(l.phase))].insert(l.name);
    ASSERT_EQ(seen["forward"].size(), g->nodes.size());
    for (const Node& n : g->nodes) EXPECT_EQ(seen["forward"].count(n.name), 1u) << n.name;
    for (const auto& [phase, names] : seen) {
      for (const std::string& name : names) EXPECT_EQ(names.count(name), 1u) << phase << " " << name;
    }
    if (train) {
      EXPECT_FALSE(seen["backward"].empty());
      EXPECT_FALSE(seen["optimizer"].empty());
      for (const std::string& name : seen["optimizer"]) {
        const Node& n = g->nodes[static_cast<std::size_t>(g->find(name))];
        EXPECT_TRUE(n.op == OpKind::conv2d || n.op == OpKind::linear) << name << " has no parameters";
      }
    } else {
      EXPECT_EQ(seen.size(), 1u);
    }
    // Per iteration the layers' regions nest inside the model's, so their times sum to no more
    // than its; means keep that (the mean of a sum is the sum of the means), while a sum of
    // medians, each from its own iteration, need not on a noisy machine.
    double sum = 0.0;
    for (const LayerProfile& l : p->layers) sum += l.time_ms.mean;
    EXPECT_LE(sum, p->total.time_ms.mean * 1.0001 + 1e-6) << "layers' mean times exceed the model's";
    EXPECT_EQ(p->iterations, 5);
    EXPECT_EQ(p->counter_iterations, 0) << "the timer backend's passes are the timed ones";
    EXPECT_EQ(p->trace_iterations, 2);
    EXPECT_FALSE(p->trace.empty());
    EXPECT_GT(p->memory.peak_allocated_bytes, 0);
  }
}

// The model's counts hold its layers' (they nest inside it): a 2-thread LeNet-5 whose layers
// share readings in the counted passes. The model's task-clock once came out 0 here: it was
// charged two reads per layer where the layers made one, with reads costing tens of
// microseconds while the engine's second thread spins.
//
// The model's count is less every read its layers made, each read's cost estimated from probes;
// beside a busy neighbour the probes can overestimate a little over LeNet's short layers, and
// once in 60 runs under `stress-ng --cpu 2` the model came out at 0.78 of its layers, and in CI
// beside the PyTorch tests its task-clock once came out a little above wall × CPUs (an upper
// bound, "~"). That bug fails every run; so a run that fails is profiled once more, and only a
// second failure counts.
TEST(Profiler, TheModelsCountsHoldItsLayersCounts) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(g) << g.error().message;
  for (bool train : {false, true}) {
    SCOPED_TRACE(train ? "train" : "forward");
    std::string failure;
    for (int attempt = 0; attempt < 2; ++attempt) {
      ProfileOptions o = short_run(4, 8, BackendKind::perf);
      o.threads = 2;
      o.train = train;
      o.events = {"task-clock"};
      auto p = profile_model(*g, o);
      ASSERT_TRUE(p) << p.error().message;
      const LayerCounter* total = counter(p->total, "task-clock");
      ASSERT_NE(total, nullptr);
      if (!total->value) GTEST_SKIP() << "task-clock unavailable: " << total->reason;
      double layers = 0.0;
      for (const LayerProfile& l : p->layers) {
        const LayerCounter* c = counter(l, "task-clock");
        ASSERT_NE(c, nullptr) << l.name;
        ASSERT_TRUE(c->value.has_value()) << l.name;
        EXPECT_GE(*c->value, 0.0) << l.name;
        layers += *c->value;
      }
      // Each layer's counts are per call and the model calls each once a pass; allow for the
      // noise of the subtracted read costs. The model's count is not an upper bound either:
      // beside a busy neighbour the counted passes can run longer than the timed ones, and a
      // task-clock just above wall × CPUs is then marked "~" (counter_truth.cpp) — once.
      if (*total->value >= 0.8 * layers && !total->below_resolution) {
        failure.clear();
        break;
      }
      failure += "attempt " + std::to_string(attempt + 1) + ": model " + std::to_string(*total->value) + " ns against its layers' " +
                 std::to_string(layers) + " ns" + (total->below_resolution ? ", marked below resolution (an upper bound)" : "") + "; ";
    }
    EXPECT_TRUE(failure.empty()) << failure;
    // (Not asserted: that its CPU time covers its wall time. It does on a quiet machine, but the
    // counted passes' CPU against the timed passes' wall is a comparison of times, which a busy
    // neighbour breaks.)
  }
}

TEST(Profiler, JsonCarriesEveryDocumentedField) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(g) << g.error().message;
  ProfileOptions o = short_run(2, 3, BackendKind::perf);
  o.events = {"task-clock", "cycles"};
  o.machine = synthetic_machine(1);
  auto p = profile_model(*g, o);
  ASSERT_TRUE(p) << p.error().message;
  const auto j = nlohmann::json::parse(profile_to_json(*p));
  for (const char* key : {"schema", "machine", "model", "batch", "phase", "total", "layers"}) EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["layers"].size(), g->nodes.size());
  // Counters come from passes of their own (one after every other timed pass), so that no
  // counter read lands in a time; the time-only session's cost is the one subtracted.
  if (p->backend == "perf") {
    EXPECT_EQ(p->counter_iterations, 2);
    EXPECT_EQ(j["counter_iterations"], 2);
    // (No bound on overhead_ns: tests never assert a time. That the timed passes read no counter
    // is what counter_iterations > 0 records.)
  }
  // The kernels the dense layers ran on, and why those (an environment variable may pin them).
  EXPECT_EQ(j["machine"]["blas"]["core"], blas_info().core);
  EXPECT_FALSE(j["machine"]["blas"]["core_source"].get<std::string>().empty());
  for (const auto& layer : j["layers"]) {
    for (const char* key : {"name", "op", "params", "macs", "flops", "bytes", "time_ms", "gflops_per_s", "gbytes_per_s", "intensity",
                            "attainable_gflops_per_s", "efficiency", "bound", "counters"}) {
      EXPECT_TRUE(layer.contains(key)) << layer.value("name", "?") << ": " << key;
    }
    for (const char* key : {"median", "mean", "min", "max", "p95", "p99", "n"}) EXPECT_TRUE(layer["time_ms"].contains(key)) << key;
    EXPECT_TRUE(layer["bytes"].contains("value"));
    EXPECT_TRUE(layer["bytes"].contains("source"));
    // A counter this VM cannot count is null with its status and reason, never 0.
    if (layer["counters"].contains("cycles")) {
      const auto& cycles = layer["counters"]["cycles"];
      if (cycles["status"] != "ok" && cycles["status"] != "multiplexed") {
        EXPECT_TRUE(cycles["value"].is_null()) << cycles.dump();
        EXPECT_FALSE(cycles.value("reason", "").empty()) << cycles.dump();
      }
    }
  }
  auto back = profile_from_json(profile_to_json(*p), "profile.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(profile_to_json(*back), profile_to_json(*p));
}

// A calibration that this run beats (measured under load, or with other BLAS kernels) is
// called out, with the fix, rather than shown as efficiencies above 100% without comment.
TEST(Profiler, SaysWhenTheCalibrationLooksStale) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(g) << g.error().message;
  ProfileOptions o = short_run(8, 3, BackendKind::timer);
  Machine slow = synthetic_machine(1);
  for (auto& [level, b] : slow.runs[0].bandwidth) b.kernels["triad"].best = b.kernels["triad"].median = 1e-4;
  slow.runs[0].compute["fma_sp"].best = slow.runs[0].compute["fma_sp"].median = 1e-4;
  slow.runs[0].compute["gemm_sp"].best = slow.runs[0].compute["gemm_sp"].median = 1e-4;
  slow.runs[0].compute["gemm_sp"].variant = "openblas NotTheseKernels";
  o.machine = slow;
  o.machine_source = "stale.json";
  auto p = profile_model(*g, o);
  ASSERT_TRUE(p) << p.error().message;
  // Layers above their roofs are warnings (shown first) with the likely cause; the kernels
  // the GEMM ceiling came from are a hint.
  const auto has = [&](const std::string& text) {
    const auto in = [&](const std::vector<std::string>& lines) {
      return std::any_of(lines.begin(), lines.end(), [&](const std::string& h) { return h.find(text) != std::string::npos; });
    };
    return in(p->warnings) || in(p->hints);
  };
  const auto said = [&] { return ::testing::PrintToString(p->warnings) + ::testing::PrintToString(p->hints); };
  // GEMM ceilings from other kernels: that is named as the cause.
  EXPECT_TRUE(has("NotTheseKernels kernels")) << said();
  EXPECT_TRUE(has("stale.json")) << said();
  EXPECT_TRUE(has("above 110% of the compute roof")) << said();
  EXPECT_TRUE(has("measured on other OpenBLAS kernels than these layers ran on")) << said();
  EXPECT_FALSE(has("too low for this machine now")) << said();

  // The same kernels: the ceilings themselves look too low.
  slow.runs[0].compute["gemm_sp"].variant = "openblas " + blas_info().core;
  o.machine = slow;
  p = profile_model(*g, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(has("above 110% of the compute roof")) << said();
  EXPECT_TRUE(has("too low for this machine now")) << said();
  EXPECT_TRUE(has("stale.json")) << said();
  EXPECT_FALSE(has("kernels: run `hwprof calibrate`")) << said();

  // Ceilings this run stays under raise neither hint.
  Machine fast = synthetic_machine(1);
  for (auto& [level, b] : fast.runs[0].bandwidth) b.kernels["triad"].best = b.kernels["triad"].median = 1e6;
  fast.runs[0].compute["fma_sp"].best = fast.runs[0].compute["fma_sp"].median = 1e6;
  fast.runs[0].compute["gemm_sp"].best = fast.runs[0].compute["gemm_sp"].median = 1e6;
  fast.runs[0].compute["gemm_sp"].variant = "openblas " + blas_info().core;
  o.machine = fast;
  p = profile_model(*g, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_FALSE(has("above 110%")) << said();
  EXPECT_FALSE(has("kernels: run `hwprof calibrate`")) << said();

  // A tanh layer above its function's calibrated rate: hwprof's own kernel set that roof, and
  // another approximation may beat it; that is said apart from the stale-ceiling cause.
  fast.runs[0].compute["tanh_sp"].best = fast.runs[0].compute["tanh_sp"].median = 1e-6;  // evaluations per ns
  o.machine = fast;
  p = profile_model(*g, o);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_TRUE(has("of the calibrated rate of the function they evaluate")) << said();
  EXPECT_TRUE(has("approximates the function more cheaply than hwprof's calibrated one")) << said();
  EXPECT_FALSE(has("above 110% of the compute roof")) << said();
}

// The engine on 2 threads, sampled (docs/sampling.md, "Attribution"): a worker enters no layer,
// so its samples reach a layer only through the launching thread's open region.
TEST(Profiler, SamplesOfThePoolWorkersAreAttributedToTheirLayers) {
  if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 online CPUs for a worker beside the main thread; this machine has 1";
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/lenet5.json");
  ASSERT_TRUE(g) << g.error().message;
  ProfileOptions o = short_run(64, 40, BackendKind::timer);
  o.threads = 2;
  o.machine = synthetic_machine(2);
  o.sample = "cpu-clock@2000";
  auto p = profile_model(*g, o);
  if (!p && p.error().message.find("--sample:") != std::string::npos) GTEST_SKIP() << "sampling cannot open here: " << p.error().message;
  ASSERT_TRUE(p) << p.error().message;
  ASSERT_TRUE(p->sampling);
  const SamplingProfile& s = *p->sampling;
  std::uint64_t in_layers = 0;
  std::uint64_t by_workers = 0;
  for (const SampledLayer& row : s.layers) {
    if (row.layer < 0) continue;
    in_layers += row.samples;
    by_workers += row.by_pool_workers;
    EXPECT_LE(row.by_pool_workers, row.samples) << row.name;
  }
  EXPECT_GT(in_layers, 0u) << s.samples << " samples, none in a layer";
  EXPECT_GT(by_workers, 0u) << "of " << in_layers << " samples in layers, none taken on a pool worker";
  EXPECT_EQ(s.lost, 0u);
}

TEST(Profiler, LatencyOfATrainingStepKeepsItsLoss) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/mlp_mnist.json");
  ASSERT_TRUE(g) << g.error().message;
  ProfileOptions o = short_run(4, 2, BackendKind::timer);
  o.train = true;
  auto latency = measure_latency(*g, o);
  ASSERT_TRUE(latency) << latency.error().message;
  EXPECT_EQ(latency->phase, RunPhase::train);
  EXPECT_EQ(latency->ms.n, 2u);
  EXPECT_TRUE(std::isfinite(latency->loss));
  EXPECT_GT(latency->loss, 0.0);
  EXPECT_GT(latency->peak_activation_bytes, 0);
}

TEST(Profiler, SeedApiOnAnEngineModel) {
  auto g = load_model(std::string(HWPROF_MODELS_DIR) + "/mlp_mnist.json");
  ASSERT_TRUE(g) << g.error().message;
  ProfileOptions o = short_run(8, 3, BackendKind::timer);
  auto latency = measure_latency(*g, o);
  ASSERT_TRUE(latency) << latency.error().message;
  EXPECT_EQ(latency->ms.n, 3u);
  EXPECT_GT(latency->samples_per_s, 0.0);
  EXPECT_EQ(latency->threads, 1);
  EXPECT_EQ(latency->warmup_runs, 1);
  EXPECT_EQ(latency->parameter_bytes, 669706 * 4);
  EXPECT_GE(latency->peak_activation_bytes, 8 * 784 * 4) << "at least the input is counted";
  EXPECT_EQ(latency->loss, 0.0) << "a forward pass has no loss";
  auto memory = measure_memory_used(*g, o);
  ASSERT_TRUE(memory) << memory.error().message;
  EXPECT_GT(memory->peak_allocated_bytes, 0);
  EXPECT_EQ(memory->parameter_bytes, 669706 * 4);
  auto layer = profile_layer(*g, g->nodes[0].name, o);
  ASSERT_TRUE(layer) << layer.error().message;
  EXPECT_EQ(layer->name, g->nodes[0].name);
  EXPECT_FALSE(layer->roofline.has_value());  // no calibration given: said, not invented
  EXPECT_FALSE(layer->roofline_error.empty());
  EXPECT_FALSE(profile_layer(*g, "no_such_layer", o));
  auto quick = quick_profile(*g, 2);
  ASSERT_TRUE(quick) << quick.error().message;
  EXPECT_EQ(quick->iterations, 3);
  auto backward = profile_training_step(*g, o);
  ASSERT_TRUE(backward) << backward.error().message;
  EXPECT_EQ(backward->phase, RunPhase::train);
  ExecutorOptions e;
  auto executor = Executor::build(*g, e);
  ASSERT_TRUE(executor) << executor.error().message;
  const auto weights = analyze_weight_distribution(*executor);
  ASSERT_FALSE(weights.empty());
  for (const WeightStats& w : weights) {
    EXPECT_GT(w.count, 0);
    EXPECT_LE(w.min, w.p50);
    EXPECT_LE(w.p50, w.max);
    EXPECT_GE(w.near_zero, w.sparsity);
  }
}

}  // namespace
}  // namespace hwprof
