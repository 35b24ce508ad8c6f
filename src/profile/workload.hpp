// One iteration of a model on the engine — an inference forward pass or a training step —
// with its seeded input (and labels), as `hwprof profile` and the Profiler API run it.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/profiler.hpp"

namespace hwprof {

class Workload {
 public:
  static Result<Workload> create(const Graph& graph, const ProfileOptions& options, int threads) {
    ExecutorOptions e;
    e.batch = options.batch;
    e.threads = threads;
    e.seed = options.seed;
    e.training = options.train;
    e.optimizer = options.optimizer;
    auto executor = Executor::build(graph, e);
    if (!executor) return executor.error();
    Workload w(std::move(*executor), options.train);
    w.input_ = w.executor_.make_input(options.seed + 1);
    if (options.train) w.labels_ = w.executor_.make_labels(options.seed + 2);
    return w;
  }
  std::optional<Error> run() {
    if (train_) {
      auto loss = executor_.train_step(input_, labels_);
      if (!loss) return loss.error();
      if (!std::isfinite(*loss)) return Error{"the training loss became " + std::to_string(*loss) + "; lower the learning rate"};
      last_loss_ = *loss;
      return std::nullopt;
    }
    auto out = executor_.forward(input_);
    if (!out) return out.error();
    return std::nullopt;
  }
  Executor& executor() noexcept { return executor_; }
  std::int64_t input_bytes() const noexcept { return input_.bytes(); }
  double last_loss() const noexcept { return last_loss_; }  // of the last training step; 0 before one

 private:
  Workload(Executor executor, bool train) : executor_(std::move(executor)), train_(train) {}
  Executor executor_;
  bool train_ = false;
  Tensor input_;
  Tensor labels_;
  double last_loss_ = 0.0;
};

}  // namespace hwprof
