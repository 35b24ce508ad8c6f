// `hwprof merge --html`: the per-rank view of every region, shaded by its share of the slowest
// rank's, and a roofline with the spread across the ranks.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analyze/merge.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/roofline.hpp"
#include "report/html_page.hpp"
#include "report/merge.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

// Beyond these, the HTML keeps the spread (min, median, max, straggler) and leaves each rank's
// own figure to merged.json: a table 10 000 columns wide helps no one.
constexpr std::size_t kMaxRankColumns = 64;
constexpr std::size_t kMaxRankPoints = 256;

std::string esc(std::string_view s) {
  return xml_escape(s);
}

// A cell's background: white at 0, deep orange at the row's max.
std::string heat(double share) {
  const double t = std::clamp(share, 0.0, 1.0);
  const int g = static_cast<int>(std::lround(255 - 120 * t));
  const int b = static_cast<int>(std::lround(255 - 200 * t));
  return fmt::format("#ff{:02x}{:02x}", g, b);
}

std::string merged_roofline_svg(const MergedRanks& m) {
  double x_lo = 1e30, x_hi = 0, y_lo = 1e30, y_hi = 0;
  for (const MergedRegion& r : m.regions) {
    if (!r.flops_per_call || !r.bytes_per_call || *r.bytes_per_call <= 0) continue;
    for (std::size_t k = 0; k < r.rank_ms.size(); ++k) {
      const auto g = rank_gflops(r, k);
      if (!g || *g <= 0) continue;
      const double x = *r.flops_per_call / *r.bytes_per_call;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      y_lo = std::min(y_lo, *g);
      y_hi = std::max(y_hi, *g);
    }
  }
  if (x_hi <= 0) {
    return "<p class=\"note\">No roofline: no region has both FLOPs and bytes per call (HWPROF_SCOPE_WORK gives a region its work).</p>\n";
  }
  DrawnCeilings ceilings;
  for (const MergedCeiling& c : m.ceilings.compute_gflops) ceilings.roofs.push_back({c.label, c.value, ceilings.roofs.empty() ? "" : "6 3"});
  static const char* const kSlopeColours[] = {"#1f77b4", "#2ca02c", "#9467bd", "#d62728", "#8c564b"};
  for (const MergedCeiling& c : m.ceilings.memory_gbps) {
    ceilings.slopes.push_back({c.label, c.value, kSlopeColours[std::min<std::size_t>(ceilings.slopes.size(), 4)]});
  }
  for (const DrawnRoof& r : ceilings.roofs) y_hi = std::max(y_hi, r.gflops);
  LogLogFrame frame;
  frame.left = 70;
  frame.top = 20;
  frame.width = 640;
  frame.height = 400;
  frame.x_min = std::pow(2.0, std::floor(std::log2(std::min(x_lo, 1.0 / 16))));
  frame.x_max = std::pow(2.0, std::ceil(std::log2(std::max(x_hi * 2, 64.0))));
  frame.y_min = std::pow(10.0, std::floor(std::log10(y_lo / 2)));
  frame.y_max = std::pow(10.0, std::ceil(std::log10(y_hi * 1.5)));
  std::string svg = svg_open(frame.left + frame.width + 230, frame.top + frame.height + 60, false);
  svg += svg_axes(frame, frame.bottom() + 40, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
  if (!ceilings.roofs.empty()) svg += svg_ceilings(frame, ceilings, ceilings.roofs.front().gflops, nullptr);
  for (const MergedRegion& r : m.regions) {
    if (!r.flops_per_call || !r.bytes_per_call || *r.bytes_per_call <= 0 || !r.impossible_reason.empty()) continue;
    const RankRates rates = rank_rates(r);
    const auto& points = rates.by_rate;
    if (points.empty()) continue;
    const double x = frame.px(*r.flops_per_call / *r.bytes_per_call);
    const double median = rates.median;
    svg += fmt::format("<g><title>{}: {} rank(s), {} to {} GFLOP/s (median {})</title>", esc(r.name), points.size(),
                       short_number(points.front().first), short_number(points.back().first), short_number(median));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#444\" stroke-width=\"2\"/>", x,
                       frame.py(points.front().first), frame.py(points.back().first));
    for (const auto& [g, k] : points) {
      if (points.size() > kMaxRankPoints && static_cast<int>(k) != r.straggler) continue;
      const bool straggler = static_cast<int>(k) == r.straggler;
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"none\" stroke=\"{}\"><title>rank {}: {} GFLOP/s</title></circle>", x,
                         frame.py(g), straggler ? "#b00020" : "#444", rank_number(m.ranks, k), short_number(g));
    }
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#e6550d\"/>", x, frame.py(median));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text></g>\n", x + 7, frame.py(median) + 4, esc(r.name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace

std::string merged_html(const MergedRanks& m) {
  const std::size_t n = m.ranks.size();
  std::string html = html_page_open("hwprof merge", "plain");
  html += fmt::format("<h1>{} rank{} of '{}'</h1>\n<p class=\"note\">Merged by {}.</p>\n", n, n == 1 ? "" : "s",
                      esc(n > 0 ? m.ranks.front().model : ""), esc(m.made_by));
  const MergedRegion& t = m.total;
  if (t.straggler >= 0) {
    html += fmt::format("<p><b>Total per rank</b>: min {:.4g} ms, median {:.4g} ms, max {:.4g} ms (rank {}): <b>imbalance {:.1f}%</b></p>\n",
                        t.min_ms, t.median_ms, t.max_ms, straggler_text(m, t), 100 * t.imbalance);
  }
  for (const std::string& w : m.warnings) html += "<p class=\"warn\">WARNING: " + esc(w) + "</p>\n";
  html += "<h2>Ranks</h2>\n<table><tr><th>Rank</th><th>Host</th><th>CPU</th><th>Threads</th><th>Total ms</th><th>of the slowest</th></tr>\n";
  for (std::size_t k = 0; k < n; ++k) {
    const MergedRankInfo& r = m.ranks[k];
    const double share = t.max_ms > 0 && std::isfinite(t.rank_ms[k]) ? t.rank_ms[k] / t.max_ms : 0;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><svg width=\"120\" height=\"10\"><rect width=\"{:.0f}\" "
        "height=\"10\" fill=\"#e6550d\"/></svg> {:.0f}%</td></tr>\n",
        rank_number(m.ranks, k), esc(r.host), esc(r.cpu), r.threads, std::isfinite(t.rank_ms[k]) ? fmt::format("{:.4g}", t.rank_ms[k]) : "&ndash;",
        120 * share, 100 * share);
  }
  html += "</table>\n";
  // The per-rank view: every region's time on every rank, shaded by its share of the row's max.
  const std::size_t columns = n <= kMaxRankColumns ? n : 0;
  html +=
      "<h2>Per rank</h2>\n<p class=\"note\">Each cell: the time that rank spent in the region (ms), shaded by its share of the slowest "
      "rank's; the straggler is outlined.";
  if (columns == 0) html += fmt::format(" With {} ranks, only the spread is shown here; the merge's JSON has every rank's time.", n);
  html += "</p>\n<table><tr><th>Region</th><th>imbalance</th><th>min ms</th><th>median ms</th><th>max ms</th><th>straggler</th>";
  for (std::size_t k = 0; k < columns; ++k) html += fmt::format("<th>rank {}</th>", rank_number(m.ranks, k));
  html += "</tr>\n";
  for (const MergedRegion* r : [&] {
         std::vector<const MergedRegion*> rows{&m.total};
         for (const MergedRegion& x : m.regions) rows.push_back(&x);
         return rows;
       }()) {
    html += fmt::format("<tr><td>{}</td><td>{:.1f}%</td><td>{:.4g}</td><td>{:.4g}</td><td>{:.4g}</td><td>{}</td>", esc(r->name), 100 * r->imbalance,
                        r->min_ms, r->median_ms, r->max_ms, straggler_text(m, *r));
    for (std::size_t k = 0; k < columns; ++k) {
      const double v = r->rank_ms[k];
      if (!std::isfinite(v)) {
        html += "<td>&ndash;</td>";
        continue;
      }
      html += fmt::format("<td style=\"background:{}\"{}>{:.4g}</td>", heat(r->max_ms > 0 ? v / r->max_ms : 0),
                          static_cast<int>(k) == r->straggler && n > 1 ? " class=\"straggler\"" : "", v);
    }
    html += "</tr>\n";
  }
  html +=
      "</table>\n<h2>Roofline: the spread across the ranks</h2>\n<p class=\"note\">Per region: each rank's GFLOP/s (its work over its "
      "time; hollow, the straggler red), the median filled, the line from the slowest rank to the fastest.";
  if (!m.ceilings.source.empty()) html += " Ceilings: " + esc(m.ceilings.source) + ".";
  html += "</p>\n" + merged_roofline_svg(m);
  html +=
      "<p class=\"note\">Per rank, a region's time is all the time the rank spent in it (every call, every thread). Imbalance = "
      "(max &minus; mean) / max across the ranks: the share of the slowest rank's time the average rank waits.</p>\n";
  html += html_page_close();
  return html;
}

}  // namespace hwprof::report
