#include "analyze/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "analyze/layer_view.hpp"
#include "common/stages.hpp"
#include "hwprof/statistics.hpp"

namespace hwprof::analysis {
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
  // An impossible rate (LayerProfile::impossible) is no efficiency and no bound.
  if (a.roofline && !a.impossible) {
    c.efficiency_a = a.roofline->efficiency;
    c.bound_a = std::string(bound_name(a.roofline->bound));
  }
  if (b.roofline && !b.impossible) {
    c.efficiency_b = b.roofline->efficiency;
    c.bound_b = std::string(bound_name(b.roofline->bound));
  }
  const LayerNumbers na = layer_numbers(a);
  const LayerNumbers nb = layer_numbers(b);
  c.intensity_a = na.intensity;
  if (!a.impossible) c.gflops_a = na.gflops_per_s;
  c.intensity_b = nb.intensity;
  if (!b.impossible) c.gflops_b = nb.gflops_per_s;
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

// The layers' names as the comparison shows them: a name (and phase) that appears more than
// once in a profile (a block repeated by hand) gets its occurrence, "relu #2", so that the k-th
// relu of A is matched with the k-th of B (docs/cli.md, "Comparing runs").
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
  // A batch of 0 is not known (a program's run).
  const auto batch = [](const Profile& p) { return p.batch > 0 ? std::to_string(p.batch) : std::string("not known"); };
  differ("batch", batch(a), batch(b));
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
  if (is_program_run(a.kind) && is_program_run(b.kind)) {
    // A program's total is its time in its rows per step (or over the run): one figure a run, so
    // compared, not tested.
    out.total.name = "program total";
    out.total.median_a_ms = row_ms(a.total);
    out.total.median_b_ms = row_ms(b.total);
    out.total.change = out.total.median_a_ms > 0 ? out.total.median_b_ms / out.total.median_a_ms - 1.0 : 0.0;
    out.total.note =
        fmt::format("the time in the program's rows {} in A, {} in B: one figure a run, compared, not tested",
                    a.time_basis == TimeBasis::step ? "per step" : "over the run", b.time_basis == TimeBasis::step ? "per step" : "over the run");
  }
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

}  // namespace hwprof::analysis
