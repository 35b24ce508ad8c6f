// Element-wise unary ops over a whole tensor: their definitions' kernels (one vectorised loop
// per op, in src/ops/elementwise_unary.cpp), each thread of the team on its own part.
#include <omp.h>

#include <cstdint>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

// Below this many elements one thread is faster than waking the team (a vectorised
// activation runs about a nanosecond per element; waking a team costs microseconds).
constexpr i64 kActivationParallelMin = i64{1} << 15;

// run(begin, count) on consecutive parts of [0, n), one per thread, each starting on a multiple
// of 16 floats (a 64-byte line, where the tensor's storage is aligned).
template <class Part>
void split(i64 n, Part run) {
  if (n <= kActivationParallelMin) {
    run(i64{0}, n);
    return;
  }
#pragma omp parallel num_threads(kernel_threads())
  {
    const i64 parts = omp_get_num_threads();
    const i64 part = omp_get_thread_num();
    const auto edge = [&](i64 k) { return k == parts ? n : (n / parts * k) & ~i64{15}; };
    const i64 begin = edge(part);
    const i64 end = edge(part + 1);
    if (end > begin) run(begin, end - begin);
  }
}

}  // namespace

void unary_forward(const hwprof::ops::UnaryForm& form, const float* x, float* y, i64 n, float parameter) {
  split(n, [&](i64 begin, i64 count) { form.forward(x + begin, y + begin, count, parameter); });
}

void unary_backward(const hwprof::ops::UnaryForm& form, const float* kept, const float* dy, float* dx, i64 n, float parameter) {
  if (dx == nullptr) return;
  split(n, [&](i64 begin, i64 count) { form.backward(kept + begin, dy + begin, dx + begin, count, parameter); });
}

}  // namespace hwprof::nn
