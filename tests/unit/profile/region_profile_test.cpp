// A torch run's regions as a profile (src/profile/region_profile.cpp): a region without work of
// its own (a module, a user scope) carries the work of the ops run inside it, from the call
// tree, each op once; none where the tree lost calls.
#include <string>

#include <gtest/gtest.h>

#include "hwprof/profiler.hpp"

namespace hwprof {
namespace {

RegionReport region(int id, const std::string& name, std::uint64_t calls, std::optional<double> flops = std::nullopt) {
  RegionReport r;
  r.id = id;
  r.name = name;
  r.calls = calls;
  r.inclusive_ns.n = calls;
  r.inclusive_ns.median = r.inclusive_ns.mean = 1000.0;
  r.exclusive_ns = r.inclusive_ns;
  r.total_inclusive_ns = 1000.0 * static_cast<double>(calls);
  if (flops) {
    r.work_flops = *flops;
    r.work_bytes = *flops / 2;
  }
  return r;
}

CallPath path(int parent, int region, int depth, std::uint64_t calls) {
  CallPath c;
  c.parent = parent;
  c.region = region;
  c.depth = depth;
  c.calls = calls;
  c.inclusive_ns = 1000.0 * static_cast<double>(calls);
  return c;
}

// Net (2 calls) runs conv1 (a module) and relu; conv1 runs aten::conv2d, whose inner
// convolution carries no work (the outer op carries it); the optimizer step runs add_ 3 times.
SessionSnapshot torch_run() {
  SessionSnapshot s;
  s.observer = "torch";
  s.regions = {region(0, "Net", 2),
               region(1, "Net.conv1", 2),
               region(2, "aten::conv2d", 2, 100.0),
               region(3, "aten::convolution", 2),
               region(4, "aten::relu", 2, 10.0),
               region(5, "Optimizer.step", 1),
               region(6, "aten::add_", 3, 7.0)};
  s.call_tree = {path(-1, 0, 0, 2), path(0, 1, 1, 2), path(1, 2, 2, 2), path(2, 3, 3, 2), path(0, 4, 1, 2), path(-1, 5, 0, 1), path(5, 6, 1, 3)};
  SessionThread t;
  t.number = 1;
  s.threads = {t};
  return s;
}

const LayerProfile& row(const Profile& p, const std::string& name) {
  for (const LayerProfile& l : p.layers) {
    if (l.name == name) return l;
  }
  static const LayerProfile none;
  ADD_FAILURE() << "no row " << name;
  return none;
}

TEST(TorchRegions, AModuleCarriesTheWorkOfTheOpsItRanOnce) {
  const Profile p = profile_of(torch_run(), RegionProfileOptions{});
  EXPECT_EQ(p.kind, ProfileKind::torch);
  EXPECT_EQ(row(p, "Net.conv1").flops, 100);
  EXPECT_EQ(row(p, "Net").flops, 110);  // conv2d + relu, the inner convolution not again
  EXPECT_EQ(row(p, "Net").bytes, 55);
  EXPECT_EQ(row(p, "Optimizer.step").flops, 21);  // 3 calls of add_ in its 1 call
  EXPECT_EQ(row(p, "aten::convolution").flops, 0);
  EXPECT_EQ(row(p, "aten::conv2d").flops, 100);
  // The program total sums the ops alone: 2 × 100 + 2 × 10 + 3 × 7.
  EXPECT_EQ(p.total.flops, 241);
}

TEST(TorchRegions, NoWorkWhereTheCallTreeLostCalls) {
  SessionSnapshot s = torch_run();
  s.threads[0].paths_dropped = 5;
  const Profile p = profile_of(s, RegionProfileOptions{});
  EXPECT_EQ(row(p, "Net").flops, 0) << "a part of the work would be a wrong number";
  EXPECT_EQ(row(p, "aten::conv2d").flops, 100);
}

TEST(TorchRegions, ARegionNestedInItselfCountsItsOutermostCalls) {
  SessionSnapshot s = torch_run();
  // Net calls itself once inside each call: its inner path's work is already in the outer one.
  s.regions[0].calls = 4;
  s.call_tree.push_back(path(0, 0, 1, 2));
  s.call_tree.push_back(path(7, 4, 2, 2));
  s.regions[4].calls = 4;
  const Profile p = profile_of(s, RegionProfileOptions{});
  EXPECT_EQ(row(p, "Net").flops, (200 + 20 + 20) / 4);
}

TEST(TorchRegions, ARegionsProfileIsLeftAsItsProgramSaid) {
  SessionSnapshot s = torch_run();
  s.observer.clear();
  const Profile p = profile_of(s, RegionProfileOptions{});
  EXPECT_EQ(p.kind, ProfileKind::regions);
  EXPECT_EQ(row(p, "Net").flops, 0);
}

}  // namespace
}  // namespace hwprof
