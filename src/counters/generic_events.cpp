// The kernel's generic events (perf_event_open(2): PERF_TYPE_HARDWARE and _SOFTWARE), from a
// table of our own: they must resolve even when libpfm4 is forced to a PMU (LIBPFM_FORCE_PMU),
// where libpfm4 no longer knows its "perf" PMU.
#include <linux/perf_event.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "counters/event_resolvers.hpp"

namespace hwprof::counters::resolver {
namespace {

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

}  // namespace

std::vector<std::string_view> generic_names() {
  std::vector<std::string_view> names;
  for (const GenericEvent& e : kGenericEvents) {
    for (std::string_view n : e.names) {
      if (!n.empty()) names.push_back(n);
    }
  }
  return names;
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

}  // namespace hwprof::counters::resolver
