// The peer for hwprof's GEMM ceiling: OpenBLAS sgemm/dgemm called directly, square n×n×n,
// the given number of OpenBLAS threads, best and median of `reps` timed calls after a warm-up.
//   hwprof_gemm_peer THREADS N [N ...]      prints one JSON line per precision and size
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cblas.h>

namespace {

template <class T, class Gemm>
void measure(const char* precision, int n, int reps, Gemm gemm) {
  std::vector<T> a(static_cast<std::size_t>(n) * n, T(1.0)), b(a), c(a);
  gemm(n, a.data(), b.data(), c.data());  // warm-up
  std::vector<double> gflops;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm(n, a.data(), b.data(), c.data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gflops.push_back(2.0 * n * n * static_cast<double>(n) / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("{\"precision\": \"%s\", \"n\": %d, \"best_gflops\": %.3f, \"median_gflops\": %.3f}\n", precision, n, gflops.back(),
              gflops[gflops.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s THREADS N [N ...]\n", argv[0]);
    return 2;
  }
  openblas_set_num_threads(std::atoi(argv[1]));
  for (int i = 2; i < argc; ++i) {
    const int n = std::atoi(argv[i]);
    measure<float>("sp", n, 5, [](int m, const float* x, const float* y, float* z) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, x, m, y, m, 0.0f, z, m);
    });
    measure<double>("dp", n, 5, [](int m, const double* x, const double* y, double* z) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, x, m, y, m, 0.0, z, m);
    });
  }
  return 0;
}
