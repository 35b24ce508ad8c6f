// Levels from the sweep (memory_levels.hpp). In order:
//   1. the curve, each point the median of itself and its neighbours; its plateaus
//      (flat_runs), joined while no drop of kKneeDrop separates them: each group is one level;
//   2. the flat tail: the longest suffix within kTailTolerance of its median; groups that
//      reach into it are the tail's own level, the ones before it are caches (at most three:
//      the two with the smallest drop between them are joined until three remain);
//   3. a knee between consecutive levels, where the curve crosses the geometric mean of their
//      medians (interpolated in log size and log bandwidth): there the upper level ends;
//   4. names: in order when the sources report as many levels as the sweep shows, else each
//      knee takes the reported level nearest to it in log size (keeping their order); a
//      reported level with no knee is kept from the points inside its reported band, marked
//      not flat; where a knee and its reported size differ by more than 2x, a note says so;
//   5. DRAM: the tail's points above the last knee and above the largest cache any source
//      reports — at least kTailPoints of them (DRAM is measured at the largest kTailPoints),
//      else the sweep should go on (extend_to), and the best that could be had is marked
//      not flat.
#include "calibrate/memory_levels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "common/statistics.hpp"
#include "machine/cache_topology.hpp"

namespace hwprof::calibration {
namespace {

Curve valid_sorted(const Curve& curve) {
  Curve points;
  for (const auto& p : curve) {
    if (p.first > 0 && std::isfinite(p.second) && p.second > 0.0) points.push_back(p);
  }
  std::sort(points.begin(), points.end());
  return points;
}

// Each value replaced by the median of itself and its two neighbours (the ends kept): one
// disturbed point, or the alternating ±10 % of a busy host, no longer splits a level or
// ends a tail, while a step stays where it was (a median filter keeps edges).
Curve median_of_three(const Curve& pts) {
  Curve smooth = pts;
  for (std::size_t i = 1; i + 1 < pts.size(); ++i) {
    smooth[i].second = median_of({pts[i - 1].second, pts[i].second, pts[i + 1].second});
  }
  return smooth;
}

// One level: plateau points of one or more flat runs with no knee between them.
struct Group {
  std::vector<std::size_t> points;
  double median = 0.0;
  std::int64_t knee = 0;  // where it ends (0: no lower level follows in the sweep)
};

double median_at(const Curve& pts, const std::vector<std::size_t>& indices) {
  std::vector<double> values;
  for (std::size_t i : indices) values.push_back(pts[i].second);
  return median_of(values);
}

std::vector<Group> groups_of(const Curve& pts, const std::vector<FlatRun>& runs) {
  std::vector<Group> groups;
  for (const FlatRun& run : runs) {
    if (!groups.empty() && run.median >= (1.0 - kKneeDrop) * groups.back().median) {
      Group& g = groups.back();
      g.points.insert(g.points.end(), run.points.begin(), run.points.end());
      g.median = median_at(pts, g.points);
      continue;
    }
    groups.push_back({run.points, run.median, 0});
  }
  return groups;
}

// The longest suffix whose points lie within kTailTolerance of its median: its first index
// (pts.size() when even the last point stands alone).
std::size_t tail_start(const Curve& pts) {
  std::size_t start = pts.size();
  std::vector<double> values;
  for (std::size_t i = pts.size(); i-- > 0;) {
    values.push_back(pts[i].second);
    const double m = median_of(values);
    const bool flat = std::all_of(values.begin(), values.end(), [&](double v) { return std::abs(v - m) <= kTailTolerance * m; });
    if (!flat) break;
    start = i;
  }
  return start;
}

// Where the curve between two levels crosses the geometric mean of their medians.
std::int64_t knee_between(const Curve& pts, std::size_t last_of_upper, std::size_t first_of_lower, double upper, double lower) {
  const double target = std::sqrt(upper * lower);
  for (std::size_t i = last_of_upper; i < first_of_lower && i + 1 < pts.size(); ++i) {
    const double a = pts[i].second;
    const double b = pts[i + 1].second;
    if (a >= target && b <= target) {
      const double t = a == b ? 0.5 : (std::log(a) - std::log(target)) / (std::log(a) - std::log(b));
      const double ls = std::log(static_cast<double>(pts[i].first));
      const double le = std::log(static_cast<double>(pts[i + 1].first));
      return std::llround(std::exp(ls + t * (le - ls)));
    }
  }
  return std::llround(std::sqrt(static_cast<double>(pts[last_of_upper].first) * static_cast<double>(pts[first_of_lower].first)));
}

// Joins the two adjacent groups with the smallest drop between them while more than `most`
// remain and that drop is under `below` (a level split by noise, not two levels).
void join_smallest_drops(const Curve& pts, std::vector<Group>& groups, std::size_t most, double below) {
  while (groups.size() > most) {
    std::size_t at = 0;
    double least = std::numeric_limits<double>::infinity();
    for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
      const double drop = groups[g].median / groups[g + 1].median;
      if (drop < least) {
        least = drop;
        at = g;
      }
    }
    if (least >= below) return;
    Group& a = groups[at];
    const Group& b = groups[at + 1];
    a.points.insert(a.points.end(), b.points.begin(), b.points.end());
    a.median = median_at(pts, a.points);
    a.knee = b.knee;
    groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
}

double log_distance(std::int64_t a, std::int64_t b) {
  return std::abs(std::log(static_cast<double>(a) / static_cast<double>(b)));
}

// For each group, the index of the reported level it is (increasing), chosen to put each
// group's end nearest its level's reported size. Groups without a knee are last and take the
// next levels in order.
std::vector<std::size_t> match_to_reported(const std::vector<Group>& groups, const std::vector<std::int64_t>& reported) {
  const std::size_t g_count = groups.size();
  const std::size_t r_count = reported.size();
  std::vector<std::size_t> best;
  double best_cost = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> pick(g_count);
  // Every increasing choice of g_count levels out of r_count (both at most 3 and 4).
  const auto search = [&](auto&& self, std::size_t g, std::size_t from, double cost) -> void {
    if (g == g_count) {
      if (cost < best_cost) {
        best_cost = cost;
        best = pick;
      }
      return;
    }
    for (std::size_t r = from; r + (g_count - g) <= r_count; ++r) {
      pick[g] = r;
      const double c = groups[g].knee > 0 && reported[r] > 0 ? log_distance(groups[g].knee, reported[r]) : 0.0;
      self(self, g + 1, r + 1, cost + c);
    }
  };
  search(search, 0, 0, 0.0);
  return best;
}

// Two groups whose medians differ by less than this, when there are too many, are one level
// split by noise.
constexpr double kNoiseSplit = 1.35;

std::string level_name(std::size_t index) {
  return "l" + std::to_string(index + 1);
}

std::string threads_words(int threads) {
  return threads == 1 ? "1 thread" : std::to_string(threads) + " threads";
}

std::string knee_disagreement(const DetectedLevel& level, const LevelEvidence& e) {
  const double ratio = static_cast<double>(level.capacity_bytes) / static_cast<double>(level.reported_bytes);
  if (ratio >= 0.5 && ratio <= 2.0) return "";
  std::string name = level.level;
  name[0] = 'L';
  return fmt::format("the sweep's {} knee for {} is at {}, {:.2g}x the {} {} reports for them{}; the level ends where the sweep says", name,
                     threads_words(e.threads), binary_size(level.capacity_bytes), ratio, binary_size(level.reported_bytes), e.reported_source,
                     ratio < 0.5 ? " (vCPUs that are hyperthreads of one host core share its caches, or a guest gets only part of a cache "
                                   "the hypervisor reports whole)"
                                 : " (a non-inclusive or victim cache also holds the levels inside it, or the workers span more "
                                   "instances than reported)");
}

// The curve cut into its cache levels and its tail: the groups before the tail are caches
// (all of them when the curve ends still falling), each with the knee where it ends.
struct CurveSplit {
  std::vector<Group> caches;
  std::size_t tail_from = 0;  // the strict tail's first point
  bool has_tail = false;
  double tail_median = 0.0;
  std::size_t tail_first = 0;  // the tail level's first plateau point
};

CurveSplit split_curve(const Curve& pts) {
  CurveSplit c;
  std::vector<Group> groups = groups_of(pts, flat_runs(pts));
  c.tail_from = tail_start(pts);
  c.has_tail = pts.size() - c.tail_from >= kTailPoints;
  c.tail_first = c.tail_from;
  if (c.has_tail) {
    std::vector<std::size_t> tail_points;
    for (std::size_t i = c.tail_from; i < pts.size(); ++i) tail_points.push_back(i);
    c.tail_median = median_at(pts, tail_points);
    for (const Group& g : groups) {
      const bool reaches_tail = g.points.back() >= c.tail_from;
      const bool no_knee_before_tail = g.median < c.tail_median / (1.0 - kKneeDrop);
      if (reaches_tail || no_knee_before_tail) {
        c.tail_first = std::min(c.tail_first, g.points.front());
      } else {
        c.caches.push_back(g);
      }
    }
  } else {
    c.caches = groups;
  }
  for (std::size_t g = 0; g < c.caches.size(); ++g) {
    const bool last = g + 1 == c.caches.size();
    if (last && !c.has_tail) break;
    const std::size_t next_first = last ? c.tail_first : c.caches[g + 1].points.front();
    const double next_median = last ? c.tail_median : c.caches[g + 1].median;
    c.caches[g].knee =
        knee_between(pts, c.caches[g].points.back(), std::max(next_first, c.caches[g].points.back() + 1), c.caches[g].median, next_median);
  }
  return c;
}

// More than three levels: noise splits (a small drop) are joined first; what still stands past
// the third is a level no source describes (a memory-side cache, another die's L3 seen
// through a VM): kept out of the names, and DRAM still starts past it.
void keep_three_cache_levels(const Curve& pts, std::vector<Group>& caches, const LevelEvidence& e, LevelDetection& d) {
  join_smallest_drops(pts, caches, 3, kNoiseSplit);
  for (const Group& g : caches) {
    if (g.knee > 0) d.knees.push_back(g.knee);
  }
  for (std::size_t g = 3; g < caches.size(); ++g) {
    const Group& extra = caches[g];
    d.notes.push_back(
        fmt::format("the sweep shows a further level past L3 for {}: {} to {} at about {:.3g} GB/s{}, which no "
                    "source describes (a memory-side cache, or a cache of another die seen through a VM): "
                    "counted as neither cache nor DRAM",
                    threads_words(e.threads), binary_size(pts[extra.points.front()].first), binary_size(pts[extra.points.back()].first), extra.median,
                    extra.knee > 0 ? ", ending at " + binary_size(extra.knee) : ""));
  }
  if (caches.size() > 3) caches.resize(3);
}

// The cache levels the sweep found, named, each with its end (its knee, else the reported
// size) and the reported size it is compared with. `named` marks the reported levels used;
// returns the largest end.
std::int64_t name_cache_levels(const Curve& pts, const std::vector<Group>& caches, const std::vector<std::int64_t>& reported, const LevelEvidence& e,
                               std::vector<bool>& named, LevelDetection& d) {
  std::vector<std::size_t> index(caches.size());
  for (std::size_t g = 0; g < caches.size(); ++g) index[g] = g;
  if (!reported.empty() && caches.size() < reported.size()) index = match_to_reported(caches, reported);
  if (!reported.empty() && caches.size() > reported.size()) {
    d.notes.push_back(fmt::format("the sweep shows {} cache levels for {}, {} describes {}: the levels are named in order", caches.size(),
                                  threads_words(e.threads), e.reported_source, reported.size()));
  }
  std::int64_t previous_end = 0;
  for (std::size_t g = 0; g < caches.size(); ++g) {
    DetectedLevel level;
    level.level = level_name(index[g]);
    for (std::size_t i : caches[g].points) level.sizes.push_back(pts[i].first);
    if (index[g] < reported.size()) {
      level.reported_bytes = reported[index[g]];
      named[index[g]] = true;
    }
    if (caches[g].knee > 0) {
      level.capacity_bytes = caches[g].knee;
      level.capacity_source = "sweep";
      if (level.reported_bytes > 0) level.note = knee_disagreement(level, e);
    } else if (level.reported_bytes > 0) {
      level.capacity_bytes = level.reported_bytes;
      level.capacity_source = e.reported_source;
      level.note = "the sweep ended before this level did: its end is the size " + e.reported_source + " reports";
    } else {
      level.note = "the sweep ended before this level did, and no source reports its size: its end is unknown";
    }
    d.levels.push_back(std::move(level));
    previous_end = std::max(previous_end, d.levels.back().capacity_bytes);
  }
  return previous_end;
}

// Reported levels the sweep shows no knee for: from the points well inside their band.
void add_levels_without_knee(const Curve& pts, const std::vector<std::int64_t>& reported, const std::vector<bool>& named, const LevelEvidence& e,
                             LevelDetection& d) {
  for (std::size_t r = 0; r < reported.size(); ++r) {
    if (named[r] || reported[r] <= 0) continue;
    const double below = r == 0 ? 0.0 : static_cast<double>(reported[r - 1]);
    DetectedLevel level;
    level.level = level_name(r);
    level.reported_bytes = reported[r];
    level.capacity_bytes = reported[r];
    level.capacity_source = e.reported_source;
    level.flat = false;
    for (const auto& [size, gbps] : pts) {
      const auto s = static_cast<double>(size);
      if (s > 2.0 * below && s <= 0.75 * static_cast<double>(reported[r])) level.sizes.push_back(size);
    }
    std::string name = level.level;
    name[0] = 'L';
    if (level.sizes.empty()) {
      d.notes.push_back(
          fmt::format("{} reports an {} of {} for {}, but the sweep shows no knee for it and has no point inside "
                      "its band: it is left out",
                      e.reported_source, name, binary_size(reported[r]), threads_words(e.threads)));
      continue;
    }
    level.note = fmt::format(
        "the sweep shows no knee for this level (its bandwidth is within {:.0f}% of the next one's): its end "
        "is the size {} reports, its ceiling the best point inside that band",
        100 * kKneeDrop, e.reported_source);
    d.levels.push_back(std::move(level));
  }
}

// A level found by the sweep may start below an inner level that ends at its reported size
// (no knee between them): its points up to that end are the inner level's. Without this, an
// L3 band from 6 KiB took an L1 point as its ceiling and came out faster than L2 (seen on a
// Zen 5 VM's quick calibration: L3 81.8 GB/s over L2's 76.6, refused).
void leave_inner_points_to_inner_levels(LevelDetection& d) {
  for (std::size_t k = 1; k < d.levels.size(); ++k) {
    const std::int64_t inner_end = d.levels[k - 1].capacity_bytes;
    if (inner_end <= 0) continue;
    std::vector<std::int64_t> outside;
    for (std::int64_t size : d.levels[k].sizes) {
      if (size > inner_end) outside.push_back(size);
    }
    if (!outside.empty() && outside.size() < d.levels[k].sizes.size()) d.levels[k].sizes = std::move(outside);
  }
}

// DRAM: the tail above every knee and every reported cache; where there is too little of it,
// the best that could be had, with how far a longer sweep should go.
void add_dram(const Curve& pts, const CurveSplit& c, std::int64_t previous_end, const LevelEvidence& e, LevelDetection& d) {
  const std::int64_t last_knee = d.knees.empty() ? 0 : d.knees.back();
  const std::int64_t floor = std::max(last_knee, e.largest_reported);
  DetectedLevel dram;
  dram.level = "dram";
  std::vector<std::int64_t> tail_below_floor;
  if (c.has_tail) {
    for (std::size_t i = c.tail_first; i < pts.size(); ++i) {
      if (pts[i].first > floor) {
        dram.sizes.push_back(pts[i].first);
      } else if (i >= c.tail_from) {
        tail_below_floor.push_back(pts[i].first);
      }
    }
    // Points of the tail's level before the strict tail sit on a slope still: not DRAM.
    dram.sizes.erase(std::remove_if(dram.sizes.begin(), dram.sizes.end(), [&](std::int64_t s) { return s < pts[c.tail_from].first; }),
                     dram.sizes.end());
  }
  d.dram_flat = dram.sizes.size() >= kTailPoints;
  if (d.dram_flat) dram.sizes.erase(dram.sizes.begin(), dram.sizes.end() - static_cast<std::ptrdiff_t>(kTailPoints));
  if (!tail_below_floor.empty() && e.largest_reported > last_knee) {
    d.notes.push_back(fmt::format(
        "{} sweep point{} from {} to {} lie past the last knee ({}) but not above the largest cache a source reports ({}, {}): "
        "counted as neither cache nor DRAM",
        tail_below_floor.size(), tail_below_floor.size() == 1 ? "" : "s", binary_size(tail_below_floor.front()), binary_size(tail_below_floor.back()),
        last_knee > 0 ? binary_size(last_knee) : std::string("none"), binary_size(e.largest_reported), e.largest_source));
  }
  if (!d.dram_flat) {
    const auto last = static_cast<double>(pts.back().first);
    d.extend_to = c.has_tail ? std::llround(std::max(2.0 * last, 2.9 * static_cast<double>(floor))) : std::llround(4.0 * last);
    // The best that could be had: the points above the floor, else the last ones.
    dram.flat = false;
    if (dram.sizes.empty()) {
      for (std::size_t i = pts.size() - std::min<std::size_t>(kTailPoints, pts.size()); i < pts.size(); ++i) {
        if (pts[i].first > previous_end) dram.sizes.push_back(pts[i].first);
      }
    }
    if (dram.sizes.empty()) return;
    dram.note = c.has_tail ? fmt::format(
                                 "fewer than {} points of the flat tail lie above {} (the last knee and the largest "
                                 "reported cache): DRAM may still be partly cache",
                                 kTailPoints, binary_size(floor))
                           : fmt::format(
                                 "no flat tail: bandwidth was still falling at {}, the end of the sweep: DRAM may be "
                                 "slower than this",
                                 binary_size(pts.back().first));
  }
  d.levels.push_back(std::move(dram));
}

}  // namespace

LevelDetection detect_levels(const Curve& curve, const LevelEvidence& e) {
  LevelDetection d;
  const Curve pts = median_of_three(valid_sorted(curve));
  if (pts.empty()) {
    d.notes.push_back("the sweep has no usable point");
    return d;
  }
  CurveSplit split = split_curve(pts);
  keep_three_cache_levels(pts, split.caches, e, d);
  // Names, and the reported sizes each level is compared with.
  std::vector<std::int64_t> reported;
  for (std::size_t i = 0; i < e.reported.size() && i < 3; ++i) reported.push_back(e.reported[i]);
  while (!reported.empty() && reported.back() <= 0) reported.pop_back();
  std::vector<bool> named(reported.size(), false);
  const std::int64_t previous_end = name_cache_levels(pts, split.caches, reported, e, named, d);
  add_levels_without_knee(pts, reported, named, e, d);
  std::sort(d.levels.begin(), d.levels.end(), [](const DetectedLevel& a, const DetectedLevel& b) { return a.level < b.level; });
  leave_inner_points_to_inner_levels(d);
  add_dram(pts, split, previous_end, e, d);
  return d;
}

}  // namespace hwprof::calibration
