#include "analyze/merge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "analyze/layer_view.hpp"
#include "analyze/run_ceilings.hpp"
#include "common/stages.hpp"
#include "common/statistics.hpp"
#include "hwprof/engine/roofline.hpp"
#include "hwprof/statistics.hpp"
#include "placement/rate_guard.hpp"

namespace hwprof::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What a rank spent in a layer or region: summed over its threads' rows where the profile has
// them (every call, the dropped samples included), else its time over its calls where it says
// them (a program's row), else mean per call × calls.
struct RankSpent {
  double ms = 0;
  double calls = 0;
};
RankSpent rank_spent(const Profile& p, const LayerProfile& l) {
  RankSpent s;
  bool found = false;
  const std::string region = region_name_of(p, l);
  for (const RegionThreadRow& r : p.region_threads) {
    if (r.region != region) continue;
    s.ms += r.inclusive_ms;
    s.calls += static_cast<double>(r.calls);
    found = true;
  }
  if (l.calls > 0) return {l.total_ms, static_cast<double>(l.calls)};  // a program's row: every call, however it was entered
  if (found) return s;
  // A layer's kept samples are its calls.
  return {l.time_ms.mean * static_cast<double>(l.time_ms.n), static_cast<double>(l.time_ms.n)};
}

// The ranks must be of one run: each rank once, one size, and either all ranked or none (an
// unranked profile is counted by its place, which would collide with a ranked one).
std::optional<std::string> rank_fields_problem(const std::vector<RankProfile>& ranks) {
  const RankProfile* ranked = nullptr;
  const RankProfile* unranked = nullptr;
  std::map<int, const RankProfile*> seen;
  for (const RankProfile& r : ranks) {
    const Profile& p = r.profile;
    if (p.rank < 0) {
      unranked = &r;
      continue;
    }
    if (ranked != nullptr && p.rank_count != ranked->profile.rank_count) {
      return fmt::format("{}: /rank/size says {} ranks, {} says {}: merge the folders of one run only", r.file, p.rank_count, ranked->file,
                         ranked->profile.rank_count);
    }
    ranked = &r;
    const auto [it, fresh] = seen.emplace(p.rank, &r);
    if (!fresh) return fmt::format("{} and {} are both rank {}: merge the folders of one run only", it->second->file, r.file, p.rank);
  }
  if (ranked != nullptr && unranked != nullptr) {
    return fmt::format("{}: /rank is null (not launched by mpirun, srun or torchrun) while {} is rank {} of {}: merge the profiles of one run only",
                       unranked->file, ranked->file, ranked->profile.rank, ranked->profile.rank_count);
  }
  return std::nullopt;
}

// A rank's time in a layer (or its total) that no run can take: refused, so that sums and
// means over the ranks stay finite (1e308 ms × 5 calls is not a time, and would print −inf%).
std::optional<std::string> time_problem(const RankProfile& r) {
  auto check = [&](const std::string& at, const std::string& name, double ms) -> std::optional<std::string> {
    if (std::isfinite(ms) && ms >= 0 && ms <= kMaxRankMs) return std::nullopt;
    return fmt::format("{}: {} ({}): {:.6g} ms in all is not a time a rank can spend (at most {:g} ms): a damaged profile", r.file, at, name, ms,
                       kMaxRankMs);
  };
  const Profile& p = r.profile;
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    if (auto problem = check(fmt::format("/layers/{}", i), display_name(p.layers[i]), rank_spent(p, p.layers[i]).ms)) return problem;
  }
  return check("/total", "the total", p.total.time_ms.mean * static_cast<double>(p.total.time_ms.n));
}

// "rank 3", "ranks 1-9999999, 10000001": the ranks below `size` not in `present` (sorted), as
// ranges, at most kMaxRanges of them; `count` gets how many ranks they hold.
std::string missing_ranges(const std::vector<int>& present, int size, long long& count) {
  constexpr std::size_t kMaxRanges = 20;
  std::vector<std::pair<int, int>> ranges;
  count = 0;
  int next = 0;
  auto gap = [&](int upto) {
    if (upto <= next) return;
    count += upto - next;
    ranges.emplace_back(next, upto - 1);
  };
  for (int r : present) {
    if (r >= size) break;
    gap(r);
    next = std::max(next, r + 1);
  }
  gap(size);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < ranges.size() && i < kMaxRanges; ++i) {
    const auto [lo, hi] = ranges[i];
    parts.push_back(lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
  }
  std::string text = fmt::format("{} {}", count == 1 ? "rank" : "ranks", fmt::join(parts, ", "));
  if (ranges.size() > kMaxRanges) text += fmt::format(" and {} more ranges", ranges.size() - kMaxRanges);
  return text;
}

// Which ranks the launcher said there were, and which of them are here: the missing ones as
// ranges (a size of 10^7 with one rank here is one line, not 10^7), with the folders that hold
// no profile.
void missing_ranks_warning(MergedRanks& m, const std::vector<std::string>& empty_folders) {
  int declared = 0;
  std::vector<int> present;
  for (const MergedRankInfo& r : m.ranks) {
    declared = std::max(declared, r.size);
    if (r.rank >= 0) present.push_back(r.rank);
  }
  std::sort(present.begin(), present.end());
  long long count = 0;
  const std::string ranges = missing_ranges(present, declared, count);
  std::string folders;
  if (!empty_folders.empty()) {
    const std::size_t shown = std::min<std::size_t>(empty_folders.size(), 5);
    folders = fmt::format(
        "; {} hold{} no profile.json: {}{}", empty_folders.size() == 1 ? "a rank folder" : std::to_string(empty_folders.size()) + " rank folders",
        empty_folders.size() == 1 ? "s" : "", fmt::join(empty_folders.begin(), empty_folders.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
        empty_folders.size() > shown ? fmt::format(" and {} more", empty_folders.size() - shown) : "");
  }
  if (count > 0) {
    m.warnings.push_back(fmt::format("{} of {} ranks are here; missing: {}{}{} (did they crash before exit, or write elsewhere?)", m.ranks.size(),
                                     declared, ranges, count > 1 ? fmt::format(" ({} ranks)", count) : "", folders));
  } else if (!folders.empty()) {
    m.warnings.push_back(folders.substr(2));
  }
}

}  // namespace

std::optional<std::string> rank_set_problem(const std::vector<RankProfile>& ranks) {
  if (auto problem = rank_fields_problem(ranks)) return problem;
  for (const RankProfile& r : ranks) {
    if (auto problem = time_problem(r)) return problem;
  }
  return std::nullopt;
}

std::optional<double> rank_gflops(const MergedRegion& r, std::size_t k) {
  if (!r.flops_per_call || *r.flops_per_call <= 0 || !std::isfinite(r.rank_ms[k]) || r.rank_ms[k] <= 0) return std::nullopt;
  if (k >= r.rank_calls.size() || !std::isfinite(r.rank_calls[k])) return std::nullopt;
  return *r.flops_per_call * r.rank_calls[k] / (r.rank_ms[k] * 1e-3) / 1e9;
}

RankRates rank_rates(const MergedRegion& r) {
  RankRates out;
  for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
    if (const auto g = rank_gflops(r, k); g && *g > 0) out.by_rate.emplace_back(*g, k);
  }
  if (out.by_rate.empty()) return out;
  std::sort(out.by_rate.begin(), out.by_rate.end());
  std::vector<double> sorted;
  for (const auto& point : out.by_rate) sorted.push_back(point.first);
  out.median = percentile_sorted(sorted.data(), sorted.size(), 50.0);
  return out;
}

void summarize_merged_region(MergedRegion& r) {
  std::vector<double> present;
  for (double v : r.rank_ms) {
    if (std::isfinite(v)) present.push_back(v);
  }
  r.missing = static_cast<int>(r.rank_ms.size() - present.size());
  r.straggler = -1;
  if (present.empty()) return;
  const Summary s = summarize(present);
  r.min_ms = s.min;
  r.median_ms = s.median;
  r.mean_ms = s.mean;
  r.max_ms = s.max;
  r.imbalance = rank_imbalance(s.max, s.mean);
  double best = -1;
  for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
    if (std::isfinite(r.rank_ms[k]) && r.rank_ms[k] > best) {
      best = r.rank_ms[k];
      r.straggler = static_cast<int>(k);
    }
  }
}

void sort_merged_regions(MergedRanks& m) {
  std::stable_sort(m.regions.begin(), m.regions.end(),
                   [](const MergedRegion& a, const MergedRegion& b) { return a.max_ms != b.max_ms ? a.max_ms > b.max_ms : a.name < b.name; });
}

MergedCeilings merged_ceilings(const CalibrationRun& run, const std::string& source) {
  MergedCeilings c;
  c.source = source;
  const DrawnCeilings drawn = ceilings_of(run, true);
  for (const DrawnRoof& r : drawn.roofs) c.compute_gflops.push_back({r.label, r.gflops});
  for (const MemorySlope& s : drawn.slopes) c.memory_gbps.push_back({s.label, s.gbps});
  return c;
}

MergedRanks merge_ranks(std::vector<RankProfile> ranks, const std::vector<std::string>& empty_folders) {
  MergedRanks m;
  m.made_by = "hwprof merge";
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankProfile& a, const RankProfile& b) { return a.profile.rank < b.profile.rank; });
  const std::size_t n = ranks.size();
  for (const RankProfile& r : ranks) {
    const Profile& p = r.profile;
    m.ranks.push_back({p.rank, p.rank_count, r.file, p.machine.host, p.machine.cpu.brand, p.model, p.threads});
  }
  missing_ranks_warning(m, empty_folders);
  for (const MergedRankInfo& r : m.ranks) {
    if (r.rank < 0) m.warnings.push_back(r.file + " says no rank (not launched by mpirun, srun or torchrun): counted by its place");
    if (r.model != m.ranks.front().model) {
      m.warnings.push_back(
          fmt::format("{} profiles '{}', {} profiles '{}': not one run", m.ranks.front().file, m.ranks.front().model, r.file, r.model));
    }
  }
  // Regions by name, in the order they first appear.
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < n; ++k) {
    const Profile& p = ranks[k].profile;
    for (const LayerProfile& l : p.layers) {
      const std::string name = display_name(l);
      auto [it, fresh] = index.emplace(name, m.regions.size());
      if (fresh) {
        MergedRegion r;
        r.name = name;
        r.rank_ms.assign(n, kNaN);
        r.rank_calls.assign(n, kNaN);
        m.regions.push_back(std::move(r));
      }
      MergedRegion& r = m.regions[it->second];
      if (l.impossible && r.impossible_reason.empty())
        r.impossible_reason = fmt::format("rank {}'s profile: {}", rank_number(m.ranks, k), l.impossible_reason);
      const RankSpent spent = rank_spent(p, l);
      r.rank_ms[k] = spent.ms;
      r.rank_calls[k] = spent.calls;
      const LayerNumbers numbers = layer_numbers(l);
      if (!r.flops_per_call && numbers.flops.value > 0) r.flops_per_call = numbers.flops.value;
      if (!r.bytes_per_call && numbers.bytes.value > 0) r.bytes_per_call = numbers.bytes.value;
    }
  }
  m.total.name = "total";
  m.total.rank_ms.resize(n);
  m.total.rank_calls.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const LayerProfile& t = ranks[k].profile.total;
    m.total.rank_ms[k] = t.time_ms.mean * static_cast<double>(t.time_ms.n);
    m.total.rank_calls[k] = static_cast<double>(t.time_ms.n);
  }
  summarize_merged_region(m.total);
  for (MergedRegion& r : m.regions) summarize_merged_region(r);
  sort_merged_regions(m);
  for (std::size_t k = 0; k < n; ++k) {
    const ProfileMachine& machine = ranks[k].profile.machine;
    if (!machine.ceilings) continue;
    m.ceilings = merged_ceilings(*machine.ceilings, fmt::format("rank {}'s calibration ({})", rank_number(m.ranks, k),
                                                                machine.calibration_file.empty() ? "stored" : machine.calibration_file));
    break;
  }
  guard_merged_rates(m);
  return m;
}

int guard_merged_rates(MergedRanks& m) {
  double most = 0.0;
  for (const MergedCeiling& c : m.ceilings.compute_gflops) most = std::max(most, c.value);
  const double limit = most * kClockSlack;
  std::vector<std::string> names;
  for (MergedRegion& r : m.regions) {
    for (std::size_t k = 0; k < r.rank_ms.size() && r.impossible_reason.empty() && limit > 0; ++k) {
      const auto g = rank_gflops(r, k);
      if (!g || *g <= limit) continue;
      r.impossible_reason = fmt::format(
          "rank {} ran it at {:.4g} GFLOP/s ({:.4g} FLOPs per call x {:.0f} calls in {:.4g} ms), above the most its machine can do "
          "({:.4g} GFLOP/s: the largest measured compute ceiling x{:.2f}): its count or its calls are wrong",
          rank_number(m.ranks, k), *g, r.flops_per_call.value_or(0.0), r.rank_calls[k], r.rank_ms[k], limit, kClockSlack);
    }
    if (!r.impossible_reason.empty()) names.push_back(r.name);
  }
  if (!names.empty()) {
    std::string list;
    for (std::size_t i = 0; i < names.size() && i < 4; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 4) list += fmt::format(" and {} more", names.size() - 4);
    m.warnings.push_back(fmt::format("{} region{} with an impossible rate on some rank, not drawn on the roofline: {} (each says why)", names.size(),
                                     names.size() == 1 ? "" : "s", list));
  }
  return static_cast<int>(names.size());
}

}  // namespace hwprof::analysis
