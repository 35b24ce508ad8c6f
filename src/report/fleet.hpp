// Calibration reports of several machines side by side (`hwprof compare a.json b.json ...` on
// machine reports): CPU, caches, every ceiling of the one-thread and the all-cores runs with its
// ratio to the first machine, and their rooflines drawn in one SVG.
#pragma once

#include <string>
#include <vector>

#include "hwprof/machine.hpp"

namespace hwprof::detail {

struct FleetMachine {
  std::string file;
  Machine machine;
};

std::string fleet_table(const std::vector<FleetMachine>& machines);
std::string fleet_json(const std::vector<FleetMachine>& machines);
// Each machine's all-cores roofline (DRAM slope, FMA peak) in single precision, one colour per
// machine, on shared log–log axes.
std::string fleet_svg(const std::vector<FleetMachine>& machines);

}  // namespace hwprof::detail
