// Measured FLOPs against the cost model's, and when they differ, the reasons an op's
// kernels can do more or less arithmetic than its analytic count.
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "ops/ops.hpp"
#include "placement/roofline.hpp"

namespace hwprof {

namespace {

struct Reasons {
  // Literals only: string views keep the list cheap (and out of GCC 12's false -Warray-bounds
  // alarms on inlined string vectors).
  std::vector<std::string_view> more;  // why measured can exceed analytic
  std::vector<std::string_view> less;  // why measured can fall short of it
};

// A product's GEMMs are the family's (gemm_reasons); what its kernel does besides them is in
// its definition (ops/product.cpp).
void product_reasons(const ops::ProductDefinition& product, bool causal, Reasons& r) {
  if (product.causal_mask && causal) {
    r.less.emplace_back(
        "causal mask: the analytic count is the full T×T products (docs/profile.md); a kernel that skips the masked "
        "triangle measures about half of Q·Kᵀ and A·V");
  }
  if (product.softmax_inside) {
    r.more.emplace_back(
        "softmax's exp is evaluated by a polynomial of many FP instructions per score, where the analytic table "
        "counts a few FLOPs");
  }
}

// What the op's own kernel does that the table does not count, or counts that it does not do.
// Long: one case per op, each its sentences, and every other op named (no default, so that the
// compiler names a new op it lacks: docs/adding-an-op.md).
void kernel_reasons(OpKind op, bool causal, Reasons& r) {
  // Every normalization (ops/normalization.cpp) computes its statistics and divides by a
  // deviation.
  if (ops::normalization_definition(op) != nullptr) {
    r.more.emplace_back(
        "the square root and division of normalisation are one FLOP each in the analytic table but several "
        "instructions each (rsqrt plus a Newton step); training mode adds the statistics passes");
    r.less.emplace_back("normalisation folded into one multiply-add per element does less than the table counts");
    return;
  }
  // A convolution (ops/convolution.cpp) is lowered to GEMMs: im2col for one that gathers,
  // col2im for a transposed one.
  if (const ops::ConvolutionDefinition* conv = ops::convolution_definition(op)) {
    if (conv->transposed) {
      r.more.emplace_back(
          "col2im (col2vol in 3-D) lowering: the GEMM computes every input element times every kernel tap (the analytic MACs) and "
          "scatters the products into the output; tile padding applies to the GEMM as for conv2d");
      return;
    }
    r.more.emplace_back(
        "im2col (vol2col in 3-D) lowering: the GEMM runs over the unfolded input (K = C·kh·kw, C·kd·kh·kw in 3-D, per group), so tile padding "
        "applies "
        "to that K and to every group's GEMM separately; the padded border is multiplied as explicit zeros, as "
        "the analytic count assumes");
    r.less.emplace_back(
        "a kernel that skips the zero-padding border, or a Winograd/FFT convolution, does fewer multiplications "
        "than 2·MACs, which count every kernel position including the padding (the torchvision/fvcore "
        "convention)");
    return;
  }
  // Every recurrent op (ops/recurrent.cpp) runs its gates' functions and a small GEMM per step.
  if (ops::recurrent_definition(op) != nullptr) {
    r.more.emplace_back(
        "recurrent gates: the table counts each sigmoid and tanh as a few FLOPs (sigmoid 4, tanh 1); the kernel "
        "evaluates them with polynomial approximations of many FP instructions each");
    r.more.emplace_back(
        "each step's state product is a small GEMM (the batch's rows); its tile padding multiplies zeros the table does "
        "not count");
    return;
  }
  if (const ops::ProductDefinition* product = ops::product_definition(op)) {
    product_reasons(*product, causal, r);
    return;
  }
  switch (op) {
    case OpKind::upsample:
      r.more.emplace_back(
          "bilinear upsampling: the table counts the weighted sum of four neighbours (4 multiplies, 3 adds per "
          "output), its weights computed once per row and column; the kernel, as ATen's, forms it as "
          "h0·(w0·a + w1·b) + h1·(w0·c + w1·d), 6 multiplies and 3 adds, and its backward multiplies dy by both "
          "weights for each of the four sources (12 FP operations where the table counts 8)");
      r.more.emplace_back("nearest upsampling only gathers (0 FLOPs in the table): copies retire no FP arithmetic");
      break;
    case OpKind::reduce:
      r.less.emplace_back(
          "a reduction's sum is counted as k − 1 adds per group of k; a vectorised sum keeps several partial sums and "
          "adds them at the end (a few more adds per output), and a sum's input gradient is a broadcast copy that "
          "retires no FP arithmetic");
      break;
      HWPROF_SOFTMAX_CASES
    case OpKind::unsupported:
      HWPROF_PRODUCT_CASES
      HWPROF_LOOKUP_CASES
      HWPROF_DATA_MOVEMENT_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_ELEMENTWISE_UNARY_CASES
      HWPROF_RECURRENT_CASES
      HWPROF_CONVOLUTION_CASES
      break;
  }
}

// What every op shares: the counters see the whole process, and miss what they do not cover.
Reasons shared_reasons() {
  Reasons r;
  r.more.emplace_back(
      "the counters count every floating-point instruction the process's threads retired during the layer, the "
      "framework's own included");
  r.less.emplace_back(
      "the FP counters cover the vector widths their group lists; instructions they do not cover (x87, FP16/BF16) "
      "are missed, and a multiplexed count is a scaled estimate");
  return r;
}

void gemm_reasons(Reasons& r) {
  r.more.emplace_back(
      "BLAS micro-kernels compute whole register tiles: when M or N is not a multiple of the tile, the edge is "
      "computed on zero padding (largest for small or odd shapes)");
}

void transcendental_reasons(Reasons& r) {
  r.more.emplace_back(
      "exp, tanh and erf are evaluated by polynomial or rational approximations of 10–30 FP instructions per "
      "element, where the analytic table counts a few FLOPs");
  r.less.emplace_back("a cheaper approximation (a table, a low-order polynomial) does fewer operations than the table counts");
}

Reasons reasons_for(OpKind op, bool causal) {
  Reasons r = shared_reasons();
  const ops::OpInfo& info = ops::op_info(op);
  if (info.family == ops::OpFamily::gemm) gemm_reasons(r);
  // By what the op's definition says it evaluates: transcendental functions, max/min, or nothing.
  if (!info.unary.transcendental.empty() || ops::softmax_definition(op) != nullptr) transcendental_reasons(r);
  const ops::PoolingDefinition* pool = ops::pooling_definition(op);
  if (info.unary.max_min || (pool != nullptr && pool->reduction == ops::PoolReduction::max)) {
    r.less.emplace_back(
        "max and min done with integer or blend instructions (ReLU as a sign mask) retire no FP arithmetic; "
        "counted as FP MAX/MIN (Intel's FP_ARITH counts them) they match the table");
  }
  const ops::LookupDefinition* lookup = ops::lookup_definition(op);
  if (info.family == ops::OpFamily::data_movement || (lookup != nullptr && !lookup->adds)) {
    r.more.emplace_back("the op only moves data: copies retire no FP arithmetic, so measured FP operations come from other code");
  }
  kernel_reasons(op, causal, r);
  return r;
}

Reasons reasons_for(const ComputeRoof& roof) {
  Reasons r = shared_reasons();
  if (roof.kind == ComputeRoof::Kind::gemm) gemm_reasons(r);
  if (roof.kind == ComputeRoof::Kind::transcendental) transcendental_reasons(r);
  return r;
}

FlopsComparison compared(double measured, double analytic, double tolerance, const auto& reasons) {
  FlopsComparison c;
  c.measured = measured;
  c.analytic = analytic;
  if (analytic > 0) {
    c.ratio = measured / analytic;
    c.agrees = std::abs(c.ratio - 1.0) <= tolerance;
  } else {
    c.agrees = measured == 0;
  }
  if (c.agrees) return c;
  const Reasons r = reasons();
  const std::vector<std::string_view>& why = measured > analytic ? r.more : r.less;
  c.reasons.assign(why.begin(), why.end());
  return c;
}

}  // namespace

FlopsComparison compare_flops(double measured, double analytic, OpKind op, bool causal, double tolerance) {
  return compared(measured, analytic, tolerance, [&] { return reasons_for(op, causal); });
}

FlopsComparison compare_flops(double measured, double analytic, const ComputeRoof& roof, double tolerance) {
  return compared(measured, analytic, tolerance, [&] { return reasons_for(roof); });
}

}  // namespace hwprof
