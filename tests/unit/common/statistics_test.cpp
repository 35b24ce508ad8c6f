// Measurement statistics (src/common/statistics.cpp) on samples whose figures were computed
// by hand: percentiles by numpy's linear rule, the sample standard deviation, MAD outliers,
// the order-statistic confidence interval of the median (ranks and coverage checked against
// exact binomial sums), and the warm-up and iteration policies.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "common/statistics.hpp"

namespace hwprof {
namespace {

TEST(Summary, OneToTenByHand) {
  const Summary s = summarize({7, 3, 10, 1, 5, 2, 9, 4, 8, 6});  // order must not matter
  EXPECT_EQ(s.n, 10u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.stddev, std::sqrt(82.5 / 9), 1e-12);  // Σ(x − 5.5)² = 82.5, n − 1 = 9
  // h = 9p: p5 → 0.45 → 1 + 0.45; p95 → 8.55 → 9 + 0.55; p99 → 8.91 → 9 + 0.91.
  EXPECT_NEAR(s.p5, 1.45, 1e-12);
  EXPECT_NEAR(s.p95, 9.55, 1e-12);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  // |x − 5.5| = 0.5, 0.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5, 4.5: median 2.5.
  EXPECT_DOUBLE_EQ(s.mad, 2.5);
  EXPECT_EQ(s.outliers, 0u);
  // n = 10: ranks 2 and 9, coverage 1 − 2·(1 + 10)/1024.
  ASSERT_TRUE(s.has_median_ci());
  EXPECT_DOUBLE_EQ(s.median_ci_low, 2);
  EXPECT_DOUBLE_EQ(s.median_ci_high, 9);
  EXPECT_DOUBLE_EQ(s.median_ci_coverage, 1.0 - 22.0 / 1024.0);
  EXPECT_NEAR(s.cv(), std::sqrt(82.5 / 9) / 5.5, 1e-12);
}

TEST(Summary, EmptyAndSingleSample) {
  const Summary empty = summarize(std::vector<double>{});
  EXPECT_EQ(empty.n, 0u);
  EXPECT_EQ(empty.median, 0.0);
  EXPECT_FALSE(empty.has_median_ci());

  const Summary one = summarize({42.0});
  EXPECT_EQ(one.n, 1u);
  for (double v : {one.median, one.mean, one.min, one.max, one.p5, one.p95, one.p99}) EXPECT_DOUBLE_EQ(v, 42.0);
  EXPECT_DOUBLE_EQ(one.stddev, 0.0);
  EXPECT_EQ(one.outliers, 0u);
  EXPECT_FALSE(one.has_median_ci());
  EXPECT_EQ(one.median_ci_low, 0.0);
}

TEST(Summary, EvenAndOddMedians) {
  EXPECT_DOUBLE_EQ(summarize({3, 1, 2}).median, 2.0);
  EXPECT_DOUBLE_EQ(summarize({4, 1, 3, 2}).median, 2.5);
  EXPECT_DOUBLE_EQ(summarize({1, 1, 1, 100}).median, 1.0);
}

TEST(Summary, PercentilesInterpolateBetweenOrderStatistics) {
  const std::vector<double> x = {10, 20, 30, 40, 50};  // sorted; h = 4p
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 0), 10);
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 100), 50);
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 25), 20);
  EXPECT_NEAR(common::percentile_sorted(x.data(), x.size(), 5), 12, 1e-12);   // h = 0.2
  EXPECT_NEAR(common::percentile_sorted(x.data(), x.size(), 95), 48, 1e-12);  // h = 3.8
  EXPECT_NEAR(common::percentile_sorted(x.data(), x.size(), 99), 49.6, 1e-12);
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 150), 50) << "clamped to 100";
}

TEST(Summary, FloatPercentilesInterpolateInDouble) {
  // A parameter tensor's values: the same definition as for doubles.
  const std::vector<float> x = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 25), 20);
  EXPECT_NEAR(common::percentile_sorted(x.data(), x.size(), 95), 48, 1e-12);
  EXPECT_DOUBLE_EQ(common::percentile_sorted(x.data(), x.size(), 100), 50);
  EXPECT_EQ(common::percentile_sorted(x.data(), 0, 50), 0.0);
  // 2^25 − 1 has no float: a difference taken in float would give 16777217.
  const std::vector<float> wide = {1.0f, 33554432.0f};
  EXPECT_DOUBLE_EQ(common::percentile_sorted(wide.data(), wide.size(), 50), 16777216.5);
}

TEST(Summary, MadOutliers) {
  // Sorted: 8 9 10 10 10 10 10 11 12 50; median 10. |x − 10| sorted: 0 0 0 0 0 1 1 2 2 40 →
  // MAD 0.5, cut 3·1.4826·0.5 = 2.2239: only 50 is out (8 and 12 deviate by 2).
  const Summary s = summarize({10, 10, 11, 9, 10, 12, 8, 10, 50, 10});
  EXPECT_DOUBLE_EQ(s.median, 10);
  EXPECT_DOUBLE_EQ(s.mad, 0.5);
  EXPECT_EQ(s.outliers, 1u);

  // Two far points on both sides.
  EXPECT_EQ(summarize({-100, 1, 2, 3, 4, 5, 6, 7, 8, 100}).outliers, 2u);
  // MAD 0: every sample off the median is an outlier.
  const Summary flat = summarize({5, 5, 5, 5, 5, 7});
  EXPECT_DOUBLE_EQ(flat.mad, 0.0);
  EXPECT_EQ(flat.outliers, 1u);
  EXPECT_EQ(summarize({5, 5, 5}).outliers, 0u);
}

TEST(Summary, MeanAndStddevAreNotRobustButMedianIs) {
  const Summary s = summarize({1, 1, 1, 1, 1001});
  EXPECT_DOUBLE_EQ(s.mean, 201);
  EXPECT_DOUBLE_EQ(s.median, 1);
  EXPECT_NEAR(s.stddev, std::sqrt((4 * 200.0 * 200.0 + 800.0 * 800.0) / 4), 1e-9);
}

TEST(MedianInterval, RanksAndCoverageMatchExactBinomialSums) {
  struct Case {
    std::size_t n, lower, upper;
    double coverage;
  };
  // Coverage 1 − 2·P(B ≤ lower − 1), B ~ Binomial(n, 1/2), summed exactly with integers.
  const Case cases[] = {
      {6, 1, 6, 1.0 - 2.0 / 64},         {10, 2, 9, 1.0 - 22.0 / 1024},        {20, 6, 15, 0.9586105346679688},  // P(B ≤ 5) = 21700 / 2^20
      {100, 40, 61, 0.9647997997822952}, {1000, 469, 532, 0.9537088026395019},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.n);
    const common::OrderStatisticInterval ci = common::median_interval_ranks(c.n);
    ASSERT_TRUE(ci.available);
    EXPECT_EQ(ci.lower_rank, c.lower);
    EXPECT_EQ(ci.upper_rank, c.upper);
    EXPECT_NEAR(ci.coverage, c.coverage, 1e-9);
    EXPECT_GE(ci.coverage, 0.95);
  }
}

TEST(MedianInterval, TooFewSamplesHaveNoNinetyFivePercentInterval) {
  for (std::size_t n = 0; n <= 5; ++n) EXPECT_FALSE(common::median_interval_ranks(n).available) << n;
  // A lower confidence is reachable earlier: n = 5 gives [x1, x5] at 1 − 2/32 = 0.9375.
  const common::OrderStatisticInterval ci = common::median_interval_ranks(5, 0.9);
  ASSERT_TRUE(ci.available);
  EXPECT_EQ(ci.lower_rank, 1u);
  EXPECT_DOUBLE_EQ(ci.coverage, 0.9375);
}

TEST(MedianInterval, SummaryUsesTheOrderStatisticsOfItsSamples) {
  std::vector<double> x;
  for (int i = 20; i >= 1; --i) x.push_back(i * 10.0);  // 10 .. 200, reversed
  const Summary s = summarize(x);
  EXPECT_DOUBLE_EQ(s.median_ci_low, 60);    // rank 6
  EXPECT_DOUBLE_EQ(s.median_ci_high, 150);  // rank 15
  EXPECT_LE(s.median_ci_low, s.median);
  EXPECT_GE(s.median_ci_high, s.median);
}

TEST(Binomial, CdfOnKnownValuesAndSymmetryForLargeN) {
  EXPECT_DOUBLE_EQ(common::binomial_half_cdf(10, 2), 56.0 / 1024);
  EXPECT_DOUBLE_EQ(common::binomial_half_cdf(10, 0), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(common::binomial_half_cdf(10, 10), 1.0);
  EXPECT_NEAR(common::binomial_half_cdf(100, 39), 0.017600100108852407, 1e-12);
  // 2^-n underflows a double past n = 1074; the log-space walk must not. For even n,
  // P(B ≤ n/2 − 1) + P(B ≤ n/2) = 1 by symmetry.
  for (std::size_t n : {2000u, 5000u}) {
    const double a = common::binomial_half_cdf(n, n / 2 - 1);
    const double b = common::binomial_half_cdf(n, n / 2);
    EXPECT_GT(a, 0.45) << n;
    EXPECT_NEAR(a + b, 1.0, 1e-9) << n;
  }
}

TEST(CoefficientOfVariation, ByHand) {
  const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};  // mean 5, Σ(x − 5)² = 32, n − 1 = 7
  EXPECT_NEAR(common::coefficient_of_variation(x, 8), std::sqrt(32.0 / 7) / 5, 1e-12);
  EXPECT_EQ(common::coefficient_of_variation(x, 1), 0.0);
  const double zeros[] = {0, 0, 0};
  EXPECT_EQ(common::coefficient_of_variation(zeros, 3), 0.0);
}

TEST(WarmupPolicy, StopsWhenTheLastWindowSettles) {
  WarmupPolicy w = WarmupPolicy::until_stable(3, 0.05, 20);
  EXPECT_FALSE(w.done_after(10.0));
  EXPECT_FALSE(w.done_after(5.0));
  EXPECT_FALSE(w.done_after(3.0));  // window 10, 5, 3: far from settled
  EXPECT_GT(w.last_cv(), 0.05);
  EXPECT_FALSE(w.done_after(1.00));
  EXPECT_FALSE(w.done_after(1.01));
  EXPECT_TRUE(w.done_after(0.99));  // window 1.00, 1.01, 0.99: cv = 0.01
  EXPECT_TRUE(w.settled());
  EXPECT_EQ(w.completed(), 6);
  EXPECT_NEAR(w.last_cv(), 0.01, 1e-12);
  EXPECT_TRUE(w.done_after(5.0)) << "stays done";
  EXPECT_EQ(w.completed(), 6);
  w.reset();
  EXPECT_FALSE(w.done());
  EXPECT_EQ(w.completed(), 0);
}

TEST(WarmupPolicy, GivesUpAtMaxRunsWithoutSettling) {
  WarmupPolicy w = WarmupPolicy::until_stable(4, 0.01, 10);
  int runs = 0;
  while (!w.done_after(runs % 2 == 0 ? 1.0 : 2.0)) ++runs;
  EXPECT_EQ(w.completed(), 10);
  EXPECT_FALSE(w.settled());
}

TEST(WarmupPolicy, FixedCount) {
  WarmupPolicy w = WarmupPolicy::runs(3);
  EXPECT_FALSE(w.done_after(1.0));
  EXPECT_FALSE(w.done_after(100.0));
  EXPECT_TRUE(w.done_after(1.0));
  EXPECT_FALSE(w.settled());
  EXPECT_TRUE(WarmupPolicy::runs(0).done());
}

TEST(IterationPolicy, CountAndMinimumTime) {
  const IterationPolicy count = IterationPolicy::count(5);
  EXPECT_TRUE(count.more(0, 100.0));
  EXPECT_TRUE(count.more(4, 100.0));
  EXPECT_FALSE(count.more(5, 0.0));

  const IterationPolicy timed = IterationPolicy::min_time(1.0, 3, 100);
  EXPECT_TRUE(timed.more(2, 50.0)) << "at least min_count";
  EXPECT_TRUE(timed.more(3, 0.5));
  EXPECT_FALSE(timed.more(3, 1.0));
  EXPECT_FALSE(timed.more(100, 0.1)) << "at most max_count";
}

// Wilson's interval by hand (z = 1.96): 5 of 10 → 0.5 ± 0.2634; 0 of 10 → [0, 0.2775] (the
// normal approximation would give [0, 0]); n = 0 says nothing: [0, 1].
TEST(WilsonInterval, HandComputedValuesAndItsEnds) {
  const common::ProportionInterval half = common::wilson_interval(5, 10);
  EXPECT_NEAR(half.low, 0.2366, 1e-4);
  EXPECT_NEAR(half.high, 0.7634, 1e-4);
  const common::ProportionInterval none = common::wilson_interval(0, 10);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 0.2775, 1e-4);
  const common::ProportionInterval all = common::wilson_interval(10, 10);
  EXPECT_NEAR(all.low, 1.0 - 0.2775, 1e-4);
  EXPECT_EQ(all.high, 1.0);
  const common::ProportionInterval empty = common::wilson_interval(0, 0);
  EXPECT_EQ(empty.low, 0.0);
  EXPECT_EQ(empty.high, 1.0);
  // Never outside [0, 1], and narrower with more samples.
  for (std::uint64_t n : {1U, 3U, 30U, 3000U}) {
    for (std::uint64_t k = 0; k <= n; k += std::max<std::uint64_t>(1, n / 7)) {
      const common::ProportionInterval w = common::wilson_interval(k, n);
      EXPECT_GE(w.low, 0.0);
      EXPECT_LE(w.high, 1.0);
      EXPECT_LE(w.low, static_cast<double>(k) / static_cast<double>(n));
      EXPECT_GE(w.high, static_cast<double>(k) / static_cast<double>(n));
    }
  }
  EXPECT_LT(common::wilson_interval(500, 1000).high - common::wilson_interval(500, 1000).low, half.high - half.low);
}

}  // namespace
}  // namespace hwprof
