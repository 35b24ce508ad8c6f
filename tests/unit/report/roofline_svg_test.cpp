// The profile's roofline picture: well-formed XML, one point per layer inside the plot area,
// every ceiling labelled, the model total marked, the bytes source named, and no two texts
// overlapping (checked with a narrower width estimate than the placer's own).
#include <algorithm>
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/engine/report.hpp"
#include "markup_check.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using test::Element;
using test::Markup;
using ::testing::HasSubstr;
using ::testing::Not;

struct Rect {
  double x0, y0, x1, y1;
};

double attr(const Element& e, const std::string& name, double fallback = 0) {
  auto it = e.attributes.find(name);
  return it == e.attributes.end() ? fallback : std::stod(it->second);
}

// Where a <text> is drawn. Glyphs average about 0.55 em in DejaVu Sans; the ascent is about
// 0.76 em and the descent 0.24 em.
Rect text_rect(const Element& t) {
  const double size = attr(t, "font-size", 12);
  std::size_t chars = 0;
  for (char c : t.text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  const double w = static_cast<double>(chars) * size * 0.55;
  double x = attr(t, "x");
  const auto anchor = t.attributes.count("text-anchor") ? t.attributes.at("text-anchor") : "start";
  if (anchor == "middle") x -= w / 2;
  if (anchor == "end") x -= w;
  const double y = attr(t, "y");
  return {x, y - 0.76 * size, x + w, y + 0.24 * size};
}

bool overlap(const Rect& a, const Rect& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

Markup parse_svg(const std::string& svg) {
  Markup m = test::parse_markup(svg, test::Dialect::xml);
  EXPECT_TRUE(m.ok()) << m.problem;
  return m;
}

Rect plot_area(const Markup& m) {
  for (const Element* r : m.all("rect")) {
    if (r->attributes.count("fill") && r->attributes.at("fill") == "none") {
      return {attr(*r, "x"), attr(*r, "y"), attr(*r, "x") + attr(*r, "width"), attr(*r, "y") + attr(*r, "height")};
    }
  }
  ADD_FAILURE() << "no plot area";
  return {};
}

std::size_t plottable_layers(const Profile& p) {
  std::size_t n = 0;
  for (const LayerProfile& l : p.layers) n += l.flops > 0 && l.bytes > 0 && l.time_ms.median > 0;
  return n;
}

void expect_no_text_overlaps(const Markup& m) {
  std::vector<const Element*> texts;
  for (const Element* t : m.all("text")) {
    if (!t->attributes.count("transform") && !t->text.empty()) texts.push_back(t);
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    for (std::size_t j = i + 1; j < texts.size(); ++j) {
      EXPECT_FALSE(overlap(text_rect(*texts[i]), text_rect(*texts[j]))) << "\"" << texts[i]->text << "\" overlaps \"" << texts[j]->text << "\"";
    }
  }
}

void expect_points_inside(const Markup& m, std::size_t expected) {
  const Rect area = plot_area(m);
  std::size_t points = 0;
  for (const Element* c : m.all("circle")) {
    if (!c->attributes.count("class") || c->attributes.at("class") != "layer") continue;
    ++points;
    const double cx = attr(*c, "cx"), cy = attr(*c, "cy");
    EXPECT_GE(cx, area.x0);
    EXPECT_LE(cx, area.x1);
    EXPECT_GE(cy, area.y0);
    EXPECT_LE(cy, area.y1);
    EXPECT_GT(attr(*c, "r"), 0);
  }
  EXPECT_EQ(points, expected);
}

std::vector<std::string> texts_of(const Markup& m, const std::string& css_class = {}) {
  std::vector<std::string> out;
  for (const Element* t : m.all("text")) {
    if (css_class.empty() || (t->attributes.count("class") && t->attributes.at("class") == css_class)) out.push_back(t->text);
  }
  return out;
}

TEST(RooflineSvg, WarningsAreNotedOnTheChart) {
  Profile p = test::synthetic_profile();
  EXPECT_EQ(roofline_svg(p).find("class=\"warning\""), std::string::npos);
  p.warnings = {"2 memory-side layers run above 110% of their memory roof & more"};
  const std::string svg = roofline_svg(p);
  EXPECT_NE(svg.find("class=\"warning\""), std::string::npos);
  EXPECT_NE(svg.find("Warning: 2 memory-side layers run above 110% of their memory roof &amp; more"), std::string::npos);
  EXPECT_EQ(test::parse_markup(svg, test::Dialect::xml).problem, "");
}

TEST(RooflineSvg, OnePointPerLayerInsideThePlotArea) {
  for (bool train : {true, false}) {
    for (bool calibrated : {true, false}) {
      SCOPED_TRACE(testing::Message() << "train " << train << " calibrated " << calibrated);
      const Profile p = test::synthetic_profile({.train = train, .calibrated = calibrated});
      const Markup m = parse_svg(roofline_svg(p));
      expect_points_inside(m, plottable_layers(p));
      expect_no_text_overlaps(m);
      EXPECT_EQ(m.all("path").size() >= 1, true);
    }
  }
}

TEST(RooflineSvg, LabelsEveryCeilingAndTheBytesSource) {
  const Markup m = parse_svg(roofline_svg(test::synthetic_profile()));
  const auto texts = texts_of(m);
  for (const char* label :
       {"FMA peak 120 GFLOP/s", "GEMM 100 GFLOP/s", "L1 200 GB/s", "L2 90 GB/s", "L3 50 GB/s (no flat plateau)", "DRAM 15 GB/s", "ridge at 8 FLOP/B",
        "arithmetic intensity (FLOP/byte)", "achieved GFLOP/s", "compute-bound", "memory-bound", "overhead-bound", "model total"}) {
    EXPECT_THAT(texts, ::testing::Contains(std::string(label))) << label;
  }
  std::string bytes;
  for (const auto& line : texts_of(m, "bytes-source")) bytes += (bytes.empty() ? "" : " ") + line;
  EXPECT_EQ(bytes, "analytic minimum traffic (all 16 layers)");
  // The layer without FLOPs is named below the chart instead.
  bool noted = false;
  for (const auto& n : texts_of(m, "note")) noted = noted || n.find("Not on the chart") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(RooflineSvg, NamesTheLayersThatTakeTheMostTime) {
  const Markup m = parse_svg(roofline_svg(test::synthetic_profile()));
  std::string labels;
  for (const auto& t : texts_of(m, "point-label")) labels += t + "\n";
  // Shares of the summed layer medians: 8.5 / 26.29 ms and so on.
  EXPECT_THAT(labels, HasSubstr("layer1.0.conv1 (backward) 32."));
  EXPECT_THAT(labels, HasSubstr("conv1 (backward) 16."));
  EXPECT_THAT(labels, HasSubstr("attn (backward) 14."));
  EXPECT_THAT(labels, HasSubstr("model total"));
  EXPECT_EQ(m.all("path").size(), 2u);  // the total's diamond and its legend entry
}

// A layer with little of the time but far under its roof, among layers close to theirs, is what
// a user should look at: it is named even where the largest layers would take every name.
TEST(RooflineSvg, NamesALayerFarUnderItsRoofEvenWithASmallShare) {
  Profile p = test::synthetic_profile({.extra_layers = 40});
  LayerProfile* slow = nullptr;
  for (LayerProfile& l : p.layers) {
    // An extra, small layer that is on the chart (placed, with FLOPs).
    if (slow == nullptr && l.name.rfind("block.", 0) == 0 && l.roofline && l.flops > 0 && l.time_ms.median > 0) slow = &l;
  }
  ASSERT_NE(slow, nullptr);
  for (LayerProfile& l : p.layers) {
    if (l.roofline) l.roofline->efficiency = 0.95;  // every other layer close to its roof
  }
  slow->name = "far_under_its_roof";
  slow->roofline->efficiency = 0.001;
  const Markup m = parse_svg(roofline_svg(p));
  std::string labels;
  for (const auto& t : texts_of(m, "point-label")) labels += t + "\n";
  EXPECT_THAT(labels, HasSubstr("far_under_its_roof"));
  EXPECT_THAT(labels, HasSubstr("layer1.0.conv1 (backward)")) << "the largest layer is still named";
  expect_no_text_overlaps(m);
}

TEST(RooflineSvg, WithoutCalibrationShowsPointsAndSaysSo) {
  const Profile p = test::synthetic_profile({.train = false, .calibrated = false});
  const std::string svg = roofline_svg(p);
  const Markup m = parse_svg(svg);
  EXPECT_THAT(svg, Not(HasSubstr("FMA peak")));
  EXPECT_THAT(svg, Not(HasSubstr("class=\"headroom\"")));
  bool noted = false;
  for (const auto& n : texts_of(m, "note")) noted = noted || n.find("No calibration for 2 threads: points only") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_THAT(texts_of(m), ::testing::Contains(std::string("not placed")));
  expect_points_inside(m, plottable_layers(p));
}

TEST(RooflineSvg, CrowdedChartsStillKeepLabelsApart) {
  for (int extra : {10, 40, 120}) {
    SCOPED_TRACE(extra);
    const Profile p = test::synthetic_profile({.extra_layers = extra});
    const Markup m = parse_svg(roofline_svg(p));
    expect_points_inside(m, plottable_layers(p));
    expect_no_text_overlaps(m);
  }
}

TEST(RooflineSvg, EscapesNames) {
  const std::string svg = roofline_svg(test::synthetic_profile());
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, HasSubstr("&lt;script&gt;"));
  EXPECT_THAT(svg, HasSubstr("Synthetic CPU &amp; &lt;co&gt;"));
  const Markup m = parse_svg(svg);
  bool found = false;
  for (const Element* t : m.all("title")) found = found || t->text.find("<script>alert(\"x\")</script> & 'q',1") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(RooflineSvg, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  Profile p = test::synthetic_profile();
  p.machine.cpu.brand = "CPU\xff";
  const std::string svg = roofline_svg(p);
  EXPECT_EQ(svg.find('\xff'), std::string::npos);
  EXPECT_THAT(svg, HasSubstr("CPU\xef\xbf\xbd"));
  parse_svg(svg);
}

// A profile with nothing in it (no machine, no layers, no trace) still renders everywhere.
TEST(EveryReport, RendersAnEmptyProfile) {
  const Profile empty;
  const Markup svg = parse_svg(roofline_svg(empty));
  expect_points_inside(svg, 0);
  expect_no_text_overlaps(svg);
  const Markup html = test::parse_markup(html_report(empty), test::Dialect::html);
  EXPECT_TRUE(html.ok()) << html.problem;
  EXPECT_THAT(profile_table(empty), HasSubstr("model total"));
  const std::string csv = profile_csv(empty);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1);  // the header alone
  EXPECT_THAT(chrome_trace(empty), HasSubstr("\"traceEvents\": ["));
}

TEST(CeilingsSvg, SharesTheAxesAndStillLabelsItsCeilings) {
  Machine machine;
  machine.cpu.brand = "Synthetic";
  machine.runs.push_back(test::synthetic_run(2));
  const Markup m = parse_svg(ceilings_svg(machine, 2));
  const auto texts = texts_of(m);
  EXPECT_THAT(texts, ::testing::Contains(std::string("FMA peak 120 GFLOP/s")));
  EXPECT_THAT(texts, ::testing::Contains(std::string("DRAM 15 GB/s")));
  expect_no_text_overlaps(m);
}

}  // namespace
}  // namespace hwprof
