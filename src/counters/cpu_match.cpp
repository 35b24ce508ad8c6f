// Match files (counters/README.md, "Which CPUs a family fits"): one CPU rule or note per line,
// every number hexadecimal with 0x, because /proc/cpuinfo prints the same fields in decimal
// and "family 25" and "family 0x25" must not both read as something.
#include "counters/cpu_match.hpp"

#include <algorithm>
#include <charconv>

#include "common/input_file.hpp"
#include "common/stages.hpp"
#include "common/suggest.hpp"
#include "common/words.hpp"

namespace hwprof::counters {
namespace {

constexpr std::size_t kMaxFileBytes = 64 << 10;
// The largest display family and model CPUID leaf 1 can encode: 0xF + an 8-bit extended
// family, and a 4-bit extended model above a 4-bit base model.
constexpr int kMaxFamily = 0xF + 0xFF;
constexpr int kMaxModel = 0xFF;
constexpr std::string_view kRuleShape = "'vendor VENDOR family 0xF models 0xM,0xM-0xN,...'";
const std::vector<std::string_view> kKeywords = {"vendor", "note"};
// CPUID leaf 0's vendor strings that can be written as one word.
const std::vector<std::string_view> kVendors = {"GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls"};

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

bool all_of_digits(std::string_view s, int base) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [base](char c) {
    const bool decimal = c >= '0' && c <= '9';
    return base == 10 ? decimal : decimal || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// `what` ("family", "model") as 0x-prefixed hexadecimal no larger than `max`, or the problem.
std::optional<std::string> parse_cpuid_hex(std::string_view word, std::string_view what, int max, int& value) {
  const bool prefixed = word.size() > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X');
  const std::string_view digits = prefixed ? word.substr(2) : word;
  const std::string named = std::string(what) + " " + quoted(word);
  if (!all_of_digits(digits, 16)) return named + " is not a number; expected hexadecimal with 0x, such as 0x19";
  if (!prefixed) {
    std::string meant = "0x" + std::string(word) + " if that was hexadecimal";
    if (all_of_digits(word, 10) && word.size() <= 4) {
      meant += ", " + cpuid_hex(std::stoi(std::string(word))) + " if it was decimal, as /proc/cpuinfo prints it";
    }
    return named + " has no 0x; expected hexadecimal with 0x (" + meant + ")";
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || value > max) return named + " is above " + cpuid_hex(max) + ", the largest CPUID reports";
  return std::nullopt;
}

std::optional<std::string> parse_models(const std::vector<std::string_view>& items, std::vector<ModelRange>& models) {
  if (items.empty()) return "no models after 'models'; expected " + std::string(kRuleShape);
  for (std::string_view item : items) {
    if (item.front() == '-' || item.back() == '-') {
      return "model range " + quoted(item) + " lacks a number on one side; expected first-last without spaces, such as 0x30-0x4F";
    }
    const auto dash = item.find('-');
    ModelRange range;
    if (auto problem = parse_cpuid_hex(item.substr(0, dash), "model", kMaxModel, range.first)) return problem;
    range.last = range.first;
    if (dash != std::string_view::npos) {
      if (auto problem = parse_cpuid_hex(item.substr(dash + 1), "model", kMaxModel, range.last)) return problem;
      if (range.last < range.first) return "model range " + quoted(item) + " ends below its start; expected first-last with first <= last";
    }
    models.push_back(range);
  }
  return std::nullopt;
}

std::optional<std::string> parse_rule(const std::vector<std::string_view>& words, CpuMatchRule& rule) {
  if (words.size() < 6) return "a vendor line with " + std::to_string(words.size()) + " words; expected " + std::string(kRuleShape);
  if (std::find(kVendors.begin(), kVendors.end(), words[1]) == kVendors.end()) {
    return "unknown vendor " + quoted(words[1]) + did_you_mean(words[1], kVendors) + "; expected one of " + join(kVendors) +
           " (CPUID leaf 0, as /proc/cpuinfo's vendor_id)";
  }
  rule.vendor = std::string(words[1]);
  if (words[2] != "family") return "expected 'family' after the vendor, got " + quoted(words[2]) + "; expected " + std::string(kRuleShape);
  if (auto problem = parse_cpuid_hex(words[3], "family", kMaxFamily, rule.family)) return problem;
  if (words[4] != "models") return "expected 'models' after the family, got " + quoted(words[4]) + "; expected " + std::string(kRuleShape);
  // The list may be spaced after its commas: every word after `models` is part of it.
  std::vector<std::string_view> items;
  for (std::size_t i = 5; i < words.size(); ++i) {
    for (std::string_view item : split_words(words[i], ",")) items.push_back(item);
  }
  return parse_models(items, rule.models);
}

std::optional<std::string> take_line(std::string_view raw, int line, CpuMatch& match) {
  const std::string_view text = trim(raw);
  if (text.empty() || text[0] == '#') return std::nullopt;
  const auto words = split_words(text, " \t");
  if (words[0] == "note") {
    const std::string_view note = trim(text.substr(4));
    if (note.empty()) return std::string("a note without text; expected 'note <what to know about the family's groups>'");
    match.note += (match.note.empty() ? "" : " ") + std::string(note);
    return std::nullopt;
  }
  if (words[0] != "vendor") {
    return "unknown keyword " + quoted(words[0]) + did_you_mean(words[0], kKeywords) + "; expected " + std::string(kRuleShape) + " or 'note <text>'";
  }
  CpuMatchRule rule;
  rule.line = line;
  if (auto problem = parse_rule(words, rule)) return problem;
  match.rules.push_back(std::move(rule));
  return std::nullopt;
}

}  // namespace

Result<CpuMatch> parse_cpu_match(std::string_view text, const std::string& source_name) {
  CpuMatch match;
  match.file = source_name;
  std::size_t start = 0;
  for (int line = 1; start <= text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    if (raw.find('\0') != std::string_view::npos) {
      return Error{source_name + ":" + std::to_string(line) + ": a NUL byte; a match file is text (a binary file, or damaged?)"};
    }
    if (auto problem = take_line(raw, line, match)) return Error{source_name + ":" + std::to_string(line) + ": " + *problem};
    start = end + 1;
  }
  if (match.rules.empty()) {
    return Error{source_name + ": no vendor line; a match file names the CPUs its family fits, one line each, " + std::string(kRuleShape)};
  }
  return match;
}

Result<CpuMatch> load_cpu_match(const std::string& path) {
  auto text = read_input_file(path, "match file", kMaxFileBytes);
  if (!text) return text.error();
  return parse_cpu_match(*text, path);
}

std::string cpuid_hex(int value) {
  constexpr char kDigits[] = "0123456789ABCDEF";
  std::string digits;
  auto rest = static_cast<unsigned>(value);
  do {
    digits.insert(digits.begin(), kDigits[rest % 16]);
    rest /= 16;
  } while (rest > 0);
  return "0x" + digits;
}

const CpuMatchRule* rule_naming(const CpuMatch& match, const CpuIdentity& cpu) {
  for (const CpuMatchRule& rule : match.rules) {
    if (rule.vendor != cpu.vendor || rule.family != cpu.family) continue;
    for (const ModelRange& range : rule.models) {
      if (cpu.model >= range.first && cpu.model <= range.last) return &rule;
    }
  }
  return nullptr;
}

std::optional<int> first_shared_model(const CpuMatchRule& a, const CpuMatchRule& b) {
  if (a.vendor != b.vendor || a.family != b.family) return std::nullopt;
  std::optional<int> first;
  for (const ModelRange& x : a.models) {
    for (const ModelRange& y : b.models) {
      const int low = std::max(x.first, y.first);
      if (low <= std::min(x.last, y.last) && (!first || low < *first)) first = low;
    }
  }
  return first;
}

}  // namespace hwprof::counters
