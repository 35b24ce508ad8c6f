// The engine's dense kernels against their peer, OpenBLAS sgemm called directly at the same
// GEMM shape (M, N, K), in the same run: GPT-2 small's linear layers (256 tokens) and
// ResNet-18's im2col convolutions (batch 8, 224×224: the stem and the 3×3s of each stage).
// For a convolution the peer is ONE sgemm of the whole batch, M = K_out, N = batch·P·Q,
// K = C·R·S, on columns that already exist: the kernel's im2col, bias and per-sample split
// are its overhead. FLOPs are 2·M·N·K for both, so the ratio is peer time / kernel time.
// Repetitions alternate kernel and peer, so a busy neighbour slows both; best of each. Each is
// timed in its steady state: the kernel in 3 calls in a row, the first not counted (it wakes
// the OpenMP workers), as it runs inside a model; the peer in 2 calls. Each side starts after a
// 150 ms pause: the kernels' OpenMP workers busy-wait for a while after a region, and the
// peer's OpenBLAS threads after a multi-threaded GEMM (about 2^28 cycles, OpenBLAS's default
// THREAD_TIMEOUT), and whatever starts in that window shares its cores with them
// (src/nn/blas.hpp).
// On a shared machine, pin the OpenMP threads (OMP_PROC_BIND=close OMP_PLACES=cores): unpinned,
// the scheduler sometimes leaves both of a kernel's threads on one core for milliseconds, and
// single rows come out at half speed or worse.
//   hwprof_kernel_peer [THREADS [REPS]]     (defaults: 2 threads, 8 repetitions)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>

#include "nn/kernels.hpp"

namespace {

using hwprof::nn::i64;

std::vector<float> random_floats(i64 n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// The best time of `calls` calls of f in a row after a `pause_ms` pause, the first call left
// out of the best when `skip_first`.
double best_of(const std::function<void()>& f, int calls, int pause_ms, bool skip_first) {
  if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  double best = 1e30;
  for (int i = 0; i < calls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0 || !skip_first) best = std::min(best, s);
  }
  return best;
}

struct Row {
  std::string name;
  i64 m, n, k;
  double goal;
};

struct Times {
  double ours = 0.0, peer = 0.0;
};

// Best times of `ours` and `peer` over `reps` alternating repetitions, after one warm-up each.
Times compare(const Row& row, int reps, const std::function<void()>& ours, const std::function<void()>& peer) {
  ours();
  peer();
  double best_ours = 1e30, best_peer = 1e30;
  for (int r = 0; r < reps; ++r) {
    best_ours = std::min(best_ours, best_of(ours, 3, 150, true));
    best_peer = std::min(best_peer, best_of(peer, 2, 150, false));
  }
  const double flop = 2.0 * static_cast<double>(row.m) * static_cast<double>(row.n) * static_cast<double>(row.k);
  const double ratio = best_peer / best_ours;
  std::printf("%-26s %6lld %7lld %6lld %9.1f %9.1f %7.3f  %s %.2f\n", row.name.c_str(), static_cast<long long>(row.m), static_cast<long long>(row.n),
              static_cast<long long>(row.k), flop / best_ours * 1e-9, flop / best_peer * 1e-9, ratio,
              row.goal <= 0.0     ? "  "
              : ratio >= row.goal ? ">="
                                  : "< ",
              row.goal);
  std::fflush(stdout);
  return {best_ours, best_peer};
}

void linear_row(const char* name, i64 m, i64 k, i64 n, int reps) {
  const std::vector<float> x = random_floats(m * k, 1), w = random_floats(n * k, 2), b = random_floats(n, 3);
  std::vector<float> y(static_cast<std::size_t>(m * n));
  compare(
      {name, m, n, k, 0.85}, reps, [&] { hwprof::nn::linear_forward(x.data(), w.data(), b.data(), y.data(), m, k, n); },
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, x.data(),
                    static_cast<int>(k), w.data(), static_cast<int>(k), 0.0f, y.data(), static_cast<int>(n));
      });
}

Times conv_row(const char* name, i64 batch, i64 c, i64 hw, i64 out_c, i64 kernel, i64 stride, i64 pad, int reps) {
  hwprof::nn::Conv2dGeometry g;
  g.batch = batch;
  g.in_channels = c;
  g.in_h = g.in_w = hw;
  g.out_channels = out_c;
  g.kernel_h = g.kernel_w = kernel;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = pad;
  g.out_h = g.out_w = (hw + 2 * pad - kernel) / stride + 1;
  const i64 pq = g.out_h * g.out_w, crs = c * kernel * kernel;
  const std::vector<float> x = random_floats(batch * c * hw * hw, 4), w = random_floats(out_c * crs, 5);
  std::vector<float> y(static_cast<std::size_t>(batch * out_c * pq));
  const std::vector<float> columns = random_floats(crs * batch * pq, 6);
  std::vector<float> product(static_cast<std::size_t>(out_c * batch * pq));
  const int m = static_cast<int>(out_c), n = static_cast<int>(batch * pq), k = static_cast<int>(crs);
  return compare(
      {name, out_c, batch * pq, crs, 0.70}, reps, [&] { hwprof::nn::conv2d_forward(g, x.data(), w.data(), nullptr, y.data()); },
      [&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, w.data(), k, columns.data(), n, 0.0f, product.data(), n); });
}

// GPT-2 small's attention (12 heads of 64, 256 tokens) against the same GEMMs called as
// plain cblas_sgemm with OpenBLAS's threads: both projections, then every head's Q·Kᵀ and A·V
// one after another (no softmax, so the peer does less work). FLOPs: the four GEMMs; M, N, K
// shown are the Q·Kᵀ of one head. No goal: it shows what running heads side by side buys.
void attention_row(const char* name, i64 batch, i64 tokens, i64 dim, i64 heads, bool causal, int reps) {
  hwprof::nn::AttentionGeometry g;
  g.batch = batch;
  g.tokens = tokens;
  g.dim = dim;
  g.heads = heads;
  g.causal = causal;
  const i64 bt = batch * tokens, dh = dim / heads;
  const std::vector<float> x = random_floats(bt * dim, 7), w_in = random_floats(3 * dim * dim, 8), b_in = random_floats(3 * dim, 9),
                           w_out = random_floats(dim * dim, 10), b_out = random_floats(dim, 11);
  std::vector<float> y(static_cast<std::size_t>(bt * dim)), qkv(static_cast<std::size_t>(bt * 3 * dim)),
      scores(static_cast<std::size_t>(tokens * tokens)), ctx(static_cast<std::size_t>(bt * dim));
  const double flop = 2.0 * static_cast<double>(bt * dim * 4 * dim + batch * heads * 2 * tokens * tokens * dh);
  const int t = static_cast<int>(tokens), d = static_cast<int>(dim), e = static_cast<int>(dh);
  // Reported as an equivalent GEMM of the same FLOPs: M·N·K = flop / 2.
  const i64 k_equiv = static_cast<i64>(flop / 2.0 / static_cast<double>(tokens * tokens));
  compare(
      {name, tokens, tokens, k_equiv, 0.0}, reps,
      [&] { hwprof::nn::attention_forward(g, x.data(), w_in.data(), b_in.data(), w_out.data(), b_out.data(), y.data(), nullptr); },
      [&] {
        const int rows = static_cast<int>(bt);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, 3 * d, d, 1.0f, x.data(), d, w_in.data(), d, 0.0f, qkv.data(), 3 * d);
        for (i64 b = 0; b < batch; ++b) {
          for (i64 h = 0; h < heads; ++h) {
            const float* q = qkv.data() + b * tokens * 3 * dim + h * dh;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t, t, e, 1.0f, q, 3 * d, q + dim, 3 * d, 0.0f, scores.data(), t);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, t, e, t, 1.0f, scores.data(), t, q + 2 * dim, 3 * d, 0.0f,
                        ctx.data() + b * tokens * dim + h * dh, d);
          }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, d, d, 1.0f, ctx.data(), d, w_out.data(), d, 0.0f, y.data(), d);
      });
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 8;
  if (threads < 1 || reps < 1) {
    std::fprintf(stderr, "usage: %s [THREADS [REPS]]\n", argv[0]);
    return 2;
  }
  hwprof::nn::set_kernel_threads(threads);
  const char* bind = std::getenv("OMP_PROC_BIND");
  std::printf("threads %d, best of %d alternating repetitions; OMP_PROC_BIND=%s; OpenBLAS %s (core %s)\n", threads, reps,
              bind != nullptr ? bind : "(unset)", openblas_get_config(), openblas_get_corename());
  std::printf("%-26s %6s %7s %6s %9s %9s %7s  %s\n", "kernel", "M", "N", "K", "ours GF/s", "sgemm GF/s", "ratio", "goal");
  // GPT-2 small, 256 tokens: attention in/out projections, MLP up and down.
  linear_row("linear gpt2 attn.qkv", 256, 768, 2304, reps);
  linear_row("linear gpt2 attn.proj", 256, 768, 768, reps);
  linear_row("linear gpt2 mlp.fc", 256, 768, 3072, reps);
  linear_row("linear gpt2 mlp.proj", 256, 3072, 768, reps);
  attention_row("attention gpt2 causal", 1, 256, 768, 12, true, reps);
  // ResNet-18, batch 8: every convolution (the stem, each stage's 3×3s with the first of a
  // stage strided, and the 1×1 stride-2 downsamples), each row weighted by how often it occurs.
  struct Conv {
    const char* name;
    i64 c, hw, out_c, kernel, stride, pad, count;
  };
  const Conv resnet[] = {
      {"conv resnet18 conv1 7x7/2", 3, 224, 64, 7, 2, 3, 1},      {"conv resnet18 layer1 3x3", 64, 56, 64, 3, 1, 1, 4},
      {"conv resnet18 layer2.0 3x3/2", 64, 56, 128, 3, 2, 1, 1},  {"conv resnet18 layer2 3x3", 128, 28, 128, 3, 1, 1, 3},
      {"conv resnet18 layer2 1x1/2", 64, 56, 128, 1, 2, 0, 1},    {"conv resnet18 layer3.0 3x3/2", 128, 28, 256, 3, 2, 1, 1},
      {"conv resnet18 layer3 3x3", 256, 14, 256, 3, 1, 1, 3},     {"conv resnet18 layer3 1x1/2", 128, 28, 256, 1, 2, 0, 1},
      {"conv resnet18 layer4.0 3x3/2", 256, 14, 512, 3, 2, 1, 1}, {"conv resnet18 layer4 3x3", 512, 7, 512, 3, 1, 1, 3},
      {"conv resnet18 layer4 1x1/2", 256, 14, 512, 1, 2, 0, 1},
  };
  Times total;
  for (const Conv& c : resnet) {
    const Times t = conv_row(c.name, 8, c.c, c.hw, c.out_c, c.kernel, c.stride, c.pad, reps);
    total.ours += static_cast<double>(c.count) * t.ours;
    total.peer += static_cast<double>(c.count) * t.peer;
  }
  std::printf("resnet18 batch 8, all 20 convolutions: %.2f ms (whole-batch sgemm peer %.2f ms, ratio %.3f)\n", total.ours * 1e3, total.peer * 1e3,
              total.peer / total.ours);
  return 0;
}
