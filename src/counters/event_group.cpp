// Event-group files (the format is documented in counters/README.md): parsing with
// "file:line: what; expected what" errors, loading a family's folder, and evaluating a
// metric's linear formula.
#include "hwprof/event_group.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "common/input_file.hpp"
#include "common/suggest.hpp"
#include "common/words.hpp"

namespace hwprof {
namespace {

using common::split_words;
using common::trim;
using common::trim_right;

constexpr std::size_t kMaxEvents = 64;
constexpr std::size_t kMaxFileBytes = 1 << 20;
constexpr std::string_view kTimeId = "time";

const std::vector<std::string_view> kSectionNames = {"EVENTS", "METRICS", "DESCRIPTION", "SOURCE"};
const std::vector<std::string_view> kHeaderKeys = {"TITLE", "SCOPE", "FAMILIES"};
const std::vector<std::string_view> kScopeNames = {"core", "uncore", "software"};
constexpr std::string_view kRoleKeyword = "ROLE";
// Indexed by MetricRole, none first.
const std::vector<std::string_view> kRoleNames = {"flops", "dram_bytes", "dram_read_bytes", "llc_miss_bytes"};

std::vector<std::string_view> views(const std::vector<std::string>& items) {
  return {items.begin(), items.end()};
}

bool contains(const std::vector<std::string_view>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// A line that is one upper-case word: a section keyword, or a mistyped one.
bool looks_like_keyword(std::string_view word) {
  return word.size() >= 3 && std::all_of(word.begin(), word.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

bool is_event_id(std::string_view id) {
  if (id.empty() || id[0] < 'a' || id[0] > 'z') return false;
  return std::all_of(id.begin(), id.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

// ---- formulas: side [ '/' side ], side = '(' sum ')' | sum, sum = [-] term {(+|-) term},
// ---- term = number '*' id | id
struct Token {
  enum Kind { number, name, op, end } kind = end;
  std::string_view text;
  double value = 0.0;
};

class FormulaParser {
 public:
  explicit FormulaParser(std::string_view text) : text_(text) {}

  // The metric's terms, or what is wrong with the formula.
  std::optional<std::string> parse(Metric& metric) {
    if (auto problem = tokenize()) return problem;
    bool numerator_parenthesised = false;
    if (auto problem = parse_side(metric.numerator, numerator_parenthesised)) return problem;
    if (peek_op('/')) {
      ++pos_;
      bool denominator_parenthesised = false;
      if (auto problem = parse_side(metric.denominator, denominator_parenthesised)) return problem;
      if (metric.numerator.size() > 1 && !numerator_parenthesised) {
        return "the numerator has " + std::to_string(metric.numerator.size()) +
               " terms; put it in parentheses before '/' so that the division reads one way only";
      }
      if (metric.denominator.size() > 1 && !denominator_parenthesised) {
        return "the denominator has " + std::to_string(metric.denominator.size()) + " terms; put it in parentheses after '/'";
      }
    }
    if (tokens_[pos_].kind != Token::end) {
      return "unexpected " + describe(tokens_[pos_]) + " after the formula; expected the end of the line" +
             (peek_op('/') ? " (one '/' at most: numerator / denominator)" : "");
    }
    return std::nullopt;
  }

 private:
  static std::string describe(const Token& t) { return t.kind == Token::end ? "end of line" : in_quotes(t.text); }

  std::optional<std::string> tokenize() {
    std::size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == ' ' || c == '\t') {
        ++i;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        const std::size_t start = i;
        while (i < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[i])) || text_[i] == '.')) ++i;
        if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
          ++i;
          if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) ++i;
        }
        // Swallow what is glued to the number, so that "1e-9x" or "2dp" is reported whole.
        while (i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_' || text_[i] == '.')) ++i;
        Token t{Token::number, text_.substr(start, i - start)};
        const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.value);
        if (ec != std::errc() || end != t.text.data() + t.text.size() || !std::isfinite(t.value)) {
          return "malformed coefficient " + in_quotes(t.text) + "; expected a number such as 2, 0.5 or 1e-9";
        }
        tokens_.push_back(t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const std::size_t start = i;
        while (i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_')) ++i;
        tokens_.push_back({Token::name, text_.substr(start, i - start)});
      } else if (std::strchr("+-*/()", c) != nullptr) {
        tokens_.push_back({Token::op, text_.substr(i, 1)});
        ++i;
      } else {
        return "unexpected character " + in_quotes(text_.substr(i, 1)) + " in the formula; expected event ids, numbers, + - * / and parentheses";
      }
    }
    tokens_.push_back({Token::end, {}});
    return std::nullopt;
  }

  bool peek_op(char op) const { return tokens_[pos_].kind == Token::op && tokens_[pos_].text[0] == op; }

  std::optional<std::string> parse_side(std::vector<MetricTerm>& terms, bool& parenthesised) {
    parenthesised = peek_op('(');
    if (parenthesised) ++pos_;
    if (auto problem = parse_sum(terms)) return problem;
    if (parenthesised) {
      if (!peek_op(')')) return "expected ')' to close the '(', got " + describe(tokens_[pos_]);
      ++pos_;
    }
    return std::nullopt;
  }

  std::optional<std::string> parse_sum(std::vector<MetricTerm>& terms) {
    double sign = 1.0;
    if (peek_op('-') || peek_op('+')) {
      sign = peek_op('-') ? -1.0 : 1.0;
      ++pos_;
    }
    while (true) {
      if (auto problem = parse_term(sign, terms)) return problem;
      if (!peek_op('+') && !peek_op('-')) return std::nullopt;
      sign = peek_op('-') ? -1.0 : 1.0;
      ++pos_;
    }
  }

  std::optional<std::string> parse_term(double sign, std::vector<MetricTerm>& terms) {
    const Token& t = tokens_[pos_];
    if (t.kind == Token::number) {
      ++pos_;
      if (!peek_op('*')) {
        return "expected '*' after the coefficient " + in_quotes(t.text) + ", got " + describe(tokens_[pos_]) +
               " (a term is 'coefficient * id' or 'id')";
      }
      ++pos_;
      if (tokens_[pos_].kind != Token::name) {
        return "expected an event id after " + in_quotes(std::string(t.text) + " *") + ", got " + describe(tokens_[pos_]);
      }
      terms.push_back({sign * t.value, std::string(tokens_[pos_].text)});
      ++pos_;
    } else if (t.kind == Token::name) {
      terms.push_back({sign, std::string(t.text)});
      ++pos_;
    } else {
      return "expected a term ('coefficient * id' or 'id'), got " + describe(t);
    }
    if (peek_op('*')) return "write the coefficient first: '2 * " + terms.back().id + "', not '" + terms.back().id + " * 2'";
    return std::nullopt;
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

// ---- the file ----------------------------------------------------------------------------

enum class Section { none, events, metrics, description, source };

class GroupParser {
 public:
  GroupParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Result<EventGroup> parse() {
    std::size_t start = 0;
    int line_number = 0;
    while (start <= text_.size()) {
      const std::size_t end = std::min(text_.find('\n', start), text_.size());
      ++line_number;
      const std::string_view raw = text_.substr(start, end - start);
      if (const std::size_t nul = raw.find('\0'); nul != std::string_view::npos) {
        // Would otherwise end an event name in the middle when it reaches the kernel or libpfm4.
        return Error{source_ + ":" + std::to_string(line_number) + ":" + std::to_string(nul + 1) +
                     ": a NUL byte; an event-group file is text (a binary file, or damaged?)"};
      }
      if (auto problem = take_line(raw, line_number)) {
        return Error{source_ + ":" + std::to_string(line_number) + ": " + *problem};
      }
      if (end == text_.size()) break;
      start = end + 1;
    }
    return finish();
  }

 private:
  std::optional<std::string> take_line(std::string_view raw, int line) {
    const std::string_view text = trim(raw);
    const bool in_prose = section_ == Section::description || section_ == Section::source;
    if (in_prose && !contains(kSectionNames, text)) {
      if (looks_like_keyword(text) && !common::did_you_mean(text, kSectionNames).empty()) return unknown_section(text);
      prose_->push_back(std::string(trim_right(raw)));
      return std::nullopt;
    }
    if (text.empty() || text[0] == '#') return std::nullopt;
    if (contains(kSectionNames, text)) return start_section(text, line);
    const auto words = split_words(text);
    if (contains(kHeaderKeys, words[0])) return take_header(words[0], trim(text.substr(words[0].size())), line);
    if (words.size() == 1 && looks_like_keyword(text)) return unknown_section(text);
    switch (section_) {
      case Section::events:
        return take_event(words, line);
      case Section::metrics:
        return take_metric(text, line);
      default:
        return "unexpected " + in_quotes(text) +
               " before the first section; expected a header line (TITLE, SCOPE, FAMILIES) or a section line "
               "(EVENTS, METRICS, DESCRIPTION, SOURCE)";
    }
  }

  static std::string unknown_section(std::string_view word) {
    std::vector<std::string_view> known = kHeaderKeys;
    known.insert(known.end(), kSectionNames.begin(), kSectionNames.end());
    return "unknown section " + in_quotes(word) + common::did_you_mean(word, known) + "; expected one of " + common::join(known);
  }

  std::optional<std::string> start_section(std::string_view name, int line) {
    if (auto seen = section_lines_.find(std::string(name)); seen != section_lines_.end()) {
      return "a second " + std::string(name) + " section (the first is at line " + std::to_string(seen->second) + "); expected each section once";
    }
    section_lines_[std::string(name)] = line;
    if (name == "EVENTS") section_ = Section::events;
    if (name == "METRICS") section_ = Section::metrics;
    if (name == "DESCRIPTION") {
      section_ = Section::description;
      prose_ = &description_;
    }
    if (name == "SOURCE") {
      section_ = Section::source;
      prose_ = &source_lines_;
    }
    return std::nullopt;
  }

  std::optional<std::string> take_header(std::string_view key, std::string_view value, int line) {
    if (auto seen = header_lines_.find(std::string(key)); seen != header_lines_.end()) {
      return "a second " + std::string(key) + " line (the first is at line " + std::to_string(seen->second) + ")";
    }
    header_lines_[std::string(key)] = line;
    if (key == "TITLE") {
      if (value.empty()) return std::string("TITLE has no text; expected 'TITLE <one line saying what the group measures>'");
      group_.title = std::string(value);
    } else if (key == "SCOPE") {
      if (!contains(kScopeNames, value)) {
        return "unknown scope " + in_quotes(value) + common::did_you_mean(value, kScopeNames) + "; expected one of " + common::join(kScopeNames);
      }
      group_.scope = value == "core" ? GroupScope::core : value == "uncore" ? GroupScope::uncore : GroupScope::software;
    } else {
      const auto known = views(known_group_families());
      const auto families = split_words(value, " \t,");
      if (families.empty()) return "FAMILIES lists no family; expected one or more of " + common::join(known);
      for (std::string_view family : families) {
        if (!contains(known, family)) {
          return "unknown family " + in_quotes(family) + common::did_you_mean(family, known) + "; expected one of " + common::join(known);
        }
        group_.families.emplace_back(family);
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> take_event(const std::vector<std::string_view>& words, int line) {
    if (words.size() == 1) return "event line " + in_quotes(words[0]) + " has one word; expected 'id event-name'";
    if (words.size() > 2) {
      return "unexpected " + in_quotes(words[2]) + " after the event name " + in_quotes(words[1]) +
             "; expected 'id event-name' (event names contain no spaces)";
    }
    const std::string_view id = words[0];
    if (id == kTimeId) return std::string("'time' is reserved for the interval in seconds; choose another id");
    if (!is_event_id(id)) {
      return "event id " + in_quotes(id) + " must start with a lower-case letter and use only a-z, 0-9 and '_'";
    }
    for (const GroupEvent& e : group_.events) {
      if (e.id == id) return "duplicate event id " + in_quotes(id) + " (first at line " + std::to_string(e.line) + ")";
      if (e.event == words[1]) {
        return "event " + in_quotes(words[1]) + " is already listed as " + in_quotes(e.id) + " at line " + std::to_string(e.line);
      }
    }
    if (group_.events.size() == kMaxEvents) {
      return "more than " + std::to_string(kMaxEvents) + " events; split the group (a group opens its events together)";
    }
    group_.events.push_back({std::string(id), std::string(words[1]), line});
    return std::nullopt;
  }

  std::optional<std::string> take_metric(std::string_view text, int line) {
    const auto open = text.find('[');
    if (open == std::string_view::npos) return "metric line has no '[unit]'; expected 'name [unit] = formula'";
    Metric metric;
    metric.line = line;
    metric.name = std::string(trim(text.substr(0, open)));
    if (metric.name.empty()) return std::string("metric has no name before '['; expected 'name [unit] = formula'");
    const auto close = text.find(']', open);
    if (close == std::string_view::npos) return std::string("missing ']' after the unit; expected 'name [unit] = formula'");
    metric.unit = std::string(trim(text.substr(open + 1, close - open - 1)));
    if (metric.unit.empty()) return std::string("empty unit '[]'; write the unit, for example [GFLOP/s] or [ratio]");
    std::string_view rest = trim(text.substr(close + 1));
    if (auto problem = take_role(rest, metric)) return problem;
    if (rest.empty() || rest[0] != '=') {
      if (metric.role != MetricRole::none) {
        return "expected '=' after 'ROLE " + std::string(metric_role_name(metric.role)) + "'; expected 'name [unit] ROLE role = formula'";
      }
      return "expected '=' after '[" + metric.unit + "]'; expected 'name [unit] = formula'";
    }
    const std::string_view formula = trim(rest.substr(1));
    if (formula.empty()) return "metric " + in_quotes(metric.name) + " has no formula after '='";
    if (auto problem = FormulaParser(formula).parse(metric)) return "metric " + in_quotes(metric.name) + ": " + *problem;
    if (auto problem = check_role(metric)) {
      return "metric " + in_quotes(metric.name) + " has ROLE " + std::string(metric_role_name(metric.role)) + ", but " + *problem;
    }
    for (const Metric& m : group_.metrics) {
      if (m.name == metric.name) return "duplicate metric " + in_quotes(metric.name) + " (first at line " + std::to_string(m.line) + ")";
      if (metric.role != MetricRole::none && m.role == metric.role) {
        return "a second metric with ROLE " + std::string(metric_role_name(metric.role)) + " (the first is " + in_quotes(m.name) + " at line " +
               std::to_string(m.line) + "); expected each role once in a group";
      }
    }
    group_.metrics.push_back(std::move(metric));
    return std::nullopt;
  }

  // `ROLE role` between the unit and '=': what the metric means to the roofline and the
  // self-test (counters/README.md, "The format"). Leaves `rest` at the '='.
  static std::optional<std::string> take_role(std::string_view& rest, Metric& metric) {
    const auto words = split_words(rest, " \t=");
    if (words.empty() || words[0] != kRoleKeyword) return std::nullopt;
    rest = trim(rest.substr(kRoleKeyword.size()));
    if (words.size() < 2 || rest.empty() || rest[0] == '=') {
      return "ROLE names no role; expected 'ROLE role' with a role among " + common::join(kRoleNames);
    }
    const auto role = metric_role_named(words[1]);
    if (!role) {
      return "unknown role " + in_quotes(words[1]) + common::did_you_mean(words[1], kRoleNames) + "; expected one of " + common::join(kRoleNames);
    }
    metric.role = *role;
    rest = trim(rest.substr(words[1].size()));
    return std::nullopt;
  }

  // A role's metric is read as a count per call: the unit it is read in, no rate, no ratio.
  static std::optional<std::string> check_role(const Metric& metric) {
    if (metric.role == MetricRole::none) return std::nullopt;
    const std::string_view unit = metric.role == MetricRole::flops ? "FLOP" : "bytes";
    if (metric.unit != unit) return "its unit is [" + metric.unit + "]; expected [" + std::string(unit) + "]";
    if (!metric.denominator.empty()) return std::string("it has a denominator; a role's metric is a count (no '/')");
    for (const MetricTerm& term : metric.numerator) {
      if (term.id == kTimeId) return std::string("it uses 'time'; a role's metric is a count over the interval");
    }
    return std::nullopt;
  }

  static std::string joined_prose(std::vector<std::string> lines) {
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    std::size_t first = 0;
    while (first < lines.size() && lines[first].empty()) ++first;
    std::string out;
    for (std::size_t i = first; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
    return out;
  }

  Result<EventGroup> finish() {
    const std::string at_end = source_ + ": ";
    for (std::string_view key : kHeaderKeys) {
      if (header_lines_.count(std::string(key)) == 0) {
        return Error{at_end + "missing " + std::string(key) + " line; expected '" + std::string(key) + " ...' before the sections"};
      }
    }
    const auto events_line = section_lines_.find("EVENTS");
    if (events_line == section_lines_.end()) {
      return Error{at_end + "missing EVENTS section; expected a line 'EVENTS' followed by 'id event-name' lines"};
    }
    if (group_.events.empty()) {
      return Error{source_ + ":" + std::to_string(events_line->second) + ": empty group: EVENTS lists no events"};
    }
    std::vector<std::string_view> ids;
    for (const GroupEvent& e : group_.events) ids.push_back(e.id);
    for (const Metric& m : group_.metrics) {
      for (const auto* side : {&m.numerator, &m.denominator}) {
        for (const MetricTerm& term : *side) {
          if (term.id == kTimeId || contains(ids, term.id)) continue;
          std::vector<std::string_view> candidates = ids;
          candidates.push_back(kTimeId);
          return Error{source_ + ":" + std::to_string(m.line) + ": metric " + in_quotes(m.name) + " uses " + in_quotes(term.id) +
                       ", which is not an event id of this group" + common::did_you_mean(term.id, candidates) + "; expected one of " +
                       common::join(candidates)};
        }
      }
    }
    for (const auto& [name, text] : {std::pair{"DESCRIPTION", &description_}, std::pair{"SOURCE", &source_lines_}}) {
      const auto header = section_lines_.find(name);
      if (header != section_lines_.end() && joined_prose(*text).empty()) {
        return Error{source_ + ":" + std::to_string(header->second) + ": the " + name + " section is empty"};
      }
    }
    group_.description = joined_prose(description_);
    group_.source = joined_prose(source_lines_);
    group_.file = source_;
    return std::move(group_);
  }

  std::string_view text_;
  std::string source_;
  EventGroup group_;
  Section section_ = Section::none;
  std::map<std::string, int> section_lines_;
  std::map<std::string, int> header_lines_;
  std::vector<std::string> description_;
  std::vector<std::string> source_lines_;
  std::vector<std::string>* prose_ = nullptr;
};

}  // namespace

std::string_view metric_role_name(MetricRole role) {
  const auto index = static_cast<std::size_t>(role);
  return index == 0 || index > kRoleNames.size() ? std::string_view() : kRoleNames[index - 1];
}

std::optional<MetricRole> metric_role_named(std::string_view name) {
  const auto it = std::find(kRoleNames.begin(), kRoleNames.end(), name);
  if (it == kRoleNames.end()) return std::nullopt;
  return static_cast<MetricRole>(it - kRoleNames.begin() + 1);
}

const Metric* metric_with_role(const EventGroup& group, MetricRole role) {
  if (role == MetricRole::none) return nullptr;
  for (const Metric& m : group.metrics) {
    if (m.role == role) return &m;
  }
  return nullptr;
}

const std::vector<std::string>& known_group_families() {
  static const std::vector<std::string> families = {"skylake-sp", "icelake-sp", "sapphire-rapids", "granite-rapids", "zen2", "zen3",
                                                    "zen4",       "zen5",       "generic",         "software"};
  return families;
}

Result<EventGroup> parse_event_group(std::string_view text, const std::string& source_name) {
  auto group = GroupParser(text, source_name).parse();
  if (group) group->name = std::filesystem::path(source_name).stem().string();
  return group;
}

Result<EventGroup> load_event_group(const std::string& path) {
  auto text = common::read_input_file(path, "event-group file", kMaxFileBytes);
  if (!text) return text.error();
  return parse_event_group(*text, path);
}

namespace {

// counters/<dir>/<family>/<name>.txt, the first of `counters_dirs` that has it.
std::optional<std::string> group_file(const std::string& name, const std::string& family, const std::vector<std::string>& counters_dirs) {
  for (const std::string& dir : counters_dirs) {
    const std::string path = dir + "/" + family + "/" + name + ".txt";
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
  }
  return std::nullopt;
}

// The names that work on every family with FLOP events, and what each stands for where the
// family has no file of that name: `flops` is the single-precision group where a family
// counts the precisions apart (Intel; hwprof's layers compute in float), and flops_sp /
// flops_dp are the `flops` group where a family cannot tell them apart (Zen 2 to Zen 4).
struct GroupAlias {
  const char* asked;
  const char* target;
  const char* why;
};
constexpr GroupAlias kGroupAliases[] = {
    {"flops", "flops_sp",
     "counts single and double precision in separate groups, and hwprof's layers compute in single precision; "
     "-g flops_dp counts double precision"},
    {"flops_sp", "flops", "cannot tell single from double precision: its FLOP event counts both"},
    {"flops_dp", "flops", "cannot tell single from double precision: its FLOP event counts both"},
};

bool names_a_hardware_group(const std::string& name) {
  return name == "flops" || name == "flops_sp" || name == "flops_dp" || name == "dram" || name == "llc";
}

}  // namespace

bool names_group_file(const std::string& name) {
  return name.find('/') != std::string::npos || std::filesystem::path(name).extension() == ".txt";
}

Result<EventGroup> find_event_group(const std::string& name, const std::string& family, const std::vector<std::string>& counters_dirs) {
  if (names_group_file(name)) return load_event_group(name);
  for (const std::string& f : {family, std::string("generic"), std::string("software")}) {
    if (auto path = group_file(name, f, counters_dirs)) return load_event_group(*path);
  }
  for (const GroupAlias& alias : kGroupAliases) {
    if (name != alias.asked) continue;
    if (auto path = group_file(alias.target, family, counters_dirs)) {
      auto group = load_event_group(*path);
      if (group) {
        group->alias_note = "group '" + name + "' is '" + alias.target + "' on " + family + ", which " + alias.why;
      }
      return group;
    }
  }
  std::string looked;
  for (const std::string& dir : counters_dirs) looked += (looked.empty() ? "" : ", ") + dir;
  if (names_a_hardware_group(name) && (family == "generic" || family == "software")) {
    return Error{"no event group '" + name + "' for this CPU: its counter family is '" + family +
                 "', for which hwprof has no FLOP, DRAM or LLC event tables (it has them for Intel Skylake-SP, Ice Lake-SP, "
                 "Sapphire/Emerald Rapids, Granite Rapids and AMD Zen 2 to Zen 5; `hwprof info` shows the CPU). The generic "
                 "groups (ipc, cache, branch) still work; for FLOPs or DRAM bytes, write a group file with raw encodings "
                 "(counters/README.md) and give its path to -g"};
  }
  return Error{"no event group '" + name + "' for this CPU (family " + family + ", also looked in generic and software) in " +
               (looked.empty() ? std::string("no folder") : looked) + "; `hwprof info` lists the groups, or give a group file path"};
}

Result<std::vector<EventGroup>> load_family_groups(const std::string& counters_dir, const std::string& family) {
  const auto known = views(known_group_families());
  if (!contains(known, family)) {
    return Error{"unknown counter family " + in_quotes(family) + common::did_you_mean(family, known) + "; expected one of " + common::join(known)};
  }
  const std::filesystem::path dir = std::filesystem::path(counters_dir) / family;
  std::vector<EventGroup> groups;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return groups;  // a search path may lack a family
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  if (ec) return Error{dir.string() + ": cannot list the counter groups (" + ec.message() + ")"};
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto group = load_event_group(file.string());
    if (!group) return group.error();
    if (!contains(views(group->families), family)) {
      return Error{file.string() + ": FAMILIES says " + common::join(views(group->families)) + ", but the file is in the " + in_quotes(family) +
                   " folder; expected the folder's family among FAMILIES"};
    }
    groups.push_back(std::move(*group));
  }
  return groups;
}

MetricValue evaluate_metric(const Metric& metric, const std::function<std::optional<double>(std::string_view)>& lookup) {
  std::vector<std::string_view> missing;
  auto sum = [&](const std::vector<MetricTerm>& terms) {
    double total = 0.0;
    for (const MetricTerm& term : terms) {
      const auto value = lookup(term.id);
      if (value) {
        total += term.coefficient * *value;
      } else if (!contains(missing, term.id)) {
        missing.push_back(term.id);
      }
    }
    return total;
  };
  const double numerator = sum(metric.numerator);
  const double denominator = metric.denominator.empty() ? 1.0 : sum(metric.denominator);
  if (!missing.empty()) {
    return {std::nullopt, "no value for " + common::join(missing)};
  }
  if (denominator == 0.0) return {std::nullopt, "the denominator is zero"};
  const double value = numerator / denominator;
  if (!std::isfinite(value)) return {std::nullopt, "the value is not finite"};
  return {value, {}};
}

}  // namespace hwprof
