// Dropout for training. Element i's keep/drop decision is a pure function of (seed, i): the
// i-th output of a splitmix64 stream started at `seed` (Steele, Lea & Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014; constants from Vigna's splitmix64.c). No
// generator state is shared, so any thread may take any element and the mask is the same for
// every thread count.
#include <cmath>
#include <cstdint>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

constexpr i64 kDropoutParallelMin = i64{1} << 14;

constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;

std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * kGoldenGamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double clamp_probability(double p) {
  return p < 0.0 ? 0.0 : (p > 1.0 ? 1.0 : p);
}

// Multiplier of kept elements: 1/(1 - p), and 0 when everything is dropped (p = 1), where
// PyTorch returns zeros too.
float keep_scale(double p) {
  p = clamp_probability(p);
  return p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
}

}  // namespace

void dropout_forward(const float* x, float* y, std::uint8_t* mask, double p, std::uint64_t seed, i64 n) {
  // Keep when the top 53 bits, a uniform integer in [0, 2^53), reach p·2^53: P(keep) = 1 - p.
  constexpr double kTwo53 = 9007199254740992.0;
  const auto threshold = static_cast<std::uint64_t>(std::ceil(clamp_probability(p) * kTwo53));
  const float scale = keep_scale(p);
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kDropoutParallelMin)
  for (i64 i = 0; i < n; ++i) {
    const std::uint8_t keep = (splitmix64(seed, static_cast<std::uint64_t>(i)) >> 11) >= threshold ? 1 : 0;
    mask[i] = keep;
    y[i] = x[i] * static_cast<float>(keep) * scale;
  }
}

void dropout_backward(const std::uint8_t* mask, const float* dy, float* dx, double p, i64 n) {
  if (dx == nullptr) return;
  const float scale = keep_scale(p);
#pragma omp parallel for simd num_threads(kernel_threads()) schedule(static) if (parallel : n > kDropoutParallelMin)
  for (i64 i = 0; i < n; ++i) dx[i] = dy[i] * static_cast<float>(mask[i]) * scale;
}

}  // namespace hwprof::nn
