// The HTML report: well-formed, self-contained (nothing it would fetch), hostile names
// escaped, every section present, one sortable row per layer, and every unavailable counter
// listed with its reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/engine/report.hpp"
#include "markup_check.hpp"
#include "report/profile_view.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using test::Element;
using test::Markup;
using ::testing::HasSubstr;
using ::testing::Not;

Markup parse_html(const std::string& html) {
  Markup m = test::parse_markup(html, test::Dialect::html);
  EXPECT_TRUE(m.ok()) << m.problem;
  return m;
}

const Element* by_id(const Markup& m, const std::string& id) {
  for (const Element& e : m.elements) {
    auto it = e.attributes.find("id");
    if (it != e.attributes.end() && it->second == id) return &e;
  }
  return nullptr;
}

TEST(HtmlReport, IsWellFormedAndHasEverySection) {
  for (bool calibrated : {true, false}) {
    const Markup m = parse_html(html_report(test::synthetic_profile({.calibrated = calibrated})));
    ASSERT_FALSE(m.elements.empty());
    EXPECT_EQ(m.elements[0].name, "html");
    for (const char* id : {"machine", "totals", "roofline", "layers", "memory", "counters", "layer-table", "warnings", "group-op"}) {
      EXPECT_NE(by_id(m, id), nullptr) << id;
    }
    EXPECT_EQ(m.all("svg").size(), 1u);
    EXPECT_EQ(m.all("script").size(), 1u);
    EXPECT_EQ(m.all("style").size(), 1u);
  }
}

TEST(HtmlReport, WarningsAreABannerAboveEverythingElse) {
  Profile p = test::synthetic_profile();
  EXPECT_EQ(html_report(p).find("class=\"banner warn\""), std::string::npos) << "notes, but no warning banner without warnings";
  p.warnings = {"3 memory-side layers run above 110% of their memory roof: relu (140%)"};
  p.hints = {"unset <OPENBLAS_CORETYPE>"};
  const std::string html = html_report(p);
  const auto banner = html.find("<section id=\"warnings\" class=\"banner warn\">");
  ASSERT_NE(banner, std::string::npos);
  EXPECT_LT(banner, html.find("id=\"machine\"")) << "before the machine and every table";
  EXPECT_LT(banner, html.find("id=\"layers\""));
  EXPECT_NE(html.find("relu (140%)", banner), std::string::npos);
  const auto hint = html.find("unset &lt;OPENBLAS_CORETYPE&gt;");
  ASSERT_NE(hint, std::string::npos) << "escaped";
  EXPECT_LT(hint, html.find("id=\"layers\"")) << "in the same banner, numbered after the warnings";
}

TEST(HtmlReport, ReferencesNothingOutsideItself) {
  const std::string html = html_report(test::synthetic_profile());
  for (const char* external : {"http:", "https:", "src=", "href=", "@import", "url(", "//cdn", "xlink"}) {
    EXPECT_THAT(html, Not(HasSubstr(external))) << external;
  }
  const Markup m = parse_html(html);
  for (const Element& e : m.elements) {
    for (const char* attribute : {"src", "href", "action", "data"}) EXPECT_EQ(e.attributes.count(attribute), 0u) << e.name << " " << attribute;
    EXPECT_NE(e.name, "link");
    EXPECT_NE(e.name, "img");
    EXPECT_NE(e.name, "iframe");
  }
}

TEST(HtmlReport, EscapesHostileNames) {
  test::SyntheticOptions o;
  o.hostile_name = "<script>alert(1)</script><img src=x onerror=alert(2)>";
  Profile p = test::synthetic_profile(o);
  p.model = "net</title><script>alert(3)</script>";
  p.machine.host = "\"><svg onload=alert(4)>";
  const std::string html = html_report(p);
  const Markup m = parse_html(html);
  // The only script is ours; no element or handler came from a name.
  EXPECT_EQ(m.all("script").size(), 1u);
  EXPECT_TRUE(m.all("img").empty());
  EXPECT_EQ(m.all("svg").size(), 1u);
  for (const Element& e : m.elements) {
    for (const auto& [name, value] : e.attributes) EXPECT_NE(name.rfind("on", 0), 0u) << e.name << " has " << name;
  }
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"));
  const std::vector<const Element*> titles = m.all("title");
  ASSERT_FALSE(titles.empty());
  EXPECT_EQ(titles[0]->text, "hwprof: net</title><script>alert(3)</script>");
}

TEST(HtmlReport, OneSortableRowPerLayerAndTheTotalApart) {
  const Profile p = test::synthetic_profile();
  const Markup m = parse_html(html_report(p));
  std::size_t body_rows = 0, foot_rows = 0;
  for (const Element* tr : m.all("tr")) {
    const auto& a = tr->ancestors;
    if (std::find(a.begin(), a.end(), "table") == a.end()) continue;
    const bool in_layer_table = std::find(a.begin(), a.end(), "section") != a.end();
    if (!in_layer_table) continue;
    if (std::find(a.begin(), a.end(), "tbody") != a.end()) ++body_rows;
    if (std::find(a.begin(), a.end(), "tfoot") != a.end()) ++foot_rows;
  }
  // Layer rows, the grouped views' (per op; per block at depths 1 to 3, the deepest name's),
  // plus the memory table's and the events table's body rows.
  const std::size_t memory_rows = 6;  // train: parameters, gradients, optimizer state, activations, total, page faults
  std::size_t grouped_rows = analysis::group_layers(p, analysis::LayerGrouping::op, 1).size();
  for (int depth = 1; depth <= 3; ++depth) grouped_rows += analysis::group_layers(p, analysis::LayerGrouping::block, depth).size();
  EXPECT_EQ(body_rows, p.layers.size() + grouped_rows + memory_rows + p.events.size());
  EXPECT_EQ(foot_rows, 1u);
  // Every sortable numeric cell carries its value for the script.
  std::size_t valued = 0;
  for (const Element* td : m.all("td")) valued += td->attributes.count("data-v") && !td->attributes.at("data-v").empty();
  EXPECT_GE(valued, p.layers.size() * 8);
  // Most time to win first, and the Win header says so.
  const std::string html = html_report(p);
  EXPECT_LT(html.find("data-v=\"layer1.0.conv1 (backward)\""), html.find("data-v=\"conv1 (backward)\""));
  EXPECT_LT(html.find("data-v=\"conv1 (backward)\""), html.find("data-v=\"flatten\""));
  EXPECT_THAT(html, HasSubstr("<th class=\"num\" aria-sort=\"descending\">Win ms</th>"));
}

TEST(HtmlReport, SaysEveryUnavailableCounterOnceInTheNotesAndRefersToIt) {
  const std::string html = html_report(test::synthetic_profile());
  const Markup m = parse_html(html);
  std::string notes;
  bool in_notes = false;
  for (const Element& e : m.elements) {
    if (e.attributes.count("id")) in_notes = e.attributes.at("id") == "warnings";
    if (in_notes && e.name == "li") notes += e.text + "\n";
  }
  EXPECT_THAT(notes, HasSubstr("LLC-load-misses: unsupported - this virtual machine exposes no hardware PMU"));
  std::size_t said = 0;
  for (std::size_t i = html.find("exposes no hardware PMU"); i != std::string::npos; i = html.find("exposes no hardware PMU", i + 1)) ++said;
  EXPECT_EQ(said, 1u) << "the reason once, at the top";
  // Unavailable cells read n/a[k] pointing at the note, never 0.
  std::size_t na = 0;
  for (const Element* td : m.all("td")) {
    if (td->text != "n/a[2]") continue;
    ++na;
    EXPECT_EQ(td->attributes.at("title"), "see note 2");
  }
  EXPECT_EQ(na, test::synthetic_profile().layers.size() + 1);
}

TEST(HtmlReport, TheAnswerComesFirstWithHeadroomWhyAndGroupedViews) {
  const std::string html = html_report(test::synthetic_profile({.train = false}));
  EXPECT_THAT(html, HasSubstr("to win at the roofs"));
  EXPECT_LT(html.find("id=\"warnings\""), html.find("id=\"layer-table\""));
  EXPECT_LT(html.find("id=\"layer-table\""), html.find("id=\"roofline\""));
  EXPECT_THAT(html, HasSubstr("aria-sort=\"descending\">Win ms</th>"));
  EXPECT_THAT(html, HasSubstr("<th class=\"num\">Roof ms</th>"));
  EXPECT_THAT(html, HasSubstr(">compute below roof</td>"));
  EXPECT_THAT(html, HasSubstr("id=\"group-op\""));
  EXPECT_THAT(html, HasSubstr("id=\"group-block-1\""));
  EXPECT_THAT(html, HasSubstr("<option value=\"group-op\">per op</option>"));
}

TEST(HtmlReport, MarksLayersThatTakeMuchTimeFarBelowTheirRoof) {
  Profile p = test::synthetic_profile();
  const Markup plain = parse_html(html_report(p));
  std::size_t marked = 0;
  for (const Element* tr : plain.all("tr")) marked += tr->attributes.count("class") && tr->attributes.at("class") == "worry";
  EXPECT_EQ(marked, 0u);
  // layer1.0.conv1's backward pass: 32% of the layers' time; at 20% of its roof it is worth a look.
  for (LayerProfile& l : p.layers) {
    if (l.name == "layer1.0.conv1" && l.phase == LayerPhase::backward) l.roofline->efficiency = 0.2;
  }
  const Markup m = parse_html(html_report(p));
  std::vector<std::string> worried;
  for (const Element* tr : m.all("tr")) {
    if (tr->attributes.count("class") && tr->attributes.at("class") == "worry") worried.push_back(tr->name);
  }
  EXPECT_EQ(worried.size(), 1u);
  EXPECT_THAT(html_report(p), HasSubstr("<tr class=\"worry\"><td data-v=\"layer1.0.conv1 (backward)\">"));
}

TEST(HtmlReport, ShowsTheMemoryBreakdownAndTheCalibration) {
  const std::string html = html_report(test::synthetic_profile());
  EXPECT_THAT(html, HasSubstr("61.00 MB"));  // peak RSS, measured
  EXPECT_THAT(html, HasSubstr("2.90 MB"));   // allocator peak, measured
  EXPECT_THAT(html, HasSubstr("1,234"));     // page faults
  EXPECT_THAT(html, HasSubstr("L1 200 · L2 90 · L3 50 · DRAM 15"));
  EXPECT_THAT(html, HasSubstr("fma_sp 120 · gemm_sp 100"));
  const std::string uncalibrated = html_report(test::synthetic_profile({.calibrated = false}));
  EXPECT_THAT(uncalibrated, HasSubstr("none for 2 threads"));
}

}  // namespace
}  // namespace hwprof
