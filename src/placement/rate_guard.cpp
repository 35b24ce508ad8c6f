#include "placement/rate_guard.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::placement {
namespace {

RateLimit limit_of(const TheoreticalPeaks& theoretical, const CalibrationRun* run, int threads) {
  RateLimit out;
  double theory = 0.0;
  if (theoretical.sp_gflops > 0 && theoretical.cores > 0 && threads > 0) {
    theory = theoretical.sp_gflops * std::min(threads, theoretical.cores) / theoretical.cores;
  }
  double measured = 0.0;
  std::string measured_name;
  if (run != nullptr) {
    for (const auto& [name, ceiling] : run->compute) {
      if (ceiling.best > measured) {
        measured = ceiling.best;
        measured_name = name;
      }
    }
  }
  if (theory <= 0 && measured <= 0) return out;
  out.gflops_per_s = std::max(theory, measured) * kClockSlack;
  out.source =
      theory >= measured
          ? fmt::format("the theoretical single-precision peak of {} thread{} ({:.4g} GFLOP/s)", threads, threads == 1 ? "" : "s", theory)
          : fmt::format("the measured {} ceiling for {} thread{} ({:.4g} GFLOP/s)", measured_name, threads, threads == 1 ? "" : "s", measured);
  out.source += fmt::format(", x{:.2f} for a clock above the reported one", kClockSlack);
  return out;
}

}  // namespace

RateLimit rate_limit(const Machine& machine, int threads) {
  return limit_of(machine.theoretical, machine.run_for(threads), threads);
}

RateLimit rate_limit(const ProfileMachine& machine, int threads) {
  const CalibrationRun* run = machine.ceilings && machine.ceilings->threads == threads ? &*machine.ceilings : nullptr;
  return limit_of(machine.theoretical, run, threads);
}

double slow_end_seconds(const LayerProfile& layer, double overhead_ns) {
  const Summary& t = layer.time_ms;
  double ms = t.median;
  if (layer.calls > 0) {
    // A program's row: rates over its mean.
    const double n = static_cast<double>(std::max<std::uint64_t>(t.n, 1));
    ms = (layer.total_ms > 0 ? layer.total_ms / static_cast<double>(layer.calls) : t.mean) + 1.96 * t.stddev / std::sqrt(n);
  } else if (t.has_median_ci()) {
    ms = t.median_ci_high;
  } else {
    ms = std::max(t.median, t.max);
  }
  return ms * 1e-3 + std::max(0.0, overhead_ns) * 1e-9;
}

bool guard_rate(LayerProfile& layer, const RateLimit& limit, double overhead_ns) {
  if (!layer.roofline || limit.gflops_per_s <= 0) return false;
  const double flops = layer.roofline->flops.value;
  const double seconds = slow_end_seconds(layer, overhead_ns);
  if (!(flops > 0) || !(seconds > 0)) return false;
  const double needed = flops / seconds * 1e-9;
  if (needed <= limit.gflops_per_s) return false;
  layer.impossible = true;
  layer.impossible_reason = fmt::format(
      "{:.4g} FLOPs per call in {:.4g} ms per call (the slow end of its interval) would need {:.4g} GFLOP/s, above the most this machine "
      "can do: {}; its count or its calls are wrong, so it is left out of the time to win and the totals (a bug in hwprof: please "
      "report it with profile.json)",
      flops, seconds * 1e3, needed, limit.source);
  return true;
}

}  // namespace hwprof::placement
