// Whether a calibration measured this machine or its neighbours: how much CPU other processes
// used while it ran (/proc/stat's busy time less this process's own), how much the hypervisor
// took (steal time), and — to name them in the evidence — which processes it was
// (/proc/<pid>/stat). A calibration made beside a busy neighbour gives ceilings that are too
// low, and every layer placed under them looks better than it is; so hwprof checks before and
// during, repeats what was disturbed, and marks what stays disturbed as contended.
// Parsing is separate from reading, so recorded /proc texts of busy machines are tested.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::calibration {

// One /proc/stat "cpu" line, in clock ticks.
struct CpuTicks {
  std::uint64_t busy = 0;        // user + nice + system + irq + softirq
  std::uint64_t idle = 0;        // idle + iowait
  std::uint64_t steal = 0;       // time the hypervisor ran something else while this CPU wanted to run
  std::uint64_t interrupts = 0;  // irq + softirq (also in busy): left out of threads' CPU time, kept by task-clock
  std::uint64_t total() const noexcept { return busy + idle + steal; }
};

struct ProcStat {
  CpuTicks all;            // the aggregate "cpu" line
  int procs_running = -1;  // runnable tasks at the moment of reading (-1: not given)
};
// nullopt when the text has no aggregate cpu line.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// One process's CPU time from its /proc/<pid>/stat line: name (comm) and utime + stime ticks.
struct ProcessTicks {
  int pid = 0;
  std::string name;
  std::uint64_t ticks = 0;
};
std::optional<ProcessTicks> parse_process_stat(std::string_view line);

// The machine at one moment.
struct LoadSnapshot {
  double wall_seconds = 0.0;  // steady clock
  ProcStat stat;
  double own_cpu_seconds = 0.0;  // this process, every thread (getrusage)
};

// What happened between two snapshots.
struct Load {
  double seconds = 0.0;
  double others_cpus = 0.0;     // CPU time of everything but this process, per second of wall time
  double steal_fraction = 0.0;  // steal / all ticks
  bool known = false;           // /proc/stat could be read at both ends
};
Load load_between(const LoadSnapshot& before, const LoadSnapshot& after, long ticks_per_second);

// A neighbour: a process that used CPU between two scans of /proc.
struct Neighbour {
  int pid = 0;
  std::string name;
  double cpus = 0.0;
};
// The busiest processes between two scans (pid → ticks), at most `most`, this process left out.
std::vector<Neighbour> busiest(const std::vector<ProcessTicks>& before, const std::vector<ProcessTicks>& after, double seconds, long ticks_per_second,
                               int own_pid, std::size_t most);

// Thresholds: other processes using this much CPU — a quarter of one, or 5 % of the machine
// where that is more (a 64-core server's daemons disturb no measurement) — or the hypervisor
// stealing this fraction of the time, disturb a calibration (a worker shares its core, or its
// memory bandwidth). `logical_cpus` <= 0: this machine's.
inline constexpr double kOthersCpusContended = 0.25;
inline constexpr double kOthersShareContended = 0.05;
inline constexpr double kStealContended = 0.05;
bool contended(const Load& load, int logical_cpus = 0) noexcept;
// "other processes used 1.96 CPUs and the hypervisor stole 0.3 % of the time over 6.1 s".
std::string describe(const Load& load);

// The live machine: /proc/stat and getrusage now; every process's CPU ticks now.
LoadSnapshot snapshot_load();
std::vector<ProcessTicks> scan_processes();

// Watches one phase of the calibration: what happened since begin().
class LoadWatch {
 public:
  void begin();
  Load end() const;

 private:
  LoadSnapshot start_;
};

// Samples the machine for `seconds` and names who was busy: "other processes used 1.96 CPUs
// (stress-ng-cpu pid 4242: 0.98, stress-ng-cpu pid 4243: 0.98)".
struct LoadCheck {
  Load load;
  std::vector<Neighbour> neighbours;
  std::string words() const;
};
LoadCheck check_load(double seconds);

}  // namespace hwprof::calibration
