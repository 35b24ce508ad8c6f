// The perf_event backend: direct perf_event_open(2) calls through the Syscalls seam.
//
// Events are opened in groups (a leader and its siblings, read together in one read(2) with
// PERF_FORMAT_GROUP | ID | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING); a group that does not
// fit on the PMU is split, never dropped. For this process every thread that exists when
// the set opens gets its own counters with `inherit`, so the threads it starts later are
// counted too — OpenBLAS starts its workers when it loads, before any counter opens, and a
// counter on the calling thread alone would miss them. Uncore events are opened system-wide
// on one CPU per socket.
#pragma once

#include <memory>

#include "common/stages.hpp"
#include "counters/syscalls.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {

std::unique_ptr<CounterSet> open_perf_events(const CounterOptions& options, Syscalls& sys = system_calls());

// The message for a perf_event_open failure: why, and how to fix it.
CounterStatus status_from_errno(int error) noexcept;
std::string reason_from_errno(int error, bool hardware, bool uncore);

}  // namespace hwprof::counters
