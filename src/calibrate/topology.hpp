// Where calibration threads run: one logical CPU per physical core, from sysfs topology.
#pragma once

#include <string>
#include <vector>

namespace hwprof::detail {

// Online logical CPUs, the first of each physical core (package, core id), in order; every
// online CPU where the topology is unreadable (some containers), the hardware concurrency
// without sysfs. `_from` reads another sysfs cpu directory (tests).
std::vector<int> cpus_one_per_core();
std::vector<int> cpus_one_per_core_from(const std::string& sysfs_cpu_dir);
int online_logical_cpus();

}  // namespace hwprof::detail
