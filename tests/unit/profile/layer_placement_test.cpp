// A layer's measured side (src/placement/layer_placement.cpp) from a group of a made-up family:
// the roofline finds the FLOP, DRAM and LLC metrics by their ROLE (counters/README.md, "The
// format"), whatever their display names. No hardware.
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwprof/event_group.hpp"
#include "made_up_calibration.hpp"
#include "placement/layer_placement.hpp"
#include "profile/counter_truth.hpp"

namespace hwprof {
namespace {

// Names no shipped group uses; a decoy called "SP FLOP" has no role and must be ignored.
constexpr const char* kMadeUpFamily = R"(TITLE A family whose metrics are named its own way
SCOPE core
FAMILIES zen5

EVENTS
vec    cpu/event=0x03,umask=0x4f/
lines  amd_umc/event=0x14/
miss   amd_l3/event=0x04,umask=0xff/

METRICS
Vector work [FLOP] ROLE flops                = 8 * vec
SP FLOP [FLOP]                               = vec
Memory traffic [bytes] ROLE dram_bytes       = 64 * lines
Lines from afar [bytes] ROLE llc_miss_bytes  = 64 * miss
)";

CounterTotal counted(const std::string& name, double per_call) {
  CounterTotal c;
  c.name = name;
  c.status = CounterStatus::ok;
  c.inclusive = per_call;
  c.samples = 1;
  c.min_running_fraction = 1.0;
  return c;
}

// One call of a region that counted `values` (vec, lines, miss) under the made-up group.
RegionReport region_of(const EventGroup& group, const std::vector<std::optional<double>>& values) {
  RegionReport r;
  r.name = "fc1";
  r.calls = 1;
  r.inclusive_ns.median = 1e6;
  for (std::size_t i = 0; i < group.events.size(); ++i) {
    CounterTotal c = counted(group.events[i].event, values[i].value_or(0.0));
    if (!values[i]) {
      c.status = CounterStatus::unsupported;
      c.samples = 0;
    }
    r.counters.push_back(c);
  }
  r.metrics = profile::metrics_of(r, group, 1e-3, {});
  return r;
}

// A linear layer of 100 analytic bytes: under the GEMM ceiling, its counted FLOPs checked with
// its op's reasons.
placement::RowWork linear_layer() {
  return {.kind = placement::RowWork::Kind::layer,
          .roof = {ComputeRoof::Kind::gemm, {}, 0.0},
          .op = OpKind::linear,
          .working_set = WorkingSet{100.0, 0.0, 0.0}};
}

TEST(LayerPlacement, FindsTheGroupsMetricsByRoleWhateverTheirNames) {
  auto group = parse_event_group(kMadeUpFamily, "made-up/flops.txt");
  ASSERT_TRUE(group.ok()) << group.error().message;
  const RegionReport r = region_of(*group, {1000.0, 500.0, 2000.0});
  ASSERT_EQ(r.metrics.size(), 4u);
  EXPECT_EQ(r.metrics[0].role, MetricRole::flops);
  EXPECT_EQ(r.metrics[1].role, MetricRole::none);

  LayerProfile layer;
  layer.flops = 7000;
  layer.bytes = 100;
  placement::fill_measurements(layer, r, test::made_up_calibration(describe_this_cpu()), 1, linear_layer());
  ASSERT_TRUE(layer.flops_check.has_value()) << "the FLOP metric was not found by its role";
  EXPECT_DOUBLE_EQ(layer.flops_check->measured, 8000.0);  // "Vector work", not the decoy "SP FLOP"
  EXPECT_EQ(layer.bytes_origin, BytesOrigin::dram_counters);
  ASSERT_TRUE(layer.roofline.has_value()) << layer.roofline_error;
  EXPECT_EQ(layer.roofline->flops.source, ValueSource::measured);
  EXPECT_DOUBLE_EQ(layer.roofline->flops.value, 8000.0);
  EXPECT_DOUBLE_EQ(layer.roofline->bytes.value, 64 * 500.0);
  // Reports keep every metric under its own name.
  ASSERT_EQ(layer.metrics.size(), 4u);
  EXPECT_EQ(layer.metrics[0].name, "Vector work");
  EXPECT_EQ(layer.roofline->compute_roof, "gemm_sp");
}

// A function's roof is its rate × the FLOPs counted per evaluation: where the counters count
// more FLOPs than the cost model (a polynomial's), the roof rises in the same ratio, so that the
// achieved rate and its roof count the same operations.
TEST(LayerPlacement, CountedFlopsRescaleAFunctionsRoof) {
  auto group = parse_event_group(kMadeUpFamily, "made-up/flops.txt");
  ASSERT_TRUE(group.ok()) << group.error().message;
  const RegionReport r = region_of(*group, {1000.0, 500.0, 2000.0});  // 8000 FLOPs counted
  Machine machine = test::made_up_calibration(describe_this_cpu());
  machine.runs[0].compute["erf_sp"] = test::made_up_ceiling(1.0);  // 1 G evaluations/s
  LayerProfile layer;
  layer.flops = 7000;  // 1000 evaluations of 7 FLOPs each, by the cost model
  layer.bytes = 100;
  placement::RowWork gelu{.kind = placement::RowWork::Kind::layer,
                          .roof = {ComputeRoof::Kind::transcendental, "erf", 7.0},
                          .op = OpKind::gelu,
                          .working_set = WorkingSet{100.0, 0.0, 0.0}};
  placement::fill_measurements(layer, r, machine, 1, gelu);
  ASSERT_TRUE(layer.roofline.has_value()) << layer.roofline_error;
  EXPECT_EQ(layer.roofline->compute_roof, "erf_sp");
  EXPECT_DOUBLE_EQ(layer.roofline->compute_roof_gflops_per_s, 8.0) << "1 G evaluations/s × 8 counted FLOPs each";
  // Analytic FLOPs (no FP counters): the cost model's 7 per evaluation.
  const RegionReport uncounted = region_of(*group, {std::nullopt, 500.0, 2000.0});
  LayerProfile analytic;
  analytic.flops = 7000;
  analytic.bytes = 100;
  placement::fill_measurements(analytic, uncounted, machine, 1, gelu);
  ASSERT_TRUE(analytic.roofline.has_value()) << analytic.roofline_error;
  EXPECT_DOUBLE_EQ(analytic.roofline->compute_roof_gflops_per_s, 7.0);
}

TEST(LayerPlacement, WithoutDramTheLlcRoleGivesTheBytes) {
  auto group = parse_event_group(kMadeUpFamily, "made-up/flops.txt");
  ASSERT_TRUE(group.ok()) << group.error().message;
  const RegionReport r = region_of(*group, {1000.0, std::nullopt, 2000.0});
  LayerProfile layer;
  layer.flops = 7000;
  layer.bytes = 100;
  placement::fill_measurements(layer, r, std::nullopt, 1, linear_layer());
  EXPECT_EQ(layer.bytes_origin, BytesOrigin::llc_misses);
}

TEST(LayerPlacement, AMetricWithoutARoleFeedsNothing) {
  // The same formulas under the shipped names, but no roles: shown, never used.
  auto group = parse_event_group(
      "TITLE t\nSCOPE core\nFAMILIES zen5\nEVENTS\nvec cpu/event=0x03/\nlines amd_umc/event=0x14/\n"
      "METRICS\nFLOP [FLOP] = 8 * vec\nDRAM bytes [bytes] = 64 * lines\n",
      "made-up/old.txt");
  ASSERT_TRUE(group.ok()) << group.error().message;
  const RegionReport r = region_of(*group, {1000.0, 500.0});
  LayerProfile layer;
  layer.flops = 7000;
  layer.bytes = 100;
  placement::fill_measurements(layer, r, std::nullopt, 1, linear_layer());
  EXPECT_FALSE(layer.flops_check.has_value());
  EXPECT_EQ(layer.bytes_origin, BytesOrigin::analytic_minimum);
  EXPECT_EQ(layer.metrics.size(), 2u);
}

}  // namespace
}  // namespace hwprof
