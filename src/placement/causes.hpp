// Causes, not just sides: why a layer takes the time it does, from a documented rule table
// (docs/profile.md, "Why") over what hwprof knows of it — its op and shapes, its placement
// under the roofline, its counters, the BLAS kernels it ran on. Each cause names what to
// try. The roofline says which side of the ridge a layer is on; these say what holds it
// there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::placement {

// A GEMM dimension below this leaves a BLAS micro-kernel's registers partly idle and its
// time to packing and edge code: 16 floats are one AVX-512 vector, and OpenBLAS's SGEMM
// micro-kernels on x86-64 are 16×4 (kernel/x86_64/sgemm_kernel_16x4_skylakex.c) and 8×4
// (sgemm_kernel_8x4_haswell.c, also used for Zen).
inline constexpr std::int64_t kBlasTile = 16;

// A time whose 95% interval (or, with fewer than 6 samples, half its range) is wider than
// this share of its median varied too much between passes for its time to win to be a fact.
inline constexpr double kNoisyTime = 0.25;
// The half-width of a time's uncertainty over its median (the 95% interval of the median, or
// half the min–max range without one); 0 without samples.
double relative_uncertainty(const Summary& t);

// Below this share of wall × threads, the layer's threads mostly waited (task-clock ≪ wall).
inline constexpr double kThreadUnderuse = 0.5;

// The shape of one GEMM a layer runs (per call of the BLAS routine).
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t count = 1;  // how many such GEMMs per call (groups, heads × batch)
};

struct CauseInputs {
  const LayerProfile* layer = nullptr;  // measured and placed (the roofline may be absent)
  const Node* node = nullptr;           // its op and attributes
  Shape input_shape;                    // per sample, of its first input
  std::int64_t batch = 1;
  int threads = 1;
  double overhead_ns = 0.0;     // the session's own cost per region (below_resolution's yardstick)
  bool blas_held_back = false;  // BlasInfo::avx512_unused
  std::string blas_core;        // the OpenBLAS kernels that ran
  int cores = 0;                // the machine's cores (0: not known): a row on fewer threads says so
};

// The GEMMs the engine runs for this layer's forward pass (src/nn/: linear, conv2d's im2col
// GEMM per group, attention's two per head); nullopt for ops without a BLAS call (depthwise
// conv2d runs as direct loops).
std::optional<GemmShape> forward_gemm(const Node& node, const Shape& input_shape, std::int64_t batch);

// Every cause that applies, most telling first; never empty for a measured layer.
std::vector<LayerCause> layer_causes(const CauseInputs& in);

}  // namespace hwprof::placement
