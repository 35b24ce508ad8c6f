#include "placement/layer_placement.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "common/cpu_topology.hpp"
#include "common/launch_rank.hpp"
#include "common/stages.hpp"

namespace hwprof::placement {

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(cpus_one_per_core().size()));
}

void fill_launch_rank(Profile& p) {
  if (const LaunchRank rank = launch_rank(); rank.known()) {
    p.rank = rank.rank;
    p.rank_count = rank.size;
    p.rank_variable = rank.variable;
  }
}

void fill_machine(Profile& p, const std::optional<Machine>& machine, const std::string& source, int threads) {
  if (!machine) {
    p.machine.cpu = describe_this_cpu();
    return;
  }
  const Machine& m = *machine;
  p.machine.host = m.host;
  p.machine.cpu = m.cpu;
  p.machine.calibration_file = source;
  p.machine.calibration_created = m.created;
  p.machine.calibration_quick = m.quick;
  if (const CalibrationRun* run = m.run_for(threads)) p.machine.ceilings = *run;
  p.machine.theoretical = m.theoretical;
}

Summary to_ms(const Summary& ns) {
  Summary s = ns;
  for (double* v : {&s.median, &s.mean, &s.stddev, &s.min, &s.max, &s.p5, &s.p95, &s.p99, &s.mad, &s.median_ci_low, &s.median_ci_high}) {
    *v *= 1e-6;
  }
  return s;
}

namespace {

// The value per call of the metric with `role` (counters/README.md, "The format"), if the
// group has one and it was counted. By role, never by display name, so that a group of any
// family, shipped or the user's own, feeds the roofline.
std::optional<double> metric_value(const RegionReport& r, MetricRole role) {
  for (const RegionMetric& m : r.metrics) {
    if (m.role == role && m.value) return m.value;
  }
  return std::nullopt;
}

CounterReading measured_reading(double value) {
  CounterReading r;
  r.value = value;
  r.raw = static_cast<std::uint64_t>(std::max(0.0, value));
  r.running_fraction = 1.0;
  r.status = CounterStatus::ok;
  return r;
}

}  // namespace

// The layer's measured side, its analytic side and its roofline placement.
// `working_set`: where the layer's analytic bytes can come from (absent for the model total,
// which is placed against its layers afterwards).
void fill_measurements(LayerProfile& layer, const RegionReport& r, const std::optional<Machine>& machine, int threads, const RowWork& work,
                       double seconds) {
  layer.time_ms = to_ms(r.inclusive_ns);
  // Evenly thinned to kMaxKeptSamples: every k-th call, so the kept ones span the whole run.
  const std::vector<double>& kept = r.inclusive_samples_ns;
  const std::size_t step = kept.size() > kMaxKeptSamples ? (kept.size() + kMaxKeptSamples - 1) / kMaxKeptSamples : 1;
  layer.samples_ms.clear();
  for (std::size_t i = 0; i < kept.size(); i += step) layer.samples_ms.push_back(kept[i] * 1e-6);
  layer.below_resolution = r.below_resolution;
  layer.own_cost_ns = r.own_cost_ns;
  for (const CounterTotal& c : r.counters) {
    const std::optional<double> value = c.has_value() ? std::optional<double>(c.per_call()) : std::nullopt;
    LayerCounter counter;
    counter.name = c.name;
    counter.unit = c.unit;
    counter.kind = c.kind;
    counter.value = value;
    counter.status = c.status;
    counter.running_fraction = c.min_running_fraction;
    counter.reason = c.reason;
    counter.below_resolution = c.below_resolution;
    layer.counters.push_back(std::move(counter));
  }
  for (const RegionMetric& m : r.metrics) layer.metrics.push_back({m.name, m.unit, m.value, m.reason, m.below_resolution});

  // FLOPs: measured where the group counts FP operations, else analytic.
  SourcedValue flops{static_cast<double>(layer.flops), ValueSource::analytic, CounterStatus::ok, 1.0, "analytic (cost model)"};
  if (const auto measured = metric_value(r, MetricRole::flops)) {
    flops = {*measured, ValueSource::measured, CounterStatus::ok, 1.0, "FP operations counted, weighted by vector width"};
    const auto analytic = static_cast<double>(layer.flops);
    if (work.kind == RowWork::Kind::layer) layer.flops_check = compare_flops(*measured, analytic, work.op, layer.causal);
    if (work.kind == RowWork::Kind::region) layer.flops_check = compare_flops(*measured, analytic, work.roof);
  }
  // Bytes: DRAM from the uncore, else LLC misses × line size, else the analytic minimum.
  BytesInputs in;
  if (const auto dram = metric_value(r, MetricRole::dram_bytes)) in.dram_bytes = measured_reading(*dram);
  if (const auto llc = metric_value(r, MetricRole::llc_miss_bytes)) in.llc_misses = measured_reading(*llc / in.line_bytes);
  in.analytic_bytes = static_cast<double>(layer.bytes);
  SourcedValue bytes{static_cast<double>(layer.bytes), ValueSource::analytic, CounterStatus::ok, 1.0, "analytic minimum traffic"};
  if (auto chosen = choose_bytes(in)) {
    bytes = chosen->bytes;
    layer.bytes_origin = chosen->origin;
    layer.bytes_skipped = chosen->skipped;
  }
  if (!machine) {
    layer.roofline_error = "no calibration of this machine: run `hwprof calibrate` (or pass --calibration FILE)";
    return;
  }
  RooflineInput input;
  input.roof = work.roof;
  // A function's rate × the FLOPs counted per evaluation: counted FLOPs count more per
  // evaluation than the cost model (a polynomial's), in their ratio.
  if (flops.source == ValueSource::measured && layer.flops > 0) {
    input.roof.flops_per_evaluation *= flops.value / static_cast<double>(layer.flops);
  }
  input.flops = flops;
  input.bytes = bytes;
  input.seconds = seconds > 0 ? seconds : layer.time_ms.median * 1e-3;
  input.threads = threads;
  input.working_set = work.working_set;
  auto placed = place_on_roofline(input, *machine);
  if (placed) {
    layer.roofline = std::move(*placed);
  } else {
    layer.roofline_error = placed.error().message;
  }
}

namespace {

// Above this share of its roof a layer's efficiency is not a fact but a question: the
// profile says so first, with the likely cause.
constexpr double kAboveRoof = 1.10;

// "conv1 (130%), relu (128%) and 3 more".
std::string layers_named(std::vector<const LayerProfile*> layers) {
  std::sort(layers.begin(), layers.end(),
            [](const LayerProfile* a, const LayerProfile* b) { return a->roofline->efficiency > b->roofline->efficiency; });
  std::string out;
  const std::size_t shown = std::min<std::size_t>(layers.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) {
    out += fmt::format("{}{} ({:.0f}%)",
                       i == 0                                     ? ""
                       : i + 1 == shown && shown == layers.size() ? " and "
                                                                  : ", ",
                       layers[i]->name + (layers[i]->phase == LayerPhase::forward ? "" : " " + std::string(layer_phase_name(layers[i]->phase))),
                       100 * layers[i]->roofline->efficiency);
  }
  if (layers.size() > shown) out += fmt::format(" and {} more", layers.size() - shown);
  return out;
}

// Ceilings that this run beats are stale, were measured under load, or describe other
// kernels or another cache level than the layer used: an efficiency above kAboveRoof is a
// warning with its likely cause, never a plain figure.
}  // namespace

void add_calibration_warnings(Profile& p, bool contended) {
  if (!p.machine.ceilings) return;
  const std::string file = p.machine.calibration_file.empty() ? "the calibration" : p.machine.calibration_file;
  bool other_kernels = false;
  for (const char* name : {"gemm_sp", "gemm_dp"}) {
    auto it = p.machine.ceilings->compute.find(name);
    if (it == p.machine.ceilings->compute.end() || p.machine.blas_core.empty()) continue;
    const std::string_view variant = it->second.variant;
    if (!variant.starts_with(kOpenBlasVariantPrefix)) continue;
    const std::string_view core = variant.substr(kOpenBlasVariantPrefix.size());
    if (core != p.machine.blas_core) {
      p.hints.push_back(
          fmt::format("the {} ceiling in {} was measured on OpenBLAS's {} kernels, and this run's layers ran on its {} "
                      "kernels: run `hwprof calibrate` in the same environment for a matching GEMM roof",
                      name, file, core, p.machine.blas_core));
      other_kernels = true;
      break;
    }
  }
  std::vector<const LayerProfile*> compute_side;
  std::vector<const LayerProfile*> function_side;  // held to a function's rate (exp_sp, tanh_sp, erf_sp)
  std::vector<const LayerProfile*> memory_side;
  bool counted_bytes = false;
  for (const LayerProfile& l : p.layers) {
    if (!l.roofline || l.below_resolution || l.roofline->efficiency <= kAboveRoof) continue;
    const std::string& roof = l.roofline->compute_roof;
    if (l.roofline->intensity >= l.roofline->ridge_intensity && !roof.starts_with("gemm_") && !roof.starts_with("fma_")) {
      function_side.push_back(&l);
    } else if (l.roofline->intensity >= l.roofline->ridge_intensity) {
      compute_side.push_back(&l);
    } else {
      memory_side.push_back(&l);
      counted_bytes = counted_bytes || l.roofline->bytes.source == ValueSource::measured;
    }
  }
  const std::string under_load = contended
                                     ? "the calibration was measured while other processes ran (see above)"
                                     : "a calibration measured under load" + std::string(p.machine.calibration_quick ? " (this one is quick)" : "");
  if (!memory_side.empty()) {
    p.warnings.push_back(fmt::format(
        "{} memory-side layer{} above {:.0f}% of {} memory roof: {}. Likely cause: {}; their efficiency overstates how close to "
        "the hardware they are",
        memory_side.size(), memory_side.size() == 1 ? " runs" : "s run", 100 * kAboveRoof, memory_side.size() == 1 ? "its" : "their",
        layers_named(memory_side),
        contended       ? under_load
        : counted_bytes ? "counted bytes that miss part of the traffic (other threads' or the prefetchers': counter overlap), or " + under_load
                        : "data still in a nearer cache than the working set suggests (the previous layer's output), or " + under_load));
  }
  // The function's roof is the rate of hwprof's own kernel for it: another implementation (a
  // framework's vectorised erf or exp) may be a cheaper approximation and beat it.
  if (!function_side.empty()) {
    p.warnings.push_back(
        fmt::format("{} layer{} above {:.0f}% of the calibrated rate of the function {} evaluate{}: {}. Likely cause: {} kernel approximates the "
                    "function more cheaply than hwprof's calibrated one (the roof then understates what this machine can do for {}), or {}",
                    function_side.size(), function_side.size() == 1 ? " runs" : "s run", 100 * kAboveRoof, function_side.size() == 1 ? "it" : "they",
                    function_side.size() == 1 ? "s" : "", layers_named(function_side), function_side.size() == 1 ? "its" : "their",
                    function_side.size() == 1 ? "it" : "them", under_load));
  }
  if (!compute_side.empty()) {
    p.warnings.push_back(fmt::format("{} compute-side layer{} above {:.0f}% of the compute roof: {}. Likely cause: {}", compute_side.size(),
                                     compute_side.size() == 1 ? " runs" : "s run", 100 * kAboveRoof, layers_named(compute_side),
                                     other_kernels ? "the GEMM ceiling was measured on other OpenBLAS kernels than these layers ran on (see the hint)"
                                                   : under_load + ", so the ceilings in " + file +
                                                         " are too low for this machine now: run `hwprof calibrate` "
                                                         "on a quiet machine"));
  }
}

}  // namespace hwprof::placement
