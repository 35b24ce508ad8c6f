// Batch and layer normalisation, forward and backward, as PyTorch defines them. Statistics
// are two-pass sums in double (mean first, then squared deviations), so a large mean or a
// long axis costs no precision. Each statistic is summed by one thread in a fixed order, so
// results do not depend on the thread count.
#include <algorithm>
#include <cmath>

#include "common/stages.hpp"
#include "nn/kernels.hpp"

namespace hwprof::nn {
namespace {

// Elements below which a kernel stays on the calling thread.
constexpr i64 kNormalizationParallelMin = i64{1} << 15;
// Columns of dgamma/dbeta one thread owns in layernorm_backward: 64 doubles of partial sums
// stay in registers and L1, and 64 floats of output are exactly four cache lines.
constexpr i64 kColumnBlock = 64;

double sum(const float* x, i64 n) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (i64 i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

double squared_deviation(const float* x, i64 n, double mean) {
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (i64 i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    s += d * d;
  }
  return s;
}

// A double mean as the float nearest to it plus the float nearest to the remainder.
struct SplitMean {
  float hi = 0.0f, lo = 0.0f;
};
SplitMean split(double mean) {
  const auto hi = static_cast<float>(mean);
  return {hi, static_cast<float>(mean - static_cast<double>(hi))};
}

// y = (x - mean)·scale + shift over n elements. Centring first, rather than folding the mean
// into the shift, keeps the digits when the mean is large against the spread; x - mean.hi is
// exact there (Sterbenz), and mean.lo restores what rounding the mean to float dropped.
void normalize(const float* x, float* y, i64 n, SplitMean mean, float scale, float shift) {
#pragma omp simd
  for (i64 i = 0; i < n; ++i) y[i] = ((x[i] - mean.hi) - mean.lo) * scale + shift;
}

float gamma_of(const float* gamma, i64 i) {
  return gamma != nullptr ? gamma[i] : 1.0f;
}
float beta_of(const float* beta, i64 i) {
  return beta != nullptr ? beta[i] : 0.0f;
}

}  // namespace

// ---- batchnorm2d ------------------------------------------------------------------------

void batchnorm2d_forward_eval(const float* x, const float* gamma, const float* beta, const float* running_mean, const float* running_var, double eps,
                              float* y, i64 n, i64 c, i64 hw) {
  const i64 planes = n * c;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (planes * hw > kNormalizationParallelMin)
  for (i64 p = 0; p < planes; ++p) {
    const i64 ch = p % c;
    const double scale = static_cast<double>(gamma_of(gamma, ch)) / std::sqrt(static_cast<double>(running_var[ch]) + eps);
    normalize(x + p * hw, y + p * hw, hw, {running_mean[ch], 0.0f}, static_cast<float>(scale), beta_of(beta, ch));
  }
}

void batchnorm2d_forward_train(const float* x, const float* gamma, const float* beta, float* running_mean, float* running_var, double eps,
                               double momentum, float* y, float* save_mean, float* save_invstd, i64 n, i64 c, i64 hw) {
  const i64 count = n * hw;
  // One channel per iteration: its statistics need every sample, so channels are the unit of
  // parallel work (a layer with fewer channels than threads leaves threads idle).
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (count * c > kNormalizationParallelMin)
  for (i64 ch = 0; ch < c; ++ch) {
    double total = 0.0;
    for (i64 b = 0; b < n; ++b) total += sum(x + (b * c + ch) * hw, hw);
    const double mean = total / static_cast<double>(count);
    double deviation = 0.0;
    for (i64 b = 0; b < n; ++b) deviation += squared_deviation(x + (b * c + ch) * hw, hw, mean);
    const double var = deviation / static_cast<double>(count);  // biased: used to normalise
    const double invstd = 1.0 / std::sqrt(var + eps);

    if (save_mean != nullptr) save_mean[ch] = static_cast<float>(mean);
    if (save_invstd != nullptr) save_invstd[ch] = static_cast<float>(invstd);
    // PyTorch's update: running = (1 - momentum)·running + momentum·batch, the variance
    // unbiased (÷ count-1). A single value per channel has no unbiased variance (PyTorch
    // refuses such a batch in training); the biased one (0) is used then instead of ∞.
    if (running_mean != nullptr) {
      running_mean[ch] = static_cast<float>((1.0 - momentum) * running_mean[ch] + momentum * mean);
    }
    if (running_var != nullptr) {
      const double unbiased = count > 1 ? deviation / static_cast<double>(count - 1) : var;
      running_var[ch] = static_cast<float>((1.0 - momentum) * running_var[ch] + momentum * unbiased);
    }

    const auto scale = static_cast<float>(static_cast<double>(gamma_of(gamma, ch)) * invstd);
    for (i64 b = 0; b < n; ++b) {
      const i64 offset = (b * c + ch) * hw;
      normalize(x + offset, y + offset, hw, split(mean), scale, beta_of(beta, ch));
    }
  }
}

// With x̂ = (x - mean)·invstd and M = N·HW values per channel (batch statistics):
//   dbeta = Σ dy, dgamma = Σ dy·x̂, dx = gamma·invstd·(dy - Σdy/M - x̂·Σ(dy·x̂)/M)
// (the standard derivation, as in PyTorch's batch_norm_backward_cpu).
void batchnorm2d_backward(const float* x, const float* gamma, const float* save_mean, const float* save_invstd, const float* dy, float* dx,
                          float* dgamma, float* dbeta, i64 n, i64 c, i64 hw) {
  const i64 count = n * hw;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (count * c > kNormalizationParallelMin)
  for (i64 ch = 0; ch < c; ++ch) {
    const double mean = save_mean[ch];
    const double invstd = save_invstd[ch];
    double sum_dy = 0.0;
    double sum_dy_centered = 0.0;  // Σ dy·(x - mean); times invstd it is Σ dy·x̂
    for (i64 b = 0; b < n; ++b) {
      const float* xs = x + (b * c + ch) * hw;
      const float* dys = dy + (b * c + ch) * hw;
#pragma omp simd reduction(+ : sum_dy, sum_dy_centered)
      for (i64 i = 0; i < hw; ++i) {
        sum_dy += static_cast<double>(dys[i]);
        sum_dy_centered += static_cast<double>(dys[i]) * (static_cast<double>(xs[i]) - mean);
      }
    }
    const double sum_dy_xhat = sum_dy_centered * invstd;
    if (dbeta != nullptr) dbeta[ch] += static_cast<float>(sum_dy);
    if (dgamma != nullptr) dgamma[ch] += static_cast<float>(sum_dy_xhat);
    if (dx == nullptr) continue;

    // dx = k·dy - k·Σdy/M - k·invstd·Σ(dy·x̂)/M·(x - mean), k = gamma·invstd.
    const double m = static_cast<double>(count);
    const double k = static_cast<double>(gamma_of(gamma, ch)) * invstd;
    const auto coef_dy = static_cast<float>(k);
    const auto coef_centered = static_cast<float>(-k * invstd * sum_dy_xhat / m);
    const auto constant = static_cast<float>(-k * sum_dy / m);
    const auto mean_f = static_cast<float>(mean);
    for (i64 b = 0; b < n; ++b) {
      const i64 offset = (b * c + ch) * hw;
      const float* xs = x + offset;
      const float* dys = dy + offset;
      float* dxs = dx + offset;
#pragma omp simd
      for (i64 i = 0; i < hw; ++i) dxs[i] = coef_dy * dys[i] + coef_centered * (xs[i] - mean_f) + constant;
    }
  }
}

// ---- layernorm --------------------------------------------------------------------------

void layernorm_forward(const float* x, const float* gamma, const float* beta, double eps, float* y, float* save_mean, float* save_invstd, i64 rows,
                       i64 d) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * d > kNormalizationParallelMin)
  for (i64 r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const double mean = sum(xr, d) / static_cast<double>(d);
    const double invstd = 1.0 / std::sqrt(squared_deviation(xr, d, mean) / static_cast<double>(d) + eps);
    if (save_mean != nullptr) save_mean[r] = static_cast<float>(mean);
    if (save_invstd != nullptr) save_invstd[r] = static_cast<float>(invstd);
    const SplitMean m = split(mean);
    const auto s = static_cast<float>(invstd);
    if (gamma != nullptr && beta != nullptr) {
#pragma omp simd
      for (i64 j = 0; j < d; ++j) yr[j] = ((xr[j] - m.hi) - m.lo) * s * gamma[j] + beta[j];
    } else {
      normalize(xr, yr, d, m, s, 0.0f);
      for (i64 j = 0; j < d; ++j) yr[j] = yr[j] * gamma_of(gamma, j) + beta_of(beta, j);
    }
  }
}

// Per row, with g = gamma·dy and x̂ = (x - mean)·invstd over D features:
//   dx = invstd·(g - mean(g) - x̂·mean(g·x̂));  dgamma = Σ_rows dy·x̂, dbeta = Σ_rows dy.
void layernorm_backward(const float* x, const float* gamma, const float* save_mean, const float* save_invstd, const float* dy, float* dx,
                        float* dgamma, float* dbeta, i64 rows, i64 d) {
  const bool parallel = rows * d > kNormalizationParallelMin;
  if (dx != nullptr) {
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
    for (i64 r = 0; r < rows; ++r) {
      const float* xr = x + r * d;
      const float* dyr = dy + r * d;
      float* dxr = dx + r * d;
      const double mean = save_mean[r];
      const double invstd = save_invstd[r];
      double sum_g = 0.0;
      double sum_g_centered = 0.0;  // Σ g·(x - mean)
      if (gamma != nullptr) {
#pragma omp simd reduction(+ : sum_g, sum_g_centered)
        for (i64 j = 0; j < d; ++j) {
          const double g = static_cast<double>(gamma[j]) * static_cast<double>(dyr[j]);
          sum_g += g;
          sum_g_centered += g * (static_cast<double>(xr[j]) - mean);
        }
      } else {
#pragma omp simd reduction(+ : sum_g, sum_g_centered)
        for (i64 j = 0; j < d; ++j) {
          const auto g = static_cast<double>(dyr[j]);
          sum_g += g;
          sum_g_centered += g * (static_cast<double>(xr[j]) - mean);
        }
      }
      // dx = invstd·g - invstd·mean(g) - invstd·mean(g·x̂)·x̂, with x̂ = (x - mean)·invstd.
      const double dd = static_cast<double>(d);
      const auto coef_g = static_cast<float>(invstd);
      const auto coef_centered = static_cast<float>(-invstd * invstd * invstd * sum_g_centered / dd);
      const auto constant = static_cast<float>(-invstd * sum_g / dd);
      const auto mean_f = static_cast<float>(mean);
      if (gamma != nullptr) {
#pragma omp simd
        for (i64 j = 0; j < d; ++j) dxr[j] = coef_g * gamma[j] * dyr[j] + coef_centered * (xr[j] - mean_f) + constant;
      } else {
#pragma omp simd
        for (i64 j = 0; j < d; ++j) dxr[j] = coef_g * dyr[j] + coef_centered * (xr[j] - mean_f) + constant;
      }
    }
  }
  if (dgamma == nullptr && dbeta == nullptr) return;
  // Column sums over rows: each thread owns a block of columns and walks all rows in order,
  // so no two threads add to one output and the order of additions is fixed.
  const i64 blocks = (d + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (parallel)
  for (i64 blk = 0; blk < blocks; ++blk) {
    const i64 j0 = blk * kColumnBlock;
    const i64 width = std::min(kColumnBlock, d - j0);
    double acc_gamma[kColumnBlock] = {};
    double acc_beta[kColumnBlock] = {};
    for (i64 r = 0; r < rows; ++r) {
      const float* xr = x + r * d + j0;
      const float* dyr = dy + r * d + j0;
      const double mean = save_mean[r];
      const double invstd = save_invstd[r];
#pragma omp simd
      for (i64 j = 0; j < width; ++j) {
        const auto g = static_cast<double>(dyr[j]);
        acc_gamma[j] += g * (static_cast<double>(xr[j]) - mean) * invstd;
        acc_beta[j] += g;
      }
    }
    for (i64 j = 0; j < width; ++j) {
      if (dgamma != nullptr) dgamma[j0 + j] += static_cast<float>(acc_gamma[j]);
      if (dbeta != nullptr) dbeta[j0 + j] += static_cast<float>(acc_beta[j]);
    }
  }
}

}  // namespace hwprof::nn
