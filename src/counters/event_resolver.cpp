// Event names → perf_event_attr encodings. Three paths, tried in this order:
// 1. the kernel's generic events, from our own table: they must resolve even when libpfm4 is
//    forced to a PMU (LIBPFM_FORCE_PMU), where libpfm4 no longer knows its "perf" PMU;
// 2. sysfs raw specs "pmu/term=value,.../", encoded with the PMU's own sysfs format files
//    (what perf(1) does), for uncore events that libpfm4 4.13 has no name for;
// 3. everything else through libpfm4; on failure the message says which PMU the name needs.
#include "counters/event_resolver.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/stages.hpp"
#include "counters/event_resolvers.hpp"

namespace hwprof::counters {
namespace {

constexpr const char* kSysfsDevices = "/sys/bus/event_source/devices";

}  // namespace

Result<ResolvedEvent> resolve_event(const std::string& name) {
  return resolve_event(name, kSysfsDevices);
}

Result<ResolvedEvent> resolve_event(const std::string& name, const std::string& sysfs_devices) {
  if (name.empty())
    return Error{"empty event name; expected for example cycles, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE or uncore_imc/event=0x04,umask=0x0f/"};
  Result<ResolvedEvent> r = [&]() -> Result<ResolvedEvent> {
    if (auto generic = resolver::resolve_generic(name)) return std::move(*generic);
    if (name.find('/') != std::string::npos) return resolver::resolve_raw_spec(name, sysfs_devices);
    return resolver::resolve_with_libpfm(name, sysfs_devices);
  }();
  if (r) r->kind = event_kind_of(*r);
  return r;
}

EventKind pmu_event_kind(std::string_view event, std::string_view pmu) {
  std::string u(event.substr(event.rfind("::") == std::string_view::npos ? 0 : event.rfind("::") + 2));
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto starts = [&](std::initializer_list<std::string_view> prefixes) {
    return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return std::string_view(u).starts_with(p); });
  };
  // Intel's SDM Vol. 3B, "Architectural Performance Monitoring" (UnHalted Core Cycles,
  // UnHalted Reference Cycles, Instructions Retired, LLC Reference and Misses), and libpfm4's
  // names of them on Intel and AMD (CYCLES_NOT_IN_HALT, LS_NOT_HALTED_CYC, RETIRED_INSTRUCTIONS).
  if (starts({"CPU_CLK_UNHALTED", "UNHALTED_CORE_CYCLES", "UNHALTED_REFERENCE_CYCLES", "CYCLES_NOT_IN_HALT", "LS_NOT_HALTED_CYC", "CPU_CYCLES",
              "CYCLES"})) {
    // Reference cycles tick at the TSC's rate, not the core's: CPU_CLK_UNHALTED:REF_TSC, REF_XCLK.
    return u.find("REF") != std::string::npos ? EventKind::reference_cycles : EventKind::core_cycles;
  }
  if (starts({"INST_RETIRED", "INSTRUCTION_RETIRED", "INSTRUCTIONS_RETIRED", "RETIRED_INSTRUCTIONS"})) return EventKind::instructions;
  // Intel's FP_ARITH_INST_RETIRED (Skylake on), FP_COMP_OPS_EXE and SIMD_FP_256 (Sandy Bridge),
  // AMD's RETIRED_SSE_AVX_FLOPS (Zen) and FP_RET_SSE_AVX_OPS (Zen 2 in libpfm4).
  if (starts({"FP_ARITH", "FP_COMP_OPS_EXE", "SIMD_FP_256", "RETIRED_SSE_AVX_FLOPS", "FP_RET_SSE_AVX_OPS", "RETIRED_X87_FP_OPS"}))
    return EventKind::fp;
  if (starts({"LONGEST_LAT_CACHE", "LLC_MISSES", "LLC_REFERENCES", "LAST_LEVEL_CACHE", "UNC_", "CAS_COUNT", "DRAM_"})) return EventKind::memory;
  if (pmu.find("imc") != std::string_view::npos || pmu.find("umc") != std::string_view::npos || pmu.starts_with("amd_df")) return EventKind::memory;
  return EventKind::other;
}

EventKind papi_event_kind(std::string_view name) {
  if (auto generic = resolver::resolve_generic(std::string(name)); generic && *generic) return event_kind_of(**generic);
  // PAPI's preset events (papi_avail; PAPI's papiStdEventDefs.h).
  static constexpr std::pair<std::string_view, EventKind> kPresets[] = {
      {"PAPI_TOT_CYC", EventKind::core_cycles},
      {"PAPI_REF_CYC", EventKind::reference_cycles},
      {"PAPI_TOT_INS", EventKind::instructions},
      {"PAPI_FP_OPS", EventKind::fp},
      {"PAPI_SP_OPS", EventKind::fp},
      {"PAPI_DP_OPS", EventKind::fp},
      {"PAPI_FP_INS", EventKind::fp},
      {"PAPI_VEC_SP", EventKind::fp},
      {"PAPI_VEC_DP", EventKind::fp},
      {"PAPI_L3_TCM", EventKind::memory},
      {"PAPI_L3_TCA", EventKind::memory},
      {"PAPI_L3_DCM", EventKind::memory},
      {"PAPI_L3_LDM", EventKind::memory},
      {"PAPI_L3_TCR", EventKind::memory},
      {"PAPI_L3_DCA", EventKind::memory},
  };
  for (const auto& [preset, kind] : kPresets) {
    if (name == preset) return kind;
  }
  if (name.starts_with("PAPI_")) return EventKind::other;
  return pmu_event_kind(name, "");
}

EventKind event_kind_of(const ResolvedEvent& r) {
  // Linux include/uapi/linux/perf_event.h: enum perf_type_id, perf_hw_id, perf_sw_ids,
  // perf_hw_cache_id.
  switch (r.type) {
    case PERF_TYPE_SOFTWARE:
      return r.config == PERF_COUNT_SW_TASK_CLOCK || r.config == PERF_COUNT_SW_CPU_CLOCK ? EventKind::task_clock : EventKind::software;
    case PERF_TYPE_HARDWARE:
      switch (r.config) {
        case PERF_COUNT_HW_CPU_CYCLES:
          return EventKind::core_cycles;
        case PERF_COUNT_HW_REF_CPU_CYCLES:
          return EventKind::reference_cycles;
        case PERF_COUNT_HW_INSTRUCTIONS:
          return EventKind::instructions;
        case PERF_COUNT_HW_CACHE_REFERENCES:  // the last level's, on x86
        case PERF_COUNT_HW_CACHE_MISSES:
          return EventKind::memory;
        default:
          return EventKind::other;
      }
    case PERF_TYPE_HW_CACHE:
      return (r.config & 0xff) == PERF_COUNT_HW_CACHE_LL ? EventKind::memory : EventKind::other;
    default:
      // A PMU's own event: libpfm4's name of it (the canonical "pmu::EVENT:UMASK"), or a sysfs
      // raw spec, known only by its PMU.
      return pmu_event_kind(r.canonical.find('/') == std::string::npos ? r.canonical : std::string(), r.pmu);
  }
}

}  // namespace hwprof::counters

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
