// Branch-free float exp, log1p, tanh and erf for the element-wise kernels. glibc's expf/erff are
// opaque scalar calls that stop GCC's vectoriser (its SIMD variants need -ffast-math); these
// are plain arithmetic on floats and their bits, so a `#pragma omp simd` loop calling them
// becomes SSE/AVX code. Accuracy is stated per function and checked by nn_kernels_test.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include "common/stages.hpp"

namespace hwprof::ops {

// c ? a : b on the bits. Written as a ternary, GCC threads the constant side of a clamp
// through the following arithmetic and leaves control flow that its vectoriser refuses.
inline float select(bool c, float a, float b) noexcept {
  const std::uint32_t mask = 0u - static_cast<std::uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & mask) | (std::bit_cast<std::uint32_t>(b) & ~mask));
}

// e^x with a relative error of a few ulp. x = n·ln2 + r with |r| <= ln2/2; e^r by the
// polynomial of Cephes expf.c (S. L. Moshier, Cephes Math Library), 2^n written into the
// exponent bits, which keeps 2^n a normal float for x in [-87.3, 88]. Below -87.3 (where e^x
// is denormal) the result is 0, so a masked -inf logit gets exactly zero weight; between 88
// and ln(FLT_MAX) it saturates at e^88 ≈ 1.65e38, and beyond that it is +inf. NaN stays NaN.
inline float exp_approx(float x) noexcept {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // ln2 split so that n·kLn2Hi is exact (Cephes C1, C2)
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer in the low mantissa bits
  const float input = x;
  x = select(x > 88.0f, 88.0f, x);  // comparisons with NaN are false: NaN passes through
  x = select(x < -87.3f, -87.3f, x);
  const float shifted = x * kLog2e + kRound;
  const float n = shifted - kRound;
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // The low mantissa bits of `shifted` hold n in two's complement; unsigned arithmetic keeps
  // a NaN's garbage bits free of overflow.
  const std::uint32_t n_bits = std::bit_cast<std::uint32_t>(shifted) - std::bit_cast<std::uint32_t>(kRound);
  const float scale = std::bit_cast<float>((n_bits + 127u) << 23);
  constexpr float kLogFloatMax = 88.7228391f;
  const float result = select(input > kLogFloatMax, std::numeric_limits<float>::infinity(), p * scale);
  return select(input < -87.3f, 0.0f, result);
}

// 1 / (1 + e^-x): no cancellation on either side (e^-x saturating only moves results that
// are already below 1e-38).
inline float sigmoid_approx(float x) noexcept {
  return 1.0f / (1.0f + exp_approx(-x));
}

// tanh: for |x| < 0.625 the odd polynomial of Cephes tanhf.c (1 - 2/(e^2x + 1) would cancel
// there), beyond it 1 - 2/(e^{2|x|} + 1) with the sign of x.
inline float tanh_approx(float x) noexcept {
  const float a = std::abs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float large = std::copysign(1.0f - 2.0f / (exp_approx(2.0f * a) + 1.0f), x);
  return select(a < 0.625f, small, large);
}

// log(1 + t) for t in [0, 1], a few ulp, also for tiny t (1 + t is never formed there). As
// Cephes logf.c: log(1 + f) = f − f²/2 + f³·P(f) for f in [√½ − 1, √2 − 1]; from √2 − 1 on,
// 1 + t = 2·(1 + f) with f = (t − 1)/2, and log 2 is added in two parts.
inline float log1p_approx(float t) noexcept {
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  const bool halved = t >= 0.41421356f;
  const float f = select(halved, (t - 1.0f) * 0.5f, t);
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float e = select(halved, 1.0f, 0.0f);
  const float log_f = f + (p * f * z + e * kLn2Lo - 0.5f * z);
  return log_f + e * kLn2Hi;
}

// log(1 + e^x) as PyTorch's Softplus (beta 1): x itself above the threshold 20; below it
// max(x, 0) + log1p(e^−|x|), which neither overflows nor loses e^x for very negative x.
inline float softplus_approx(float x) noexcept {
  const float smooth = select(x > 0.0f, x, 0.0f) + log1p_approx(exp_approx(-std::abs(x)));
  return select(x > 20.0f, x, smooth);
}

// Φ(x) = (1 + erf(x/√2)) / 2, the standard normal CDF, by Abramowitz & Stegun 7.1.26:
// erfc(a) ≈ t·(a1 + t·(a2 + ...))·e^{-a²}, t = 1/(1 + p·a), a >= 0, |error| <= 1.5e-7. The
// same approximation is PyTorch's vectorised CPU erf (Vectorized<float>::erf). Evaluating the
// negative side as erfc/2 directly avoids the cancellation of 1 + erf(x/√2) in the tail.
inline float normal_cdf_approx(float x) noexcept {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  const float a = std::abs(x) * kInvSqrt2;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float half_erfc = 0.5f * p * t * exp_approx(-a * a);
  return select(x >= 0.0f, 1.0f - half_erfc, half_erfc);
}

// φ(x) = e^{-x²/2} / √(2π), the standard normal density.
inline float normal_pdf_approx(float x) noexcept {
  constexpr float kInvSqrt2Pi = 0.39894228040143268f;
  return kInvSqrt2Pi * exp_approx(-0.5f * x * x);
}

// The largest of x[0..n), -inf when n == 0; NaNs are skipped (a softmax still turns them into
// NaN through the exponentials). A `max` reduction is a chain of dependent comparisons that
// GCC will not vectorise without -ffast-math; kLanes independent maxima break the chain.
inline float max_of(const float* x, std::int64_t n) noexcept {
  constexpr std::int64_t kLanes = 16;
  float lane[kLanes];
  for (float& l : lane) l = -std::numeric_limits<float>::infinity();
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
    for (std::int64_t j = 0; j < kLanes; ++j) lane[j] = select(x[i + j] > lane[j], x[i + j], lane[j]);
  }
  for (; i < n; ++i) lane[0] = select(x[i] > lane[0], x[i], lane[0]);
  float m = lane[0];
  for (std::int64_t j = 1; j < kLanes; ++j) m = select(lane[j] > m, lane[j], m);
  return m;
}

}  // namespace hwprof::ops
