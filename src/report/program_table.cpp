#include "report/program_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "common/stages.hpp"
#include "report/profile_view.hpp"

namespace hwprof::report {
namespace {

// The shapes section's longest shape text: a call with many inputs is cut, its row keeps it whole.
constexpr std::size_t kLongestShape = 72;
constexpr std::size_t kShapesShown = 3;

struct ProgramColumns {
  const Profile& p;
  bool phases = false;  // a Phase column (a torch program's forward, backward, optimizer ... rows)
  bool placed = false;  // Roof ms and Win ms columns
};

bool program_phases(const Profile& p) {
  return std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) { return l.phase != LayerPhase::region; });
}

// GFLOP/s and Eff. of a row: "-" where there is none; an impossible row's Eff. says so and its
// GFLOP/s is no figure; a partial count's are lower bounds ("≥").
struct RateCells {
  std::string gflops;
  std::string efficiency;
};
RateCells rate_cells(const LayerProfile& l, const LayerNumbers& n, RowMarks& marks) {
  if (l.impossible) {
    marks.impossible = true;
    return {"-", "impossible"};
  }
  const bool partial = !l.work_partial.empty() && (n.gflops_per_s || n.efficiency);
  marks.lower_bound = marks.lower_bound || partial;
  const std::string mark = partial ? kLowerBound : "";
  return {n.gflops_per_s ? mark + rate_cell(*n.gflops_per_s) : "-", n.efficiency ? mark + percent(*n.efficiency) : "-"};
}

std::vector<std::string> program_row(const ProgramColumns& c, const LayerProfile& l, RowMarks& marks) {
  const LayerNumbers n = layer_numbers(l);
  const auto h = headroom_ms(l);
  std::vector<std::string> cells = {display_name(l), l.op};
  if (c.phases) cells.emplace_back(layer_phase_name(l.phase));
  cells.push_back(l.calls > 0 ? calls_text(calls_per_basis(l)) : "-");
  cells.push_back(l.time_ms.n > 0 || l.basis_ms > 0 ? milliseconds(row_ms(l)) : "-");
  marks.below_resolution = marks.below_resolution || l.below_resolution;
  cells.push_back((l.below_resolution ? "~" : "") + (l.time_ms.n > 0 ? milliseconds(l.time_ms.median) : std::string("-")));
  cells.push_back(median_uncertainty_cell(l.time_ms, &marks.used_range));
  cells.push_back(percent(row_share(c.p, l, 0.0)));
  const RateCells rates = rate_cells(l, n, marks);
  cells.push_back(rates.gflops);
  cells.push_back(optional_rate_cell(n.intensity));
  cells.push_back(n.bound && !l.impossible ? std::string(bound_name(*n.bound)) : "-");
  cells.push_back(rates.efficiency);
  if (c.placed) {
    cells.push_back(h ? milliseconds(h->roof_ms) : "-");
    cells.push_back(h ? milliseconds(h->win_ms) : "-");
  }
  cells.push_back(l.why.empty() ? "" : l.why.front().label);
  return cells;
}

// The program total: its time in its rows per step (or over the run), against its counted rows'
// roofs; no calls, no call.
std::vector<std::string> program_total_row(const ProgramColumns& c) {
  const LayerProfile& t = c.p.total;
  const LayerNumbers n = layer_numbers(t);
  const auto h = headroom_ms(t);
  std::vector<std::string> cells = {"program total", "-"};
  if (c.phases) cells.emplace_back("-");
  cells.emplace_back("-");
  cells.push_back(t.time_ms.n > 0 ? milliseconds(row_ms(t)) : "-");
  cells.emplace_back("-");
  cells.emplace_back("-");
  cells.emplace_back(t.time_ms.n > 0 ? "100.0%" : "-");
  cells.push_back(optional_rate_cell(n.gflops_per_s));
  cells.push_back(optional_rate_cell(n.intensity));
  cells.push_back(n.bound ? std::string(bound_name(*n.bound)) : "-");
  cells.push_back(n.efficiency ? percent(*n.efficiency) : "-");
  if (c.placed) {
    cells.push_back(h ? milliseconds(h->roof_ms) : "-");
    cells.push_back(h ? milliseconds(h->win_ms) : "-");
  }
  cells.emplace_back();
  return cells;
}

std::string program_order(bool steps, ProfileSort sort) {
  switch (sort) {
    case ProfileSort::win:
      return steps ? "most time to win per step first (Win ms = ms/step x (1 - Eff.))"
                   : "most time to win over the run first (Win ms = Time ms x (1 - Eff.))";
    case ProfileSort::time:
      return steps ? "most time per step first" : "most time over the run first";
    case ProfileSort::flops:
      return "most FLOPs per call first";
    case ProfileSort::name:
      break;
  }
  return "by name";
}

std::string cut_shape(const std::string& shape) {
  return shape.size() <= kLongestShape ? shape : shape.substr(0, kLongestShape - 3) + "...";
}

bool shapes_worth_showing(const LayerProfile& l) {
  return (l.op.starts_with("aten::") && !l.shapes.empty()) || l.shapes.size() >= 2;
}

}  // namespace

std::string program_rows_table(const Profile& p, const std::vector<const LayerProfile*>& rows, std::size_t shown, ProfileSort sort, RowMarks& marks) {
  const ProgramColumns c{p, program_phases(p), any_row_placed(p)};
  const bool steps = per_step(p);
  TextTable t;
  t.column("Region", false);
  t.column("Op", false);
  if (c.phases) t.column("Phase", false);
  t.column(steps ? "Calls/step" : "Calls", true);
  t.column(steps ? "ms/step" : "Time ms", true);
  t.column("Call ms", true);
  t.column("±95% CI", true);
  t.column("Share", true);
  add_rate_columns(t, c.placed);
  for (std::size_t i = 0; i < shown && i < rows.size(); ++i) t.row(program_row(c, *rows[i], marks));
  t.rule();
  t.row(program_total_row(c));
  return fmt::format("\n{} {} of {} rows, {}\n", shown < rows.size() ? "Top" : "All", std::min(shown, rows.size()), rows.size(),
                     program_order(steps, sort)) +
         t.render();
}

std::string program_rows_left_out(const Profile& p, const std::vector<const LayerProfile*>& rows, std::size_t shown) {
  if (shown >= rows.size()) return {};
  double most = 0.0;
  for (std::size_t i = shown; i < rows.size(); ++i) most = std::max(most, row_share(p, *rows[i], 0.0));
  const std::size_t more = rows.size() - shown;
  return fmt::format("... {} more row{}, {} {} of the time (rows nest: their shares overlap); --all shows every row\n", more, more == 1 ? "" : "s",
                     more == 1 ? "with" : "each at most", percent(most));
}

std::string program_shapes(const std::vector<const LayerProfile*>& shown) {
  TextTable t;
  t.column("Row / its calls' input shapes", false);
  t.column("Calls", true);
  t.column("Time ms", true);
  bool any = false;
  for (const LayerProfile* l : shown) {
    if (!shapes_worth_showing(*l)) continue;
    any = true;
    std::vector<const ShapeRow*> kept;
    const ShapeRow* other = nullptr;
    for (const ShapeRow& s : l->shapes) {
      if (s.other) {
        other = &s;
      } else {
        kept.push_back(&s);
      }
    }
    std::stable_sort(kept.begin(), kept.end(), [](const ShapeRow* a, const ShapeRow* b) { return a->time_ms > b->time_ms; });
    t.row({display_name(*l)});
    for (std::size_t i = 0; i < kept.size() && i < kShapesShown; ++i) {
      t.row({"  " + cut_shape(kept[i]->shape), std::to_string(kept[i]->calls), milliseconds(kept[i]->time_ms)});
    }
    if (kept.size() > kShapesShown) {
      std::uint64_t calls = 0;
      double ms = 0.0;
      for (std::size_t i = kShapesShown; i < kept.size(); ++i) {
        calls += kept[i]->calls;
        ms += kept[i]->time_ms;
      }
      t.row({fmt::format("  {} more shape{}", kept.size() - kShapesShown, kept.size() - kShapesShown == 1 ? "" : "s"), std::to_string(calls),
             milliseconds(ms)});
    }
    if (other != nullptr) t.row({"  other shapes (not kept apart)", std::to_string(other->calls), milliseconds(other->time_ms)});
  }
  if (!any) return {};
  return "\nShapes of the op rows shown (most time first; calls and time over the whole run)\n" + t.render();
}

// A torch run that reads counters reads them only where a read is small against the call
// (docs/torch.md, "Counters and their cost"): its other calls cost far less, and have nothing
// subtracted.
std::string time_only_calls_words(const Profile& p) {
  const bool reads = std::any_of(p.events.begin(), p.events.end(), [](const EventInfo& e) { return e.status == CounterStatus::ok; });
  if (p.kind != ProfileKind::torch || !reads) return {};
  return " that reads counters (a call timed only, most ops, costs far less and has nothing subtracted)";
}

std::string program_legend(const Profile& p) {
  const bool steps = per_step(p);
  const std::string time = steps ? "ms/step" : "Time ms";
  std::string out = fmt::format(
      "Measured: {} = the row's time{}; Call ms = the median of its calls, inclusive of the rows nested in it; "
      "the session's own {:.0f} ns per region{} subtracted{}.\n",
      time,
      steps ? fmt::format(" in the steps / the {} steps (the setup before the first and what ran after the last apart)", p.steps)
            : std::string(" over all its calls"),
      p.overhead_ns, time_only_calls_words(p), counters_measured_words(p));
  out += fmt::format("          {} = {}{}.\n", steps ? "Calls/step" : "Calls", steps ? "its calls in the steps / the steps" : "its calls",
                     p.kind == ProfileKind::torch ? " (a backward row's calls are the forward calls whose backward it ran)" : "");
  out += p.kind == ProfileKind::torch
             ? "Analytic: FLOPs and minimum bytes per call from each aten op's input shapes (hwprof summary's op table); a module's "
               "are the ops' run inside it; '-': not counted (the reason is in profile.json's work_note). "
             : "Given:    FLOPs and bytes per call, as the program stated them (HWPROF_SCOPE_WORK, set_work). ";
  out += "Bytes: " + bytes_source_summary(p) + ".\n";
  out += fmt::format(
      "Derived:  Share = the row's time{} / the program's time in its outermost rows{} (rows nest: their shares overlap); GFLOP/s = "
      "FLOPs over the mean call",
      steps ? "" : " over all its calls", steps ? ", both in the steps where it has them" : "");
  if (any_row_placed(p)) {
    out += fmt::format(
        "; Eff. = achieved / attainable under the measured roofline of the threads the row ran on; Roof ms = {0} x Eff., the time at "
        "the roof; Win ms = {0} - Roof ms. The program total's Win counts only its rows with a count, each millisecond once (at the "
        "outermost row with a count around it): the time of ops without a count, of the program's own code and of the gaps between "
        "rows is not counted as time to win",
        time);
  }
  return out + ".\n";
}

}  // namespace hwprof::report
