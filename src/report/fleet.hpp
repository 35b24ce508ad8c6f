// Machine reports side by side (analyze/fleet.hpp) rendered: a table, JSON and one SVG of
// their rooflines.
#pragma once

#include <string>

#include "analyze/fleet.hpp"
#include "common/stages.hpp"

namespace hwprof::report {

std::string fleet_table(const FleetComparison& fleet);
std::string fleet_json(const FleetComparison& fleet);
// Each machine's all-cores roofline (DRAM slope, FMA peak) in single precision, one colour per
// machine, on shared log–log axes.
std::string fleet_svg(const FleetComparison& fleet);

}  // namespace hwprof::report
