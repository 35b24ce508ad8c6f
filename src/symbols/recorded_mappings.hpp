// The executable mappings of a process sampled by `hwprof record`, from the MMAP2 (or MMAP)
// records its sampler kept rather than /proc/PID/maps, which is gone once it exited
// (docs/sampling.md, "Using it: hwprof record").
#pragma once

#include <cstdint>
#include <vector>

#include "common/stages.hpp"
#include "sampling/sample_records.hpp"
#include "symbols/mappings.hpp"

namespace hwprof::symbols {

// Process `pid`'s executable mappings in time order (a later one covers an earlier one where
// they overlap, as the symbolizer takes them). A process forked while recorded starts with what
// its parent had mapped before the fork (the kernel sends no records for inherited memory); an
// exec replaces all of it, so a process's own records after its exec come last and win.
// Anonymous code ("//anon") keeps no path, so the perf map file names it.
std::vector<Mapping> recorded_mappings(const SampleStore& store, std::uint32_t pid);

}  // namespace hwprof::symbols
