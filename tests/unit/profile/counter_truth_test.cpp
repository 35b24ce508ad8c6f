// Counter truth (src/profile/counter_truth.cpp): the read cost measured where it is paid, by the
// probe region that LayerRegions opens and closes before each layer, and subtracted from the
// layer's figures without going below zero. On a session with a fake clock and counter set
// (support/fake_session.hpp), so that every figure is exact. No hardware.
#include <vector>

#include <gtest/gtest.h>

#include "fake_session.hpp"
#include "hwprof/session.hpp"
#include "profile/counter_truth.hpp"
#include "profile/layer_regions.hpp"

namespace hwprof {
namespace {

using ::hwprof::test::fake_extra_read_cost;
using ::hwprof::test::fake_ops;
using ::hwprof::test::open_fake;

// Counter truth (src/profile/counter_truth.hpp): reads cost more between layers than in the
// quiet loop that measured the session's overhead at open (a spinning thread team). The
// probe region that LayerRegions opens and closes before each layer counts that cost where it
// is paid, and subtracting it leaves the layer's own work.
TEST(CounterTruth, TheProbeBeforeEachLayerMeasuresTheReadCostWhereItIsPaid) {
  auto s = open_fake(3);
  const int layer = s->region("forward:conv");
  const int probe = s->region("[probe] forward:conv");
  const int next = s->region("forward:relu");
  const int next_probe = s->region("[probe] forward:relu");
  LayerRegions regions(*s, 2, 0);
  regions.set_id(0, Phase::forward, layer);
  regions.set_probe(0, Phase::forward, probe);
  regions.set_id(1, Phase::forward, next);
  regions.set_probe(1, Phase::forward, next_probe);
  fake_extra_read_cost = 100;  // in the passes, each read costs 100 more than at open
  for (int pass = 0; pass < 10; ++pass) {
    regions.on_begin(0, Phase::forward);
    fake_ops += 150;  // the conv's own work
    regions.on_end(0, Phase::forward);
    regions.on_begin(1, Phase::forward);
    fake_ops += 7;  // the relu's: under one read's cost
    regions.on_end(1, Phase::forward);
  }
  fake_extra_read_cost = 0;
  RegionReport conv = s->report(layer);
  RegionReport relu = s->report(next);
  EXPECT_DOUBLE_EQ(conv.counters[0].per_call(), 250) << "the layer's own 150 and the 100 its closing read cost more than at open";
  const std::vector<double> cost = profile::read_cost_per_call(s->report(probe));
  EXPECT_DOUBLE_EQ(cost[0], 100);
  EXPECT_EQ(cost[1], 0) << "an unavailable counter has no cost";
  const std::vector<double> subtracted = profile::subtract_read_cost(conv, cost, cost);
  EXPECT_DOUBLE_EQ(conv.counters[0].per_call(), 150);
  EXPECT_FALSE(conv.counters[0].below_resolution) << "more left than one reading costs";
  EXPECT_DOUBLE_EQ(subtracted[0], 100);
  const std::vector<double> relu_cost = profile::read_cost_per_call(s->report(next_probe));
  profile::subtract_read_cost(relu, relu_cost, relu_cost);
  EXPECT_DOUBLE_EQ(relu.counters[0].per_call(), 7);
  EXPECT_TRUE(relu.counters[0].below_resolution) << "7 left of a 107 reading: under one read's cost";
}

TEST(CounterTruth, WhatIsLeftNeverGoesBelowZero) {
  RegionReport r;
  CounterTotal& c = r.counters.emplace_back();
  c.name = "task-clock";
  c.unit = "ns";
  c.samples = 4;
  c.inclusive = 4 * 90.0;
  c.exclusive = c.inclusive;
  profile::subtract_read_cost(r, {100.0}, {100.0});
  EXPECT_EQ(r.counters[0].inclusive, 0.0);
  EXPECT_TRUE(r.counters[0].below_resolution);
}

}  // namespace
}  // namespace hwprof
