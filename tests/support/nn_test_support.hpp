// Helpers for the kernel tests: seeded random buffers, a tolerance comparison that names the
// first mismatch, and central finite differences of a scalar function of a buffer.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace hwprof::nn::testing {

inline std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// |a - b| <= atol + rtol·|b| everywhere; on failure, the first index that differs.
inline ::testing::AssertionResult all_close(const std::vector<float>& actual, const std::vector<float>& expected, double rtol = 1e-4,
                                            double atol = 1e-5) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (!(std::abs(a - e) <= atol + rtol * std::abs(e))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs expected " << e;
    }
  }
  return ::testing::AssertionSuccess();
}

// d loss / d x[i] by central differences in double precision arithmetic around float data:
// `loss` recomputes the scalar from the current contents of x. Checks every element when
// x is small, else `samples` of them chosen by the seed; returns the indices checked with
// their numeric derivative.
inline std::vector<std::pair<std::size_t, double>> numeric_gradient(std::vector<float>& x, const std::function<double()>& loss,
                                                                    std::size_t samples = 64, double step = 1e-2, std::uint64_t seed = 7) {
  std::vector<std::size_t> indices;
  if (x.size() <= samples) {
    for (std::size_t i = 0; i < x.size(); ++i) indices.push_back(i);
  } else {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
    for (std::size_t k = 0; k < samples; ++k) indices.push_back(pick(rng));
  }
  std::vector<std::pair<std::size_t, double>> result;
  for (std::size_t i : indices) {
    const float saved = x[i];
    x[i] = saved + static_cast<float>(step);
    const double up = loss();
    x[i] = saved - static_cast<float>(step);
    const double down = loss();
    x[i] = saved;
    result.emplace_back(i, (up - down) / (2.0 * step));
  }
  return result;
}

// Compares an analytic gradient with numeric_gradient's samples: |a - n| <= atol + rtol·|n|.
inline ::testing::AssertionResult gradient_matches(const std::vector<float>& analytic, const std::vector<std::pair<std::size_t, double>>& numeric,
                                                   double rtol = 2e-2, double atol = 2e-3) {
  for (const auto& [i, n] : numeric) {
    const double a = analytic.at(i);
    if (!(std::abs(a - n) <= atol + rtol * std::abs(n))) {
      return ::testing::AssertionFailure() << "gradient element " << i << ": analytic " << a << " vs numeric " << n;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hwprof::nn::testing
