// A user's own training loop — a 2-layer MLP on OpenBLAS sgemm, ReLU and SGD — with hwprof's
// regions: the lines marked "hwprof" are all it takes (one include, one line per region).
// Run it with HWPROF_OUTPUT=DIR to get profile.json, profile.txt, roofline.svg, report.html
// and trace.json in DIR at exit.
//
//   HWPROF_OUTPUT=out build/release/bin/hwprof_example_mlp_regions 200
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <cblas.h>

#include <hwprof/regions.hpp>  // hwprof

namespace {

constexpr int kBatch = 64, kIn = 784, kHidden = 512, kOut = 10;

void gemm(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c, float beta = 0.0f) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}
// The work per call of a GEMM, for the roofline (FLOPs; bytes at least moved).
double gemm_flops(int m, int n, int k) {
  return 2.0 * m * n * k;
}
double gemm_bytes(int m, int n, int k) {
  return 4.0 * (1.0 * m * k + 1.0 * k * n + 2.0 * m * n);
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 100;
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> x(kBatch * kIn), w1(kIn * kHidden), h(kBatch * kHidden), w2(kHidden * kOut), y(kBatch * kOut);
  std::vector<float> dy(kBatch * kOut), dh(kBatch * kHidden), dw1(w1.size()), dw2(w2.size());
  for (auto* v : {&x, &w1, &w2}) std::generate(v->begin(), v->end(), [&] { return normal(rng); });
  float loss = 0.0f;
  for (int step = 0; step < steps; ++step) {
    HWPROF_SCOPE("train_step");  // hwprof
    {
      HWPROF_SCOPE_WORK("fc1", gemm_flops(kBatch, kHidden, kIn), gemm_bytes(kBatch, kHidden, kIn));  // hwprof
      gemm(false, false, kBatch, kHidden, kIn, x.data(), w1.data(), h.data());
    }
    {
      HWPROF_SCOPE_WORK("relu", h.size(), 8.0 * h.size());  // hwprof
      for (float& v : h) v = std::max(v, 0.0f);
    }
    {
      HWPROF_SCOPE_WORK("fc2", gemm_flops(kBatch, kOut, kHidden), gemm_bytes(kBatch, kOut, kHidden));  // hwprof
      gemm(false, false, kBatch, kOut, kHidden, h.data(), w2.data(), y.data());
    }
    {
      HWPROF_SCOPE("loss");  // hwprof
      loss = 0.0f;
      for (std::size_t i = 0; i < y.size(); ++i) {
        dy[i] = y[i] / kBatch;
        loss += 0.5f * y[i] * y[i] / kBatch;
      }
    }
    {
      HWPROF_SCOPE_WORK("backward", 2 * gemm_flops(kHidden, kOut, kBatch) + 2 * gemm_flops(kIn, kHidden, kBatch),
                        gemm_bytes(kIn, kHidden, kBatch) + 3 * gemm_bytes(kHidden, kOut, kBatch));  // hwprof
      gemm(true, false, kHidden, kOut, kBatch, h.data(), dy.data(), dw2.data());
      gemm(false, true, kBatch, kHidden, kOut, dy.data(), w2.data(), dh.data());
      for (std::size_t i = 0; i < h.size(); ++i) dh[i] = h[i] > 0.0f ? dh[i] : 0.0f;
      gemm(true, false, kIn, kHidden, kBatch, x.data(), dh.data(), dw1.data());
    }
    {
      HWPROF_SCOPE_WORK("sgd", 2.0 * (w1.size() + w2.size()), 12.0 * (w1.size() + w2.size()));  // hwprof
      for (std::size_t i = 0; i < w1.size(); ++i) w1[i] -= 0.01f * dw1[i];
      for (std::size_t i = 0; i < w2.size(); ++i) w2[i] -= 0.01f * dw2[i];
    }
  }
  std::printf("%d steps, loss %.6f\n", steps, static_cast<double>(loss));
  return 0;
}
