// Measurement statistics: what a list of samples (one region's times, one benchmark's runs)
// says — centre, spread, tails, outliers and how sure the median is — and the two policies a
// measurement loop needs: how long to warm up and how many iterations to keep.
#pragma once

#include <cstddef>
#include <vector>
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// Every field is in the unit of the samples. With no samples every field is 0.
struct Summary {
  std::size_t n = 0;
  double median = 0.0;
  double mean = 0.0;
  double stddev = 0.0;  // sample standard deviation (n − 1 in the denominator); 0 when n < 2
  double min = 0.0;
  double max = 0.0;
  // Percentiles by linear interpolation between the order statistics (numpy's default,
  // "linear", Hyndman & Fan's definition 7): the p-th percentile of sorted x[0..n) is
  // x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]) with h = (n − 1)·p/100.
  double p5 = 0.0;
  double p95 = 0.0;
  double p99 = 0.0;
  // Median absolute deviation (unscaled): median of |x − median|.
  double mad = 0.0;
  // Samples with |x − median| > 3 · 1.4826 · MAD (Leys et al. 2013; 1.4826 makes the MAD a
  // consistent estimate of the standard deviation for normal data, 3 is their "very
  // conservative" cut). When MAD is 0, every sample that differs from the median counts.
  std::size_t outliers = 0;
  // Distribution-free confidence interval of the median from two order statistics (see
  // median_ci_coverage); available from n = 6 on, since with fewer samples even [min, max]
  // covers the median with less than 95% probability. When unavailable the bounds are 0.
  double median_ci_low = 0.0;
  double median_ci_high = 0.0;
  // The exact probability that [median_ci_low, median_ci_high] holds the true median (≥ 0.95),
  // or 0 when there is no 95% interval.
  double median_ci_coverage = 0.0;

  bool has_median_ci() const noexcept { return median_ci_coverage > 0.0; }
  double cv() const noexcept { return mean != 0.0 ? stddev / mean : 0.0; }  // coefficient of variation
};

Summary summarize(std::vector<double> x);
Summary summarize(const double* samples, std::size_t count);

// The Mann–Whitney U test (Wilcoxon rank-sum) of two independent samples: the two-sided
// p-value of the hypothesis that neither tends to be larger than the other. Exact — the
// permutation distribution of U, counted by dynamic programming — when neither sample has more
// than 50 values and no value is shared; otherwise the normal approximation with the tie-
// corrected variance and a continuity correction (Mann & Whitney 1947; scipy.stats.mannwhitneyu
// computes the same). An empty sample gives p = 1.
struct RankTest {
  double u = 0.0;        // U of the first sample: the pairs (a_i, b_j) with a_i > b_j, ties half
  double p_value = 1.0;  // two-sided
  bool exact = false;
};
RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);
// The smallest two-sided p-value the test can give for samples of these sizes (no ties):
// 2 / C(n1 + n2, n1). With 3 and 3 samples it is 0.1, so no difference is significant at 0.05.
double mann_whitney_min_p(std::size_t n1, std::size_t n2);

// Warm-up: run until the coefficient of variation (sample stddev / mean) of the last `window`
// runs falls below `max_cv`, at most `max_runs` runs; or a fixed number of runs.
class WarmupPolicy {
 public:
  static WarmupPolicy runs(int count);
  static WarmupPolicy until_stable(int window = 5, double max_cv = 0.05, int max_runs = 50);

  // Records one warm-up run that took `seconds`; true when warm-up is over.
  bool done_after(double seconds);
  bool done() const noexcept;
  int completed() const noexcept { return completed_; }
  // The last window's coefficient of variation reached max_cv (false for a fixed count, and
  // when warm-up stopped at max_runs without settling).
  bool settled() const noexcept { return settled_; }
  double last_cv() const noexcept { return last_cv_; }  // 0 until a full window was seen
  void reset();

 private:
  WarmupPolicy(int window, double max_cv, int max_runs);
  int window_ = 0;  // 0: a fixed count of max_runs_
  double max_cv_ = 0.0;
  int max_runs_ = 0;
  int completed_ = 0;
  bool settled_ = false;
  double last_cv_ = 0.0;
  std::vector<double> recent_;  // ring of the last window_ runs
};

// Iterations: a fixed count, or keep going until `min_seconds` have been spent (with at least
// `min_count` and at most `max_count` iterations).
class IterationPolicy {
 public:
  static IterationPolicy count(int iterations);
  static IterationPolicy min_time(double min_seconds, int min_count = 1, int max_count = 1'000'000);

  // Whether another iteration should run after `done` iterations took `elapsed_seconds`.
  bool more(int done, double elapsed_seconds) const noexcept;

 private:
  IterationPolicy(int min_count, int max_count, double min_seconds) : min_count_(min_count), max_count_(max_count), min_seconds_(min_seconds) {}
  int min_count_ = 1;
  int max_count_ = 1;
  double min_seconds_ = 0.0;
};

}  // namespace hwprof
HWPROF_API_END
