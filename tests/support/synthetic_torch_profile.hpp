// A hand-made profile of a PyTorch program under hwprof::torch (docs/torch.md), for the report
// tests: 20 training steps, modules forward and backward that nest (their shares overlap), an
// op with its calls by input shapes, an optimizer step whose count is partial (its rates are
// lower bounds), a backward op row whose rate is impossible, an op that ran only inside a
// module, the setup before the first step, and many small rows to be left out of a top-15
// table. The machine and its calibration are synthetic_profile's.
#pragma once

#include <string>
#include <vector>

#include "synthetic_profile.hpp"

namespace hwprof::test {

struct SyntheticTorchRow {
  std::string name;
  std::string op;
  LayerPhase phase;
  std::uint64_t calls;
  double total_ms;  // over all its calls
  double flops;     // per call; 0: not counted
  double bytes;     // per call
  bool gemm;
  Bound bound;
};

inline constexpr std::uint64_t kSyntheticSteps = 20;
inline constexpr double kSyntheticRootMs = 900.0;  // the outermost rows over the run, the setup's 100 ms included
inline constexpr double kSyntheticSetupMs = 100.0;

inline std::vector<SyntheticTorchRow> synthetic_torch_rows() {
  std::vector<SyntheticTorchRow> rows = {
      {"TinyLM", "module", LayerPhase::forward, 20, 300.0, 2.0e8, 4.0e7, true, Bound::compute},
      {"TinyLM", "module", LayerPhase::backward, 20, 400.0, 4.0e8, 8.0e7, true, Bound::compute},
      {"TinyLM.encoder.0.linear1", "module", LayerPhase::forward, 20, 100.0, 8.0e7, 1.0e7, true, Bound::compute},
      {"aten::linear [16x64x256, 1000x256, 1000]", "aten::linear", LayerPhase::backward, 20, 2.0, 6.4e9, 2.0e6, true, Bound::compute},
      {"aten::embedding", "aten::embedding", LayerPhase::forward, 40, 8.0, 0.0, 1.2e6, false, Bound::memory},
      {"Optimizer.step#AdamW.step", "optimizer", LayerPhase::optimizer, 20, 60.0, 9.4e6, 3.0e7, false, Bound::memory},
      {"aten::addmm [1024x256, 256x1000, 1000]", "aten::addmm", LayerPhase::forward, 20, 40.0, 5.2e8, 2.1e6, true, Bound::compute},
      {"setup", "setup", LayerPhase::setup, 1, kSyntheticSetupMs, 0.0, 0.0, false, Bound::overhead},
  };
  // Small module rows past the top 15: each under half a percent of the program's time.
  for (int i = 0; i < 12; ++i) {
    rows.push_back(
        {"TinyLM.blocks." + std::to_string(i) + ".act", "module", LayerPhase::forward, 20, 1.0 + 0.25 * i, 2.0e5, 4.0e5, false, Bound::memory});
  }
  return rows;
}

inline Profile synthetic_torch_profile() {
  Profile p = synthetic_profile({.train = false});
  p.model = "lm.py";
  p.kind = ProfileKind::torch;
  p.phase = RunPhase::inference;
  p.optimizer.clear();
  p.batch = 0;
  p.input_shape.clear();
  p.threads = 1;
  p.group.clear();
  p.events = {{"task-clock", "ns", CounterStatus::ok, ""}};
  p.hints.clear();
  p.iterations = 1;
  p.warmup_runs = 0;
  p.counter_iterations = 0;
  p.time_basis = TimeBasis::step;
  p.steps = kSyntheticSteps;
  p.step_time_ms = synthetic_times(41.93, kSyntheticSteps);
  p.trace.clear();
  p.trace_iterations = 0;
  p.layers.clear();
  p.memory = {};
  const double steps = static_cast<double>(kSyntheticSteps);
  int index = 0;
  for (const SyntheticTorchRow& r : synthetic_torch_rows()) {
    LayerProfile l;
    l.index = index++;
    l.name = r.name;
    l.op = r.op;
    l.phase = r.phase;
    l.calls = r.calls;
    l.total_ms = r.total_ms;
    l.basis_ms = r.phase == LayerPhase::setup ? r.total_ms : r.total_ms / steps;
    l.threads = 1;
    l.threads_min = 1;
    const double mean_ms = r.total_ms / static_cast<double>(r.calls);
    l.time_ms = synthetic_times(mean_ms, std::min<std::size_t>(r.calls, 40));
    l.time_share = r.total_ms / kSyntheticRootMs;
    l.flops = static_cast<std::int64_t>(r.flops);
    l.bytes = static_cast<std::int64_t>(r.bytes);
    l.counters = {{"task-clock", "ns", mean_ms * 1e6, CounterStatus::ok, 1.0, ""}};
    if (r.flops > 0) {
      l.roofline = synthetic_point(r.flops, r.bytes, mean_ms * 1e-3, r.gemm, r.bound);
      l.why = {{"compute_below_roof", "compute below roof", "compute-bound below the gemm_sp roof", "a better kernel for this shape"}};
    } else {
      l.work_note = r.phase == LayerPhase::setup ? "no op run inside it has a count" : "not counted: hwprof has no formula for this op";
      l.roofline_error = l.work_note;
      l.why = {{"not_counted", "not counted", "it has no FLOPs or bytes to place it by: " + l.work_note, "nothing to place"}};
    }
    p.layers.push_back(std::move(l));
  }
  const auto row = [&](const std::string& name, LayerPhase phase) -> LayerProfile& {
    for (LayerProfile& l : p.layers) {
      if (l.name == name && l.phase == phase) return l;
    }
    return p.layers.front();
  };
  // The linear's backward: 80 autograd functions' FLOPs on 20 calls, far above any roof.
  LayerProfile& linear = row("aten::linear [16x64x256, 1000x256, 1000]", LayerPhase::backward);
  linear.impossible = true;
  linear.impossible_reason =
      "6.4e+09 FLOPs per call in 0.103 ms per call (the slow end of its interval) would need 6.214e+04 GFLOP/s, above the most this "
      "machine can do: the theoretical single-precision peak of 1 thread (80 GFLOP/s), x1.25 for a clock above the reported one";
  linear.why = {{"impossible_rate", "impossible rate", linear.impossible_reason, "read its time, not its rate; report it"}};
  linear.shapes = {{"16x64x256, 1000x256, 1000", 20, 2.0, 6.4e9 * 20, false}};
  // The optimizer's count leaves out the element-wise ops without a formula.
  row("Optimizer.step#AdamW.step", LayerPhase::optimizer).work_partial =
      "48% of its time is in ops hwprof has no formula for (aten::addcmul_, aten::addcdiv_, aten::sqrt): its FLOPs and rates are lower bounds";
  row("TinyLM.encoder.0.linear1", LayerPhase::forward).work_partial =
      "12% of its time is in ops hwprof has no formula for (aten::gelu): its FLOPs and rates are lower bounds";
  // The embedding's calls by the input's shape: five lengths kept apart, the rest summed.
  LayerProfile& embedding = row("aten::embedding", LayerPhase::forward);
  embedding.shapes = {{"1000x256, 16x64", 12, 3.0, 0, false}, {"1000x256, 16x32", 8, 1.0, 0, false}, {"1000x256, 16x48", 6, 1.5, 0, false},
                      {"1000x256, 16x16", 4, 0.5, 0, false},  {"1000x256, 16x8", 2, 0.25, 0, false}, {"other shapes", 8, 1.75, 0, true}};
  row("aten::addmm [1024x256, 256x1000, 1000]", LayerPhase::forward).nested_op = true;
  LayerProfile& setup = row("setup", LayerPhase::setup);
  setup.roofline.reset();

  LayerProfile& t = p.total;
  t = {};
  t.index = -1;
  t.name = p.model;
  t.op = "model";
  t.time_ms = synthetic_times(kSyntheticRootMs, 1);
  t.total_ms = kSyntheticRootMs;
  t.basis_ms = (kSyntheticRootMs - kSyntheticSetupMs) / steps;  // 40 ms per step
  t.time_share = 1.0;
  t.threads = 1;
  t.flops = static_cast<std::int64_t>(2.0e8 + 4.0e8 + 9.4e6);  // per step: the modules and the optimizer, each FLOP once
  t.bytes = static_cast<std::int64_t>(4.0e7 + 8.0e7 + 3.0e7);
  t.roofline = synthetic_point(static_cast<double>(t.flops), static_cast<double>(t.bytes), t.basis_ms * 1e-3, false, Bound::compute);
  t.roofline->efficiency = 0.85;  // 6 ms of its 40 to win
  t.roofline->why =
      "its rows with a count (90% of its time) would take 30 ms at their roofs instead of 36 ms: 6 ms to win; the rest of its time (ops "
      "without a count, the program's own code, the gaps between rows) is not counted as time to win";
  p.warnings = {
      "1 row with an impossible rate, left out of the time to win and the totals: aten::linear [16x64x256, 1000x256, 1000] "
      "(backward) (each says why)"};
  p.region_threads = {{1, "MainThread", "TinyLM", 20, 300.0, 10.0}, {1, "MainThread", "TinyLM (backward)", 20, 400.0, 15.0}};
  p.call_paths = {{"TinyLM", 0, 20, 300.0, 10.0, std::nullopt}, {"TinyLM/aten::embedding", 1, 40, 8.0, 8.0, std::nullopt}};
  return p;
}

}  // namespace hwprof::test
