// The event-group format (counters/README.md), metric evaluation and the shipped group files.
// No hardware needed.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "counters/event_resolver.hpp"
#include "hwprof/event_group.hpp"

namespace hwprof {
namespace {

const std::string kCountersDir = HWPROF_COUNTERS_DIR;

constexpr const char* kValid = R"(# a comment
TITLE    Double-precision FLOPs
SCOPE    core
FAMILIES skylake-sp, icelake-sp

EVENTS
cycles     CPU_CLK_UNHALTED:THREAD_P
dp_scalar  FP_ARITH_INST_RETIRED:SCALAR_DOUBLE
dp_256     FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE
rd         uncore_imc/event=0x04,umask=0x0f/

METRICS
DP FLOP [FLOP]          = dp_scalar + 4 * dp_256
DP FLOP rate [GFLOP/s]  = (1e-9 * dp_scalar + 4e-9 * dp_256) / time
Per cycle [FLOP/cycle]  = (dp_scalar + 4 * dp_256) / cycles
Odd [x]                 = -2.5 * dp_scalar - dp_256 + .5 * cycles
Bytes [bytes]           = 64*rd

DESCRIPTION
First line.

# not a comment here
Last line.

SOURCE
Intel perfmon.
)";

Result<EventGroup> parse(const std::string& text) {
  return parse_event_group(text, "g.txt");
}

// The error message of parsing `text`, which must fail.
std::string error_of(const std::string& text) {
  auto group = parse(text);
  EXPECT_FALSE(group.ok()) << "expected a parse error for:\n" << text;
  return group.ok() ? std::string() : group.error().message;
}

// kValid with `from` replaced by `to`.
std::string valid_with(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

constexpr const char* kHeader = "TITLE t\nSCOPE core\nFAMILIES zen3\n";

class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("hwprof-groups-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((path_ / relative).parent_path());
    std::ofstream(path_ / relative) << text;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// ---- parsing ---------------------------------------------------------------------------

TEST(EventGroupParse, ReadsEveryPartOfAValidFile) {
  auto group = parse(kValid);
  ASSERT_TRUE(group.ok()) << group.error().message;
  EXPECT_EQ(group->name, "g");
  EXPECT_EQ(group->file, "g.txt");
  EXPECT_EQ(group->title, "Double-precision FLOPs");
  EXPECT_EQ(group->scope, GroupScope::core);
  EXPECT_EQ(group->families, (std::vector<std::string>{"skylake-sp", "icelake-sp"}));
  ASSERT_EQ(group->events.size(), 4u);
  EXPECT_EQ(group->events[1].id, "dp_scalar");
  EXPECT_EQ(group->events[1].event, "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE");
  EXPECT_EQ(group->events[1].line, 8);
  EXPECT_EQ(group->events[3].event, "uncore_imc/event=0x04,umask=0x0f/");
  ASSERT_EQ(group->metrics.size(), 5u);
  EXPECT_EQ(group->description, "First line.\n\n# not a comment here\nLast line.");
  EXPECT_EQ(group->source, "Intel perfmon.");
}

TEST(EventGroupParse, MetricsKeepNameUnitLineAndTerms) {
  auto group = parse(kValid);
  ASSERT_TRUE(group.ok()) << group.error().message;
  const Metric& flop = group->metrics[0];
  EXPECT_EQ(flop.name, "DP FLOP");
  EXPECT_EQ(flop.unit, "FLOP");
  EXPECT_EQ(flop.line, 13);
  ASSERT_EQ(flop.numerator.size(), 2u);
  EXPECT_EQ(flop.numerator[0].id, "dp_scalar");
  EXPECT_DOUBLE_EQ(flop.numerator[0].coefficient, 1.0);
  EXPECT_EQ(flop.numerator[1].id, "dp_256");
  EXPECT_DOUBLE_EQ(flop.numerator[1].coefficient, 4.0);
  EXPECT_TRUE(flop.denominator.empty());

  const Metric& rate = group->metrics[1];
  EXPECT_EQ(rate.unit, "GFLOP/s");
  ASSERT_EQ(rate.numerator.size(), 2u);
  EXPECT_DOUBLE_EQ(rate.numerator[1].coefficient, 4e-9);
  ASSERT_EQ(rate.denominator.size(), 1u);
  EXPECT_EQ(rate.denominator[0].id, "time");

  const Metric& odd = group->metrics[3];
  ASSERT_EQ(odd.numerator.size(), 3u);
  EXPECT_DOUBLE_EQ(odd.numerator[0].coefficient, -2.5);
  EXPECT_DOUBLE_EQ(odd.numerator[1].coefficient, -1.0);
  EXPECT_DOUBLE_EQ(odd.numerator[2].coefficient, 0.5);
  EXPECT_DOUBLE_EQ(group->metrics[4].numerator[0].coefficient, 64.0);
}

TEST(EventGroupParse, RolesSayWhatAMetricMeansWhateverItsName) {
  auto group = parse(valid_with("DP FLOP [FLOP]          =", "Vector-weighted work [FLOP] ROLE flops ="));
  ASSERT_TRUE(group.ok()) << group.error().message;
  EXPECT_EQ(group->metrics[0].role, MetricRole::flops);
  EXPECT_EQ(group->metrics[0].name, "Vector-weighted work");
  ASSERT_EQ(group->metrics[0].numerator.size(), 2u);
  EXPECT_EQ(metric_with_role(*group, MetricRole::flops), &group->metrics[0]);
  EXPECT_EQ(metric_with_role(*group, MetricRole::dram_bytes), nullptr);
  EXPECT_EQ(metric_with_role(*group, MetricRole::none), nullptr);
  // A file without roles (every file before roles existed) still parses; its metrics have none.
  auto old = parse(kValid);
  ASSERT_TRUE(old.ok()) << old.error().message;
  for (const Metric& m : old->metrics) EXPECT_EQ(m.role, MetricRole::none) << m.name;
  for (MetricRole role : {MetricRole::flops, MetricRole::dram_bytes, MetricRole::dram_read_bytes, MetricRole::llc_miss_bytes}) {
    EXPECT_EQ(metric_role_named(metric_role_name(role)), role);
  }
  EXPECT_EQ(metric_role_name(MetricRole::none), "");
  EXPECT_EQ(metric_role_named("FLOP"), std::nullopt);
}

TEST(EventGroupParse, ScopesAndSections) {
  auto uncore = parse(valid_with("SCOPE    core", "SCOPE uncore"));
  ASSERT_TRUE(uncore.ok()) << uncore.error().message;
  EXPECT_EQ(uncore->scope, GroupScope::uncore);
  // METRICS, DESCRIPTION and SOURCE are optional; CRLF line ends are fine.
  auto minimal = parse("TITLE t\r\nSCOPE software\r\nFAMILIES software\r\nEVENTS\r\ntask task-clock\r\n");
  ASSERT_TRUE(minimal.ok()) << minimal.error().message;
  EXPECT_EQ(minimal->scope, GroupScope::software);
  EXPECT_EQ(minimal->events[0].event, "task-clock");
  EXPECT_TRUE(minimal->metrics.empty());
  EXPECT_TRUE(minimal->description.empty());
}

struct BadGroup {
  const char* what;
  std::string text;
  std::string message;  // the whole expected message
};

class EventGroupErrors : public ::testing::TestWithParam<BadGroup> {};

TEST_P(EventGroupErrors, SayFileLineWhatAndExpected) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().message);
}

const std::string kEvents = std::string(kHeader) + "EVENTS\ncycles CYCLES_NOT_IN_HALT\n";

std::string many_events(int n) {
  std::string text = std::string(kHeader) + "EVENTS\n";
  for (int i = 0; i < n; ++i) text += "e" + std::to_string(i) + " E" + std::to_string(i) + "\n";
  return text;
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, EventGroupErrors,
    ::testing::Values(
        BadGroup{"unknown section", valid_with("EVENTS\n", "EVENT\n"),
                 "g.txt:6: unknown section 'EVENT' (did you mean 'EVENTS'?); expected one of TITLE, SCOPE, FAMILIES, "
                 "EVENTS, METRICS, DESCRIPTION, SOURCE"},
        BadGroup{"misspelt section inside prose", valid_with("SOURCE\n", "SORUCE\n"),
                 "g.txt:25: unknown section 'SORUCE' (did you mean 'SOURCE'?); expected one of TITLE, SCOPE, FAMILIES, "
                 "EVENTS, METRICS, DESCRIPTION, SOURCE"},
        BadGroup{"duplicate id", valid_with("dp_256     FP", "dp_scalar  FP"), "g.txt:9: duplicate event id 'dp_scalar' (first at line 8)"},
        BadGroup{"duplicate event", valid_with("FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"),
                 "g.txt:9: event 'FP_ARITH_INST_RETIRED:SCALAR_DOUBLE' is already listed as 'dp_scalar' at line 8"},
        BadGroup{"unknown id in a metric", valid_with("+ 4 * dp_256\n", "+ 4 * dp_265\n"),
                 "g.txt:13: metric 'DP FLOP' uses 'dp_265', which is not an event id of this group (did you mean "
                 "'dp_256'?); expected one of cycles, dp_scalar, dp_256, rd, time"},
        BadGroup{"malformed coefficient", valid_with("(1e-9 * dp_scalar", "(1e-9x * dp_scalar"),
                 "g.txt:14: metric 'DP FLOP rate': malformed coefficient '1e-9x'; expected a number such as 2, 0.5 or 1e-9"},
        BadGroup{"two dots", valid_with("-2.5 *", "-2.5.1 *"),
                 "g.txt:16: metric 'Odd': malformed coefficient '2.5.1'; expected a number such as 2, 0.5 or 1e-9"},
        BadGroup{"coefficient without *", valid_with("+ 4 * dp_256\n", "+ 4 dp_256\n"),
                 "g.txt:13: metric 'DP FLOP': expected '*' after the coefficient '4', got 'dp_256' (a term is "
                 "'coefficient * id' or 'id')"},
        BadGroup{"coefficient after the id", valid_with("+ 4 * dp_256\n", "+ dp_256 * 4\n"),
                 "g.txt:13: metric 'DP FLOP': write the coefficient first: '2 * dp_256', not 'dp_256 * 2'"},
        BadGroup{"no id after *", valid_with("+ 4 * dp_256\n", "+ 4 * 5\n"), "g.txt:13: metric 'DP FLOP': expected an event id after '4 *', got '5'"},
        BadGroup{"dangling +", valid_with("+ 4 * dp_256\n", "+\n"),
                 "g.txt:13: metric 'DP FLOP': expected a term ('coefficient * id' or 'id'), got end of line"},
        BadGroup{"unexpected character", valid_with("+ 4 * dp_256\n", "+ 4 * dp_256 ^ 2\n"),
                 "g.txt:13: metric 'DP FLOP': unexpected character '^' in the formula; expected event ids, numbers, "
                 "+ - * / and parentheses"},
        BadGroup{"numerator needs parentheses", valid_with("(1e-9 * dp_scalar + 4e-9 * dp_256) / time", "1e-9 * dp_scalar + 4e-9 * dp_256 / time"),
                 "g.txt:14: metric 'DP FLOP rate': the numerator has 2 terms; put it in parentheses before '/' so that "
                 "the division reads one way only"},
        BadGroup{"denominator needs parentheses", valid_with("/ cycles\n", "/ cycles + time\n"),
                 "g.txt:15: metric 'Per cycle': the denominator has 2 terms; put it in parentheses after '/'"},
        BadGroup{"two divisions", valid_with("/ cycles\n", "/ cycles / time\n"),
                 "g.txt:15: metric 'Per cycle': unexpected '/' after the formula; expected the end of the line (one '/' at "
                 "most: numerator / denominator)"},
        BadGroup{"unclosed parenthesis", valid_with(") / time", " / time"),
                 "g.txt:14: metric 'DP FLOP rate': expected ')' to close the '(', got '/'"},
        BadGroup{"no unit", valid_with("DP FLOP [FLOP]", "DP FLOP"), "g.txt:13: metric line has no '[unit]'; expected 'name [unit] = formula'"},
        BadGroup{"empty unit", valid_with("[FLOP]", "[]"), "g.txt:13: empty unit '[]'; write the unit, for example [GFLOP/s] or [ratio]"},
        BadGroup{"no name", valid_with("DP FLOP [FLOP]", "[FLOP]"), "g.txt:13: metric has no name before '['; expected 'name [unit] = formula'"},
        BadGroup{"no =", valid_with("[FLOP]          =", "[FLOP] "), "g.txt:13: expected '=' after '[FLOP]'; expected 'name [unit] = formula'"},
        BadGroup{"unknown role", valid_with("[FLOP]          =", "[FLOP] ROLE flop ="),
                 "g.txt:13: unknown role 'flop' (did you mean 'flops'?); expected one of flops, dram_bytes, dram_read_bytes, "
                 "llc_miss_bytes"},
        BadGroup{"ROLE without a role", valid_with("[FLOP]          =", "[FLOP] ROLE ="),
                 "g.txt:13: ROLE names no role; expected 'ROLE role' with a role among flops, dram_bytes, dram_read_bytes, "
                 "llc_miss_bytes"},
        BadGroup{"text after the role", valid_with("[FLOP]          =", "[FLOP] ROLE flops sp ="),
                 "g.txt:13: expected '=' after 'ROLE flops'; expected 'name [unit] ROLE role = formula'"},
        BadGroup{"role of another unit", valid_with("Bytes [bytes]           =", "Bytes [bytes] ROLE flops ="),
                 "g.txt:17: metric 'Bytes' has ROLE flops, but its unit is [bytes]; expected [FLOP]"},
        BadGroup{"role on a ratio", valid_with("DP FLOP rate [GFLOP/s]  =", "DP FLOP rate [FLOP] ROLE flops ="),
                 "g.txt:14: metric 'DP FLOP rate' has ROLE flops, but it has a denominator; a role's metric is a count (no '/')"},
        BadGroup{"role on a formula with time", std::string(kHeader) + "EVENTS\na A\nMETRICS\nx [bytes] ROLE dram_bytes = 64 * a + time\n",
                 "g.txt:7: metric 'x' has ROLE dram_bytes, but it uses 'time'; a role's metric is a count over the interval"},
        BadGroup{"duplicate role", std::string(kHeader) + "EVENTS\na A\nMETRICS\nx [FLOP] ROLE flops = a\ny [FLOP] ROLE flops = 2 * a\n",
                 "g.txt:8: a second metric with ROLE flops (the first is 'x' at line 7); expected each role once in a group"},
        BadGroup{"no formula", valid_with("= dp_scalar + 4 * dp_256\n", "=\n"), "g.txt:13: metric 'DP FLOP' has no formula after '='"},
        BadGroup{"duplicate metric", valid_with("Odd [x]", "DP FLOP [x]"), "g.txt:16: duplicate metric 'DP FLOP' (first at line 13)"},
        BadGroup{"missing EVENTS", std::string(kHeader) + "METRICS\n",
                 "g.txt: missing EVENTS section; expected a line 'EVENTS' followed by 'id event-name' lines"},
        BadGroup{"empty group", std::string(kHeader) + "EVENTS\n# nothing yet\n", "g.txt:4: empty group: EVENTS lists no events"},
        BadGroup{"more than 64 events", many_events(65), "g.txt:69: more than 64 events; split the group (a group opens its events together)"},
        BadGroup{"duplicate section", kEvents + "EVENTS\n", "g.txt:6: a second EVENTS section (the first is at line 4); expected each section once"},
        BadGroup{"missing TITLE", "SCOPE core\nFAMILIES zen3\nEVENTS\nc cycles\n",
                 "g.txt: missing TITLE line; expected 'TITLE ...' before the sections"},
        BadGroup{"missing FAMILIES", "TITLE t\nSCOPE core\nEVENTS\nc cycles\n",
                 "g.txt: missing FAMILIES line; expected 'FAMILIES ...' before the sections"},
        BadGroup{"duplicate header", std::string(kHeader) + "TITLE again\n", "g.txt:4: a second TITLE line (the first is at line 1)"},
        BadGroup{"empty title", "TITLE\n", "g.txt:1: TITLE has no text; expected 'TITLE <one line saying what the group measures>'"},
        BadGroup{"unknown scope", "SCOPE cores\n", "g.txt:1: unknown scope 'cores' (did you mean 'core'?); expected one of core, uncore, software"},
        BadGroup{"unknown family", "FAMILIES zen6\n",
                 "g.txt:1: unknown family 'zen6' (did you mean 'zen2'?); expected one of skylake-sp, icelake-sp, "
                 "sapphire-rapids, granite-rapids, zen2, zen3, zen4, zen5, generic, software"},
        BadGroup{"text before the sections", "hello world\n",
                 "g.txt:1: unexpected 'hello world' before the first section; expected a header line (TITLE, SCOPE, "
                 "FAMILIES) or a section line (EVENTS, METRICS, DESCRIPTION, SOURCE)"},
        BadGroup{"event line with one word", std::string(kHeader) + "EVENTS\ncycles\n",
                 "g.txt:5: event line 'cycles' has one word; expected 'id event-name'"},
        BadGroup{"event line with three words", std::string(kHeader) + "EVENTS\nc cycles extra\n",
                 "g.txt:5: unexpected 'extra' after the event name 'cycles'; expected 'id event-name' (event names contain "
                 "no spaces)"},
        BadGroup{"upper-case id", std::string(kHeader) + "EVENTS\nCycles cycles\n",
                 "g.txt:5: event id 'Cycles' must start with a lower-case letter and use only a-z, 0-9 and '_'"},
        BadGroup{"reserved id", std::string(kHeader) + "EVENTS\ntime task-clock\n",
                 "g.txt:5: 'time' is reserved for the interval in seconds; choose another id"},
        BadGroup{"empty prose section", kEvents + "DESCRIPTION\n\nSOURCE\nx\n", "g.txt:6: the DESCRIPTION section is empty"}),
    [](const ::testing::TestParamInfo<BadGroup>& param_info) {
      std::string name;
      for (char c : std::string(param_info.param.what)) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      return name;
    });

// ---- loading -----------------------------------------------------------------------------

TEST(EventGroupLoad, MissingFileAndDirectorySayWhat) {
  auto missing = load_event_group("/nonexistent/flops.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "/nonexistent/flops.txt: cannot open the event-group file (No such file or directory)");
  TempDir dir;
  auto directory = load_event_group(dir.path().string());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message, dir.path().string() + ": is a directory, not an event-group file; give a regular file or a pipe");
}

TEST(EventGroupLoad, FamilyFolderSortedAndChecked) {
  TempDir dir;
  dir.write("zen3/b.txt", kEvents);
  dir.write("zen3/a.txt", kEvents);
  dir.write("zen3/notes.md", "not a group");
  auto groups = load_family_groups(dir.path().string(), "zen3");
  ASSERT_TRUE(groups.ok()) << groups.error().message;
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].name, "a");
  EXPECT_EQ((*groups)[1].name, "b");
  EXPECT_EQ((*groups)[0].file, (dir.path() / "zen3" / "a.txt").string());

  dir.write("zen2/x.txt", kEvents);  // says zen3, lives in zen2/
  auto wrong = load_family_groups(dir.path().string(), "zen2");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message, (dir.path() / "zen2" / "x.txt").string() +
                                       ": FAMILIES says zen3, but the file is in the 'zen2' folder; expected the folder's "
                                       "family among FAMILIES");

  dir.write("zen4/bad.txt", std::string(kHeader) + "EVENTS\n");
  auto bad = load_family_groups(dir.path().string(), "zen4");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, (dir.path() / "zen4" / "bad.txt").string() + ":4: empty group: EVENTS lists no events");
}

TEST(EventGroupLoad, UnknownFamilyMissingFolder) {
  auto unknown = load_family_groups(kCountersDir, "zen6");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "unknown counter family 'zen6' (did you mean 'zen2'?); expected one of skylake-sp, icelake-sp, sapphire-rapids, "
            "granite-rapids, zen2, zen3, zen4, zen5, generic, software");
  // A search path may lack a family: no groups there, not an error.
  TempDir dir;
  auto missing = load_family_groups(dir.path().string(), "zen4");
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_TRUE(missing->empty());
  dir.write("zen4", "a file where the folder should be");
  auto not_a_folder = load_family_groups(dir.path().string(), "zen4");
  ASSERT_FALSE(not_a_folder.ok());
  EXPECT_EQ(not_a_folder.error().message.rfind((dir.path() / "zen4").string() + ": cannot list the counter groups (", 0), 0u)
      << not_a_folder.error().message;
}

// ---- the shipped files -------------------------------------------------------------------

std::map<std::string, EventGroup> shipped(const std::string& family) {
  std::map<std::string, EventGroup> by_name;
  auto groups = load_family_groups(kCountersDir, family);
  EXPECT_TRUE(groups.ok()) << groups.error().message;
  if (groups.ok()) {
    for (EventGroup& g : *groups) by_name.emplace(g.name, std::move(g));
  }
  return by_name;
}

TEST(ShippedGroups, EveryFileLoadsWithProseAndDefinedIds) {
  int files = 0;
  for (const std::string& family : known_group_families()) {
    SCOPED_TRACE(family);
    for (const auto& [name, group] : shipped(family)) {
      SCOPED_TRACE(name);
      ++files;
      EXPECT_FALSE(group.title.empty());
      EXPECT_FALSE(group.description.empty()) << "every shipped group states its caveats";
      EXPECT_FALSE(group.source.empty()) << "every shipped group cites its encodings";
      EXPECT_FALSE(group.metrics.empty());
      std::set<std::string> ids = {"time"};
      for (const GroupEvent& e : group.events) ids.insert(e.id);
      for (const Metric& m : group.metrics) {
        for (const auto* side : {&m.numerator, &m.denominator}) {
          for (const MetricTerm& t : *side) EXPECT_EQ(ids.count(t.id), 1u) << m.name << " uses " << t.id;
        }
      }
    }
  }
  EXPECT_EQ(files, 42);
}

TEST(ShippedGroups, EachHardwareFamilyHasTheRequiredGroups) {
  const std::map<std::string, std::vector<std::string>> required = {{"skylake-sp", {"dram", "flops_dp", "flops_sp", "ipc", "llc"}},
                                                                    {"icelake-sp", {"dram", "flops_dp", "flops_sp", "ipc", "llc"}},
                                                                    {"sapphire-rapids", {"dram", "flops_dp", "flops_sp", "ipc", "llc"}},
                                                                    {"zen2", {"dram", "flops", "ipc", "llc"}},
                                                                    {"zen3", {"dram", "flops", "ipc", "llc"}},
                                                                    {"zen4", {"dram", "flops", "ipc", "llc"}},
                                                                    {"granite-rapids", {"dram", "flops_dp", "flops_sp", "ipc", "llc"}},
                                                                    {"zen5", {"dram", "flops", "flops_dp", "flops_sp", "ipc", "llc"}},
                                                                    {"generic", {"branch", "cache", "ipc"}},
                                                                    {"software", {"software"}}};
  for (const auto& [family, names] : required) {
    std::vector<std::string> found;
    for (const auto& [name, group] : shipped(family)) found.push_back(name);
    EXPECT_EQ(found, names) << family;
  }
}

// A metric's value from a fake set of event values.
std::optional<double> value_of(const EventGroup& group, const std::string& metric, const std::map<std::string, double>& values) {
  for (const Metric& m : group.metrics) {
    if (m.name != metric) continue;
    return evaluate_metric(m,
                           [&](std::string_view id) -> std::optional<double> {
                             const auto it = values.find(std::string(id));
                             return it == values.end() ? std::nullopt : std::optional<double>(it->second);
                           })
        .value;
  }
  ADD_FAILURE() << "no metric '" << metric << "' in " << group.file;
  return std::nullopt;
}

TEST(ShippedGroups, IntelFlopsWeightByVectorWidth) {
  for (const std::string family : {"skylake-sp", "icelake-sp", "sapphire-rapids"}) {
    SCOPED_TRACE(family);
    auto groups = shipped(family);
    // One instruction of each width.
    EXPECT_EQ(value_of(groups.at("flops_dp"), "DP FLOP", {{"dp_scalar", 1}, {"dp_128", 1}, {"dp_256", 1}, {"dp_512", 1}}), 15.0);
    EXPECT_EQ(value_of(groups.at("flops_sp"), "SP FLOP", {{"sp_scalar", 1}, {"sp_128", 1}, {"sp_256", 1}, {"sp_512", 1}}), 29.0);
    EXPECT_DOUBLE_EQ(
        *value_of(groups.at("flops_dp"), "DP FLOP rate", {{"dp_scalar", 0}, {"dp_128", 0}, {"dp_256", 0}, {"dp_512", 1e9}, {"time", 2.0}}), 4.0);
    EXPECT_EQ(value_of(groups.at("llc"), "LLC miss bytes", {{"misses", 10}}), 640.0);
  }
}

TEST(ShippedGroups, DramBytesAre64TimesCasCounts) {
  std::map<std::string, double> skx;
  for (int i = 0; i < 6; ++i) {
    skx["rd" + std::to_string(i)] = 1;
    skx["wr" + std::to_string(i)] = 2;
  }
  auto skylake = shipped("skylake-sp");
  EXPECT_EQ(value_of(skylake.at("dram"), "DRAM read bytes", skx), 6 * 64.0);
  EXPECT_EQ(value_of(skylake.at("dram"), "DRAM write bytes", skx), 12 * 64.0);
  EXPECT_EQ(value_of(skylake.at("dram"), "DRAM bytes", skx), 18 * 64.0);
  for (const std::string family : {"icelake-sp", "sapphire-rapids", "zen4"}) {
    auto groups = shipped(family);
    EXPECT_EQ(value_of(groups.at("dram"), "DRAM read bytes", {{"rd", 3}, {"wr", 1}}), 192.0) << family;
    EXPECT_EQ(value_of(groups.at("dram"), "DRAM write bytes", {{"rd", 3}, {"wr", 1}}), 64.0) << family;
    EXPECT_DOUBLE_EQ(*value_of(groups.at("dram"), "DRAM bandwidth", {{"rd", 3e9}, {"wr", 1e9}, {"time", 2}}), 128.0) << family;
  }
  for (const std::string family : {"zen2", "zen3"}) {
    std::map<std::string, double> channels;
    for (int i = 0; i < 8; ++i) channels["ch" + std::to_string(i)] = 1;
    EXPECT_EQ(value_of(shipped(family).at("dram"), "DRAM bytes", channels), 8 * 64.0) << family;
  }
}

bool flop_like_unit(const std::string& unit) {
  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("flop") != std::string::npos;
}

// The group's FP events: those that a metric in a FLOP-like unit (FLOP, GFLOP/s, FLOP/cycle) weights.
std::set<std::string> fp_event_ids(const EventGroup& group) {
  std::set<std::string> ids;
  for (const Metric& m : group.metrics) {
    if (!flop_like_unit(m.unit)) continue;
    for (const MetricTerm& t : m.numerator) {
      if (t.id != "time") ids.insert(t.id);
    }
  }
  return ids;
}

// The roofline and the self-test find metrics by role only: a shipped FLOP count without one
// would be shown and ignored (counters/README.md, "The format"). A FLOP count is a metric with
// no denominator whose unit is FLOP-like or whose formula weights only FP events.
TEST(ShippedGroups, EveryFlopCountHasTheFlopsRole) {
  int flop_counts = 0;
  for (const std::string& family : known_group_families()) {
    for (const auto& [name, group] : shipped(family)) {
      const std::set<std::string> fp = fp_event_ids(group);
      for (const Metric& m : group.metrics) {
        const bool weights_fp =
            !m.numerator.empty() && std::all_of(m.numerator.begin(), m.numerator.end(), [&](const MetricTerm& t) { return fp.count(t.id) == 1; });
        const bool flop_count = m.denominator.empty() && (flop_like_unit(m.unit) || weights_fp);
        flop_counts += flop_count;
        if (flop_count) {
          EXPECT_EQ(m.role, MetricRole::flops) << family << "/" << name << ": " << m.name << " [" << m.unit << "]";
        }
      }
      if (name.rfind("flops", 0) == 0) {
        EXPECT_NE(metric_with_role(group, MetricRole::flops), nullptr) << family << "/" << name;
      }
    }
  }
  EXPECT_EQ(flop_counts, 14);  // one per shipped FLOP group
}

// The metric each hardware group's reader looks for has its role: DRAM bytes for the
// roofline, DRAM read bytes (where counted apart) for the self-test, LLC miss bytes.
TEST(ShippedGroups, EveryByteCountTheRooflineReadsHasItsRole) {
  for (const std::string& family : known_group_families()) {
    if (family == "software") continue;
    for (const auto& [name, group] : shipped(family)) {
      SCOPED_TRACE(family + "/" + name);
      if (name == "dram") {
        EXPECT_NE(metric_with_role(group, MetricRole::dram_bytes), nullptr);
        const bool splits = std::any_of(group.metrics.begin(), group.metrics.end(), [](const Metric& m) { return m.name == "DRAM read bytes"; });
        EXPECT_EQ(metric_with_role(group, MetricRole::dram_read_bytes) != nullptr, splits);
      }
      if (name == "llc" || name == "cache") {
        EXPECT_NE(metric_with_role(group, MetricRole::llc_miss_bytes), nullptr);
      }
      // A byte count without a role is one that no reader wants: DRAM writes alone.
      for (const Metric& m : group.metrics) {
        if (m.unit == "bytes" && m.role == MetricRole::none) {
          EXPECT_NE(m.name.find("write"), std::string::npos) << m.name;
        }
      }
    }
  }
}

TEST(ShippedGroups, ScopesMatchWhatTheEventsCount) {
  for (const std::string& family : known_group_families()) {
    for (const auto& [name, group] : shipped(family)) {
      const bool amd_l3 = name == "llc" && family.rfind("zen", 0) == 0;
      const GroupScope expected = family == "software" ? GroupScope::software : name == "dram" || amd_l3 ? GroupScope::uncore : GroupScope::core;
      EXPECT_EQ(group.scope, expected) << family << "/" << name;
    }
  }
}

// ---- metric evaluation -------------------------------------------------------------------

Metric metric_from(const std::string& formula) {
  auto group = parse(std::string(kHeader) + "EVENTS\na A\nb B\nc C\nMETRICS\nm [u] = " + formula + "\n");
  EXPECT_TRUE(group.ok()) << (group.ok() ? "" : group.error().message);
  return group.ok() ? group->metrics.at(0) : Metric{};
}

MetricValue evaluate(const Metric& m, const std::map<std::string, double>& values) {
  return evaluate_metric(m, [&](std::string_view id) -> std::optional<double> {
    const auto it = values.find(std::string(id));
    return it == values.end() ? std::nullopt : std::optional<double>(it->second);
  });
}

TEST(EvaluateMetric, WeightsDivisionAndTime) {
  EXPECT_EQ(evaluate(metric_from("a + 2 * b - 0.5 * c"), {{"a", 1}, {"b", 10}, {"c", 4}}).value, 19.0);
  EXPECT_EQ(evaluate(metric_from("(a + b) / (c + c)"), {{"a", 3}, {"b", 5}, {"c", 2}}).value, 2.0);
  EXPECT_EQ(evaluate(metric_from("64e-9 * a / time"), {{"a", 1e9}, {"time", 0.5}}).value, 128.0);
  const MetricValue ok = evaluate(metric_from("a"), {{"a", 0}});
  EXPECT_EQ(ok.value, 0.0);  // a measured zero is a value
  EXPECT_TRUE(ok.reason.empty());
}

TEST(EvaluateMetric, AnUnavailableTermGivesNoValueAndSaysWhich) {
  const MetricValue one = evaluate(metric_from("a + 2 * b"), {{"a", 1}});
  EXPECT_FALSE(one.value.has_value());
  EXPECT_EQ(one.reason, "no value for b");
  const MetricValue several = evaluate(metric_from("(a + b + b) / time"), {});
  EXPECT_FALSE(several.value.has_value());
  EXPECT_EQ(several.reason, "no value for a, b, time");
}

TEST(EvaluateMetric, ZeroDenominatorGivesNoValue) {
  const MetricValue v = evaluate(metric_from("a / b"), {{"a", 5}, {"b", 0}});
  EXPECT_FALSE(v.value.has_value());
  EXPECT_EQ(v.reason, "the denominator is zero");
}

// ---- names that work on every family, and families without such events -----------------

TEST(GroupAliases, FlopsWorksOnEveryFamilyWithFlopEvents) {
  const std::vector<std::string> dirs = {kCountersDir};
  struct Case {
    const char* family;
    const char* asked;
    const char* found;
    bool aliased;
  };
  const Case cases[] = {
      {"skylake-sp", "flops", "flops_sp", true},
      {"sapphire-rapids", "flops", "flops_sp", true},
      {"granite-rapids", "flops", "flops_sp", true},
      {"granite-rapids", "flops_dp", "flops_dp", false},
      {"zen2", "flops", "flops", false},
      {"zen4", "flops_sp", "flops", true},
      {"zen3", "flops_dp", "flops", true},
      {"zen5", "flops", "flops", false},
      {"zen5", "flops_sp", "flops_sp", false},
      {"zen5", "flops_dp", "flops_dp", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.family) + " -g " + c.asked);
    auto g = find_event_group(c.asked, c.family, dirs);
    ASSERT_TRUE(g.ok()) << g.error().message;
    EXPECT_EQ(g->name, c.found);
    EXPECT_EQ(g->families, std::vector<std::string>{c.family});
    if (c.aliased) {
      EXPECT_EQ(g->alias_note.rfind("group '" + std::string(c.asked) + "' is '" + c.found + "' on " + c.family + ", which ", 0), 0u) << g->alias_note;
    } else {
      EXPECT_TRUE(g->alias_note.empty()) << g->alias_note;
    }
  }
  // Every hardware family has a FLOP group by the name `flops`, and a DRAM group.
  for (const std::string& family : known_group_families()) {
    if (family == "generic" || family == "software") continue;
    SCOPED_TRACE(family);
    EXPECT_TRUE(find_event_group("flops", family, dirs).ok());
    EXPECT_TRUE(find_event_group("dram", family, dirs).ok());
  }
}

TEST(GroupAliases, AFamilyWithoutFlopEventsSaysSoByName) {
  for (const std::string name : {"flops", "flops_sp", "dram", "llc"}) {
    auto g = find_event_group(name, "generic", {kCountersDir});
    ASSERT_FALSE(g.ok()) << name;
    EXPECT_EQ(g.error().message.rfind("no event group '" + name +
                                          "' for this CPU: its counter family is 'generic', for which "
                                          "hwprof has no FLOP, DRAM or LLC event tables (it has them for Intel Skylake-SP",
                                      0),
              0u)
        << g.error().message;
    EXPECT_NE(g.error().message.find("write a group file with raw encodings"), std::string::npos);
  }
  // Another name keeps the general message.
  auto other = find_event_group("flopz", "zen4", {kCountersDir});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().message.rfind("no event group 'flopz' for this CPU (family zen4, also looked in generic and software)", 0), 0u)
      << other.error().message;
}

// ---- families libpfm4 4.13 cannot name: raw encodings against a recorded sysfs -----------

// The PMU formats the kernel publishes on these CPUs (Linux arch/x86/events/amd/core.c and
// uncore.c, arch/x86/events/intel/core.c and uncore_snbep.c: "event", "umask", "rdwrmask").
class RawFamilySysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("hwprof-family-sysfs-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  void pmu(const std::string& name, int type, bool uncore, const std::vector<std::pair<std::string, std::string>>& formats) {
    auto write = [&](const std::string& relative, const std::string& text) {
      std::filesystem::create_directories((root_ / relative).parent_path());
      std::ofstream(root_ / relative) << text;
    };
    write(name + "/type", std::to_string(type) + "\n");
    if (uncore) write(name + "/cpumask", "0\n");
    for (const auto& [term, format] : formats) write(name + "/format/" + term, format + "\n");
  }
  // Every event of every group of `family`, resolved against the fake sysfs: id → config.
  std::map<std::string, std::uint64_t> resolve_family(const std::string& family) {
    std::map<std::string, std::uint64_t> configs;
    for (const auto& [name, group] : shipped(family)) {
      for (const GroupEvent& e : group.events) {
        auto r = counters::resolve_event(e.event, root_.string());
        EXPECT_TRUE(r.ok()) << family << "/" << name << " " << e.event << ": " << (r.ok() ? "" : r.error().message);
        if (!r.ok()) continue;
        EXPECT_EQ(r->uncore, group.scope == GroupScope::uncore) << e.event;
        if (!r->uncore && r->pmu != "perf") {
          EXPECT_TRUE(r->exclude_kernel) << e.event << ": user space only";
        }
        configs[name + "/" + e.id] = r->config;
      }
    }
    return configs;
  }
  std::filesystem::path root_;
};

TEST_F(RawFamilySysfs, Zen5EncodingsAreThoseOfLinuxAmdzen5) {
  pmu("cpu", 4, false, {{"event", "config:0-7,32-35"}, {"umask", "config:8-15"}});
  pmu("amd_umc_0", 11, true, {{"event", "config:0-7"}, {"rdwrmask", "config:8-9"}});
  pmu("amd_umc_1", 12, true, {{"event", "config:0-7"}, {"rdwrmask", "config:8-9"}});
  pmu("amd_l3", 13, true, {{"event", "config:0-7,32-35"}, {"umask", "config:8-15"}});
  const auto c = resolve_family("zen5");
  EXPECT_EQ(c.at("flops/flops"), 0x0f03u);  // fp_ret_sse_avx_ops.all
  EXPECT_EQ(c.at("flops_sp/sp_scalar"), 0x4f03u);
  EXPECT_EQ(c.at("flops_sp/sp_packed"), 0x6f03u);
  EXPECT_EQ(c.at("flops_dp/dp_scalar"), 0x8f03u);
  EXPECT_EQ(c.at("flops_dp/dp_packed"), 0xaf03u);
  EXPECT_EQ(c.at("dram/rd"), 0x10au);  // umc_cas_cmd.rd
  EXPECT_EQ(c.at("dram/wr"), 0x20au);
  EXPECT_EQ(c.at("llc/refs"), 0xff04u);
  EXPECT_EQ(c.at("llc/misses"), 0x0104u);
  EXPECT_EQ(c.at("ipc/cycles"), 0u);  // PERF_COUNT_HW_CPU_CYCLES: the kernel maps it
}

TEST_F(RawFamilySysfs, GraniteRapidsEncodingsAreThoseOfIntelPerfmon) {
  pmu("cpu", 4, false, {{"event", "config:0-7"}, {"umask", "config:8-15"}, {"edge", "config:18"}});
  pmu("uncore_imc_0", 20, true, {{"event", "config:0-7"}, {"umask", "config:8-15"}});
  pmu("uncore_imc_1", 21, true, {{"event", "config:0-7"}, {"umask", "config:8-15"}});
  const auto c = resolve_family("granite-rapids");
  EXPECT_EQ(c.at("flops_sp/sp_scalar"), 0x02c7u);
  EXPECT_EQ(c.at("flops_sp/sp_512"), 0x80c7u);
  EXPECT_EQ(c.at("flops_dp/dp_scalar"), 0x01c7u);
  EXPECT_EQ(c.at("flops_dp/dp_256"), 0x10c7u);
  EXPECT_EQ(c.at("dram/rd0"), 0xcf05u);  // UNC_M_CAS_COUNT_SCH0.RD
  EXPECT_EQ(c.at("dram/wr1"), 0xf006u);  // UNC_M_CAS_COUNT_SCH1.WR
  EXPECT_EQ(c.at("llc/misses"), 0x412eu);
}

TEST_F(RawFamilySysfs, WithoutACorePmuTheRawEventsSayTheMachineExposesNone) {
  // This project's VMs: no /sys/bus/event_source/devices/cpu at all.
  for (const std::string family : {"zen5", "granite-rapids"}) {
    for (const auto& [name, group] : shipped(family)) {
      for (const GroupEvent& e : group.events) {
        if (e.event.find('/') == std::string::npos || group.scope != GroupScope::core) continue;
        auto r = counters::resolve_event(e.event, root_.string());
        ASSERT_FALSE(r.ok()) << e.event;
        EXPECT_NE(r.error().message.find("PMU 'cpu' is not exposed by this kernel"), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find("exposes no hardware PMU"), std::string::npos) << r.error().message;
      }
    }
  }
}

}  // namespace
}  // namespace hwprof
