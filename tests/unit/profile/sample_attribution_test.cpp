// Samples attributed to the regions open when they were taken (src/placement/sample_attribution.cpp):
// the innermost region of the sample's own thread, a pool worker's launching thread, ambiguous
// and outside samples, edges; the Wilson interval of a share; a region's breakdown by function.
#include "placement/sample_attribution.hpp"

#include <vector>

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::profile {
namespace {

// Thread 1 runs region 0 over [100, 200) and, nested in it, region 1 over [120, 150].
const std::vector<RegionSpan> kLayers = {{1, 0, 0, 100, 200}, {1, 1, 1, 120, 150}};

TEST(SampleAttribution, TheInnermostRegionOpenOnTheSamplesThreadWhenItWasTaken) {
  const std::vector<TakenSample> samples = {{1, 110}, {1, 130}, {1, 120}, {1, 150}, {1, 160}, {1, 250}, {1, 50}};
  const auto a = attribute_samples(kLayers, samples);
  ASSERT_EQ(a.size(), samples.size());
  EXPECT_EQ(a[0].region, 0);
  EXPECT_EQ(a[1].region, 1);
  EXPECT_EQ(a[2].region, 1);  // on the inner region's start: inside it
  EXPECT_EQ(a[3].region, 1);  // on its end: still inside
  EXPECT_EQ(a[4].region, 0);
  for (int i : {0, 1, 2, 3, 4}) EXPECT_EQ(a[static_cast<std::size_t>(i)].how, Attribution::own_thread);
  EXPECT_EQ(a[5].region, -1);
  EXPECT_EQ(a[5].how, Attribution::outside);
  EXPECT_EQ(a[6].how, Attribution::outside);
}

// A BLAS or OpenMP worker enters no region: its sample goes to the region the one thread with
// regions open was in at that moment; with two such threads it cannot be told, and says so.
TEST(SampleAttribution, APoolWorkersSampleGoesToTheLaunchingThreadsRegionOrIsAmbiguous) {
  const std::vector<TakenSample> worker = {{7, 130}, {7, 170}, {7, 190}};
  auto a = attribute_samples(kLayers, worker);
  EXPECT_EQ(a[0].region, 1);
  EXPECT_EQ(a[0].how, Attribution::launching_thread);
  EXPECT_EQ(a[1].region, 0);
  std::vector<RegionSpan> two = kLayers;
  two.push_back({2, 5, 0, 160, 180});  // another application thread in region 5 meanwhile
  a = attribute_samples(two, worker);
  EXPECT_EQ(a[0].region, 1);
  EXPECT_EQ(a[1].region, -1);
  EXPECT_EQ(a[1].how, Attribution::ambiguous);
  EXPECT_EQ(a[2].region, 0);  // the other thread left region 5 at 180
  // The other thread's own samples stay its own.
  a = attribute_samples(two, std::vector<TakenSample>{{2, 170}});
  EXPECT_EQ(a[0].region, 5);
  EXPECT_EQ(a[0].how, Attribution::own_thread);
}

TEST(SampleAttribution, ASpanEndingBeforeItStartsIsIgnored) {
  const std::vector<RegionSpan> spans = {{1, 3, 0, 200, 100}};
  const auto a = attribute_samples(spans, std::vector<TakenSample>{{1, 150}});
  EXPECT_EQ(a[0].how, Attribution::outside);
}

// The session's timeline (threads by number, times since it opened) as spans of OS threads on
// CLOCK_MONOTONIC, the time base of samples.
TEST(SampleAttribution, TheSessionsTimelineBecomesSpansOfOsThreadsOnTheMonotonicClock) {
  SessionSnapshot snapshot;
  snapshot.opened_monotonic_ns = 1'000'000;
  snapshot.threads.push_back(SessionThread{1, 4242, "main", false, {}, 0, {}});
  snapshot.timeline.push_back({1, 3, 0, 500.0, 250.0});
  snapshot.timeline.push_back({2, 4, 0, 600.0, 10.0});  // a thread the snapshot does not list
  const auto spans = spans_of(snapshot);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].tid, 4242);
  EXPECT_EQ(spans[0].region, 3);
  EXPECT_EQ(spans[0].start_ns, 1'000'500u);
  EXPECT_EQ(spans[0].end_ns, 1'000'750u);
  const auto a = attribute_samples(spans, std::vector<TakenSample>{{4242, 1'000'600}});
  EXPECT_EQ(a[0].region, 3);
}

// Wilson's interval, checked against its closed form worked by hand for n = 10.
TEST(SampleAttribution, AShareCarriesItsWilsonInterval) {
  const Share half = share_of(5, 10);
  EXPECT_DOUBLE_EQ(half.share, 0.5);
  EXPECT_NEAR(half.low, 0.2366, 1e-4);
  EXPECT_NEAR(half.high, 0.7634, 1e-4);
  const Share none = share_of(0, 10);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 0.2775, 1e-4);
  const Share all = share_of(10, 10);
  EXPECT_NEAR(all.low, 0.7225, 1e-4);
  EXPECT_EQ(all.high, 1.0);
  const Share empty = share_of(0, 0);
  EXPECT_EQ(empty.of, 0u);
  // More samples, a narrower interval around the same share.
  const Share many = share_of(500, 1000);
  EXPECT_LT(many.high - many.low, half.high - half.low);
}

TEST(SampleAttribution, EachRegionsSamplesDivideAmongItsFunctionsMostFirst) {
  // Region 0: 40 samples, 30 in function 2 (im2col, say) and 10 in function 1; 6 of them on a
  // worker. Region 1: 3 samples (too few). Outside: 2, one of them ambiguous.
  std::vector<AttributedSample> a;
  std::vector<int> f;
  for (int i = 0; i < 30; ++i) {
    a.push_back({0, i < 6 ? Attribution::launching_thread : Attribution::own_thread});
    f.push_back(2);
  }
  for (int i = 0; i < 10; ++i) {
    a.push_back({0, Attribution::own_thread});
    f.push_back(1);
  }
  for (int i = 0; i < 3; ++i) {
    a.push_back({1, Attribution::own_thread});
    f.push_back(i);
  }
  a.push_back({-1, Attribution::outside});
  f.push_back(-1);
  a.push_back({-1, Attribution::ambiguous});
  f.push_back(4);
  const auto rows = break_down(a, f, 2);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].region, 0);
  EXPECT_EQ(rows[0].samples, 40u);
  EXPECT_EQ(rows[0].by_launching_thread, 6u);
  EXPECT_TRUE(rows[0].enough);
  ASSERT_EQ(rows[0].top.size(), 2u);
  EXPECT_EQ(rows[0].top[0].function, 2);
  EXPECT_DOUBLE_EQ(rows[0].top[0].share.share, 0.75);
  EXPECT_EQ(rows[0].top[1].function, 1);
  EXPECT_EQ(rows[0].rest, 0u);
  EXPECT_EQ(rows[1].region, 1);
  EXPECT_FALSE(rows[1].enough);
  EXPECT_EQ(rows[1].top.size(), 2u);  // three functions of one sample each: two listed, ties by index
  EXPECT_EQ(rows[1].top[0].function, 0);
  EXPECT_EQ(rows[1].rest, 1u);
  EXPECT_EQ(rows[2].region, -1);  // outside every region, last
  EXPECT_EQ(rows[2].samples, 2u);
}

}  // namespace
}  // namespace hwprof::profile
