// The PyTorch observer allocates nothing per call once a call's signature was seen
// (docs/torch.md, "Counters and their cost"): a small convolution and linear layer, forward and
// backward, stepped after a warm-up, with the global operator new counted. Prints the
// allocations of the measured steps; tests/CMakeLists.txt runs it with and without the
// observer and requires the same count. Without it, the program registers an observer that
// does nothing, with the same settings: what libtorch allocates for any observer (boxing each
// op's inputs, the names of backward functions) is then in both counts, and the difference
// is hwprof's.
#include <cstdio>

#include <ATen/record_function.h>
#include <hwprof/torch.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/torch.h>

#include "counting_new.hpp"

namespace {
// The observer that does nothing asks, as hwprof's does, to be called back when each backward
// pass ends (to close what it opened for it): libtorch keeps that callback in the pass's list,
// one allocation per pass, which is then in both counts.
thread_local bool pass_callback_queued = false;
std::unique_ptr<at::ObserverContext> nothing_at_start(const at::RecordFunction& fn) {
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION && !pass_callback_queued) {
    torch::autograd::Engine::get_default_engine().queue_callback([] { pass_callback_queued = false; });
    pass_callback_queued = true;
  }
  return nullptr;
}
void nothing_at_end(const at::RecordFunction&, at::ObserverContext*) {}
}  // namespace

int main() {
  if (hwprof_torch_observing() == 0) {
    at::addGlobalCallback(at::RecordFunctionCallback(&nothing_at_start, &nothing_at_end)
                              .needsInputs(true)
                              .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
  }
  torch::manual_seed(0);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 4, 3).padding(1));
  torch::nn::BatchNorm2d norm(4);
  torch::nn::Linear fc(4 * 8 * 8, 10);
  const torch::Tensor x = torch::randn({2, 1, 8, 8});
  const auto step = [&] {
    const torch::Tensor y = fc(torch::relu(norm(conv(x))).flatten(1));
    y.sum().backward();
  };
  for (int i = 0; i < 3; ++i) step();  // the signatures are seen, their regions registered
  const long before = hwprof::test::allocations.load();
  for (int i = 0; i < 20; ++i) step();
  std::printf("observing=%d allocations=%ld\n", hwprof_torch_observing(), hwprof::test::allocations.load() - before);
  return 0;
}
