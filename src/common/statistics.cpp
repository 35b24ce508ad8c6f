#include "common/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hwprof {
namespace common {

namespace {

template <class T>
double interpolated_percentile(const T* sorted, std::size_t n, double p) noexcept {
  if (n == 0) return 0.0;
  const double h = static_cast<double>(n - 1) * std::clamp(p, 0.0, 100.0) / 100.0;
  const auto below = static_cast<std::size_t>(std::floor(h));
  if (below + 1 >= n) return static_cast<double>(sorted[n - 1]);
  const auto lo = static_cast<double>(sorted[below]);
  const auto hi = static_cast<double>(sorted[below + 1]);
  return lo + (h - static_cast<double>(below)) * (hi - lo);
}

}  // namespace

double percentile_sorted(const double* sorted, std::size_t n, double p) noexcept {
  return interpolated_percentile(sorted, n, p);
}

double percentile_sorted(const float* sorted, std::size_t n, double p) noexcept {
  return interpolated_percentile(sorted, n, p);
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

ProportionInterval wilson_interval(std::uint64_t k, std::uint64_t n) noexcept {
  ProportionInterval out;
  if (n == 0) return out;
  constexpr double z = 1.959963984540054;  // the normal distribution's 97.5th percentile
  const auto count = static_cast<double>(n);
  const double p = static_cast<double>(k) / count;
  const double denominator = 1.0 + z * z / count;
  const double centre = (p + z * z / (2.0 * count)) / denominator;
  const double half = z * std::sqrt(p * (1.0 - p) / count + z * z / (4.0 * count * count)) / denominator;
  // At 0 and n the bound is exactly 0 or 1 (the formula's rounding could leave it an ulp away).
  out.low = k == 0 ? 0.0 : std::max(0.0, centre - half);
  out.high = k >= n ? 1.0 : std::min(1.0, centre + half);
  return out;
}

namespace {

// Walks the Binomial(n, 1/2) probabilities in log space — 2^-n underflows a double from
// n = 1075 on — calling visit(k, P(B ≤ k)) until it returns false.
template <class Visit>
void walk_binomial_half(std::size_t n, Visit visit) noexcept {
  const double nd = static_cast<double>(n);
  double log_pmf = -nd * std::log(2.0);
  double cdf = 0.0;
  for (std::size_t k = 0; k <= n; ++k) {
    cdf += std::exp(log_pmf);
    if (!visit(k, std::min(cdf, 1.0))) return;
    const double kd = static_cast<double>(k);
    log_pmf += std::log(nd - kd) - std::log(kd + 1.0);
  }
}

}  // namespace

double binomial_half_cdf(std::size_t n, std::size_t k) noexcept {
  if (k >= n) return 1.0;
  double result = 0.0;
  walk_binomial_half(n, [&](std::size_t i, double cdf) {
    result = cdf;
    return i < k;
  });
  return result;
}

OrderStatisticInterval median_interval_ranks(std::size_t n, double confidence) noexcept {
  OrderStatisticInterval out;
  if (n == 0) return out;
  const double tail = (1.0 - confidence) / 2.0;
  constexpr double kSlack = 1e-12;  // rounding in the summed probabilities
  walk_binomial_half(n, [&](std::size_t k, double cdf) {
    if (cdf > tail + kSlack || 2 * (k + 1) > n) return false;
    // P(B ≤ k) ≤ tail: ranks k + 1 and n − k still cover with at least `confidence`.
    out.available = true;
    out.lower_rank = k + 1;
    out.upper_rank = n - k;
    out.coverage = 1.0 - 2.0 * cdf;
    return true;
  });
  return out;
}

double coefficient_of_variation(const double* x, std::size_t n) noexcept {
  if (n < 2) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(n);
  if (mean == 0.0) return 0.0;
  double squares = 0.0;
  for (std::size_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  return std::sqrt(squares / static_cast<double>(n - 1)) / std::abs(mean);
}

}  // namespace common

namespace {

constexpr std::size_t kExactLimit = 50;

// P(U <= u) under the null for samples of n1 and n2 without ties: the count of the
// arrangements of n1 + n2 ranks whose U is at most u, over C(n1 + n2, n1). counts[j][u] is
// built up one first-sample value at a time (f(i, j, u) = f(i - 1, j, u - j) + f(i, j - 1, u)).
double exact_u_cdf(std::size_t n1, std::size_t n2, std::size_t u) {
  const std::size_t max_u = n1 * n2;
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t j = 0; j <= n2; ++j) prev[j][0] = 1.0;  // i = 0: one arrangement, U = 0
  for (std::size_t i = 1; i <= n1; ++i) {
    std::vector<std::vector<double>> cur(n2 + 1, std::vector<double>(max_u + 1, 0.0));
    cur[0][0] = 1.0;
    for (std::size_t j = 1; j <= n2; ++j) {
      for (std::size_t v = 0; v <= i * j; ++v) {
        cur[j][v] = (v >= j ? prev[j][v - j] : 0.0) + cur[j - 1][v];
      }
    }
    prev = std::move(cur);
  }
  double below = 0.0;
  double all = 0.0;
  for (std::size_t v = 0; v <= max_u; ++v) {
    all += prev[n2][v];
    if (v <= u) below += prev[n2][v];
  }
  return all > 0 ? below / all : 1.0;
}

}  // namespace

RankTest mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  RankTest out;
  const std::size_t n1 = a.size();
  const std::size_t n2 = b.size();
  if (n1 == 0 || n2 == 0) return out;
  // Ranks of the pooled values, ties sharing their mean rank.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n1 + n2);
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  const double n = static_cast<double>(n1 + n2);
  double rank_sum_a = 0.0;
  double tie_term = 0.0;  // Σ (t³ − t) over the groups of t equal values
  bool ties = false;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) rank_sum_a += pooled[k].second == 0 ? mean_rank : 0.0;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double d1 = static_cast<double>(n1);
  const double d2 = static_cast<double>(n2);
  out.u = rank_sum_a - d1 * (d1 + 1.0) / 2.0;
  const double smaller = std::min(out.u, d1 * d2 - out.u);
  if (!ties && n1 <= kExactLimit && n2 <= kExactLimit) {
    out.exact = true;
    out.p_value = std::min(1.0, 2.0 * exact_u_cdf(n1, n2, static_cast<std::size_t>(std::llround(smaller))));
    return out;
  }
  const double mean = d1 * d2 / 2.0;
  const double variance = d1 * d2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
  if (variance <= 0) return out;  // every value equal: no evidence either way
  const double z = std::max(0.0, std::abs(out.u - mean) - 0.5) / std::sqrt(variance);
  out.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return out;
}

double mann_whitney_min_p(std::size_t n1, std::size_t n2) {
  if (n1 == 0 || n2 == 0) return 1.0;
  // 2 / C(n1 + n2, n1), in log space: lgamma keeps it finite for any size.
  const double log_choose =
      std::lgamma(static_cast<double>(n1 + n2 + 1)) - std::lgamma(static_cast<double>(n1 + 1)) - std::lgamma(static_cast<double>(n2 + 1));
  return std::min(1.0, 2.0 * std::exp(-log_choose));
}

Summary summarize(const double* samples, std::size_t count) {
  return summarize(std::vector<double>(samples, samples + count));
}

Summary summarize(std::vector<double> x) {
  Summary s;
  s.n = x.size();
  if (x.empty()) return s;
  std::sort(x.begin(), x.end());
  const std::size_t n = x.size();
  s.min = x.front();
  s.max = x.back();
  s.median = common::percentile_sorted(x.data(), n, 50.0);
  s.p5 = common::percentile_sorted(x.data(), n, 5.0);
  s.p95 = common::percentile_sorted(x.data(), n, 95.0);
  s.p99 = common::percentile_sorted(x.data(), n, 99.0);

  double sum = 0.0;
  for (double v : x) sum += v;
  s.mean = sum / static_cast<double>(n);
  if (n >= 2) {
    double squares = 0.0;
    for (double v : x) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }

  std::vector<double> deviation(n);
  for (std::size_t i = 0; i < n; ++i) deviation[i] = std::abs(x[i] - s.median);
  std::vector<double> sorted_deviation = deviation;
  std::sort(sorted_deviation.begin(), sorted_deviation.end());
  s.mad = common::percentile_sorted(sorted_deviation.data(), n, 50.0);
  const double cut = 3.0 * 1.4826 * s.mad;
  s.outliers = static_cast<std::size_t>(std::count_if(deviation.begin(), deviation.end(), [cut](double d) { return d > cut; }));

  const common::OrderStatisticInterval ci = common::median_interval_ranks(n, 0.95);
  if (ci.available) {
    s.median_ci_low = x[ci.lower_rank - 1];
    s.median_ci_high = x[ci.upper_rank - 1];
    s.median_ci_coverage = ci.coverage;
  }
  return s;
}

// ---- warm-up and iteration policies -------------------------------------------------------

WarmupPolicy::WarmupPolicy(int window, double max_cv, int max_runs)
    : window_(std::max(window, 0)), max_cv_(max_cv), max_runs_(std::max(max_runs, 0)) {
  recent_.reserve(static_cast<std::size_t>(window_));
}

WarmupPolicy WarmupPolicy::runs(int count) {
  return WarmupPolicy(0, 0.0, count);
}

// A window of one run has no spread to judge: at least two.
WarmupPolicy WarmupPolicy::until_stable(int window, double max_cv, int max_runs) {
  return WarmupPolicy(std::max(window, 2), max_cv, max_runs);
}

bool WarmupPolicy::done() const noexcept {
  return settled_ || completed_ >= max_runs_;
}

bool WarmupPolicy::done_after(double seconds) {
  if (done()) return true;
  ++completed_;
  if (window_ > 0) {
    const auto window = static_cast<std::size_t>(window_);
    if (recent_.size() < window) {
      recent_.push_back(seconds);
    } else {
      recent_[static_cast<std::size_t>(completed_ - 1) % window] = seconds;
    }
    if (recent_.size() == window) {
      last_cv_ = common::coefficient_of_variation(recent_.data(), recent_.size());
      settled_ = last_cv_ < max_cv_;
    }
  }
  return done();
}

void WarmupPolicy::reset() {
  completed_ = 0;
  settled_ = false;
  last_cv_ = 0.0;
  recent_.clear();
}

IterationPolicy IterationPolicy::count(int iterations) {
  return IterationPolicy(iterations, iterations, 0.0);
}

IterationPolicy IterationPolicy::min_time(double min_seconds, int min_count, int max_count) {
  return IterationPolicy(min_count, std::max(min_count, max_count), min_seconds);
}

bool IterationPolicy::more(int done, double elapsed_seconds) const noexcept {
  if (done < min_count_) return true;
  if (done >= max_count_) return false;
  return elapsed_seconds < min_seconds_;
}

}  // namespace hwprof
