// What sampling costs a regions program, from its sampled and unsampled windows
// (src/placement/window_overhead.cpp): calls wholly inside a window of each kind, median against
// median, weighted by time; the two halves of the unsampled windows as the noise; NaN with the
// reason when too few calls compare. And HWPROF_SAMPLE's text (src/session/session_sampling.cpp).
#include "placement/window_overhead.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::profile {
namespace {

// Four windows of 1000 ns: sampled, unsampled, sampled, unsampled.
const std::vector<SampleWindow> kWindows = {{0, 1000, true}, {1000, 2000, false}, {2000, 3000, true}, {3000, 4000, false}};

// `n` calls of `ns` each of region `region`, back to back from `from`.
void add_calls(std::vector<RegionSpan>& spans, int region, std::uint64_t from, int n, std::uint64_t ns) {
  for (int i = 0; i < n; ++i)
    spans.push_back({1, region, 0, from + static_cast<std::uint64_t>(i) * ns, from + static_cast<std::uint64_t>(i + 1) * ns});
}

TEST(WindowOverhead, TheMedianCallSampledAgainstUnsampled) {
  std::vector<RegionSpan> spans;
  add_calls(spans, 0, 0, 6, 110);     // sampled: 110 ns
  add_calls(spans, 0, 1000, 6, 100);  // unsampled: 100 ns
  add_calls(spans, 0, 2000, 6, 110);
  add_calls(spans, 0, 3000, 6, 100);
  const WindowOverhead w = window_overhead(spans, kWindows);
  EXPECT_NEAR(w.overhead, 0.10, 1e-9);
  EXPECT_NEAR(w.noise, 0.0, 1e-9);  // the two unsampled windows agree
  EXPECT_EQ(w.sampled_windows, 2);
  EXPECT_EQ(w.unsampled_windows, 2);
  EXPECT_EQ(w.regions_compared, 1u);
  EXPECT_TRUE(w.reason.empty());
}

TEST(WindowOverhead, CallsAcrossAWindowsEdgeAreLeftOut) {
  std::vector<RegionSpan> spans;
  add_calls(spans, 0, 0, 6, 100);
  add_calls(spans, 0, 1000, 6, 100);
  add_calls(spans, 0, 3000, 6, 100);
  spans.push_back({1, 0, 0, 900, 1100});  // half sampled: a long call that would raise the sampled median
  spans.push_back({1, 0, 0, 950, 1300});
  spans.push_back({1, 0, 0, 990, 1500});
  const WindowOverhead w = window_overhead(spans, kWindows);
  EXPECT_NEAR(w.overhead, 0.0, 1e-9);
}

TEST(WindowOverhead, RegionsAreWeightedByTheirTime) {
  std::vector<RegionSpan> spans;
  add_calls(spans, 0, 0, 5, 100);  // region 0: 1500 ns in all, +0 %
  add_calls(spans, 0, 1000, 5, 100);
  add_calls(spans, 0, 3000, 5, 100);
  add_calls(spans, 1, 500, 5, 40);  // region 1: 200 ns sampled + 300 ns unsampled, +33 %
  add_calls(spans, 1, 1500, 5, 30);
  add_calls(spans, 1, 3500, 5, 30);
  const WindowOverhead w = window_overhead(spans, kWindows);
  EXPECT_NEAR(w.overhead, (1500.0 * 0.0 + 500.0 * (40.0 / 30.0 - 1.0)) / 2000.0, 1e-9);
  EXPECT_EQ(w.regions_compared, 2u);
  EXPECT_NEAR(w.noise, 0.0, 1e-9);
}

TEST(WindowOverhead, ACostWhoseNoiseIsUnknownIsNotGiven) {
  // One unsampled window: nothing to compare it with, so +33 % could be the windows' spread.
  std::vector<RegionSpan> spans;
  add_calls(spans, 1, 0, 5, 40);
  add_calls(spans, 1, 1000, 5, 30);
  const WindowOverhead w = window_overhead(spans, kWindows);
  EXPECT_TRUE(std::isnan(w.overhead));
  EXPECT_TRUE(std::isnan(w.noise));
  EXPECT_NE(w.reason.find("could not be told from noise"), std::string::npos) << w.reason;
}

TEST(WindowOverhead, TooFewCallsIsNaNWithTheReason) {
  std::vector<RegionSpan> spans;
  add_calls(spans, 0, 0, 2, 100);
  add_calls(spans, 0, 1000, 2, 100);
  const WindowOverhead w = window_overhead(spans, kWindows);
  EXPECT_TRUE(std::isnan(w.overhead));
  EXPECT_NE(w.reason.find("calls wholly inside"), std::string::npos) << w.reason;
  const WindowOverhead none = window_overhead(spans, std::vector<SampleWindow>{{0, 5000, true}});
  EXPECT_TRUE(std::isnan(none.overhead));
  EXPECT_NE(none.reason.find("shorter than two sampling windows"), std::string::npos) << none.reason;
}

TEST(SessionSampling, AnEmptyValueOrOneIsTheDefaultSpec) {
  EXPECT_EQ(sample_spec_text(""), "cpu-clock@1000");
  EXPECT_EQ(sample_spec_text("1"), "cpu-clock@1000");
  EXPECT_EQ(sample_spec_text("cpu-clock@4000"), "cpu-clock@4000");
}

TEST(SessionSampling, ABadSpecIsOneLineNamingTheVariableAndNothingStarts) {
  SessionSampler sampler;
  const std::string problem = sampler.start("cpu-clock@0");
  EXPECT_EQ(problem.rfind("HWPROF_SAMPLE: ", 0), 0u) << problem;
  EXPECT_NE(problem.find("the program runs unsampled"), std::string::npos) << problem;
  EXPECT_EQ(problem.find('\n'), std::string::npos) << problem;
  EXPECT_EQ(sampler.stop(), nullptr);
  EXPECT_NE(sampler.start("no-such-event").find("HWPROF_SAMPLE"), std::string::npos);
  EXPECT_EQ(sampler.stop(), nullptr);
}

}  // namespace
}  // namespace hwprof::profile
