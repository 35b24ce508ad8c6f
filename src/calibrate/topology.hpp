// Where calibration threads run: one logical CPU per physical core, from sysfs topology.
#pragma once

#include <vector>

namespace hwprof::detail {

// Online logical CPUs, the first of each physical core (package, core id), in order.
std::vector<int> cpus_one_per_core();
int online_logical_cpus();

}  // namespace hwprof::detail
