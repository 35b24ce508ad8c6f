// The ceilings chart of a calibration: a log–log roofline with each memory level's slope, the
// FMA and GEMM roofs and the ridge points, for one run (thread count) and one precision.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hwprof/engine/machine.hpp"
#include "hwprof/engine/report.hpp"
#include "report/svg.hpp"

namespace hwprof {

std::string ceilings_svg(const Machine& machine, int threads, bool single_precision) {
  using analysis::short_number;
  using report::xml_escape;
  const CalibrationRun* run = machine.run_for(threads);
  if (run == nullptr && !machine.runs.empty()) run = &machine.runs.back();
  constexpr double kWidth = 860;
  constexpr double kHeight = 540;
  constexpr double kLeft = 80;
  constexpr double kRight = 200;  // room for the roof labels and the legend
  constexpr double kTop = 56;     // as ceilings_frame keeps it

  analysis::DrawnCeilings ceilings;
  if (run != nullptr) ceilings = analysis::ceilings_of(*run, single_precision);
  const double theoretical = single_precision ? machine.theoretical.sp_gflops : machine.theoretical.dp_gflops;
  if (theoretical > 0 && run != nullptr && run->threads == machine.theoretical.cores) {
    ceilings.roofs.push_back({"theoretical " + short_number(theoretical) + " GFLOP/s", theoretical, "2 4"});
  }
  const auto& roofs = ceilings.roofs;
  const double peak =
      roofs.empty() ? 1.0 : std::max_element(roofs.begin(), roofs.end(), [](const auto& a, const auto& b) { return a.gflops < b.gflops; })->gflops;
  const double compute_roof = roofs.empty() ? peak : roofs.front().gflops;  // the measured FMA peak
  report::LogLogFrame frame = report::ceilings_frame(kWidth, kHeight, kLeft, kRight);
  double y_min = peak;
  for (const auto& s : ceilings.slopes) y_min = std::min(y_min, s.gbps * frame.x_min);
  frame.y_min = std::pow(10.0, std::floor(std::log10(y_min)));
  frame.y_max = std::pow(10.0, std::ceil(std::log10(peak * 1.5)));

  std::string svg = report::svg_open(kWidth, kHeight, true);
  svg += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Measured ceilings — {}</text>\n", kLeft,
                     xml_escape(machine.cpu.brand));
  svg += fmt::format(
      "<text x=\"{}\" y=\"42\" fill=\"#555\">{} thread(s), {} precision, bandwidth = STREAM triad (write-allocate not counted), {}</text>\n", kLeft,
      run != nullptr ? run->threads : 0, single_precision ? "single" : "double", xml_escape(machine.created));
  svg += report::svg_axes(frame, kHeight - 20, "arithmetic intensity (FLOP/byte)", "GFLOP/s");
  svg += report::svg_ceilings(frame, ceilings, compute_roof, nullptr);
  if (run == nullptr) svg += fmt::format("<text x=\"{}\" y=\"{}\">no calibration run</text>\n", kLeft + 10, kTop + 20);
  svg += "</svg>\n";
  return svg;
}

}  // namespace hwprof
