// Event names → perf_event_attr encodings. Three paths, tried in this order:
// 1. the kernel's generic events, from our own table: they must resolve even when libpfm4 is
//    forced to a PMU (LIBPFM_FORCE_PMU), where libpfm4 no longer knows its "perf" PMU;
// 2. sysfs raw specs "pmu/term=value,.../", encoded with the PMU's own sysfs format files
//    (what perf(1) does), for uncore events that libpfm4 4.13 has no name for;
// 3. everything else through libpfm4; on failure the message says which PMU the name needs.
#include "counters/event_resolver.hpp"

#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string_view>

#include "common/suggest.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::detail {
namespace {

constexpr const char* kSysfsDevices = "/sys/bus/event_source/devices";
constexpr std::size_t kMaxListed = 8;

std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "a, b, c and 5 more"
std::string short_list(const std::vector<std::string>& items) {
  std::vector<std::string_view> shown(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), kMaxListed)));
  std::string out = join(shown);
  if (items.size() > kMaxListed) out += " and " + std::to_string(items.size() - kMaxListed) + " more";
  return out.empty() ? "none" : out;
}

// ---- 1. the kernel's generic events ------------------------------------------------------

struct GenericEvent {
  std::array<std::string_view, 3> names;  // perf(1) spellings; the first is the main one
  std::string_view kernel_name;           // the PERF_COUNT_* constant, as libpfm4's perf PMU names it
  std::uint32_t type;
  std::uint64_t config;
  std::string_view unit;
  bool kernel_only;  // counted only in kernel context: excluding the kernel would read 0
  // Counted in both: kernel mode by default (a fault taken while the kernel copies into the
  // program's fresh memory is the program's fault), user space alone when the kernel refuses.
  bool kernel_optional = false;
};

constexpr std::array<GenericEvent, 20> kGenericEvents = {{
    {{"cycles", "cpu-cycles", ""}, "PERF_COUNT_HW_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "count", false},
    {{"instructions", "", ""}, "PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "count", false},
    {{"cache-references", "", ""}, "PERF_COUNT_HW_CACHE_REFERENCES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "count", false},
    {{"cache-misses", "", ""}, "PERF_COUNT_HW_CACHE_MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "count", false},
    {{"branches", "branch-instructions", ""},
     "PERF_COUNT_HW_BRANCH_INSTRUCTIONS",
     PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     "count",
     false},
    {{"branch-misses", "", ""}, "PERF_COUNT_HW_BRANCH_MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "count", false},
    {{"bus-cycles", "", ""}, "PERF_COUNT_HW_BUS_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "count", false},
    {{"stalled-cycles-frontend", "idle-cycles-frontend", ""},
     "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND",
     PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
     "count",
     false},
    {{"stalled-cycles-backend", "idle-cycles-backend", ""},
     "PERF_COUNT_HW_STALLED_CYCLES_BACKEND",
     PERF_TYPE_HARDWARE,
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
     "count",
     false},
    {{"ref-cycles", "", ""}, "PERF_COUNT_HW_REF_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "count", false},
    {{"cpu-clock", "", ""}, "PERF_COUNT_SW_CPU_CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "ns", false},
    {{"task-clock", "", ""}, "PERF_COUNT_SW_TASK_CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "ns", false},
    {{"page-faults", "faults", ""}, "PERF_COUNT_SW_PAGE_FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "count", false, true},
    // The scheduler reports these two with kernel registers, so exclude_kernel reads 0.
    {{"context-switches", "cs", ""}, "PERF_COUNT_SW_CONTEXT_SWITCHES", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "count", true},
    {{"cpu-migrations", "migrations", ""}, "PERF_COUNT_SW_CPU_MIGRATIONS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "count", true},
    {{"minor-faults", "", ""}, "PERF_COUNT_SW_PAGE_FAULTS_MIN", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "count", false, true},
    {{"major-faults", "", ""}, "PERF_COUNT_SW_PAGE_FAULTS_MAJ", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "count", false, true},
    {{"alignment-faults", "", ""}, "PERF_COUNT_SW_ALIGNMENT_FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "count", false},
    {{"emulation-faults", "", ""}, "PERF_COUNT_SW_EMULATION_FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "count", false},
    {{"dummy", "", ""}, "PERF_COUNT_SW_DUMMY", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "count", false},
}};

std::vector<std::string_view> generic_names() {
  std::vector<std::string_view> names;
  for (const GenericEvent& e : kGenericEvents) {
    for (std::string_view n : e.names) {
      if (!n.empty()) names.push_back(n);
    }
  }
  return names;
}

// A trailing "u", "k", "uk" or "ku": whether to count the kernel too. User space always counts
// (ResolvedEvent has no exclude_user).
struct Levels {
  bool kernel = false;
  bool given = false;
};

std::optional<Levels> parse_levels(std::string_view modifiers) {
  if (modifiers != "u" && modifiers != "k" && modifiers != "uk" && modifiers != "ku") return std::nullopt;
  return Levels{modifiers.find('k') != std::string_view::npos, true};
}

const GenericEvent* find_generic(std::string_view name) {
  const bool prefixed = name.size() > 6 && iequals(name.substr(0, 6), "perf::");
  if (prefixed) name.remove_prefix(6);
  for (const GenericEvent& e : kGenericEvents) {
    if (prefixed ? iequals(name, e.kernel_name) : name == e.kernel_name) return &e;
    for (std::string_view n : e.names) {
      if (!n.empty() && (prefixed ? iequals(name, n) : name == n)) return &e;
    }
  }
  return nullptr;
}

std::optional<Result<ResolvedEvent>> resolve_generic(const std::string& name) {
  std::string_view base = name;
  Levels levels;
  if (const auto colon = base.rfind(':'); colon != std::string_view::npos && colon > 0 && base[colon - 1] != ':') {
    const GenericEvent* e = find_generic(base.substr(0, colon));
    if (e == nullptr) return std::nullopt;
    const auto parsed = parse_levels(base.substr(colon + 1));
    if (!parsed) {
      return Error{in_quotes(name) + ": unknown modifier " + in_quotes(base.substr(colon + 1)) +
                   "; expected :u (user), :k (kernel) or :uk after a generic event"};
    }
    levels = *parsed;
    base = base.substr(0, colon);
  }
  const GenericEvent* e = find_generic(base);
  if (e == nullptr) return std::nullopt;
  ResolvedEvent r;
  r.name = name;
  r.canonical = "perf::" + std::string(e->kernel_name);
  r.pmu = "perf";
  r.type = e->type;
  r.config = e->config;
  r.software = e->type == PERF_TYPE_SOFTWARE;
  r.unit = std::string(e->unit);
  r.exclude_kernel = levels.given ? !levels.kernel : !(e->kernel_only || e->kernel_optional);
  r.kernel_optional = !levels.given && e->kernel_optional;
  return Result<ResolvedEvent>(std::move(r));
}

// ---- 2. sysfs raw specs ------------------------------------------------------------------

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

std::vector<std::string> list_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
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
    if (name.size() <= pmu.size() + 1 || !starts_with(name, pmu + "_")) continue;
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
  const bool core = pmu == "cpu" || starts_with(pmu, "cpu_");
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

// ---- 3. libpfm4 ----------------------------------------------------------------------------

struct Pfm {
  std::once_flag once;
  int status = PFM_ERR_NOINIT;
  std::mutex mutex;  // libpfm4 does not promise thread safety; resolving is never on a hot path
};

Pfm& pfm() {
  static Pfm p;
  // pfm_initialize reads LIBPFM_FORCE_PMU, so it runs once, on first use.
  std::call_once(p.once, [] { p.status = pfm_initialize(); });
  return p;
}

struct PmuDescription {
  std::string name;
  std::string desc;
  bool present = false;
  bool uncore = false;
  int first_event = -1;
};

std::vector<PmuDescription> all_pmus() {
  std::vector<PmuDescription> pmus;
  for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; ++p) {
    pfm_pmu_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(p), &info) != PFM_SUCCESS || info.name == nullptr) continue;
    pmus.push_back({info.name, info.desc ? info.desc : "", info.is_present != 0, info.type == PFM_PMU_TYPE_UNCORE, info.first_event});
  }
  return pmus;
}

std::vector<std::string> event_names(const PmuDescription& pmu) {
  std::vector<std::string> names;
  for (int idx = pmu.first_event; idx != -1; idx = pfm_get_event_next(idx)) {
    pfm_event_info_t info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if (pfm_get_event_info(idx, PFM_OS_NONE, &info) == PFM_SUCCESS && info.name != nullptr) names.emplace_back(info.name);
  }
  return names;
}

std::vector<std::string> present_pmu_names() {
  std::vector<std::string> names;
  for (const PmuDescription& p : all_pmus()) {
    if (p.present) names.push_back(p.name);
  }
  return names;
}

// libpfm4's uncore PMU names follow the kernel's: skx_unc_imc0 is uncore_imc_0, and
// amd64_fam19h_zen3_l3 is amd_l3.
std::string kernel_pmu_guess(const std::string& pfm_name) {
  if (starts_with(pfm_name, "amd64_") && pfm_name.size() > 3 && pfm_name.compare(pfm_name.size() - 3, 3, "_l3") == 0) {
    return "amd_l3";
  }
  const auto unc = pfm_name.find("_unc_");
  if (unc == std::string::npos) return {};
  std::string box = pfm_name.substr(unc + 5);
  std::size_t digits = box.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(box[digits - 1]))) --digits;
  return "uncore_" + box.substr(0, digits) + (digits < box.size() ? "_" + box.substr(digits) : "");
}

std::string pmu_absent(const std::string& name, const PmuDescription& pmu, const std::filesystem::path& root) {
  if (pmu.uncore) {
    const std::string kernel = kernel_pmu_guess(pmu.name);
    return in_quotes(name) + ": uncore PMU " + in_quotes(pmu.name) + " (" + pmu.desc + ") is not exposed on this machine" +
           (kernel.empty() ? "" : ": the kernel has no " + (root / kernel).string()) +
           " (a VM without a virtual PMU, or the uncore driver is not loaded)";
  }
  return in_quotes(name) + " needs PMU " + in_quotes(pmu.name) + " (" + pmu.desc +
         "), which this CPU does not have; detected PMUs: " + short_list(present_pmu_names()) +
         ". Use the event group of this CPU's family (hwprof info lists it)";
}

// Why libpfm4 found no event of this name.
// "skx::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" → PMU "skx", event "FP_ARITH_INST_RETIRED".
struct EventNameParts {
  std::string pmu;   // empty without a PMU:: prefix
  std::string base;  // the event, without unit masks or modifiers
};
EventNameParts split_event_name(std::string_view rest) {
  EventNameParts parts;
  if (const auto sep = rest.find("::"); sep != std::string_view::npos) {
    parts.pmu = std::string(rest.substr(0, sep));
    rest.remove_prefix(sep + 2);
  }
  parts.base = std::string(rest.substr(0, rest.find(':')));
  return parts;
}

std::string explain_not_found(const std::string& name, const std::filesystem::path& root) {
  const auto [pmu_name, base] = split_event_name(name);
  const auto pmus = all_pmus();
  if (!pmu_name.empty()) {
    const auto pmu = std::find_if(pmus.begin(), pmus.end(), [&](const PmuDescription& p) { return p.name == pmu_name; });
    // Forced to one PMU (LIBPFM_FORCE_PMU), libpfm4 drops its uncore PMUs from the list.
    const std::string kernel = kernel_pmu_guess(pmu_name);
    std::error_code ec;
    if (pmu == pmus.end() && !kernel.empty() && !std::filesystem::exists(root / kernel, ec)) {
      return in_quotes(name) + ": uncore PMU " + in_quotes(pmu_name) + " is not exposed on this machine: libpfm4 does not list it and " +
             "the kernel has no " + (root / kernel).string() + " (a VM without a virtual PMU, or the uncore driver is not loaded)";
    }
    if (pmu == pmus.end()) {
      std::vector<std::string_view> names;
      for (const PmuDescription& p : pmus) names.push_back(p.name);
      return in_quotes(name) + ": libpfm4 knows no PMU " + in_quotes(pmu_name) + did_you_mean(pmu_name, names) +
             "; detected PMUs: " + short_list(present_pmu_names());
    }
    if (!pmu->present) return pmu_absent(name, *pmu, root);
    const auto events = event_names(*pmu);
    return in_quotes(name) + ": PMU " + in_quotes(pmu_name) + " has no event " + in_quotes(base) +
           did_you_mean(base, std::vector<std::string_view>(events.begin(), events.end()));
  }
  std::vector<const PmuDescription*> owners;
  const auto generic = generic_names();
  std::vector<std::string> known(generic.begin(), generic.end());
  for (const PmuDescription& p : pmus) {
    const auto events = event_names(p);
    if (std::any_of(events.begin(), events.end(), [&](const std::string& e) { return iequals(e, base); })) owners.push_back(&p);
    if (p.present) known.insert(known.end(), events.begin(), events.end());
  }
  if (owners.empty()) {
    return in_quotes(name) + ": unknown event " + in_quotes(base) + did_you_mean(base, std::vector<std::string_view>(known.begin(), known.end())) +
           "; names are the kernel's generic events (cycles, task-clock, ...), libpfm4 names of this CPU's PMUs (detected: " +
           short_list(present_pmu_names()) + "), or raw specs like uncore_imc/event=0x04,umask=0x0f/";
  }
  if (owners.size() == 1 || std::all_of(owners.begin(), owners.end(), [](const PmuDescription* p) { return p->uncore; })) {
    return pmu_absent(name, *owners.front(), root);
  }
  std::vector<std::string> owner_names;
  for (const PmuDescription* p : owners) owner_names.push_back(p->name);
  return in_quotes(name) + ": event " + in_quotes(base) + " belongs to PMU " + short_list(owner_names) +
         ", none of which this CPU has; detected PMUs: " + short_list(present_pmu_names()) +
         ". Use the event group of this CPU's family (hwprof info lists it)";
}

// Which part after the event name libpfm4 did not accept.
std::string explain_bad_attribute(const std::string& name) {
  const auto sep = name.find("::");
  const auto colon = name.find(':', sep == std::string::npos ? 0 : sep + 2);
  if (colon == std::string::npos) return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR);
  const std::string event = name.substr(0, colon);  // with its "pmu::" when given
  const int idx = pfm_find_event(event.c_str());
  if (idx < 0) return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR);
  pfm_event_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info);
  std::vector<std::string> attributes;
  for (int a = 0; a < info.nattrs; ++a) {
    pfm_event_attr_info_t attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (pfm_get_event_attr_info(idx, a, PFM_OS_PERF_EVENT_EXT, &attr) == PFM_SUCCESS && attr.name != nullptr) {
      attributes.emplace_back(attr.name);
    }
  }
  std::string_view parts = std::string_view(name).substr(colon + 1);
  while (!parts.empty()) {
    const auto next = parts.find(':');
    const std::string_view part = parts.substr(0, next);
    const std::string_view key = part.substr(0, part.find('='));
    if (std::none_of(attributes.begin(), attributes.end(), [&](const std::string& a) { return iequals(a, key); })) {
      return in_quotes(name) + ": event " + in_quotes(event) + " has no unit mask or modifier " + in_quotes(key) +
             did_you_mean(key, std::vector<std::string_view>(attributes.begin(), attributes.end())) + "; it has " + short_list(attributes);
    }
    parts = next == std::string_view::npos ? std::string_view() : parts.substr(next + 1);
  }
  return in_quotes(name) + ": " + pfm_strerror(PFM_ERR_ATTR) + " (libpfm4)";
}

// The sysfs name of the PMU whose type is `type` ("uncore_imc_0"), or "" when none has it.
std::string sysfs_pmu_with_type(const std::filesystem::path& root, std::uint32_t type) {
  for (const std::string& name : list_names(root)) {
    const auto text = read_line(root / name / "type");
    const auto number = text ? parse_number(*text) : std::nullopt;
    if (number && *number == type) return name;
  }
  return {};
}

Result<ResolvedEvent> resolve_with_libpfm(const std::string& name, const std::filesystem::path& root) {
  Pfm& lib = pfm();
  if (lib.status != PFM_SUCCESS) {
    return Error{in_quotes(name) + ": libpfm4 did not initialize (" + pfm_strerror(lib.status) +
                 "), so only the kernel's generic events and raw specs resolve"};
  }
  const std::lock_guard<std::mutex> lock(lib.mutex);
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  char* full_name = nullptr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.fstr = &full_name;
  arg.size = sizeof arg;
  const int status = pfm_get_os_event_encoding(name.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (status != PFM_SUCCESS) {
    if (status == PFM_ERR_NOTFOUND) return Error{explain_not_found(name, root)};
    if (status == PFM_ERR_ATTR) return Error{explain_bad_attribute(name)};
    return Error{in_quotes(name) + ": libpfm4 cannot encode it: " + pfm_strerror(status)};
  }
  ResolvedEvent r;
  r.name = name;
  // libpfm4 spells out every modifier ("...:SCALAR_DOUBLE:e=0:i=0:u=1:k=0"); the unit masks are
  // the parts without '='.
  std::string_view spelled = full_name != nullptr ? full_name : name.c_str();
  if (const auto sep = spelled.find("::"); sep != std::string_view::npos) {
    r.canonical = std::string(spelled.substr(0, sep + 2));
    spelled.remove_prefix(sep + 2);
  }
  for (bool first = true; !spelled.empty(); first = false) {
    const auto colon = spelled.find(':');
    const std::string_view part = spelled.substr(0, colon);
    if (part.find('=') == std::string_view::npos) r.canonical += (first ? "" : ":") + std::string(part);
    spelled = colon == std::string_view::npos ? std::string_view() : spelled.substr(colon + 1);
  }
  std::free(full_name);
  pfm_event_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  pfm_pmu_info_t pmu;
  std::memset(&pmu, 0, sizeof pmu);
  pmu.size = sizeof pmu;
  if (pfm_get_event_info(arg.idx, PFM_OS_NONE, &info) == PFM_SUCCESS && pfm_get_pmu_info(info.pmu, &pmu) == PFM_SUCCESS) {
    r.pmu = pmu.name != nullptr ? pmu.name : "";
    r.uncore = pmu.type == PFM_PMU_TYPE_UNCORE;
  }
  r.type = attr.type;
  r.config = attr.config;
  r.config1 = attr.config1;
  r.config2 = attr.config2;
  r.exclude_kernel = attr.exclude_kernel != 0;
  r.software = attr.type == PERF_TYPE_SOFTWARE;
  if (r.uncore) {
    const std::string kernel = sysfs_pmu_with_type(root, attr.type);
    if (!kernel.empty()) r.pmu = kernel;
    r.instances.push_back({r.pmu, attr.type});
    r.exclude_kernel = false;
  }
  return r;
}

}  // namespace

Result<ResolvedEvent> resolve_event(const std::string& name) {
  return resolve_event(name, kSysfsDevices);
}

Result<ResolvedEvent> resolve_event(const std::string& name, const std::string& sysfs_devices) {
  if (name.empty())
    return Error{"empty event name; expected for example cycles, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE or uncore_imc/event=0x04,umask=0x0f/"};
  if (auto generic = resolve_generic(name)) return std::move(*generic);
  if (name.find('/') != std::string::npos) return RawSpec(name, sysfs_devices).resolve();
  return resolve_with_libpfm(name, sysfs_devices);
}

bool event_of_another_cpu(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || resolve_generic(name)) return false;
  Pfm& lib = pfm();
  if (lib.status != PFM_SUCCESS) return false;
  const std::lock_guard<std::mutex> lock(lib.mutex);
  const auto [pmu_name, base] = split_event_name(name);
  bool elsewhere = false;
  for (const PmuDescription& p : all_pmus()) {
    if (!pmu_name.empty()) {
      if (p.name == pmu_name) return !p.present;
      continue;
    }
    const auto events = event_names(p);
    if (std::any_of(events.begin(), events.end(), [&](const std::string& e) { return iequals(e, base); })) {
      if (p.present) return false;  // this CPU has it: the problem is elsewhere (a bad unit mask)
      elsewhere = true;
    }
  }
  // An uncore PMU libpfm4 drops when forced to a core PMU: its name still says where it lives.
  return elsewhere || (!pmu_name.empty() && !kernel_pmu_guess(pmu_name).empty());
}

std::vector<std::string> detected_pmus() {
  Pfm& lib = pfm();
  if (lib.status != PFM_SUCCESS) return {};
  const std::lock_guard<std::mutex> lock(lib.mutex);
  return present_pmu_names();
}

}  // namespace hwprof::detail

namespace hwprof {

std::vector<std::string> split_event_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  bool in_terms = false;  // between the slashes of pmu/terms/
  int braces = 0;
  auto take = [&](std::size_t end) {
    std::string_view part = list.substr(start, end - start);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    start = end + 1;
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '/') {
      in_terms = !in_terms;
    } else if (c == '{') {
      ++braces;
    } else if (c == '}' && braces > 0) {
      --braces;
    } else if (c == ',' && !in_terms && braces == 0) {
      take(i);
    }
  }
  take(list.size());
  return out;
}

}  // namespace hwprof
