// What the two roofline pictures share (the calibration's ceilings chart and a profile's
// roofline): escaping, log–log axes with their ticks and titles, the measured ceilings with
// their labels and legend, and text boxes for placing labels without overlap.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyze/number_format.hpp"
#include "analyze/run_ceilings.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::report {

std::string xml_escape(std::string_view text);
// Three significant digits, no exponent: 0.6, 1.33, 22.5, 240, 1000.

// The opening tag: `standalone` adds the namespace a file needs; an SVG inlined in HTML
// needs none (and then refers to no URL at all).
std::string svg_open(double width, double height, bool standalone);

// A log–log plot: the data ranges and the rectangle (pixels) they map onto.
struct LogLogFrame {
  double left = 0, top = 0, width = 0, height = 0;
  double x_min = 1, x_max = 10, y_min = 1, y_max = 10;
  double px(double x) const;
  double py(double y) const;
  double right() const { return left + width; }
  double bottom() const { return top + height; }
};

// The frame of a ceilings chart in a picture of `width` × `height`: `left` and `right` pixels
// kept for the axis and the labels, 56 above for the title and 64 below for the x axis, and
// intensities from 1/16 to 256 FLOP/byte (the y range is the caller's).
LogLogFrame ceilings_frame(double width, double height, double left, double right);

// The frame, grid lines, tick labels (powers of two along x, decades along y) and the axis
// titles; the x title sits at `x_title_y`.
std::string svg_axes(const LogLogFrame& frame, double x_title_y, std::string_view x_title, std::string_view y_title);

// An axis-aligned rectangle in pixels.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool overlaps(const Box& other) const { return x0 < other.x1 && other.x0 < x1 && y0 < other.y1 && other.y0 < y1; }
  bool inside(const Box& outer) const { return x0 >= outer.x0 && x1 <= outer.x1 && y0 >= outer.y0 && y1 <= outer.y1; }
};
enum class Anchor { start, middle, end };
// The box a one-line text takes, from its anchor point and baseline. Widths are estimated
// at 0.62 em per character (DejaVu Sans and Arial average about 0.55 em), so estimates err
// on the large side; the height spans ascenders and descenders.
Box text_box(double x, double baseline, std::string_view text, double font_size, Anchor anchor);
std::string_view anchor_name(Anchor anchor);

// Roofs as horizontal lines labelled right of the frame, slopes from the frame's left or
// bottom edge up to `slope_roof` (the FMA peak) with their ridge points, and a legend of the
// slopes below the roof labels. Returns the SVG; `legend_bottom` gets the legend's last baseline.
std::string svg_ceilings(const LogLogFrame& frame, const DrawnCeilings& ceilings, double slope_roof, double* legend_bottom);

}  // namespace hwprof::report
