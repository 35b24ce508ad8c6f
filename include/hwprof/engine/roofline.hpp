// Roofline placement: a layer's work (FLOPs), traffic (bytes) and time, put under the ceilings
// `hwprof calibrate` measured on this machine — arithmetic intensity, achieved and attainable
// performance, efficiency, headroom, and whether the layer is compute-, memory- or
// overhead-bound. Every input says where it came from, and so does every output that
// depends on it (docs/design.md, "Rules every part keeps").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/compute_roof.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/machine.hpp"
#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

enum class ValueSource {
  measured,   // read from a counter (possibly scaled for multiplexing: see status)
  analytic,   // derived from shapes by the cost model (include/hwprof/engine/cost.hpp)
  estimated,  // derived from a measurement by an assumption (e.g. LLC misses × line size)
};
std::string_view value_source_name(ValueSource source) noexcept;

// A number with its source; for counter-derived values also the counter's status and the
// fraction of the interval it ran (1 unless multiplexed).
struct SourcedValue {
  double value = 0.0;
  ValueSource source = ValueSource::analytic;
  CounterStatus status = CounterStatus::ok;  // meaningful for measured and estimated values
  double running_fraction = 1.0;
  std::string detail;  // what exactly: "DRAM bytes (uncore CAS counts)", "analytic minimum traffic", ...
};

// ---- bytes: the fallback chain (docs/profile.md) -----------------------------------------------

enum class BytesOrigin { dram_counters, llc_misses, analytic_minimum };
std::string_view bytes_origin_name(BytesOrigin origin) noexcept;

// What is known about one layer's traffic. Absent readings (nullopt) were not asked for;
// readings whose status has no value were asked for and could not be counted.
struct BytesInputs {
  std::optional<CounterReading> dram_bytes;  // a DRAM-bytes metric (64 × CAS counts), in bytes
  std::optional<CounterReading> llc_misses;  // last-level-cache misses, a count of lines
  double line_bytes = 64.0;
  std::optional<double> analytic_bytes;  // the cost model's minimum traffic
};

struct BytesEstimate {
  SourcedValue bytes;
  BytesOrigin origin = BytesOrigin::analytic_minimum;
  // Why the chain stopped where it did: each step skipped and the reason (e.g. "DRAM bytes:
  // unsupported"). Empty when the first step was used.
  std::vector<std::string> skipped;
};

// DRAM bytes from the uncore where they were counted, else LLC misses × line size (estimated:
// it misses prefetched and written-back lines and counts lines another core's L3 held), else
// the analytic minimum traffic. Multiplexed readings are used, carrying their status and
// running fraction. Error when no step has a value.
Result<BytesEstimate> choose_bytes(const BytesInputs& inputs);

// ---- FLOPs: measured against analytic -----------------------------------------------------

struct FlopsComparison {
  double measured = 0.0;
  double analytic = 0.0;
  double ratio = 0.0;   // measured / analytic; 0 when analytic is 0
  bool agrees = false;  // |ratio − 1| ≤ tolerance
  // The known reasons this op's measured count can differ in the observed direction (empty
  // when they agree): BLAS tile padding, im2col, masked attention, transcendental functions...
  std::vector<std::string> reasons;
};
// `causal` matters for attention only. Tolerance: relative, default 5%.
FlopsComparison compare_flops(double measured, double analytic, OpKind op, bool causal = false, double tolerance = 0.05);
// The same for work whose op is known only by its compute roof (a region an observer or a
// program measured): the reasons every op shares, and those of GEMMs or of transcendental
// functions where its roof says so.
FlopsComparison compare_flops(double measured, double analytic, const ComputeRoof& roof, double tolerance = 0.05);

// ---- placement ----------------------------------------------------------------------------

enum class Precision { sp, dp };
enum class Bound { compute, memory, overhead };
std::string_view bound_name(Bound bound) noexcept;

// The classification rule's thresholds (see classify_bound in src/placement/roofline.cpp).
struct BoundRule {
  // "Far below both roofs": achieved below this fraction of attainable ...
  double overhead_efficiency = 0.10;
  // ... and a call shorter than this, so that a handful of fixed costs per call (a BLAS
  // call's dispatch and packing, an OpenMP fork/join, a temporary's allocation: each of the
  // order of a microsecond) can explain the gap. A longer call far below its roof is a slow
  // kernel, not fixed cost: it is placed by its intensity and its headroom says how slow.
  double overhead_seconds = 100e-6;
};

// What a call's bytes are, for a memory roof that matches where they can come from. The
// calibration measured the triad bandwidth of every working-set size it swept; a call whose
// data fits a cache is held to what the sweep reached at that size, not to DRAM's bandwidth.
// Only analytic bytes are placed this way: counted bytes (DRAM, LLC misses) are DRAM traffic.
struct WorkingSet {
  double call_bytes = 0.0;    // the distinct bytes the call touches: its traffic, less an output written in place (0: the traffic)
  double reused_bytes = 0.0;  // of those, what only a later pass reuses (weights, optimizer state)
  double pass_bytes = 0.0;    // what one whole pass touches: the reused bytes stay cached only if it fits
};

struct RooflineInput {
  // What bounds the op's arithmetic (its definition's: docs/adding-an-op.md): the FMA peak,
  // the GEMM ceiling, or a transcendental function's calibrated rate ("tanh_sp", ... in G
  // evaluations/s) × the FLOPs `flops` counts per evaluation, where the calibration has it —
  // not the FMA roof, which no polynomial reaches.
  ComputeRoof roof;
  SourcedValue flops;    // per call
  SourcedValue bytes;    // per call (see choose_bytes)
  double seconds = 0.0;  // per call (the median)
  int threads = 1;       // selects the calibration run
  Precision precision = Precision::sp;
  BoundRule rule;
  // When set and the bytes are analytic: the memory roof is the calibrated bandwidth at this
  // working set (see WorkingSet). Absent: DRAM's.
  std::optional<WorkingSet> working_set;
};

// The cache-aware view (Ilić, Pratas & Sousa, "Cache-aware Roofline model", IEEE CAL 2014):
// the same intensity under each level's bandwidth, as if the counted bytes were served there.
struct LevelRoof {
  std::string level;          // "l1", "l2", "l3", "dram"
  double gbytes_per_s = 0.0;  // that level's measured triad ceiling (best)
  double attainable_gflops_per_s = 0.0;
};

struct RooflinePoint {
  SourcedValue flops;
  SourcedValue bytes;
  double seconds = 0.0;
  double intensity = 0.0;     // FLOP per byte; 0 when bytes is 0
  double gflops_per_s = 0.0;  // achieved
  double gbytes_per_s = 0.0;  // achieved
  std::string compute_roof;   // "gemm_sp", "fma_sp", ...: the roof that applies to this op
  double compute_roof_gflops_per_s = 0.0;
  double peak_gflops_per_s = 0.0;  // the FMA peak: the absolute roof of every op
  double dram_gbytes_per_s = 0.0;
  // The bandwidth roof that applies: DRAM's, or the calibrated bandwidth at the call's working
  // set (WorkingSet); for a model total, its bytes over the layers' summed memory times.
  double memory_gbytes_per_s = 0.0;
  std::string memory_level;      // "l1", "l2", "l3", "dram" or "unknown": the level that holds the bytes taking most time ("mixed" for a model total)
  std::string memory_roof;       // how memory_gbytes_per_s was chosen, with the numbers
  double ridge_intensity = 0.0;  // compute roof / memory roof
  double attainable_gflops_per_s = 0.0;  // min(compute roof, intensity × memory roof)
  std::vector<LevelRoof> levels;         // l1 .. dram, those the calibration found
  // achieved / attainable. For a layer without FLOPs (a copy, a transpose) the same ratio in
  // bandwidth terms: achieved GB/s / the memory roof — which equals the FLOP ratio whenever
  // the layer sits under the memory roof.
  double efficiency = 0.0;
  double headroom = 0.0;  // attainable / achieved (×); 0 when nothing was achieved
  Bound bound = Bound::overhead;
  std::string why;                 // the rule that decided `bound`, with the numbers
  std::vector<std::string> notes;  // e.g. a GEMM op placed under the FMA roof for want of a GEMM ceiling
};

// Errors: no calibration run with `threads` threads (the runs that exist are named), a run
// without DRAM bandwidth or any compute ceiling, a non-positive time, negative work.
Result<RooflinePoint> place_on_roofline(const RooflineInput& input, const Machine& machine);

// A whole pass (the model total) against its layers: the time the roofline allows it is the
// sum of what it allows each layer (max of FLOPs over its compute roof and bytes over its
// memory roof), so its efficiency is that sum over the measured time and its memory roof is
// its bytes over the layers' summed memory times. `p` is the whole pass placed like a layer
// (place_on_roofline); `layers` are the placements of every layer it ran. Without any, or
// without time the roofs allow them, `p` is returned as it is.
RooflinePoint place_total_by_layers(RooflinePoint p, const std::vector<const RooflinePoint*>& layers);

}  // namespace hwprof
HWPROF_API_END
