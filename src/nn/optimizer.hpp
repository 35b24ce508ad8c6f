// Optimizer updates on raw float32 buffers, with torch.optim's semantics. Each update also
// zeroes the gradient it consumed, ready for the next step's accumulation.
#pragma once

#include <cstdint>
#include "common/stages.hpp"

namespace hwprof::nn {

struct SgdHyper {
  float learning_rate = 0.01f;
  float momentum = 0.0f;
  float weight_decay = 0.0f;
};

// torch.optim.SGD (dampening 0, nesterov false): d = g + wd·w; with momentum,
// buf = d on the first step, else buf = momentum·buf + d; then d = buf; w -= lr·d.
// `momentum_buffer` may be null when momentum is 0.
void sgd_update(const SgdHyper& h, float* weight, float* gradient, float* momentum_buffer, std::int64_t n, bool first_step);

struct AdamHyper {
  float learning_rate = 0.001f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float weight_decay = 0.0f;
};

// torch.optim.Adam (amsgrad false): g += wd·w; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
// w -= lr/(1-β1^t) · m / (√v/√(1-β2^t) + ε), for step t = 1, 2, ...
void adam_update(const AdamHyper& h, float* weight, float* gradient, float* first_moment, float* second_moment, std::int64_t n, std::int64_t step);

}  // namespace hwprof::nn
