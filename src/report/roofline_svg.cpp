// A profile's roofline (Williams, Waterman & Patterson, CACM 2009): every layer with FLOPs at
// (arithmetic intensity, achieved GFLOP/s) under the ceilings `hwprof calibrate` measured on
// this machine. Colour says what bounds the layer, area says how much of the time it takes,
// and the layers that take the most time are named, so that the ones worth a look stand out.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analyze/number_format.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/report.hpp"
#include "report/profile_view.hpp"
#include "report/svg.hpp"

namespace hwprof {
namespace {

using report::Anchor;
using report::Box;
using report::xml_escape;

constexpr double kWidth = 1000;
constexpr double kLeft = 86;
constexpr double kRight = 260;  // the roof labels and the legend
constexpr double kTop = 62;
constexpr double kPlotHeight = 470;
constexpr double kLabelFont = 11;
constexpr int kLabelledLayers = 8;
constexpr int kLabelledByGain = 4;  // of them, named for the time they could win
constexpr double kMaxRadius = 36;
constexpr double kMinRadius = 3;

struct Point {
  const LayerProfile* layer = nullptr;
  analysis::LayerNumbers numbers;
  double share = 0;  // the row's share (row_share): a layer's of the summed medians, a program row's of its time
  double cx = 0, cy = 0, r = 0;
  bool on_roof = false;  // achieved above the highest roof (within its uncertainty): drawn on it
};

const char* bound_color(const std::optional<Bound>& bound) {
  if (!bound) return "#5b7a99";
  switch (*bound) {
    case Bound::compute:
      return "#1f5fa8";
    case Bound::memory:
      return "#c0392b";
    case Bound::overhead:
      return "#8a8a8a";
  }
  return "#5b7a99";
}

// Greedy word wrap at `width` characters.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string names_list(const std::vector<std::string>& names, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max) out += fmt::format(" and {} more", names.size() - max);
  return out;
}

// Places labels one by one, each at the first candidate spot (beside its point, then
// further out with a leader line) that stays inside the frame and overlaps neither an
// earlier label nor its own point. A first pass also keeps clear of every other point's
// disc and of the roof lines; where that finds no room, a second pass only keeps clear of
// the other points' centres, so that no point is hidden under a label.
class LabelPlacer {
 public:
  LabelPlacer(Box frame, std::vector<Box> bodies, std::vector<Box> centres)
      : frame_(frame), bodies_(std::move(bodies)), centres_(std::move(centres)) {}

  struct Placed {
    double x = 0, baseline = 0;
    Anchor anchor = Anchor::start;
    Box box;
    bool detached = false;  // away from its point: draw a leader line
  };

  std::optional<Placed> place(const std::string& text, double cx, double cy, double r) {
    for (bool strict : {true, false}) {
      if (auto placed = try_place(text, cx, cy, r, strict)) {
        placed_.push_back(placed->box);
        return placed;
      }
    }
    return std::nullopt;
  }

 private:
  std::optional<Placed> try_place(const std::string& text, double cx, double cy, double r, bool strict) const {
    const Box own{cx - r, cy - r, cx + r, cy + r};
    const Box inset{frame_.x0 + 2, frame_.y0 + 2, frame_.x1 - 2, frame_.y1 - 2};
    const double diagonal = r * 0.71;
    for (double d : {3.0, 12.0, 24.0, 40.0, 60.0, 84.0}) {
      const Placed candidates[] = {
          {cx + r + d, cy + 4, Anchor::start, {}, d > 3},
          {cx - r - d, cy + 4, Anchor::end, {}, d > 3},
          {cx, cy - r - d - 3, Anchor::middle, {}, d > 3},
          {cx, cy + r + d + 10, Anchor::middle, {}, d > 3},
          {cx + diagonal + d, cy - diagonal - d, Anchor::start, {}, true},
          {cx + diagonal + d, cy + diagonal + d + 8, Anchor::start, {}, true},
          {cx - diagonal - d, cy - diagonal - d, Anchor::end, {}, true},
          {cx - diagonal - d, cy + diagonal + d + 8, Anchor::end, {}, true},
      };
      for (Placed c : candidates) {
        c.box = report::text_box(c.x, c.baseline, text, kLabelFont, c.anchor);
        if (!c.box.inside(inset) || c.box.overlaps(own)) continue;
        const auto clash = [&](const Box& b) { return c.box.overlaps(b); };
        if (std::any_of(placed_.begin(), placed_.end(), clash) || std::any_of(centres_.begin(), centres_.end(), clash)) continue;
        if (strict && std::any_of(bodies_.begin(), bodies_.end(), clash)) continue;
        return c;
      }
    }
    return std::nullopt;
  }

  Box frame_;
  std::vector<Box> bodies_;   // other points' discs, the roof lines: avoided where there is room
  std::vector<Box> centres_;  // other points' centres: always avoided
  std::vector<Box> placed_;
};

std::string leader_line(const LabelPlacer::Placed& label, double cx, double cy, double r) {
  const double nx = std::clamp(cx, label.box.x0, label.box.x1);
  const double ny = std::clamp(cy, label.box.y0, label.box.y1);
  const double dist = std::hypot(nx - cx, ny - cy);
  if (dist < r + 6) return {};
  const double sx = cx + (nx - cx) * r / dist;
  const double sy = cy + (ny - cy) * r / dist;
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#666\" stroke-width=\"0.8\"/>\n", sx, sy, nx, ny);
}

// A program's row: its calls and time per step (or over the run) before its call's.
std::string program_row_words(const Profile& p, const LayerProfile& l, double share) {
  const char* per = report::per_step(p) ? "per step" : "over the run";
  if (l.index < 0) return fmt::format("{}: {} ms {} in its rows", analysis::display_name(l), analysis::milliseconds(placement::row_ms(l)), per);
  return fmt::format("{} ({}): {} calls {}, {} ms {} ({} of the program's time), {} ms per call", analysis::display_name(l), l.op,
                     report::calls_text(placement::calls_per_basis(l)), per, analysis::milliseconds(placement::row_ms(l)), per,
                     analysis::percent(share), analysis::milliseconds(l.time_ms.median));
}

std::string tooltip(const Profile& p, const LayerProfile& l, const analysis::LayerNumbers& n, double share, bool on_roof) {
  std::string t = is_program_run(p.kind) ? program_row_words(p, l, share)
                                         : fmt::format("{} ({}): {} ms per call, {} of the layers' time", analysis::display_name(l), l.op,
                                                       analysis::milliseconds(l.time_ms.median), analysis::percent(share));
  if (n.gflops_per_s) t += fmt::format("; {}{:.3g} GFLOP/s", l.work_partial.empty() ? "" : "at least ", *n.gflops_per_s);
  if (on_roof) t += " (above the highest roof, within its measurement's uncertainty: drawn on the roof)";
  if (n.intensity) t += fmt::format(" at {:.3g} FLOP/B", *n.intensity);
  if (n.bound) t += fmt::format("; {}-bound", bound_name(*n.bound));
  if (n.efficiency) t += fmt::format(", {} of attainable", analysis::percent(*n.efficiency));
  if (l.roofline && l.roofline->memory_gbytes_per_s > 0) {
    t += fmt::format(" (memory roof {:.3g} GB/s, {})", l.roofline->memory_gbytes_per_s, l.roofline->memory_level);
  }
  return t;
}

// What the chart shows: the layers that can be placed (with their pixels), those that
// cannot, the model total, the ceilings and the frame that holds them all.
struct Chart {
  std::vector<Point> points;
  std::vector<std::string> impossible;  // rows with an impossible rate: never drawn
  std::vector<std::string> off_chart;
  double off_chart_ms = 0;
  std::string total_name = "model total";
  std::string share_of_what = "the layers' time";
  double all_ms = 0;
  analysis::LayerNumbers total;
  bool total_on_chart = false;
  double tx = 0, ty = 0;  // the total's pixels
  bool double_precision = false;
  analysis::DrawnCeilings ceilings;
  double slope_roof = 0;
  report::LogLogFrame frame;
  std::vector<std::size_t> by_share;  // points by time share, largest first
  // A program run's (regions, torch): rows nest, so their shares are not summed, and nothing is
  // drawn above the highest roof (hold_under_roof).
  bool program = false;
};

// The frame: every point, every roof and every ridge point, with a margin.
report::LogLogFrame chart_frame(const Chart& c) {
  double x_lo = 1.0 / 8, x_hi = 64, y_lo = 1e30, y_hi = 0;
  const auto include = [&](double x, double y) {
    x_lo = std::min(x_lo, x);
    x_hi = std::max(x_hi, x);
    y_lo = std::min(y_lo, y);
    y_hi = std::max(y_hi, y);
  };
  const auto drawn_at = [&](double gflops) { return c.program && c.slope_roof > 0 ? std::min(gflops, c.slope_roof) : gflops; };
  for (const Point& pt : c.points) include(*pt.numbers.intensity, drawn_at(*pt.numbers.gflops_per_s));
  if (c.total_on_chart) include(*c.total.intensity, drawn_at(*c.total.gflops_per_s));
  for (const auto& r : c.ceilings.roofs) y_hi = std::max(y_hi, r.gflops);
  for (const auto& s : c.ceilings.slopes) {
    if (c.slope_roof > 0) x_hi = std::max(x_hi, c.slope_roof / s.gbps);
  }
  if (y_hi <= 0) y_hi = 10;
  if (y_lo > y_hi) y_lo = y_hi / 100;
  report::LogLogFrame f;
  f.left = kLeft;
  f.top = kTop;
  f.width = kWidth - kLeft - kRight;
  f.height = kPlotHeight;
  f.x_min = std::pow(2.0, std::floor(std::log2(x_lo / 1.5)));
  f.x_max = std::pow(2.0, std::ceil(std::log2(x_hi * 1.5)));
  f.y_min = std::pow(10.0, std::floor(std::log10(y_lo / 1.5)));
  f.y_max = std::pow(10.0, std::ceil(std::log10(y_hi * 1.5)));
  if (f.y_max / f.y_min < 100) f.y_min = f.y_max / 100;
  return f;
}

// A program's point above the highest roof (not impossible: within its uncertainty) is drawn on
// it, so that nothing on the picture is above what the machine can do. A model's layers are
// drawn where they are (the cause above_roof says why).
void hold_under_roof(Chart& c) {
  if (!c.program || c.slope_roof <= 0) return;
  for (Point& pt : c.points) {
    if (*pt.numbers.gflops_per_s <= c.slope_roof) continue;
    pt.on_roof = true;
    pt.cy = c.frame.py(c.slope_roof);
  }
  if (c.total_on_chart && *c.total.gflops_per_s > c.slope_roof) c.ty = c.frame.py(c.slope_roof);
}

Chart chart_of(const Profile& p) {
  Chart c;
  c.all_ms = analysis::summed_layer_ms(p);
  for (const LayerProfile& l : p.layers) {
    Point pt;
    pt.layer = &l;
    pt.numbers = analysis::layer_numbers(l);
    pt.share = analysis::row_share(p, l, c.all_ms);
    if (l.impossible) {
      c.impossible.push_back(analysis::display_name(l));
    } else if (analysis::on_roofline_chart(pt.numbers)) {
      c.points.push_back(pt);
    } else {
      c.off_chart.push_back(analysis::display_name(l));
      c.off_chart_ms += l.time_ms.median;
    }
  }
  c.total = analysis::layer_numbers(p.total);
  c.total_on_chart = analysis::on_roofline_chart(c.total);
  for (const Point& pt : c.points) {
    const std::string& roof = pt.layer->roofline ? pt.layer->roofline->compute_roof : std::string();
    if (roof.size() > 3 && roof.compare(roof.size() - 3, 3, "_dp") == 0) c.double_precision = true;
  }
  if (p.machine.ceilings) c.ceilings = analysis::ceilings_of(*p.machine.ceilings, !c.double_precision);
  for (const auto& r : c.ceilings.roofs) c.slope_roof = std::max(c.slope_roof, r.gflops);
  c.program = is_program_run(p.kind);
  if (is_program_run(p.kind)) {
    c.total_name = "program total";
    c.share_of_what = "the program's time";
  }
  c.frame = chart_frame(c);
  for (Point& pt : c.points) {
    pt.cx = c.frame.px(*pt.numbers.intensity);
    pt.cy = c.frame.py(*pt.numbers.gflops_per_s);
    pt.r = std::max(kMinRadius, kMaxRadius * std::sqrt(pt.share));
  }
  if (c.total_on_chart) {
    c.tx = c.frame.px(*c.total.intensity);
    c.ty = c.frame.py(*c.total.gflops_per_s);
  }
  hold_under_roof(c);
  c.by_share.resize(c.points.size());
  for (std::size_t i = 0; i < c.points.size(); ++i) c.by_share[i] = i;
  std::stable_sort(c.by_share.begin(), c.by_share.end(), [&](std::size_t a, std::size_t b) { return c.points[a].share > c.points[b].share; });
  return c;
}

// Which layers get a name: first those with the most time to win against their roof (share ×
// (1 - efficiency): a large layer far below its roof, whatever its rank by time), then the
// largest time shares.
std::vector<bool> named_points(const Chart& c) {
  const auto to_win = [&](std::size_t i) {
    const std::optional<double>& eff = c.points[i].numbers.efficiency;
    return eff ? c.points[i].share * std::max(0.0, 1.0 - *eff) : 0.0;
  };
  std::vector<std::size_t> by_gain = c.by_share;
  std::stable_sort(by_gain.begin(), by_gain.end(), [&](std::size_t a, std::size_t b) { return to_win(a) > to_win(b); });
  std::vector<bool> labelled(c.points.size(), false);
  int named = 0;
  for (std::size_t k = 0; k < by_gain.size() && named < kLabelledByGain; ++k) {
    if (to_win(by_gain[k]) <= 0) break;
    labelled[by_gain[k]] = true;
    ++named;
  }
  for (std::size_t k = 0; k < c.by_share.size() && named < kLabelledLayers; ++k) {
    if (labelled[c.by_share[k]] || c.points[c.by_share[k]].share <= 0) continue;
    labelled[c.by_share[k]] = true;
    ++named;
  }
  return labelled;
}

// The headroom lines of the named layers, the points (largest first, so that small ones stay
// visible on top) and the model total.
std::string draw_points(const Profile& p, const Chart& c, const std::vector<bool>& labelled) {
  std::string body;
  const report::LogLogFrame& f = c.frame;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const Point& pt = c.points[i];
    if (!labelled[i] || !pt.numbers.attainable_gflops_per_s || *pt.numbers.attainable_gflops_per_s <= *pt.numbers.gflops_per_s * 1.05) continue;
    const double top = std::max(f.top, f.py(*pt.numbers.attainable_gflops_per_s));
    body += fmt::format(
        "<line class=\"headroom\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"1.2\" stroke-dasharray=\"2 3\"/>\n",
        pt.cx, pt.cy - pt.r, top, bound_color(pt.numbers.bound));
  }
  std::vector<std::size_t> draw_order = c.by_share;
  std::stable_sort(draw_order.begin(), draw_order.end(), [&](std::size_t a, std::size_t b) { return c.points[a].r > c.points[b].r; });
  for (std::size_t i : draw_order) {
    const Point& pt = c.points[i];
    body += fmt::format(
        "<circle class=\"layer\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.72\" stroke=\"#222\" "
        "stroke-width=\"0.8\"><title>{}</title></circle>\n",
        pt.cx, pt.cy, pt.r, bound_color(pt.numbers.bound), xml_escape(tooltip(p, *pt.layer, pt.numbers, pt.share, pt.on_roof)));
  }
  if (c.total_on_chart) {
    body += fmt::format(
        "<path class=\"total\" d=\"M {0:.1f} {1:.1f} l 8 8 l -8 8 l -8 -8 z\" fill=\"#111\" stroke=\"white\" "
        "stroke-width=\"1.5\"><title>{2}</title></path>\n",
        c.tx, c.ty - 8, xml_escape(tooltip(p, p.total, c.total, 1.0, false)));
  }
  return body;
}

// Labels: the model total first, then layers by share; each keeps clear of every point's
// centre. `unlabelled` gets those without room.
std::string draw_labels(const Chart& c, const std::vector<bool>& labelled, std::vector<std::string>& unlabelled) {
  const report::LogLogFrame& f = c.frame;
  std::string body;
  std::vector<Box> centres;
  std::vector<Box> bodies;
  for (const Point& pt : c.points) {
    centres.push_back({pt.cx - 3, pt.cy - 3, pt.cx + 3, pt.cy + 3});
    bodies.push_back({pt.cx - pt.r, pt.cy - pt.r, pt.cx + pt.r, pt.cy + pt.r});
  }
  if (c.total_on_chart) centres.push_back({c.tx - 8, c.ty - 8, c.tx + 8, c.ty + 8});
  for (const auto& roof : c.ceilings.roofs) bodies.push_back({f.left, f.py(roof.gflops) - 2, f.right(), f.py(roof.gflops) + 2});
  LabelPlacer placer({f.left, f.top, f.right(), f.bottom()}, std::move(bodies), std::move(centres));
  const auto label = [&](const std::string& text, double cx, double cy, double r, bool bold) {
    auto placed = placer.place(text, cx, cy, r);
    if (!placed) return false;
    if (placed->detached) body += leader_line(*placed, cx, cy, r);
    body += fmt::format("<text class=\"point-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" font-size=\"{}\"{}>{}</text>\n", placed->x,
                        placed->baseline, report::anchor_name(placed->anchor), kLabelFont, bold ? " font-weight=\"bold\"" : "", xml_escape(text));
    return true;
  };
  if (c.total_on_chart && !label(c.total_name, c.tx, c.ty, 8, true)) unlabelled.push_back(c.total_name);
  for (std::size_t i : c.by_share) {
    if (!labelled[i]) continue;
    const Point& pt = c.points[i];
    const std::string text = fmt::format("{} {}", analysis::display_name(*pt.layer), analysis::percent(pt.share));
    if (!label(text, pt.cx, pt.cy, pt.r, false)) unlabelled.push_back(text);
  }
  return body;
}

// The legend, right of the frame below the ceilings' labels, from `legend_y` down (updated).
std::string draw_legend(const Profile& p, const Chart& c, double& legend_y) {
  std::string body;
  const double lx = c.frame.right() + 6;
  legend_y += 30;
  body += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-weight=\"bold\">layers</text>\n", lx, legend_y);
  std::vector<std::pair<std::optional<Bound>, std::string>> kinds;
  if (p.machine.ceilings) {
    kinds = {{Bound::compute, "compute-bound"}, {Bound::memory, "memory-bound"}, {Bound::overhead, "overhead-bound"}};
  }
  if (std::any_of(c.points.begin(), c.points.end(), [](const Point& pt) { return !pt.numbers.bound; })) kinds.push_back({std::nullopt, "not placed"});
  for (const auto& [bound, text] : kinds) {
    legend_y += 18;
    body += fmt::format("<circle cx=\"{}\" cy=\"{:.1f}\" r=\"6\" fill=\"{}\" fill-opacity=\"0.72\" stroke=\"#222\" stroke-width=\"0.8\"/>\n", lx + 8,
                        legend_y - 4, bound_color(bound));
    body += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", lx + 22, legend_y, text);
  }
  legend_y += 18;
  body += fmt::format("<path d=\"M {:.1f} {:.1f} l 6 6 l -6 6 l -6 -6 z\" fill=\"#111\"/>\n", lx + 8, legend_y - 10);
  body += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", lx + 22, legend_y, c.total_name);
  legend_y += 18;
  body += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\" font-size=\"11\">area: share of {}</text>\n", lx, legend_y, c.share_of_what);
  if (p.machine.ceilings) {
    legend_y += 15;
    body += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\" font-size=\"11\">dotted: headroom to the roof</text>\n", lx, legend_y);
    legend_y += 15;
    body += fmt::format("<text x=\"{}\" y=\"{:.1f}\" fill=\"#555\" font-size=\"11\">named: most time to win, then largest</text>\n", lx, legend_y);
  }
  legend_y += 24;
  body += fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-weight=\"bold\">bytes (intensity)</text>\n", lx, legend_y);
  for (const std::string& line : wrap(report::bytes_source_summary(p), 38)) {
    legend_y += 15;
    body += fmt::format("<text class=\"bytes-source\" x=\"{}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", lx, legend_y, xml_escape(line));
  }
  return body;
}

// The notes below the axis: the profile's warnings first, in their own colour (doubts about
// the points above), then what the chart leaves out. `note_y` ends at the last line.
std::string draw_notes(const Profile& p, const Chart& c, const std::vector<std::string>& unlabelled, double& note_y) {
  std::vector<std::string> notes;
  if (!p.machine.ceilings) {
    notes.push_back(
        fmt::format("No calibration for {} thread{}: points only, without ceilings or bounds. Run `hwprof calibrate`, then profile again.", p.threads,
                    p.threads == 1 ? "" : "s"));
  }
  if (!c.impossible.empty()) {
    notes.push_back(fmt::format("Not drawn: {} row{} with an impossible rate: {} (each row's Why and impossible_reason give the figures).",
                                c.impossible.size(), c.impossible.size() == 1 ? "" : "s", names_list(c.impossible, 6)));
  }
  if (!c.off_chart.empty() && c.program) {
    notes.push_back(fmt::format("Not on the chart (no FLOPs, bytes or time to place them by): {}.", names_list(c.off_chart, 6)));
  } else if (!c.off_chart.empty()) {
    notes.push_back(fmt::format("Not on the chart (no FLOPs, bytes or time to place them by): {} ({} of the layers' time).",
                                names_list(c.off_chart, 6), analysis::percent(c.all_ms > 0 ? c.off_chart_ms / c.all_ms : 0)));
  }
  if (!unlabelled.empty()) notes.push_back("No room to name: " + names_list(unlabelled, 6) + ".");
  if (c.points.empty()) notes.push_back("No layer has FLOPs, bytes and time: nothing to place.");
  std::string body;
  for (const std::string& warning : p.warnings) {
    bool first = true;
    for (const std::string& line : wrap((first ? "Warning: " : "") + warning, 140)) {
      note_y += 18;
      body += fmt::format("<text class=\"warning\" x=\"{}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#a04000\"{}>{}</text>\n", 10, note_y,
                          first ? " font-weight=\"bold\"" : "", xml_escape(line));
      first = false;
    }
  }
  for (const std::string& note : notes) {
    for (const std::string& line : wrap(note, 140)) {
      note_y += 18;
      body += fmt::format("<text class=\"note\" x=\"{}\" y=\"{:.1f}\" font-size=\"11\" fill=\"#333\">{}</text>\n", 10, note_y, xml_escape(line));
    }
  }
  return body;
}

}  // namespace

namespace report {

std::string roofline_svg(const Profile& p, bool standalone) {
  const Chart c = chart_of(p);
  const report::LogLogFrame& f = c.frame;
  std::string body;
  const std::string title = is_program_run(p.kind) ? fmt::format("Roofline — {}: {}", p.model, report::program_threads(p))
                                                   : fmt::format("Roofline — {}, batch {}, {}, {} thread{}", p.model, p.batch, profile_phase_name(p),
                                                                 p.threads, p.threads == 1 ? "" : "s");
  body += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", kLeft, xml_escape(title));
  std::string subtitle = p.machine.cpu.brand;
  if (p.machine.ceilings) {
    subtitle += fmt::format(" · ceilings measured {}{} ({} precision, bandwidth = STREAM triad)", p.machine.calibration_created,
                            p.machine.calibration_quick ? ", quick" : "", c.double_precision ? "double" : "single");
  } else {
    subtitle += " · no calibration: points only";
  }
  body += fmt::format("<text x=\"{}\" y=\"44\" fill=\"#555\">{}</text>\n", kLeft, xml_escape(subtitle));
  body += report::svg_axes(f, f.bottom() + 40, "arithmetic intensity (FLOP/byte)", "achieved GFLOP/s");
  double legend_y = f.top;
  if (!c.ceilings.roofs.empty() || !c.ceilings.slopes.empty()) {
    body += report::svg_ceilings(f, c.ceilings, c.slope_roof, &legend_y);
  } else {
    legend_y = f.top - 18;
  }
  const std::vector<bool> labelled = named_points(c);
  body += draw_points(p, c, labelled);
  std::vector<std::string> unlabelled;
  body += draw_labels(c, labelled, unlabelled);
  body += draw_legend(p, c, legend_y);
  double note_y = f.bottom() + 40;
  body += draw_notes(p, c, unlabelled, note_y);
  const double height = std::ceil(std::max(note_y, legend_y) + 16);
  return report::svg_open(kWidth, height, standalone) + body + "</svg>\n";
}

}  // namespace report

std::string roofline_svg(const Profile& profile) {
  return report::roofline_svg(profile, true);
}

}  // namespace hwprof
