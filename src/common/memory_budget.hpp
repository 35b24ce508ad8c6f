// How much memory this process may still take: MemAvailable from /proc/meminfo, lowered by
// the memory limit of the cgroup it runs in (v2 memory.max, or v1 memory.limit_in_bytes, on the
// way up to the root) minus what that cgroup already uses, and by the room left under an
// address-space limit (ulimit -v). Checked before a model's tensors
// are allocated, so that a model too large for the machine is refused with the figures instead
// of being killed by the kernel after a minute of swapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hwprof/result.hpp"

namespace hwprof::common {

struct MemoryBudget {
  std::int64_t available = -1;  // bytes this process may take; -1: unknown
  std::string source;           // "MemAvailable 21.3 GiB", "cgroup limit 8 GiB, 7.2 GiB used"
};

// `root` is where /proc and /sys are found ("" on a live system; a fixture's folder in tests,
// where this process's own address-space limit is not applied).
MemoryBudget memory_budget(const std::string& root = "");

// "needs about X GiB of memory (...) but only Y GiB are available (...)" when `needed` exceeds
// the budget; nothing when it fits or the budget is unknown.
std::optional<Error> check_memory_fits(std::int64_t needed, const std::string& what, const std::string& breakdown, const MemoryBudget& budget);

// The value of `key` ("MemAvailable:", "VmSize:") in a /proc file of "Key: N kB" lines, in bytes.
std::optional<std::int64_t> proc_kib_field(const std::string& path, std::string_view key);

// "1.5 GiB", "312 MiB".
std::string binary_bytes(std::int64_t bytes);

}  // namespace hwprof::common
