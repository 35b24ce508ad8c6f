// Calibration reports of several machines side by side (`hwprof compare a.json b.json ...` on
// machine reports): every ceiling of the one-thread and the all-cores runs, with its ratio to
// the first machine's. The renderings (table, JSON, one SVG of the rooflines) are
// report/fleet.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::analysis {

struct FleetMachine {
  std::string file;
  Machine machine;
};

// One ceiling across the machines: its value on each (absent where not measured) and its
// ratio to the first machine's (absent where either is missing).
struct FleetCeiling {
  std::string label;  // "DRAM triad", "FMA peak SP", ...
  std::string unit;   // "GB/s", "GFLOP/s", "Geval/s"
  std::string key;    // "dram", "fma_sp", ... (the JSON's names)
  std::vector<std::optional<double>> values;
  std::vector<std::optional<double>> ratios;
};

// The ceilings of one kind of run on every machine: the one-thread run, or the run with the
// most threads (all cores, as calibrate makes it).
struct FleetRuns {
  bool all_cores = false;
  std::vector<std::optional<int>> threads;  // per machine; absent where it has no such run
  std::vector<FleetCeiling> ceilings;       // L1..DRAM triad, FMA and GEMM peaks, transcendental kernels
  const FleetCeiling* find(std::string_view key) const;
};

struct FleetComparison {
  std::vector<FleetMachine> machines;
  std::vector<std::string> labels;  // "A", "B", ...
  FleetRuns one_thread;
  FleetRuns all_cores;
};

FleetComparison compare_machines(std::vector<FleetMachine> machines);

}  // namespace hwprof::analysis
