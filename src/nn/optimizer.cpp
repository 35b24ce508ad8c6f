// SGD with momentum and Adam, as torch.optim 1.13 writes them (torch/optim/sgd.py,
// torch/optim/adam.py, the single-tensor paths). One pass over each parameter: update, then
// zero the gradient, so the gradient is read and written once per step. The loop bodies have
// no branches inside (the first-step and momentum cases are hoisted), so GCC vectorises them.
#include "nn/optimizer.hpp"

#include <cmath>
#include "common/stages.hpp"

namespace hwprof::nn {
namespace {

// Below this many elements an update runs on the calling thread: waking OpenMP workers costs
// more than a small tensor's update.
constexpr std::int64_t kOptimizerParallelMin = 1 << 15;

}  // namespace

void sgd_update(const SgdHyper& h, float* weight, float* gradient, float* momentum_buffer, std::int64_t n, bool first_step) {
  const float lr = h.learning_rate;
  const float wd = h.weight_decay;
  const float mu = h.momentum;
  if (mu == 0.0f || momentum_buffer == nullptr) {
#pragma omp parallel for simd if (parallel : n > kOptimizerParallelMin) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      weight[i] -= lr * (gradient[i] + wd * weight[i]);
      gradient[i] = 0.0f;
    }
  } else if (first_step) {
    // torch clones d into the buffer on the first step: buf = d, not momentum·0 + d — the same
    // number, but written without reading the (uninitialised) buffer.
#pragma omp parallel for simd if (parallel : n > kOptimizerParallelMin) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const float d = gradient[i] + wd * weight[i];
      momentum_buffer[i] = d;
      weight[i] -= lr * d;
      gradient[i] = 0.0f;
    }
  } else {
#pragma omp parallel for simd if (parallel : n > kOptimizerParallelMin) schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
      const float d = mu * momentum_buffer[i] + (gradient[i] + wd * weight[i]);
      momentum_buffer[i] = d;
      weight[i] -= lr * d;
      gradient[i] = 0.0f;
    }
  }
}

void adam_update(const AdamHyper& h, float* weight, float* gradient, float* first_moment, float* second_moment, std::int64_t n, std::int64_t step) {
  // Bias corrections in double: β2^t for t in the thousands loses digits in float.
  const double t = static_cast<double>(step);
  const double correction1 = 1.0 - std::pow(static_cast<double>(h.beta1), t);
  const double correction2 = 1.0 - std::pow(static_cast<double>(h.beta2), t);
  const auto step_size = static_cast<float>(h.learning_rate / correction1);
  const auto inv_sqrt_correction2 = static_cast<float>(1.0 / std::sqrt(correction2));
  const float b1 = h.beta1, b2 = h.beta2, eps = h.epsilon, wd = h.weight_decay;
#pragma omp parallel for simd if (parallel : n > kOptimizerParallelMin) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = gradient[i] + wd * weight[i];
    const float m = b1 * first_moment[i] + (1.0f - b1) * g;
    const float v = b2 * second_moment[i] + (1.0f - b2) * g * g;
    first_moment[i] = m;
    second_moment[i] = v;
    weight[i] -= step_size * m / (std::sqrt(v) * inv_sqrt_correction2 + eps);
    gradient[i] = 0.0f;
  }
}

}  // namespace hwprof::nn
