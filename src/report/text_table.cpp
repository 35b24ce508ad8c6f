#include "report/text_table.hpp"

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "common/stages.hpp"

namespace hwprof::report {

std::string rate_cell(double v) {
  if (v >= 1000) return fmt::format("{:.0f}", v);
  if (v >= 100) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  if (v >= 0.001) return fmt::format("{:.3f}", v);
  return v == 0 ? "0" : fmt::format("{:.2e}", v);
}

std::string optional_rate_cell(const std::optional<double>& v) {
  return v ? rate_cell(*v) : "-";
}

std::string median_uncertainty_cell(const Summary& s, bool* used_range) {
  if (s.n == 0) return "-";
  if (s.has_median_ci()) return "±" + milliseconds((s.median_ci_high - s.median_ci_low) / 2);
  *used_range = true;
  return "±" + milliseconds((s.max - s.min) / 2) + "†";
}

std::string row_mark_notes(const RowMarks& m) {
  std::string out;
  if (m.below_resolution) out += "~ below resolution: the median is shorter than 100x the measurement's own cost; read it as an upper bound\n";
  if (m.used_range) out += "† fewer than 6 samples: no 95% interval for the median, ± is half the min-max range\n";
  if (m.lower_bound) {
    out +=
        "≥ a lower bound: the row's count leaves out the ops inside it that hwprof has no formula for (profile.json's work_partial "
        "names them), so its GFLOP/s and Eff. are at least these\n";
  }
  if (m.impossible) {
    out +=
        "impossible: the row's rate is above anything this machine can do, by more than its own uncertainty: its count or its calls "
        "are wrong, so it has no rate, bound or time to win and is left out of the totals (Why and profile.json's impossible_reason "
        "give the figures)\n";
  }
  return out;
}

}  // namespace hwprof::report
