#include "report/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/json_number.hpp"
#include "report/svg.hpp"

namespace hwprof::detail {
namespace {

// The rows compared: a ceiling of a run, by where it is kept.
struct Row {
  const char* label;
  const char* unit;
  bool bandwidth;  // bandwidth[level].kernels["triad"] (level in key); else compute[key]
  const char* key;
};

constexpr Row kRows[] = {
    {"L1 triad", "GB/s", true, "l1"},
    {"L2 triad", "GB/s", true, "l2"},
    {"L3 triad", "GB/s", true, "l3"},
    {"DRAM triad", "GB/s", true, "dram"},
    {"FMA peak SP", "GFLOP/s", false, "fma_sp"},
    {"FMA peak DP", "GFLOP/s", false, "fma_dp"},
    {"GEMM SP", "GFLOP/s", false, "gemm_sp"},
    {"GEMM DP", "GFLOP/s", false, "gemm_dp"},
    {"tanh kernel", "Geval/s", false, "tanh_sp"},
    {"exp kernel", "Geval/s", false, "exp_sp"},
    {"erf kernel", "Geval/s", false, "erf_sp"},
};

std::optional<double> value_of(const CalibrationRun* run, const Row& row) {
  if (run == nullptr) return std::nullopt;
  if (row.bandwidth) {
    const auto level = run->bandwidth.find(row.key);
    if (level == run->bandwidth.end()) return std::nullopt;
    const auto triad = level->second.kernels.find("triad");
    if (triad == level->second.kernels.end() || triad->second.best <= 0) return std::nullopt;
    return triad->second.best;
  }
  const auto c = run->compute.find(row.key);
  if (c == run->compute.end() || c->second.best <= 0) return std::nullopt;
  return c->second.best;
}

// The one-thread run, and the run with the most threads (all cores, as calibrate makes it).
const CalibrationRun* single_run(const Machine& m) {
  return m.run_for(1);
}
const CalibrationRun* widest_run(const Machine& m) {
  const CalibrationRun* best = nullptr;
  for (const CalibrationRun& r : m.runs) {
    if (best == nullptr || r.threads > best->threads) best = &r;
  }
  return best;
}

std::string letter(std::size_t i) {
  return i < 26 ? std::string(1, static_cast<char>('A' + i)) : std::to_string(i + 1);
}

std::string cache_text(const Machine& m) {
  std::string out;
  for (const CacheInfo& c : m.cpu.caches) {
    if (!out.empty()) out += ", ";
    out += fmt::format("L{} {}", c.level,
                       c.size_bytes >= (1 << 20) ? fmt::format("{:g} MiB", c.size_bytes / 1048576.0) : fmt::format("{} KiB", c.size_bytes / 1024));
  }
  return out.empty() ? "-" : out;
}

// Colours that stay apart for the first machines (then they repeat).
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

}  // namespace

std::string fleet_table(const std::vector<FleetMachine>& machines) {
  std::string out = fmt::format("hwprof compare: {} machine calibrations (ratios to A)\n\n", machines.size());
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i].machine;
    out +=
        fmt::format("{}: {} — {} ({} cores, {} logical CPUs{}), calibrated {}{}{}\n   {}\n   caches: {}\n", letter(i), m.host.empty() ? "-" : m.host,
                    m.cpu.brand, m.cpu.cores, m.cpu.logical_cpus, m.cpu.hypervisor ? ", virtual machine" : "", m.created, m.quick ? " (quick)" : "",
                    m.contention.contended ? ", CONTENDED: ceilings too low" : "", machines[i].file, cache_text(m));
  }
  for (const bool wide : {false, true}) {
    std::vector<const CalibrationRun*> runs;
    for (const FleetMachine& f : machines) runs.push_back(wide ? widest_run(f.machine) : single_run(f.machine));
    std::string title = wide ? "All cores" : "1 thread";
    out += fmt::format("\n{:<14}", title);
    for (std::size_t i = 0; i < machines.size(); ++i) {
      out += fmt::format("  {:>20}", letter(i) + (wide && runs[i] != nullptr ? fmt::format(" ({} thr)", runs[i]->threads) : ""));
    }
    out += "\n";
    for (const Row& row : kRows) {
      std::string line = fmt::format("{:<14}", row.label);
      bool any = false;
      const std::optional<double> base = value_of(runs[0], row);
      for (std::size_t i = 0; i < machines.size(); ++i) {
        const std::optional<double> v = value_of(runs[i], row);
        any = any || v.has_value();
        std::string cell = v ? fmt::format("{:.3g} {}", *v, row.unit) : std::string("-");
        if (i > 0 && v && base && *base > 0) cell += fmt::format(" {:.2f}x", *v / *base);
        line += fmt::format("  {:>20}", cell);
      }
      if (any) out += line + "\n";
    }
  }
  out += "\n(x: the ratio to A's ceiling on the same row; '-': not measured there. Bandwidth is STREAM triad, decimal GB/s.)\n";
  return out;
}

std::string fleet_json(const std::vector<FleetMachine>& machines) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i].machine;
    nlohmann::ordered_json e;
    e["label"] = letter(i);
    e["file"] = machines[i].file;
    e["host"] = m.host;
    e["cpu"] = m.cpu.brand;
    e["cores"] = m.cpu.cores;
    e["contended"] = m.contention.contended;
    for (const bool wide : {false, true}) {
      const CalibrationRun* run = wide ? widest_run(m) : single_run(m);
      const CalibrationRun* base = wide ? widest_run(machines[0].machine) : single_run(machines[0].machine);
      nlohmann::ordered_json r;
      r["threads"] = run != nullptr ? nlohmann::ordered_json(run->threads) : nlohmann::ordered_json(nullptr);
      for (const Row& row : kRows) {
        const auto v = value_of(run, row);
        const auto b = value_of(base, row);
        r[row.key] = {{"value", json_number(v)},
                      {"unit", row.unit},
                      {"ratio_to_first", json_number(v && b && *b > 0 ? std::optional<double>(*v / *b) : std::nullopt)}};
      }
      e[wide ? "all_cores" : "one_thread"] = std::move(r);
    }
    j.push_back(std::move(e));
  }
  return j.dump(2) + "\n";
}

std::string fleet_svg(const std::vector<FleetMachine>& machines) {
  constexpr double kWidth = 860;
  constexpr double kHeight = 540;
  constexpr double kLeft = 80;
  LogLogFrame frame = ceilings_frame(kWidth, kHeight, kLeft, 230);
  double peak = 1;
  double floor = 1e30;
  for (const FleetMachine& f : machines) {
    const CalibrationRun* run = widest_run(f.machine);
    const auto fma = value_of(run, kRows[4]);
    const auto dram = value_of(run, kRows[3]);
    if (fma) peak = std::max(peak, *fma);
    if (dram) floor = std::min(floor, *dram * frame.x_min);
  }
  if (floor > peak) floor = peak / 100;
  frame.y_min = std::pow(10.0, std::floor(std::log10(floor)));
  frame.y_max = std::pow(10.0, std::ceil(std::log10(peak * 1.5)));
  std::string svg = svg_open(kWidth, kHeight, true);
  svg +=
      fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Measured rooflines of {} machines</text>\n", kLeft, machines.size());
  svg += fmt::format("<text x=\"{}\" y=\"42\" fill=\"#555\">all cores, single precision: DRAM triad slope up to the FMA peak</text>\n", kLeft);
  svg += svg_axes(frame, kHeight - 20, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const CalibrationRun* run = widest_run(machines[i].machine);
    const auto fma = value_of(run, kRows[4]);
    const auto dram = value_of(run, kRows[3]);
    const char* colour = kColours[i % std::size(kColours)];
    const double legend_y = frame.top + 16 + 34 * static_cast<double>(i);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" font-weight=\"bold\">{}: {}</text>\n", frame.right() + 12, legend_y, colour, letter(i),
                       xml_escape(machines[i].machine.host.empty() ? machines[i].file : machines[i].machine.host));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" font-size=\"11\">{}</text>\n", frame.right() + 12, legend_y + 14,
                       xml_escape(machines[i].machine.cpu.brand.substr(0, 34)));
    if (!fma || !dram) continue;
    const double ridge = *fma / *dram;
    const double x0 = frame.x_min;
    const double x_ridge = std::clamp(ridge, frame.x_min, frame.x_max);
    svg +=
        fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>\n", colour,
                    frame.px(x0), frame.py(*dram * x0), frame.px(x_ridge), frame.py(std::min(*fma, *dram * x_ridge)), frame.right(), frame.py(*fma));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" font-size=\"11\">{} {} GFLOP/s, {} GB/s</text>\n", frame.px(x_ridge) + 4,
                       frame.py(*fma) - 4, colour, letter(i), short_number(*fma), short_number(*dram));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hwprof::detail
