#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwprof/roofline.hpp"
#include "hwprof/statistics.hpp"
#include "report/json_number.hpp"
#include "report/profile_view.hpp"
#include "report/svg.hpp"

namespace hwprof::detail {
namespace {

// Why a layer's kept per-call times cannot be the calls its time statistics summarise (empty
// when they can). The kept times are every k-th call of those the statistics were made from
// (docs/profile.md), so each lies within [min, max]; all of them kept give the same median,
// and a thinned set's median lies within [p5, p95]. A profile edited by hand or damaged (all
// zeros against a median of 5 ms) would otherwise give a confident p-value.
std::string samples_problem(const LayerProfile& l) {
  const Summary& t = l.time_ms;
  const std::vector<double>& s = l.samples_ms;
  if (s.empty()) return {};
  if (s.size() > t.n) return fmt::format("{} per-call times kept of {} calls", s.size(), t.n);
  const double tol = 1e-6 * std::abs(t.max) + 1e-12;
  for (double v : s) {
    if (!std::isfinite(v) || v < t.min - tol || v > t.max + tol) {
      return fmt::format("a kept time of {:.6g} ms lies outside the layer's min {:.6g} and max {:.6g} ms", v, t.min, t.max);
    }
  }
  const double median = summarize(s).median;
  const bool all = s.size() == t.n;
  const double lo = all ? t.median : t.p5;
  const double hi = all ? t.median : t.p95;
  if ((all || t.p95 > 0) && (median < lo - tol || median > hi + tol)) {
    return fmt::format("the kept times' median {:.6g} ms is not the layer's {} ({:.6g} ms)", median, all ? "median" : "p5 to p95",
                       all ? t.median : (t.p5 + t.p95) / 2);
  }
  return {};
}

LayerChange change_of(const LayerProfile& a, const LayerProfile& b) {
  LayerChange c;
  c.name = display_name(b);
  c.op = b.op;
  c.samples_a = a.samples_ms.size();
  c.samples_b = b.samples_ms.size();
  c.median_a_ms = a.time_ms.median;
  c.median_b_ms = b.time_ms.median;
  c.change = a.time_ms.median > 0 ? b.time_ms.median / a.time_ms.median - 1.0 : 0.0;
  if (a.roofline) {
    c.efficiency_a = a.roofline->efficiency;
    c.bound_a = std::string(bound_name(a.roofline->bound));
  }
  if (b.roofline) {
    c.efficiency_b = b.roofline->efficiency;
    c.bound_b = std::string(bound_name(b.roofline->bound));
  }
  const LayerNumbers na = layer_numbers(a);
  const LayerNumbers nb = layer_numbers(b);
  c.intensity_a = na.intensity;
  c.gflops_a = na.gflops_per_s;
  c.intensity_b = nb.intensity;
  c.gflops_b = nb.gflops_per_s;
  if (a.samples_ms.empty() || b.samples_ms.empty()) {
    c.note = "no per-call times kept in " + std::string(a.samples_ms.empty() ? "A" : "B") +
             " (a profile from before hwprof kept them): medians compared, no test";
    return c;
  }
  for (const auto& [which, l] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    if (const std::string problem = samples_problem(*l); !problem.empty()) {
      c.verdict = Verdict::inconsistent;
      c.note = fmt::format("samples inconsistent in {}: {} (a damaged or edited profile): not tested", which, problem);
      return c;
    }
  }
  const RankTest t = mann_whitney_u(a.samples_ms, b.samples_ms);
  c.p_value = t.p_value;
  return c;
}

// The verdict once the p-value to judge by is known.
void judge(LayerChange& c, double p, double alpha) {
  c.p_adjusted = p;
  if (p < alpha) {
    c.verdict = c.median_b_ms < c.median_a_ms ? Verdict::faster : Verdict::slower;
  } else if (mann_whitney_min_p(c.samples_a, c.samples_b) >= alpha) {
    c.verdict = Verdict::too_few_samples;
    c.note = fmt::format(
        "{} and {} samples cannot show a difference at {} (the smallest p they allow is {:.2g}): profile with more "
        "--iterations",
        c.samples_a, c.samples_b, alpha, mann_whitney_min_p(c.samples_a, c.samples_b));
  } else {
    c.verdict = Verdict::same;
  }
}

std::string percent_change(double change) {
  return fmt::format("{:+.1f}%", 100 * change);
}

std::string efficiency_text(const std::optional<double>& e) {
  return e ? fmt::format("{:.1f}%", 100 * *e) : "-";
}

std::string p_text(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p < 1e-4) return "<0.0001";
  return fmt::format("{:.4f}", *p);
}

nlohmann::ordered_json change_json(const LayerChange& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["op"] = c.op;
  j["median_a_ms"] = c.median_a_ms;
  j["median_b_ms"] = c.median_b_ms;
  j["change"] = c.change;
  j["samples_a"] = c.samples_a;
  j["samples_b"] = c.samples_b;
  j["p_value"] = json_number(c.p_value);
  j["p_adjusted"] = json_number(c.p_adjusted);
  j["verdict"] = std::string(verdict_name(c.verdict));
  j["efficiency_a"] = json_number(c.efficiency_a);
  j["efficiency_b"] = json_number(c.efficiency_b);
  j["bound_a"] = c.bound_a;
  j["bound_b"] = c.bound_b;
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

// The layers' names as the comparison shows them: a name (and phase) that appears more than
// once in a profile (a block repeated by hand) gets its occurrence, "relu #2", so that the k-th
// relu of A is matched with the k-th of B (README.md, "Comparing runs").
std::vector<std::string> occurrence_names(const Profile& p) {
  std::map<std::string, int> count;
  for (const LayerProfile& l : p.layers) ++count[display_name(l)];
  std::map<std::string, int> seen;
  std::vector<std::string> names;
  for (const LayerProfile& l : p.layers) {
    const std::string name = display_name(l);
    const int k = ++seen[name];
    names.push_back(count[name] > 1 && k > 1 ? fmt::format("{} #{}", name, k) : name);
  }
  return names;
}

void match_layers(const Profile& a, const Profile& b, ProfileComparison& out) {
  const std::vector<std::string> names_a = occurrence_names(a);
  const std::vector<std::string> names_b = occurrence_names(b);
  std::map<std::string, std::size_t> in_a;
  for (std::size_t i = 0; i < names_a.size(); ++i) in_a.emplace(names_a[i], i);
  std::set<std::string> matched;
  for (std::size_t i = 0; i < names_b.size(); ++i) {
    const auto it = in_a.find(names_b[i]);
    if (it == in_a.end()) {
      out.only_in_b.push_back(names_b[i]);
      continue;
    }
    matched.insert(it->first);
    out.layers.push_back(change_of(a.layers[it->second], b.layers[i]));
    out.layers.back().name = names_b[i];
  }
  for (const std::string& name : names_a) {
    if (!matched.count(name)) out.only_in_a.push_back(name);
  }
}

}  // namespace

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::same:
      return "no significant change";
    case Verdict::too_few_samples:
      return "too few samples";
    case Verdict::untested:
      return "not tested";
    case Verdict::inconsistent:
      return "samples inconsistent";
  }
  return "?";
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  // Sort the m p-values ascending; the k-th (from 0) is multiplied by m − k, capped at 1, and
  // the adjusted values are made non-decreasing in that order (the step-down's monotone step).
  std::vector<std::size_t> order(p.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> out(p.size());
  double running = 0.0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    running = std::max(running, std::min(1.0, p[order[k]] * static_cast<double>(order.size() - k)));
    out[order[k]] = running;
  }
  return out;
}

ProfileComparison compare_profiles(const Profile& a, const Profile& b, double alpha) {
  ProfileComparison out;
  out.alpha = alpha;
  out.a_label = a.model;
  out.b_label = b.model;
  auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) out.differences.push_back(fmt::format("{}: {} in A, {} in B", what, x.empty() ? "(none)" : x, y.empty() ? "(none)" : y));
  };
  differ("model", a.model, b.model);
  differ("batch", std::to_string(a.batch), std::to_string(b.batch));
  differ("phase", std::string(profile_phase_name(a)), std::string(profile_phase_name(b)));
  differ("threads", std::to_string(a.threads), std::to_string(b.threads));
  differ("CPU", a.machine.cpu.brand, b.machine.cpu.brand);
  differ("host", a.machine.host, b.machine.host);
  differ("BLAS core", a.machine.blas_core, b.machine.blas_core);
  differ("counter backend", a.backend, b.backend);
  differ("hwprof", a.hwprof_version, b.hwprof_version);

  match_layers(a, b, out);

  std::vector<LayerChange*> tested;
  std::vector<double> p;
  for (LayerChange& c : out.layers) {
    if (c.p_value) {
      tested.push_back(&c);
      p.push_back(*c.p_value);
    }
  }
  const std::vector<double> adjusted = holm_adjust(p);
  for (std::size_t k = 0; k < tested.size(); ++k) judge(*tested[k], adjusted[k], alpha);

  out.total = change_of(a.total, b.total);
  out.total.name = "model total";
  if (out.total.p_value) judge(out.total, *out.total.p_value, alpha);
  return out;
}

std::vector<const LayerChange*> regressions(const ProfileComparison& c, double percent) {
  std::vector<const LayerChange*> out;
  auto check = [&](const LayerChange& l) {
    if (l.verdict == Verdict::slower && l.change * 100 > percent) out.push_back(&l);
  };
  check(c.total);
  for (const LayerChange& l : c.layers) check(l);
  return out;
}

std::string comparison_table(const ProfileComparison& c, std::size_t top) {
  std::string out = fmt::format("hwprof compare: A = {}, B = {}\n", c.a_label, c.b_label);
  const LayerChange& t = c.total;
  out += fmt::format("Model total: {:.4g} ms -> {:.4g} ms ({}), {}{}\n", t.median_a_ms, t.median_b_ms, percent_change(t.change),
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

std::string comparison_json(const ProfileComparison& c) {
  nlohmann::ordered_json j;
  j["a"] = c.a_label;
  j["b"] = c.b_label;
  j["alpha"] = c.alpha;
  j["test"] = "Mann-Whitney U, two-sided; layers Holm-adjusted";
  j["differences"] = c.differences;
  j["total"] = change_json(c.total);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerChange& l : c.layers) layers.push_back(change_json(l));
  j["layers"] = std::move(layers);
  j["only_in_a"] = c.only_in_a;
  j["only_in_b"] = c.only_in_b;
  return j.dump(2) + "\n";
}

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
  Ceilings ceilings;
  if (run != nullptr) ceilings = ceilings_of(*run, true);
  for (const ComputeRoof& r : ceilings.roofs) y_hi = std::max(y_hi, r.gflops);
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

std::string comparison_html(const ProfileComparison& c, const Profile& b) {
  auto esc = [](std::string_view s) { return xml_escape(s); };
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hwprof compare</title>\n<style>"
      "body{font:14px sans-serif;margin:24px;color:#222}table{border-collapse:collapse}td,th{padding:3px 8px;"
      "border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}"
      ".slower{color:#b00020;font-weight:bold}.faster{color:#1b7f3b;font-weight:bold}.note{color:#555}"
      "</style></head><body>\n";
  html += fmt::format("<h1>hwprof compare</h1>\n<p>A = {}<br>B = {}</p>\n", esc(c.a_label), esc(c.b_label));
  const LayerChange& t = c.total;
  html += fmt::format("<p><b>Model total</b>: {:.4g} ms &rarr; {:.4g} ms ({}), <span class=\"{}\">{}</span>{}</p>\n", t.median_a_ms, t.median_b_ms,
                      percent_change(t.change),
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
      "across the layers; the model total is tested alone.</p>\n</body></html>\n";
  return html;
}

}  // namespace hwprof::detail
