// The optimizer a training step uses (the engine's, and the profiler's --train), with
// PyTorch's semantics. Its own header so that the profiler's options need no engine header.
#pragma once

#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

enum class OptimizerKind { sgd, adam };

// PyTorch's semantics (torch.optim.SGD with momentum and dampening 0; torch.optim.Adam).
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::sgd;
  double learning_rate = 0.01;
  double momentum = 0.9;      // sgd
  double weight_decay = 0.0;  // L2 added to the gradient, as torch.optim does
  double beta1 = 0.9;         // adam
  double beta2 = 0.999;       // adam
  double epsilon = 1e-8;      // adam
};

}  // namespace hwprof

HWPROF_API_END
