// A training loop of your own, measured with hwprof's library: a Session opened once, a
// scoped region around each step and around the data preparation, and the per-region
// statistics printed at the end. Runs as a test (ctest -R example).
//   hwprof_example_training_loop [MODEL.json] [STEPS]
#include <cstdio>
#include <cstdlib>
#include <string>

#include <hwprof/hwprof.hpp>

int main(int argc, char** argv) {
  const std::string spec = argc > 1 ? argv[1] : HWPROF_EXAMPLE_MODEL;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;

  auto graph = hwprof::load_model(spec);
  if (!graph) {
    std::fprintf(stderr, "%s\n", graph.error().message.c_str());
    return 1;
  }
  hwprof::ExecutorOptions options;
  options.batch = 16;
  options.training = true;
  options.optimizer.kind = hwprof::OptimizerKind::adam;
  options.optimizer.learning_rate = 1e-3;
  auto model = hwprof::Executor::build(*graph, options);
  if (!model) {
    std::fprintf(stderr, "%s\n", model.error().message.c_str());
    return 1;
  }

  hwprof::SessionOptions session_options;  // perf_event counters, or time only where none opens
  auto session = hwprof::Session::open(session_options);
  if (!session) {
    std::fprintf(stderr, "%s\n", session.error().message.c_str());
    return 1;
  }
  hwprof::Session& s = **session;

  float loss = 0.0f;
  for (int step = 0; step < steps; ++step) {
    hwprof::Tensor input, labels;
    {
      HWPROF_REGION(s, "data");
      input = model->make_input(static_cast<std::uint64_t>(step));
      labels = model->make_labels(static_cast<std::uint64_t>(step));
    }
    HWPROF_REGION(s, "train_step");
    auto result = model->train_step(input, labels);
    if (!result) {
      std::fprintf(stderr, "%s\n", result.error().message.c_str());
      return 1;
    }
    loss = *result;
  }

  std::printf("%s: %d steps, last loss %.4f (backend: %s)\n", graph->name.c_str(), steps, static_cast<double>(loss),
              s.time_only() ? "time only" : "perf_event");
  for (const hwprof::RegionReport& r : s.report()) {
    std::printf("  %-12s %6llu calls  median %9.3f ms  p95 %9.3f ms%s\n", r.name.c_str(), static_cast<unsigned long long>(r.calls),
                r.inclusive_ns.median * 1e-6, r.inclusive_ns.p95 * 1e-6, r.below_resolution ? "  (below resolution)" : "");
    for (const hwprof::CounterTotal& c : r.counters) {
      if (c.has_value()) {
        std::printf("      %-16s %14.0f %s per call\n", c.name.c_str(), c.per_call(), c.unit.c_str());
      } else {
        std::printf("      %-16s n/a (%s)\n", c.name.c_str(), c.reason.c_str());
      }
    }
  }
  return 0;
}
