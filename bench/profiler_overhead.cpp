// What profiling adds to a model's forward time: the same executor runs the same batch with
// and without the profiler's per-layer regions (a perf_event session with its default events
// or time only where none opens), alternating run by run so both see the same machine state.
// Prints the medians and the added share (issue #6 goal: <= 1% on ResNet-18 batch 8).
//   hwprof_profiler_overhead MODEL.json [BATCH=8] [THREADS=2] [ROUNDS=40]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hwprof/executor.hpp"
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
  const auto run = [&](bool profiled) {
    executor->set_observer(profiled ? &regions : nullptr);
    const std::uint64_t t0 = hwprof::steady_ns();
    if (profiled) (*session)->begin(model_id);
    auto out = executor->forward(input);
    if (profiled) (*session)->end(model_id);
    const std::uint64_t t1 = hwprof::steady_ns();
    if (!out) {
      std::fprintf(stderr, "%s\n", out.error().message.c_str());
      std::exit(1);
    }
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
  std::printf("%s batch %lld, %d thread(s), %d alternating rounds, backend %s (%zu events)\n", graph->name.c_str(), batch, threads,
              rounds, (*session)->time_only() ? "timer" : "perf", (*session)->events().size());
  std::printf("unprofiled forward   median %8.3f ms  (min %8.3f, 95%% CI of median %.3f-%.3f)\n", a.median, a.min, a.median_ci_low,
              a.median_ci_high);
  std::printf("profiled forward     median %8.3f ms  (min %8.3f, 95%% CI of median %.3f-%.3f)\n", b.median, b.min, b.median_ci_low,
              b.median_ci_high);
  const double added = (b.median / a.median - 1.0) * 100.0;
  std::printf("added by profiling: %+.2f%% of the median (min to min %+.2f%%); goal <= 1%%: %s\n", added,
              (b.min / a.min - 1.0) * 100.0, added <= 1.0 ? "meets" : "MISSES");
  std::printf("per layer boundary: %zu regions per pass, session begin+end cost %.0f ns\n", graph->nodes.size(),
              (*session)->overhead().pair_ns);
  return 0;
}
