// The session (src/session/session.cpp) on a fake clock and a fake counter set, so that every
// figure is exact: overhead measurement and subtraction, nesting (inclusive and exclusive
// time and counts), unmatched and too-deep regions, the below-resolution flag, regions from
// several threads, scoped regions and the macro, group metrics, and configuration errors.
// No hardware: the one real backend used is the timer.
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/stages.hpp"
#include "fake_session.hpp"
#include "hwprof/session.hpp"
#include "session/observer_hooks.hpp"
#include "session/session_state.hpp"
#include "text_support.hpp"

namespace hwprof {

// Defined in session_disabled_test.cpp, compiled with HWPROF_DISABLE_REGIONS.
int run_disabled_region(Session& session);

namespace {

using ::hwprof::test::contains;

using ::hwprof::test::fake_clock;
using ::hwprof::test::fake_extra_read_cost;
using ::hwprof::test::fake_now;
using ::hwprof::test::fake_ops;
using ::hwprof::test::fake_options;
using ::hwprof::test::fake_tick;
using ::hwprof::test::FakeCounters;
using ::hwprof::test::open_fake;
using ::hwprof::test::spend;

TEST(Session, MeasuresItsOwnOverheadOnTheInjectedClockAndCounters) {
  auto s = open_fake(3);
  // An empty region: one tick between begin's timestamp and end's. A pair as its parent sees
  // it: three ticks (end also notes when it returned, for begin_after_end). Counters: one
  // read (3) inside a sample, two per pair.
  EXPECT_DOUBLE_EQ(s->overhead().sample_ns, 10);
  EXPECT_DOUBLE_EQ(s->overhead().pair_ns, 30);
  ASSERT_EQ(s->overhead().sample_counts.size(), 2u);
  EXPECT_DOUBLE_EQ(s->overhead().sample_counts[0], 3);
  EXPECT_DOUBLE_EQ(s->overhead().pair_counts[0], 6);
  EXPECT_DOUBLE_EQ(s->overhead().sample_counts[1], 0) << "unavailable events have no overhead";
  EXPECT_TRUE(s->report().empty()) << "the calibration regions are not reported";
  EXPECT_FALSE(s->time_only());
  EXPECT_EQ(s->backend(), BackendKind::perf);
}

TEST(Session, SubtractsTheOverheadFromEverySample) {
  auto s = open_fake(3);
  const int a = s->region("a");
  for (std::uint64_t work : {1000u, 2000u, 3000u, 4000u, 5000u}) {
    s->begin(a);
    spend(work);
    fake_ops += work / 2;
    s->end(a);
  }
  const RegionReport r = s->report(a);
  EXPECT_EQ(r.name, "a");
  EXPECT_EQ(r.calls, 5u);
  EXPECT_EQ(r.inclusive_ns.n, 5u);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.min, 1000);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.median, 3000);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.max, 5000);
  EXPECT_DOUBLE_EQ(r.exclusive_ns.median, 3000) << "no children: exclusive = inclusive";
  EXPECT_DOUBLE_EQ(r.total_inclusive_ns, 15000);
  ASSERT_EQ(r.counters.size(), 2u);
  EXPECT_EQ(r.counters[0].name, "ops");
  EXPECT_EQ(r.counters[0].status, CounterStatus::ok);
  EXPECT_DOUBLE_EQ(r.counters[0].inclusive, 7500);
  EXPECT_DOUBLE_EQ(r.counters[0].per_call(), 1500);
  EXPECT_EQ(r.counters[0].samples, 5u);
  EXPECT_DOUBLE_EQ(r.counters[0].min_running_fraction, 1.0);
  // Unavailable: its status and reason, never a 0 that looks like a count.
  EXPECT_EQ(r.counters[1].status, CounterStatus::unsupported);
  EXPECT_FALSE(r.counters[1].has_value());
  EXPECT_TRUE(contains(r.counters[1].reason, "uncore")) << r.counters[1].reason;
}

// A region that follows its predecessor closely starts from the predecessor's closing reading
// (one read saved); the gap's counts go to it, its time does not. A longer gap reads anew.
TEST(Session, BeginAfterEndSharesTheReadingOnlyAcrossAShortGap) {
  auto s = open_fake(3);
  const int a = s->region("a");
  const int b = s->region("b");
  const int c = s->region("c");
  s->begin(a);
  spend(1000);
  fake_ops += 100;
  s->end(a);
  spend(50);  // the executor freeing dead tensors
  fake_ops += 7;
  const std::uint64_t ops_before_b = fake_ops.load();
  s->begin_after_end(b, 1000);
  EXPECT_EQ(fake_ops.load(), ops_before_b) << "no read: a's closing one serves";
  spend(2000);
  fake_ops += 200;
  s->end(b);
  spend(5000);  // longer than the allowed gap
  fake_ops += 7;
  s->begin_after_end(c, 1000);
  spend(2000);
  fake_ops += 200;
  s->end(c);
  EXPECT_DOUBLE_EQ(s->report(a).counters[0].inclusive, 100);
  EXPECT_DOUBLE_EQ(s->report(b).counters[0].inclusive, 207) << "the short gap's counts go to b";
  EXPECT_DOUBLE_EQ(s->report(c).counters[0].inclusive, 200) << "after a long gap c reads for itself";
  EXPECT_DOUBLE_EQ(s->report(b).inclusive_ns.median, 2000) << "the gap's time is not b's";
  // Not straight after an end (another begin came between): a read of its own.
  s->begin(a);
  const std::uint64_t ops_before_nested = fake_ops.load();
  s->begin_after_end(b, 1000);
  EXPECT_EQ(fake_ops.load(), ops_before_nested + 3);
  s->end(b);
  s->end(a);
}

// A parent around a chain of children that share readings (how hwprof profile's counted
// passes nest layers in the model) is charged one read per read its children made: here
// 1 + 3 reads of 3 ops, not three full pairs of 6.
TEST(Session, AParentIsChargedTheReadsItsChildrenMadeNotFullPairs) {
  auto s = open_fake(3);
  const int model = s->region("model");
  const int layer = s->region("layer");
  s->begin(model);
  fake_ops += 10;
  for (int k = 0; k < 3; ++k) {
    s->begin_after_end(layer, 1000);
    fake_ops += 100;
    s->end(layer);
  }
  fake_ops += 10;
  s->end(model);
  // Raw: 10 + 300 + 20 work, plus the model's own sample (3), plus the children's 4 reads (12).
  EXPECT_DOUBLE_EQ(s->report(layer).counters[0].inclusive, 300);
  EXPECT_DOUBLE_EQ(s->report(model).counters[0].inclusive, 320);
  EXPECT_DOUBLE_EQ(s->report(model).counters[0].exclusive, 20);
  EXPECT_FALSE(s->report(model).counters[0].below_resolution);
}

// What is left of a count, once the session's own cost is subtracted, may be less than that
// cost: noise around 0. It is summed as it is (not clamped per sample, which would bias the
// sum up), reported no lower than 0, and flagged.
TEST(Session, ACountUnderTheReadCostIsFlaggedBelowResolution) {
  auto s = open_fake(3);
  const int tiny = s->region("tiny");
  const int big = s->region("big");
  for (int i = 0; i < 4; ++i) {
    s->begin(tiny);
    fake_ops += 1;
    s->end(tiny);
    s->begin(big);
    fake_ops += 50;
    s->end(big);
  }
  const CounterTotal t = s->report(tiny).counters[0];
  EXPECT_TRUE(t.below_resolution) << "1 per call, under the 3 an empty region counts";
  EXPECT_DOUBLE_EQ(t.per_call(), 1);
  EXPECT_FALSE(s->report(big).counters[0].below_resolution);
  // A read that costs less than the measurement said leaves a negative sum: shown as 0, flagged.
  auto cheap = open_fake(3);
  const int none = cheap->region("none");
  cheap->measure_overhead(10);
  fake_ops += 0;
  cheap->begin(none);
  fake_ops -= 2;  // as if this read were cheaper than the measured 3
  cheap->end(none);
  const CounterTotal n = cheap->report(none).counters[0];
  EXPECT_DOUBLE_EQ(n.inclusive, 0);
  EXPECT_TRUE(n.below_resolution);
}

TEST(Session, MeasuringTheOverheadAgainTakesTheCostAsItIsNow) {
  auto s = open_fake(3);
  const int a = s->region("a");
  EXPECT_DOUBLE_EQ(s->overhead().pair_counts[0], 6);
  s->begin(a);
  fake_ops += 100;
  s->end(a);
  // Reads now cost 3 more (as with another counted thread's CPU to interrupt): measured again.
  fake_extra_read_cost = 3;
  for (int i = 0; i < 3; ++i) s->measure_overhead(20);
  EXPECT_DOUBLE_EQ(s->overhead().sample_counts[0], 6);
  EXPECT_DOUBLE_EQ(s->overhead().pair_counts[0], 12);
  EXPECT_EQ(s->report().size(), 1u) << "the measurement's own regions stay hidden";
  EXPECT_DOUBLE_EQ(s->report(a).counters[0].inclusive, 100) << "samples already taken keep their figures";
  s->begin(a);
  fake_ops += 100;
  s->end(a);
  fake_extra_read_cost = 0;
  EXPECT_DOUBLE_EQ(s->report(a).counters[0].inclusive, 200) << "new samples have the new cost subtracted";
}

TEST(Session, NestingGivesInclusiveAndExclusiveFigures) {
  auto s = open_fake(3);
  const int parent = s->region("parent");
  const int child = s->region("child");
  s->begin(parent);
  spend(100);
  fake_ops += 50;
  s->begin(child);
  spend(1000);
  fake_ops += 500;
  s->end(child);
  spend(200);
  fake_ops += 20;
  s->end(parent);

  const RegionReport c = s->report(child);
  EXPECT_DOUBLE_EQ(c.inclusive_ns.median, 1000);
  EXPECT_DOUBLE_EQ(c.exclusive_ns.median, 1000);
  EXPECT_DOUBLE_EQ(c.counters[0].inclusive, 500);
  const RegionReport p = s->report(parent);
  // The parent saw 1330 ns raw: its own 300, the child's 1000, the child's pair (20) and its
  // own sample overhead (10).
  EXPECT_DOUBLE_EQ(p.inclusive_ns.median, 1300);
  EXPECT_DOUBLE_EQ(p.exclusive_ns.median, 300);
  EXPECT_DOUBLE_EQ(p.counters[0].inclusive, 570);
  EXPECT_DOUBLE_EQ(p.counters[0].exclusive, 70);
  EXPECT_EQ(p.unmatched, 0u);
  EXPECT_EQ(c.unmatched, 0u);
}

TEST(Session, TwoChildrenAndRepeatedCalls) {
  auto s = open_fake(0);
  const int outer = s->region("outer");
  const int inner = s->region("inner");
  for (int i = 0; i < 3; ++i) {
    s->begin(outer);
    for (int k = 0; k < 2; ++k) {
      s->begin(inner);
      spend(400);
      s->end(inner);
      spend(50);
    }
    s->end(outer);
  }
  EXPECT_EQ(s->report(inner).calls, 6u);
  EXPECT_DOUBLE_EQ(s->report(inner).inclusive_ns.median, 400);
  EXPECT_EQ(s->report(outer).calls, 3u);
  EXPECT_DOUBLE_EQ(s->report(outer).inclusive_ns.median, 900);
  EXPECT_DOUBLE_EQ(s->report(outer).exclusive_ns.median, 100);
  EXPECT_DOUBLE_EQ(s->report(outer).total_exclusive_ns, 300);
}

TEST(Session, MultiplexedCountsAreScaledAndSaySo) {
  fake_tick = 10;
  auto opened = Session::open(fake_options(), std::make_unique<FakeCounters>(0, true));
  ASSERT_TRUE(opened);
  auto& s = *opened;
  const int a = s->region("a");
  s->begin(a);
  spend(1000);
  fake_ops += 100;
  s->end(a);
  const CounterTotal c = s->report(a).counters[0];
  EXPECT_EQ(c.status, CounterStatus::multiplexed);
  EXPECT_DOUBLE_EQ(c.min_running_fraction, 0.5);
  EXPECT_DOUBLE_EQ(c.inclusive, 200) << "100 counted in half the time: scaled to 200";
}

TEST(Session, BelowResolutionIsAHundredPairCosts) {
  auto s = open_fake(0);  // pair cost 30 ns: the line is 3000 ns
  const int short_region = s->region("short");
  const int long_region = s->region("long");
  for (int i = 0; i < 3; ++i) {
    s->begin(short_region);
    spend(2990);
    s->end(short_region);
    s->begin(long_region);
    spend(3000);
    s->end(long_region);
  }
  EXPECT_TRUE(s->report(short_region).below_resolution);
  EXPECT_FALSE(s->report(long_region).below_resolution);
}

TEST(Session, WithoutOverheadMeasurementNothingIsSubtractedOrFlagged) {
  SessionOptions o = fake_options();
  o.overhead_pairs = 0;
  auto s = open_fake(3, o);
  EXPECT_EQ(s->overhead().pair_ns, 0);
  const int a = s->region("a");
  s->begin(a);
  spend(5);
  s->end(a);
  EXPECT_DOUBLE_EQ(s->report(a).inclusive_ns.median, 15);
  EXPECT_DOUBLE_EQ(s->report(a).counters[0].inclusive, 3);
  EXPECT_FALSE(s->report(a).below_resolution);
}

TEST(Session, RegionIdsAreStableAndNamesUnique) {
  auto s = open_fake();
  const int a = s->region("conv1");
  const int b = s->region("conv2");
  EXPECT_NE(a, b);
  EXPECT_EQ(s->region("conv1"), a);
  EXPECT_EQ(s->report().size(), 2u);
  EXPECT_EQ(s->report()[0].name, "conv1");
  EXPECT_EQ(s->report()[0].id, a);
  EXPECT_EQ(s->report()[1].calls, 0u);
}

TEST(Session, NamesPastTheLimitAreCountedTogetherAndSaidOnce) {
  SessionOptions o = fake_options();
  o.max_regions = 2;
  std::vector<std::string> hints;
  o.on_hint = [&](const std::string& h) { hints.push_back(h); };
  auto s = open_fake(0, o);
  const std::size_t before = hints.size();
  const int a = s->region("a");
  const int b = s->region("b");
  const int c = s->region("c");
  const int d = s->region("d");
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_GE(c, 0) << "a name past the limit is counted, not lost";
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  EXPECT_EQ(d, c) << "every name past the limit goes to the one aggregate region";
  ASSERT_EQ(hints.size(), before + 1) << "the limit is said once, not per name or per call";
  EXPECT_TRUE(contains(hints.back(), "max_regions"));
  EXPECT_TRUE(contains(hints.back(), "'c'"));
  for (int i = 0; i < 3; ++i) {
    s->begin(s->region("e" + std::to_string(i)));
    spend(100);
    s->end(s->region("e" + std::to_string(i)));
  }
  EXPECT_EQ(hints.size(), before + 1);
  const std::vector<RegionReport> all = s->report();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].name, std::string(kOtherNamesRegion));
  EXPECT_EQ(all[2].calls, 3u);
  s->set_work(c, 1e6, 1e6);
  EXPECT_FALSE(s->report(c).work_flops.has_value()) << "one work per call cannot fit many names";
  s->begin(-1);  // ignored
  s->end(-1);
  s->begin(12345);
  s->end(12345);
  EXPECT_EQ(s->report().size(), 3u);
}

TEST(Session, AnEndWithoutItsBeginIsCountedSaidOnceAndChangesNothingElse) {
  SessionOptions o = fake_options();
  std::vector<std::string> hints;
  o.on_hint = [&](const std::string& h) { hints.push_back(h); };
  auto s = open_fake(0, o);
  const std::size_t before = hints.size();
  const int a = s->region("a");
  const int b = s->region("b");
  s->end(a);
  s->end(a);
  EXPECT_EQ(s->report(a).unmatched, 2u);
  EXPECT_EQ(s->report(a).calls, 0u);
  ASSERT_EQ(hints.size(), before + 1) << "said once per region";
  EXPECT_TRUE(contains(hints.back(), "not open")) << hints.back();
  EXPECT_TRUE(contains(hints.back(), "'a'")) << hints.back();
  s->begin(a);
  s->end(b);  // b is not open
  s->end(a);
  EXPECT_EQ(s->report(b).unmatched, 1u);
  EXPECT_EQ(s->report(a).calls, 1u);
  ASSERT_EQ(hints.size(), before + 2);
  EXPECT_TRUE(contains(hints.back(), "'b'")) << hints.back();
}

TEST(Session, EndingAnOuterRegionAbandonsTheInnerOnes) {
  auto s = open_fake(0);
  const int outer = s->region("outer");
  const int inner = s->region("inner");
  s->begin(outer);
  s->begin(inner);
  spend(100);
  s->end(outer);
  EXPECT_EQ(s->report(outer).calls, 1u);
  EXPECT_EQ(s->report(inner).calls, 0u);
  EXPECT_EQ(s->report(inner).unmatched, 1u);
  s->begin(outer);  // the stack is clean again
  s->end(outer);
  EXPECT_EQ(s->report(outer).calls, 2u);
  EXPECT_EQ(s->report(outer).unmatched, 0u);
}

TEST(Session, RegionsDeeperThanMaxDepthAreDroppedAndTheirEndsIgnored) {
  SessionOptions o = fake_options();
  o.max_depth = 2;
  auto s = open_fake(0, o);
  const int a = s->region("a");
  const int b = s->region("b");
  const int c = s->region("c");
  s->begin(a);
  s->begin(b);
  s->begin(c);
  s->end(c);
  s->end(b);
  s->end(a);
  EXPECT_EQ(s->dropped_depth(), 1u);
  EXPECT_EQ(s->report(a).calls, 1u);
  EXPECT_EQ(s->report(b).calls, 1u);
  EXPECT_EQ(s->report(c).calls, 0u);
  EXPECT_EQ(s->report(a).unmatched + s->report(b).unmatched + s->report(c).unmatched, 0u);
}

TEST(Session, SamplesPastTheBufferAreCountedNotKept) {
  SessionOptions o = fake_options();
  o.samples_per_region = 4;
  auto s = open_fake(0, o);
  const int a = s->region("a");
  for (int i = 0; i < 10; ++i) {
    s->begin(a);
    spend(100 + 10 * static_cast<std::uint64_t>(i));
    s->end(a);
  }
  const RegionReport r = s->report(a);
  EXPECT_EQ(r.calls, 10u);
  EXPECT_EQ(r.inclusive_ns.n, 4u);
  EXPECT_EQ(r.dropped_samples, 6u);
  EXPECT_DOUBLE_EQ(r.total_inclusive_ns, 1450) << "dropped samples still count in the totals";
  EXPECT_DOUBLE_EQ(r.inclusive_ns.mean, 145) << "the mean is over every call";
  EXPECT_DOUBLE_EQ(r.inclusive_ns.min, 100) << "the extremes are over every call";
  EXPECT_DOUBLE_EQ(r.inclusive_ns.max, 190);
}

// Past its first 64 samples a region claims room from the arena; past samples_per_region it
// keeps a uniform sample of every call. Call i (from 0) spends i ns, so the kept samples of
// 20,000 calls are drawn from 0..19999: their median is near 10,000 and their spread covers it.
TEST(Session, ARegionCalledOftenKeepsAUniformSampleOfAllItsCalls) {
  SessionOptions o = fake_options();
  o.samples_per_region = 1000;
  auto s = open_fake(0, o);
  const int a = s->region("a");
  constexpr int kCalls = 20000;
  for (int i = 0; i < kCalls; ++i) {
    s->begin(a);
    spend(static_cast<std::uint64_t>(i));
    s->end(a);
  }
  const RegionReport r = s->report(a);
  EXPECT_EQ(r.calls, static_cast<std::uint64_t>(kCalls));
  EXPECT_EQ(r.inclusive_ns.n, 1000u);
  EXPECT_EQ(r.dropped_samples, static_cast<std::uint64_t>(kCalls - 1000));
  EXPECT_DOUBLE_EQ(r.total_inclusive_ns, 0.5 * kCalls * (kCalls - 1.0));
  EXPECT_DOUBLE_EQ(r.inclusive_ns.min, 0);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.max, kCalls - 1);
  // A uniform sample of 1000 from 0..19999: the median's standard error is ~316; the first
  // 1000 calls alone (what a buffer that stops would keep) have a median of ~500.
  EXPECT_NEAR(r.inclusive_ns.median, 10000, 1500);
  EXPECT_NEAR(r.inclusive_ns.p5, 1000, 800);
  EXPECT_NEAR(r.inclusive_ns.p95, 19000, 800);
  std::size_t late = 0;
  for (double v : r.inclusive_samples_ns) late += v >= 10000 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(late), 500, 100) << "half the calls came after call 10,000";
}

TEST(Session, ARegionThatFindsTheArenaUsedUpSamplesIntoItsFirstBlock) {
  SessionOptions o = fake_options();
  o.samples_per_region = 1000;
  o.sample_budget = 1500;  // room for one region's 936 more samples, not two
  auto s = open_fake(0, o);
  const int a = s->region("a");
  const int b = s->region("b");
  for (int i = 0; i < 3000; ++i) {
    for (const int id : {a, b}) {
      s->begin(id);
      spend(static_cast<std::uint64_t>(i));
      s->end(id);
    }
  }
  const RegionReport ra = s->report(a);
  const RegionReport rb = s->report(b);
  EXPECT_EQ(ra.inclusive_ns.n, 1000u);
  EXPECT_EQ(rb.inclusive_ns.n, 64u) << "b keeps its first block, as a reservoir";
  EXPECT_EQ(rb.calls, 3000u);
  EXPECT_NEAR(rb.inclusive_ns.median, 1500, 600) << "still a sample of every call, not the first 64";
  EXPECT_DOUBLE_EQ(rb.inclusive_ns.max, 2999);
}

TEST(Session, WorkThatIsNotAFiniteCountIsIgnoredAndSaidOnce) {
  SessionOptions o = fake_options();
  std::vector<std::string> hints;
  o.on_hint = [&](const std::string& h) { hints.push_back(h); };
  auto s = open_fake(0, o);
  const std::size_t before = hints.size();
  const int a = s->region("a");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [flops, bytes] : std::vector<std::pair<double, double>>{{nan, 1}, {1, inf}, {-1, 1}, {1e308, 1}, {1, -0.5}, {1e19, 1}}) {
    s->set_work(a, flops, bytes);
    EXPECT_FALSE(s->report(a).work_flops.has_value()) << flops << " " << bytes;
  }
  ASSERT_EQ(hints.size(), before + 1);
  EXPECT_TRUE(contains(hints.back(), "'a'"));
  s->set_work(a, 2e9, 0);
  ASSERT_TRUE(s->report(a).work_flops.has_value());
  EXPECT_DOUBLE_EQ(*s->report(a).work_flops, 2e9);
}

TEST(Session, ResetForgetsSamplesButKeepsRegions) {
  auto s = open_fake(3);
  const int a = s->region("a");
  s->begin(a);
  spend(100);
  s->end(a);
  s->set_work(a, 1e6, 2e6);
  s->reset();
  const RegionReport r = s->report(a);
  EXPECT_EQ(r.calls, 0u);
  EXPECT_EQ(r.counters[0].samples, 0u);
  EXPECT_EQ(r.counters[0].status, CounterStatus::not_counted);
  EXPECT_EQ(s->region("a"), a);
  ASSERT_TRUE(r.work_flops.has_value()) << "the analytic work is a property of the region, not a sample";
  EXPECT_DOUBLE_EQ(*r.work_flops, 1e6);
  EXPECT_DOUBLE_EQ(*r.work_bytes, 2e6);
  EXPECT_FALSE(s->report(s->region("b")).work_flops.has_value());
}

// One call's work added per call (the PyTorch observer's ops, whose shapes vary): the work per
// call is the mean over those calls, and a reset forgets the sums.
TEST(Session, AddedWorkIsTheMeanOverTheCallsThatGaveIt) {
  auto s = open_fake(0);
  const int a = s->region("a");
  s->set_work(a, 5, 5);
  for (const double flops : {100.0, 200.0, 600.0}) {
    s->begin(a);
    s->end(a);
    observer::add_work(s->state(), a, flops, 2 * flops);
  }
  const RegionReport r = s->report(a);
  ASSERT_TRUE(r.work_flops.has_value());
  EXPECT_DOUBLE_EQ(*r.work_flops, 300);
  EXPECT_DOUBLE_EQ(*r.work_bytes, 600);
  observer::add_work(s->state(), a, std::numeric_limits<double>::quiet_NaN(), 1);
  EXPECT_DOUBLE_EQ(*s->report(a).work_flops, 300) << "unusable work is not added";
  s->reset();
  EXPECT_DOUBLE_EQ(*s->report(a).work_flops, 5) << "after a reset only set_work's value is left";
}

// A time-only region in a session that reads counters (an op nested in an op): no read at
// either end, its time with no read cost subtracted, its counts left to the counted region
// around it, and that region charged no read for it.
TEST(Session, ATimeOnlyRegionReadsNothingAndLeavesItsCountsToItsCountedParent) {
  auto s = open_fake(3);
  const int op = s->region("op");
  const int inner = s->region("inner");
  const int innermost = s->region("innermost");
  Session::State* state = s->state();
  Session::enter(state, op);
  fake_ops += 10;
  const std::uint64_t before = fake_ops.load();
  observer::enter_time_only(state, inner);
  observer::enter_time_only(state, innermost);
  spend(500);
  fake_ops += 100;
  Session::leave(state, innermost);
  Session::leave(state, inner);
  EXPECT_EQ(fake_ops.load(), before + 100) << "no counter read";
  fake_ops += 10;
  Session::leave(state, op);
  const RegionReport ri = s->report(innermost);
  EXPECT_EQ(ri.calls, 1u);
  EXPECT_FALSE(ri.counters[0].has_value()) << "a time-only region has no counts";
  EXPECT_EQ(ri.counters[0].status, CounterStatus::not_counted);
  EXPECT_TRUE(contains(ri.counters[0].reason, "timed only")) << ri.counters[0].reason;
  EXPECT_DOUBLE_EQ(ri.inclusive_ns.median, 510) << "the 500 spent and the clock's tick: no read cost subtracted";
  const RegionReport ro = s->report(op);
  EXPECT_DOUBLE_EQ(ro.counters[0].inclusive, 120) << "its own work and the nested regions', no read charged";
  EXPECT_DOUBLE_EQ(ro.counters[0].exclusive, 120);
  EXPECT_GE(ro.inclusive_ns.median, ri.inclusive_ns.median);
}

// In a time-only session enter_time_only is enter: the pair's cost is subtracted as usual.
TEST(Session, ATimeOnlyRegionInATimeOnlySessionIsAnyRegion) {
  SessionOptions o = fake_options();
  o.backend = BackendKind::timer;
  fake_tick = 10;
  auto opened = Session::open(o);
  ASSERT_TRUE(opened) << opened.error().message;
  auto& s = *opened;
  ASSERT_TRUE(s->time_only());
  const int a = s->region("a");
  observer::enter_time_only(s->state(), a);
  spend(1000);
  Session::leave(s->state(), a);
  s->begin(a);
  spend(1000);
  s->end(a);
  const RegionReport r = s->report(a);
  EXPECT_EQ(r.calls, 2u);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.min, r.inclusive_ns.max);
}

TEST(Session, ScopedRegionsAndTheMacro) {
  auto s = open_fake(0);
  const int id = s->region("scoped");
  {
    Region r(*s, id);
    spend(500);
  }
  for (int i = 0; i < 3; ++i) {
    HWPROF_REGION(*s, "macro");
    spend(700);
  }
  EXPECT_EQ(s->report(id).calls, 1u);
  EXPECT_DOUBLE_EQ(s->report(id).inclusive_ns.median, 500);
  const int macro = s->region("macro");
  EXPECT_EQ(s->report(macro).calls, 3u);
  EXPECT_DOUBLE_EQ(s->report(macro).inclusive_ns.median, 700);

  // A second session binds the same site to its own id.
  auto other = open_fake(0);
  const int first = other->region("first");
  for (int i = 0; i < 2; ++i) {
    for (Session* session : {s.get(), other.get()}) {
      HWPROF_REGION(*session, "shared-site");
    }
  }
  EXPECT_EQ(s->report(s->region("shared-site")).calls, 2u);
  EXPECT_EQ(other->report(other->region("shared-site")).calls, 2u);
  EXPECT_EQ(other->region("shared-site"), first + 1) << "registered in `other` on its first entry there";
}

TEST(Session, TheMacroCompilesToNothingWhenDisabled) {
  auto s = open_fake(0);
  EXPECT_EQ(run_disabled_region(*s), 42);
  EXPECT_TRUE(s->report().empty()) << "no region was registered or entered";
}

TEST(Session, RegionsFromSeveralThreadsKeepTheirOwnStacks) {
  SessionOptions o;
  o.overhead_pairs = 100;
  o.backend = BackendKind::timer;
  auto opened = Session::open(o);
  ASSERT_TRUE(opened) << opened.error().message;
  Session& s = **opened;
  const int outer = s.region("outer");
  const int inner = s.region("inner");
  constexpr int kThreads = 4;
  constexpr int kCalls = 500;
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      for (int i = 0; i < kCalls; ++i) {
        s.begin(outer);
        s.begin(inner);
        s.end(inner);
        s.end(outer);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int id : {outer, inner}) {
    const RegionReport r = s.report(id);
    EXPECT_EQ(r.calls, static_cast<std::uint64_t>(kThreads * kCalls)) << r.name;
    EXPECT_EQ(r.unmatched, 0u) << r.name;
    EXPECT_EQ(r.inclusive_ns.n, r.calls) << r.name;
    EXPECT_GE(r.inclusive_ns.median, r.exclusive_ns.median) << r.name;
  }
  EXPECT_EQ(s.dropped_threads(), 0u);
}

TEST(Session, ThreadsBeyondMaxThreadsAreDroppedNotMixedUp) {
  SessionOptions o = fake_options();
  o.max_threads = 2;
  auto s = open_fake(0, o);  // the test thread took one slot during calibration
  const int a = s->region("a");
  constexpr int kThreads = 3;
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      start.arrive_and_wait();
      s->begin(a);
      start.arrive_and_wait();  // all three inside at once
      s->end(a);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(s->report(a).calls, 1u);
  EXPECT_EQ(s->dropped_threads(), 2u);
  EXPECT_EQ(s->report(a).unmatched, 0u);
}

TEST(Session, OverlappingRegionsOnTwoThreadsEachSeeTheSharedCounter) {
  // A process-wide counter: both overlapping regions count what either thread did.
  auto s = open_fake(0);
  const int a = s->region("a");
  const int b = s->region("b");
  std::barrier step(2);
  std::thread other([&] {
    s->begin(b);
    step.arrive_and_wait();  // 1: both open
    step.arrive_and_wait();  // 2: work done
    s->end(b);
  });
  s->begin(a);
  step.arrive_and_wait();
  fake_ops += 1000;
  step.arrive_and_wait();
  s->end(a);
  other.join();
  EXPECT_DOUBLE_EQ(s->report(a).counters[0].inclusive, 1000);
  EXPECT_DOUBLE_EQ(s->report(b).counters[0].inclusive, 1000);
}

TEST(Session, ACounterSetWithNothingOpenMeasuresTimeOnly) {
  class Closed final : public CounterSet {
   public:
    Closed() { events_.push_back({"cycles", "count", CounterStatus::unsupported, "no PMU here"}); }
    BackendKind backend() const noexcept override { return BackendKind::perf; }
    void start() noexcept override {}
    void stop() noexcept override {}
    void read(CounterSnapshot& out) noexcept override {
      reads++;
      out.valid[0] = false;
    }
    int reads = 0;
  };
  auto closed = std::make_unique<Closed>();
  Closed* raw = closed.get();
  auto opened = Session::open(fake_options(), std::move(closed));
  ASSERT_TRUE(opened);
  auto& s = *opened;
  EXPECT_TRUE(s->time_only());
  EXPECT_EQ(s->backend(), BackendKind::timer);
  const int a = s->region("a");
  s->begin(a);
  spend(100);
  s->end(a);
  EXPECT_EQ(raw->reads, 0) << "nothing to read";
  const RegionReport r = s->report(a);
  EXPECT_DOUBLE_EQ(r.inclusive_ns.median, 100);
  ASSERT_EQ(r.counters.size(), 1u);
  EXPECT_EQ(r.counters[0].status, CounterStatus::unsupported);
  EXPECT_EQ(r.counters[0].reason, "no PMU here");
}

TEST(Session, OneHintForEventsThatCannotBeCounted) {
  SessionOptions o = fake_options();
  std::vector<std::string> hints;
  o.on_hint = [&](const std::string& h) { hints.push_back(h); };
  auto s = open_fake(0, o);
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_TRUE(contains(hints[0], "dram-bytes")) << hints[0];
  EXPECT_TRUE(contains(hints[0], "uncore")) << hints[0];
  EXPECT_EQ(s->hints(), hints);
}

TEST(Session, WithoutACallbackTheFirstHintGoesToStderrOncePerProcess) {
  SessionOptions o = fake_options();
  o.on_hint = nullptr;
  session::rearm_stderr_hint();  // as in a fresh process
  ::testing::internal::CaptureStderr();
  auto a = open_fake(0, o);
  auto b = open_fake(0, o);
  const std::string err = ::testing::internal::GetCapturedStderr();
  std::size_t lines = 0;
  for (std::size_t at = err.find("hwprof: "); at != std::string::npos; at = err.find("hwprof: ", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << err;
  EXPECT_TRUE(contains(err, "dram-bytes")) << err;
  EXPECT_EQ(a->hints().size(), 1u) << "every session still keeps its hints";
  EXPECT_EQ(b->hints().size(), 1u);
}

TEST(Session, TimerBackendWithoutEventsIsTimeOnly) {
  SessionOptions o;
  o.backend = BackendKind::timer;
  o.overhead_pairs = 100;
  auto s = Session::open(o);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE((*s)->time_only());
  EXPECT_TRUE((*s)->events().empty());
  EXPECT_TRUE((*s)->hints().empty());
  EXPECT_GT((*s)->overhead().pair_ns, 0.0);
  EXPECT_TRUE((*s)->clock_source() == "tsc" || (*s)->clock_source() == "CLOCK_MONOTONIC") << (*s)->clock_source();
  EXPECT_EQ(open_fake()->clock_source(), "injected");
}

TEST(Session, ConfigurationErrors) {
  SessionOptions timer;
  timer.backend = BackendKind::timer;
  timer.events = {"wall-tim"};
  auto t = Session::open(timer);
  ASSERT_FALSE(t);
  EXPECT_TRUE(contains(t.error().message, "wall-tim")) << t.error().message;
  EXPECT_TRUE(contains(t.error().message, "wall-time")) << "a suggestion: " << t.error().message;

  SessionOptions perf;
  perf.backend = BackendKind::perf;
  perf.events = {"cyclez"};
  auto p = Session::open(perf);
  ASSERT_FALSE(p);
  EXPECT_TRUE(contains(p.error().message, "cyclez")) << p.error().message;

  SessionOptions group;
  group.group = "no-such-group";
  group.counters_dirs = {HWPROF_COUNTERS_DIR};
  auto g = Session::open(group);
  ASSERT_FALSE(g);
  EXPECT_TRUE(contains(g.error().message, "no-such-group")) << g.error().message;

  SessionOptions nowhere;
  nowhere.group = "ipc";
  nowhere.counters_dirs = {"/nonexistent/counters"};
  auto n = Session::open(nowhere);
  ASSERT_FALSE(n);
  EXPECT_TRUE(contains(n.error().message, "/nonexistent/counters")) << n.error().message;

  SessionOptions zero;
  zero.max_threads = 0;
  EXPECT_FALSE(Session::open(zero, nullptr));
}

TEST(Session, GroupsLoadByNameForTheFamilyAndGiveMetricsPerCall) {
  // The software group exists for every family; loading it by name must find it.
  SessionOptions by_name;
  by_name.group = "software";
  by_name.family = "zen3";
  by_name.counters_dirs = {HWPROF_COUNTERS_DIR};
  by_name.backend = BackendKind::perf;
  by_name.overhead_pairs = 0;
  by_name.on_hint = [](const std::string&) {};
  auto s = Session::open(by_name);
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_NE((*s)->group(), nullptr);
  EXPECT_EQ((*s)->group()->name, "software");
  ASSERT_GE((*s)->events().size(), 4u);
  EXPECT_EQ((*s)->events()[0].name, "task-clock");

  // A group file of the timer backend's clocks: metrics evaluate per call, "time" included.
  const std::string dir = ::testing::TempDir() + "hwprof-session-group-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/clocks.txt";
  std::ofstream(file) << "TITLE Clocks\nSCOPE software\nFAMILIES software\n\nEVENTS\nwall  wall-time\n"
                         "cpu   thread-cpu-time\n\nMETRICS\nCPU share [ratio] = cpu / wall\n"
                         "Wall per call [s] = 1e-9 * wall\nWall share [ratio] = 1e-9 * wall / time\n"
                         "Made-up traffic [bytes] ROLE dram_bytes = 64 * cpu\n\n"
                         "DESCRIPTION\nTest clocks.\n\nSOURCE\nThis test.\n";
  SessionOptions by_path;
  by_path.group = file;
  by_path.backend = BackendKind::timer;
  by_path.overhead_pairs = 0;
  auto t = Session::open(by_path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(t) << t.error().message;
  Session& session = **t;
  ASSERT_EQ(session.events().size(), 2u);
  const int id = session.region("spin");
  for (int i = 0; i < 3; ++i) {
    Region r(session, id);
    volatile double x = 1;
    for (int k = 0; k < 100000; ++k) x = x * 1.0000001;
  }
  const RegionReport r = session.report(id);
  ASSERT_EQ(r.metrics.size(), 4u);
  EXPECT_EQ(r.metrics[0].name, "CPU share");
  EXPECT_EQ(r.metrics[0].unit, "ratio");
  // The group's roles come with the metrics, for the roofline (docs/profile.md).
  EXPECT_EQ(r.metrics[0].role, MetricRole::none);
  EXPECT_EQ(r.metrics[3].role, MetricRole::dram_bytes);
  for (const RegionMetric& m : r.metrics) {
    ASSERT_TRUE(m.value.has_value()) << m.name << ": " << m.reason;
    EXPECT_GT(*m.value, 0.0) << m.name;
  }
  EXPECT_DOUBLE_EQ(*r.metrics[1].value, 1e-9 * r.counters[0].per_call());
  EXPECT_DOUBLE_EQ(*r.metrics[2].value, 1e-9 * r.counters[0].per_call() / (1e-9 * r.total_inclusive_ns / static_cast<double>(r.calls)));
}

TEST(Session, CountsWhileOpenAndStopsWhenDestroyed) {
  std::atomic<int> running{-1};
  {
    auto s = Session::open(fake_options(), std::make_unique<FakeCounters>(0, false, &running));
    ASSERT_TRUE(s);
    EXPECT_EQ(running.load(), 1);
  }
  EXPECT_EQ(running.load(), 0);
}

TEST(Session, BackendNames) {
  EXPECT_EQ(backend_name(BackendKind::automatic), "auto");
  EXPECT_EQ(backend_name(BackendKind::perf), "perf");
  EXPECT_EQ(backend_name(BackendKind::papi), "papi");
  EXPECT_EQ(backend_name(BackendKind::timer), "timer");
}

}  // namespace
}  // namespace hwprof

namespace hwprof::session {
namespace {

// Algorithm R keeps call n with probability k/(n+1): over calls k..N-1 the expected number kept
// is k·(H(N) − H(k)) ≈ k·ln(N/k); and every slot below k is as likely as any other.
TEST(Reservoir, KeepsEachLaterCallWithProbabilityKOverNPlusOne) {
  constexpr std::size_t k = 100;
  constexpr std::uint64_t kCalls = 200000;
  EXPECT_EQ(reservoir_slot(0, k, 7), 0u);
  EXPECT_EQ(reservoir_slot(99, k, 7), 99u);
  double expected = 0;
  std::size_t kept = 0;
  std::vector<std::size_t> per_slot(k, 0);
  for (std::uint64_t n = k; n < kCalls; ++n) {
    expected += static_cast<double>(k) / static_cast<double>(n + 1);
    const std::size_t slot = reservoir_slot(n, k, 7);
    if (slot == kNotKept) continue;
    ASSERT_LT(slot, k);
    ++kept;
    ++per_slot[slot];
  }
  EXPECT_NEAR(static_cast<double>(kept), expected, 4 * std::sqrt(expected));  // ≈ 760 ± 110
  const auto [low, high] = std::minmax_element(per_slot.begin(), per_slot.end());
  EXPECT_GT(*low, 0u);
  EXPECT_LT(*high, 30u) << "no slot is favoured (about 7.6 each)";
}

TEST(Reservoir, AnArenaHandsOutZeroedBlocksUntilItIsUsedUp) {
  SampleArena arena;
  ASSERT_TRUE(arena.reserve(1000));
  float* a = arena.claim(600);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a[0], 0.0f);
  EXPECT_EQ(a[1199], 0.0f);
  EXPECT_EQ(arena.claim(401), nullptr) << "only 400 are left";
  float* b = arena.claim(400);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b, a + 1200);
  EXPECT_EQ(arena.claim(1), nullptr);
  SampleArena none;
  EXPECT_EQ(none.claim(1), nullptr) << "an arena that reserved nothing hands out nothing";
}

}  // namespace
}  // namespace hwprof::session
