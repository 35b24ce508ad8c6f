// Two back-to-back reads of an open counter set, the floor under any region that reads its
// counters on entry and exit: shared by region_bench and counter_read_bench.
#pragma once

#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "hwprof/counters.hpp"

inline void time_counter_read_pairs(benchmark::State& state, const std::vector<std::string>& events) {
  hwprof::CounterOptions options;
  options.events = events;
  auto set = hwprof::open_counters(options);
  set->start();
  hwprof::CounterSnapshot before;
  hwprof::CounterSnapshot after;
  for (auto _ : state) {
    set->read(before);
    set->read(after);
    benchmark::DoNotOptimize(before);
    benchmark::DoNotOptimize(after);
  }
  set->stop();
}
