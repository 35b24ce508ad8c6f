// What sampling adds to a profile's pass (docs/sampling.md, "Cost"): the profiler's timed pass
// (the engine with the per-layer regions on a time-only session) run with the sampler paused
// and resumed, as `hwprof profile --sample` does, in rounds of one unsampled and one sampled
// pass back to back, the order alternating round by round so that neither always follows the
// other. Prints the median of the per-round ratios (sampled over unsampled) with its
// distribution-free 95 % interval, and the verdict on the goal: the interval's upper end at
// most 1.02 is "meets", its lower end above 1.02 "misses", anything else "not shown" (the
// run was too noisy to tell; run more rounds).
//   hwprof_sampling_cost MODEL.json [BATCH=8] [THREADS=2] [ROUNDS=60] [SPEC=cpu-clock@1000] [DEPTH]
// DEPTH overrides the callchain depth the spec asks of the kernel (1: the leaf alone), to
// measure what the kernel's callchain walk costs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hwprof/engine/executor.hpp"
#include "hwprof/session.hpp"
#include "hwprof/statistics.hpp"
#include "profile/layer_regions.hpp"
#include "sampling/sample_spec.hpp"
#include "sampling/sampler.hpp"

namespace {

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s MODEL.json [BATCH>=1] [THREADS>=1] [ROUNDS>=6] [SPEC=cpu-clock@1000] [DEPTH>=1]\n", argv0);
  std::exit(2);
}

void print_summary(const char* what, const hwprof::Summary& s, const char* unit) {
  std::printf("%-28s median %9.3f %s (min %9.3f, 95%% CI of the median %.3f-%.3f)\n", what, s.median, unit, s.min, s.median_ci_low, s.median_ci_high);
}

}  // namespace

// Long: one measurement script from the arguments to the verdict; split, its steps would pass
// the executor, the session, the sampler and six vectors between them.
int main(int argc, char** argv) {
  if (argc < 2) usage(argv[0]);
  const long long batch = argc > 2 ? std::atoll(argv[2]) : 8;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 60;
  const std::string spec_text = argc > 5 ? argv[5] : "cpu-clock@1000";
  const int depth = argc > 6 ? std::atoi(argv[6]) : 0;
  if (batch < 1 || threads < 1 || rounds < 6 || (argc > 6 && depth < 1)) usage(argv[0]);

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
  so.backend = hwprof::BackendKind::timer;  // the profiler's timed passes read no counter
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
  executor->set_observer(&regions);

  // Warm up before the sampler opens, so that the engine's threads exist (the profiler opens
  // it after its warm-up too).
  const auto pass = [&]() {
    const std::uint64_t t0 = hwprof::steady_ns();
    (*session)->begin(model_id);
    auto out = executor->forward(input);
    (*session)->end(model_id);
    const std::uint64_t t1 = hwprof::steady_ns();
    if (!out) {
      std::fprintf(stderr, "%s\n", out.error().message.c_str());
      std::exit(1);
    }
    return static_cast<double>(t1 - t0) * 1e-6;
  };
  for (int i = 0; i < 5; ++i) pass();

  auto spec = hwprof::sampling::parse_sample_spec(spec_text);
  if (!spec) {
    std::fprintf(stderr, "%s\n", spec.error().message.c_str());
    return 1;
  }
  if (depth > 0) spec->callchain_depth = static_cast<std::uint32_t>(depth);
  auto sampler = hwprof::sampling::Sampler::open(*spec);
  if (!sampler) {
    std::printf("sampling cost: not measured: %s\n", sampler.error().message.c_str());
    return 1;
  }
  sampler->start();
  sampler->pause();

  std::vector<double> plain, sampled, ratios, pause_us, resume_us;
  const auto sampled_pass = [&]() {
    std::uint64_t t = hwprof::steady_ns();
    sampler->resume();
    resume_us.push_back(static_cast<double>(hwprof::steady_ns() - t) * 1e-3);
    const double ms = pass();
    t = hwprof::steady_ns();
    sampler->pause();
    pause_us.push_back(static_cast<double>(hwprof::steady_ns() - t) * 1e-3);
    return ms;
  };
  for (int i = 0; i < 3; ++i) {
    pass();
    sampled_pass();
  }
  pause_us.clear();
  resume_us.clear();
  for (int r = 0; r < rounds; ++r) {
    double a = 0, b = 0;
    if (r % 2 == 0) {
      a = pass();
      b = sampled_pass();
    } else {
      b = sampled_pass();
      a = pass();
    }
    plain.push_back(a);
    sampled.push_back(b);
    ratios.push_back(b / a);
  }
  sampler->stop();
  const hwprof::sampling::SamplerStats st = sampler->stats();

  std::printf("%s batch %lld, %d thread(s), %d rounds of one unsampled and one sampled pass, sampling %s (%s, callchain depth %u)\n",
              graph->name.c_str(), batch, threads, rounds, st.spec.c_str(), st.rate.c_str(), st.callchain_depth);
  print_summary("unsampled pass (measured)", hwprof::summarize(plain), "ms");
  print_summary("sampled pass (measured)", hwprof::summarize(sampled), "ms");
  const hwprof::Summary r = hwprof::summarize(ratios);
  std::printf("sampled / unsampled: median of the per-round ratios %.4f (%+.2f%%), 95%% CI %.4f-%.4f (coverage %.3f); ratio of the medians %.4f\n",
              r.median, (r.median - 1.0) * 100.0, r.median_ci_low, r.median_ci_high, r.median_ci_coverage,
              hwprof::summarize(sampled).median / hwprof::summarize(plain).median);
  const hwprof::Summary p = hwprof::summarize(pause_us);
  const hwprof::Summary q = hwprof::summarize(resume_us);
  std::printf("between passes (measured, not part of either pass): pause() median %.0f us (max %.0f), resume() median %.0f us (max %.0f)\n", p.median,
              p.max, q.median, q.max);
  std::printf(
      "sampler: %llu samples kept, %llu lost, %llu throttled, %llu dropped, %llu malformed; %zu threads opened, %zu seen, %zu rings of %zu KiB\n",
      static_cast<unsigned long long>(st.samples), static_cast<unsigned long long>(st.lost), static_cast<unsigned long long>(st.throttled),
      static_cast<unsigned long long>(st.dropped), static_cast<unsigned long long>(st.malformed), st.threads_opened, st.threads_seen, st.cpus,
      st.ring_bytes >> 10);
  std::printf("reader: woke %llu times while sampling (%.2f per sampled pass; the drains in pause() not counted)\n",
              static_cast<unsigned long long>(st.reader_wakeups), static_cast<double>(st.reader_wakeups) / rounds);
  for (const std::string& w : sampler->warnings()) std::printf("sampler warning: %s\n", w.c_str());
  const char* verdict = !r.has_median_ci()         ? "not shown (too few rounds for an interval)"
                        : r.median_ci_high <= 1.02 ? "PASS (the interval's upper end is at most 1.02)"
                        : r.median_ci_low > 1.02   ? "MISSES (the interval's lower end is above 1.02)"
                                                   : "not shown (the interval straddles 1.02: run more rounds)";
  std::printf("goal: a sampled pass within 2%% of an unsampled one: %s\n", verdict);
  return 0;
}
