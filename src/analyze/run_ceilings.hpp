// The roofs of a calibration run, labelled as every roofline shows them (the profile's, the
// comparison's, the merge's and the ceilings chart).
#pragma once

#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::analysis {

// The ceilings of a calibration run for one precision: each memory level's triad bandwidth
// (a slope) and the FMA and GEMM compute roofs.
struct DrawnRoof {
  std::string label;
  double gflops = 0;
  std::string dash;  // stroke-dasharray; empty: solid
};
struct MemorySlope {
  std::string label;
  double gbps = 0;
  std::string color;
};
struct DrawnCeilings {
  std::vector<DrawnRoof> roofs;     // FMA peak first, then GEMM
  std::vector<MemorySlope> slopes;  // L1 .. DRAM
};
DrawnCeilings ceilings_of(const CalibrationRun& run, bool single_precision);

}  // namespace hwprof::analysis
