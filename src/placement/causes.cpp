// The rule table of docs/profile.md ("Why"). Each rule looks at what hwprof knows of one layer
// and, when it applies, says what it saw and what to try. Structural rules (what the op is
// and how the engine runs it) come first, then what the measurement itself says (below
// resolution, above a roof, idle threads), then the roofline side as the last word.
#include "placement/causes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "ops/ops.hpp"
#include "placement/row_time.hpp"

namespace hwprof::placement {
namespace {

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
  return p;
}

// Whole percents, and below 1% two significant digits ("0.35%"), so that a small share never
// reads as "0%".
std::string percent(double v) {
  if (v > 0 && v < 0.01) return fmt::format("{:.2g}%", 100 * v);
  return fmt::format("{:.0f}%", 100 * v);
}
std::string ms_text(double ms) {
  return ms >= 1 ? fmt::format("{:.2f} ms", ms) : fmt::format("{:.3g} ms", ms);
}

// A convolution the engine runs as direct per-plane loops (its definition's depthwise kernel).
bool is_depthwise(const Node& node, const Shape& input_shape) {
  const ops::ConvolutionDefinition* conv = ops::convolution_definition(node.op);
  return conv != nullptr && conv->direct_depthwise && node.attrs.groups > 1 && !input_shape.empty() && node.attrs.groups == input_shape[0] &&
         node.attrs.out_channels == node.attrs.groups;
}

bool runs_blas(const Node& node, const Shape& input_shape) {
  switch (node.op) {
    HWPROF_PRODUCT_CASES
    HWPROF_RECURRENT_CASES  // the input's product over every step, then the state's each step
        return true;
    HWPROF_CONVOLUTION_CASES  // lowered to GEMMs (src/nn/conv2d.cpp), but for a depthwise kernel
        return !is_depthwise(node, input_shape);
    HWPROF_SOFTMAX_CASES
    case OpKind::upsample:
    case OpKind::reduce:
    case OpKind::unsupported:
      HWPROF_LOOKUP_CASES
      HWPROF_DATA_MOVEMENT_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_ELEMENTWISE_UNARY_CASES
      break;
  }
  return false;
}

const LayerCounter* task_clock(const LayerProfile& l) {
  for (const LayerCounter& c : l.counters) {
    if (c.kind == EventKind::task_clock && c.value && !c.below_resolution && !c.impossible) return &c;
  }
  return nullptr;
}

double roof_ms(const LayerProfile& l) {
  return row_ms(l) * std::min(1.0, l.roofline ? l.roofline->efficiency : 1.0);
}

}  // namespace

double relative_uncertainty(const Summary& t) {
  if (t.n == 0 || t.median <= 0) return 0.0;
  const double half = t.has_median_ci() ? (t.median_ci_high - t.median_ci_low) / 2 : (t.max - t.min) / 2;
  return half / t.median;
}

// Long: one case per GEMM-backed op, each its GEMM's shape as its kernel runs it, and every other
// op named (no default: docs/adding-an-op.md).
std::optional<GemmShape> forward_gemm(const Node& node, const Shape& in, std::int64_t batch) {
  const Attributes& a = node.attrs;
  switch (node.op) {
    case OpKind::linear: {
      if (in.empty()) return std::nullopt;
      return GemmShape{batch * product(in, 0, in.size() - 1), a.out_features, in.back(), 1};
    }
      HWPROF_CONVOLUTION_CASES {
        // Per group and sample, with P the kernel's positions (R·S in 2-D, T·R·S in 3-D): a
        // convolution is weights [K/g, C/g·P] × columns [C/g·P, output positions] (im2col, vol2col:
        // src/nn/conv2d.cpp; small images put samples side by side, so N is at least the output's
        // positions); a transposed one runs the convolution's data gradient, weightsᵀ [C_out/g·P,
        // C_in/g] × input [C_in/g, input positions], then col2im.
        const ops::ConvolutionDefinition& conv = *ops::convolution_definition(node.op);
        const auto rank = static_cast<std::size_t>(conv.spatial_axes) + 1;
        if (in.size() != rank || node.output_shape.size() != rank || a.groups < 1 || is_depthwise(node, in)) return std::nullopt;
        const std::int64_t g = a.groups;
        std::int64_t positions = 1;
        const ops::ConvAxes axes = ops::conv_axes(conv, a);
        for (const ops::ConvAxis& x : axes.view()) positions *= x.kernel;
        if (conv.transposed) return GemmShape{a.out_channels / g * positions, product(in, 1, rank), in[0] / g, g * batch};
        return GemmShape{a.out_channels / g, product(node.output_shape, 1, rank), in[0] / g * positions, g * batch};
      }
    case OpKind::attention: {
      // Per head: scores = Q·Kᵀ [T, T] over d_head, then context = P·V [T, d_head] over T.
      if (in.size() < 2 || a.heads < 1) return std::nullopt;
      const std::int64_t t = in[in.size() - 2];
      const std::int64_t dh = in.back() / a.heads;
      return GemmShape{t, t, dh, 2 * a.heads * batch};
    }
    case OpKind::matmul: {
      // One [M, K]·[K, N] GEMM per output matrix (src/nn/matmul.cpp).
      const Shape& out = node.output_shape;
      if (in.size() < 2 || out.size() < 2) return std::nullopt;
      return GemmShape{out[out.size() - 2], out.back(), in.back(), batch * product(out, 0, out.size() - 2)};
    }
      HWPROF_RECURRENT_CASES {
        // The state's product every step, the batch's rows times the gates' (src/nn/recurrent.cpp;
        // the input's product is one GEMM over every step, [batch·T, C] × [C, G·H]).
        if (in.size() != 2 || a.hidden_size < 1) return std::nullopt;
        const std::int64_t gates = ops::recurrent_definition(node.op)->gates;
        return GemmShape{batch, gates * a.hidden_size, a.hidden_size, in[0] * (a.bidirectional ? 2 : 1)};
      }
      HWPROF_SOFTMAX_CASES
    case OpKind::upsample:
    case OpKind::reduce:
    case OpKind::unsupported:
      HWPROF_LOOKUP_CASES
      HWPROF_DATA_MOVEMENT_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_ELEMENTWISE_UNARY_CASES
      break;
  }
  return std::nullopt;
}

namespace {

// What the measurement itself says: below resolution, noisy, a count that leaves part out.
void measurement_causes(const CauseInputs& in, std::vector<LayerCause>& out) {
  const LayerProfile& l = *in.layer;
  const double t = l.time_ms.median;
  if (!l.work_partial.empty()) {
    out.push_back({"partial_count", "count partial", "its count leaves part of what ran out: " + l.work_partial,
                   "read its GFLOP/s and efficiency as lower bounds; the rows of those ops have their own times"});
  }

  if (l.below_resolution) {
    out.push_back({"below_resolution", "below resolution",
                   fmt::format("its median ({}) is under 100× the measurement's own cost ({:.0f} ns per region): the figure is mostly the "
                               "measurement, an upper bound",
                               ms_text(t), l.own_cost_ns > 0 ? l.own_cost_ns : in.overhead_ns),
                   "nothing to win here that hwprof can see; fuse it into its neighbour, or profile a larger batch to see it"});
  }

  if (const double spread = relative_uncertainty(l.time_ms); spread > kNoisyTime && !l.below_resolution) {
    out.push_back({"noisy", fmt::format("noisy (±{:.0f}%)", 100 * spread),
                   fmt::format("its time varied by ±{:.0f}% of its median between passes ({} to {}): what it has to win may be the machine's "
                               "noise (other processes, the hypervisor's neighbours), not the layer's",
                               100 * spread, ms_text(l.time_ms.min), ms_text(l.time_ms.max)),
                   "profile again on a quiet machine, or with more --iterations, before acting on this layer"});
  }
}

// What the op is and how the engine runs it: depthwise, grouped, tiny GEMMs, BLAS held back,
// transcendental functions.
void structure_causes(const CauseInputs& in, std::vector<LayerCause>& out) {
  const LayerProfile& l = *in.layer;
  const std::optional<RooflinePoint>& r = l.roofline;

  // The optimizer's update of a layer's parameters is element-wise: none of the op's GEMM or
  // convolution structure applies to it. A backward pass runs GEMMs of the same three
  // dimensions as the forward one, transposed (dX = dY·Wᵀ, dW = Xᵀ·dY), so the shape causes
  // hold for it too, quoted as the forward GEMM's.
  const bool optimizer = l.phase == LayerPhase::optimizer;
  const bool backward = l.phase == LayerPhase::backward;
  if (in.node != nullptr && !optimizer) {
    const Node& node = *in.node;
    if (is_depthwise(node, in.input_shape)) {
      const std::int64_t taps = node.attrs.kernel.h * node.attrs.kernel.w;
      out.push_back({"depthwise_conv", fmt::format("depthwise {}×{} conv", node.attrs.kernel.h, node.attrs.kernel.w),
                     fmt::format("each output is {} MACs over one channel, with no reduction across channels to reuse a load: it runs as "
                                 "direct per-plane loops at {} FLOP/B, not as a GEMM, so the GEMM roof is out of its reach",
                                 taps, r ? fmt::format("{:.2g}", r->intensity) : std::string("low intensity")),
                     "fuse it with the pointwise (1×1) convolution and the BatchNorm/activation around it, so its output never goes "
                     "to memory; a larger batch amortises the per-plane loop overhead"});
    } else if (const ops::ConvolutionDefinition* conv = ops::convolution_definition(node.op);
               conv != nullptr && !conv->transposed && node.attrs.groups > 1) {
      const auto g = forward_gemm(node, in.input_shape, in.batch);
      out.push_back({"grouped_gemm", fmt::format("{} groups: small GEMMs", node.attrs.groups),
                     fmt::format("a grouped convolution runs {} GEMMs of {}×{}×{} per sample instead of one {} times wider", node.attrs.groups,
                                 g ? g->m : 0, g ? g->n : 0, g ? g->k : 0, node.attrs.groups),
                     "fewer, wider groups (or a batched-GEMM kernel) keep the BLAS micro-kernel busy"});
    }
    if (runs_blas(node, in.input_shape)) {
      if (const auto g = forward_gemm(node, in.input_shape, in.batch)) {
        const std::int64_t smallest = std::min({g->m, g->n, g->k});
        if (smallest > 0 && smallest < kBlasTile) {
          const char* dim = smallest == g->k ? "K" : smallest == g->m ? "M" : "N";
          out.push_back({"tiny_gemm", fmt::format("tiny GEMM: {} = {}", dim, smallest),
                         fmt::format("its {}GEMM{}: {}×{}×{} (M×N×K{}){}; {} = {} is below the {}-wide BLAS micro-kernel tile, "
                                     "so packing and edge code, not FMAs, take the time",
                                     backward ? "forward " : "", g->count > 1 ? "s" : "", g->m, g->n, g->k,
                                     g->count > 1 ? fmt::format(", {} of them per call", g->count) : "",
                                     backward ? ", and the backward GEMMs have the same three dimensions" : "", dim, smallest, kBlasTile),
                         "give the GEMM more rows (a larger batch, or several small GEMMs merged into one), or pad the dimension to a "
                         "multiple of 16"});
        }
      }
      if (in.blas_held_back) {
        out.push_back({"blas_held_back", fmt::format("BLAS held back ({})", in.blas_core),
                       fmt::format("OpenBLAS ran its {} kernels, which use no AVX-512, on a CPU that has it: its GEMMs do up to half the "
                                   "FLOPs per cycle they could",
                                   in.blas_core),
                       "unset OPENBLAS_CORETYPE (or set it to SkylakeX / Cooperlake) and profile again"});
      }
    }
    // Forward only: the backward passes reuse the saved output and evaluate no function.
    if (const std::string fn = compute_roof_of(node, l.phase == LayerPhase::forward).function; !fn.empty()) {
      const bool calibrated = r && r->compute_roof.starts_with(fn);
      out.push_back({"transcendental", fmt::format("{}-bound", fn),
                     calibrated ? fmt::format("it evaluates {} once per element, and runs at {} of what the calibrated {} kernel allows "
                                              "({:.3g} GFLOP/s at its FLOPs per element, against an FMA peak of {:.3g})",
                                              fn, percent(r->efficiency), fn, r->compute_roof_gflops_per_s, r->peak_gflops_per_s)
                                : fmt::format("it evaluates {} per element, a polynomial of tens of instructions: its real roof is the {} "
                                              "throughput, well below the FMA roof it is placed under (the calibration has no {} ceiling)",
                                              fn, fn, fn),
                     fn == "erf" ? "use the tanh approximation of GELU, or fuse the activation into the GEMM before it"
                                 : "fuse the activation into the producing GEMM's output loop, or use a cheaper approximation "
                                   "(hard-swish / hard-sigmoid)"});
    }
  }
}

// Where the figures go past what the roofline expects: a nearer cache, above the roof, idle threads.
void anomaly_causes(const CauseInputs& in, std::vector<LayerCause>& out) {
  const LayerProfile& l = *in.layer;
  const std::optional<RooflinePoint>& r = l.roofline;

  if (r) {
    const bool memory_side = r->intensity < r->ridge_intensity;
    if (memory_side && r->efficiency > 1.10) {
      out.push_back({"nearer_cache", "data from a nearer cache",
                     fmt::format("it runs at {} of the bandwidth its working set allows ({}): its data came from a nearer cache than the "
                                 "working set suggests (the previous layer's output)",
                                 percent(r->efficiency), r->memory_level),
                     "nothing to win; read its efficiency as an upper bound"});
    } else if (!memory_side && r->efficiency > 1.10) {
      out.push_back({"above_roof", "above its roof",
                     fmt::format("it runs at {} of the {} roof: the ceiling is too low for this machine now (measured under load, or "
                                 "on other kernels)",
                                 percent(r->efficiency), r->compute_roof),
                     "run `hwprof calibrate` on a quiet machine, in the same environment"});
    }
  }
  // PyTorch's intra-op threads at its calls, fewer than the machine's cores.
  if (l.threads > 0 && in.cores > l.threads) {
    out.push_back({"fewer_threads", fmt::format("{} of {} cores", l.threads, in.cores),
                   fmt::format("it ran on {} thread{} (PyTorch's intra-op threads at its calls) on a machine with {} cores: it is placed "
                               "under the roofs of {} thread{}, and {} core{} sat idle for it",
                               l.threads, l.threads == 1 ? "" : "s", in.cores, l.threads, l.threads == 1 ? "" : "s", in.cores - l.threads,
                               in.cores - l.threads == 1 ? "" : "s"),
                   fmt::format("torch.set_num_threads({}) (or OMP_NUM_THREADS) where nothing else needs those cores", in.cores)});
  }
  if (in.threads > 1 && l.time_ms.mean > 0) {
    if (const LayerCounter* c = task_clock(l)) {
      const double busy = *c->value / (l.time_ms.mean * 1e6 * in.threads);
      if (busy < kThreadUnderuse) {
        out.push_back({"thread_underuse", fmt::format("threads idle ({} busy)", percent(busy)),
                       fmt::format("{} counted {:.3g} ms of CPU per call against {:.3g} ms of wall × {} threads: {} of the threads' time "
                                   "went unused",
                                   c->name, *c->value * 1e-6, l.time_ms.mean, in.threads, percent(1 - busy)),
                       "parallelise the op (or its batch loop), or give it fewer threads and the rest to other work"});
      }
    }
  }
}

// The roofline side, as the last word: no roofline, fixed cost, near the roof, or below it.
void roofline_causes(const CauseInputs& in, std::vector<LayerCause>& out) {
  const LayerProfile& l = *in.layer;
  const std::optional<RooflinePoint>& r = l.roofline;
  const double t = l.time_ms.median;

  if (!r && !l.work_note.empty()) {
    // No count to place it by: calibrating would not help. Its work is another row's (an op
    // inside a composite op, a backward function), or has no formula.
    if (l.work_note.rfind("counted in ", 0) == 0) {
      out.push_back({"counted_elsewhere", "counted elsewhere", "its FLOPs and bytes are another row's: " + l.work_note,
                     "read its time here, its work in that row"});
    } else {
      const bool program_region = l.op == "region";
      out.push_back({"not_counted", "not counted", "it has no FLOPs or bytes to place it by: " + l.work_note,
                     program_region ? "give the region its work: HWPROF_SCOPE_WORK(name, flops, bytes) or hwprof_set_work()"
                                    : "read its time; its work has no formula yet (docs/torch.md, \"Which aten ops have a formula\")"});
    }
    return;
  }
  if (!r) {
    out.push_back({"no_roofline", "no roofline", "it could not be placed: " + l.roofline_error, "run `hwprof calibrate` for this thread count"});
    return;
  }
  const double win = std::max(0.0, row_ms(l) - roof_ms(l));
  if (r->bound == Bound::overhead && !l.below_resolution) {
    out.push_back({"fixed_cost", "fixed cost per call",
                   fmt::format("{} per call is far below both roofs ({}), and short enough that fixed costs per call (a BLAS call's "
                               "dispatch and packing, a thread team's fork and join, an allocation) explain it",
                               ms_text(t), percent(r->efficiency)),
                   "fuse it with its neighbours, or a larger batch to spread the fixed costs"});
  } else if (r->efficiency >= 0.8) {
    out.push_back({"near_roof", fmt::format("at {} of its roof", percent(std::min(r->efficiency, 9.99))),
                   fmt::format("{}-bound at {} of its {} roof: little is left to win ({})", bound_name(r->bound), percent(r->efficiency),
                               r->bound == Bound::compute ? r->compute_roof : r->memory_level, ms_text(win)),
                   "less work is what is left: a smaller layer, lower precision, or skipping it"});
  } else if (r->bound == Bound::compute) {
    out.push_back({"compute_below_roof", fmt::format("compute at {}", percent(r->efficiency)),
                   fmt::format("compute-bound at {} of the {} roof ({:.3g} of {:.3g} GFLOP/s): the kernel leaves {} on the table",
                               percent(r->efficiency), r->compute_roof, r->gflops_per_s, r->attainable_gflops_per_s, ms_text(win)),
                   "a better kernel for this shape: the BLAS core, the im2col/GEMM blocking, or a layout the GEMM likes"});
  } else {
    out.push_back({"memory_below_roof", fmt::format("memory at {}", percent(r->efficiency)),
                   fmt::format("memory-bound at {} of the {} bandwidth its working set allows ({:.3g} of {:.3g} GB/s)", percent(r->efficiency),
                               r->memory_level, r->gbytes_per_s, r->memory_gbytes_per_s),
                   "fuse it with its neighbours so its data makes one trip through memory, or compute it in place"});
  }
}

}  // namespace

std::vector<LayerCause> layer_causes(const CauseInputs& in) {
  std::vector<LayerCause> out;
  if (in.layer == nullptr) return out;
  if (in.layer->impossible) {
    // Its rate is no measurement: nothing about its roof can be said.
    out.push_back({"impossible_rate", "impossible rate", in.layer->impossible_reason,
                   "read its time, not its rate; report it (hwprof's count or calls for it are wrong)"});
    return out;
  }
  measurement_causes(in, out);
  structure_causes(in, out);
  anomaly_causes(in, out);
  roofline_causes(in, out);
  return out;
}

}  // namespace hwprof::placement
