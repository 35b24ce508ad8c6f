// A program run's reports (a PyTorch program under hwprof::torch; a regions program): the answer
// per step, the threads, the columns (calls and time per step before the median call), the one
// share definition in the table, the CSV, the HTML and the picture, rates that are lower bounds
// marked "≥", an impossible rate never shown as a figure nor drawn, and a footer that never sums
// the shares of rows that nest (docs/torch.md, "Reading a torch profile").
#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analyze/layer_view.hpp"
#include "analyze/number_format.hpp"
#include "hwprof/engine/report.hpp"
#include "markup_check.hpp"
#include "synthetic_torch_profile.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The table's line whose first column is `name` (followed by the column gap).
std::string program_row(const std::string& table, const std::string& name) {
  for (const std::string& line : test::lines_of(table)) {
    if (line.rfind(name + "  ", 0) == 0) return line;
  }
  return {};
}

// The whitespace-separated cells of a table line (the names here hold no two spaces).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t i = 0;
  while (i < line.size()) {
    const std::size_t gap = line.find("  ", i);
    cells.push_back(line.substr(i, gap == std::string::npos ? std::string::npos : gap - i));
    if (gap == std::string::npos) break;
    i = line.find_first_not_of(' ', gap);
  }
  return cells;
}

std::size_t line_of(const std::string& text, const std::string& start) {
  const std::vector<std::string> lines = test::lines_of(text);
  return static_cast<std::size_t>(std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; }) -
                                  lines.begin());
}

constexpr const char* kLinearBackward = "aten::linear [16x64x256, 1000x256, 1000] (backward)";

TEST(ProgramTable, TheFirstLinesSayTheStepTheTimeToWinAndTheThreads) {
  const std::string t = profile_table(test::synthetic_torch_profile());
  const std::vector<std::string> lines = test::lines_of(t);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "hwprof profile: lm.py, PyTorch (hwprof::torch), 20 steps: 40.00 ms per step in its rows (steps: median 41.93 ms, mean 42.77 ms), 6.000 "
            "ms of a step "
            "(15.0%) to win at the roofs");
  EXPECT_EQ(lines[1], "Threads: PyTorch ran its ops on 1 thread (of 2 cores)");
  EXPECT_THAT(t, Not(HasSubstr("batch"))) << "a program's batch is not known";
}

TEST(ProgramTable, WithoutStepsItsRowsAreOverTheRun) {
  Profile p = test::synthetic_torch_profile();
  p.time_basis = TimeBasis::run;
  p.steps = 0;
  p.step_time_ms = {};
  p.total.basis_ms = p.total.total_ms;
  for (LayerProfile& l : p.layers) l.basis_ms = l.total_ms;
  const std::string t = profile_table(p);
  EXPECT_THAT(t, StartsWith("hwprof profile: lm.py, PyTorch (hwprof::torch), no steps: 900.0 ms in its rows, "));
  const std::string header = test::lines_of(t)[line_of(t, "Region")];
  EXPECT_THAT(header, HasSubstr("Calls"));
  EXPECT_THAT(header, Not(HasSubstr("Calls/step")));
  EXPECT_THAT(header, HasSubstr("Time ms"));
  EXPECT_THAT(t, HasSubstr("most time to win over the run first (Win ms = Time ms x (1 - Eff.))"));
  EXPECT_EQ(cells_of(program_row(t, "TinyLM"))[3], "20") << "its calls over the run";
}

TEST(ProgramTable, ARegionsProgramSaysItsRegionsAndItsCalibrationsThreads) {
  Profile p = test::synthetic_torch_profile();
  p.kind = ProfileKind::regions;
  p.time_basis = TimeBasis::run;
  p.steps = 0;
  p.threads = 2;
  const std::string t = profile_table(p);
  EXPECT_THAT(t, StartsWith("hwprof profile: lm.py, its regions: "));
  EXPECT_THAT(t.substr(0, t.find('\n')), HasSubstr(" ms over the run, "));
  EXPECT_THAT(t, HasSubstr("Threads: its regions are placed under the calibration of 2 threads (of 2 cores)"));
}

TEST(ProgramTable, RowsThatRanOnDifferentThreadsGiveTheRange) {
  Profile p = test::synthetic_torch_profile();
  p.layers[1].threads = 2;
  EXPECT_THAT(profile_table(p), HasSubstr("Threads: PyTorch ran its ops on 1 to 2 threads (of 2 cores)"));
}

TEST(ProgramTable, ColumnsAreCallsAndTimePerStepThenTheCall) {
  const std::string t = profile_table(test::synthetic_torch_profile());
  const std::vector<std::string> header = cells_of(test::lines_of(t)[line_of(t, "Region")]);
  const std::vector<std::string> expected = {"Region",  "Op",     "Phase", "Calls/step", "ms/step", "Call ms", "±95% CI", "Share",
                                             "GFLOP/s", "FLOP/B", "Bound", "Eff.",       "Roof ms", "Win ms",  "Why"};
  EXPECT_EQ(header, expected);
  // TinyLM's forward: 20 calls of 15 ms over 20 steps, 300 of the program's 900 ms.
  const std::vector<std::string> tiny = cells_of(program_row(t, "TinyLM"));
  ASSERT_GE(tiny.size(), 8u);
  EXPECT_EQ(tiny[3], "1");
  EXPECT_EQ(tiny[4], "15.00");
  EXPECT_EQ(tiny[5], "15.00");
  EXPECT_EQ(tiny[7], "33.3%");
  EXPECT_THAT(t, HasSubstr("most time to win per step first (Win ms = ms/step x (1 - Eff.))"));
}

TEST(ProgramTable, TheSharesAreTheOneDefinition) {
  const Profile p = test::synthetic_torch_profile();
  const std::string t = profile_table(p, {.top = 0, .nested_ops = true});
  for (const LayerProfile& l : p.layers) {
    const std::vector<std::string> cells = cells_of(program_row(t, analysis::display_name(l)));
    ASSERT_GE(cells.size(), 8u) << analysis::display_name(l);
    EXPECT_EQ(cells[7], analysis::percent(analysis::row_share(p, l, analysis::summed_layer_ms(p)))) << analysis::display_name(l);
  }
}

TEST(ProgramTable, TheProgramTotalIsItsTimeInItsRowsPerStep) {
  const std::vector<std::string> total = cells_of(program_row(profile_table(test::synthetic_torch_profile()), "program total"));
  ASSERT_GE(total.size(), 14u);
  EXPECT_EQ(total[3], "-") << "no calls";
  EXPECT_EQ(total[4], "40.00");
  EXPECT_EQ(total[5], "-") << "no call";
  EXPECT_EQ(total[7], "100.0%");
  EXPECT_EQ(total[13], "6.000") << "its win";
}

TEST(ProgramTable, APartialCountIsALowerBoundSaidOnce) {
  const std::string t = profile_table(test::synthetic_torch_profile(), {.top = 0});
  const std::vector<std::string> optimizer = cells_of(program_row(t, "Optimizer.step#AdamW.step (optimizer)"));
  ASSERT_GE(optimizer.size(), 12u);
  EXPECT_THAT(optimizer[8], StartsWith("≥")) << "GFLOP/s";
  EXPECT_THAT(optimizer[11], StartsWith("≥")) << "Eff.";
  EXPECT_THAT(cells_of(program_row(t, "TinyLM"))[8], Not(StartsWith("≥"))) << "a complete count is a figure";
  EXPECT_EQ(test::occurrences(t, "\n≥ a lower bound"), 1u);
}

TEST(ProgramTable, AnImpossibleRateIsNoFigure) {
  const std::string t = profile_table(test::synthetic_torch_profile(), {.top = 0});
  const std::vector<std::string> linear = cells_of(program_row(t, kLinearBackward));
  ASSERT_EQ(linear.size(), 15u);
  EXPECT_EQ(linear[8], "-") << "GFLOP/s";
  EXPECT_EQ(linear[10], "-") << "Bound";
  EXPECT_EQ(linear[11], "impossible");
  EXPECT_EQ(linear[12], "-") << "Roof ms";
  EXPECT_EQ(linear[13], "-") << "Win ms";
  EXPECT_EQ(linear[14], "impossible rate");
  EXPECT_EQ(test::occurrences(t, "\nimpossible: "), 1u);
  EXPECT_THAT(profile_table(test::synthetic_torch_profile()), Not(HasSubstr("\nimpossible: ")))
      << "said where a row shown is (the top 15 leave it out)";
}

TEST(ProgramTable, TheFooterNeverSumsSharesOfRowsThatNest) {
  const Profile p = test::synthetic_torch_profile();
  const std::string t = profile_table(p);  // the top 15 of 18 (the nested op and the setup left out)
  const std::size_t footer = line_of(t, "... ");
  ASSERT_LT(footer, test::lines_of(t).size());
  EXPECT_EQ(test::lines_of(t)[footer], "... 3 more rows, each at most 0.9% of the time (rows nest: their shares overlap); --all shows every row");
  EXPECT_THAT(t, Not(HasSubstr("more rows hold")));
  EXPECT_THAT(t, HasSubstr("1 op rows ran only inside the rows above"));
  EXPECT_THAT(t, HasSubstr("The setup before the first module call"));
  EXPECT_EQ(program_row(t, "setup"), "") << "shown with --all";
  EXPECT_NE(program_row(profile_table(p, {.top = 0, .nested_ops = true}), "setup"), "");
}

TEST(ProgramTable, ShapesOfTheOpRowsShown) {
  const std::string t = profile_table(test::synthetic_torch_profile(), {.top = 0});
  const std::size_t at = t.find("\nShapes of the op rows shown (most time first; calls and time over the whole run)\n");
  ASSERT_NE(at, std::string::npos);
  const std::string shapes = t.substr(at);
  const std::size_t embedding = shapes.find("\naten::embedding\n");
  ASSERT_NE(embedding, std::string::npos);
  // The top three by time, then the rest kept apart, then the other shapes.
  const std::size_t first = shapes.find("  1000x256, 16x64 ", embedding);
  const std::size_t second = shapes.find("  1000x256, 16x48 ", embedding);
  const std::size_t third = shapes.find("  1000x256, 16x32 ", embedding);
  const std::size_t more = shapes.find("  2 more shapes ", embedding);
  const std::size_t other = shapes.find("  other shapes (not kept apart) ", embedding);
  EXPECT_LT(embedding, first);
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_LT(third, more);
  EXPECT_LT(more, other);
  EXPECT_EQ(shapes.find("16x16", embedding), std::string::npos) << "summed into the 2 more";
  EXPECT_THAT(shapes, HasSubstr(kLinearBackward));
  EXPECT_THAT(shapes, Not(HasSubstr("\nTinyLM\n"))) << "a module has no shapes";
}

TEST(ProgramTable, TheLegendSaysWhatEachColumnIsOf) {
  const std::string t = profile_table(test::synthetic_torch_profile());
  EXPECT_THAT(t, HasSubstr("ms/step = the row's time in the steps / the 20 steps (the setup before the first and what ran after the last apart)"));
  EXPECT_THAT(t, HasSubstr("Call ms = the median of its calls"));
  EXPECT_THAT(t, HasSubstr("Calls/step = its calls in the steps / the steps"));
  EXPECT_THAT(t, HasSubstr("Share = the row's time / the program's time in its outermost rows, both in the steps"));
  EXPECT_THAT(t, HasSubstr("The program total's Win counts only its rows with a count, each millisecond once"));
}

TEST(ProgramTable, GroupedRowsArePerStepAndSaySoTheyOverlap) {
  const std::string t = profile_table(test::synthetic_torch_profile(), {.by = ProfileGrouping::op});
  const std::vector<std::string> header = cells_of(test::lines_of(t)[line_of(t, "Op")]);
  ASSERT_GE(header.size(), 3u);
  EXPECT_EQ(header[1], "Rows");
  EXPECT_EQ(header[2], "ms/step");
  EXPECT_THAT(t, HasSubstr("the groups' times and shares overlap"));
  // A group's share is its rows' shares summed: the one definition.
  const Profile p = test::synthetic_torch_profile();
  for (const analysis::LayerGroup& g : analysis::group_layers(p, analysis::LayerGrouping::op, 1)) {
    double rows_share = 0.0;
    for (const LayerProfile& l : p.layers) {
      const bool member = l.op == g.key || l.op + " (" + std::string(layer_phase_name(l.phase)) + ")" == g.key;
      if (member) rows_share += analysis::row_share(p, l, 0.0);
    }
    EXPECT_DOUBLE_EQ(g.share, rows_share) << g.key;
  }
}

TEST(ProgramCsv, SaysCallsTimesThreadsAndWhatIsNotCounted) {
  const Profile p = test::synthetic_torch_profile();
  const auto rows = test::parse_csv(profile_csv(p));
  ASSERT_EQ(rows.size(), p.layers.size() + 1);
  const auto& header = rows[0];
  const auto column = [&](const std::string& name) {
    const auto at = static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    EXPECT_LT(at, header.size()) << name;
    return at;
  };
  const std::vector<std::string> added = {"calls",     "total_ms",     "basis_ms",   "threads",          "threads_min",
                                          "work_note", "work_partial", "impossible", "impossible_reason"};
  const std::size_t first = column("calls");
  EXPECT_EQ(first, column("why_text") + 1) << "after the fixed columns, before the counters'";
  for (std::size_t k = 0; k < added.size(); ++k) EXPECT_EQ(header[first + k], added[k]);
  for (const auto& r : rows) EXPECT_EQ(r.size(), header.size());
  const auto row = [&](const std::string& name, const std::string& phase) -> const std::vector<std::string>& {
    for (std::size_t i = 1; i < rows.size(); ++i) {
      if (rows[i][column("name")] == name && rows[i][column("phase")] == phase) return rows[i];
    }
    ADD_FAILURE() << name;
    return rows[0];
  };
  const auto& tiny = row("TinyLM", "forward");
  EXPECT_EQ(tiny[column("calls")], "20");
  EXPECT_EQ(tiny[column("total_ms")], "300");
  EXPECT_EQ(tiny[column("basis_ms")], "15");
  EXPECT_EQ(tiny[column("threads")], "1");
  EXPECT_EQ(tiny[column("impossible")], "false");
  EXPECT_EQ(tiny[column("work_note")], "");
  // Not counted reads as the reason, never as 0.
  const auto& embedding = row("aten::embedding", "forward");
  EXPECT_EQ(embedding[column("work_note")], "not counted: hwprof has no formula for this op");
  EXPECT_EQ(embedding[column("gflops_per_s")], "");
  for (const char* empty : {"flops", "bytes", "analytic_bytes"}) EXPECT_EQ(embedding[column(empty)], "") << empty;
  EXPECT_THAT(row("Optimizer.step#AdamW.step", "optimizer")[column("work_partial")], StartsWith("48% of its time is in ops"));
  // An impossible row: said, with its reason, and no rate, efficiency, bound or win.
  const auto& linear = row("aten::linear [16x64x256, 1000x256, 1000]", "backward");
  EXPECT_EQ(linear[column("impossible")], "true");
  EXPECT_THAT(linear[column("impossible_reason")], HasSubstr("above the most this machine can do"));
  for (const char* empty : {"gflops_per_s", "efficiency", "attainable_gflops_per_s", "bound", "roof_ms", "win_ms"}) {
    EXPECT_EQ(linear[column(empty)], "") << empty;
  }
  EXPECT_NE(linear[column("flops")], "") << "its count itself is kept";
}

TEST(ProgramCsv, AModelsCsvKeepsItsColumns) {
  const std::string csv = profile_csv(test::synthetic_profile());
  EXPECT_THAT(csv.substr(0, csv.find('\n')), Not(HasSubstr("impossible_reason")));
}

test::Markup program_html(const Profile& p) {
  test::Markup m = test::parse_markup(html_report(p), test::Dialect::html);
  EXPECT_TRUE(m.ok()) << m.problem;
  return m;
}

TEST(ProgramHtml, ProgramTotalsPerStepAndNoForwardPass) {
  const Profile p = test::synthetic_torch_profile();
  const std::string html = html_report(p);
  program_html(p);
  EXPECT_THAT(html, HasSubstr("<h2>Program totals</h2>"));
  EXPECT_THAT(html, Not(HasSubstr("Model totals")));
  EXPECT_THAT(html, Not(HasSubstr("forward pass")));
  EXPECT_THAT(html, Not(HasSubstr("batch")));
  EXPECT_THAT(html, HasSubstr("20 steps: 41.93 ms median per step"));
  EXPECT_THAT(html, HasSubstr("; 95% CI "));
  EXPECT_THAT(html, HasSubstr("<dt>time in its rows</dt><dd>40 ms per step"));
  EXPECT_THAT(html, HasSubstr("<dt>FLOPs per step</dt><dd>609,400,000 (each FLOP once"));
  EXPECT_THAT(html, HasSubstr("<b>6.000 ms</b> per step (15.0% of its time in its rows)"));
  EXPECT_THAT(html, HasSubstr("its rows with a count (90% of its time)"));
  // The answer as the table's title; the threads in the header.
  EXPECT_THAT(
      html, HasSubstr("<p class=\"answer\">PyTorch (hwprof::torch), 20 steps: 40.00 ms per step in its rows (steps: median 41.93 ms, mean 42.77 ms), "
                      "6.000 ms of a step (15.0%) to win at the roofs.</p>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"sub\">PyTorch ran its ops on 1 thread (of 2 cores) · "));
}

TEST(ProgramHtml, TheRowsHaveTheTablesColumnsAndShares) {
  const Profile p = test::synthetic_torch_profile();
  const std::string html = html_report(p);
  EXPECT_THAT(html, HasSubstr("<th>Region</th><th>Op</th><th>Phase</th><th class=\"num\">Calls/step</th><th class=\"num\">ms/step</th>"
                              "<th class=\"num\">Call ms</th><th class=\"num\">± ms</th><th class=\"num\">Share</th>"));
  // Every row's share cell is row_share, as in the text table.
  const test::Markup m = program_html(p);
  std::size_t shares = 0;
  for (const test::Element* td : m.all("td")) {
    if (!td->attributes.count("class") || td->attributes.at("class") != "num share" || !td->attributes.count("data-v")) continue;
    ++shares;
    const double v = std::stod(td->attributes.at("data-v"));
    const bool one_of_them = std::any_of(p.layers.begin(), p.layers.end(), [&](const LayerProfile& l) { return std::abs(l.time_share - v) < 1e-12; });
    EXPECT_TRUE(one_of_them) << v;
  }
  EXPECT_EQ(shares, p.layers.size());
  EXPECT_THAT(html, HasSubstr("<tfoot><tr><td>program total</td>"));
}

TEST(ProgramHtml, ImpossibleAndLowerBoundCellsSayWhyOnHover) {
  const Profile p = test::synthetic_torch_profile();
  const test::Markup m = program_html(p);
  const LayerProfile* linear = nullptr;
  const LayerProfile* optimizer = nullptr;
  for (const LayerProfile& l : p.layers) {
    if (l.impossible) linear = &l;
    if (l.phase == LayerPhase::optimizer) optimizer = &l;
  }
  ASSERT_NE(linear, nullptr);
  ASSERT_NE(optimizer, nullptr);
  std::size_t impossible = 0;
  std::size_t lower = 0;
  for (const test::Element* td : m.all("td")) {
    const auto title = td->attributes.find("title");
    if (td->text == "impossible") {
      ++impossible;
      ASSERT_NE(title, td->attributes.end());
      EXPECT_EQ(title->second, linear->impossible_reason);
    }
    if (td->text.rfind("≥", 0) == 0) {
      ++lower;
      ASSERT_NE(title, td->attributes.end());
      EXPECT_THAT(title->second, HasSubstr("no formula for"));
    }
  }
  EXPECT_EQ(impossible, 1u) << "the impossible row's Eff.";
  EXPECT_EQ(lower, 4u) << "GFLOP/s and Eff. of the two partial rows";
}

TEST(ProgramHtml, TheWorryEdgeIsFromTheRowsShare) {
  Profile p = test::synthetic_torch_profile();
  for (LayerProfile& l : p.layers) {
    if (l.roofline) l.roofline->efficiency = 0.9;
  }
  // TinyLM's backward: 44% of the program's time; at 20% of its roof it is worth a look.
  p.layers[1].roofline->efficiency = 0.2;
  const test::Markup m = program_html(p);
  std::size_t worried = 0;
  for (const test::Element* tr : m.all("tr")) worried += tr->attributes.count("class") && tr->attributes.at("class") == "worry";
  EXPECT_EQ(worried, 1u);
  EXPECT_THAT(html_report(p), HasSubstr("<tr class=\"worry\"><td data-v=\"TinyLM (backward)\">"));
}

// The layer points, each with its tooltip (the <title> inside it).
std::vector<std::pair<const test::Element*, std::string>> layer_points(const test::Markup& m) {
  std::vector<std::pair<const test::Element*, std::string>> out;
  for (std::size_t i = 0; i < m.elements.size(); ++i) {
    const test::Element& c = m.elements[i];
    if (c.name != "circle" || !c.attributes.count("class") || c.attributes.at("class") != "layer") continue;
    out.emplace_back(&c, i + 1 < m.elements.size() && m.elements[i + 1].name == "title" ? m.elements[i + 1].text : std::string());
  }
  return out;
}

double svg_attr(const test::Element& e, const std::string& name) {
  const auto it = e.attributes.find(name);
  return it == e.attributes.end() ? 0.0 : std::stod(it->second);
}

TEST(ProgramSvg, AnImpossibleRowIsNotDrawnAndSaidBelow) {
  const Profile p = test::synthetic_torch_profile();
  const std::string svg = roofline_svg(p);
  const test::Markup m = test::parse_markup(svg, test::Dialect::xml);
  ASSERT_TRUE(m.ok()) << m.problem;
  std::size_t points = 0;
  for (const auto& [circle, title] : layer_points(m)) {
    ++points;
    EXPECT_THAT(title, Not(HasSubstr("aten::linear"))) << "the impossible row is not a point";
  }
  std::size_t placeable = 0;
  for (const LayerProfile& l : p.layers) placeable += !l.impossible && l.flops > 0 && l.bytes > 0;
  EXPECT_EQ(points, placeable);
  EXPECT_THAT(svg, HasSubstr(std::string("Not drawn: 1 row with an impossible rate: ") + kLinearBackward));
  EXPECT_THAT(svg, HasSubstr("area: share of the program's time"));
  EXPECT_THAT(svg, HasSubstr("Roofline — lm.py: PyTorch ran its ops on 1 thread (of 2 cores)"));
}

TEST(ProgramSvg, NothingIsDrawnAboveTheHighestRoofAndPointsAreSizedByShare) {
  Profile p = test::synthetic_torch_profile();
  // TinyLM's forward at 1.5x the FMA roof (within its uncertainty: not impossible).
  LayerProfile& tiny = p.layers[0];
  tiny.roofline->gflops_per_s = 180;
  const test::Markup m = test::parse_markup(roofline_svg(p), test::Dialect::xml);
  ASSERT_TRUE(m.ok()) << m.problem;
  double highest_roof = 1e9;
  for (const test::Element* line : m.all("line")) {
    if (line->attributes.count("stroke") && line->attributes.at("stroke") == "#222" && line->attributes.count("stroke-width") &&
        line->attributes.at("stroke-width") == "1.5") {
      highest_roof = std::min(highest_roof, svg_attr(*line, "y1"));
    }
  }
  ASSERT_LT(highest_roof, 1e9) << "the roofs are drawn";
  double tiny_r = 0;
  double backward_r = 0;
  for (const auto& [circle, title] : layer_points(m)) {
    EXPECT_GE(svg_attr(*circle, "cy"), highest_roof - 0.1) << title;
    if (title.rfind("TinyLM (module)", 0) == 0) {
      tiny_r = svg_attr(*circle, "r");
      EXPECT_THAT(title, HasSubstr("drawn on the roof"));
    }
    if (title.rfind("TinyLM (backward) (module)", 0) == 0) backward_r = svg_attr(*circle, "r");
  }
  // Area by share of the program's time: 300 ms against 400 ms.
  ASSERT_GT(tiny_r, 0);
  ASSERT_GT(backward_r, 0);
  EXPECT_NEAR(tiny_r / backward_r, std::sqrt(300.0 / 400.0), 1e-2);
}

}  // namespace
}  // namespace hwprof
