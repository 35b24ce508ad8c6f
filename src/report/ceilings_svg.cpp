// The ceilings chart of a calibration: a log–log roofline with each memory level's slope, the
// FMA and GEMM roofs and the ridge points, for one run (thread count) and one precision.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hwprof/machine.hpp"
#include "hwprof/report.hpp"

namespace hwprof {
namespace {

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Three significant digits, no exponent: 0.6, 1.33, 22.5, 240, 1000.
std::string number(double v) {
  return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

std::string ceilings_svg(const Machine& machine, int threads, bool single_precision) {
  const CalibrationRun* run = machine.run_for(threads);
  if (run == nullptr && !machine.runs.empty()) run = &machine.runs.back();
  const char* precision = single_precision ? "sp" : "dp";
  constexpr double kWidth = 860;
  constexpr double kHeight = 540;
  constexpr double kLeft = 80;
  constexpr double kRight = 200;  // room for the roof labels and the legend
  constexpr double kTop = 56;
  constexpr double kBottom = 64;
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;

  struct Slope {
    std::string label;
    double gbps;
    const char* color;
  };
  std::vector<Slope> slopes;
  struct Roof {
    std::string label;
    double gflops;
    const char* dash;
  };
  std::vector<Roof> roofs;
  if (run != nullptr) {
    const std::pair<const char*, const char*> levels[] = {{"l1", "#1b9e77"}, {"l2", "#7570b3"}, {"l3", "#e7298a"}, {"dram", "#d95f02"}};
    for (const auto& [level, color] : levels) {
      auto it = run->bandwidth.find(level);
      if (it == run->bandwidth.end()) continue;
      const Ceiling& triad = it->second.kernels.at("triad");
      std::string name = level;
      std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
      slopes.push_back({name + " " + number(triad.best) + " GB/s" + (it->second.plateau ? "" : " (no flat plateau)"), triad.best, color});
    }
    if (auto it = run->compute.find(std::string("fma_") + precision); it != run->compute.end()) {
      roofs.push_back({"FMA peak " + number(it->second.best) + " GFLOP/s", it->second.best, ""});
    }
    if (auto it = run->compute.find(std::string("gemm_") + precision); it != run->compute.end()) {
      roofs.push_back({"GEMM " + number(it->second.best) + " GFLOP/s", it->second.best, "8 4"});
    }
  }
  const double theoretical = single_precision ? machine.theoretical.sp_gflops : machine.theoretical.dp_gflops;
  if (theoretical > 0 && run != nullptr && run->threads == machine.theoretical.cores) {
    roofs.push_back({"theoretical " + number(theoretical) + " GFLOP/s", theoretical, "2 4"});
  }
  const double peak = roofs.empty() ? 1.0 : std::max_element(roofs.begin(), roofs.end(), [](const Roof& a, const Roof& b) {
                                              return a.gflops < b.gflops;
                                            })->gflops;
  const double compute_roof = roofs.empty() ? peak : roofs.front().gflops;  // the measured FMA peak
  const double x_min = 1.0 / 16;
  const double x_max = 256;
  double y_min = peak;
  for (const Slope& s : slopes) y_min = std::min(y_min, s.gbps * x_min);
  y_min = std::pow(10.0, std::floor(std::log10(y_min)));
  const double y_max = std::pow(10.0, std::ceil(std::log10(peak * 1.5)));
  const auto px = [&](double x) { return kLeft + plot_w * (std::log10(x) - std::log10(x_min)) / (std::log10(x_max) - std::log10(x_min)); };
  const auto py = [&](double y) { return kTop + plot_h * (1 - (std::log10(y) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min))); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Measured ceilings — {}</text>\n", kLeft,
                     xml_escape(machine.cpu.brand));
  svg += fmt::format("<text x=\"{}\" y=\"42\" fill=\"#555\">{} thread(s), {} precision, bandwidth = STREAM triad (write-allocate not counted), {}</text>\n",
                     kLeft, run != nullptr ? run->threads : 0, single_precision ? "single" : "double", xml_escape(machine.created));
  // Grid and axes.
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", kLeft, kTop, plot_w, plot_h);
  for (double x = x_min; x <= x_max * 1.001; x *= 2) {
    const bool major = std::fabs(std::log2(x) - std::round(std::log2(x) / 2) * 2) < 1e-9;
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", px(x), kTop, kTop + plot_h);
    if (major) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", px(x), kTop + plot_h + 16,
                         x < 1 ? fmt::format("1/{:.0f}", 1 / x) : fmt::format("{:.0f}", x));
    }
  }
  for (double y = y_min; y <= y_max * 1.001; y *= 10) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", kLeft, py(y), kLeft + plot_w, py(y));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, py(y) + 4, number(y));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n", kLeft + plot_w / 2,
                     kHeight - 20);
  svg += fmt::format("<text transform=\"translate(22 {:.1f}) rotate(-90)\" text-anchor=\"middle\">GFLOP/s</text>\n", kTop + plot_h / 2);
  // Roofs: horizontal lines labelled at the right.
  std::vector<double> used_label_y;
  const auto label_y = [&](double y) {
    for (double u : used_label_y) {
      if (std::fabs(u - y) < 14) y = u + 14;
    }
    used_label_y.push_back(y);
    return y;
  };
  for (const Roof& r : roofs) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#222\" stroke-width=\"1.5\"{}/>\n", kLeft,
                       py(r.gflops), kLeft + plot_w, py(r.gflops), r.dash[0] ? fmt::format(" stroke-dasharray=\"{}\"", r.dash) : "");
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLeft + plot_w + 6, label_y(py(r.gflops) + 4), xml_escape(r.label));
  }
  // Slopes: bandwidth × intensity up to the FMA roof, with the ridge point marked; named in a
  // legend below the roof labels, so that no text crosses a line.
  double legend_y = (used_label_y.empty() ? kTop : *std::max_element(used_label_y.begin(), used_label_y.end())) + 36;
  svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-weight=\"bold\">memory (triad)</text>\n", kLeft + plot_w + 6, legend_y);
  for (const Slope& s : slopes) {
    const double ridge = compute_roof / s.gbps;
    const double x_end = std::min(x_max, ridge);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>\n", px(x_min),
                       py(s.gbps * x_min), px(x_end), py(s.gbps * x_end), s.color);
    if (ridge <= x_max) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", px(ridge), py(compute_roof), s.color);
    }
    legend_y += 18;
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"3\"/>\n",
                       kLeft + plot_w + 6, legend_y - 4, kLeft + plot_w + 22, s.color);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLeft + plot_w + 28, legend_y, xml_escape(s.label));
    if (ridge <= x_max) {
      legend_y += 14;
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\" font-size=\"11\">ridge at {} FLOP/B</text>\n",
                         kLeft + plot_w + 28, legend_y, number(ridge));
    }
  }
  if (run == nullptr) svg += fmt::format("<text x=\"{}\" y=\"{}\">no calibration run</text>\n", kLeft + 10, kTop + 20);
  svg += "</svg>\n";
  return svg;
}

}  // namespace hwprof
