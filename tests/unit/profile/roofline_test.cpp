// Roofline placement (src/placement/roofline.cpp) on a synthetic machine: the arithmetic, the
// choice of roof per op, the cache-aware view, the bound classification (compute-bound GEMM,
// memory-bound element-wise, overhead-bound tiny op), the bytes fallback chain with synthetic
// counter readings, and the measured-vs-analytic FLOPs comparison. No hardware.
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ops/ops.hpp"
#include "placement/roofline.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

using ::hwprof::test::contains;

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts) {
    if (contains(t, part)) return true;
  }
  return false;
}

Ceiling ceiling(double best) {
  Ceiling c;
  c.best = best;
  c.median = best * 0.95;
  c.repetitions = 5;
  return c;
}

BandwidthLevel level(double triad) {
  BandwidthLevel l;
  l.kernels["triad"] = ceiling(triad);
  l.kernels["copy"] = ceiling(triad * 1.1);  // must not be the one used
  return l;
}

// One thread: L1 1000, L2 500, L3 200, DRAM 50 GB/s; FMA 1000, GEMM 800 GFLOP/s (SP); DP half.
// Two threads: everything doubled.
Machine synthetic_machine() {
  Machine m;
  for (int threads : {1, 2}) {
    CalibrationRun run;
    run.threads = threads;
    const double k = threads;
    run.bandwidth["l1"] = level(1000 * k);
    run.bandwidth["l2"] = level(500 * k);
    run.bandwidth["l3"] = level(200 * k);
    run.bandwidth["dram"] = level(50 * k);
    run.compute["fma_sp"] = ceiling(1000 * k);
    run.compute["gemm_sp"] = ceiling(800 * k);
    run.compute["fma_dp"] = ceiling(500 * k);
    run.compute["gemm_dp"] = ceiling(400 * k);
    m.runs.push_back(run);
  }
  return m;
}

SourcedValue analytic(double v) {
  return {v, ValueSource::analytic, CounterStatus::ok, 1.0, "analytic"};
}

RooflineInput input(OpKind op, double flops, double bytes, double seconds, int threads = 1) {
  RooflineInput in;
  Node node;
  node.op = op;
  in.roof = ops::compute_roof_of(node, false);  // GEMM or FMA, as the op's definition says
  in.flops = analytic(flops);
  in.bytes = analytic(bytes);
  in.seconds = seconds;
  in.threads = threads;
  return in;
}

TEST(Roofline, ComputeBoundGemm) {
  // A 512³ SGEMM: 2·512³ FLOPs over 3·512²·4 bytes → intensity 512/6 = 85.3 FLOP/B, far
  // right of the ridge 800/50 = 16. Achieving 600 GFLOP/s under the 800 GEMM roof: 75%.
  const double flops = 2.0 * 512 * 512 * 512;
  const double bytes = 3.0 * 512 * 512 * 4;
  const double seconds = flops / 600e9;
  const auto p = place_on_roofline(input(OpKind::linear, flops, bytes, seconds), synthetic_machine());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_NEAR(p->intensity, 512.0 / 6.0, 1e-9);
  EXPECT_NEAR(p->gflops_per_s, 600, 1e-9);
  EXPECT_NEAR(p->gbytes_per_s, bytes / seconds * 1e-9, 1e-9);
  EXPECT_EQ(p->compute_roof, "gemm_sp");
  EXPECT_DOUBLE_EQ(p->compute_roof_gflops_per_s, 800);
  EXPECT_DOUBLE_EQ(p->peak_gflops_per_s, 1000);
  EXPECT_DOUBLE_EQ(p->dram_gbytes_per_s, 50);
  EXPECT_DOUBLE_EQ(p->ridge_intensity, 16);
  EXPECT_DOUBLE_EQ(p->attainable_gflops_per_s, 800);
  EXPECT_NEAR(p->efficiency, 0.75, 1e-9);
  EXPECT_NEAR(p->headroom, 800.0 / 600.0, 1e-9);
  EXPECT_EQ(p->bound, Bound::compute);
  EXPECT_TRUE(contains(p->why, "ridge")) << p->why;
  EXPECT_EQ(p->flops.source, ValueSource::analytic);
  EXPECT_TRUE(p->notes.empty());
}

TEST(Roofline, MemoryBoundElementwise) {
  // ReLU over 16 Mi floats: 1 FLOP and 8 bytes per element → 0.125 FLOP/B; attainable
  // 0.125 · 50 = 6.25 GFLOP/s. At 40 GB/s achieved: 5 GFLOP/s, 80%.
  const double n = 16.0 * 1024 * 1024;
  const double seconds = 8 * n / 40e9;
  const auto p = place_on_roofline(input(OpKind::relu, n, 8 * n, seconds), synthetic_machine());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_DOUBLE_EQ(p->intensity, 0.125);
  EXPECT_EQ(p->compute_roof, "fma_sp") << "element-wise ops are held to the FMA peak";
  EXPECT_DOUBLE_EQ(p->ridge_intensity, 20);
  EXPECT_DOUBLE_EQ(p->attainable_gflops_per_s, 6.25);
  EXPECT_NEAR(p->gbytes_per_s, 40, 1e-9);
  EXPECT_NEAR(p->efficiency, 0.8, 1e-9);
  EXPECT_NEAR(p->headroom, 1.25, 1e-9);
  EXPECT_EQ(p->bound, Bound::memory);
}

TEST(Roofline, OverheadBoundTinyOp) {
  // A 16×16×16 linear: 8192 FLOPs, 3072 bytes → 2.67 FLOP/B, attainable 133 GFLOP/s; done in
  // 5 µs it reaches 1.6 GFLOP/s (1.2%): far below both roofs in a short call.
  const auto p = place_on_roofline(input(OpKind::linear, 8192, 3072, 5e-6), synthetic_machine());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_NEAR(p->attainable_gflops_per_s, 8192.0 / 3072 * 50, 1e-9);
  EXPECT_NEAR(p->gflops_per_s, 1.6384, 1e-9);
  EXPECT_LT(p->efficiency, 0.02);
  EXPECT_EQ(p->bound, Bound::overhead);
  EXPECT_TRUE(contains(p->why, "fixed")) << p->why;
}

TEST(Roofline, ALongSlowLayerIsPlacedByItsIntensityNotCalledOverhead) {
  // The same 1.2% efficiency, but 10 ms long: a slow kernel, not fixed cost.
  const double flops = 8192.0 * 2000 * 1.2;
  const auto p = place_on_roofline(input(OpKind::linear, flops, flops * 3072 / 8192, 10e-3), synthetic_machine());
  ASSERT_TRUE(p);
  EXPECT_LT(p->efficiency, 0.1);
  EXPECT_EQ(p->bound, Bound::memory);
  EXPECT_GT(p->headroom, 10);
}

TEST(Roofline, DataMovementWithoutFlopsIsJudgedByBandwidth) {
  // A transpose: 0 FLOPs, 64 MB moved in 2 ms → 32 GB/s of 50: 64%.
  const auto p = place_on_roofline(input(OpKind::transpose, 0, 64e6, 2e-3), synthetic_machine());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->intensity, 0);
  EXPECT_EQ(p->gflops_per_s, 0);
  EXPECT_NEAR(p->gbytes_per_s, 32, 1e-9);
  EXPECT_NEAR(p->efficiency, 0.64, 1e-9);
  EXPECT_EQ(p->bound, Bound::memory);

  const auto view = place_on_roofline(input(OpKind::reshape, 0, 0, 1e-6), synthetic_machine());
  ASSERT_TRUE(view);
  EXPECT_EQ(view->bound, Bound::overhead);
  EXPECT_EQ(view->efficiency, 0);
  EXPECT_EQ(view->headroom, 0) << "undefined: nothing achieved";
  EXPECT_TRUE(contains(view->why, "no work")) << view->why;
}

TEST(Roofline, FlopsWithoutBytesAreComputeSide) {
  const auto p = place_on_roofline(input(OpKind::gelu, 1e9, 0, 2e-3), synthetic_machine());
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->attainable_gflops_per_s, 1000);
  EXPECT_NEAR(p->efficiency, 0.5, 1e-9);
  EXPECT_EQ(p->bound, Bound::compute);
}

// tanh, exp and erf are polynomials of tens of instructions: a calibrated kernel rate (G
// evaluations/s) × the op's FLOPs per element is their compute roof, not the FMA peak.
TEST(Roofline, TranscendentalOpsAreHeldToTheirCalibratedKernel) {
  Machine m = synthetic_machine();
  m.runs[0].compute["tanh_sp"] = ceiling(0.5);             // 0.5 G evaluations/s on one thread
  RooflineInput in = input(OpKind::tanh, 1e6, 8e6, 2e-3);  // 1 M elements, 1 FLOP each, in 2 ms
  in.roof = {ComputeRoof::Kind::transcendental, "tanh", 1.0};
  auto p = place_on_roofline(in, m);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->compute_roof, "tanh_sp");
  EXPECT_DOUBLE_EQ(p->compute_roof_gflops_per_s, 0.5);
  EXPECT_DOUBLE_EQ(p->peak_gflops_per_s, 1000) << "the FMA peak stays the absolute roof";
  EXPECT_NEAR(p->efficiency, 1.0, 1e-12) << "0.5 G evaluations/s achieved of 0.5";
  EXPECT_EQ(p->bound, Bound::compute) << "left of the FMA ridge, but right of the tanh kernel's";
  // GELU counts 5 FLOPs per element: the roof scales with them.
  m.runs[0].compute["erf_sp"] = ceiling(0.4);
  RooflineInput gelu = input(OpKind::gelu, 5e6, 8e6, 2e-3);
  gelu.roof = {ComputeRoof::Kind::transcendental, "erf", 5.0};
  p = place_on_roofline(gelu, m);
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(p->compute_roof_gflops_per_s, 2.0);
  // A calibration from before these kernels: the FMA roof, and a note that says so.
  p = place_on_roofline(in, synthetic_machine());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->compute_roof, "fma_sp");
  ASSERT_FALSE(p->notes.empty());
  EXPECT_NE(p->notes.back().find("no tanh_sp ceiling"), std::string::npos) << p->notes.back();
}

TEST(Roofline, CacheAwareLevelsUseEachLevelsBandwidth) {
  // Intensity 2 FLOP/B: L1 2000 → capped at the GEMM roof 800; L2 1000 → 800; L3 400; DRAM 100.
  const auto p = place_on_roofline(input(OpKind::conv2d, 2e6, 1e6, 1e-3), synthetic_machine());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->levels.size(), 4u);
  const char* names[] = {"l1", "l2", "l3", "dram"};
  const double gbps[] = {1000, 500, 200, 50};
  const double attainable[] = {800, 800, 400, 100};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p->levels[i].level, names[i]);
    EXPECT_DOUBLE_EQ(p->levels[i].gbytes_per_s, gbps[i]) << "the triad ceiling, not copy";
    EXPECT_DOUBLE_EQ(p->levels[i].attainable_gflops_per_s, attainable[i]) << names[i];
  }
  EXPECT_DOUBLE_EQ(p->attainable_gflops_per_s, 100);
}

// ---- the memory roof at a working set ------------------------------------------------------

// The synthetic machine's 1-thread run with a sweep: 1000 GB/s up to 32 KiB, 500 to 1 MiB (a
// noisy 520 at 2 MiB), 200 at 8 MiB, 60 at 64 MiB, then DRAM's 50. Its CPU: 32 KiB L1 and
// 1 MiB L2 per core, 16 MiB L3 shared by both cores.
Machine swept_machine() {
  Machine m = synthetic_machine();
  CalibrationRun& run = m.runs[0];
  const std::int64_t KiB = 1024;
  const std::int64_t MiB = 1024 * KiB;
  for (const auto& [bytes, gbps] : std::vector<std::pair<std::int64_t, double>>{
           {16 * KiB, 1000}, {32 * KiB, 1000}, {256 * KiB, 500}, {1 * MiB, 500}, {2 * MiB, 520}, {8 * MiB, 200}, {64 * MiB, 60}, {256 * MiB, 50}}) {
    run.sweep.push_back({bytes, "triad", gbps, gbps * 0.95});
    run.sweep.push_back({bytes, "copy", 5000, 5000});  // another kernel: never used
  }
  m.cpu.cores = 2;
  m.cpu.logical_cpus = 2;
  m.cpu.caches = {{1, "Data", 32 * KiB, 1, "sysfs"}, {2, "Unified", 1 * MiB, 1, "sysfs"}, {3, "Unified", 16 * MiB, 2, "sysfs"}};
  return m;
}

TEST(Roofline, BandwidthAtAWorkingSetIsTheSweepsNonRisingEnvelope) {
  const Machine m = swept_machine();
  const CalibrationRun& run = m.runs[0];
  const double MiB = 1024.0 * 1024;
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 1000), 1000) << "smaller than every point: the fastest";
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 32 * 1024), 1000);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 0.5 * MiB), 520) << "a larger set reached 520, so this one can";
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 3 * MiB), 200);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 100 * MiB), 50);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(run, 4096 * MiB), 50) << "past the sweep: DRAM's ceiling";
  // Without a sweep, the levels' bands: a set within a band's upper end gets its triad ceiling.
  Machine bands = synthetic_machine();
  CalibrationRun& r = bands.runs[0];
  r.bandwidth["l1"].to_bytes = 32 * 1024;
  r.bandwidth["l2"].to_bytes = 1 << 20;
  r.bandwidth["l3"].to_bytes = 8 << 20;
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(r, 16 * 1024), 1000);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(r, 0.5 * MiB), 500);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(r, 4 * MiB), 200);
  EXPECT_DOUBLE_EQ(placement::bandwidth_at(r, 9 * MiB), 50);
}

TEST(Roofline, LevelHoldingUsesEachCachesCapacityForTheThreads) {
  // A run from before the sweep decided the levels: the CPU's cache description.
  const Machine m = swept_machine();
  const MachineCpu& cpu = m.cpu;
  const CalibrationRun& old = m.runs[0];
  EXPECT_EQ(placement::level_holding(old, cpu, 1, 30 * 1024), "l1");
  EXPECT_EQ(placement::level_holding(old, cpu, 1, 40 * 1024), "l2");
  EXPECT_EQ(placement::level_holding(old, cpu, 2, 40 * 1024), "l1") << "two cores' L1s";
  EXPECT_EQ(placement::level_holding(old, cpu, 2, 1.5 * 1024 * 1024), "l2");
  EXPECT_EQ(placement::level_holding(old, cpu, 2, 10 << 20), "l3");
  EXPECT_EQ(placement::level_holding(old, cpu, 2, 20 << 20), "dram") << "one shared L3 for both";
  EXPECT_EQ(placement::level_holding(old, MachineCpu{}, 1, 1), "unknown") << "no caches described: no confident 'dram'";
}

TEST(Roofline, LevelHoldingFollowsTheSweepsKneesOverTheCacheDescription) {
  // The CPU says 16 MiB of L3, the sweep ended L3 at 40 MiB (a VM sharing more): the sweep wins.
  Machine m = swept_machine();
  CalibrationRun run = m.runs[0];
  run.bandwidth["l1"].capacity_bytes = 48 * 1024;
  run.bandwidth["l1"].capacity_source = "sweep";
  run.bandwidth["l2"].capacity_bytes = 1 << 20;
  run.bandwidth["l2"].capacity_source = "sweep";
  run.bandwidth["l3"].capacity_bytes = 40 << 20;
  run.bandwidth["l3"].capacity_source = "sweep";
  EXPECT_EQ(placement::level_holding(run, m.cpu, 1, 40 * 1024), "l1");
  EXPECT_EQ(placement::level_holding(run, m.cpu, 1, 30 << 20), "l3") << "past the CPU's 16 MiB, inside the sweep's 40";
  EXPECT_EQ(placement::level_holding(run, m.cpu, 1, 50 << 20), "dram");
  // A level whose end nobody knows: what lies past it is unknown, never a confident "dram".
  run.bandwidth["l3"].capacity_bytes = 0;
  run.bandwidth["l3"].capacity_source = "";
  run.bandwidth["l3"].note = "the sweep ended before this level did";
  EXPECT_EQ(placement::level_holding(run, m.cpu, 1, 512 * 1024), "l2");
  EXPECT_EQ(placement::level_holding(run, m.cpu, 1, 50 << 20), "unknown");
}

TEST(Roofline, AnalyticBytesThatFitACacheAreHeldToThatCachesBandwidth) {
  // A ReLU over 64 Ki floats: 512 KiB moved, 0.125 FLOP/B. Under DRAM's 50 GB/s it would be
  // allowed 6.25 GFLOP/s, and running at 125 GB/s would read as 250%. Its working set is L2's
  // (the sweep's 520 GB/s): 125/520 = 24%.
  const double n = 64 * 1024;
  RooflineInput in = input(OpKind::relu, n, 8 * n, 8 * n / 125e9);
  in.working_set = WorkingSet{8 * n, 0, 64e6};
  const auto p = place_on_roofline(in, swept_machine());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_DOUBLE_EQ(p->memory_gbytes_per_s, 520);
  EXPECT_EQ(p->memory_level, "l2");
  EXPECT_DOUBLE_EQ(p->dram_gbytes_per_s, 50) << "DRAM's ceiling is still reported";
  EXPECT_DOUBLE_EQ(p->ridge_intensity, 1000.0 / 520);
  EXPECT_DOUBLE_EQ(p->attainable_gflops_per_s, 0.125 * 520);
  EXPECT_NEAR(p->efficiency, 125.0 / 520, 1e-9);
  EXPECT_EQ(p->bound, Bound::memory);
  EXPECT_TRUE(contains(p->memory_roof, "working set")) << p->memory_roof;
  EXPECT_TRUE(p->notes.empty());

  // The same bytes counted by the uncore are DRAM traffic: DRAM's roof, whatever the set.
  RooflineInput counted = in;
  counted.bytes.source = ValueSource::measured;
  const auto c = place_on_roofline(counted, swept_machine());
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->memory_gbytes_per_s, 50);
  EXPECT_EQ(c->memory_level, "dram");
  EXPECT_GT(c->efficiency, 1.0);
  EXPECT_TRUE(any_contains(c->notes, "undercounted"));
}

TEST(Roofline, AFasterMemoryRoofMovesTheRidgeAndTheBound) {
  // Intensity 2 FLOP/B: left of DRAM's ridge (800/50 = 16), right of L1's (800/1000).
  RooflineInput in = input(OpKind::conv2d, 2 * 16384, 16384, 1e-3);
  const auto dram = place_on_roofline(in, swept_machine());
  in.working_set = WorkingSet{16384, 0, 16384};
  const auto l1 = place_on_roofline(in, swept_machine());
  ASSERT_TRUE(dram && l1);
  EXPECT_EQ(dram->bound, Bound::memory);
  EXPECT_EQ(l1->bound, Bound::compute);
  EXPECT_DOUBLE_EQ(l1->attainable_gflops_per_s, 800);
  EXPECT_EQ(l1->memory_level, "l1");
}

TEST(Roofline, WeightsComeAtThePasssWorkingSetAndTheTimesAdd) {
  // A linear layer: 0.5 MiB of activations in and out, 8 MiB of weights, in a pass that
  // touches 300 MiB. Activations at the call's 8.5 MiB set (60 GB/s), the weights at the
  // pass's (past the sweep: DRAM's 50): 8.5 MiB / (0.5/60 + 8/50 MiB·s/GB).
  const double MiB = 1024.0 * 1024;
  const double bytes = 8.5 * MiB;
  RooflineInput in = input(OpKind::linear, 2 * 8 * MiB / 4 * 1, bytes, 1e-3);
  in.working_set = WorkingSet{bytes, 8 * MiB, 300 * MiB};
  const auto p = place_on_roofline(in, swept_machine());
  ASSERT_TRUE(p) << p.error().message;
  const double seconds = 0.5 * MiB / 60e9 + 8 * MiB / 50e9;
  EXPECT_NEAR(p->memory_gbytes_per_s, bytes / seconds * 1e-9, 1e-9);
  EXPECT_EQ(p->memory_level, "dram") << "the weights' time dominates, and they come from DRAM";
  EXPECT_TRUE(contains(p->memory_roof, "only the next pass reuses")) << p->memory_roof;
  EXPECT_TRUE(contains(p->memory_roof, "0.524 MB of activations")) << p->memory_roof;

  // A pass small enough to stay in cache keeps its weights there too: the call's set for all.
  in.working_set->pass_bytes = 4 * MiB;
  const auto cached = place_on_roofline(in, swept_machine());
  ASSERT_TRUE(cached);
  EXPECT_DOUBLE_EQ(cached->memory_gbytes_per_s, 60);

  in.working_set->pass_bytes = std::nan("");
  EXPECT_FALSE(place_on_roofline(in, swept_machine())) << "a NaN working set is refused";
}

TEST(Roofline, TheModelTotalIsItsLayersRooflineTimesOverItsOwn) {
  // Layer A: compute-bound, 1.6 GFLOP at the 800 GEMM roof (2 ms allowed), measured 4 ms.
  // Layer B: memory-bound, 100 MB at DRAM's 50 GB/s (2 ms allowed), measured 2.5 ms.
  // The pass: 7 ms measured. The roofline allows it 4 ms: 4/7 = 57%; most of the layers'
  // measured time (4 of 6.5 ms) went to compute-bound A.
  const Machine m = synthetic_machine();
  const auto a = place_on_roofline(input(OpKind::linear, 1.6e9, 1e6, 4e-3), m);
  const auto b = place_on_roofline(input(OpKind::relu, 25e6, 100e6, 2.5e-3), m);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->bound, Bound::compute);
  ASSERT_EQ(b->bound, Bound::memory);
  const RooflineInput total = input(OpKind::add, 1.6e9 + 25e6, 101e6, 7e-3);
  const auto placed = place_on_roofline(total, m);
  ASSERT_TRUE(placed) << placed.error().message;
  const std::optional<RooflinePoint> t = place_total_by_layers(*placed, {&*a, &*b});
  const double allowed = 1.6e9 / 800e9 + 101e6 / 50e9 - 1e6 / 50e9;
  EXPECT_NEAR(t->efficiency, allowed / 7e-3, 1e-9);
  EXPECT_NEAR(t->headroom, 7e-3 / allowed, 1e-9);
  EXPECT_NEAR(t->attainable_gflops_per_s, (1.6e9 + 25e6) / allowed * 1e-9, 1e-6);
  EXPECT_NEAR(t->memory_gbytes_per_s, 50, 1e-9) << "both layers under DRAM's roof";
  EXPECT_EQ(t->memory_level, "mixed");
  EXPECT_EQ(t->bound, Bound::compute);
  EXPECT_TRUE(contains(t->why, "62% went to compute-bound")) << t->why;
  // Without layers, the total is placed like a layer.
  const std::optional<RooflinePoint> alone = place_total_by_layers(*placed, {});
  const auto like_a_layer = place_on_roofline(total, m);
  ASSERT_TRUE(alone && like_a_layer);
  EXPECT_DOUBLE_EQ(alone->efficiency, like_a_layer->efficiency);
}

TEST(Roofline, UsesTheRunWithTheSameThreadCountAndPrecision) {
  const double flops = 1e9;
  const auto one = place_on_roofline(input(OpKind::attention, flops, 1e6, 1e-2, 1), synthetic_machine());
  const auto two = place_on_roofline(input(OpKind::attention, flops, 1e6, 1e-2, 2), synthetic_machine());
  ASSERT_TRUE(one && two);
  EXPECT_DOUBLE_EQ(one->compute_roof_gflops_per_s, 800);
  EXPECT_DOUBLE_EQ(two->compute_roof_gflops_per_s, 1600);
  EXPECT_DOUBLE_EQ(two->dram_gbytes_per_s, 100);

  RooflineInput dp = input(OpKind::linear, flops, 1e6, 1e-2);
  dp.precision = Precision::dp;
  const auto d = place_on_roofline(dp, synthetic_machine());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->compute_roof, "gemm_dp");
  EXPECT_DOUBLE_EQ(d->compute_roof_gflops_per_s, 400);
  EXPECT_DOUBLE_EQ(d->peak_gflops_per_s, 500);
}

TEST(Roofline, ErrorsSayWhatIsMissing) {
  const auto none = place_on_roofline(input(OpKind::linear, 1, 1, 1, 4), synthetic_machine());
  ASSERT_FALSE(none);
  EXPECT_TRUE(contains(none.error().message, "4 thread")) << none.error().message;
  EXPECT_TRUE(contains(none.error().message, "1, 2")) << none.error().message;

  EXPECT_FALSE(place_on_roofline(input(OpKind::linear, 1, 1, 0), synthetic_machine()));
  EXPECT_FALSE(place_on_roofline(input(OpKind::linear, -1, 1, 1), synthetic_machine()));

  Machine no_dram = synthetic_machine();
  no_dram.runs[0].bandwidth.erase("dram");
  const auto d = place_on_roofline(input(OpKind::linear, 1, 1, 1), no_dram);
  ASSERT_FALSE(d);
  EXPECT_TRUE(contains(d.error().message, "DRAM")) << d.error().message;

  Machine no_compute = synthetic_machine();
  no_compute.runs[0].compute.clear();
  EXPECT_FALSE(place_on_roofline(input(OpKind::linear, 1, 1, 1), no_compute));
}

TEST(Roofline, AGemmOpWithoutAGemmCeilingFallsBackToTheFmaPeakWithANote) {
  Machine m = synthetic_machine();
  m.runs[0].compute.erase("gemm_sp");
  const auto p = place_on_roofline(input(OpKind::linear, 1e9, 1e6, 1e-2), m);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->compute_roof, "fma_sp");
  EXPECT_DOUBLE_EQ(p->compute_roof_gflops_per_s, 1000);
  EXPECT_TRUE(any_contains(p->notes, "FMA peak"));
}

TEST(Roofline, AchievingMoreThanAttainableIsNoted) {
  // Analytic bytes served from cache: 100 GB/s "from DRAM" on a 50 GB/s machine.
  const auto p = place_on_roofline(input(OpKind::add, 1e6, 12e6, 12e6 / 100e9), synthetic_machine());
  ASSERT_TRUE(p);
  EXPECT_NEAR(p->efficiency, 2.0, 1e-9);
  EXPECT_TRUE(any_contains(p->notes, "undercounted"));
}

TEST(BoundRule, ThresholdsAreParametersAndEdgesAreExclusive) {
  const BoundRule rule;  // 10%, 100 µs
  using placement::classify_bound;
  EXPECT_EQ(classify_bound(1, 1, 1, 16, 0.099, 99e-6, rule).bound, Bound::overhead);
  EXPECT_EQ(classify_bound(1, 1, 1, 16, 0.10, 99e-6, rule).bound, Bound::memory) << "10% is not below 10%";
  EXPECT_EQ(classify_bound(1, 1, 1, 16, 0.05, 100e-6, rule).bound, Bound::memory) << "100 µs is not short";
  EXPECT_EQ(classify_bound(1, 1, 16, 16, 0.5, 1, rule).bound, Bound::compute) << "at the ridge: compute";
  EXPECT_EQ(classify_bound(1, 1, 15.9, 16, 0.5, 1, rule).bound, Bound::memory);
  BoundRule strict;
  strict.overhead_efficiency = 0.5;
  strict.overhead_seconds = 1.0;
  EXPECT_EQ(classify_bound(1, 1, 100, 16, 0.4, 0.5, strict).bound, Bound::overhead);
}

// ---- bytes fallback chain ----

CounterReading reading(double value, CounterStatus status, double fraction = 1.0) {
  CounterReading r;
  r.value = value;
  r.raw = static_cast<std::uint64_t>(value * fraction);
  r.status = status;
  r.running_fraction = status == CounterStatus::ok ? 1.0 : status == CounterStatus::multiplexed ? fraction : 0.0;
  return r;
}

TEST(BytesChain, DramCountersFirst) {
  BytesInputs in;
  in.dram_bytes = reading(1e6, CounterStatus::ok);
  in.llc_misses = reading(100, CounterStatus::ok);
  in.analytic_bytes = 5e5;
  const auto b = choose_bytes(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->origin, BytesOrigin::dram_counters);
  EXPECT_DOUBLE_EQ(b->bytes.value, 1e6);
  EXPECT_EQ(b->bytes.source, ValueSource::measured);
  EXPECT_EQ(b->bytes.status, CounterStatus::ok);
  EXPECT_TRUE(b->skipped.empty());
  EXPECT_FALSE(b->bytes.detail.empty());
}

TEST(BytesChain, MultiplexedDramIsUsedAndSaysSo) {
  BytesInputs in;
  in.dram_bytes = reading(2e6, CounterStatus::multiplexed, 0.4);
  in.analytic_bytes = 5e5;
  const auto b = choose_bytes(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->origin, BytesOrigin::dram_counters);
  EXPECT_EQ(b->bytes.status, CounterStatus::multiplexed);
  EXPECT_DOUBLE_EQ(b->bytes.running_fraction, 0.4);
  EXPECT_DOUBLE_EQ(b->bytes.value, 2e6);
}

TEST(BytesChain, UnsupportedDramFallsBackToLlcMissesTimesLineSize) {
  BytesInputs in;
  in.dram_bytes = reading(0, CounterStatus::unsupported);
  in.llc_misses = reading(1000, CounterStatus::ok);
  in.analytic_bytes = 5e5;
  const auto b = choose_bytes(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->origin, BytesOrigin::llc_misses);
  EXPECT_DOUBLE_EQ(b->bytes.value, 64000);
  EXPECT_EQ(b->bytes.source, ValueSource::estimated);
  ASSERT_EQ(b->skipped.size(), 1u);
  EXPECT_TRUE(contains(b->skipped[0], "unsupported")) << b->skipped[0];

  in.line_bytes = 128;
  in.llc_misses = reading(1000, CounterStatus::multiplexed, 0.5);
  const auto wide = choose_bytes(in);
  ASSERT_TRUE(wide);
  EXPECT_DOUBLE_EQ(wide->bytes.value, 128000);
  EXPECT_EQ(wide->bytes.status, CounterStatus::multiplexed);
}

TEST(BytesChain, NoCountersFallBackToTheAnalyticMinimum) {
  BytesInputs in;
  in.dram_bytes = reading(0, CounterStatus::no_permission);
  in.llc_misses = reading(0, CounterStatus::not_counted);
  in.analytic_bytes = 5e5;
  const auto b = choose_bytes(in);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->origin, BytesOrigin::analytic_minimum);
  EXPECT_EQ(b->bytes.source, ValueSource::analytic);
  EXPECT_DOUBLE_EQ(b->bytes.value, 5e5);
  ASSERT_EQ(b->skipped.size(), 2u);
  EXPECT_TRUE(contains(b->skipped[0], "no-permission")) << b->skipped[0];
  EXPECT_TRUE(contains(b->skipped[1], "not-counted")) << b->skipped[1];

  BytesInputs absent;  // no dram or llc group at all
  absent.analytic_bytes = 10;
  const auto a = choose_bytes(absent);
  ASSERT_TRUE(a);
  EXPECT_TRUE(contains(a->skipped[0], "not counted")) << a->skipped[0];
  EXPECT_EQ(bytes_origin_name(a->origin), "analytic-minimum");
}

TEST(BytesChain, NothingAtAllIsAnError) {
  BytesInputs in;
  in.dram_bytes = reading(0, CounterStatus::unsupported);
  const auto b = choose_bytes(in);
  ASSERT_FALSE(b);
  EXPECT_TRUE(contains(b.error().message, "unsupported")) << b.error().message;
}

TEST(BytesChain, FeedsThePlacementWithItsSource) {
  BytesInputs in;
  in.dram_bytes = reading(0, CounterStatus::unsupported);
  in.llc_misses = reading(1e6, CounterStatus::ok);  // 64 MB
  const auto b = choose_bytes(in);
  ASSERT_TRUE(b);
  RooflineInput r = input(OpKind::relu, 16e6, 0, 2e-3);
  r.bytes = b->bytes;
  const auto p = place_on_roofline(r, synthetic_machine());
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bytes.source, ValueSource::estimated);
  EXPECT_DOUBLE_EQ(p->intensity, 0.25);
  EXPECT_NEAR(p->gbytes_per_s, 32, 1e-9);
}

// ---- FLOPs comparison ----

TEST(FlopsComparison, AgreementWithinTolerance) {
  const FlopsComparison c = compare_flops(1.03e9, 1e9, OpKind::linear);
  EXPECT_NEAR(c.ratio, 1.03, 1e-12);
  EXPECT_TRUE(c.agrees);
  EXPECT_TRUE(c.reasons.empty());
  EXPECT_FALSE(compare_flops(1.03e9, 1e9, OpKind::linear, false, 0.01).agrees);
}

TEST(FlopsComparison, ConvolutionAboveAnalyticNamesIm2colAndTilePadding) {
  const FlopsComparison c = compare_flops(1.2e9, 1e9, OpKind::conv2d);
  EXPECT_FALSE(c.agrees);
  EXPECT_TRUE(any_contains(c.reasons, "im2col"));
  EXPECT_TRUE(any_contains(c.reasons, "padding"));
  const FlopsComparison below = compare_flops(0.6e9, 1e9, OpKind::conv2d);
  EXPECT_TRUE(any_contains(below.reasons, "Winograd"));
  EXPECT_FALSE(any_contains(below.reasons, "im2col lowering"));
}

TEST(FlopsComparison, CausalAttentionBelowAnalyticNamesTheMask) {
  const FlopsComparison causal = compare_flops(0.55e9, 1e9, OpKind::attention, true);
  EXPECT_NEAR(causal.ratio, 0.55, 1e-12);
  EXPECT_TRUE(any_contains(causal.reasons, "causal"));
  const FlopsComparison full = compare_flops(0.55e9, 1e9, OpKind::attention, false);
  EXPECT_FALSE(any_contains(full.reasons, "causal"));
  const FlopsComparison above = compare_flops(1.5e9, 1e9, OpKind::attention, true);
  EXPECT_TRUE(any_contains(above.reasons, "softmax"));
  // The other products run only their GEMMs: neither reason is theirs, whatever `causal` says.
  for (OpKind op : {OpKind::linear, OpKind::matmul}) {
    const FlopsComparison below = compare_flops(0.55e9, 1e9, op, true);
    EXPECT_FALSE(any_contains(below.reasons, "causal")) << op_name(op);
    const FlopsComparison product_above = compare_flops(1.5e9, 1e9, op, true);
    EXPECT_TRUE(any_contains(product_above.reasons, "register tiles")) << op_name(op);
    EXPECT_FALSE(any_contains(product_above.reasons, "softmax")) << op_name(op);
  }
}

TEST(FlopsComparison, TranscendentalsAndDataMovement) {
  EXPECT_TRUE(any_contains(compare_flops(5e6, 1e6, OpKind::gelu).reasons, "polynomial"));
  EXPECT_TRUE(any_contains(compare_flops(1e3, 0, OpKind::transpose).reasons, "moves data"));
  const FlopsComparison none = compare_flops(0, 0, OpKind::reshape);
  EXPECT_TRUE(none.agrees);
  EXPECT_EQ(none.ratio, 0);
}

TEST(Names, SourcesOriginsAndBounds) {
  EXPECT_EQ(value_source_name(ValueSource::measured), "measured");
  EXPECT_EQ(value_source_name(ValueSource::analytic), "analytic");
  EXPECT_EQ(value_source_name(ValueSource::estimated), "estimated");
  EXPECT_EQ(bound_name(Bound::compute), "compute");
  EXPECT_EQ(bound_name(Bound::memory), "memory");
  EXPECT_EQ(bound_name(Bound::overhead), "overhead");
  EXPECT_EQ(bytes_origin_name(BytesOrigin::dram_counters), "dram-counters");
  EXPECT_EQ(bytes_origin_name(BytesOrigin::llc_misses), "llc-misses");
}

}  // namespace
}  // namespace hwprof
