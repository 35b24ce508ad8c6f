// Event names → perf_event_attr encodings: the kernel's generic names from a table of our
// own (they resolve even when libpfm4 is forced to another PMU), everything else through
// libpfm4 (PMU::EVENT:UMASK names), uncore PMUs through their sysfs type.
//
// Three spellings are understood:
//   cycles, task-clock, perf::PAGE-FAULTS, cycles:u    the kernel's generic events
//   FP_ARITH_INST_RETIRED:SCALAR_DOUBLE, skx::...      libpfm4 names (PFM_PLM3: user only)
//   uncore_imc/event=0x04,umask=0x0f/, amd_df/.../    sysfs raw specs, as `perf stat -e` writes
//                                                      them; a PMU name without its _<N> suffix
//                                                      covers every instance (uncore_imc_0, _1, ...)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/counters.hpp"
#include "hwprof/result.hpp"

namespace hwprof::counters {

// One kernel PMU that an uncore event is opened on.
struct PmuInstance {
  std::string name;        // "uncore_imc_0", "amd_df", or libpfm4's name ("skx_unc_imc0")
  std::uint32_t type = 0;  // its perf_event_attr.type, from sysfs
};

struct ResolvedEvent {
  std::string name;        // as asked for
  std::string canonical;   // libpfm4's full name, e.g. "skx::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"
  std::string pmu;         // "perf" (kernel generic), "skx", "amd64_fam19h_zen3", "uncore_imc", ...
  std::uint32_t type = 0;  // perf_event_attr.type (PERF_TYPE_HARDWARE, _SOFTWARE, _RAW, a sysfs PMU type)
  std::uint64_t config = 0;
  std::uint64_t config1 = 0;
  std::uint64_t config2 = 0;
  bool exclude_kernel = true;  // user-space only unless the name asks for :k. Uncore events (the
                               // kernel refuses exclude bits there) and context-switches /
                               // cpu-migrations (counted only in kernel context) say false.
  // Counting kernel mode is wanted but not required: where the kernel refuses it, count user
  // space only and say so (page faults).
  bool kernel_optional = false;
  bool uncore = false;                // must be opened system-wide per socket (pid = -1, cpu = one per socket)
  bool software = false;              // a kernel software event (works in VMs without a PMU)
  std::string unit = "count";         // "ns" for task-clock/cpu-clock
  EventKind kind = EventKind::other;  // what it measures (event_kind_of)
  // Uncore only: every PMU instance to open the event on (and on one CPU per socket); their
  // counts add up to the event's value. `type` is instances.front().type. Empty otherwise.
  std::vector<PmuInstance> instances;
};

// Error messages say why (unknown name with a suggestion, PMU absent on this CPU, uncore PMU
// not exposed, libpfm4's reason) and how to fix it.
Result<ResolvedEvent> resolve_event(const std::string& name);
// The same, reading PMU descriptions from `sysfs_devices` instead of
// /sys/bus/event_source/devices (tests give a fake tree).
Result<ResolvedEvent> resolve_event(const std::string& name, const std::string& sysfs_devices);

// What a resolved event measures (docs/counters.md, "Event kinds"): from the kernel's type and
// config for its generic events, else from the PMU's event (pmu_event_kind). resolve_event sets it.
EventKind event_kind_of(const ResolvedEvent& event);
// What a PMU's own event measures, by the event's name in libpfm4 ("skx::CPU_CLK_UNHALTED:REF_TSC",
// "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE"; case does not matter) or, for an unnamed raw event,
// by its PMU ("uncore_imc_0": memory).
EventKind pmu_event_kind(std::string_view event, std::string_view pmu);
// What a PAPI event measures: its perf:: events as the kernel's generic events, its presets as
// papi_avail describes them (PAPI_TOT_CYC, PAPI_FP_OPS, PAPI_L3_TCM, ...), its native events by
// libpfm4's name.
EventKind papi_event_kind(std::string_view name);

// Whether `name` is an event libpfm4 knows for a PMU this machine does not have (an Intel
// event on an AMD CPU, an uncore PMU a VM does not expose): worth reporting as unavailable
// rather than refusing, unlike a misspelt name.
bool event_of_another_cpu(const std::string& name);

// libpfm4's PMUs detected (or forced with LIBPFM_FORCE_PMU) on this machine, e.g. {"perf", "skx"}.
std::vector<std::string> detected_pmus();

}  // namespace hwprof::counters
