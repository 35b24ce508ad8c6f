// One self-contained HTML page for a profile: machine and calibration, model totals, the
// roofline (inline SVG), the sortable layer table, memory (analytic against measured) and
// every counter that could not be read, with its reason. Nothing is fetched: the CSS, the
// script and the picture are inline, so the file opens anywhere, offline, and can be mailed.
// Every string that came from a user (model, layer, host and counter names, reasons) is
// escaped; the script reads only data-* attributes and never parses text as HTML.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "hwprof/engine/report.hpp"
#include "report/html_page.hpp"
#include "report/profile_view.hpp"
#include "report/sampling_outputs.hpp"
#include "report/svg.hpp"

namespace hwprof {
namespace {

std::string esc(std::string_view text) {
  return report::xml_escape(text);
}

std::string num(double v, int significant = 3) {
  if (!std::isfinite(v)) return "n/a";
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) return fmt::format("{:.{}e}", v, significant - 1);
  if (std::fabs(v) >= std::pow(10.0, significant)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.{}g}", v, significant);
}

std::string mb(std::int64_t bytes) {
  return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6);
}

// A sortable cell: the shown text and the value to sort by.
std::string cell(const std::string& shown_html, const std::string& sort_value, const std::string& extra = {}) {
  return fmt::format("<td data-v=\"{}\"{}>{}</td>", esc(sort_value), extra, shown_html);
}
std::string num_cell(const std::optional<double>& v, int significant = 3) {
  if (!v) return "<td class=\"num\" data-v=\"\">–</td>";
  return cell(num(*v, significant), fmt::format("{}", *v), " class=\"num\"");
}

// Click a header to sort by it (numbers by data-v, descending first; text ascending first);
// click again to reverse. Rows without a value stay last. The rows select shows one of the
// layer table and its grouped forms. Plain DOM, no library.
constexpr const char* kScript = R"JS(
(function () {
  'use strict';
  function valueOf(row, column) {
    var c = row.cells[column];
    if (!c) return null;
    var v = c.getAttribute('data-v');
    if (v === null || v === '') return null;
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function sortBy(table, th, column) {
    var numeric = th.classList.contains('num');
    var current = th.getAttribute('aria-sort');
    var ascending = current ? current !== 'ascending' : !numeric;
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = valueOf(a, column), y = valueOf(b, column);
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return ascending ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.tabIndex = 0;
      th.title = 'Sort by ' + th.textContent;
      th.addEventListener('click', function () { sortBy(table, th, column); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(table, th, column); }
      });
    });
  });
  // Rows per layer, per op or per block: show the chosen table, hide the others.
  var grouping = document.getElementById('grouping');
  if (grouping) {
    grouping.addEventListener('change', function () {
      Array.prototype.forEach.call(grouping.options, function (o) {
        var t = document.getElementById(o.value);
        if (t) t.hidden = o.value !== grouping.value;
      });
    });
  }
})();
)JS";

std::string bound_badge(const std::optional<Bound>& b) {
  if (!b) return "<span class=\"bound none\">not placed</span>";
  return fmt::format("<span class=\"bound {0}\">{0}</span>", bound_name(*b));
}

std::string machine_section(const Profile& p) {
  const ProfileMachine& m = p.machine;
  std::string out = "<section id=\"machine\"><h2>Machine and calibration</h2><dl>\n";
  const auto row = [&](const std::string& term, const std::string& value_html) { out += "<dt>" + esc(term) + "</dt><dd>" + value_html + "</dd>\n"; };
  row("CPU", esc(m.cpu.brand.empty() ? "unknown" : m.cpu.brand));
  row("host", esc(m.host));
  row("cores", fmt::format("{} physical, {} logical{}", m.cpu.cores, m.cpu.logical_cpus, m.cpu.hypervisor ? " (virtual machine)" : ""));
  if (m.cpu.frequency_ghz > 0) row("frequency", fmt::format("{:.2f} GHz ({})", m.cpu.frequency_ghz, esc(m.cpu.frequency_source)));
  std::string caches;
  for (const CacheInfo& c : m.cpu.caches) {
    caches += fmt::format("{}L{} {} {} KiB", caches.empty() ? "" : ", ", c.level, esc(c.type), c.size_bytes / 1024);
  }
  if (!caches.empty()) {
    const std::string source = m.cpu.caches.front().source;
    row("caches (as described)", caches + (source.empty() ? "" : " — " + esc(source)));
  }
  // Where the calibration's sweep found each level to end, which is what the layers' memory
  // levels follow (a VM may describe its caches wrongly).
  std::string ends;
  if (m.ceilings) {
    for (const char* level : {"l1", "l2", "l3"}) {
      auto it = m.ceilings->bandwidth.find(level);
      if (it == m.ceilings->bandwidth.end() || it->second.capacity_source.empty()) continue;
      ends +=
          fmt::format("{}L{} {}", ends.empty() ? "" : " · ", level[1],
                      it->second.capacity_bytes > 0 ? fmt::format("{} KiB ({})", it->second.capacity_bytes / 1024, esc(it->second.capacity_source))
                                                    : std::string("<span class=\"na\">unknown</span>"));
    }
  }
  if (!ends.empty()) row("levels end at (per run)", ends);
  if (!m.blas_core.empty()) row("BLAS", "OpenBLAS core " + esc(m.blas_core) + " (" + esc(m.blas_core_source) + ")");
  if (m.ceilings) {
    row("calibration", fmt::format("{}{}{}", esc(m.calibration_created), m.calibration_quick ? " (quick)" : "",
                                   m.calibration_file.empty() ? "" : " — <code>" + esc(m.calibration_file) + "</code>"));
    std::string levels;
    for (const char* level : {"l1", "l2", "l3", "dram"}) {
      auto it = m.ceilings->bandwidth.find(level);
      if (it == m.ceilings->bandwidth.end()) continue;
      auto triad = it->second.kernels.find("triad");
      if (triad == it->second.kernels.end()) continue;
      std::string name = level;
      std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
      levels += fmt::format("{}{} {}", levels.empty() ? "" : " · ", name, num(triad->second.best));
    }
    row("bandwidth (GB/s, triad)", levels.empty() ? "none measured" : levels);
    std::string compute;
    for (const char* name : {"fma_sp", "gemm_sp", "fma_dp", "gemm_dp"}) {
      auto it = m.ceilings->compute.find(name);
      if (it == m.ceilings->compute.end()) continue;
      compute += fmt::format("{}{} {}", compute.empty() ? "" : " · ", name, num(it->second.best));
    }
    row("compute (GFLOP/s)", compute.empty() ? "none measured" : compute);
  } else {
    row("calibration", fmt::format("<span class=\"na\">none for {} thread{}</span>: no ceilings, no bounds. Run <code>hwprof calibrate</code>, "
                                   "then profile again.",
                                   p.threads, p.threads == 1 ? "" : "s"));
  }
  if (m.theoretical.sp_gflops > 0) {
    row("theoretical peak", fmt::format("{} SP / {} DP GFLOP/s ({} cores × {:.2f} GHz, {}) — for context only", num(m.theoretical.sp_gflops),
                                        num(m.theoretical.dp_gflops), m.theoretical.cores, m.theoretical.ghz, esc(m.theoretical.isa)));
  }
  out += "</dl></section>\n";
  return out;
}

// A program run's totals (regions, torch): its steps and their median, its time in its rows
// per step (or over the run), its work per step (each FLOP once) and the time to win, with the
// sentence that says what the win counts.
std::string program_totals_section(const Profile& p) {
  const LayerProfile& t = p.total;
  const analysis::LayerNumbers n = analysis::layer_numbers(t);
  const bool steps = report::per_step(p);
  const std::string per = steps ? "per step" : "over the run";
  std::string out = "<section id=\"totals\"><h2>Program totals</h2><dl>\n";
  const auto row = [&](const std::string& term, const std::string& value_html) { out += "<dt>" + esc(term) + "</dt><dd>" + value_html + "</dd>\n"; };
  row("run", esc(p.model + ", " + (p.kind == ProfileKind::torch ? "a PyTorch program (hwprof::torch)" : "a program's own regions")));
  row("threads", esc(report::program_threads(p)));
  if (steps) {
    std::string text = fmt::format("{} steps", p.steps);
    if (p.step_time_ms.n > 0) {
      text += fmt::format(": {} ms median per step, {} ms mean (measured, the steps' own times)", num(p.step_time_ms.median, 4),
                          num(p.step_time_ms.mean, 4));
      if (p.step_time_ms.has_median_ci()) {
        text += fmt::format("; 95% CI {}–{} ms", num(p.step_time_ms.median_ci_low, 4), num(p.step_time_ms.median_ci_high, 4));
      }
    }
    row("steps", text);
  } else {
    row("steps", "none: its figures are over the whole run");
  }
  row("time in its rows", fmt::format("{} ms {} (measured: its outermost rows, summed over the threads{})", num(placement::row_ms(t), 4), per,
                                      steps ? "; the setup before the first step and what ran after the last apart" : ""));
  if (steps && p.after_steps_ms > 0) {
    row("after the last step",
        fmt::format("{} ms (measured: its outermost rows' calls that began after the last step ended; not in the per-step figures)",
                    num(p.after_steps_ms, 4)));
  }
  row(steps ? "FLOPs per step" : "FLOPs over the run",
      fmt::format("{} (each FLOP once: the rows with a count of their own, outside every other such row; impossible rows left out)",
                  analysis::group_digits(t.flops)));
  if (n.gflops_per_s) row("achieved", fmt::format("{} GFLOP/s, {} GB/s", num(*n.gflops_per_s), n.gbytes_per_s ? num(*n.gbytes_per_s) : "–"));
  if (const auto h = placement::headroom_ms(t); h && placement::row_ms(t) > 0) {
    row("time to win", fmt::format("<b>{} ms</b> {} ({} of its time in its rows)", analysis::milliseconds(h->win_ms), per,
                                   analysis::percent(h->win_ms / placement::row_ms(t))));
  }
  if (t.roofline) row("roofline", esc(t.roofline->why));
  if (!t.roofline_error.empty()) row("roofline", "<span class=\"na\">" + esc(t.roofline_error) + "</span>");
  row("counters", esc(p.backend.empty() ? "none" : p.backend + (p.group.empty() ? "" : ", group " + p.group)) +
                      fmt::format("; the timing's own cost ({:.0f} ns per region) is subtracted", p.overhead_ns));
  out += "</dl></section>\n";
  return out;
}

std::string totals_section(const Profile& p) {
  if (is_program_run(p.kind)) return program_totals_section(p);
  const LayerProfile& t = p.total;
  const analysis::LayerNumbers n = analysis::layer_numbers(t);
  std::string out = "<section id=\"totals\"><h2>Model totals</h2><dl>\n";
  const auto row = [&](const std::string& term, const std::string& value_html) { out += "<dt>" + esc(term) + "</dt><dd>" + value_html + "</dd>\n"; };
  row("run",
      fmt::format("{}, batch {}, {}{}, {} thread{}", esc(p.model), p.batch, esc(profile_phase_name(p)),
                  p.phase == RunPhase::train && !p.optimizer.empty() ? " (" + esc(p.optimizer) + ")" : "", p.threads, p.threads == 1 ? "" : "s"));
  std::string time = fmt::format("{} ms median per {} (measured, {} iterations after {} warm-up)", num(t.time_ms.median, 4),
                                 p.phase == RunPhase::train ? "training step" : "forward pass", t.time_ms.n, p.warmup_runs);
  if (t.time_ms.has_median_ci()) time += fmt::format("; 95% CI {}–{} ms", num(t.time_ms.median_ci_low, 4), num(t.time_ms.median_ci_high, 4));
  row("time", time);
  row("FLOPs per call", fmt::format("{} ({})", analysis::group_digits(t.flops), value_source_name(n.flops.source)));
  row("bytes per call",
      fmt::format("{} ({})", analysis::group_digits(static_cast<std::int64_t>(n.bytes.value)), esc(report::bytes_origin_words(n.bytes_origin))));
  row("parameters", analysis::group_digits(t.params));
  if (n.gflops_per_s) row("achieved", fmt::format("{} GFLOP/s, {} GB/s", num(*n.gflops_per_s), n.gbytes_per_s ? num(*n.gbytes_per_s) : "–"));
  if (n.intensity) row("intensity", num(*n.intensity) + " FLOP/byte");
  if (n.bound) {
    row("bound", bound_badge(n.bound) + (n.efficiency ? fmt::format(" at {} of attainable ({} GFLOP/s)", analysis::percent(*n.efficiency),
                                                                    num(n.attainable_gflops_per_s.value_or(0)))
                                                      : ""));
  }
  if (t.roofline) row("roofline", esc(t.roofline->why));
  if (!t.roofline_error.empty()) row("roofline", "<span class=\"na\">" + esc(t.roofline_error) + "</span>");
  row("counters", esc(p.backend.empty() ? "none" : p.backend + (p.group.empty() ? "" : ", group " + p.group)) +
                      (p.counter_iterations > 0 ? fmt::format(", summed over {} passes of their own, which are not timed", p.counter_iterations)
                                                : std::string()) +
                      fmt::format("; the timing's own cost ({:.0f} ns per region) is subtracted", p.overhead_ns));
  out += "</dl></section>\n";
  return out;
}

// Rows of the layers summed per op or per block, one hidden table each; the select above the
// layer table switches which one shows (the script only toggles `hidden`).
std::string group_tables(const Profile& p) {
  int deepest = 1;
  for (const LayerProfile& l : p.layers) deepest = std::max(deepest, static_cast<int>(std::count(l.name.begin(), l.name.end(), '.')) + 1);
  deepest = std::min(deepest, 4);
  std::string out;
  // A program's rows per step (or over the run), summed: rows nest, so the groups overlap.
  const bool program = is_program_run(p.kind);
  const auto table = [&](const std::string& id, ProfileGrouping by, int depth, const std::string& title) {
    std::vector<analysis::LayerGroup> groups = analysis::group_layers(p, analysis::layer_grouping(by), depth);
    std::stable_sort(groups.begin(), groups.end(), [](const analysis::LayerGroup& a, const analysis::LayerGroup& b) {
      return a.win_ms.value_or(-1) > b.win_ms.value_or(-1) || (a.win_ms == b.win_ms && a.time_ms > b.time_ms);
    });
    out += fmt::format(
        "<table class=\"sortable grouped\" id=\"{}\" hidden=\"hidden\"><thead><tr><th>{}</th><th class=\"num\">{}</th>"
        "<th class=\"num\">{}</th><th class=\"num\">Share</th><th class=\"num\">Eff.</th><th>Bound</th>"
        "<th class=\"num\">Roof ms</th><th class=\"num\" aria-sort=\"descending\">Win ms</th><th>Why (most of its win)</th>"
        "</tr></thead><tbody>\n",
        id, esc(title), program ? "Rows" : "Layers", program && report::per_step(p) ? "ms/step" : "Time ms");
    for (const analysis::LayerGroup& g : groups) {
      out += "<tr>" + cell(esc(g.key), g.key) + cell(std::to_string(g.layers), std::to_string(g.layers), " class=\"num\"") + num_cell(g.time_ms) +
             cell(analysis::percent(g.share), fmt::format("{}", g.share), " class=\"num\"") +
             (g.efficiency ? cell(analysis::percent(*g.efficiency), fmt::format("{}", *g.efficiency), " class=\"num\"")
                           : "<td class=\"num\" data-v=\"\">–</td>") +
             cell(esc(g.bound), g.bound) + num_cell(g.roof_ms) + num_cell(g.win_ms) + cell(esc(g.why), g.why) + "</tr>\n";
    }
    out += "</tbody></table>\n";
  };
  table("group-op", ProfileGrouping::op, 1, "Op");
  for (int d = 1; d <= deepest; ++d) table(fmt::format("group-block-{}", d), ProfileGrouping::block, d, fmt::format("Block (depth {})", d));
  return out;
}

std::string grouping_select(const Profile& p) {
  int deepest = 1;
  for (const LayerProfile& l : p.layers) deepest = std::max(deepest, static_cast<int>(std::count(l.name.begin(), l.name.end(), '.')) + 1);
  deepest = std::min(deepest, 4);
  std::string out = fmt::format(
      "<p class=\"note\"><label>Rows: <select id=\"grouping\"><option value=\"layer-table\">per {}</option>"
      "<option value=\"group-op\">per op</option>",
      is_program_run(p.kind) ? "row" : "layer");
  for (int d = 1; d <= deepest; ++d) out += fmt::format("<option value=\"group-block-{}\">per block, depth {}</option>", d, d);
  return out + "</select></label></p>\n";
}

// One layer's counter cell: its value, or why there is none (n/a with its note, impossible).
std::string counter_cell(const LayerProfile& l, const std::string& name_of_counter, const report::NumberedNotes& notes) {
  auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const LayerCounter& c) { return c.name == name_of_counter; });
  if (it == l.counters.end()) return "<td class=\"num\" data-v=\"\">–</td>";
  if (!it->value) {
    const auto note = notes.note_of_counter.find(name_of_counter);
    return note == notes.note_of_counter.end()
               ? fmt::format("<td class=\"num na\" data-v=\"\" title=\"{}\">n/a</td>", esc(std::string(counter_status_name(it->status))))
               : fmt::format("<td class=\"num na\" data-v=\"\" title=\"see note {}\">n/a[{}]</td>", note->second, note->second);
  }
  if (it->impossible) return fmt::format("<td class=\"num na\" data-v=\"\" title=\"{}\">impossible</td>", esc(it->impossible_reason));
  std::string title;
  if (it->status == CounterStatus::multiplexed)
    title = fmt::format("multiplexed: counted {} of the time, scaled", analysis::percent(it->running_fraction));
  if (it->below_resolution) title += std::string(title.empty() ? "" : "; ") + report::kCounterBelowResolution;
  return cell((it->below_resolution ? "~" : "") + analysis::si(*it->value) + (it->status == CounterStatus::multiplexed ? "*" : ""),
              fmt::format("{}", *it->value), " class=\"num\"" + (title.empty() ? std::string() : " title=\"" + esc(title) + "\""));
}

// A program run's answer, as the table's title (the text table's first line).
std::string program_answer_line(const Profile& p) {
  return "<p class=\"answer\">" + esc(report::program_answer(p)) + ".</p>\n";
}

// What a program's columns are (the text table's legend).
std::string program_table_note(const Profile& p) {
  const bool steps = report::per_step(p);
  const std::string time = steps ? "ms/step" : "Time ms";
  return fmt::format(
      "<p class=\"note\">{0}: the row's time{1}; {2}: its calls{3}; Call ms: the median of its calls (± half its 95% "
      "confidence interval); rows nest, and each includes the rows inside it. Share: of the program's time in its outermost rows (rows "
      "nest: their shares overlap). FLOPs/call: analytic, per call. Bytes: {4}. GFLOP/s and GB/s: over the mean call; ≥: a lower bound, "
      "the row's count leaves out ops without a formula (hover for which). impossible: a rate above anything this machine can do (hover "
      "for the figures): no rate, bound or time to win, and left out of the totals. Roof ms: the time at the roof ({0} × Eff.); Win ms: "
      "{0} − Roof ms; the program total's win counts only its rows with a count, each millisecond once. Why: the first cause of the rule table. Most "
      "time to win "
      "first; click a column to sort. A red edge marks a row that takes over 10% of the time at under 30% of what its roof allows.</p>\n",
      time,
      steps ? fmt::format(" in the steps / the {} steps (the setup before the first and what ran after the last apart)", p.steps)
            : std::string(" over all its calls (over the run)"),
      steps ? "Calls/step" : "Calls", steps ? " in the steps / the steps" : "", esc(report::bytes_source_summary(p)));
}

// What every row of the layer table shares.
struct LayerTable {
  const Profile& p;
  const report::NumberedNotes& notes;
  std::vector<std::string> counter_names;  // every event asked for or counted, in order
  bool phases = false;                     // a training profile: a Phase column
  double layers_ms = 0;                    // the layers' summed medians
  bool program = false;                    // a program's rows: Calls and ms per step (or over the run) before the call's time
};

constexpr const char* kNoCell = "<td class=\"num\" data-v=\"\">–</td>";

// A rate of a program's row: none where impossible (the reason on hover), a lower bound ("≥")
// where its count leaves part of the row out, else the figure.
std::string program_rate_cell(const LayerProfile& l, const std::optional<double>& v, const std::string& shown) {
  if (l.impossible) return "<td class=\"num na\" data-v=\"\" title=\"" + esc(l.impossible_reason) + "\">–</td>";
  if (!v) return kNoCell;
  if (l.work_partial.empty()) return cell(shown, fmt::format("{}", *v), " class=\"num\"");
  return cell(std::string(report::kLowerBound) + shown, fmt::format("{}", *v), " class=\"num\" title=\"" + esc(l.work_partial) + "\"");
}

// A program's row's calls and time per step (or over the run); the total has no calls.
std::string program_time_cells(const LayerProfile& l, bool total) {
  std::string r = total || l.calls == 0
                      ? std::string(kNoCell)
                      : cell(report::calls_text(placement::calls_per_basis(l)), fmt::format("{}", placement::calls_per_basis(l)), " class=\"num\"");
  return r + num_cell(placement::row_ms(l), 4);
}

// The median per call (~ below resolution) and half its 95% interval.
std::string median_cells(const LayerProfile& l) {
  const std::string time_text = analysis::milliseconds(l.time_ms.median);
  std::string r =
      l.below_resolution
          ? cell("<span class=\"lowres\" title=\"below resolution: shorter than 100x the measurement's own cost\">~" + time_text + "</span>",
                 fmt::format("{}", l.time_ms.median), " class=\"num\"")
          : cell(time_text, fmt::format("{}", l.time_ms.median), " class=\"num\"");
  if (l.time_ms.has_median_ci()) {
    const double half = (l.time_ms.median_ci_high - l.time_ms.median_ci_low) / 2;
    return r + cell(analysis::milliseconds(half), fmt::format("{}", half), " class=\"num\"");
  }
  return r + "<td class=\"num\" data-v=\"\" title=\"fewer than 6 samples: no 95% interval\">–</td>";
}

// One row: a layer (`tag` td) or the model total (th, plain cells: it is not sorted); `phase`
// is the row's, or for the total the profile's (profile_phase_name).
std::string layer_row(const LayerTable& t, const LayerProfile& l, const std::string& tag, const std::string& name, std::string_view phase) {
  const analysis::LayerNumbers n = analysis::layer_numbers(l);
  const double share = tag == "td" ? analysis::row_share(t.p, l, t.layers_ms) : 1.0;
  const bool worry = tag == "td" && !l.impossible && share > 0.10 && n.efficiency && *n.efficiency < 0.30;
  const bool program_total = t.program && tag == "th";
  std::string r = worry ? "<tr class=\"worry\">" : "<tr>";
  r += cell(esc(name), name);
  r += cell(esc(l.op), l.op);
  if (t.phases) r += cell(esc(phase), std::string(phase));
  if (t.program) r += program_time_cells(l, program_total);
  // A program's total has no call: its time is per step (or over the run).
  r += program_total ? std::string(kNoCell) + kNoCell : median_cells(l);
  r += cell(analysis::percent(share), fmt::format("{}", share),
            fmt::format(" class=\"num share\" style=\"--w: {:.1f}%\"", std::clamp(share, 0.0, 1.0) * 100));
  r += t.program ? program_rate_cell(l, n.gflops_per_s, n.gflops_per_s ? num(*n.gflops_per_s) : "") : num_cell(n.gflops_per_s);
  r += num_cell(n.gbytes_per_s);
  r += num_cell(n.intensity);
  // The rule that placed it and the memory roof it was held to, on hover.
  const std::string why = l.roofline ? " title=\"" + esc(l.roofline->why) + "\"" : std::string();
  const std::string roof = l.roofline ? " title=\"memory roof: " + esc(l.roofline->memory_roof) + "\"" : std::string();
  if (l.impossible) {
    r += "<td data-v=\"\" title=\"" + esc(l.impossible_reason) + "\">–</td>";
    r += "<td class=\"num na\" data-v=\"\" title=\"" + esc(l.impossible_reason) + "\">impossible</td>";
  } else {
    r += cell(bound_badge(n.bound), n.bound ? std::string(bound_name(*n.bound)) : "", why);
    if (t.program && n.efficiency && !l.work_partial.empty()) {
      r += program_rate_cell(l, n.efficiency, analysis::percent(*n.efficiency));
    } else {
      r += n.efficiency ? cell(analysis::percent(*n.efficiency), fmt::format("{}", *n.efficiency), " class=\"num\"" + roof)
                        : "<td class=\"num\" data-v=\"\">–</td>";
    }
  }
  const auto headroom = placement::headroom_ms(l);
  r += num_cell(headroom ? std::optional<double>(headroom->roof_ms) : std::nullopt);
  r += num_cell(headroom ? std::optional<double>(headroom->win_ms) : std::nullopt);
  if (l.why.empty()) {
    r += "<td data-v=\"\"></td>";
  } else {
    const LayerCause& c = l.why.front();
    r += cell(esc(c.label), c.label, " title=\"" + esc(c.text + ". Try: " + c.advice) + "\"");
  }
  // A program total's FLOPs are per step (Program totals), not per call.
  // ... and a row without a count has none (the reason on hover), never 0.
  if (program_total) {
    r += kNoCell;
  } else if (!l.work_note.empty()) {
    r += "<td class=\"num na\" data-v=\"\" title=\"" + esc(l.work_note) + "\">–</td>";
  } else {
    r += cell(analysis::si(static_cast<double>(l.flops)), std::to_string(l.flops), " class=\"num\"");
  }
  for (const std::string& name_of_counter : t.counter_names) r += counter_cell(l, name_of_counter, t.notes);
  r += "</tr>\n";
  if (tag == "th") {
    std::string::size_type pos = 0;
    while ((pos = r.find(" data-v=\"", pos)) != std::string::npos) {
      const auto end = r.find('"', pos + 9);
      r.erase(pos, end + 1 - pos);
    }
  }
  return r;
}

std::string layers_section(const Profile& p, const report::NumberedNotes& notes) {
  const bool program = is_program_run(p.kind);
  // A program's rows have a Phase column where they are not all its own regions.
  const bool phases = program ? std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) { return l.phase != LayerPhase::region; })
                              : p.phase == RunPhase::train;
  LayerTable t{p, notes, {}, phases, analysis::summed_layer_ms(p), program};
  for (const EventInfo& e : p.events) {
    if (std::find(t.counter_names.begin(), t.counter_names.end(), e.name) == t.counter_names.end()) t.counter_names.push_back(e.name);
  }
  for (const LayerProfile& l : p.layers) {
    for (const LayerCounter& c : l.counters) {
      if (std::find(t.counter_names.begin(), t.counter_names.end(), c.name) == t.counter_names.end()) t.counter_names.push_back(c.name);
    }
  }
  std::string out = "<section id=\"layers\"><h2>Where the time goes, and what there is to win</h2>\n";
  out += t.program ? program_answer_line(p) : std::string();
  out += t.program
             ? program_table_note(p)
             : fmt::format(
                   "<p class=\"note\">Time: measured median per call; ± is half the 95% confidence interval of the median. Share: of the layers' "
                   "summed medians. FLOPs: analytic. Bytes: {}. "
                   "GFLOP/s and GB/s: FLOPs and bytes over the median. Roof ms: the time at the roof (Time × Eff.); Win ms: Time − Roof ms. "
                   "Why: the first cause of the rule table (hover for what was seen and what to try). Counters: measured per call, each "
                   "reading's own cost subtracted. Most time to win first; click a column to sort. "
                   "A red edge marks a layer that takes over 10% of the time at under 30% of what its roof allows.</p>\n",
                   esc(report::bytes_source_summary(p)));
  out += grouping_select(p);
  out += fmt::format("<table class=\"sortable\" id=\"layer-table\"><thead><tr><th>{}</th><th>Op</th>", t.program ? "Region" : "Layer");
  if (t.phases) out += "<th>Phase</th>";
  if (t.program) {
    out += report::per_step(p) ? "<th class=\"num\">Calls/step</th><th class=\"num\">ms/step</th><th class=\"num\">Call ms</th>"
                               : "<th class=\"num\">Calls</th><th class=\"num\">Time ms</th><th class=\"num\">Call ms</th>";
  } else {
    out += "<th class=\"num\">Time ms</th>";
  }
  out +=
      "<th class=\"num\">± ms</th><th class=\"num\">Share</th><th class=\"num\">GFLOP/s</th>"
      "<th class=\"num\">GB/s</th><th class=\"num\">FLOP/B</th><th>Bound</th><th class=\"num\">Eff.</th><th class=\"num\">Roof ms</th>"
      "<th class=\"num\" aria-sort=\"descending\">Win ms</th><th>Why</th>";
  out += t.program ? "<th class=\"num\">FLOPs/call</th>" : "<th class=\"num\">FLOPs</th>";
  for (const std::string& c : t.counter_names) out += "<th class=\"num\">" + esc(report::counter_title(p, c)) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  // Most time to win first, as the Win header's arrow says: the rows worth a look lead. A
  // program's rows by their time per step (or over the run), a model's layers by their median.
  std::vector<const LayerProfile*> by_win;
  for (const LayerProfile& l : p.layers) by_win.push_back(&l);
  const auto win = [](const LayerProfile* l) {
    const auto h = placement::headroom_ms(*l);
    return h ? h->win_ms : -1.0;
  };
  std::stable_sort(by_win.begin(), by_win.end(), [&](const LayerProfile* a, const LayerProfile* b) {
    return win(a) > win(b) || (win(a) == win(b) && placement::row_ms(*a) > placement::row_ms(*b));
  });
  for (const LayerProfile* l : by_win) out += layer_row(t, *l, "td", analysis::display_name(*l), layer_phase_name(l->phase));
  out += "</tbody>\n<tfoot>" +
         layer_row(t, p.total, "th", t.program ? "program total" : "model total", t.program ? std::string_view("–") : profile_phase_name(p)) +
         "</tfoot></table>\n";
  out += group_tables(p);
  out +=
      "<p class=\"note\">n/a[k]: the counter could not be read, for the reason in note k at the top. impossible: a value wall "
      "time cannot hold (hover for why). * multiplexed: counted part of the time and scaled. ~ below the measurement's "
      "resolution.</p>\n";
  out += "</section>\n";
  return out;
}

std::string memory_section(const Profile& p) {
  const ProfileMemory& m = p.memory;
  const MemoryEstimate& a = m.analytic;
  const bool train = p.phase == RunPhase::train;
  std::string out = "<section id=\"memory\"><h2>Memory</h2>\n";
  out += fmt::format("<p class=\"note\">Analytic: the cost model at batch {} (optimizer {}). Measured: this run. Decimal MB.</p>\n", a.batch,
                     optimizer_name(a.optimizer));
  out += "<table><thead><tr><th></th><th class=\"num\">analytic</th><th class=\"num\">measured</th><th>what was measured</th></tr></thead><tbody>\n";
  const auto row = [&](const std::string& what, const std::string& analytic, const std::string& measured, const std::string& how) {
    out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"sub\">{}</td></tr>\n", esc(what), analytic,
                       measured, esc(how));
  };
  row("parameters", mb(a.param_bytes + a.buffer_bytes), mb(m.parameter_bytes), "the executor's parameters (a tied weight once)");
  if (train) {
    row("gradients", mb(a.gradient_bytes), "–", "");
    row("optimizer state", mb(a.optimizer_bytes), "–", "");
  }
  row(train ? "activations (kept for backward)" : "activations (peak of live tensors)",
      mb(train ? a.training_activation_bytes : a.inference_activation_bytes), mb(m.peak_allocated_bytes),
      "tensor allocator peak during the run, parameters excluded");
  row("total", mb(train ? a.training_total_bytes : a.inference_total_bytes), mb(m.peak_rss_bytes),
      "peak resident set of the process (code, libraries and allocator slack included)");
  row("page faults", "–", m.page_faults ? analysis::group_digits(*m.page_faults) : "<span class=\"na\">not measured</span>",
      "minor + major faults during the run");
  out += "</tbody></table></section>\n";
  return out;
}

std::string counters_section(const Profile& p, const report::NumberedNotes& notes) {
  std::string out = "<section id=\"counters\"><h2>Counters</h2>\n";
  out += fmt::format("<p class=\"note\">Backend: {}{}.</p>\n", esc(p.backend.empty() ? "none" : p.backend),
                     p.group.empty() ? "" : ", group " + esc(p.group));
  if (!p.events.empty()) {
    out += "<table><thead><tr><th>event</th><th>unit</th><th>status</th><th>reason and fix</th></tr></thead><tbody>\n";
    for (const EventInfo& e : p.events) {
      const bool ok = e.status == CounterStatus::ok || e.status == CounterStatus::multiplexed;
      const auto note = notes.note_of_counter.find(e.name);
      out += fmt::format("<tr><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td></tr>\n", esc(e.name), esc(e.unit), ok ? "" : " class=\"na\"",
                         counter_status_name(e.status),
                         note != notes.note_of_counter.end() ? fmt::format("note {} at the top", note->second) : esc(e.reason));
    }
    out += "</tbody></table>\n";
  }
  if (analysis::unavailable_counters(p).empty()) out += "<p>Every counter asked for was read.</p>\n";
  out += "</section>\n";
  return out;
}

// A regions profile's call tree and per-thread totals.
std::string regions_section(const Profile& p) {
  if (!is_program_run(p.kind) || (p.call_paths.empty() && p.region_threads.empty())) return {};
  std::string out = "<section id=\"regions\"><h2>Call paths and threads</h2>\n";
  if (!p.call_paths.empty()) {
    out += "<h3>Call paths</h3><p class=\"note\">Merged over the threads; inclusive and exclusive of nested regions, over all calls.</p>\n";
    out +=
        "<table id=\"call-paths\"><thead><tr><th>path</th><th class=\"num\">calls</th><th class=\"num\">incl. ms</th>"
        "<th class=\"num\">excl. ms</th></tr></thead><tbody>\n";
    for (const CallPathRow& c : p.call_paths) {
      out += fmt::format(
          "<tr><td style=\"padding-left:{}em\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3f}</td>"
          "<td class=\"num\">{:.3f}</td></tr>\n",
          0.5 + 1.5 * c.depth, esc(c.path), c.calls, c.inclusive_ms, c.exclusive_ms);
    }
    out += "</tbody></table>\n";
  }
  if (!p.region_threads.empty()) {
    out +=
        "<h3>Per thread</h3>\n<table id=\"region-threads\"><thead><tr><th>thread</th><th>name</th><th>region</th>"
        "<th class=\"num\">calls</th><th class=\"num\">incl. ms</th><th class=\"num\">excl. ms</th></tr></thead><tbody>\n";
    for (const RegionThreadRow& r : p.region_threads) {
      out += fmt::format(
          "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3f}</td>"
          "<td class=\"num\">{:.3f}</td></tr>\n",
          r.thread, esc(r.thread_name), esc(r.region), r.calls, r.inclusive_ms, r.exclusive_ms);
    }
    out += "</tbody></table>\n";
  }
  out += "</section>\n";
  return out;
}

// Doubts about the figures, advice and unavailable counters, numbered and each said once,
// above everything else on the page; the tables refer to them by number.
std::string notes_banner(const report::NumberedNotes& notes) {
  if (notes.notes.empty()) return {};
  const bool doubts = std::any_of(notes.notes.begin(), notes.notes.end(), [](const auto& n) { return n.kind == "warning"; });
  std::string out = fmt::format("<section id=\"warnings\" class=\"banner{}\"><h2>{}</h2><ol>\n", doubts ? " warn" : "",
                                doubts ? "Read these figures with care" : "Notes");
  for (const auto& n : notes.notes) {
    out += fmt::format("<li class=\"{}\"><b>{}</b>: {}</li>\n", n.kind,
                       n.kind == "warning" ? "warning"
                       : n.kind == "hint"  ? "hint"
                                           : "not counted",
                       esc(n.text));
  }
  return out + "</ol></section>\n";
}

// The answer in one line under the title: how long a pass takes and how much is to win.
std::string answer_line(const Profile& p) {
  if (is_program_run(p.kind) || p.total.time_ms.n == 0) return {};
  std::string out =
      fmt::format("<p class=\"answer\">{} ms per {}", analysis::milliseconds(p.total.time_ms.median), p.phase == RunPhase::train ? "step" : "pass");
  if (const auto h = placement::headroom_ms(p.total)) {
    out += fmt::format(", <b>{} ms</b> ({}) of it to win at the roofs", analysis::milliseconds(h->win_ms),
                       analysis::percent(h->win_ms / p.total.time_ms.median));
  }
  return out + ".</p>\n";
}

}  // namespace

std::string html_report(const Profile& p) {
  std::string out = report::html_page_open("hwprof: " + p.model);
  if (is_program_run(p.kind)) {
    out += fmt::format("<header><h1>{} — {}</h1><p class=\"sub\">{} · {} · hwprof {}</p></header>\n", esc(p.model),
                       p.kind == ProfileKind::torch ? "hwprof::torch" : "hwprof regions", esc(report::program_threads(p)), esc(p.created),
                       esc(p.hwprof_version));
  } else {
    out += fmt::format("<header><h1>{} — hwprof profile</h1><p class=\"sub\">batch {}, {}, {} thread{} · {} · hwprof {}</p></header>\n", esc(p.model),
                       p.batch, esc(profile_phase_name(p)), p.threads, p.threads == 1 ? "" : "s", esc(p.created), esc(p.hwprof_version));
  }
  // The answer first, as in the terminal: the notes, then the layers by time to win.
  const report::NumberedNotes notes = report::numbered_notes(p);
  out += answer_line(p);
  out += notes_banner(notes);
  out += layers_section(p, notes);
  out += "<section id=\"roofline\"><h2>Roofline</h2><div class=\"svg-wrap\">\n" + report::roofline_svg(p, false) + "</div></section>\n";
  out += "<div class=\"cards\">\n" + machine_section(p) + totals_section(p) + "</div>\n";
  out += regions_section(p);
  if (!is_program_run(p.kind)) out += memory_section(p);  // a program's own regions have no cost model
  out += counters_section(p, notes);
  out += report::sampling_html_section(p);
  out += report::html_page_close(p.sampling ? std::string(kScript) + std::string(report::sampling_html_script()) : std::string(kScript));
  return out;
}

}  // namespace hwprof
