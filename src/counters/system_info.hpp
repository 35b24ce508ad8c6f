// What this machine allows: kernel, perf_event_paranoid, capabilities, the PMUs the kernel
// exposes, virtualisation and user-space rdpmc — what `hwprof info` reports, with fixes.
#pragma once

#include <string>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::counters {

struct PmuInfo {
  std::string name;  // "cpu", "software", "uncore_imc_0", ...
  int type = -1;     // perf_event_attr.type, from sysfs
};

struct SystemInfo {
  std::string kernel;  // uname -r
  int perf_event_paranoid = 99;
  bool cap_perfmon = false;  // effective CAP_PERFMON (or CAP_SYS_ADMIN, which implies it)
  bool root = false;
  std::vector<PmuInfo> pmus;
  bool hardware_pmu = false;  // a core PMU (cpu, cpu_core, cpu_atom, armv8_pmuv3) is exposed
  std::string rdpmc;          // "enabled (…)", or why not
  bool rdpmc_available = false;
};

SystemInfo probe_system();

// A core PMU (cpu, cpu_core, cpu_atom, armv8_pmuv3) is listed under `devices`.
bool hardware_pmu_exposed(const std::string& devices = "/sys/bus/event_source/devices");

}  // namespace hwprof::counters
