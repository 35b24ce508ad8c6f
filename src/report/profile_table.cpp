// `hwprof profile` for a terminal and for spreadsheets: the per-layer table (modelled on
// torch.profiler's key_averages().table(): one row per layer, sortable, top K) and the CSV.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "hwprof/engine/report.hpp"
#include "report/profile_view.hpp"
#include "report/program_table.hpp"
#include "report/sampling_report.hpp"
#include "report/text_table.hpp"

namespace hwprof {
namespace {

using analysis::LayerNumbers;
using report::optional_rate_cell;
using report::rate_cell;
using report::TextTable;

std::string ms(double v) {
  return analysis::milliseconds(v);
}

// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

bool counter_readable(CounterStatus s) {
  return s == CounterStatus::ok || s == CounterStatus::multiplexed;
}

bool has_phases(const Profile& p) {
  // A library profile's regions all have phase "region": one phase, no column for it.
  return p.phase == RunPhase::train || std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) {
           return l.phase != LayerPhase::forward && l.phase != LayerPhase::region;
         });
}

bool any_placed(const Profile& p) {
  return report::any_row_placed(p);
}

// Time to win orders the layers where they have a roofline; without one it is time.
ProfileSort effective_sort(const Profile& p, ProfileSort sort) {
  return sort == ProfileSort::win && !any_placed(p) ? ProfileSort::time : sort;
}

double win_of(const LayerProfile& l) {
  const auto h = placement::headroom_ms(l);
  return h ? h->win_ms : -1.0;
}

std::vector<const LayerProfile*> sorted_layers(const Profile& p, ProfileSort sort) {
  std::vector<const LayerProfile*> rows;
  for (const LayerProfile& l : p.layers) rows.push_back(&l);
  sort = effective_sort(p, sort);
  // A program's rows by their time and win per step (or over the run); a model's per pass.
  const auto win = [](const LayerProfile& l) { return win_of(l); };
  const auto time = [](const LayerProfile& l) { return placement::row_ms(l); };
  std::stable_sort(rows.begin(), rows.end(), [&](const LayerProfile* a, const LayerProfile* b) {
    switch (sort) {
      case ProfileSort::win:
        return win(*a) > win(*b) || (win(*a) == win(*b) && time(*a) > time(*b));
      case ProfileSort::time:
        return time(*a) > time(*b);
      case ProfileSort::flops:
        return a->flops > b->flops;
      case ProfileSort::name:
        return a->name < b->name;
    }
    return false;
  });
  return rows;
}

// The first line answers how long a pass takes and how much of it the roofs say is to win; a
// program's (regions, torch) how long a step takes, or its rows over the run, and the threads
// its rows ran on.
std::string title_line(const Profile& p) {
  if (is_program_run(p.kind)) {
    return fmt::format("hwprof profile: {}, {}\nThreads: {}\n", p.model, report::program_answer(p), report::program_threads(p));
  }
  std::string out =
      fmt::format("hwprof profile: {}, batch {}, {}{}, {} thread{}", p.model, p.batch, profile_phase_name(p),
                  p.phase == RunPhase::train && !p.optimizer.empty() ? " (" + p.optimizer + ")" : "", p.threads, p.threads == 1 ? "" : "s");
  if (p.total.time_ms.n > 0) {
    out += fmt::format(": {} ms per {}", ms(p.total.time_ms.median), p.phase == RunPhase::train ? "step" : "pass");
    // The pass against its layers' roofs (place_total_by_layers): the gaps between layers count.
    if (const auto h = placement::headroom_ms(p.total); h && any_placed(p)) {
      out += fmt::format(", {} ms of it ({}) to win at the roofs", ms(h->win_ms), analysis::percent(h->win_ms / p.total.time_ms.median));
    }
  }
  return out + "\n";
}

std::string machine_lines(const Profile& p) {
  const MachineCpu& cpu = p.machine.cpu;
  std::string out = fmt::format("Machine: {}{} ({} cores{}); ", p.machine.host.empty() ? "" : p.machine.host + ", ", cpu.brand, cpu.cores,
                                cpu.hypervisor ? ", virtual machine" : "");
  if (p.machine.ceilings) {
    out += fmt::format("ceilings measured by `hwprof calibrate` {}{}{}\n", p.machine.calibration_created,
                       p.machine.calibration_quick ? " (quick)" : "", p.machine.calibration_file.empty() ? "" : " in " + p.machine.calibration_file);
  } else {
    out +=
        fmt::format("no calibration for {} thread{}: no roofline, no time to win (run `hwprof calibrate`)\n", p.threads, p.threads == 1 ? "" : "s");
  }
  if (!p.machine.blas_core.empty()) out += fmt::format("BLAS:    OpenBLAS core {} ({})\n", p.machine.blas_core, p.machine.blas_core_source);
  return out;
}

// Warnings, hints and unavailable counters, each once and numbered.
std::string notes_block(const report::NumberedNotes& notes) {
  std::string out;
  for (std::size_t i = 0; i < notes.notes.size(); ++i) {
    const auto& n = notes.notes[i];
    out += fmt::format("[{}] {}: {}\n", i + 1, n.kind == "warning" ? "WARNING" : n.kind == "hint" ? "hint" : "not counted", n.text);
  }
  return out;
}

// What the columns are, measured or derived, after the table: a reader who needs it looks there.
std::string legend(const Profile& p) {
  if (is_program_run(p.kind)) return report::program_legend(p);
  std::string out = fmt::format(
      "Measured: Time = median of {} iteration{} after {} warm-up run{}, the session's own {:.0f} ns per region subtracted{}.\n", p.iterations,
      p.iterations == 1 ? "" : "s", p.warmup_runs, p.warmup_runs == 1 ? "" : "s", p.overhead_ns, report::counters_measured_words(p));
  out += "Analytic: FLOPs and minimum bytes per call (whole batch) from shapes. ";
  out += "Bytes: " + report::bytes_source_summary(p) + ".\n";
  out += "Derived:  Share = of the layers' summed medians";
  if (any_placed(p)) {
    out +=
        "; Eff. = achieved / attainable under the measured roofline (memory roof: the calibrated bandwidth at the layer's working "
        "set for analytic bytes, DRAM's for counted ones); Roof ms = Time x Eff., the time at the roof; Win ms = Time - Roof ms";
  }
  return out + ".\n";
}

}  // namespace

// A regions profile's per-thread totals and call tree, after the main table.
static std::string regions_sections(const Profile& p) {
  if (!is_program_run(p.kind)) return {};
  std::string out;
  if (!p.call_paths.empty()) {
    out += "\nCall paths (merged over threads; inclusive and exclusive of nested regions)\n";
    out += fmt::format("{:<48} {:>10} {:>12} {:>12}\n", "Path", "Calls", "Incl. ms", "Excl. ms");
    for (const CallPathRow& c : p.call_paths) {
      out += fmt::format("{:<48} {:>10} {:>12.3f} {:>12.3f}\n", std::string(static_cast<std::size_t>(2 * c.depth), ' ') + c.path, c.calls,
                         c.inclusive_ms, c.exclusive_ms);
    }
  }
  if (!p.region_threads.empty()) {
    out += "\nPer thread\n";
    out += fmt::format("{:>6} {:<16} {:<32} {:>10} {:>12} {:>12}\n", "Thread", "Name", "Region", "Calls", "Incl. ms", "Excl. ms");
    for (const RegionThreadRow& r : p.region_threads) {
      out +=
          fmt::format("{:>6} {:<16} {:<32} {:>10} {:>12.3f} {:>12.3f}\n", r.thread, r.thread_name, r.region, r.calls, r.inclusive_ms, r.exclusive_ms);
    }
  }
  return out;
}

namespace {

// The counters table's columns and what its cells collect for the notes below it.
struct CounterColumns {
  const Profile& p;
  const report::NumberedNotes& notes;
  bool phases = false;
  std::vector<std::string> names;                 // events, in order
  std::vector<std::string> metric_names;          // the group's metrics
  std::map<std::string, double> lowest_fraction;  // multiplexed counters: the least time any layer's reading ran
  std::vector<std::string> impossible;            // "layer: reason", once per layer and counter
  std::vector<std::string> metric_notes;
  bool any_below = false;
  std::string note_of(const std::string& name) const {
    auto it = notes.note_of_counter.find(name);
    return it == notes.note_of_counter.end() ? std::string("n/a") : fmt::format("n/a[{}]", it->second);
  }
};

std::string counter_cell(CounterColumns& t, const LayerProfile& l, const std::string& layer_name, const std::string& n) {
  auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const LayerCounter& lc) { return lc.name == n; });
  if (it == l.counters.end()) {
    auto e = std::find_if(t.p.events.begin(), t.p.events.end(), [&](const EventInfo& ev) { return ev.name == n; });
    return e != t.p.events.end() && !counter_readable(e->status) ? t.note_of(n) : "-";
  }
  if (!it->value) return t.note_of(n);
  if (it->impossible) {
    t.impossible.push_back(layer_name + ": " + it->impossible_reason);
    return fmt::format("!{}", t.impossible.size());
  }
  std::string v = (it->below_resolution ? "~" : "") + analysis::si(*it->value);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  if (it->below_resolution) t.any_below = true;
  if (it->status == CounterStatus::multiplexed) {
    v += "*";
    auto [f, inserted] = t.lowest_fraction.emplace(n, it->running_fraction);
    if (!inserted) f->second = std::min(f->second, it->running_fraction);
  }
  return v;
}

std::string metric_cell(CounterColumns& t, const LayerProfile& l, const std::string& n) {
  auto it = std::find_if(l.metrics.begin(), l.metrics.end(), [&](const LayerMetric& m) { return m.name == n; });
  if (it == l.metrics.end()) return "-";
  if (!it->value) {
    const std::string text = n + ": not available" + (it->reason.empty() ? "" : " - " + it->reason);
    std::size_t k = static_cast<std::size_t>(std::find(t.metric_notes.begin(), t.metric_notes.end(), text) - t.metric_notes.begin());
    if (k == t.metric_notes.size()) t.metric_notes.push_back(text);
    return fmt::format("n/a[m{}]", k + 1);
  }
  if (it->below_resolution) t.any_below = true;
  return (it->below_resolution ? "~" : "") + (*it->value >= 0 ? rate_cell(*it->value) : fmt::format("{:.3g}", *it->value));
}

// `phase`: the row's, or for the total the profile's (profile_phase_name).
std::vector<std::string> counter_row(CounterColumns& t, const LayerProfile& l, const std::string& name, std::string_view phase) {
  std::vector<std::string> r = {name};
  if (t.phases) r.emplace_back(phase);
  for (const std::string& n : t.names) r.push_back(counter_cell(t, l, name, n));
  for (const std::string& n : t.metric_names) r.push_back(metric_cell(t, l, n));
  return r;
}

// The counters per call of the rows shown, one column per event and metric. An unavailable
// counter is "n/a[k]", k the numbered note that says why; `~` below resolution; `!` a value
// wall time cannot hold, with its reason below.
std::string counters_table(const Profile& p, const std::vector<const LayerProfile*>& rows, const report::NumberedNotes& notes, bool phases) {
  CounterColumns t{p, notes, phases, {}, {}, {}, {}, {}, false};
  const auto add_name = [&](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  for (const EventInfo& e : p.events) add_name(t.names, e.name);
  for (const LayerProfile* l : rows) {
    for (const LayerCounter& c : l->counters) add_name(t.names, c.name);
    for (const LayerMetric& m : l->metrics) add_name(t.metric_names, m.name);
  }
  if (t.names.empty() && t.metric_names.empty()) return {};
  TextTable c;
  c.column("Layer", false);
  if (phases) c.column("Phase", false);
  for (const std::string& n : t.names) c.column(report::counter_title(p, n), true);
  for (const std::string& n : t.metric_names) c.column(n, true);
  for (const LayerProfile* l : rows) c.row(counter_row(t, *l, analysis::display_name(*l), layer_phase_name(l->phase)));
  if (!p.total.counters.empty() || !p.total.metrics.empty()) {
    c.rule();
    c.row(counter_row(t, p.total, is_program_run(p.kind) ? "program total" : "model total", profile_phase_name(p)));
  }
  std::string out = "\nCounters per call (measured, each reading's own cost subtracted; * multiplexed; n/a[k]: see note k)\n";
  out += c.render();
  for (std::size_t i = 0; i < t.metric_notes.size(); ++i) out += fmt::format("[m{}] {}\n", i + 1, t.metric_notes[i]);
  for (std::size_t i = 0; i < t.impossible.size(); ++i) out += fmt::format("!{} impossible: {}\n", i + 1, t.impossible[i]);
  for (const auto& [name, fraction] : t.lowest_fraction) {
    out += fmt::format("* {}: multiplexed, counted {} of the time at worst; values are scaled to the whole interval\n", name,
                       analysis::percent(fraction));
  }
  if (t.any_below) out += fmt::format("~ {}\n", report::kCounterBelowResolution);
  return out;
}

// What to try, once per cause shown, with the layer that has the most to win by it first.
std::string what_to_try(const std::vector<const LayerProfile*>& rows, const char* row_word) {
  struct Seen {
    std::string rule;
    std::string first;  // the first layer shown with it
    const LayerCause* cause = nullptr;
    int layers = 0;
  };
  std::vector<Seen> seen;
  for (const LayerProfile* l : rows) {
    if (l->why.empty()) continue;
    const LayerCause& c = l->why.front();
    auto it = std::find_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.rule == c.rule; });
    if (it == seen.end()) {
      seen.push_back({c.rule, analysis::display_name(*l), &c, 1});
    } else {
      ++it->layers;
    }
  }
  if (seen.empty()) return {};
  std::string out = fmt::format("\nWhy, and what to try (the first {} shown with each cause; docs/profile.md lists the rules):\n", row_word);
  for (const Seen& s : seen) {
    out += fmt::format("- {}: {}{}: {}. Try: {}\n", analysis::cause_title(s.rule), s.first,
                       s.layers > 1 ? fmt::format(" (and {} more shown)", s.layers - 1) : "", s.cause->text, s.cause->advice);
  }
  return out;
}

std::string grouped_table(const Profile& p, const ProfileTableOptions& o) {
  std::vector<analysis::LayerGroup> groups = analysis::group_layers(p, analysis::layer_grouping(o.by), o.depth);
  const ProfileSort sort = effective_sort(p, o.sort);
  std::stable_sort(groups.begin(), groups.end(), [&](const analysis::LayerGroup& a, const analysis::LayerGroup& b) {
    switch (sort) {
      case ProfileSort::win:
        return a.win_ms.value_or(-1) > b.win_ms.value_or(-1);
      case ProfileSort::time:
        return a.time_ms > b.time_ms;
      case ProfileSort::flops:
        return a.flops > b.flops;
      case ProfileSort::name:
        return a.key < b.key;
    }
    return false;
  });
  const std::size_t shown = o.top > 0 ? std::min(groups.size(), static_cast<std::size_t>(o.top)) : groups.size();
  TextTable t;
  t.column(o.by == ProfileGrouping::op       ? std::string("Op")
           : o.by == ProfileGrouping::module ? fmt::format("Module (at most {} parts)", o.depth)
                                             : fmt::format("Block (depth {})", o.depth),
           false);
  // A program's rows per step (or over the run), nested: their groups' shares overlap.
  const bool program = is_program_run(p.kind);
  t.column(program ? "Rows" : "Layers", true);
  t.column(program && report::per_step(p) ? "ms/step" : "Time ms", true);
  t.column("Share", true);
  t.column("Eff.", true);
  t.column("Bound", false);
  t.column("Roof ms", true);
  t.column("Win ms", true);
  t.column("Why (most of its win)", false);
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::LayerGroup& g = groups[i];
    t.row({g.key, std::to_string(g.layers), ms(g.time_ms), analysis::percent(g.share), g.efficiency ? analysis::percent(*g.efficiency) : "-",
           g.bound.empty() ? "-" : g.bound, g.roof_ms ? ms(*g.roof_ms) : "-", g.win_ms ? ms(*g.win_ms) : "-", g.why.empty() ? "-" : g.why});
  }
  std::string out = fmt::format("\n{} {} of {} by {}{}\n", shown < groups.size() ? "Top" : "All", shown, groups.size(), analysis::grouping_name(o.by),
                                sort == ProfileSort::win ? ", most time to win first" : "");
  out += t.render();
  if (shown < groups.size()) out += fmt::format("... {} more; --all shows every row\n", groups.size() - shown);
  if (program) out += "Rows nest (a module holds its ops, an op the ops it runs): the groups' times and shares overlap\n";
  return out;
}

// The rows of a model's layer table, shown or not: what every row needs to know, and the
// footnotes its rows call for.
struct LayerRows {
  const Profile& p;
  bool phases = false;
  bool placed = false;
  bool used_range = false;        // a row's ± is half its min-max range (†)
  bool below_resolution = false;  // a row's time is below resolution (~)
};

// `phase`: the row's, or for the total the profile's (profile_phase_name).
std::vector<std::string> layer_cells(LayerRows& r, const LayerProfile& l, const std::string& name, std::string_view phase, const std::string& share) {
  const LayerNumbers n = analysis::layer_numbers(l);
  const auto h = placement::headroom_ms(l);
  std::vector<std::string> c = {name, l.op};
  if (r.phases) c.emplace_back(phase);
  r.below_resolution = r.below_resolution || l.below_resolution;
  c.push_back((l.below_resolution ? "~" : "") + (l.time_ms.n ? ms(l.time_ms.median) : std::string("-")));
  c.push_back(report::median_uncertainty_cell(l.time_ms, &r.used_range));
  c.push_back(share);
  c.push_back(optional_rate_cell(n.gflops_per_s));
  c.push_back(optional_rate_cell(n.intensity));
  c.push_back(n.bound ? std::string(bound_name(*n.bound)) : "-");
  c.push_back(n.efficiency ? analysis::percent(*n.efficiency) : "-");
  if (r.placed) {
    c.push_back(h ? ms(h->roof_ms) : "-");
    c.push_back(h ? ms(h->win_ms) : "-");
  }
  c.push_back(l.why.empty() ? "" : l.why.front().label);
  return c;
}

// The table of the first `shown` layers and the model total, with its title. (A program's rows:
// report/program_table.hpp.)
std::string layer_table(LayerRows& r, const std::vector<const LayerProfile*>& rows, std::size_t shown, ProfileSort sort) {
  const Profile& p = r.p;
  TextTable t;
  t.column("Layer", false);
  t.column("Op", false);
  if (r.phases) t.column("Phase", false);
  t.column("Time ms", true);
  t.column("±95% CI", true);
  t.column("Share", true);
  report::add_rate_columns(t, r.placed);
  const double layers_ms = analysis::summed_layer_ms(p);
  for (std::size_t i = 0; i < shown; ++i) {
    t.row(layer_cells(r, *rows[i], analysis::display_name(*rows[i]), layer_phase_name(rows[i]->phase),
                      analysis::percent(analysis::row_share(p, *rows[i], layers_ms))));
  }
  t.rule();
  std::vector<std::string> total = layer_cells(r, p.total, "model total", profile_phase_name(p), p.total.time_ms.n ? "100.0%" : "-");
  total.back().clear();
  t.row(std::move(total));
  const char* order = sort == ProfileSort::win     ? "most time to win first (Win ms = Time x (1 - Eff.))"
                      : sort == ProfileSort::time  ? "longest first"
                      : sort == ProfileSort::flops ? "most FLOPs first"
                                                   : "by name";
  return fmt::format("\n{} {} of {} layers, {}\n", shown < rows.size() ? "Top" : "All", shown, rows.size(), order) + t.render();
}

// The layers left out: how many, their share of the time and their time to win.
std::string rows_left_out(const LayerRows& r, const std::vector<const LayerProfile*>& rows, std::size_t shown) {
  if (shown >= rows.size()) return "";
  const double layers_ms = analysis::summed_layer_ms(r.p);
  double rest = 0;
  double rest_win = 0;
  for (std::size_t i = shown; i < rows.size(); ++i) {
    rest += rows[i]->time_ms.median;
    rest_win += std::max(0.0, win_of(*rows[i]));
  }
  const std::size_t more = rows.size() - shown;
  return fmt::format("... {} more layer{} {} {} of the time{}; --all shows every row\n", more, more == 1 ? "" : "s", more == 1 ? "holds" : "hold",
                     analysis::percent(layers_ms > 0 ? rest / layers_ms : 0), r.placed ? fmt::format(" and {} ms to win", ms(rest_win)) : "");
}

bool only_after_steps(const LayerProfile* l) {
  return l->calls > 0 && l->after_steps_calls == l->calls && l->phase != LayerPhase::setup;
}

// What ran after a program's last step (an evaluation, saving, a final print): apart from the
// per-step figures, said with the rows that ran most of it.
std::string after_steps_note(const Profile& p) {
  if (p.after_steps_ms <= 0 || !report::per_step(p)) return {};
  std::vector<const LayerProfile*> rows;
  for (const LayerProfile& l : p.layers) {
    if (l.after_steps_ms > 0 && !l.nested_op) rows.push_back(&l);
  }
  std::sort(rows.begin(), rows.end(), [](const LayerProfile* a, const LayerProfile* b) { return a->after_steps_ms > b->after_steps_ms; });
  std::string names;
  for (std::size_t i = 0; i < rows.size() && i < 2; ++i) {
    names += fmt::format("{}{} {} ms in {} call{}", i > 0 ? ", " : "", rows[i]->name, ms(rows[i]->after_steps_ms), rows[i]->after_steps_calls,
                         rows[i]->after_steps_calls == 1 ? "" : "s");
  }
  return fmt::format("After the last step, {} ms ran in its rows ({}{}): not in the per-step figures (profile.json: after_steps_ms)\n",
                     ms(p.after_steps_ms), names, rows.size() > 2 ? ", ..." : "");
}

// A torch profile's rows the table leaves out unless every row is asked for: the ops that ran only
// inside other rows, the setup before the first module call, and the rows that ran only after
// the last step (docs/torch.md, "Reading a torch profile").
std::string hide_inner_rows(const Profile& p, std::vector<const LayerProfile*>& rows, bool every_row) {
  const auto inside = std::count_if(rows.begin(), rows.end(), [](const LayerProfile* l) { return l->nested_op; });
  const auto setup = std::count_if(rows.begin(), rows.end(), [](const LayerProfile* l) { return l->phase == LayerPhase::setup; });
  const auto after = std::count_if(rows.begin(), rows.end(), [](const LayerProfile* l) { return !l->nested_op && only_after_steps(l); });
  std::string out = after_steps_note(p);
  if (every_row || inside + setup + after == 0) return out;
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const LayerProfile* l) { return l->nested_op || l->phase == LayerPhase::setup || only_after_steps(l); }),
             rows.end());
  if (inside > 0) {
    out += fmt::format("{} op rows ran only inside the rows above (modules, composite ops): --by op sums the ops, --all lists every row\n", inside);
  }
  if (after > 0)
    out += fmt::format("{} row{} ran only after the last step: --all shows {}\n", after, after == 1 ? "" : "s", after == 1 ? "it" : "them");
  if (setup > 0) out += "The setup before the first module call (model construction, parameter initialisation) is a row of its own: --all shows it\n";
  return out;
}

}  // namespace

std::string profile_table(const Profile& p, const ProfileTableOptions& o) {
  const report::NumberedNotes notes = report::numbered_notes(p);
  std::string out = title_line(p) + machine_lines(p);
  if (!notes.notes.empty()) out += "\n" + notes_block(notes);
  if (!p.total.roofline_error.empty() && p.machine.ceilings) out += "Roofline: " + p.total.roofline_error + "\n";
  if (o.by != ProfileGrouping::layer) {
    out += grouped_table(p, o);
    return out + "\n" + legend(p);
  }
  std::vector<const LayerProfile*> rows = sorted_layers(p, o.sort);
  const std::string hidden = hide_inner_rows(p, rows, o.nested_ops);
  const std::size_t shown = o.top > 0 ? std::min(rows.size(), static_cast<std::size_t>(o.top)) : rows.size();
  const std::vector<const LayerProfile*> shown_rows(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown));
  const bool phases = has_phases(p);
  if (is_program_run(p.kind)) {
    report::RowMarks marks;
    out += report::program_rows_table(p, rows, shown, effective_sort(p, o.sort), marks);
    out += report::program_rows_left_out(p, rows, shown) + hidden + report::row_mark_notes(marks);
  } else {
    LayerRows r{p, phases, any_placed(p)};
    out += layer_table(r, rows, shown, effective_sort(p, o.sort));
    out += rows_left_out(r, rows, shown) + hidden + report::row_mark_notes({r.below_resolution, r.used_range, false, false});
  }
  out += what_to_try(shown_rows, is_program_run(p.kind) ? "row" : "layer");
  // Asked for (--counters, a group), or something the PMU counted: the table earns its place.
  if (o.counters || !p.group.empty() || analysis::any_hardware_counter(p)) {
    out += counters_table(p, shown_rows, notes, phases);
  } else if (std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) { return !l.counters.empty(); })) {
    out += "(No hardware counter counted: the software counters' table is left out; --counters shows it.)\n";
  }
  if (is_program_run(p.kind)) out += report::program_shapes(shown_rows);
  out += report::sampling_section(p, shown < 10 ? 10 : shown);
  out += "\n" + legend(p);
  return out + regions_sections(p);
}

std::string profile_csv(const Profile& p) {
  const auto quote = csv_quote;
  const auto num = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); };
  const auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };

  std::vector<std::string> counters;
  for (const EventInfo& e : p.events) {
    if (std::find(counters.begin(), counters.end(), e.name) == counters.end()) counters.push_back(e.name);
  }
  std::vector<std::string> metrics;
  for (const LayerProfile& l : p.layers) {
    for (const LayerCounter& c : l.counters) {
      if (std::find(counters.begin(), counters.end(), c.name) == counters.end()) counters.push_back(c.name);
    }
    for (const LayerMetric& m : l.metrics) {
      if (std::find(metrics.begin(), metrics.end(), m.name) == metrics.end()) metrics.push_back(m.name);
    }
  }
  std::string out =
      "index,name,op,phase,output_shape,params,macs,flops,bytes,bytes_source,bytes_origin,analytic_bytes,"
      "time_median_ms,time_mean_ms,time_min_ms,time_max_ms,time_p95_ms,time_p99_ms,time_n,time_ci_low_ms,time_ci_high_ms,"
      "time_share,below_resolution,gflops_per_s,gbytes_per_s,intensity,attainable_gflops_per_s,efficiency,bound,roof_ms,win_ms,why,"
      "why_text";
  // A program run's rows (regions, torch) say their calls, time over them and per step (or over
  // the run), threads, and what their count leaves out or cannot be: empty where not known.
  const bool program = is_program_run(p.kind);
  if (program) out += ",calls,total_ms,basis_ms,threads,threads_min,work_note,work_partial,impossible,impossible_reason";
  // A program with steps: each row's calls and time after the last step (in total_ms, not in basis_ms).
  const bool steps = program && report::per_step(p);
  if (steps) out += ",after_steps_calls,after_steps_ms";
  for (const std::string& c : counters) out += "," + quote(c) + "," + quote(c + ".status") + "," + quote(c + ".flag");
  for (const std::string& m : metrics) out += "," + quote(m);
  out += "\n";
  for (const LayerProfile& l : p.layers) {
    const LayerNumbers n = analysis::layer_numbers(l);
    std::string shape;
    for (std::size_t i = 0; i < l.output_shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(l.output_shape[i]);
    const Summary& s = l.time_ms;
    // A row without a count (work_note) has no FLOPs or bytes: empty, never 0.
    const bool counted = l.work_note.empty();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},", l.index, quote(l.name), quote(l.op), quote(std::string(layer_phase_name(l.phase))),
                       shape, l.params, l.macs, counted ? std::to_string(l.flops) : "", counted ? num(n.bytes.value) : "",
                       value_source_name(n.bytes.source), bytes_origin_name(n.bytes_origin), counted ? std::to_string(l.bytes) : "");
    out += fmt::format("{},{},{},{},{},{},{},{},{},", num(s.median), num(s.mean), num(s.min), num(s.max), num(s.p95), num(s.p99), s.n,
                       s.has_median_ci() ? num(s.median_ci_low) : "", s.has_median_ci() ? num(s.median_ci_high) : "");
    // An impossible rate is no figure: its rate, placement and bound are left empty (its flops and
    // times are still there), and the impossible column says why.
    const bool shown_rate = !l.impossible;
    out += fmt::format("{},{},{},{},{},{},{},{}", num(l.time_share), l.below_resolution ? "true" : "false", shown_rate ? opt(n.gflops_per_s) : "",
                       opt(n.gbytes_per_s), opt(n.intensity), shown_rate ? opt(n.attainable_gflops_per_s) : "", shown_rate ? opt(n.efficiency) : "",
                       n.bound && shown_rate ? std::string(bound_name(*n.bound)) : "");
    const auto h = placement::headroom_ms(l);
    out += fmt::format(",{},{},{},{}", h ? num(h->roof_ms) : "", h ? num(h->win_ms) : "", l.why.empty() ? "" : quote(l.why.front().rule),
                       l.why.empty() ? "" : quote(l.why.front().text));
    if (program) {
      out += fmt::format(",{},{},{},{},{},{},{},{},{}", l.calls, num(l.total_ms), num(l.basis_ms), l.threads > 0 ? std::to_string(l.threads) : "",
                         l.threads_min > 0 ? std::to_string(l.threads_min) : "", quote(l.work_note), quote(l.work_partial),
                         l.impossible ? "true" : "false", quote(l.impossible_reason));
    }
    if (steps) out += fmt::format(",{},{}", l.after_steps_calls, num(l.after_steps_ms));
    for (const std::string& name : counters) {
      auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const LayerCounter& c) { return c.name == name; });
      if (it != l.counters.end()) {
        out += "," + opt(it->value) + "," + std::string(counter_status_name(it->status)) + "," +
               (it->impossible         ? "impossible"
                : it->below_resolution ? "below_resolution"
                                       : "");
      } else {
        auto e = std::find_if(p.events.begin(), p.events.end(), [&](const EventInfo& ev) { return ev.name == name; });
        out += ",," + (e != p.events.end() && !counter_readable(e->status) ? std::string(counter_status_name(e->status)) : "") + ",";
      }
    }
    for (const std::string& name : metrics) {
      auto it = std::find_if(l.metrics.begin(), l.metrics.end(), [&](const LayerMetric& m) { return m.name == name; });
      out += "," + (it != l.metrics.end() ? opt(it->value) : "");
    }
    out += "\n";
  }
  return out;
}

std::string profile_groups_csv(const Profile& p, ProfileGrouping by, int depth) {
  const auto num = [](double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); };
  const auto opt = [&](const std::optional<double>& v) { return v ? num(*v) : std::string(); };
  const auto quote = csv_quote;
  std::string out = analysis::grouping_name(by);
  out += ",layers,time_ms,share,flops,efficiency,bound,roof_ms,win_ms,why\n";
  for (const analysis::LayerGroup& g : analysis::group_layers(p, analysis::layer_grouping(by), depth)) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", quote(g.key), g.layers, num(g.time_ms), num(g.share), num(g.flops), opt(g.efficiency),
                       g.bound, opt(g.roof_ms), opt(g.win_ms), quote(g.why));
  }
  return out;
}

}  // namespace hwprof
