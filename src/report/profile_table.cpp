// `hwprof profile` for a terminal and for spreadsheets: the per-layer table (modelled on
// torch.profiler's key_averages().table(): one row per layer, sortable, top K) and the CSV.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hwprof/report.hpp"
#include "report/number_format.hpp"
#include "report/profile_view.hpp"

namespace hwprof {
namespace {

using detail::LayerNumbers;

std::string ms(double v) { return detail::milliseconds(v); }

// Rates and ratios: three significant digits, no exponent.
std::string rate(double v) {
  if (v >= 1000) return fmt::format("{:.0f}", v);
  if (v >= 100) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  if (v >= 0.001) return fmt::format("{:.3f}", v);
  return v == 0 ? "0" : fmt::format("{:.2e}", v);
}

std::string optional_rate(const std::optional<double>& v) { return v ? rate(*v) : "-"; }

bool counter_readable(CounterStatus s) { return s == CounterStatus::ok || s == CounterStatus::multiplexed; }

// A plain text table: left-aligned text columns, right-aligned numbers, two spaces apart.
class TextTable {
 public:
  void column(std::string title, bool right) {
    const std::size_t w = width(title);
    columns_.push_back({std::move(title), right, w});
  }
  void row(std::vector<std::string> cells) {
    for (std::size_t k = 0; k < cells.size() && k < columns_.size(); ++k) columns_[k].width = std::max(columns_[k].width, width(cells[k]));
    rows_.push_back(std::move(cells));
  }
  void rule() { rows_.emplace_back(); }
  std::string render() const {
    std::string out = line_of([&](std::size_t k) { return columns_[k].title; });
    out += std::string(total_width(), '-') + "\n";
    for (const auto& r : rows_) {
      if (r.empty()) {
        out += std::string(total_width(), '-') + "\n";
        continue;
      }
      out += line_of([&](std::size_t k) { return k < r.size() ? r[k] : std::string(); });
    }
    return out;
  }

 private:
  struct Column {
    std::string title;
    bool right = false;
    std::size_t width = 0;
  };
  // Display width: UTF-8 continuation bytes take no column.
  static std::size_t width(const std::string& s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
  }
  std::size_t total_width() const {
    std::size_t w = 0;
    for (const Column& c : columns_) w += c.width + 2;
    return w > 2 ? w - 2 : 0;
  }
  template <class CellOf>
  std::string line_of(CellOf cell_of) const {
    std::string s;
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const std::string text = cell_of(k);
      const std::size_t pad = columns_[k].width - std::min(columns_[k].width, width(text));
      if (k) s += "  ";
      s += columns_[k].right ? std::string(pad, ' ') + text : text + std::string(pad, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  }
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

bool has_phases(const Profile& p) {
  return p.phase == "train" || std::any_of(p.layers.begin(), p.layers.end(), [](const LayerProfile& l) { return l.phase != "forward"; });
}

std::vector<const LayerProfile*> sorted_layers(const Profile& p, ProfileSort sort) {
  std::vector<const LayerProfile*> rows;
  for (const LayerProfile& l : p.layers) rows.push_back(&l);
  std::stable_sort(rows.begin(), rows.end(), [sort](const LayerProfile* a, const LayerProfile* b) {
    switch (sort) {
      case ProfileSort::time: return a->time_ms.median > b->time_ms.median;
      case ProfileSort::flops: return a->flops > b->flops;
      case ProfileSort::name: return a->name < b->name;
    }
    return false;
  });
  return rows;
}

// "±0.012" from the 95% confidence interval of the median; without one (fewer than 6
// samples), half the min–max range, marked with † and explained in a note.
std::string uncertainty(const Summary& s, bool* used_range) {
  if (s.n == 0) return "-";
  if (s.has_median_ci()) return "±" + ms((s.median_ci_high - s.median_ci_low) / 2);
  *used_range = true;
  return "±" + ms((s.max - s.min) / 2) + "†";
}

std::string header(const Profile& p) {
  std::string out = fmt::format("hwprof profile: {}, batch {}, {}{}, {} thread{}\n", p.model, p.batch, p.phase,
                                p.phase == "train" && !p.optimizer.empty() ? " (" + p.optimizer + ")" : "", p.threads,
                                p.threads == 1 ? "" : "s");
  // Doubts about the figures come first: a reader who stops at the first lines has seen them.
  for (const std::string& w : p.warnings) out += "WARNING: " + w + "\n";
  const MachineCpu& cpu = p.machine.cpu;
  out += fmt::format("Machine: {}{} ({} cores{}); ", p.machine.host.empty() ? "" : p.machine.host + ", ", cpu.brand, cpu.cores,
                     cpu.hypervisor ? ", virtual machine" : "");
  if (p.machine.ceilings) {
    out += fmt::format("ceilings measured by `hwprof calibrate` {}{}{}\n", p.machine.calibration_created, p.machine.calibration_quick ? " (quick)" : "",
                       p.machine.calibration_file.empty() ? "" : " in " + p.machine.calibration_file);
  } else {
    out += fmt::format("no calibration for {} thread{}: no roofline (run `hwprof calibrate`)\n", p.threads, p.threads == 1 ? "" : "s");
  }
  if (!p.machine.blas_core.empty()) out += fmt::format("BLAS:     OpenBLAS core {} ({})\n", p.machine.blas_core, p.machine.blas_core_source);
  const bool regions = p.phase == "regions";
  out += fmt::format(
      "Measured: time per call ({}, the session's own {:.0f} ns per region subtracted){}\n",
      regions ? "median over each region's calls, inclusive of the regions nested in it"
              : fmt::format("median of {} iterations after {} warm-up runs", p.iterations, p.warmup_runs),
      p.overhead_ns,
      p.backend.empty() ? ""
                        : fmt::format("; counters ({} backend{}){}", p.backend, p.group.empty() ? "" : ", group " + p.group,
                                      p.counter_iterations > 0
                                          ? fmt::format(" summed over {} passes of their own, which are not timed", p.counter_iterations)
                                          : ""));
  out += regions ? "Given:    FLOPs and bytes per call, as the program stated them (HWPROF_SCOPE_WORK, set_work)\n"
                 : "Analytic: FLOPs and the minimum bytes per call (whole batch), from shapes by the cost model\n";
  out += "Bytes:    " + detail::bytes_source_summary(p) + "\n";
  out += regions ? "Derived:  Share = the region's time over all calls / the time in the outermost regions (a nested region's share "
                   "is also in its parent's); GFLOP/s"
                 : "Derived:  Share = median / the layers' summed medians; GFLOP/s and GB/s = FLOPs and bytes / median time; FLOP/B = FLOPs / bytes";
  out += p.machine.ceilings ? "; Eff. = achieved / attainable under the measured roofline, whose memory roof is the calibrated "
                              "bandwidth at the layer's working set for analytic bytes (DRAM's for counted ones); the model's "
                              "is its layers' roofline times over its own\n"
                            : "\n";
  return out;
}

// Hints (advice) print before any table, after the header's warnings.
std::string before_tables(const Profile& p) {
  std::string out;
  for (const std::string& h : p.hints) out += "hint: " + h + "\n";
  return out;
}

}  // namespace

// A regions profile's per-thread totals and call tree, after the main table.
static std::string regions_sections(const Profile& p) {
  if (p.phase != "regions") return {};
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
      out += fmt::format("{:>6} {:<16} {:<32} {:>10} {:>12.3f} {:>12.3f}\n", r.thread, r.thread_name, r.region, r.calls, r.inclusive_ms,
                         r.exclusive_ms);
    }
  }
  return out;
}

static std::string layers_table(const Profile& p, ProfileSort sort, int top) {
  const bool phases = has_phases(p);
  std::vector<const LayerProfile*> rows = sorted_layers(p, sort);
  std::size_t shown = rows.size();
  if (top > 0 && static_cast<std::size_t>(top) < rows.size()) shown = static_cast<std::size_t>(top);

  TextTable t;
  t.column("Layer", false);
  t.column("Op", false);
  if (phases) t.column("Phase", false);
  t.column("Time ms", true);
  t.column("±95% CI", true);
  t.column("Share", true);
  t.column("GFLOP/s", true);
  t.column("GB/s", true);
  t.column("FLOP/B", true);
  t.column("Bound", false);
  t.column("Eff.", true);
  bool used_range = false;
  bool below_resolution = false;
  const auto cells = [&](const LayerProfile& l, const std::string& name, const std::string& share) {
    const LayerNumbers n = detail::layer_numbers(l);
    std::vector<std::string> c = {name, l.op};
    if (phases) c.push_back(l.phase);
    below_resolution = below_resolution || l.below_resolution;
    c.push_back((l.below_resolution ? "~" : "") + (l.time_ms.n ? ms(l.time_ms.median) : std::string("-")));
    c.push_back(uncertainty(l.time_ms, &used_range));
    c.push_back(share);
    c.push_back(optional_rate(n.gflops_per_s));
    c.push_back(optional_rate(n.gbytes_per_s));
    c.push_back(optional_rate(n.intensity));
    c.push_back(n.bound ? std::string(bound_name(*n.bound)) : "-");
    c.push_back(n.efficiency ? detail::percent(*n.efficiency) : "-");
    return c;
  };
  // A regions profile's regions nest, so their medians do not add up: each region's share is
  // its time over all calls against the outermost regions' (Profile time_share).
  const bool regions = p.phase == "regions";
  const double layers_ms = detail::summed_layer_ms(p);
  for (std::size_t i = 0; i < shown; ++i) {
    const double share = regions ? rows[i]->time_share : detail::share_of(*rows[i], layers_ms);
    t.row(cells(*rows[i], detail::display_name(*rows[i]), detail::percent(share)));
  }
  t.rule();
  t.row(cells(p.total, regions ? "program total (all calls)" : "model total", p.total.time_ms.n ? "100.0%" : "-"));

  std::string out = header(p) + before_tables(p) + "\n" + t.render();
  if (shown < rows.size()) {
    double rest = 0;
    double all = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      all += rows[i]->time_ms.median;
      if (i >= shown) rest += rows[i]->time_ms.median;
    }
    out += fmt::format("... {} more rows ({} of the layers' summed time); --top 0 shows every row\n", rows.size() - shown,
                       detail::percent(all > 0 ? rest / all : 0));
  }
  if (below_resolution) out += "~ below resolution: the median is shorter than 100x the measurement's own cost; read it as an upper bound\n";
  if (used_range) out += "† fewer than 6 samples: no 95% interval for the median, ± is half the min-max range\n";
  if (!p.total.roofline_error.empty()) out += "Roofline: " + p.total.roofline_error + "\n";

  // Counters and metrics per call, one column each, in the order the group lists them.
  std::vector<std::string> names;
  const auto add_name = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const EventInfo& e : p.events) add_name(e.name);
  for (const LayerProfile* l : rows) {
    for (const LayerCounter& c : l->counters) add_name(c.name);
  }
  std::vector<std::string> metric_names;
  for (const LayerProfile* l : rows) {
    for (const LayerMetric& m : l->metrics) {
      if (std::find(metric_names.begin(), metric_names.end(), m.name) == metric_names.end()) metric_names.push_back(m.name);
    }
  }
  if (names.empty() && metric_names.empty()) return out;

  const std::vector<detail::UnavailableCounter> unavailable = detail::unavailable_counters(p);
  std::map<std::string, int> footnote;  // counter or metric name → its note number
  std::vector<std::string> notes;
  const auto note_for = [&](const std::string& name, const std::string& text) {
    auto [it, inserted] = footnote.emplace(name, static_cast<int>(notes.size()) + 1);
    if (inserted) notes.push_back(text);
    return it->second;
  };
  const auto reason_of = [&](const std::string& name, CounterStatus status, const std::string& own_reason) {
    std::string reason = own_reason;
    for (const auto& u : unavailable) {
      if (u.name == name && reason.empty()) reason = u.reason;
    }
    return fmt::format("{}: {}{}", name, counter_status_name(status), reason.empty() ? "" : " - " + reason);
  };
  std::map<std::string, double> lowest_fraction;  // multiplexed counters: the least time any layer's reading ran
  bool any_below = false;

  TextTable c;
  c.column("Layer", false);
  if (phases) c.column("Phase", false);
  for (const std::string& n : names) c.column(detail::counter_title(p, n), true);
  for (const std::string& n : metric_names) c.column(n, true);
  const auto counter_cells = [&](const LayerProfile& l, const std::string& name) {
    std::vector<std::string> r = {name};
    if (phases) r.push_back(l.phase);
    for (const std::string& n : names) {
      auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const LayerCounter& lc) { return lc.name == n; });
      if (it == l.counters.end()) {
        // Not recorded for this layer: the event's own status says why, if it failed.
        auto e = std::find_if(p.events.begin(), p.events.end(), [&](const EventInfo& ev) { return ev.name == n; });
        if (e != p.events.end() && !counter_readable(e->status)) {
          r.push_back(fmt::format("n/a[{}]", note_for(n, reason_of(n, e->status, e->reason))));
        } else {
          r.push_back("-");
        }
      } else if (!it->value) {
        r.push_back(fmt::format("n/a[{}]", note_for(n, reason_of(n, it->status, it->reason))));
      } else {
        std::string v = (it->below_resolution ? "~" : "") + detail::si(*it->value);
        while (!v.empty() && v.back() == ' ') v.pop_back();
        if (it->below_resolution) any_below = true;
        if (it->status == CounterStatus::multiplexed) {
          v += "*";
          auto [f, inserted] = lowest_fraction.emplace(n, it->running_fraction);
          if (!inserted) f->second = std::min(f->second, it->running_fraction);
        }
        r.push_back(v);
      }
    }
    for (const std::string& n : metric_names) {
      auto it = std::find_if(l.metrics.begin(), l.metrics.end(), [&](const LayerMetric& m) { return m.name == n; });
      if (it == l.metrics.end()) {
        r.push_back("-");
      } else if (!it->value) {
        r.push_back(fmt::format("n/a[{}]", note_for(n, n + ": not available" + (it->reason.empty() ? "" : " - " + it->reason))));
      } else {
        r.push_back(*it->value >= 0 ? rate(*it->value) : fmt::format("{:.3g}", *it->value));
      }
    }
    return r;
  };
  for (std::size_t i = 0; i < shown; ++i) c.row(counter_cells(*rows[i], detail::display_name(*rows[i])));
  if (!p.total.counters.empty() || !p.total.metrics.empty()) {
    c.rule();
    c.row(counter_cells(p.total, "model total"));
  }
  out += "\nCounters per call (measured; * multiplexed: scaled from part of the interval; n/a: not available, see the notes)\n";
  out += c.render();
  for (std::size_t i = 0; i < notes.size(); ++i) out += fmt::format("[{}] {}\n", i + 1, notes[i]);
  for (const auto& [name, fraction] : lowest_fraction) {
    out += fmt::format("* {}: multiplexed, counted {} of the time at worst; values are scaled to the whole interval\n", name,
                       detail::percent(fraction));
  }
  if (any_below) out += fmt::format("~ {}\n", detail::kCounterBelowResolution);
  return out;
}

std::string profile_csv(const Profile& p) {
  const auto quote = [](const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return out + "\"";
  };
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
      "time_share,below_resolution,gflops_per_s,gbytes_per_s,intensity,attainable_gflops_per_s,efficiency,bound";
  for (const std::string& c : counters) out += "," + quote(c) + "," + quote(c + ".status");
  for (const std::string& m : metrics) out += "," + quote(m);
  out += "\n";
  for (const LayerProfile& l : p.layers) {
    const LayerNumbers n = detail::layer_numbers(l);
    std::string shape;
    for (std::size_t i = 0; i < l.output_shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(l.output_shape[i]);
    const Summary& s = l.time_ms;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},", l.index, quote(l.name), quote(l.op), quote(l.phase), shape, l.params, l.macs,
                       l.flops, num(n.bytes.value), value_source_name(n.bytes.source), bytes_origin_name(n.bytes_origin), l.bytes);
    out += fmt::format("{},{},{},{},{},{},{},{},{},", num(s.median), num(s.mean), num(s.min), num(s.max), num(s.p95), num(s.p99), s.n,
                       s.has_median_ci() ? num(s.median_ci_low) : "", s.has_median_ci() ? num(s.median_ci_high) : "");
    out += fmt::format("{},{},{},{},{},{},{},{}", num(l.time_share), l.below_resolution ? "true" : "false", opt(n.gflops_per_s),
                       opt(n.gbytes_per_s), opt(n.intensity), opt(n.attainable_gflops_per_s), opt(n.efficiency),
                       n.bound ? std::string(bound_name(*n.bound)) : "");
    for (const std::string& name : counters) {
      auto it = std::find_if(l.counters.begin(), l.counters.end(), [&](const LayerCounter& c) { return c.name == name; });
      if (it != l.counters.end()) {
        out += "," + opt(it->value) + "," + std::string(counter_status_name(it->status));
      } else {
        auto e = std::find_if(p.events.begin(), p.events.end(), [&](const EventInfo& ev) { return ev.name == name; });
        out += ",," + (e != p.events.end() && !counter_readable(e->status) ? std::string(counter_status_name(e->status)) : "");
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

std::string profile_table(const Profile& p, ProfileSort sort, int top) { return layers_table(p, sort, top) + regions_sections(p); }

}  // namespace hwprof
