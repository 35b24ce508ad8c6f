#include "report/svg.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::report {

namespace {

// The length of the valid UTF-8 sequence starting at text[i], or 0 (RFC 3629: no overlong
// forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  const auto continuation = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(k) >= lo && byte(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return continuation(i + 1, lo, hi) && continuation(i + 2) && continuation(i + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Names come from files: a byte that is not UTF-8 would make the whole SVG unreadable
      // to an XML parser, so it becomes U+FFFD.
      const std::size_t n = utf8_length(text, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";
      } else {
        out.append(text.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references: drop them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') break;
        out += c;
    }
  }
  return out;
}

std::string svg_open(double width, double height, bool standalone) {
  return fmt::format(
      "<svg{2} width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height, standalone ? " xmlns=\"http://www.w3.org/2000/svg\"" : "");
}

double LogLogFrame::px(double x) const {
  return left + width * (std::log10(x) - std::log10(x_min)) / (std::log10(x_max) - std::log10(x_min));
}

double LogLogFrame::py(double y) const {
  return top + height * (1 - (std::log10(y) - std::log10(y_min)) / (std::log10(y_max) - std::log10(y_min)));
}

std::string svg_axes(const LogLogFrame& f, double x_title_y, std::string_view x_title, std::string_view y_title) {
  std::string svg =
      fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", f.left, f.top, f.width, f.height);
  // A grid line every power of two; labels every 2^step, with step the smallest power of two
  // that keeps labels at least 64 px apart.
  const double octaves = std::log2(f.x_max / f.x_min);
  const double octave_px = octaves > 0 ? f.width / octaves : f.width;
  int step = 1;
  while (step * octave_px < 64 && step < 64) step *= 2;
  for (double x = f.x_min; x <= f.x_max * 1.001; x *= 2) {
    const long exponent = std::lround(std::log2(x));
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>\n", f.px(x), f.top, f.bottom());
    if (exponent % step == 0) {
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", f.px(x), f.bottom() + 16,
                         x < 1 ? fmt::format("1/{:.0f}", 1 / x) : fmt::format("{:.0f}", x));
    }
  }
  for (double y = f.y_min; y <= f.y_max * 1.001; y *= 10) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", f.left, f.py(y), f.right(), f.py(y));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", f.left - 6, f.py(y) + 4, short_number(y));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", f.left + f.width / 2, x_title_y, xml_escape(x_title));
  svg += fmt::format("<text transform=\"translate({:.1f} {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", f.left - 58, f.top + f.height / 2,
                     xml_escape(y_title));
  return svg;
}

Box text_box(double x, double baseline, std::string_view text, double font_size, Anchor anchor) {
  std::size_t chars = 0;
  for (char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  const double w = static_cast<double>(chars) * font_size * 0.62;
  double x0 = x;
  if (anchor == Anchor::middle) x0 = x - w / 2;
  if (anchor == Anchor::end) x0 = x - w;
  return {x0, baseline - font_size * 0.95, x0 + w, baseline + font_size * 0.3};
}

std::string_view anchor_name(Anchor anchor) {
  switch (anchor) {
    case Anchor::start:
      return "start";
    case Anchor::middle:
      return "middle";
    case Anchor::end:
      return "end";
  }
  return "start";
}

std::string svg_ceilings(const LogLogFrame& f, const DrawnCeilings& ceilings, double slope_roof, double* legend_bottom) {
  std::string svg;
  // Roof labels right of the frame, pushed down where two would collide.
  std::vector<double> used_label_y;
  const auto label_y = [&](double y) {
    for (double u : used_label_y) {
      if (std::fabs(u - y) < 14) y = u + 14;
    }
    used_label_y.push_back(y);
    return y;
  };
  for (const DrawnRoof& r : ceilings.roofs) {
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#222\" stroke-width=\"1.5\"{}/>\n", f.left, f.py(r.gflops),
                       f.right(), f.py(r.gflops), r.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", r.dash));
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", f.right() + 6, label_y(f.py(r.gflops) + 4), xml_escape(r.label));
  }
  // Slopes: bandwidth × intensity up to the roof, the ridge point marked; named in a legend
  // below the roof labels, so that no text crosses a line.
  double legend_y = (used_label_y.empty() ? f.top : *std::max_element(used_label_y.begin(), used_label_y.end())) + 36;
  if (!ceilings.slopes.empty()) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-weight=\"bold\">memory (triad)</text>\n", f.right() + 6, legend_y);
  }
  for (const MemorySlope& s : ceilings.slopes) {
    const double ridge = slope_roof / s.gbps;
    const double x_start = std::max(f.x_min, f.y_min / s.gbps);
    const double x_end = std::min(f.x_max, ridge);
    if (x_start < x_end) {
      svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>\n", f.px(x_start),
                         f.py(s.gbps * x_start), f.px(x_end), f.py(s.gbps * x_end), s.color);
    }
    if (ridge <= f.x_max) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", f.px(ridge), f.py(slope_roof), s.color);
    }
    legend_y += 18;
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"3\"/>\n", f.right() + 6, legend_y - 4,
                       f.right() + 22, s.color);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", f.right() + 28, legend_y, xml_escape(s.label));
    if (ridge <= f.x_max) {
      legend_y += 14;
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\" font-size=\"11\">ridge at {} FLOP/B</text>\n", f.right() + 28, legend_y,
                         short_number(ridge));
    }
  }
  if (legend_bottom != nullptr) *legend_bottom = legend_y;
  return svg;
}

LogLogFrame ceilings_frame(double width, double height, double left, double right) {
  LogLogFrame frame;
  frame.left = left;
  frame.top = 56;
  frame.width = width - left - right;
  frame.height = height - 56 - 64;
  frame.x_min = 1.0 / 16;
  frame.x_max = 256;
  return frame;
}

}  // namespace hwprof::report
