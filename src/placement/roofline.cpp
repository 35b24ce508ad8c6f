// Roofline placement (Williams, Waterman & Patterson, "Roofline: an insightful visual
// performance model for multicore architectures", CACM 52(4), 2009): attainable performance
// is min(compute roof, intensity × bandwidth), with the ceilings measured by `hwprof
// calibrate` on this machine rather than taken from a data sheet.
#include "placement/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof {

std::string_view value_source_name(ValueSource source) noexcept {
  switch (source) {
    case ValueSource::measured:
      return "measured";
    case ValueSource::analytic:
      return "analytic";
    case ValueSource::estimated:
      return "estimated";
  }
  return "?";
}

std::string_view bytes_origin_name(BytesOrigin origin) noexcept {
  switch (origin) {
    case BytesOrigin::dram_counters:
      return "dram-counters";
    case BytesOrigin::llc_misses:
      return "llc-misses";
    case BytesOrigin::analytic_minimum:
      return "analytic-minimum";
  }
  return "?";
}

std::string_view bound_name(Bound bound) noexcept {
  switch (bound) {
    case Bound::compute:
      return "compute";
    case Bound::memory:
      return "memory";
    case Bound::overhead:
      return "overhead";
  }
  return "?";
}

namespace {

const Ceiling* find_ceiling(const std::map<std::string, Ceiling>& ceilings, const std::string& key) {
  auto it = ceilings.find(key);
  return it != ceilings.end() && it->second.best > 0 ? &it->second : nullptr;
}

// A level's bandwidth: its triad ceiling, the kernel every level has and the one the
// ceilings chart draws (src/report/ceilings_svg.cpp).
double level_gbps(const CalibrationRun& run, const char* level) {
  auto it = run.bandwidth.find(level);
  if (it == run.bandwidth.end()) return 0.0;
  const Ceiling* triad = find_ceiling(it->second.kernels, "triad");
  return triad ? triad->best : 0.0;
}

struct MemoryRoof {
  double gbps = 0.0;
  std::string level = "dram";
  std::string how;
  bool from_working_set = false;
};

std::string megabytes(double bytes) {
  return fmt::format("{:.3g} MB", bytes * 1e-6);
}

std::string thread_counts(const Machine& machine) {
  std::string out;
  for (const CalibrationRun& r : machine.runs) out += (out.empty() ? "" : ", ") + std::to_string(r.threads);
  return out.empty() ? "none" : out;
}

}  // namespace

namespace placement {

double bandwidth_at(const CalibrationRun& run, double bytes) {
  double best = 0.0;
  bool swept = false;
  for (const SweepPoint& s : run.sweep) {
    if (s.kernel != "triad" || !(s.best_gbps > 0) || !std::isfinite(s.best_gbps)) continue;
    swept = true;
    if (static_cast<double>(s.bytes) >= bytes) best = std::max(best, s.best_gbps);
  }
  if (!swept) {
    for (const auto& [name, band] : run.bandwidth) {
      const Ceiling* triad = find_ceiling(band.kernels, "triad");
      if (name != "dram" && triad != nullptr && static_cast<double>(band.to_bytes) >= bytes) best = std::max(best, triad->best);
    }
  }
  return std::max(best, level_gbps(run, "dram"));
}

std::string level_holding(const CalibrationRun& run, const MachineCpu& cpu, int threads, double bytes) {
  const bool from_sweep =
      std::any_of(run.bandwidth.begin(), run.bandwidth.end(), [](const auto& level) { return !level.second.capacity_source.empty(); });
  if (from_sweep) {
    for (const char* name : {"l1", "l2", "l3"}) {
      auto it = run.bandwidth.find(name);
      if (it == run.bandwidth.end()) continue;
      if (it->second.capacity_bytes <= 0) return "unknown";  // past a level whose end nobody knows
      if (bytes <= static_cast<double>(it->second.capacity_bytes)) return name;
    }
    return "dram";
  }
  // A report from before the sweep decided the levels: the CPU's cache description.
  const std::vector<std::int64_t> capacity = cache_capacities(cpu, threads);
  if (capacity.empty()) return "unknown";
  for (std::size_t i = 0; i < capacity.size(); ++i) {
    if (bytes <= static_cast<double>(capacity[i])) return "l" + std::to_string(i + 1);
  }
  return "dram";
}

BoundDecision classify_bound(double flops, double bytes, double intensity, double ridge, double efficiency, double seconds, const BoundRule& rule) {
  if (flops <= 0 && bytes <= 0) return {Bound::overhead, "no work (0 FLOPs, 0 bytes): the time is fixed cost only"};
  if (efficiency < rule.overhead_efficiency && seconds < rule.overhead_seconds) {
    return {Bound::overhead, fmt::format("{:.1f}% of attainable (< {:g}%) in a {:.1f} µs call (< {:g} µs): far below both roofs, time "
                                         "dominated by fixed per-call costs",
                                         100 * efficiency, 100 * rule.overhead_efficiency, 1e6 * seconds, 1e6 * rule.overhead_seconds)};
  }
  if (bytes <= 0) return {Bound::compute, "FLOPs without bytes: only the compute roof applies"};
  if (intensity >= ridge) {
    return {Bound::compute, fmt::format("intensity {:.3g} FLOP/B ≥ ridge {:.3g} FLOP/B", intensity, ridge)};
  }
  return {Bound::memory, fmt::format("intensity {:.3g} FLOP/B < ridge {:.3g} FLOP/B", intensity, ridge)};
}

}  // namespace placement

namespace {

// DRAM's triad ceiling, or — for analytic bytes with a working set — the calibrated
// bandwidth where those bytes can live: the call's own data at its working set, the bytes
// a later pass reuses (weights, optimizer state) at the whole pass's, the two times added.
Result<MemoryRoof> memory_roof(const RooflineInput& in, const CalibrationRun& run, const MachineCpu& cpu, double dram) {
  MemoryRoof m;
  m.gbps = dram;
  m.how = fmt::format("DRAM triad ceiling, {:.4g} GB/s", dram);
  const double bytes = in.bytes.value;
  if (!in.working_set || in.bytes.source != ValueSource::analytic || !(bytes > 0)) return m;
  const WorkingSet& ws = *in.working_set;
  for (double v : {ws.call_bytes, ws.reused_bytes, ws.pass_bytes}) {
    if (!(v >= 0) || !std::isfinite(v)) return Error{"roofline placement: a working set must be finite and non-negative"};
  }
  // Fewer distinct bytes than traffic: an op that writes over its input.
  const double call_set = ws.call_bytes > 0 ? ws.call_bytes : bytes;
  const double pass_set = std::max(call_set, ws.pass_bytes);
  const double reused = std::min(ws.reused_bytes, bytes);
  const double streamed = bytes - reused;
  const double call_gbps = placement::bandwidth_at(run, call_set);
  const double reused_gbps = placement::bandwidth_at(run, pass_set);
  const double streamed_s = streamed / (call_gbps * 1e9);
  const double reused_s = reused / (reused_gbps * 1e9);
  m.gbps = bytes / (streamed_s + reused_s) * 1e-9;
  m.level = placement::level_holding(run, cpu, in.threads, streamed_s >= reused_s ? call_set : pass_set);
  m.from_working_set = true;
  // Weights of a percent or less of the bytes (a norm's scale and shift) go unmentioned.
  const std::string in_place = call_set < bytes ? " (in place)" : "";
  m.how = reused > 0.01 * bytes
              ? fmt::format(
                    "{} of activations at the calibrated triad of the call's working set, {}{} ({:.4g} GB/s); {} of "
                    "weights and state, which only the next pass reuses, at the pass's working set, {} ({:.4g} GB/s): "
                    "{:.4g} GB/s",
                    megabytes(streamed), megabytes(call_set), in_place, call_gbps, megabytes(reused), megabytes(pass_set), reused_gbps, m.gbps)
              : fmt::format("calibrated triad at the call's working set of {}{}: {:.4g} GB/s", megabytes(call_set),
                            call_set < bytes ? fmt::format(" (its {} of traffic, in place)", megabytes(bytes)) : "", m.gbps);
  return m;
}

// The compute roof of `in`'s op in `run`: the FMA peak bounds every op; a GEMM-backed op is
// held to the GEMM ceiling (the best a BLAS call reached here), a transcendental op to its
// function's calibrated rate × its FLOPs per evaluation. Error: no compute ceiling at all.
std::optional<Error> place_compute_roof(RooflinePoint& p, const RooflineInput& in, const CalibrationRun& run, const std::string& precision) {
  const Ceiling* fma = find_ceiling(run.compute, "fma_" + precision);
  const Ceiling* gemm = find_ceiling(run.compute, "gemm_" + precision);
  if (fma == nullptr && gemm == nullptr) {
    return Error{
        fmt::format("the calibration's {}-thread run has no {} compute ceiling (fma_{} or gemm_{}); re-run "
                    "`hwprof calibrate`",
                    in.threads, precision == "sp" ? "single-precision" : "double-precision", precision, precision)};
  }
  const bool gemm_backed = in.roof.kind == ComputeRoof::Kind::gemm;
  const Ceiling* roof = gemm_backed && gemm != nullptr ? gemm : fma != nullptr ? fma : gemm;
  p.compute_roof = (roof == gemm ? "gemm_" : "fma_") + precision;
  p.compute_roof_gflops_per_s = roof->best;
  p.peak_gflops_per_s = fma != nullptr ? fma->best : roof->best;
  if (gemm_backed && gemm == nullptr) {
    p.notes.push_back("no GEMM ceiling in the calibration: this GEMM-backed op is held to the FMA peak");
  }
  if (!gemm_backed && fma == nullptr) {
    p.notes.push_back("no FMA ceiling in the calibration: held to the GEMM ceiling instead");
  }
  if (fma == nullptr) p.notes.push_back("no FMA ceiling in the calibration: the peak shown is the GEMM ceiling");
  const ComputeRoof& op = in.roof;
  if (op.kind != ComputeRoof::Kind::transcendental || op.function.empty() || !(op.flops_per_evaluation > 0) || in.flops.value <= 0) {
    return std::nullopt;
  }
  const std::string name = op.function + "_" + precision;
  if (const Ceiling* t = find_ceiling(run.compute, name); t != nullptr && t->best > 0) {
    const double per_element = op.flops_per_evaluation;
    const double roof_gflops = t->best * per_element;
    if (roof_gflops < p.compute_roof_gflops_per_s) {
      p.compute_roof = name;
      p.compute_roof_gflops_per_s = roof_gflops;
      p.notes.push_back(
          fmt::format("held to the calibrated {} kernel: {:.3g} G evaluations/s × {:.3g} FLOPs per element", op.function, t->best, per_element));
    }
  } else {
    p.notes.push_back(
        fmt::format("no {} ceiling in the calibration (made before hwprof measured one): held to the FMA peak, "
                    "which a {} polynomial cannot reach; run `hwprof calibrate` again",
                    name, op.function));
  }
  return std::nullopt;
}

// Efficiency, headroom and bound from the achieved and attainable rates, and a note when the
// point is above its roof.
void judge_point(RooflinePoint& p, const RooflineInput& in, bool memory_from_working_set) {
  const double flops = in.flops.value;
  const double bytes = in.bytes.value;
  if (flops > 0) {
    p.efficiency = p.gflops_per_s / p.attainable_gflops_per_s;
  } else if (bytes > 0) {
    p.efficiency = p.gbytes_per_s / p.memory_gbytes_per_s;
  }
  p.headroom = p.efficiency > 0 ? 1.0 / p.efficiency : 0.0;
  placement::BoundDecision d = placement::classify_bound(flops, bytes, p.intensity, p.ridge_intensity, p.efficiency, in.seconds, in.rule);
  p.bound = d.bound;
  p.why = std::move(d.why);
  if (p.efficiency > 1.0) {
    p.notes.push_back(memory_from_working_set ? fmt::format("achieved {:.2f}× the attainable: faster than the calibration's triad at this working "
                                                            "set (ceilings measured under load, or data reused more than the analytic minimum "
                                                            "traffic assumes)",
                                                            p.efficiency)
                                              : fmt::format("achieved {:.2f}× the attainable: the bytes are likely undercounted (served from cache, "
                                                            "or an analytic minimum below the real traffic), or the ceiling was measured low",
                                                            p.efficiency));
  }
}

}  // namespace

Result<RooflinePoint> place_on_roofline(const RooflineInput& in, const Machine& machine) {
  const CalibrationRun* run = machine.run_for(in.threads);
  if (run == nullptr) {
    return Error{
        fmt::format("the calibration has no run with {} thread(s) (it has: {}); run `hwprof calibrate --threads "
                    "{}` or profile with a thread count it has",
                    in.threads, thread_counts(machine), in.threads)};
  }
  if (!(in.seconds > 0) || !std::isfinite(in.seconds)) return Error{"roofline placement needs a positive time per call"};
  if (in.flops.value < 0 || in.bytes.value < 0) return Error{"roofline placement: negative FLOPs or bytes"};

  RooflinePoint p;
  p.flops = in.flops;
  p.bytes = in.bytes;
  p.seconds = in.seconds;
  const std::string precision = in.precision == Precision::sp ? "sp" : "dp";
  if (auto error = place_compute_roof(p, in, *run, precision)) return *error;
  p.dram_gbytes_per_s = level_gbps(*run, "dram");
  if (!(p.dram_gbytes_per_s > 0)) {
    return Error{fmt::format("the calibration's {}-thread run has no DRAM bandwidth; re-run `hwprof calibrate`", in.threads)};
  }

  const double flops = in.flops.value;
  const double bytes = in.bytes.value;
  p.intensity = bytes > 0 ? flops / bytes : 0.0;
  p.gflops_per_s = flops / in.seconds * 1e-9;
  p.gbytes_per_s = bytes / in.seconds * 1e-9;
  auto memory = memory_roof(in, *run, machine.cpu, p.dram_gbytes_per_s);
  if (!memory) return memory.error();
  p.memory_gbytes_per_s = memory->gbps;
  p.memory_level = std::move(memory->level);
  p.memory_roof = std::move(memory->how);
  p.ridge_intensity = p.compute_roof_gflops_per_s / p.memory_gbytes_per_s;
  p.attainable_gflops_per_s = bytes > 0 ? std::min(p.compute_roof_gflops_per_s, p.intensity * p.memory_gbytes_per_s) : p.compute_roof_gflops_per_s;
  for (const char* level : {"l1", "l2", "l3", "dram"}) {
    const double gbps = level_gbps(*run, level);
    if (gbps <= 0) continue;
    const double attainable = bytes > 0 ? std::min(p.compute_roof_gflops_per_s, p.intensity * gbps) : p.compute_roof_gflops_per_s;
    p.levels.push_back({level, gbps, attainable});
  }
  judge_point(p, in, memory->from_working_set);
  return p;
}

RooflinePoint place_total_by_layers(RooflinePoint p, const std::vector<const RooflinePoint*>& layers) {
  // Per layer: the time its roofs allow (the larger of its compute and memory times), its
  // memory time, and its measured time by bound.
  double allowed = 0.0;
  double memory_seconds = 0.0;
  double layer_bytes = 0.0;
  double by_bound[3] = {0.0, 0.0, 0.0};
  double measured = 0.0;
  for (const RooflinePoint* l : layers) {
    const double memory = l->memory_gbytes_per_s > 0 ? l->bytes.value / (l->memory_gbytes_per_s * 1e9) : 0.0;
    const double compute = l->compute_roof_gflops_per_s > 0 ? l->flops.value / (l->compute_roof_gflops_per_s * 1e9) : 0.0;
    allowed += std::max(memory, compute);
    memory_seconds += memory;
    layer_bytes += l->bytes.value;
    by_bound[static_cast<int>(l->bound)] += l->seconds;
    measured += l->seconds;
  }
  if (!(allowed > 0) || !(measured > 0)) return p;
  if (memory_seconds > 0) {
    p.memory_gbytes_per_s = layer_bytes / memory_seconds * 1e-9;
    p.ridge_intensity = p.compute_roof_gflops_per_s / p.memory_gbytes_per_s;
  }
  p.memory_level = "mixed";
  p.memory_roof = fmt::format("the layers' own memory roofs: {:.4g} MB in {:.4g} ms at their bandwidths", layer_bytes * 1e-6, memory_seconds * 1e3);
  p.efficiency = allowed / p.seconds;
  p.headroom = 1.0 / p.efficiency;
  p.attainable_gflops_per_s = p.efficiency > 0 ? p.gflops_per_s / p.efficiency : 0.0;
  // The bound of the pass: the one its layers' measured time mostly went to.
  const Bound bounds[3] = {Bound::compute, Bound::memory, Bound::overhead};
  const int top = static_cast<int>(std::max_element(by_bound, by_bound + 3) - by_bound);
  p.bound = bounds[top];
  p.why = fmt::format(
      "the roofline allows {:.4g} ms for its layers (each at the larger of its compute and memory times); of the "
      "layers' measured time, {:.0f}% went to compute-bound layers, {:.0f}% to memory-bound and {:.0f}% to "
      "overhead-bound ones",
      allowed * 1e3, 100 * by_bound[0] / measured, 100 * by_bound[1] / measured, 100 * by_bound[2] / measured);
  p.notes.erase(std::remove_if(p.notes.begin(), p.notes.end(), [](const std::string& n) { return n.starts_with("achieved "); }), p.notes.end());
  if (p.efficiency > 1.0) {
    p.notes.push_back(fmt::format("ran {:.2f}× faster than its layers' roofs allow: see the layers above their roofs", p.efficiency));
  }
  return p;
}

}  // namespace hwprof
