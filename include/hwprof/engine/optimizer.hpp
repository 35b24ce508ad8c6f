// The optimizer a training step uses (the engine's, and the profiler's --train), with
// PyTorch's semantics. Its own header so that the profiler's options need no engine header.
#pragma once

#include <optional>
#include <string_view>

#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// The one name for an optimizer, in the engine, the profiler and the cost model alike. Each
// keeps a different number of state tensors per parameter, which is what the cost model's
// memory and optimizer-step counts need: sgd none, momentum one velocity, adam two moments.
enum class OptimizerKind {
  sgd,       // plain SGD: torch.optim.SGD(momentum=0)
  momentum,  // SGD with momentum: torch.optim.SGD(momentum=m, dampening=0)
  adam,      // torch.optim.Adam
};

// PyTorch's semantics (torch.optim.SGD with dampening 0; torch.optim.Adam).
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::momentum;
  double learning_rate = 0.01;
  double momentum = 0.9;      // momentum
  double weight_decay = 0.0;  // L2 added to the gradient, as torch.optim does
  double beta1 = 0.9;         // adam
  double beta2 = 0.999;       // adam
  double epsilon = 1e-8;      // adam
};

// The optimizer's name in reports and on command lines ("sgd", "momentum", "adam"), and back;
// nothing for another name.
std::string_view optimizer_name(OptimizerKind optimizer) noexcept;
std::optional<OptimizerKind> parse_optimizer(std::string_view name) noexcept;

}  // namespace hwprof

HWPROF_API_END
