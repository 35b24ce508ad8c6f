// `hwprof compare A B` as a table for a terminal: the model total, the counts by verdict, the
// differences between the runs, then the layers, the significant changes first.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "report/compare.hpp"
#include "report/compare_text.hpp"

namespace hwprof::report {

std::string comparison_table(const ProfileComparison& c, std::size_t top) {
  std::string out = fmt::format("hwprof compare: A = {}, B = {}\n", c.a_label, c.b_label);
  const LayerChange& t = c.total;
  out += fmt::format("{}: {:.4g} ms -> {:.4g} ms ({}), {}{}\n", total_title(t.name), t.median_a_ms, t.median_b_ms, percent_change(t.change),
                     verdict_name(t.verdict), t.p_value ? fmt::format(" (Mann-Whitney p = {})", p_text(t.p_value)) : "");
  if (!t.note.empty()) out += "  " + t.note + "\n";
  std::size_t faster = 0;
  std::size_t slower = 0;
  std::size_t few = 0;
  std::vector<const LayerChange*> inconsistent;
  for (const LayerChange& l : c.layers) {
    faster += l.verdict == Verdict::faster;
    slower += l.verdict == Verdict::slower;
    few += l.verdict == Verdict::too_few_samples;
    if (l.verdict == Verdict::inconsistent) inconsistent.push_back(&l);
  }
  out += fmt::format("Layers: {} matched: {} faster, {} slower, {} no significant change{}{} (Holm-adjusted p < {} across the layers)\n",
                     c.layers.size(), faster, slower, c.layers.size() - faster - slower - few - inconsistent.size(),
                     few > 0 ? fmt::format(", {} with too few samples to tell", few) : "",
                     inconsistent.empty() ? "" : fmt::format(", {} with samples inconsistent", inconsistent.size()), c.alpha);
  for (std::size_t i = 0; i < inconsistent.size() && i < 10; ++i) out += "WARNING: " + inconsistent[i]->name + ": " + inconsistent[i]->note + "\n";
  if (inconsistent.size() > 10) out += fmt::format("WARNING: ... and {} more layers with samples inconsistent\n", inconsistent.size() - 10);
  for (const std::string& d : c.differences) out += "NOTE: the runs differ: " + d + "\n";
  if (!c.only_in_a.empty()) out += fmt::format("Only in A ({}): {}\n", c.only_in_a.size(), fmt::join(c.only_in_a, ", "));
  if (!c.only_in_b.empty()) out += fmt::format("Only in B ({}): {}\n", c.only_in_b.size(), fmt::join(c.only_in_b, ", "));

  // The significant changes first, largest in milliseconds first; then the rest by size.
  std::vector<const LayerChange*> rows;
  for (const LayerChange& l : c.layers) rows.push_back(&l);
  std::stable_sort(rows.begin(), rows.end(), [](const LayerChange* x, const LayerChange* y) {
    const bool xs = x->verdict == Verdict::faster || x->verdict == Verdict::slower;
    const bool ys = y->verdict == Verdict::faster || y->verdict == Verdict::slower;
    if (xs != ys) return xs;
    return std::abs(x->median_b_ms - x->median_a_ms) > std::abs(y->median_b_ms - y->median_a_ms);
  });
  const std::size_t shown = top == 0 ? rows.size() : std::min(top, rows.size());
  std::size_t width = 5;
  for (std::size_t i = 0; i < shown; ++i) width = std::max(width, rows[i]->name.size());
  out += fmt::format("\n{:<{}}  {:>10}  {:>10}  {:>8}  {:>9}  {:>8}  {:>8}  {:<20}  {}\n", "Layer", width, "A ms", "B ms", "Change", "p (Holm)",
                     "Eff. A", "Eff. B", "Bound A -> B", "Verdict");
  for (std::size_t i = 0; i < shown; ++i) {
    const LayerChange& l = *rows[i];
    const std::string bound = l.bound_a == l.bound_b ? l.bound_a : l.bound_a + " -> " + l.bound_b;
    out += fmt::format("{:<{}}  {:>10.4g}  {:>10.4g}  {:>8}  {:>9}  {:>8}  {:>8}  {:<20}  {}\n", l.name, width, l.median_a_ms, l.median_b_ms,
                       percent_change(l.change), p_text(l.p_adjusted), efficiency_text(l.efficiency_a), efficiency_text(l.efficiency_b), bound,
                       verdict_name(l.verdict));
  }
  if (shown < rows.size()) out += fmt::format("... {} more layers; --all shows every row\n", rows.size() - shown);
  out +=
      "\nChange = B's median / A's - 1. p: Mann-Whitney U on the kept per-call times (exact without ties up to 50 samples "
      "each), Holm-adjusted across the layers; the model total is tested alone.\n";
  return out;
}

}  // namespace hwprof::report
