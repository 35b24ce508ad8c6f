// A hand-made Profile for the report tests: layers of every bound (and one without FLOPs),
// counters that read (ok, multiplexed) and one that could not (unsupported, with its
// reason), a calibration run, and a trace of two training iterations on two threads whose
// spans have awkward fractional microseconds. Numbers are consistent with each other
// (achieved = FLOPs / time, efficiency = achieved / attainable), as the profiler makes them.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "hwprof/engine/profile.hpp"

namespace hwprof::test {

struct SyntheticOptions {
  bool train = true;
  bool calibrated = true;
  std::size_t samples = 20;  // below 6: no confidence interval of the median
  // A layer name that must not inject anything into HTML, SVG, CSV or JSON.
  std::string hostile_name = "<script>alert(\"x\")</script> & 'q',1";
  int extra_layers = 0;  // more small layers crowding the chart (for the label placer)
};

inline Ceiling synthetic_ceiling(double best) {
  Ceiling c;
  c.best = best;
  c.median = best * 0.97;
  c.spread = 0.04;
  c.repetitions = 5;
  return c;
}

inline CalibrationRun synthetic_run(int threads) {
  CalibrationRun run;
  run.threads = threads;
  run.cpus = {0, 1};
  run.seconds = 4.0;
  run.bandwidth["l1"] = {4096, 32768, {{"triad", synthetic_ceiling(200)}}, true, 0, "", 0, ""};
  run.bandwidth["l2"] = {65536, 786432, {{"triad", synthetic_ceiling(90)}}, true, 0, "", 0, ""};
  run.bandwidth["l3"] = {2 << 20, 16 << 20, {{"triad", synthetic_ceiling(50)}}, /*plateau=*/false, 0, "", 0, ""};
  run.bandwidth["dram"] = {256 << 20, 1 << 30, {{"triad", synthetic_ceiling(15)}}, true, 0, "", 0, ""};
  run.compute["fma_sp"] = synthetic_ceiling(120);
  run.compute["fma_dp"] = synthetic_ceiling(60);
  run.compute["gemm_sp"] = synthetic_ceiling(100);
  run.compute["gemm_dp"] = synthetic_ceiling(50);
  return run;
}

inline Summary synthetic_times(double median_ms, std::size_t n) {
  Summary s;
  s.n = n;
  s.median = median_ms;
  s.mean = median_ms * 1.02;
  s.stddev = median_ms * 0.05;
  s.min = median_ms * 0.95;
  s.max = median_ms * 1.3;
  s.p5 = median_ms * 0.96;
  s.p95 = median_ms * 1.2;
  s.p99 = median_ms * 1.28;
  s.mad = median_ms * 0.02;
  s.outliers = 1;
  if (n >= 6) {
    s.median_ci_low = median_ms * 0.98;
    s.median_ci_high = median_ms * 1.03;
    s.median_ci_coverage = 0.959;
  }
  return s;
}

// Placement as src/placement/roofline.cpp does it, on the synthetic run (DRAM 15 GB/s).
inline RooflinePoint synthetic_point(double flops, double bytes, double seconds, bool gemm, Bound bound) {
  RooflinePoint r;
  r.flops = {flops, ValueSource::analytic, CounterStatus::ok, 1.0, "analytic FLOPs"};
  r.bytes = {bytes, ValueSource::analytic, CounterStatus::ok, 1.0, "analytic minimum traffic"};
  r.seconds = seconds;
  r.intensity = bytes > 0 ? flops / bytes : 0;
  r.gflops_per_s = flops / seconds * 1e-9;
  r.gbytes_per_s = bytes / seconds * 1e-9;
  r.compute_roof = gemm ? "gemm_sp" : "fma_sp";
  r.compute_roof_gflops_per_s = gemm ? 100 : 120;
  r.peak_gflops_per_s = 120;
  r.dram_gbytes_per_s = 15;
  r.memory_gbytes_per_s = 15;
  r.memory_level = "dram";
  r.memory_roof = "DRAM triad ceiling, 15 GB/s";
  r.ridge_intensity = r.compute_roof_gflops_per_s / 15;
  r.attainable_gflops_per_s = std::min(r.compute_roof_gflops_per_s, r.intensity * 15);
  for (const auto& [level, gbps] : std::vector<std::pair<std::string, double>>{{"l1", 200}, {"l2", 90}, {"l3", 50}, {"dram", 15}}) {
    r.levels.push_back({level, gbps, std::min(r.compute_roof_gflops_per_s, r.intensity * gbps)});
  }
  r.efficiency = r.attainable_gflops_per_s > 0 ? r.gflops_per_s / r.attainable_gflops_per_s : r.gbytes_per_s / 15;
  r.headroom = r.gflops_per_s > 0 ? r.attainable_gflops_per_s / r.gflops_per_s : 0;
  r.bound = bound;
  r.why = "synthetic: " + std::string(bound_name(bound));
  if (!gemm) r.notes.push_back("held to the FMA peak");
  return r;
}

struct SyntheticLayer {
  int index;
  std::string name;
  std::string op;
  std::string phase;
  double flops;
  double bytes;
  double median_ms;
  bool gemm;
  Bound bound;
  Shape shape;
};

inline std::vector<SyntheticLayer> synthetic_layers(const SyntheticOptions& o) {
  // Efficiencies (achieved / attainable under DRAM 15 GB/s, GEMM 100 and FMA 120 GFLOP/s) stay
  // below 1; the overhead-bound ones are short and under 10% of their roof.
  std::vector<SyntheticLayer> v = {
      {0, "conv1", "conv2d", "forward", 160e6, 5.5e6, 2.0, true, Bound::compute, {16, 32, 32}},
      {1, "bn1", "batchnorm2d", "forward", 2.6e6, 5.2e6, 0.55, false, Bound::memory, {16, 32, 32}},
      {2, "relu", "relu", "forward", 0.65e6, 5.2e6, 0.40, false, Bound::memory, {16, 32, 32}},
      {3, "layer1.0.conv1", "conv2d", "forward", 300e6, 4e6, 3.2, true, Bound::compute, {16, 32, 32}},
      {4, "pool", "maxpool2d", "forward", 1.2e6, 4e6, 0.35, false, Bound::memory, {16, 16, 16}},
      {5, "flatten", "flatten", "forward", 0, 0, 0.0008, false, Bound::overhead, {4096}},
      {6, "attn", "attention", "forward", 90e6, 3e6, 1.6, true, Bound::compute, {16, 256}},
      {7, o.hostile_name, "gelu", "forward", 0.13e6, 0.13e6, 0.02, false, Bound::memory, {16, 256}},
      {8, "fc", "linear", "forward", 0.8e6, 0.05e6, 0.09, true, Bound::overhead, {10}},
  };
  for (int i = 0; i < o.extra_layers; ++i) {
    v.push_back({9 + i,
                 "block." + std::to_string(i) + ".act",
                 "relu",
                 "forward",
                 0.6e6 * (1 + i % 3),
                 5.0e6,
                 0.30 + 0.01 * i,
                 false,
                 Bound::memory,
                 {16, 32, 32}});
  }
  if (o.train) {
    v.push_back({8, "fc", "linear", "backward", 0.8e6, 0.06e6, 0.095, true, Bound::overhead, {10}});
    v.push_back({6, "attn", "attention", "backward", 180e6, 5e6, 3.9, true, Bound::compute, {16, 256}});
    v.push_back({3, "layer1.0.conv1", "conv2d", "backward", 600e6, 8e6, 8.5, true, Bound::compute, {16, 32, 32}});
    v.push_back({1, "bn1", "batchnorm2d", "backward", 5e6, 10e6, 1.3, false, Bound::memory, {16, 32, 32}});
    v.push_back({0, "conv1", "conv2d", "backward", 320e6, 11e6, 4.4, true, Bound::compute, {16, 32, 32}});
    v.push_back({0, "conv1", "conv2d", "optimizer", 0.01e6, 0.02e6, 0.02, false, Bound::overhead, {16, 32, 32}});
    v.push_back({3, "layer1.0.conv1", "conv2d", "optimizer", 0.05e6, 0.1e6, 0.02, false, Bound::memory, {16, 32, 32}});
  }
  return v;
}

inline std::vector<LayerCounter> synthetic_counters(double median_ms) {
  LayerCounter cycles{"cycles", "count", median_ms * 2.6e6, CounterStatus::ok, 1.0, ""};
  LayerCounter instructions{"instructions", "count", median_ms * 3.1e6, CounterStatus::multiplexed, 0.5, ""};
  LayerCounter llc{
      "LLC-load-misses",          "count", std::nullopt,
      CounterStatus::unsupported, 0.0,     "this virtual machine exposes no hardware PMU: run on bare metal or enable the hypervisor's vPMU"};
  cycles.kind = EventKind::core_cycles;
  instructions.kind = EventKind::instructions;
  llc.kind = EventKind::memory;
  return {cycles, instructions, llc};
}

inline Profile synthetic_profile(const SyntheticOptions& o = {}) {
  Profile p;
  p.created = "2026-11-21T21:00:00Z";
  p.hwprof_version = "0.1.0";
  p.machine.host = "testhost";
  p.machine.blas_core = "SkylakeX";
  p.machine.blas_core_source = "OpenBLAS's CPU detection";
  p.machine.cpu.vendor = "GenuineSynthetic";
  p.machine.cpu.brand = "Synthetic CPU & <co>";
  p.machine.cpu.family = 6;
  p.machine.cpu.model = 85;
  p.machine.cpu.flags = {"sse2", "avx2", "fma"};
  p.machine.cpu.logical_cpus = 2;
  p.machine.cpu.cores = 2;
  p.machine.cpu.caches = {{1, "Data", 32 * 1024, 1, "sysfs"}, {2, "Unified", 1 << 20, 1, "sysfs"}, {3, "Unified", 16 << 20, 2, "sysfs"}};
  p.machine.cpu.frequency_ghz = 2.5;
  p.machine.cpu.frequency_source = "/proc/cpuinfo cpu MHz";
  p.machine.cpu.hypervisor = true;
  p.machine.theoretical = {"avx2", 2, 2.5, "/proc/cpuinfo cpu MHz", 32, 16, 160, 80, "2 FMA units"};
  if (o.calibrated) {
    p.machine.calibration_file = "/home/u/.local/share/hwprof/machines/testhost.json";
    p.machine.calibration_created = "2026-11-20T10:00:00Z";
    p.machine.ceilings = synthetic_run(2);
  }
  p.model = "synthetic-net";
  p.input_shape = {3, 32, 32};
  p.batch = 4;
  p.phase = o.train ? RunPhase::train : RunPhase::inference;
  p.optimizer = o.train ? "sgd" : "";
  p.threads = 2;
  p.backend = "perf";
  p.group = "generic";
  p.events = {{"cycles", "count", CounterStatus::ok, ""},
              {"instructions", "count", CounterStatus::ok, ""},
              {"LLC-load-misses", "count", CounterStatus::unsupported,
               "this virtual machine exposes no hardware PMU: run on bare metal or enable the hypervisor's vPMU"}};
  p.hints = {"counters are limited in this VM; see scripts/enable-counters.sh"};
  p.warmup_runs = 5;
  p.iterations = static_cast<int>(o.samples);
  p.overhead_ns = 85;

  const std::vector<SyntheticLayer> specs = synthetic_layers(o);
  std::map<std::string, double> phase_ms;
  for (const SyntheticLayer& s : specs) phase_ms[s.phase] += s.median_ms;
  double total_flops = 0, total_bytes = 0, total_ms = 0;
  for (const SyntheticLayer& s : specs) {
    LayerProfile l;
    l.index = s.index;
    l.name = s.name;
    l.op = s.op;
    l.phase = parse_layer_phase(s.phase).value();
    l.output_shape = s.shape;
    l.causal = s.op == "attention";
    l.params = s.op == "conv2d" ? 4608 : s.op == "linear" ? 40970 : 0;
    l.macs = s.gemm ? static_cast<std::int64_t>(s.flops / 2) : 0;
    l.flops = static_cast<std::int64_t>(s.flops);
    l.bytes = static_cast<std::int64_t>(s.bytes);
    l.time_ms = synthetic_times(s.median_ms, o.samples);
    // Symmetric about the median, so that their median is the one time_ms states.
    for (std::size_t k = 0; k < o.samples; ++k) {
      l.samples_ms.push_back(s.median_ms * (0.95 + 0.1 * static_cast<double>(k) / static_cast<double>(std::max<std::size_t>(1, o.samples - 1))));
    }
    l.time_share = s.median_ms / phase_ms[s.phase];
    l.below_resolution = s.median_ms < 0.001;
    l.counters = synthetic_counters(s.median_ms);
    l.metrics = {{"IPC", "", 1.19, ""}, {"DRAM GB/s", "GB/s", std::nullopt, "needs the uncore CAS events, which are unsupported here"}};
    if (s.flops > 0 && o.calibrated) {
      l.roofline = synthetic_point(s.flops, s.bytes, s.median_ms * 1e-3, s.gemm, s.bound);
    } else if (s.flops > 0) {
      l.roofline_error = "no calibration run with 2 threads (the machine report has none): run `hwprof calibrate`";
    } else {
      l.roofline_error = "no FLOPs and no bytes: a view, nothing to place";
    }
    l.bytes_skipped = {"DRAM bytes: not asked for (no uncore events in group generic)", "LLC misses: unsupported"};
    // One cause per layer, as src/placement/causes.cpp words them (by the layer's side).
    if (!o.calibrated) {
      l.why = {{"no_roofline", "no roofline", "it could not be placed", "run `hwprof calibrate`"}};
    } else if (l.below_resolution) {
      l.why = {{"below_resolution", "below resolution", "its median is under 100x the measurement's own cost", "fuse it"}};
    } else if (s.bound == Bound::overhead) {
      l.why = {{"fixed_cost", "fixed cost per call", "far below both roofs and short", "fuse it with its neighbours"}};
    } else if (s.bound == Bound::compute) {
      l.why = {{"compute_below_roof", "compute below roof", "compute-bound below the gemm_sp roof", "a better kernel for this shape"}};
    } else {
      l.why = {{"memory_below_roof", "memory below roof", "memory-bound below the DRAM bandwidth", "fuse it with its neighbours"}};
    }
    if (s.op == "conv2d" && s.phase == "forward") {
      l.flops_check = FlopsComparison{s.flops * 1.04, s.flops, 1.04, true, {}};
    }
    total_flops += s.flops;
    total_bytes += s.bytes;
    total_ms += s.median_ms;
    p.layers.push_back(std::move(l));
  }
  LayerProfile& t = p.total;
  t.index = -1;
  t.name = "model";
  t.op = "model";
  t.params = 4608 * 2 + 40970;
  t.flops = static_cast<std::int64_t>(total_flops);
  t.bytes = static_cast<std::int64_t>(total_bytes);
  t.time_ms = synthetic_times(total_ms * 1.04, o.samples);
  t.time_share = 1.0;
  t.counters = synthetic_counters(total_ms * 1.04);
  if (o.calibrated) t.roofline = synthetic_point(total_flops, total_bytes, total_ms * 1.04e-3, false, Bound::compute);

  p.memory.analytic.batch = p.batch;
  p.memory.analytic.optimizer = OptimizerKind::sgd;
  p.memory.analytic.param_bytes = 4 * t.params;
  p.memory.analytic.gradient_bytes = 4 * t.params;
  p.memory.analytic.model_state_bytes = 8 * t.params;
  p.memory.analytic.inference_activation_bytes = 524288;
  p.memory.analytic.inference_peak_layer = "conv1";
  p.memory.analytic.training_activation_bytes = 2'400'000;
  p.memory.analytic.inference_total_bytes = 4 * t.params + 524288;
  p.memory.analytic.training_total_bytes = 8 * t.params + 2'400'000;
  p.memory.parameter_bytes = 4 * t.params;
  p.memory.peak_allocated_bytes = 2'900'000;
  p.memory.peak_rss_bytes = 61'000'000;
  p.memory.page_faults = 1234;

  // Two sampled iterations. Thread 0 runs the phases with their layers back to back; thread 1
  // (a kernel worker) has a span inside each forward phase. Starts carry sub-nanosecond
  // fractions, and one layer ends a third of a nanosecond past its phase (clock rounding).
  p.trace_iterations = 2;
  p.counter_iterations = 3;
  double clock = 3.14159;
  for (int it = 0; it < 2; ++it) {
    for (const char* phase : {"forward", "backward", "optimizer"}) {
      if (!o.train && std::string(phase) != "forward") continue;
      const double phase_start = clock;
      clock += 1.0001;
      std::vector<const SyntheticLayer*> in_phase;
      for (const SyntheticLayer& s : specs) {
        if (s.phase == phase) in_phase.push_back(&s);
      }
      std::vector<TraceSpan> layer_spans;
      for (const SyntheticLayer* s : in_phase) {
        const double dur = s->median_ms * 1000.0 + 0.0123;
        layer_spans.push_back({s->name, "layer", s->index, it, 0, clock, dur});
        clock += dur + 0.4567;
      }
      const double phase_end = clock;
      if (!layer_spans.empty()) layer_spans.back().duration_us += 0.4567 + 0.00033;  // past the phase end
      p.trace.push_back({phase, "phase", -1, it, 0, phase_start, phase_end - phase_start});
      for (TraceSpan& s : layer_spans) p.trace.push_back(s);
      if (std::string(phase) == "forward") {
        p.trace.push_back({phase, "phase", -1, it, 1, phase_start + 1.5, 900.25});
        p.trace.push_back({"conv1", "layer", 0, it, 1, phase_start + 2.0000004, 850.1});
      }
      clock += 2.5;
    }
  }
  return p;
}

}  // namespace hwprof::test
