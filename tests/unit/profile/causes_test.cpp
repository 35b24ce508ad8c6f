// The rule table of src/placement/causes.cpp (docs/profile.md, "Why"): each rule on a layer made
// to meet it, and not on one that does not; and counter truth's wall-time bounds
// (src/profile/counter_truth.cpp) on hand-made readings.
#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "placement/causes.hpp"
#include "profile/counter_truth.hpp"

namespace hwprof::profile {
namespace {

RooflinePoint placed(double efficiency, Bound bound, double intensity = 50.0, double ridge = 10.0, std::string roof = "gemm_sp") {
  RooflinePoint r;
  r.efficiency = efficiency;
  r.bound = bound;
  r.intensity = intensity;
  r.ridge_intensity = ridge;
  r.compute_roof = std::move(roof);
  r.compute_roof_gflops_per_s = 100;
  r.gflops_per_s = 100 * efficiency;
  r.attainable_gflops_per_s = 100;
  r.memory_level = "l2";
  r.gbytes_per_s = 10;
  r.memory_gbytes_per_s = 20;
  return r;
}

LayerProfile layer(double ms, std::optional<RooflinePoint> r) {
  LayerProfile l;
  l.name = "x";
  l.time_ms.n = 10;
  l.time_ms.median = ms;
  l.time_ms.mean = ms;
  l.roofline = std::move(r);
  if (!l.roofline) l.roofline_error = "no calibration run with 2 threads";
  return l;
}

Node conv(std::int64_t in, std::int64_t out, std::int64_t groups, std::int64_t k, Shape out_shape) {
  Node n;
  n.name = "conv";
  n.op = OpKind::conv2d;
  n.attrs.out_channels = out;
  n.attrs.groups = groups;
  n.attrs.kernel = {k, k};
  n.output_shape = std::move(out_shape);
  (void)in;
  return n;
}

std::vector<std::string> rules(const CauseInputs& in) {
  std::vector<std::string> out;
  for (const LayerCause& c : layer_causes(in)) {
    EXPECT_FALSE(c.label.empty()) << c.rule;
    EXPECT_FALSE(c.text.empty()) << c.rule;
    EXPECT_FALSE(c.advice.empty()) << c.rule << ": every cause names what to try";
    out.push_back(c.rule);
  }
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& rule) {
  return std::find(v.begin(), v.end(), rule) != v.end();
}

TEST(Causes, EveryMeasuredLayerHasOneEvenWithoutARoofline) {
  const LayerProfile l = layer(1.0, std::nullopt);
  const auto r = rules({&l, nullptr, {}, 1, 1, 30, false, ""});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.back(), "no_roofline");
}

TEST(Causes, BelowResolutionComesFirst) {
  LayerProfile l = layer(0.0005, placed(0.01, Bound::overhead));
  l.below_resolution = true;
  const auto r = rules({&l, nullptr, {}, 1, 1, 30, false, ""});
  EXPECT_EQ(r.front(), "below_resolution");
  EXPECT_FALSE(has(r, "fixed_cost")) << "an overhead-bound layer below resolution is not also blamed on fixed costs";
  LayerProfile resolved = layer(0.05, placed(0.01, Bound::overhead));
  EXPECT_FALSE(has(rules({&resolved, nullptr, {}, 1, 1, 30, false, ""}), "below_resolution"));
  EXPECT_TRUE(has(rules({&resolved, nullptr, {}, 1, 1, 30, false, ""}), "fixed_cost"));
}

TEST(Causes, ATimeThatVariedWidelyIsSaidToBeNoisy) {
  LayerProfile l = layer(58.0, placed(0.03, Bound::memory, 0.25, 10.0));
  l.time_ms.median_ci_low = 28.0;  // ±30 ms around 58: mobilenet_v2's large batch norms on a busy VM
  l.time_ms.median_ci_high = 88.0;
  l.time_ms.median_ci_coverage = 0.95;
  ASSERT_TRUE(l.time_ms.has_median_ci());
  EXPECT_NEAR(relative_uncertainty(l.time_ms), 30.0 / 58.0, 1e-12);
  const auto r = layer_causes({&l, nullptr, {}, 8, 2, 30, false, ""});
  EXPECT_EQ(r.front().rule, "noisy");
  EXPECT_EQ(r.front().label, "noisy (±52%)");
  l.time_ms.median_ci_low = 57.0;
  l.time_ms.median_ci_high = 59.0;
  EXPECT_FALSE(has(rules({&l, nullptr, {}, 8, 2, 30, false, ""}), "noisy"));
  // Without an interval (fewer than 6 samples), half the range.
  LayerProfile few = layer(10.0, placed(0.5, Bound::memory, 0.25, 10.0));
  few.time_ms.n = 4;
  few.time_ms.min = 4.0;
  few.time_ms.max = 16.0;
  EXPECT_NEAR(relative_uncertainty(few.time_ms), 0.6, 1e-12);
  EXPECT_TRUE(has(rules({&few, nullptr, {}, 8, 2, 30, false, ""}), "noisy"));
}

TEST(Causes, DepthwiseConvolutionIsNamedAndIsNoGemm) {
  const Node dw = conv(32, 32, 32, 3, {32, 56, 56});
  const LayerProfile l = layer(2.0, placed(0.03, Bound::compute, 2.2, 2.0));
  const auto r = rules({&l, &dw, {32, 56, 56}, 8, 2, 30, true, "Haswell"});
  EXPECT_EQ(r.front(), "depthwise_conv");
  EXPECT_FALSE(has(r, "tiny_gemm")) << "direct loops, not a GEMM";
  EXPECT_FALSE(has(r, "blas_held_back")) << "no BLAS call to hold back";
  EXPECT_FALSE(forward_gemm(dw, {32, 56, 56}, 8));
  const Node dense = conv(32, 64, 1, 3, {64, 56, 56});
  EXPECT_FALSE(has(rules({&l, &dense, {32, 56, 56}, 8, 2, 30, false, ""}), "depthwise_conv"));
}

TEST(Causes, GroupedConvolutionRunsSmallGemms) {
  const Node grouped = conv(64, 64, 4, 3, {64, 28, 28});
  const LayerProfile l = layer(2.0, placed(0.3, Bound::compute));
  const auto r = rules({&l, &grouped, {64, 28, 28}, 8, 2, 30, false, ""});
  EXPECT_EQ(r.front(), "grouped_gemm");
  const auto g = forward_gemm(grouped, {64, 28, 28}, 8);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->m, 16);       // 64 / 4 output channels per group
  EXPECT_EQ(g->n, 28 * 28);  // output pixels per sample
  EXPECT_EQ(g->k, 16 * 9);   // 64 / 4 input channels × 3 × 3
  EXPECT_EQ(g->count, 32);   // 4 groups × 8 samples
}

TEST(Causes, TinyGemmDimensionsBelowTheMicroKernelTile) {
  Node fc;
  fc.name = "fc3";
  fc.op = OpKind::linear;
  fc.attrs.out_features = 10;
  fc.output_shape = {10};
  const LayerProfile l = layer(0.01, placed(0.05, Bound::overhead, 2.0, 10.0));
  const auto r = rules({&l, &fc, {84}, 8, 2, 30, false, ""});
  EXPECT_EQ(r.front(), "tiny_gemm");
  EXPECT_NE(layer_causes({&l, &fc, {84}, 8, 2, 30, false, ""}).front().label.find("M = 8"), std::string::npos);
  fc.attrs.out_features = 512;
  EXPECT_FALSE(has(rules({&l, &fc, {512}, 64, 2, 30, false, ""}), "tiny_gemm"));
}

TEST(Causes, TranscendentalOpsHaveTheirOwnRoof) {
  Node tanh;
  tanh.op = OpKind::tanh;
  const LayerProfile fma_roof = layer(0.05, placed(0.07, Bound::memory, 0.125, 10.0, "fma_sp"));
  const auto r = layer_causes({&fma_roof, &tanh, {6, 28, 28}, 8, 2, 30, false, ""});
  ASSERT_EQ(r.front().rule, "transcendental");
  EXPECT_NE(r.front().text.find("no tanh ceiling"), std::string::npos) << r.front().text;
  const LayerProfile calibrated = layer(0.05, placed(0.6, Bound::compute, 0.125, 0.05, "tanh_sp"));
  EXPECT_NE(layer_causes({&calibrated, &tanh, {6, 28, 28}, 8, 2, 30, false, ""}).front().text.find("calibrated tanh kernel allows"),
            std::string::npos);
  Node gelu;
  gelu.op = OpKind::gelu;
  EXPECT_EQ(layer_causes({&fma_roof, &gelu, {768}, 8, 2, 30, false, ""}).front().label, "erf-bound");
  Node relu;
  relu.op = OpKind::relu;
  EXPECT_FALSE(has(rules({&fma_roof, &relu, {768}, 8, 2, 30, false, ""}), "transcendental"));
}

TEST(Causes, AboveTheMemoryRoofMeansANearerCache) {
  const LayerProfile l = layer(0.4, placed(1.7, Bound::memory, 0.125, 10.0));
  EXPECT_TRUE(has(rules({&l, nullptr, {}, 8, 2, 30, false, ""}), "nearer_cache"));
  const LayerProfile compute = layer(4.0, placed(1.3, Bound::compute));
  EXPECT_TRUE(has(rules({&compute, nullptr, {}, 8, 2, 30, false, ""}), "above_roof"));
  EXPECT_FALSE(has(rules({&compute, nullptr, {}, 8, 2, 30, false, ""}), "nearer_cache"));
}

TEST(Causes, IdleThreadsFromTaskClockAgainstWallTimesThreads) {
  LayerProfile l = layer(1.0, placed(0.3, Bound::memory, 0.125, 10.0));
  LayerCounter tc;
  tc.name = "task-clock";
  tc.unit = "ns";
  tc.kind = EventKind::task_clock;
  tc.status = CounterStatus::ok;
  tc.value = 0.6e6;  // 0.6 ms of CPU in 1 ms on 2 threads: 30% busy
  l.counters.push_back(tc);
  EXPECT_TRUE(has(rules({&l, nullptr, {}, 8, 2, 30, false, ""}), "thread_underuse"));
  EXPECT_FALSE(has(rules({&l, nullptr, {}, 8, 1, 30, false, ""}), "thread_underuse")) << "one thread cannot idle the others";
  l.counters[0].value = 1.9e6;
  EXPECT_FALSE(has(rules({&l, nullptr, {}, 8, 2, 30, false, ""}), "thread_underuse"));
  l.counters[0].value = 0.2e6;
  l.counters[0].below_resolution = true;
  EXPECT_FALSE(has(rules({&l, nullptr, {}, 8, 2, 30, false, ""}), "thread_underuse")) << "not from a value under resolution";
}

TEST(Causes, BlasHeldBackOnlyForLayersThatCallIt) {
  Node fc;
  fc.op = OpKind::linear;
  fc.attrs.out_features = 1000;
  const LayerProfile l = layer(1.0, placed(0.9, Bound::compute));
  EXPECT_TRUE(has(rules({&l, &fc, {512}, 64, 2, 30, true, "Haswell"}), "blas_held_back"));
  EXPECT_FALSE(has(rules({&l, &fc, {512}, 64, 2, 30, false, "SkylakeX"}), "blas_held_back"));
  Node bn;
  bn.op = OpKind::batchnorm2d;
  EXPECT_FALSE(has(rules({&l, &bn, {64, 8, 8}, 64, 2, 30, true, "Haswell"}), "blas_held_back"));
}

TEST(Causes, TheRooflineSideIsTheLastWord) {
  const LayerProfile near = layer(10.0, placed(0.92, Bound::compute));
  EXPECT_EQ(rules({&near, nullptr, {}, 8, 2, 30, false, ""}).back(), "near_roof");
  const LayerProfile compute = layer(10.0, placed(0.44, Bound::compute));
  EXPECT_EQ(rules({&compute, nullptr, {}, 8, 2, 30, false, ""}).back(), "compute_below_roof");
  const LayerProfile memory = layer(10.0, placed(0.3, Bound::memory, 0.25, 10.0));
  EXPECT_EQ(rules({&memory, nullptr, {}, 8, 2, 30, false, ""}).back(), "memory_below_roof");
}

// ---- counter truth: what wall time can hold ----------------------------------------------

RegionReport one_counter(std::string name, std::string unit, EventKind kind, double per_call) {
  RegionReport r;
  CounterTotal c;
  c.name = std::move(name);
  c.unit = std::move(unit);
  c.kind = kind;
  c.samples = 10;
  c.inclusive = 10 * per_call;
  c.status = CounterStatus::ok;
  r.counters.push_back(c);
  return r;
}

TEST(CounterTruth, TaskClockAboveWallTimesCpusIsImpossible) {
  // lenet5's flatten before this check: 96 µs of task-clock for a 0.08 µs layer on 2 CPUs.
  RegionReport r = one_counter("task-clock", "ns", EventKind::task_clock, 96e3);
  const WallBounds bounds{0.08e-6, 2, 0.0};
  const auto reasons = impossible_counters(r, bounds, {1e3});
  ASSERT_FALSE(reasons[0].empty());
  EXPECT_NE(reasons[0].find("2 CPUs"), std::string::npos) << reasons[0];
  // Within one reading's cost of the bound: consistent with it, but not a fact either.
  RegionReport close = one_counter("task-clock", "ns", EventKind::task_clock, 2.05e6);
  EXPECT_TRUE(impossible_counters(close, {1e-3, 2, 0.0}, {0.1e6})[0].empty());
  EXPECT_TRUE(close.counters[0].below_resolution);
  RegionReport fine = one_counter("task-clock", "ns", EventKind::task_clock, 1.9e6);
  EXPECT_TRUE(impossible_counters(fine, {1e-3, 2, 0.0}, {0.1e6})[0].empty());
  EXPECT_FALSE(fine.counters[0].below_resolution);
}

TEST(CounterTruth, CyclesAboveWallTimesCpusTimesTheClockAreImpossible) {
  RegionReport r = one_counter("cycles", "count", EventKind::core_cycles, 9e6);  // 1 ms on 2 CPUs at 4 GHz: at most 8 M
  EXPECT_FALSE(impossible_counters(r, {1e-3, 2, 4.0}, {0.0})[0].empty());
  RegionReport unknown_clock = one_counter("CPU_CLK_UNHALTED.THREAD", "count", EventKind::core_cycles, 9e6);
  EXPECT_TRUE(impossible_counters(unknown_clock, {1e-3, 2, 0.0}, {0.0})[0].empty()) << "held to 6.5 GHz: 13 M";
  RegionReport instructions = one_counter("instructions", "count", EventKind::instructions, 1e12);
  EXPECT_TRUE(impossible_counters(instructions, {1e-3, 2, 4.0}, {0.0})[0].empty()) << "no wall-time bound on instructions";
}

// The bounds follow the counter's kind, not its name: a task-clock that its backend did not
// say is CPU time (a name alone) is held to nothing.
TEST(CounterTruth, TheBoundsFollowTheKindNotTheName) {
  RegionReport named_only = one_counter("task-clock", "ns", EventKind::other, 96e3);
  EXPECT_TRUE(impossible_counters(named_only, {0.08e-6, 2, 0.0}, {0.0})[0].empty());
  RegionReport wall = one_counter("wall-time", "ns", EventKind::wall_time, 96e3);
  EXPECT_TRUE(impossible_counters(wall, {0.08e-6, 2, 0.0}, {0.0})[0].empty());
  RegionReport cpu_time = one_counter("thread-cpu-time", "ns", EventKind::task_clock, 96e3);
  EXPECT_FALSE(impossible_counters(cpu_time, {0.08e-6, 2, 0.0}, {0.0})[0].empty());
}

TEST(CounterTruth, MetricsFromAnImpossibleCounterHaveNoValue) {
  EventGroup g;
  g.events = {{"tc", "task-clock", 1}};
  g.metrics = {{"CPUs utilised", "CPUs", {{1e-9, "tc"}}, {{1.0, "time"}}, 2}};
  RegionReport r = one_counter("task-clock", "ns", EventKind::task_clock, 3e6);
  const auto ok = metrics_of(r, g, 2e-3, {""});
  ASSERT_TRUE(ok[0].value);
  EXPECT_DOUBLE_EQ(*ok[0].value, 1.5);
  const auto broken = metrics_of(r, g, 1e-3, {"task-clock 3e6 per call is 1.5x ..."});
  EXPECT_FALSE(broken[0].value);
  EXPECT_NE(broken[0].reason.find("cannot be true"), std::string::npos);
  r.counters[0].below_resolution = true;
  EXPECT_TRUE(metrics_of(r, g, 2e-3, {""})[0].below_resolution);
}

}  // namespace
}  // namespace hwprof::profile
