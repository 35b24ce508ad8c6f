// A program's own regions with the installed hwprof::regions: literal names with their work,
// a nested region, names made at run time, and a second thread. Run with HWPROF_OUTPUT=DIR.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <hwprof/regions.hpp>

namespace {
std::vector<float> a(1 << 14, 1.0f), b(1 << 14, 2.0f), c(1 << 14);

void axpy() {
  HWPROF_SCOPE_WORK("axpy", 2.0 * a.size(), 12.0 * a.size());
  for (std::size_t i = 0; i < a.size(); ++i) c[i] = 2.0f * a[i] + b[i];
}
}  // namespace

int main() {
  for (int step = 0; step < 10; ++step) {
    HWPROF_SCOPE("step");
    axpy();
    for (int layer = 0; layer < 3; ++layer) {
      const std::string name = "layer" + std::to_string(layer);
      HWPROF_SCOPE_WORK(name, 1.0 * a.size(), 8.0 * a.size());
      for (std::size_t i = 0; i < a.size(); ++i) c[i] += a[i];
    }
  }
  std::thread([] {
    for (int i = 0; i < 5; ++i) axpy();
  }).join();
  std::printf("regions consumer: c[0] = %g\n", static_cast<double>(c[0]));
  return 0;
}
