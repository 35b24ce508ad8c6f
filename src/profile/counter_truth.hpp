// Counter truth: what a layer's counters say once the measurement's own cost is taken out,
// and whether what is left can be true.
//
// A counter read is not free, and its cost is not the same everywhere: with counters
// inherited by every thread of the process, a read interrupts each CPU that runs a counted
// thread, and while it waits those threads (an OpenMP team spinning after a parallel loop)
// go on counting. An empty region timed in a quiet loop costs a few microseconds of
// task-clock; the same empty region between two layers, while the engine's threads still
// spin, costs a hundred. So the profiler measures the cost where it is paid: every layer
// boundary of the counted passes opens and closes an empty "probe" region first, under the
// very conditions the layer's own readings meet, and the probe's count per call is
// subtracted from the layer's. What is left below that cost is marked below resolution
// (an upper bound, `~`), and a per-call count that wall time cannot hold (task-clock above
// wall × CPUs, cycles above wall × CPUs × the highest clock) is marked impossible with the
// reason — never printed as a fact.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/engine/profile.hpp"
#include "hwprof/event_group.hpp"
#include "hwprof/session.hpp"

namespace hwprof::profile {

// The probe's count per call of every event (events() order); 0 where it read no value.
std::vector<double> read_cost_per_call(const RegionReport& probe);

// Takes `cost` (per call, events() order) out of every counter of `r` that has a value: the
// sum becomes (per call − cost) × samples, floored at 0, and a remainder below `resolution`
// (one reading's cost: a layer's own probe; for a whole pass, the probes' mean) is marked
// below resolution. Returns the cost actually subtracted per counter (0 for those without a
// value), for the report.
std::vector<double> subtract_read_cost(RegionReport& r, const std::vector<double>& cost, const std::vector<double>& resolution);

// The group's metrics again, from the netted counters and `seconds` per call (the timed
// passes' mean: the counted passes' own time carries the reads). A metric computed from a
// counter below resolution is marked so (its value an upper bound or a guess); one computed
// from an impossible counter (`impossible`: a reason per counter, empty when possible) has
// no value, and its reason names the counter.
std::vector<RegionMetric> metrics_of(const RegionReport& r, const EventGroup& group, double seconds, const std::vector<std::string>& impossible);

// What wall time can hold: the CPUs the process may run on, and the highest clock they
// reach (GHz; 0 when unknown: cycles are then held to kMaxPlausibleGhz).
struct WallBounds {
  double wall_seconds = 0.0;  // per call (the timed mean)
  int cpus = 1;
  double max_ghz = 0.0;
};
// No x86 CPU has shipped above 6.2 GHz (Intel Core i9-14900KS, 2024).
inline constexpr double kMaxPlausibleGhz = 6.5;

// The CPU-time events (EventKind::task_clock) and the core-cycle events, checked
// against the bounds: per counter (events() order) the reason it cannot be true, with the
// figures, or empty. A value above its bound by less than `resolution` (what the subtracted
// readings may have been off by) is consistent with it and marked below resolution instead;
// one already below resolution is an upper bound, which the bound only tightens. Other
// events (instructions, cache misses) have no bound in wall time.
std::vector<std::string> impossible_counters(RegionReport& r, const WallBounds& bounds, const std::vector<double>& resolution);

// The layer's counters (made from `r` by fill_measurements) get what was subtracted from
// them and the impossibility reasons, both in the region's events() order.
void annotate_counters(std::vector<LayerCounter>& counters, const std::vector<double>& subtracted, const std::vector<std::string>& impossible);

// The CPUs this process may run on (sched_getaffinity), at least 1; the highest clock any of
// them reaches (cpufreq's cpuinfo_max_freq), nullopt when the kernel does not say.
int allowed_cpus();
std::optional<double> max_clock_ghz();

}  // namespace hwprof::profile
