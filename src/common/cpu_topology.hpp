// This machine's CPUs as the kernel lists them: which are online, one per physical core (for
// the calibration's and the engine's threads), and pinning the calling thread to one of them;
// with the sysfs/procfs reading they need. Shared by counters, calibration, the engine and the
// profiler, so it sits below all of them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hwprof::common {

// The first line of a (sysfs or procfs) file, without its newline; "" when unreadable.
std::string read_first_line(const std::string& path);
// A kernel CPU list ("0-3,8,10-11" → 0,1,2,3,8,10,11); a malformed part ends the list there.
std::vector<int> parse_cpu_list(const std::string& list);

// Online logical CPUs, the first of each physical core (package, core id), in order; every
// online CPU where the topology is unreadable (some containers), the hardware concurrency
// without sysfs. `_from` reads another sysfs cpu directory (tests).
std::vector<int> cpus_one_per_core();
std::vector<int> cpus_one_per_core_from(const std::string& sysfs_cpu_dir);
int online_logical_cpus();

// A thread count as HWPROF_THREADS gives it: a whole number from 1 to 65536, or nothing.
std::optional<int> parse_thread_count(std::string_view text);

// Pins the calling thread to one CPU; false (and why) when the kernel refuses.
bool pin_current_thread(int cpu, std::string* why) noexcept;

}  // namespace hwprof::common
