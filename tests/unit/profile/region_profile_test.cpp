// A torch run's regions as a profile (src/placement/region_profile.cpp): a region without work of
// its own (a module, a user scope) carries the work of the ops run inside it, from the call
// tree, each op once; none where the tree lost calls.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analyze/layer_view.hpp"
#include "hwprof/engine/profiler.hpp"
#include "hwprof/engine/report.hpp"
#include "made_up_calibration.hpp"
#include "placement/row_time.hpp"

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

// A call path; `flops` per call for an op that carries its work (its calls' work summed on the
// path as the session sums it, bytes half of it), 0 for one that carries none.
CallPath path(int parent, int region, int depth, std::uint64_t calls, double flops = 0.0) {
  CallPath c;
  c.parent = parent;
  c.region = region;
  c.depth = depth;
  c.calls = calls;
  c.inclusive_ns = 1000.0 * static_cast<double>(calls);
  c.flops = flops * static_cast<double>(calls);
  c.bytes = c.flops / 2;
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
  s.call_tree = {path(-1, 0, 0, 2),      path(0, 1, 1, 2),  path(1, 2, 2, 2, 100.0), path(2, 3, 3, 2),
                 path(0, 4, 1, 2, 10.0), path(-1, 5, 0, 1), path(5, 6, 1, 3, 7.0)};
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
  s.call_tree.push_back(path(7, 4, 2, 2, 10.0));
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

// The same run with its regions' roles, as hwprof::torch sets them, and a backward pass: Net's
// and conv1's backward regions around conv2d's backward function, which runs
// aten::convolution_backward; AccumulateGrad outside every module.
SessionSnapshot torch_run_with_roles() {
  SessionSnapshot s = torch_run();
  const RegionRole roles[] = {RegionRole::module_forward, RegionRole::module_forward, RegionRole::op_forward, RegionRole::op_forward,
                              RegionRole::op_forward,     RegionRole::optimizer,      RegionRole::op_forward};
  for (std::size_t k = 0; k < s.regions.size(); ++k) s.regions[k].role = roles[k];
  s.regions[3].work_note = "counted in the op around it";
  s.regions.push_back(region(7, "Net (backward)", 2));
  s.regions.push_back(region(8, "Net.conv1 (backward)", 2));
  s.regions.push_back(region(9, "aten::conv2d [2x1x8x8] (backward)", 2));
  s.regions.push_back(region(10, "aten::convolution_backward [2x4x6x6] (backward)", 2, 200.0));
  s.regions.push_back(region(11, "torch::autograd::AccumulateGrad", 3));
  s.regions[7].role = s.regions[8].role = RegionRole::module_backward;
  s.regions[9].role = s.regions[10].role = s.regions[11].role = RegionRole::op_backward;
  s.regions[9].work_note = "counted in the ops it runs";
  s.regions[11].work_note = "not counted: hwprof has no formula for this op";
  const auto base = static_cast<int>(s.call_tree.size());
  s.call_tree.push_back(path(-1, 7, 0, 2));
  s.call_tree.push_back(path(base, 8, 1, 2));
  s.call_tree.push_back(path(base + 1, 9, 2, 2));
  s.call_tree.push_back(path(base + 2, 10, 3, 2, 200.0));
  s.call_tree.push_back(path(-1, 11, 0, 3));
  return s;
}

const LayerProfile& row(const Profile& p, const std::string& name, LayerPhase phase) {
  for (const LayerProfile& l : p.layers) {
    if (l.name == name && l.phase == phase) return l;
  }
  static const LayerProfile none;
  ADD_FAILURE() << "no row " << name << " (" << layer_phase_name(phase) << ")";
  return none;
}

TEST(TorchRegions, EachRowSaysWhatItIsAndInWhichPhase) {
  const Profile p = profile_of(torch_run_with_roles(), RegionProfileOptions{});
  EXPECT_EQ(row(p, "Net.conv1", LayerPhase::forward).op, "module");
  EXPECT_EQ(row(p, "aten::conv2d", LayerPhase::forward).op, "aten::conv2d");
  EXPECT_EQ(row(p, "Optimizer.step", LayerPhase::optimizer).op, "optimizer");
  // A backward region is named like its forward one; its phase tells them apart.
  const LayerProfile& conv1_backward = row(p, "Net.conv1", LayerPhase::backward);
  EXPECT_EQ(conv1_backward.op, "module");
  EXPECT_EQ(conv1_backward.flops, 200) << "its backward function's op's work";
  EXPECT_EQ(row(p, "Net", LayerPhase::backward).flops, 200);
  EXPECT_EQ(row(p, "aten::conv2d [2x1x8x8]", LayerPhase::backward).op, "aten::conv2d");
  EXPECT_EQ(row(p, "aten::convolution_backward [2x4x6x6]", LayerPhase::backward).flops, 200);
  EXPECT_EQ(row(p, "Net", LayerPhase::forward).flops, 110) << "the forward module's work is its forward ops' alone";
}

TEST(TorchRegions, ARowWithoutACountSaysWhyAndHasNoRate) {
  const Profile p = profile_of(torch_run_with_roles(), RegionProfileOptions{});
  const LayerProfile& accumulate = row(p, "torch::autograd::AccumulateGrad", LayerPhase::backward);
  EXPECT_EQ(accumulate.work_note, "not counted: hwprof has no formula for this op");
  const analysis::LayerNumbers n = analysis::layer_numbers(accumulate);
  EXPECT_FALSE(n.gflops_per_s.has_value()) << "an op with no formula has no rate, not 0 FLOP/s";
  EXPECT_FALSE(n.intensity.has_value());
  EXPECT_EQ(row(p, "aten::convolution", LayerPhase::forward).work_note, "counted in the op around it");
  EXPECT_TRUE(row(p, "aten::conv2d", LayerPhase::forward).work_note.empty());
  EXPECT_TRUE(analysis::layer_numbers(row(p, "aten::conv2d", LayerPhase::forward)).gflops_per_s.has_value());
}

TEST(TorchRegions, OpsRunOnlyInsideOtherRowsAreLeftOutOfTheTableUnlessAskedFor) {
  const Profile p = profile_of(torch_run_with_roles(), RegionProfileOptions{});
  EXPECT_TRUE(row(p, "aten::conv2d", LayerPhase::forward).nested_op);
  EXPECT_TRUE(row(p, "aten::add_", LayerPhase::forward).nested_op) << "inside the optimizer's step";
  EXPECT_FALSE(row(p, "torch::autograd::AccumulateGrad", LayerPhase::backward).nested_op) << "outside every module: its time is its own";
  EXPECT_FALSE(row(p, "Net.conv1", LayerPhase::forward).nested_op) << "a module is never left out";
  ProfileTableOptions o;
  o.top = 0;
  const auto main_table = [](const std::string& text) { return text.substr(0, text.find("Call paths")); };
  const std::string table = main_table(profile_table(p, o));
  EXPECT_NE(table.find("Net.conv1"), std::string::npos);
  EXPECT_NE(table.find("torch::autograd::AccumulateGrad"), std::string::npos);
  EXPECT_EQ(table.find("aten::convolution_backward"), std::string::npos) << table;
  EXPECT_NE(table.find("6 op rows ran only inside the rows above"), std::string::npos) << table;
  EXPECT_NE(table.find("not counted"), std::string::npos) << "AccumulateGrad's why: " << table;
  o.nested_ops = true;
  EXPECT_NE(main_table(profile_table(p, o)).find("aten::convolution_backward"), std::string::npos);
  // Without a whole call tree, no op is known to be inside only: every row is shown.
  SessionSnapshot s = torch_run_with_roles();
  s.threads[0].paths_dropped = 1;
  EXPECT_FALSE(row(profile_of(s, RegionProfileOptions{}), "aten::conv2d", LayerPhase::forward).nested_op);
}

TEST(TorchRegions, AGemmsWorkIsPlacedUnderTheGemmCeilingTheRestUnderTheFmaPeak) {
  SessionSnapshot s = torch_run_with_roles();
  s.regions[2].roof.kind = ComputeRoof::Kind::gemm;   // aten::conv2d
  s.regions[10].roof.kind = ComputeRoof::Kind::gemm;  // aten::convolution_backward
  RegionProfileOptions options;
  options.machine = test::made_up_calibration(MachineCpu{});
  options.threads = 1;
  const Profile p = profile_of(s, options);
  const auto roof = [&](const std::string& name, LayerPhase phase) {
    const LayerProfile& l = row(p, name, phase);
    return l.roofline ? l.roofline->compute_roof : "not placed: " + l.roofline_error;
  };
  EXPECT_EQ(roof("aten::conv2d", LayerPhase::forward), "gemm_sp");
  EXPECT_EQ(roof("aten::relu", LayerPhase::forward), "fma_sp");
  EXPECT_EQ(roof("Net.conv1", LayerPhase::forward), "gemm_sp") << "its FLOPs are its convolution's";
  EXPECT_EQ(roof("Net", LayerPhase::forward), "gemm_sp") << "100 of its 110 FLOPs a convolution's";
  EXPECT_EQ(roof("Net.conv1", LayerPhase::backward), "gemm_sp");
  EXPECT_EQ(roof("Optimizer.step", LayerPhase::optimizer), "fma_sp") << "element-wise updates";
}

// An activation's region carries its function's roof from its definition, as `hwprof profile`
// holds the same layer: the function's calibrated rate × its FLOPs per evaluation.
TEST(TorchRegions, AnActivationIsHeldToItsFunctionsRateAsTheModelProfileHoldsIt) {
  SessionSnapshot s = torch_run_with_roles();
  s.regions[4].roof = {ComputeRoof::Kind::transcendental, "erf", 8.0};  // as if aten::relu were aten::gelu
  RegionProfileOptions options;
  options.machine = test::made_up_calibration(MachineCpu{});
  options.threads = 1;
  options.machine->runs[0].compute["erf_sp"] = test::made_up_ceiling(2.0);  // 2 G evaluations/s
  const Profile p = profile_of(s, options);
  const LayerProfile& l = row(p, "aten::relu", LayerPhase::forward);
  ASSERT_TRUE(l.roofline) << l.roofline_error;
  EXPECT_EQ(l.roofline->compute_roof, "erf_sp");
  EXPECT_DOUBLE_EQ(l.roofline->compute_roof_gflops_per_s, 16.0) << "2 G evaluations/s × 8 FLOPs each";
  EXPECT_DOUBLE_EQ(l.roofline->peak_gflops_per_s, 600.0) << "the FMA peak stays the absolute roof";
  // A calibration without the function's kernel: the FMA peak, and a note that says so.
  options.machine->runs[0].compute.erase("erf_sp");
  const Profile before = profile_of(s, options);
  const LayerProfile& old = row(before, "aten::relu", LayerPhase::forward);
  ASSERT_TRUE(old.roofline);
  EXPECT_EQ(old.roofline->compute_roof, "fma_sp");
  EXPECT_NE(old.roofline->notes.back().find("no erf_sp ceiling"), std::string::npos);
}

std::vector<std::string> keys(const std::vector<analysis::LayerGroup>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) out.push_back(g.key);
  std::sort(out.begin(), out.end());
  return out;
}

// A module's time holds its ops': the program's time to win counts each millisecond once, at
// the outermost row with a count (Net, not Net and conv1 and conv2d again), and never the time of
// a row without a count (AccumulateGrad).
TEST(TorchRegions, TheProgramsTimeToWinCountsEachMillisecondOnce) {
  SessionSnapshot s = torch_run_with_roles();
  s.steps = 2;
  RegionProfileOptions options;
  options.machine = test::made_up_calibration(MachineCpu{});
  options.threads = 1;
  const Profile p = profile_of(s, options);
  ASSERT_TRUE(p.total.roofline.has_value()) << p.total.roofline_error;
  const auto win = [](const LayerProfile& l) {
    const auto h = placement::headroom_ms(l);
    return h ? h->win_ms : 0.0;
  };
  double every_row = 0.0;
  for (const LayerProfile& l : p.layers) every_row += win(l);
  const double outermost =
      win(row(p, "Net", LayerPhase::forward)) + win(row(p, "Net", LayerPhase::backward)) + win(row(p, "Optimizer.step", LayerPhase::optimizer));
  const double total_win = placement::row_ms(p.total) * (1.0 - p.total.roofline->efficiency);
  EXPECT_GT(every_row, placement::row_ms(p.total)) << "summed over nested rows, the win would pass the program's own time";
  EXPECT_NEAR(total_win, outermost, 1e-9) << "the outermost rows with a count, each once";
  EXPECT_LT(total_win, placement::row_ms(p.total)) << "AccumulateGrad's time has no count: not claimed";
}

// What ran after the last step (an evaluation, a final print) is apart: not in a row's time or
// calls per step, nor in the program's; said on its own.
TEST(TorchRegions, WhatRanAfterTheLastStepIsNotInTheStepFigures) {
  SessionSnapshot s = torch_run_with_roles();
  s.steps = 2;
  s.regions[0].calls = 3;  // Net: one more forward, after the last step
  s.regions[0].total_inclusive_ns = 3000.0;
  s.regions[0].after_steps_calls = 1;
  s.regions[0].after_steps_ns = 1000.0;
  s.call_tree[0].calls = 3;
  s.call_tree[0].inclusive_ns = 3000.0;
  s.after_steps_root_ns = 1000.0;
  const Profile p = profile_of(s, RegionProfileOptions{});
  const LayerProfile& net = row(p, "Net", LayerPhase::forward);
  EXPECT_EQ(net.calls, 3u);
  EXPECT_EQ(net.after_steps_calls, 1u);
  EXPECT_DOUBLE_EQ(net.after_steps_ms, 1000.0 / 1e6);
  EXPECT_DOUBLE_EQ(net.basis_ms, 2000.0 / 2 / 1e6) << "its time in the 2 steps, per step";
  EXPECT_DOUBLE_EQ(placement::calls_per_basis(net), 1.0);
  EXPECT_DOUBLE_EQ(row(p, "Net", LayerPhase::backward).after_steps_ms, 0.0);
  EXPECT_DOUBLE_EQ(p.after_steps_ms, 1000.0 / 1e6);
  // The outermost rows: Net 3000, Net (backward) 2000, Optimizer.step 1000, AccumulateGrad 3000
  // ns, less the 1000 after the last step, over 2 steps.
  EXPECT_DOUBLE_EQ(p.total.basis_ms, 8000.0 / 2 / 1e6);
  EXPECT_NEAR(net.time_share, 2000.0 / 8000.0, 1e-12) << "of the time in the steps";
}

TEST(TorchRegions, ByOpSumsTheOpsByPhaseAndByModuleListsASubtree) {
  const Profile p = profile_of(torch_run_with_roles(), RegionProfileOptions{});
  const auto ops = analysis::group_layers(p, analysis::LayerGrouping::op, 1);
  EXPECT_EQ(keys(ops),
            (std::vector<std::string>{"aten::add_", "aten::conv2d", "aten::conv2d (backward)", "aten::convolution",
                                      "aten::convolution_backward (backward)", "aten::relu", "torch::autograd::AccumulateGrad (backward)"}));
  // Time over all calls: add_ ran 3 times, 1 µs each.
  const auto add = std::find_if(ops.begin(), ops.end(), [](const analysis::LayerGroup& g) { return g.key == "aten::add_"; });
  ASSERT_NE(add, ops.end());
  EXPECT_NEAR(add->time_ms, 0.003, 1e-9);
  EXPECT_EQ(keys(analysis::group_layers(p, analysis::LayerGrouping::module, 1)), (std::vector<std::string>{"Net", "Net (backward)"}));
  EXPECT_EQ(keys(analysis::group_layers(p, analysis::LayerGrouping::module, 2)),
            (std::vector<std::string>{"Net", "Net (backward)", "Net.conv1", "Net.conv1 (backward)"}));
}

}  // namespace
}  // namespace hwprof
