// Plateaus of a bandwidth-versus-working-set curve, named by the memory level they sit in.
//
// Walking the points in order of size, a point joins the current run when it lies within
// kJoinTolerance of the run's median (a median, so one noisy point cannot drag the run along),
// and starts a new run otherwise. Runs shorter than kMinPoints are transitions between levels,
// or outliers. A long run loses its end points while they lie more than kEdgeTolerance from
// its median towards the neighbouring level (the start of a transition: a working set partly
// in the next level, which would otherwise lift a lower level's best value), and is a plateau
// when what remains spans at most kFlatTolerance of its median, so a slope of 7 % per point
// or more never is. Two plateaus separated only by short runs, with medians within
// kJoinTolerance and a flat union, are one interrupted by noise. A plateau's points are then
// split by the memory levels' bands of sizes (see bands_of); the points in one band, if still
// kMinPoints or more, are that level's plateau. Where two fall in one level, the one with more
// points (then the flatter) stands for it.
#include <algorithm>
#include <cmath>
#include <string>

#include "calibrate/bandwidth.hpp"

namespace hwprof::detail {
namespace {

constexpr double kJoinTolerance = 0.10;
constexpr double kFlatTolerance = 0.15;
constexpr double kEdgeTolerance = 0.05;
constexpr std::size_t kMinPoints = 3;

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

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

// The memory levels' bands of working-set sizes: cache level i holds (size of level i - 1,
// size of level i]; DRAM starts at kDramFromLlc times the last level, because a victim or
// non-inclusive last-level cache with adaptive replacement still serves part of a working set
// larger than itself, and a guest may see less L3 than its vCPUs really share (a VM's 2 vCPUs
// on two CCDs report one 32 MiB L3 but use two): at twice the LLC, measured "DRAM" bandwidth
// on such a guest came out 2-3× likwid-bench's at 4× (1 % less, for the sweep's rounding to
// whole blocks). The sweep reaches at least 4× the LLC, so DRAM always has points.
constexpr double kDramFromLlc = 4.0;

struct Band {
  std::string level;
  double from = 0.0;  // exclusive
  double to = 0.0;    // inclusive
};

std::vector<Band> bands_of(const std::vector<std::int64_t>& caches) {
  std::vector<Band> bands;
  double lower = 0.0;
  for (std::size_t i = 0; i < caches.size(); ++i) {
    bands.push_back({"l" + std::to_string(i + 1), lower, static_cast<double>(caches[i])});
    lower = static_cast<double>(caches[i]);
  }
  bands.push_back({"dram", caches.empty() ? 0.0 : 0.99 * kDramFromLlc * lower - 1.0, HUGE_VAL});
  return bands;
}

// Cleaned curve and cache sizes, as both entry points see them.
std::vector<std::pair<std::int64_t, double>> valid_points(const std::vector<std::pair<std::int64_t, double>>& curve) {
  std::vector<std::pair<std::int64_t, double>> points;
  for (const auto& p : curve) {
    if (p.first > 0 && std::isfinite(p.second) && p.second > 0.0) points.push_back(p);
  }
  std::sort(points.begin(), points.end());
  return points;
}

std::vector<std::int64_t> valid_caches(const std::vector<std::int64_t>& cache_bytes_per_level) {
  std::vector<std::int64_t> caches;
  for (std::int64_t c : cache_bytes_per_level) {
    if (c > 0) caches.push_back(c);
  }
  std::sort(caches.begin(), caches.end());
  return caches;
}

void sort_by_size(std::vector<Plateau>& plateaus) {
  std::sort(plateaus.begin(), plateaus.end(), [](const Plateau& x, const Plateau& y) { return x.from_bytes < y.from_bytes; });
}

// The inner part of a band, where a working set sits wholly in that level: for a cache, from
// twice the level below (its transition is over) to three quarters of its own size (before
// the next one starts); DRAM's band already begins past the last cache's reach.
constexpr double kInnerFromBelow = 2.0;
constexpr double kInnerToSize = 0.75;

// A level's ceiling from its points (sizes ascending, values in the same order; not empty).
Plateau plateau_of(const std::string& level, const std::vector<std::int64_t>& sizes, const std::vector<double>& values,
                   bool flat) {
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  Plateau p;
  p.level = level;
  p.from_bytes = sizes.front();
  p.to_bytes = sizes.back();
  p.best_gbps = *high;
  p.median_gbps = median_of(values);
  p.spread = (*high - *low) / p.median_gbps;
  p.points = static_cast<int>(values.size());
  p.flat = flat;
  return p;
}

}  // namespace

std::vector<Plateau> with_band_fallbacks(std::vector<Plateau> found,
                                         const std::vector<std::pair<std::int64_t, double>>& curve,
                                         const std::vector<std::int64_t>& cache_bytes_per_level) {
  const auto points = valid_points(curve);
  for (const Band& band : bands_of(valid_caches(cache_bytes_per_level))) {
    if (std::any_of(found.begin(), found.end(), [&](const Plateau& p) { return p.level == band.level; })) continue;
    const bool dram = band.level == "dram";
    const double from = dram ? band.from : kInnerFromBelow * band.from;
    const double to = dram ? band.to : kInnerToSize * band.to;
    std::vector<std::int64_t> sizes;
    std::vector<double> values;
    for (const auto& [size, gbps] : points) {
      if (static_cast<double>(size) > from && static_cast<double>(size) <= to) {
        sizes.push_back(size);
        values.push_back(gbps);
      }
    }
    if (values.empty()) continue;
    found.push_back(plateau_of(band.level, sizes, values, /*flat=*/false));
  }
  sort_by_size(found);
  return found;
}

std::vector<Plateau> find_plateaus(const std::vector<std::pair<std::int64_t, double>>& curve,
                                   const std::vector<std::int64_t>& cache_bytes_per_level) {
  const auto points = valid_points(curve);
  const auto caches = valid_caches(cache_bytes_per_level);

  // A plateau's points within one level's band, if enough, stand for that level; points
  // between bands (just past the last cache) stand for none.
  std::vector<Plateau> plateaus;
  for (const Run& run : plateaus_among(segment(points))) {
    for (const Band& band : bands_of(caches)) {
      std::vector<std::int64_t> sizes;
      std::vector<double> values;
      for (std::size_t k = 0; k < run.points.size(); ++k) {
        const auto size = static_cast<double>(points[run.points[k]].first);
        if (size > band.from && size <= band.to) {
          sizes.push_back(points[run.points[k]].first);
          values.push_back(run.values[k]);
        }
      }
      if (values.size() < kMinPoints) continue;
      Plateau p = plateau_of(band.level, sizes, values, /*flat=*/true);
      // One plateau per level: the better supported (more points, then flatter) wins.
      auto same = std::find_if(plateaus.begin(), plateaus.end(), [&](const Plateau& q) { return q.level == p.level; });
      if (same == plateaus.end()) {
        plateaus.push_back(std::move(p));
      } else if (p.points > same->points || (p.points == same->points && p.spread < same->spread)) {
        *same = std::move(p);
      }
    }
  }
  // In order of size, as the levels are.
  sort_by_size(plateaus);
  return plateaus;
}

}  // namespace hwprof::detail
