// A session's timeline as spans on CLOCK_MONOTONIC, the time base of perf_event samples
// (docs/sampling.md, "Attribution"): what `hwprof profile --sample` attributes its samples to,
// and what a program under `hwprof record` writes at exit (docs/sampling.md, "Using it: hwprof
// record"). Here, below both, so that the regions library and the profiler compute them alike.
#pragma once

#include <cstdint>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/session.hpp"

namespace hwprof::session {

// One region call on one thread: its OS thread id, the session's region id, its nesting depth
// (0: outermost) and its edges on CLOCK_MONOTONIC.
struct RegionSpan {
  std::int64_t tid = 0;
  int region = -1;
  int depth = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// The session's timeline as spans on CLOCK_MONOTONIC, each with its thread's OS id (a thread
// the snapshot does not list is left out). `timeline_dropped` in the snapshot says how many
// calls the timeline could not hold: samples taken during them find no span.
std::vector<RegionSpan> spans_of(const SessionSnapshot& snapshot);

}  // namespace hwprof::session
