// A calibration with made-up ceilings for one thread, high enough that no region of the tests
// and examples is above them: DRAM 100 GB/s, FMA 600 and GEMM 500 GFLOP/s (SP; DP half),
// under a theoretical 5 GHz × 64 FLOP/cycle per core (the plausibility rule allows 2×). Pass
// describe_this_cpu() for one the loaders accept on this machine.
#pragma once

#include "hwprof/engine/machine.hpp"

namespace hwprof::test {

inline Ceiling made_up_ceiling(double best) {
  Ceiling c;
  c.best = best;
  c.median = best;
  c.repetitions = 3;
  return c;
}

inline Machine made_up_calibration(const MachineCpu& cpu) {
  Machine m;
  m.cpu = cpu;
  m.host = "test";
  m.theoretical = {"made-up", 64, 5.0, "test", 64, 32, 20480, 10240, "a test calibration"};
  CalibrationRun run;
  run.threads = 1;
  BandwidthLevel dram;
  dram.from_bytes = 64 << 20;
  dram.to_bytes = 1 << 30;
  dram.kernels["triad"] = made_up_ceiling(100);
  run.bandwidth["dram"] = dram;
  run.compute["fma_sp"] = made_up_ceiling(600);
  run.compute["fma_dp"] = made_up_ceiling(300);
  run.compute["gemm_sp"] = made_up_ceiling(500);
  run.compute["gemm_dp"] = made_up_ceiling(250);
  m.runs.push_back(run);
  return m;
}

}  // namespace hwprof::test
