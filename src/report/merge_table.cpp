// `hwprof merge` as a table for a terminal: the total per rank, the warnings, the ranks, then
// the regions by their slowest rank.
#include <algorithm>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "report/merge.hpp"

namespace hwprof::report {

std::string merged_table(const MergedRanks& m, std::size_t top) {
  const std::size_t n = m.ranks.size();
  std::string out = fmt::format("{}: {} rank{} of '{}'\n", m.made_by, n, n == 1 ? "" : "s", n > 0 ? m.ranks.front().model : "");
  const MergedRegion& t = m.total;
  if (t.straggler >= 0) {
    out += fmt::format("Total per rank: min {:.4g} ms, median {:.4g} ms, max {:.4g} ms (rank {}): imbalance {:.1f}%\n", t.min_ms, t.median_ms,
                       t.max_ms, straggler_text(m, t), 100 * t.imbalance);
  }
  for (const std::string& w : m.warnings) out += "WARNING: " + w + "\n";
  out += "\nRanks\n";
  for (std::size_t k = 0; k < n; ++k) {
    const MergedRankInfo& r = m.ranks[k];
    out += fmt::format("  rank {:>5}  {:<20} {} ({} thread{}){}\n", rank_number(m.ranks, k), r.host.empty() ? "-" : r.host,
                       r.cpu.empty() ? "-" : r.cpu, r.threads, r.threads == 1 ? "" : "s", r.file.empty() ? "" : "  " + r.file);
  }
  std::size_t width = 6;
  const std::size_t shown = top == 0 ? m.regions.size() : std::min(top, m.regions.size());
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, m.regions[i].name.size());
  out += fmt::format("\n{:<{}}  {:>11}  {:>11}  {:>11}  {:>10}  {:>9}  {}\n", "Region", width, "min ms", "median ms", "max ms", "imbalance",
                     "straggler", "missing");
  for (std::size_t i = 0; i < shown; ++i) {
    const MergedRegion& r = m.regions[i];
    out += fmt::format("{:<{}}  {:>11.4g}  {:>11.4g}  {:>11.4g}  {:>9.1f}%  {:>9}  {}\n", r.name, width, r.min_ms, r.median_ms, r.max_ms,
                       100 * r.imbalance, straggler_text(m, r), r.missing > 0 ? fmt::format("{} rank{}", r.missing, r.missing == 1 ? "" : "s") : "");
  }
  if (shown < m.regions.size()) out += fmt::format("... {} more regions; --all shows every row\n", m.regions.size() - shown);
  for (std::size_t i = 0; i < shown; ++i) {
    if (!m.regions[i].impossible_reason.empty()) out += fmt::format("impossible rate: {}: {}\n", m.regions[i].name, m.regions[i].impossible_reason);
  }
  out +=
      "\nPer rank, a region's time is all the time the rank spent in it (every call, every thread). Imbalance = (max - mean) / max "
      "across the ranks: the share of the slowest rank's time the average rank waits.\n";
  return out;
}

}  // namespace hwprof::report
