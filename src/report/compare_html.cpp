// `hwprof compare A B --html FILE`: one self-contained page with the summary, every layer's
// row, and a roofline (B's ceilings) with each layer's point in A joined by an arrow to B's.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "hwprof/engine/roofline.hpp"
#include "report/compare.hpp"
#include "report/compare_text.hpp"
#include "report/html_page.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

// The roofline: B's ceilings, A's point (hollow) to B's (filled) for every layer with both.
std::string comparison_roofline(const ProfileComparison& c, const Profile& b) {
  auto esc = [](std::string_view s) { return xml_escape(s); };
  std::string html;
  const CalibrationRun* run = b.machine.ceilings ? &*b.machine.ceilings : nullptr;
  LogLogFrame frame;
  frame.left = 70;
  frame.top = 20;
  frame.width = 640;
  frame.height = 400;
  double x_lo = 1e30, x_hi = 0, y_lo = 1e30, y_hi = 0;
  for (const LayerChange& l : c.layers) {
    for (const auto& [x, y] : {std::pair{l.intensity_a, l.gflops_a}, std::pair{l.intensity_b, l.gflops_b}}) {
      if (!x || !y || *x <= 0 || *y <= 0) continue;
      x_lo = std::min(x_lo, *x);
      x_hi = std::max(x_hi, *x);
      y_lo = std::min(y_lo, *y);
      y_hi = std::max(y_hi, *y);
    }
  }
  DrawnCeilings ceilings;
  if (run != nullptr) ceilings = ceilings_of(*run, true);
  for (const DrawnRoof& r : ceilings.roofs) y_hi = std::max(y_hi, r.gflops);
  if (x_hi > 0) {
    frame.x_min = std::pow(2.0, std::floor(std::log2(std::min(x_lo, 1.0 / 16))));
    frame.x_max = std::pow(2.0, std::ceil(std::log2(std::max(x_hi * 2, 64.0))));
    frame.y_min = std::pow(10.0, std::floor(std::log10(y_lo / 2)));
    frame.y_max = std::pow(10.0, std::ceil(std::log10(y_hi * 1.5)));
    html += "<h2>Roofline: each layer from A (hollow) to B (filled)</h2>\n";
    html += svg_open(frame.left + frame.width + 230, frame.top + frame.height + 60, false);
    html +=
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
        "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#444\"/></marker></defs>\n";
    html += svg_axes(frame, frame.bottom() + 40, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
    if (run != nullptr) html += svg_ceilings(frame, ceilings, ceilings.roofs.empty() ? y_hi : ceilings.roofs.front().gflops, nullptr);
    for (const LayerChange& l : c.layers) {
      if (!l.intensity_a || !l.gflops_a || !l.intensity_b || !l.gflops_b || *l.gflops_a <= 0 || *l.gflops_b <= 0) continue;
      const char* colour = l.verdict == Verdict::slower ? "#b00020" : l.verdict == Verdict::faster ? "#1b7f3b" : "#777";
      const double xa = frame.px(*l.intensity_a), ya = frame.py(*l.gflops_a), xb = frame.px(*l.intensity_b), yb = frame.py(*l.gflops_b);
      html += fmt::format("<g><title>{}: {} ({})</title>", esc(l.name), verdict_name(l.verdict), percent_change(l.change));
      if (std::hypot(xb - xa, yb - ya) > 6) {
        html += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" marker-end=\"url(#arrow)\"/>", xa, ya, xb,
                            yb, colour);
      }
      html += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"none\" stroke=\"{}\"/><circle cx=\"{:.1f}\" cy=\"{:.1f}\" "
          "r=\"4\" fill=\"{}\"/></g>\n",
          xa, ya, colour, xb, yb, colour);
    }
    html += "</svg>\n";
  }
  return html;
}

}  // namespace

std::string comparison_html(const ProfileComparison& c, const Profile& b) {
  auto esc = [](std::string_view s) { return xml_escape(s); };
  std::string html = html_page_open("hwprof compare", "plain");
  html += fmt::format("<h1>hwprof compare</h1>\n<p>A = {}<br>B = {}</p>\n", esc(c.a_label), esc(c.b_label));
  const LayerChange& t = c.total;
  html += fmt::format("<p><b>{}</b>: {:.4g} ms &rarr; {:.4g} ms ({}), <span class=\"{}\">{}</span>{}</p>\n", esc(total_title(t.name)), t.median_a_ms,
                      t.median_b_ms, percent_change(t.change),
                      t.verdict == Verdict::slower   ? "slower"
                      : t.verdict == Verdict::faster ? "faster"
                                                     : "",
                      verdict_name(t.verdict), t.p_value ? " (Mann-Whitney p = " + p_text(t.p_value) + ")" : std::string());
  for (const std::string& d : c.differences) html += "<p class=\"note\">NOTE: the runs differ: " + esc(d) + "</p>\n";
  if (!c.only_in_a.empty()) html += "<p class=\"note\">Only in A: " + esc(fmt::format("{}", fmt::join(c.only_in_a, ", "))) + "</p>\n";
  if (!c.only_in_b.empty()) html += "<p class=\"note\">Only in B: " + esc(fmt::format("{}", fmt::join(c.only_in_b, ", "))) + "</p>\n";

  html += comparison_roofline(c, b);
  html +=
      "<h2>Layers</h2>\n<table><tr><th>Layer</th><th>A ms</th><th>B ms</th><th>Change</th><th>p (Holm)</th><th>Eff. A</th><th>Eff. "
      "B</th><th>Bound A &rarr; B</th><th>Verdict</th></tr>\n";
  for (const LayerChange& l : c.layers) {
    const std::string cls = l.verdict == Verdict::slower ? "slower" : l.verdict == Verdict::faster ? "faster" : "";
    html += fmt::format(
        "<tr><td>{}</td><td>{:.4g}</td><td>{:.4g}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>\n",
        esc(l.name), l.median_a_ms, l.median_b_ms, percent_change(l.change), p_text(l.p_adjusted), efficiency_text(l.efficiency_a),
        efficiency_text(l.efficiency_b), esc(l.bound_a == l.bound_b ? l.bound_a : l.bound_a + " -> " + l.bound_b), cls, verdict_name(l.verdict));
  }
  html +=
      "</table>\n<p class=\"note\">Change = B's median / A's &minus; 1. p: Mann-Whitney U on the kept per-call times, Holm-adjusted "
      "across the layers; the model total is tested alone.</p>\n";
  html += html_page_close();
  return html;
}

}  // namespace hwprof::report
