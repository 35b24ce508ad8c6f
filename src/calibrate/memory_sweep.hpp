// The bandwidth sweep of one calibration run, driven by what it finds: a triad grid from
// inside L1 to past the largest cache any source reports, then on past the last knee until
// bandwidth stops falling (bounded by free memory and a time budget), the points another
// process disturbed measured again, the levels detected from the result (memory_levels.hpp),
// and only then copy, scale, add and streaming stores at each level's own points.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/bandwidth.hpp"
#include "calibrate/memory_levels.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {

struct MemorySweepOptions {
  std::vector<int> cpus;          // one pinned worker each
  LevelEvidence evidence;         // what the cache sources report for these CPUs
  bool quick = false;             // a coarser grid, fewer repetitions, copy at DRAM only, no streaming stores
  std::int64_t memory_limit = 0;  // bytes of arrays all workers may use together (0: the machine's default)
  double extend_seconds = 1.5;    // time the sweep may spend going on past its plan
  std::function<void(const std::string&)> say;
};

struct MemorySweep {
  std::vector<BandwidthSample> samples;      // every (size, kernel) measured, sizes ascending
  std::vector<BandwidthSample> nontemporal;  // copy and triad with streaming stores at DRAM's largest point (not quick)
  LevelDetection levels;
  int remeasured = 0;       // points measured again because another process disturbed them
  int still_disturbed = 0;  // of those, points disturbed again
  std::vector<std::string> notes;
  std::string error;  // nothing could be measured
};

MemorySweep sweep_memory(const MemorySweepOptions& options);

// The memory the sweep may use by default: half of MemAvailable (/proc/meminfo; half the
// physical memory where it cannot be read).
std::int64_t default_sweep_memory_limit();

// The sizes planned before anything is measured: from an eighth of L1 (as reported, else
// 32 KiB per worker) to 2.9 × the largest reported cache and at least 256 MiB, capped by
// `memory_limit`; quarter-octave steps near reported cache ends up to 256 MiB, half-octave
// ones elsewhere (quick: half and whole octaves).
std::vector<std::int64_t> planned_sizes(const LevelEvidence& evidence, int threads, bool quick, std::int64_t memory_limit);

}  // namespace hwprof::calibration
