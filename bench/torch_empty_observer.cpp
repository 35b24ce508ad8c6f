// An observer that does nothing: a global RecordFunction callback asking for inputs, with the
// scopes hwprof's observer asks for (src/torch/observer.cpp), registered when this library is
// loaded. What any such observer costs a program, libtorch's part alone: bench/torch_overhead.py
// loads it into a PyTorch process (ctypes) as its "empty observer" configuration, and
// bench/torch_observer_floor.cpp times the same callback per op.
#include <ATen/record_function.h>

#include <cstdio>
#include <memory>

namespace {

std::unique_ptr<at::ObserverContext> start_nothing(const at::RecordFunction&) {
  return nullptr;
}
void end_nothing(const at::RecordFunction&, at::ObserverContext*) {}

struct Registration {
  Registration() noexcept {
    try {
      at::addGlobalCallback(at::RecordFunctionCallback(&start_nothing, &end_nothing)
                                .needsInputs(true)
                                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
    } catch (...) {
      std::fprintf(stderr, "hwprof-torch-empty-observer: the callback could not be registered\n");
    }
  }
};
const Registration registration;

}  // namespace
