// The time a row's figures are of, and its headroom in time: what every stage after the
// placement (causes, the program total, the analysis, the reports) reads the same way.
#pragma once

#include <algorithm>
#include <optional>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"

namespace hwprof::placement {

// The time a row's share, roof and win are of: a model's layer's median per pass; a program's
// row's time per step, or over the run (LayerProfile::basis_ms; 0 for a row that ran only after
// the last step).
inline double row_ms(const LayerProfile& layer) {
  return layer.calls > 0 || layer.basis_ms > 0 ? layer.basis_ms : layer.time_ms.median;
}

// How many of the row's calls its basis holds: a program's row's calls per step (or all of them;
// not those after the last step); 1 for a model's layer.
inline double calls_per_basis(const LayerProfile& layer) {
  if (layer.calls == 0) return 1.0;  // a model's layer: once per pass
  const double calls = static_cast<double>(layer.calls - std::min(layer.after_steps_calls, layer.calls));
  const double ms = layer.total_ms - layer.after_steps_ms;
  return ms > 0 ? calls * layer.basis_ms / ms : calls;
}

// Headroom in time: what the row would take at its roof (row_ms × efficiency, at most row_ms)
// and the time to win (row_ms less that). Absent without a roofline placement, and for a row
// whose rate is impossible (LayerProfile::impossible).
struct Headroom {
  double roof_ms = 0.0;
  double win_ms = 0.0;
};
inline std::optional<Headroom> headroom_ms(const LayerProfile& layer) {
  if (!layer.roofline || layer.time_ms.n == 0 || layer.impossible) return std::nullopt;
  const double t = row_ms(layer);
  const double roof = t * std::clamp(layer.roofline->efficiency, 0.0, 1.0);
  return Headroom{roof, t - roof};
}

}  // namespace hwprof::placement
