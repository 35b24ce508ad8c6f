// Machine reports' rooflines in one picture: each machine's all-cores DRAM slope up to its FMA
// peak, single precision, one colour per machine, on shared log–log axes.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "report/fleet.hpp"
#include "report/svg.hpp"

namespace hwprof::report {
namespace {

// Colours that stay apart for the first machines (then they repeat).
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

}  // namespace

std::string fleet_svg(const FleetComparison& fleet) {
  const std::vector<FleetMachine>& machines = fleet.machines;
  const FleetCeiling* fma_row = fleet.all_cores.find("fma_sp");
  const FleetCeiling* dram_row = fleet.all_cores.find("dram");
  constexpr double kWidth = 860;
  constexpr double kHeight = 540;
  constexpr double kLeft = 80;
  LogLogFrame frame = ceilings_frame(kWidth, kHeight, kLeft, 230);
  double peak = 1;
  double floor = 1e30;
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const std::optional<double> fma = fma_row->values[i];
    const std::optional<double> dram = dram_row->values[i];
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
    const std::optional<double> fma = fma_row->values[i];
    const std::optional<double> dram = dram_row->values[i];
    const char* colour = kColours[i % std::size(kColours)];
    const double legend_y = frame.top + 16 + 34 * static_cast<double>(i);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" font-weight=\"bold\">{}: {}</text>\n", frame.right() + 12, legend_y, colour,
                       fleet.labels[i], xml_escape(machines[i].machine.host.empty() ? machines[i].file : machines[i].machine.host));
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
                       frame.py(*fma) - 4, colour, fleet.labels[i], short_number(*fma), short_number(*dram));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hwprof::report
