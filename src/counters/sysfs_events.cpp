// Sysfs raw specs, "pmu/term=value,.../", encoded with the PMU's own sysfs format files (what
// perf(1) does): uncore events that libpfm4 has no name for. A PMU name without its _<N>
// suffix covers every instance.
#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "counters/event_resolvers.hpp"

namespace hwprof::counters::resolver {

std::optional<std::string> read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<std::uint64_t> parse_number(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::vector<std::string> list_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A sysfs format file, "config:0-7,32-35": which attr field, and which bits take the value
// (low bits of the value first).
struct FieldFormat {
  int field = 0;  // 0 config, 1 config1, 2 config2
  std::vector<std::pair<int, int>> bit_ranges;
};

std::optional<FieldFormat> parse_format(std::string_view text) {
  FieldFormat format;
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view field = text.substr(0, colon);
  if (field == "config") {
    format.field = 0;
  } else if (field == "config1") {
    format.field = 1;
  } else if (field == "config2") {
    format.field = 2;
  } else {
    return std::nullopt;
  }
  std::string_view ranges = text.substr(colon + 1);
  while (!ranges.empty()) {
    const auto comma = ranges.find(',');
    const std::string_view range = ranges.substr(0, comma);
    const auto dash = range.find('-');
    const auto low = parse_number(range.substr(0, dash));
    const auto high = dash == std::string_view::npos ? low : parse_number(range.substr(dash + 1));
    if (!low || !high || *low > *high || *high > 63) return std::nullopt;
    format.bit_ranges.emplace_back(static_cast<int>(*low), static_cast<int>(*high));
    ranges = comma == std::string_view::npos ? std::string_view() : ranges.substr(comma + 1);
  }
  if (format.bit_ranges.empty()) return std::nullopt;
  return format;
}

// The PMU directories a raw spec's PMU name covers: itself, or else every "<name>_<N>".
std::vector<std::pair<std::string, std::filesystem::path>> pmu_instances(const std::filesystem::path& root, const std::string& pmu) {
  std::vector<std::pair<std::string, std::filesystem::path>> found;
  std::error_code ec;
  if (std::filesystem::is_directory(root / pmu, ec)) {
    found.emplace_back(pmu, root / pmu);
    return found;
  }
  std::vector<std::pair<std::uint64_t, std::string>> numbered;
  for (const std::string& name : list_names(root)) {
    if (name.size() <= pmu.size() + 1 || !name.starts_with(pmu + "_")) continue;
    if (const auto n = parse_number(std::string_view(name).substr(pmu.size() + 1))) numbered.emplace_back(*n, name);
  }
  std::sort(numbered.begin(), numbered.end());
  for (const auto& [n, name] : numbered) found.emplace_back(name, root / name);
  return found;
}

// A PMU, format or event name as sysfs has them ("uncore_imc_0", "mem-loads"): never a path.
bool is_sysfs_name(std::string_view name) {
  return !name.empty() && name[0] != '.' && name.find("..") == std::string_view::npos && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

std::string not_exposed(const std::string& pmu, const std::filesystem::path& root) {
  const bool core = pmu == "cpu" || pmu.starts_with("cpu_");
  return std::string(core ? "PMU " : "uncore PMU ") + in_quotes(pmu) + " is not exposed by this kernel: there is no " + (root / pmu).string() +
         (core ? "" : " nor " + pmu + "_<N>") +
         (core ? " (this machine, probably a VM, exposes no hardware PMU)"
               : " (a VM without a virtual PMU, or the uncore driver is not loaded: modprobe intel_uncore or amd_uncore)");
}

class RawSpec {
 public:
  RawSpec(std::string name, std::filesystem::path root) : name_(std::move(name)), root_(std::move(root)) {}

  Result<ResolvedEvent> resolve() {
    const auto first_slash = name_.find('/');
    const auto last_slash = name_.rfind('/');
    const std::string pmu = name_.substr(0, first_slash);
    if (pmu.empty() || last_slash == first_slash) {
      return fail("expected 'pmu/term=value,.../', for example uncore_imc/event=0x04,umask=0x0f/");
    }
    if (!is_sysfs_name(pmu)) return fail("the PMU name " + in_quotes(pmu) + " has characters no PMU name has");
    Levels levels;
    const std::string_view modifiers = std::string_view(name_).substr(last_slash + 1);
    if (!modifiers.empty()) {
      const auto parsed = parse_levels(modifiers);
      if (!parsed) return fail("unknown modifier " + in_quotes(modifiers) + " after the last '/'; expected u, k or uk");
      levels = *parsed;
    }
    const auto instances = pmu_instances(root_, pmu);
    if (instances.empty()) return Error{in_quotes(name_) + ": " + not_exposed(pmu, root_)};
    dir_ = instances.front().second;
    ResolvedEvent r;
    r.name = name_;
    r.canonical = name_;
    r.pmu = instances.size() == 1 ? instances.front().first : pmu;
    std::array<std::uint64_t, 3> fields{};
    if (auto problem = apply_terms(std::string_view(name_).substr(first_slash + 1, last_slash - first_slash - 1), fields, 0)) {
      return fail(*problem);
    }
    r.config = fields[0];
    r.config1 = fields[1];
    r.config2 = fields[2];
    for (const auto& [instance, dir] : instances) {
      const auto type = read_line(dir / "type");
      const auto number = type ? parse_number(*type) : std::nullopt;
      if (!number) return fail("cannot read the PMU type from " + (dir / "type").string());
      r.instances.push_back({instance, static_cast<std::uint32_t>(*number)});
    }
    r.type = r.instances.front().type;
    // Uncore PMUs say which CPU stands for each socket in "cpumask"; core PMUs have none.
    std::error_code ec;
    r.uncore = std::filesystem::exists(dir_ / "cpumask", ec);
    if (!r.uncore) r.instances.clear();
    // The uncore drivers refuse any exclude bit; they count the whole socket.
    r.exclude_kernel = r.uncore ? false : levels.given ? !levels.kernel : true;
    return r;
  }

 private:
  Error fail(const std::string& problem) const { return Error{in_quotes(name_) + ": " + problem}; }

  std::optional<std::string> apply_terms(std::string_view terms, std::array<std::uint64_t, 3>& fields, int depth) {
    while (!terms.empty()) {
      const auto comma = terms.find(',');
      const std::string_view term = terms.substr(0, comma);
      terms = comma == std::string_view::npos ? std::string_view() : terms.substr(comma + 1);
      if (term.empty()) continue;
      const auto equals = term.find('=');
      const std::string key(term.substr(0, equals));
      if (!is_sysfs_name(key)) return "the term " + in_quotes(key) + " has characters no format or event name has";
      std::uint64_t value = 1;
      if (equals != std::string_view::npos) {
        const auto number = parse_number(term.substr(equals + 1));
        if (!number) return "the value of " + in_quotes(key) + " is not a number: " + in_quotes(term.substr(equals + 1));
        value = *number;
      }
      const auto format_text = read_line(dir_ / "format" / key);
      if (format_text) {
        if (auto problem = place(key, *format_text, value, fields)) return problem;
        continue;
      }
      // A named event from the PMU's events/ folder, such as cas_count_read.
      const auto alias = equals == std::string_view::npos && depth == 0 ? read_line(dir_ / "events" / key) : std::nullopt;
      if (alias) {
        if (auto problem = apply_terms(*alias, fields, depth + 1)) return "event " + in_quotes(key) + " (" + *alias + "): " + *problem;
        continue;
      }
      std::vector<std::string> known = list_names(dir_ / "format");
      for (const std::string& event : list_names(dir_ / "events")) {
        if (event.find('.') == std::string::npos) known.push_back(event);
      }
      const std::vector<std::string_view> candidates(known.begin(), known.end());
      return "PMU " + in_quotes(dir_.filename().string()) + " has no format term or event " + in_quotes(key) + did_you_mean(key, candidates) +
             "; expected one of " + short_list(known);
    }
    return std::nullopt;
  }

  static std::optional<std::string> place(const std::string& key, const std::string& format_text, std::uint64_t value,
                                          std::array<std::uint64_t, 3>& fields) {
    const auto format = parse_format(format_text);
    if (!format) return "cannot understand the sysfs format of " + in_quotes(key) + ": " + in_quotes(format_text);
    std::uint64_t rest = value;
    for (const auto& [low, high] : format->bit_ranges) {
      const int width = high - low + 1;
      const std::uint64_t mask = width == 64 ? ~0ULL : (1ULL << width) - 1;
      fields[static_cast<std::size_t>(format->field)] |= (rest & mask) << low;
      rest = width == 64 ? 0 : rest >> width;
    }
    if (rest != 0) {
      char hex[32];
      const auto end = std::to_chars(hex, hex + sizeof hex, value, 16).ptr;
      return "the value 0x" + std::string(hex, end) + " of " + in_quotes(key) + " does not fit its bits (" + format_text + ")";
    }
    return std::nullopt;
  }

  std::string name_;
  std::filesystem::path root_;
  std::filesystem::path dir_;
};

}  // namespace

Result<ResolvedEvent> resolve_raw_spec(const std::string& name, const std::filesystem::path& root) {
  return RawSpec(name, root).resolve();
}

}  // namespace hwprof::counters::resolver
