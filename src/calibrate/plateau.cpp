// Flat runs of a bandwidth-versus-working-set curve: the plateaus that memory_levels.cpp turns
// into memory levels.
//
// Walking the points in order of size, a point joins the current run when it lies within
// kJoinTolerance of the run's median (a median, so one noisy point cannot drag the run along),
// and starts a new run otherwise. Runs shorter than kMinPoints are transitions between levels,
// or outliers. A long run loses its end points while they lie more than kEdgeTolerance from
// its median towards the neighbouring level (the start of a transition: a working set partly
// in the next level, which would otherwise lift a lower level's best value), and is a plateau
// when what remains spans at most kFlatTolerance of its median, so a slope of 7 % per point
// or more never is. Two plateaus separated only by short runs, with medians within
// kJoinTolerance and a flat union, are one interrupted by noise.
#include <algorithm>
#include <cmath>
#include <string>

#include "calibrate/memory_levels.hpp"
#include "common/stages.hpp"
#include "common/statistics.hpp"

namespace hwprof::calibration {
namespace {

constexpr double kJoinTolerance = 0.10;
constexpr double kFlatTolerance = 0.15;
constexpr double kEdgeTolerance = 0.05;
constexpr std::size_t kMinPoints = 3;

bool within(double value, double reference, double tolerance) {
  return std::abs(value - reference) <= tolerance * std::abs(reference);
}

// A run of consecutive points, by index into the sorted curve (for merged runs, the points
// of both halves; the outliers between them are left out).
struct Run {
  std::vector<std::size_t> points;
  std::vector<double> values;
  double median = 0.0;
  double before = NAN;  // the value of the curve's point just before the run, if any
  double after = NAN;   // and just after it
};

std::vector<Run> segment(const std::vector<std::pair<std::int64_t, double>>& curve) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double v = curve[i].second;
    if (runs.empty() || !within(v, runs.back().median, kJoinTolerance)) {
      if (!runs.empty()) runs.back().after = v;
      runs.emplace_back().before = i > 0 ? curve[i - 1].second : NAN;
    }
    Run& run = runs.back();
    run.points.push_back(i);
    run.values.push_back(v);
    run.median = median_of(run.values);
  }
  return runs;
}

// Drops end points that stray more than kEdgeTolerance from the run's median towards the
// neighbouring point's value (the start of a transition, not noise), the worse end first, as
// long as kMinPoints remain.
void trim_edges(Run& run) {
  const auto towards = [](double value, double median, double neighbour) {
    return !std::isnan(neighbour) && (value - median) * (neighbour - median) > 0.0 ? std::abs(value - median) : 0.0;
  };
  while (run.points.size() > kMinPoints) {
    const double front = towards(run.values.front(), run.median, run.before);
    const double back = towards(run.values.back(), run.median, run.after);
    if (std::max(front, back) <= kEdgeTolerance * run.median) return;
    const bool at_front = front > back;
    run.points.erase(at_front ? run.points.begin() : run.points.end() - 1);
    run.values.erase(at_front ? run.values.begin() : run.values.end() - 1);
    run.median = median_of(run.values);
  }
}

// A run that makes a plateau after trimming: long enough, and flat.
bool plateau_after_trimming(Run& run) {
  if (run.points.size() < kMinPoints) return false;
  trim_edges(run);
  const auto [low, high] = std::minmax_element(run.values.begin(), run.values.end());
  return *high - *low <= kFlatTolerance * run.median;
}

// The plateaus among the runs. A run separated from the previous plateau by short runs only
// (outliers, or nothing) joins it when their medians agree and the union is still flat.
std::vector<Run> plateaus_among(std::vector<Run> runs) {
  std::vector<Run> found;
  bool only_short_since_last = false;
  for (Run& run : runs) {
    if (run.points.size() < kMinPoints) continue;
    const Run whole = run;
    const bool alone = plateau_after_trimming(run);
    if (only_short_since_last && within(run.median, found.back().median, kJoinTolerance)) {
      Run merged = found.back();
      merged.points.insert(merged.points.end(), whole.points.begin(), whole.points.end());
      merged.values.insert(merged.values.end(), whole.values.begin(), whole.values.end());
      merged.median = median_of(merged.values);
      merged.after = whole.after;
      if (plateau_after_trimming(merged)) {
        found.back() = std::move(merged);
        continue;
      }
    }
    if (alone) found.push_back(std::move(run));
    only_short_since_last = alone;
  }
  return found;
}

}  // namespace

std::vector<FlatRun> flat_runs(const std::vector<std::pair<std::int64_t, double>>& sorted_curve) {
  std::vector<FlatRun> out;
  for (const Run& run : plateaus_among(segment(sorted_curve))) {
    FlatRun f;
    f.points = run.points;
    f.median = run.median;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace hwprof::calibration
