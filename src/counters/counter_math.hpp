// Counter arithmetic as free functions, apart from the class that does the syscalls, so that
// machines without a PMU still test it (docs/design.md, "Rules every part keeps"; nanobench does the same).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/stages.hpp"
#include "hwprof/counters.hpp"

namespace hwprof::counters {

// One interval of one event: `raw` counted while the event ran `running` ns of the `enabled`
// ns it was enabled. Multiplexed values are scaled by enabled/running, the rule of
// `perf stat` (tools/perf/util/stat.c, perf_counts_values__scale), applied to the interval's
// deltas. A counter that never ran is not_counted, never 0.
CounterReading scale_counter(std::uint64_t raw, std::uint64_t enabled, std::uint64_t running) noexcept;

// A read of a group leader opened with PERF_FORMAT_GROUP | PERF_FORMAT_ID |
// PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING is, in u64 words:
//   nr, time_enabled, time_running, {value, id} × nr        (linux/perf_event.h, read_format)
// parse_group_read maps the values back to our events by id: values[k] is the value of the
// event whose id is ids[k]. Returns false when the buffer is short or malformed, or an id is
// missing, so that a bad read is reported as unavailable rather than misattributed.
struct GroupTimes {
  std::uint64_t enabled = 0;
  std::uint64_t running = 0;
};
bool parse_group_read(const std::uint64_t* words, std::size_t word_count, const std::uint64_t* ids, std::size_t id_count, std::uint64_t* values,
                      GroupTimes* times) noexcept;

// The number of u64 words a group read of `events` members returns.
constexpr std::size_t group_read_words(std::size_t events) noexcept {
  return 3 + 2 * events;
}

// Counters that run from open to close and are started and stopped in arithmetic, as the PAPI
// backend keeps them (src/counters/papi_backend.cpp says why): each region is the difference of
// two reads, summed over the threads' event sets. Counts are PAPI's signed long long; every
// function answers false where a result would overflow, so a read no counter can give is
// reported unavailable rather than wrapped into a number.
//
// sums[k] += counts[k] for k < n: one thread's event set added to the process's total.
bool add_thread_counts(const long long* counts, std::size_t n, long long* sums) noexcept;
// totals[k] += stop[k] - start[k] for k < n: one start/stop interval closed.
bool close_interval(const long long* start, const long long* stop, std::size_t n, long long* totals) noexcept;
// An event's count so far: its closed intervals, plus the open one (now - start) while
// running. False when that is negative (a multiplexed total that PAPI scaled down between two
// reads) or overflows.
bool count_so_far(long long closed, long long start, long long now, bool running, std::uint64_t* value) noexcept;

}  // namespace hwprof::counters
