// Cross-entropy over logits with integer labels, PyTorch's F.cross_entropy with
// reduction='mean': loss_r = logsumexp(logits_r) - logits_r[label_r], the log-sum-exp taken
// after subtracting the row maximum (stable for any logit range) and summed in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/stages.hpp"
#include "nn/kernels.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::nn {
namespace {

using ops::exp_approx;

constexpr i64 kLossParallelMin = i64{1} << 14;
// The mean is a sum of per-block sums over a fixed split of the rows (independent of the
// thread count, so the result is too). 256 blocks balance any thread count this engine runs
// with and keep the partial sums on the stack.
constexpr i64 kBlocks = 256;

// Loss of one row; fills `grad` (may be null) with softmax / rows - onehot / rows.
double row_loss(const float* logits, std::int32_t label, float* grad, i64 classes, double inv_rows) {
  const float max = ops::max_of(logits, classes);
  double total = 0.0;
  if (grad != nullptr) {
#pragma omp simd reduction(+ : total)
    for (i64 j = 0; j < classes; ++j) {
      grad[j] = exp_approx(logits[j] - max);
      total += static_cast<double>(grad[j]);
    }
    const auto scale = static_cast<float>(inv_rows / total);
#pragma omp simd
    for (i64 j = 0; j < classes; ++j) grad[j] *= scale;
    grad[label] -= static_cast<float>(inv_rows);
  } else {
#pragma omp simd reduction(+ : total)
    for (i64 j = 0; j < classes; ++j) total += static_cast<double>(exp_approx(logits[j] - max));
  }
  return static_cast<double>(max) + std::log(total) - static_cast<double>(logits[label]);
}

}  // namespace

double cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits, i64 rows, i64 classes) {
  const bool bad_label = std::any_of(labels, labels + rows, [classes](std::int32_t l) { return l < 0 || l >= classes; });
  if (bad_label || rows <= 0) {
    // Nothing meaningful to return; NaN gradients make a caller that ignores the NaN loss
    // fail visibly instead of training on stale numbers.
    if (dlogits != nullptr) {
      std::fill_n(dlogits, std::max<i64>(rows, 0) * classes, std::numeric_limits<float>::quiet_NaN());
    }
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double inv_rows = 1.0 / static_cast<double>(rows);
  const i64 blocks = std::min(kBlocks, rows);
  double partial[kBlocks] = {};
#pragma omp parallel for num_threads(kernel_threads()) schedule(static) if (rows * classes > kLossParallelMin)
  for (i64 blk = 0; blk < blocks; ++blk) {
    const i64 r0 = rows * blk / blocks;
    const i64 r1 = rows * (blk + 1) / blocks;
    double s = 0.0;
    for (i64 r = r0; r < r1; ++r) {
      s += row_loss(logits + r * classes, labels[r], dlogits != nullptr ? dlogits + r * classes : nullptr, classes, inv_rows);
    }
    partial[blk] = s;
  }
  double total = 0.0;
  for (i64 blk = 0; blk < blocks; ++blk) total += partial[blk];
  return total * inv_rows;
}

}  // namespace hwprof::nn
