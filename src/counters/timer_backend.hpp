// The timer backend, always available: wall-clock time and the CPU time of the process (all
// threads) and of the calling thread, from clock_gettime(2).
#pragma once

#include <memory>

#include "common/stages.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {

// Event names: "wall-time", "process-cpu-time", "thread-cpu-time" (ns). No names: all three.
std::unique_ptr<CounterSet> open_timers(const CounterOptions& options);

}  // namespace hwprof::counters
