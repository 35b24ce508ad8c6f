// What profiling adds to a model's forward time: the same executor runs the same batch with
// and without the profiler's per-layer regions (a perf_event session with its default events
// or time only where none opens), alternating run by run so both see the same machine state.
// Prints the medians, and the added share as the median of the per-round ratios (profiled over
// unprofiled, run back to back), which cancels the host's slow drifts that the two medians
// each carry (the goal: <= 1% on ResNet-18 batch 8).
//   hwprof_profiler_overhead MODEL.json [BATCH=8] [THREADS=2] [ROUNDS=40] [BACKEND=auto|perf|timer]
// `hwprof profile` times the layers in passes whose regions read no counter (the `timer`
// figures) and sums the counters over passes of their own, which it does not time (the
// `perf` figures: what such a counted pass costs).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hwprof/engine/executor.hpp"
#include "hwprof/session.hpp"
#include "hwprof/statistics.hpp"
#include "profile/layer_regions.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.json [BATCH] [THREADS] [ROUNDS]\n", argv[0]);
    return 2;
  }
  const long long batch = argc > 2 ? std::atoll(argv[2]) : 8;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 40;
  const std::string backend = argc > 5 ? argv[5] : "auto";
  if (batch < 1 || threads < 1 || rounds < 2 || (backend != "auto" && backend != "perf" && backend != "timer")) {
    std::fprintf(stderr, "usage: %s MODEL.json [BATCH>=1] [THREADS>=1] [ROUNDS>=2] [auto|perf|timer]\n", argv[0]);
    return 2;
  }
  auto graph = hwprof::load_model(argv[1]);
  if (!graph) {
    std::fprintf(stderr, "%s\n", graph.error().message.c_str());
    return 1;
  }
  hwprof::ExecutorOptions eo;
  eo.batch = batch;
  eo.threads = threads;
  auto executor = hwprof::Executor::build(*graph, eo);
  if (!executor) {
    std::fprintf(stderr, "%s\n", executor.error().message.c_str());
    return 1;
  }
  const hwprof::Tensor input = executor->make_input(1);
  hwprof::SessionOptions so;
  so.on_hint = [](const std::string&) {};
  so.backend = backend == "perf" ? hwprof::BackendKind::perf : backend == "timer" ? hwprof::BackendKind::timer : hwprof::BackendKind::automatic;
  auto session = hwprof::Session::open(so);
  if (!session) {
    std::fprintf(stderr, "%s\n", session.error().message.c_str());
    return 1;
  }
  hwprof::LayerRegions regions(**session, graph->nodes.size(), 0);
  for (std::size_t i = 0; i < graph->nodes.size(); ++i) {
    regions.set_id(static_cast<int>(i), hwprof::Phase::forward, (*session)->region("forward:" + graph->nodes[i].name));
  }
  const int model_id = (*session)->region("model");
  // The profiler's own time, measured directly: the hooks' calls timed from outside (two clock
  // reads per call, ~50 ns, are part of the figure). Far less noisy than the difference of two
  // forward times, though it leaves out indirect costs (caches, a counter read's interrupt).
  struct TimedHooks final : hwprof::LayerObserver {
    hwprof::LayerObserver* inner = nullptr;
    std::uint64_t ns = 0;
    void on_begin(int layer, hwprof::Phase phase) noexcept override {
      const std::uint64_t t = hwprof::steady_ns();
      inner->on_begin(layer, phase);
      ns += hwprof::steady_ns() - t;
    }
    void on_end(int layer, hwprof::Phase phase) noexcept override {
      const std::uint64_t t = hwprof::steady_ns();
      inner->on_end(layer, phase);
      ns += hwprof::steady_ns() - t;
    }
  } hooks;
  hooks.inner = &regions;
  std::vector<double> hook_ms;
  const auto run = [&](bool profiled) {
    executor->set_observer(profiled ? &hooks : nullptr);
    hooks.ns = 0;
    const std::uint64_t t0 = hwprof::steady_ns();
    if (profiled) (*session)->begin(model_id);
    auto out = executor->forward(input);
    if (profiled) (*session)->end(model_id);
    const std::uint64_t t1 = hwprof::steady_ns();
    if (!out) {
      std::fprintf(stderr, "%s\n", out.error().message.c_str());
      std::exit(1);
    }
    if (profiled) hook_ms.push_back(static_cast<double>(hooks.ns) * 1e-6);
    return static_cast<double>(t1 - t0) * 1e-6;
  };
  for (int i = 0; i < 3; ++i) {
    run(false);
    run(true);
  }
  std::vector<double> plain, profiled;
  for (int r = 0; r < rounds; ++r) {
    // Alternate which goes first, so neither always follows the other.
    if (r % 2 == 0) {
      plain.push_back(run(false));
      profiled.push_back(run(true));
    } else {
      profiled.push_back(run(true));
      plain.push_back(run(false));
    }
  }
  const hwprof::Summary a = hwprof::summarize(plain);
  const hwprof::Summary b = hwprof::summarize(profiled);
  std::vector<double> ratios;
  for (std::size_t i = 0; i < plain.size(); ++i) ratios.push_back(profiled[i] / plain[i]);
  const hwprof::Summary r = hwprof::summarize(ratios);
  std::printf("%s batch %lld, %d thread(s), %d alternating rounds, backend %s (%zu events)\n", graph->name.c_str(), batch, threads, rounds,
              (*session)->time_only() ? "timer" : "perf", (*session)->events().size());
  std::printf("unprofiled forward   median %8.3f ms  (min %8.3f, 95%% CI of median %.3f-%.3f)\n", a.median, a.min, a.median_ci_low, a.median_ci_high);
  std::printf("profiled forward     median %8.3f ms  (min %8.3f, 95%% CI of median %.3f-%.3f)\n", b.median, b.min, b.median_ci_low, b.median_ci_high);
  const double added = (r.median - 1.0) * 100.0;
  std::printf(
      "added by profiling: %+.2f%% (median of the %d per-round ratios, 95%% CI %+.2f%% to %+.2f%%); "
      "ratio of the medians %+.2f%%, min to min %+.2f%%\n",
      added, rounds, (r.median_ci_low - 1.0) * 100.0, (r.median_ci_high - 1.0) * 100.0, (b.median / a.median - 1.0) * 100.0,
      (b.min / a.min - 1.0) * 100.0);
  const hwprof::Summary h = hwprof::summarize(hook_ms);
  std::printf(
      "inside the profiler's hooks: median %.3f ms per pass (p95 %.3f), %.2f%% of the unprofiled median; "
      "%zu regions per pass, %.1f us per region\n",
      h.median, h.p95, h.median / a.median * 100.0, graph->nodes.size(), h.median * 1e3 / static_cast<double>(graph->nodes.size()));
  std::printf("session begin+end cost measured at open (subtracted from each region): %.0f ns\n", (*session)->overhead().pair_ns);
  // The hooks' time is added to the pass for certain; the end-to-end ratio can hide it in noise.
  const double hooks_share = h.median / a.median * 100.0;
  const double verdict = std::max(added, hooks_share);
  if ((*session)->time_only()) {
    std::printf("goal <= 1%% added to the timed passes: %s (the larger of the end-to-end %+.2f%% and the hooks' %.2f%%)\n",
                verdict <= 1.0 ? "meets" : "MISSES", added, hooks_share);
  } else {
    std::printf(
        "a counted pass (hwprof profile does not time these) adds %.2f%%; the goal applies to the timed passes: "
        "run with BACKEND=timer\n",
        verdict);
  }
  return 0;
}
