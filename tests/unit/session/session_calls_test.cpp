// What an observer tells the session of each call (src/session/session.cpp): a call made of
// pieces (enter_continuing), a call's work and variant (leave with a CallDetail), the threads
// and parameters of a region, the program's steps and a timeline of whole steps. On the fake
// clock and counters of fake_session.hpp, so every figure is exact.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fake_session.hpp"
#include "hwprof/session.hpp"
#include "session/observer_hooks.hpp"

namespace hwprof {
namespace {

using ::hwprof::test::fake_ops;
using ::hwprof::test::fake_options;
using ::hwprof::test::fake_read_ns;
using ::hwprof::test::open_fake;
using ::hwprof::test::spend;

const CallPath* path_of(const SessionSnapshot& s, int region) {
  for (const CallPath& c : s.call_tree) {
    if (c.region == region) return &c;
  }
  return nullptr;
}

// A backward op run as two autograd functions is one call: the second piece's time, counts and
// kept sample join the first's; its calls, its counter samples and its call path's calls do not grow.
TEST(SessionCalls, APieceContinuesTheRegionsLastCall) {
  auto s = open_fake(3);
  Session::State* state = s->state();
  const int r = s->region("aten::linear (backward)");
  Session::enter(state, r);
  spend(1000);
  fake_ops += 5;
  Session::leave(state, r);
  observer::enter_continuing(state, r, true);
  spend(500);
  fake_ops += 2;
  Session::leave(state, r);
  const RegionReport report = s->report(r);
  EXPECT_EQ(report.calls, 1u);
  EXPECT_EQ(report.continued, 1u);
  EXPECT_DOUBLE_EQ(report.total_inclusive_ns, 1500);
  ASSERT_EQ(report.inclusive_samples_ns.size(), 1u);
  EXPECT_DOUBLE_EQ(report.inclusive_samples_ns[0], 1500) << "the piece joined its call's kept sample";
  EXPECT_EQ(report.counters[0].samples, 1u) << "a piece's counts are its call's";
  EXPECT_DOUBLE_EQ(report.counters[0].inclusive, 7);
  const SessionSnapshot snapshot = s->snapshot();
  const CallPath* path = path_of(snapshot, r);
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->calls, 1u);
  EXPECT_DOUBLE_EQ(path->inclusive_ns, 1500);
}

TEST(SessionCalls, APieceBeforeAnyCallIsACall) {
  auto s = open_fake(0);
  const int r = s->region("setup");
  observer::enter_continuing(s->state(), r, false);
  spend(100);
  Session::leave(s->state(), r);
  EXPECT_EQ(s->report(r).calls, 1u);
  EXPECT_EQ(s->report(r).continued, 0u);
}

// Work given as calls leave: the region's work per call is its calls' mean, and each call path
// sums the work of its own calls exactly (two shapes of one op under two modules).
TEST(SessionCalls, WorkGivenAtTheEndIsSummedPerCallPath) {
  auto s = open_fake(0);
  Session::State* state = s->state();
  const int a = s->region("A");
  const int b = s->region("B");
  const int op = s->region("aten::linear");
  const auto call = [&](int module, double flops) {
    Session::enter(state, module);
    Session::enter(state, op);
    spend(10);
    observer::leave(state, op, CallDetail{flops, 2 * flops, 0});
    Session::leave(state, module);
  };
  call(a, 100);
  call(a, 100);
  call(b, 700);
  const RegionReport r = s->report(op);
  ASSERT_TRUE(r.work_flops.has_value());
  EXPECT_DOUBLE_EQ(*r.work_flops, 300);
  EXPECT_DOUBLE_EQ(*r.work_bytes, 600);
  const SessionSnapshot snapshot = s->snapshot();
  double under_a = -1;
  double under_b = -1;
  for (const CallPath& c : snapshot.call_tree) {
    if (c.region != op || c.parent < 0) continue;
    (snapshot.call_tree[static_cast<std::size_t>(c.parent)].region == a ? under_a : under_b) = c.flops;
  }
  EXPECT_DOUBLE_EQ(under_a, 200);
  EXPECT_DOUBLE_EQ(under_b, 700);
  observer::leave(state, op, CallDetail{-1.0, 0.0, 0});  // an end without its begin: nothing
  EXPECT_EQ(s->report(op).calls, 3u);
}

// Variants: the calls of each kept apart with their time and work; past kVariantSlots, the one
// with the least time gives up its slot to `other`, so that the variants and `other` always add
// up to the region's calls, time and work, and the variant with the most time keeps its slot.
TEST(SessionCalls, VariantsKeepTheMostTimeAndAddUpWithOther) {
  auto s = open_fake(0);
  Session::State* state = s->state();
  const int r = s->region("aten::linear");
  const auto call = [&](std::uint64_t variant, std::uint64_t ns) {
    Session::enter(state, r);
    spend(ns);
    observer::leave(state, r, CallDetail{static_cast<double>(ns), 0.0, variant});
  };
  observer::note_variant(state, r, 1, "16x64, 64x64");
  for (int i = 0; i < 5; ++i) call(1, 1000);
  for (std::uint64_t v = 2; v < 42; ++v) {
    observer::note_variant(state, r, v, "length " + std::to_string(v));
    call(v, 10 + v);
  }
  const RegionReport report = s->report(r);
  ASSERT_FALSE(report.variants.empty());
  EXPECT_EQ(report.variants.front().label, "16x64, 64x64") << "the most time first";
  EXPECT_EQ(report.variants.front().calls, 5u);
  EXPECT_DOUBLE_EQ(report.variants.front().total_ns, 5000);
  EXPECT_TRUE(report.variants.back().other);
  EXPECT_EQ(report.variants.back().label, "other shapes");
  EXPECT_LE(report.variants.size(), 17u);
  std::uint64_t calls = 0;
  double ns = 0;
  double flops = 0;
  for (const RegionVariant& v : report.variants) {
    calls += v.calls;
    ns += v.total_ns;
    flops += v.flops;
  }
  EXPECT_EQ(calls, report.calls);
  EXPECT_DOUBLE_EQ(ns, report.total_inclusive_ns);
  EXPECT_DOUBLE_EQ(flops, *report.work_flops * static_cast<double>(report.calls));
  s->reset();
  EXPECT_TRUE(s->report(r).variants.empty()) << "a reset forgets them";
}

TEST(SessionCalls, ThreadsAndParametersOfARegion) {
  auto s = open_fake(0);
  Session::State* state = s->state();
  const int r = s->region("Net.fc");
  EXPECT_EQ(s->report(r).threads_max, 0) << "not said";
  EXPECT_EQ(s->report(r).params, -1) << "not said";
  observer::note_threads(state, r, 2);
  observer::note_threads(state, r, 1);
  observer::note_threads(state, r, 0);  // nothing
  observer::set_params(state, r, 650);
  const RegionReport report = s->report(r);
  EXPECT_EQ(report.threads_min, 1);
  EXPECT_EQ(report.threads_max, 2);
  EXPECT_EQ(report.params, 650);
}

// Steps and a timeline whose second half is a ring of the latest calls: the snapshot holds the
// first steps and the last ones whole, says which, and counts the calls between them as left out.
TEST(SessionCalls, AStepTimelineHoldsTheFirstAndLastStepsWhole) {
  SessionOptions o = fake_options();
  o.timeline_events = 24;
  o.timeline_tail = 12;
  auto s = open_fake(0, o);
  Session::State* state = s->state();
  const int r = s->region("step work");
  observer::mark_step_start(state);
  constexpr int kSteps = 10;
  constexpr int kCallsPerStep = 5;
  std::vector<double> step_ends;
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kCallsPerStep; ++i) {
      Session::enter(state, r);
      spend(100);
      Session::leave(state, r);
    }
    observer::mark_step(state);
  }
  const SessionSnapshot snapshot = s->snapshot();
  EXPECT_EQ(snapshot.steps, static_cast<std::uint64_t>(kSteps));
  ASSERT_EQ(snapshot.step_ends_ns.size(), static_cast<std::size_t>(kSteps));
  EXPECT_GE(snapshot.first_step_start_ns, 0);
  EXPECT_TRUE(snapshot.timeline_cut);
  EXPECT_EQ(snapshot.timeline_first_steps, 2u) << "12 first calls hold steps 1 and 2 whole";
  EXPECT_EQ(snapshot.timeline_last_from, 9u) << "the 12 latest hold steps 9 and 10 whole";
  EXPECT_EQ(snapshot.timeline.size(), 4u * kCallsPerStep);
  EXPECT_EQ(snapshot.timeline_dropped, static_cast<std::uint64_t>(kSteps * kCallsPerStep) - snapshot.timeline.size());
  // Whole steps: every kept call lies inside a step that is kept whole.
  for (const TimelineEvent& e : snapshot.timeline) {
    const double end = e.start_ns + e.duration_ns;
    const auto step =
        static_cast<std::size_t>(std::lower_bound(snapshot.step_ends_ns.begin(), snapshot.step_ends_ns.end(), end) - snapshot.step_ends_ns.begin());
    EXPECT_TRUE(step < 2 || step >= 8) << "a call of step " << step + 1;
  }
}

// The calls after the last step mark (an evaluation after training) are counted apart, per
// region and in the outermost time; a call open across the mark is the step's.
TEST(SessionCalls, CallsAfterTheLastStepAreCountedApart) {
  auto s = open_fake(0);
  Session::State* state = s->state();
  const int train = s->region("train");
  const int eval = s->region("eval");
  const int across = s->region("across");
  observer::mark_step_start(state);
  for (int step = 0; step < 3; ++step) {
    Session::enter(state, train);
    spend(100);
    Session::leave(state, train);
    if (step < 2) observer::mark_step(state);
  }
  Session::enter(state, across);
  spend(40);
  observer::mark_step(state);  // the last step ends inside `across`
  spend(60);
  Session::leave(state, across);
  for (int i = 0; i < 2; ++i) {
    Session::enter(state, train);
    spend(50);
    Session::enter(state, eval);
    spend(30);
    Session::leave(state, eval);
    Session::leave(state, train);
  }
  const RegionReport t = s->report(train);
  EXPECT_EQ(t.calls, 5u);
  EXPECT_EQ(t.after_steps_calls, 2u);
  EXPECT_DOUBLE_EQ(t.after_steps_ns, 160.0);
  const RegionReport e = s->report(eval);
  EXPECT_EQ(e.after_steps_calls, 2u) << "every call of a region that ran only after the steps";
  EXPECT_DOUBLE_EQ(e.after_steps_ns, 60.0);
  const RegionReport a = s->report(across);
  EXPECT_EQ(a.after_steps_calls, 0u) << "begun in the last step: the step's";
  EXPECT_DOUBLE_EQ(a.after_steps_ns, 0.0);
  const SessionSnapshot snapshot = s->snapshot();
  EXPECT_EQ(snapshot.steps, 3u);
  EXPECT_DOUBLE_EQ(snapshot.after_steps_root_ns, 160.0) << "the outermost calls after the mark, eval inside train once";
  // Another mark: those calls were a step after all, and nothing is after it yet.
  observer::mark_step(state);
  EXPECT_EQ(s->report(train).after_steps_calls, 0u);
  EXPECT_DOUBLE_EQ(s->snapshot().after_steps_root_ns, 0.0);
}

// A counted pair costs what the program's reads take now where that is more than at open (a
// read of counters inherited by running threads interrupts their CPUs), and falls back as the
// reads get cheap again.
TEST(SessionCalls, ACountedPairCostsWhatTheLatestReadsTook) {
  auto s = open_fake(0);
  Session::State* state = s->state();
  const double at_open = observer::counted_pair_ns(state);
  EXPECT_GT(at_open, 0.0);
  const int r = s->region("module");
  fake_read_ns = 30000;
  Session::enter(state, r);
  Session::leave(state, r);
  EXPECT_GT(observer::counted_pair_ns(state), at_open + 5000.0) << "one slow read moves it an eighth of the way";
  for (int i = 0; i < 24; ++i) {
    Session::enter(state, r);
    Session::leave(state, r);
  }
  fake_read_ns = 0;
  EXPECT_GE(observer::counted_pair_ns(state), 0.95 * 60000.0) << "an end's read, twice for a pair";
  for (int i = 0; i < 200; ++i) {
    Session::enter(state, r);
    Session::leave(state, r);
  }
  EXPECT_LT(observer::counted_pair_ns(state), at_open + 100.0) << "back near the cost at open";
}

// A call entered without reads (enter_time_only) is judged below resolution against what such a
// pair costs, not against a counted pair's: a slow read does not hide a region that only times.
TEST(SessionCalls, ATimeOnlyRegionIsJudgedByATimeOnlyPairsCost) {
  fake_read_ns = 1000;
  auto s = open_fake(0);
  fake_read_ns = 0;
  Session::State* state = s->state();
  const SessionOverhead overhead = s->snapshot().overhead;
  ASSERT_GT(overhead.pair_ns, 1000.0);
  ASSERT_LT(overhead.time_only_pair_ns, 200.0);
  const int timed = s->region("timed only");
  const int counted = s->region("counted");
  for (int i = 0; i < 5; ++i) {
    observer::enter_time_only(state, timed);
    spend(50000);
    Session::leave(state, timed);
    Session::enter(state, counted);
    spend(50000);
    Session::leave(state, counted);
  }
  const RegionReport t = s->report(timed);
  EXPECT_DOUBLE_EQ(t.own_cost_ns, overhead.time_only_pair_ns);
  EXPECT_FALSE(t.below_resolution);
  const RegionReport c = s->report(counted);
  EXPECT_DOUBLE_EQ(c.own_cost_ns, overhead.pair_ns);
  EXPECT_TRUE(c.below_resolution) << "50 µs against 100 counted pairs of over 1 µs";
}

}  // namespace
}  // namespace hwprof
