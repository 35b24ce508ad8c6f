// The arithmetic behind Summary, as free functions so that tests check each piece on
// hand-computed values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hwprof/statistics.hpp"

namespace hwprof::common {

// The p-th percentile (0 ≤ p ≤ 100) of sorted[0..n), n ≥ 1, by linear interpolation
// (numpy.percentile's default; Hyndman & Fan 1996, definition 7).
double percentile_sorted(const double* sorted, std::size_t n, double p) noexcept;
// The same for float values (a parameter tensor's), interpolated in double.
double percentile_sorted(const float* sorted, std::size_t n, double p) noexcept;

// The median of `values` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

// The 95 % Wilson score interval of a proportion of k in n (E. B. Wilson, "Probable inference,
// the law of succession, and statistical inference", JASA 22, 1927): it stays inside [0, 1]
// and is honest for small counts, where the normal approximation is not. [0, 1] for n = 0;
// exactly 0 below at k = 0 and 1 above at k = n.
struct ProportionInterval {
  double low = 0.0;
  double high = 1.0;
};
ProportionInterval wilson_interval(std::uint64_t k, std::uint64_t n) noexcept;

// P(B ≤ k) for B ~ Binomial(n, 1/2).
double binomial_half_cdf(std::size_t n, std::size_t k) noexcept;

// A distribution-free confidence interval for the median (Conover, "Practical Nonparametric
// Statistics", 3rd ed. 1999, §3.2, the confidence interval for a quantile; Hahn & Meeker,
// "Statistical Intervals", 1991, §5.2): the number of samples below the true median is
// Binomial(n, 1/2), so P(x_(l) ≤ median < x_(n−l+1)) = 1 − 2·P(B ≤ l − 1). The interval is the
// narrowest symmetric pair of order statistics (1-based ranks) whose coverage is at least
// `confidence`; `available` is false when even [x_(1), x_(n)] falls short (n < 6 for 95%).
struct OrderStatisticInterval {
  bool available = false;
  std::size_t lower_rank = 0;  // 1-based
  std::size_t upper_rank = 0;  // 1-based, n − lower_rank + 1
  double coverage = 0.0;
};
OrderStatisticInterval median_interval_ranks(std::size_t n, double confidence = 0.95) noexcept;

// Sample standard deviation / mean of x[0..n); 0 when n < 2 or the mean is 0.
double coefficient_of_variation(const double* x, std::size_t n) noexcept;

}  // namespace hwprof::common
