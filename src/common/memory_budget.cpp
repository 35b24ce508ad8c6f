#include "common/memory_budget.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/resource.h>

namespace hwprof::common {
namespace {

// A number from a one-line sysfs file; nullopt for "max", a missing file or junk.
std::optional<std::int64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(text);
}

struct CgroupRoom {
  std::int64_t room = -1;  // limit − usage of the tightest cgroup; -1: no limit found
  std::int64_t limit = 0;
  std::int64_t used = 0;
};

// The tightest limit of this process's cgroup and its parents (v2: one hierarchy "0::/path";
// v1: the "memory" controller's line).
CgroupRoom cgroup_room(const std::string& root) {
  CgroupRoom best;
  std::ifstream in(root + "/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? std::string::npos : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    const bool v2 = line.compare(0, first, "0") == 0 && controllers.empty();
    bool v1 = false;
    std::stringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');) v1 = v1 || c == "memory";
    if (!v2 && !v1) continue;
    const std::string base = root + (v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory");
    for (int depth = 0; depth < 64; ++depth) {
      const std::string dir = base + (path == "/" ? "" : path);
      const auto limit = read_number(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
      const auto used = read_number(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
      // v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages).
      if (limit && *limit < (std::int64_t{1} << 60)) {
        const std::int64_t room = std::max<std::int64_t>(0, *limit - used.value_or(0));
        if (best.room < 0 || room < best.room) best = {room, *limit, used.value_or(0)};
      }
      if (path.empty() || path == "/") break;
      const std::size_t slash = path.find_last_of('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  }
  return best;
}

// The room left under this process's address-space limit (ulimit -v, prlimit --as): the limit
// minus VmSize from /proc/self/status; -1 without a limit.
std::int64_t address_space_room(const std::string& root, std::int64_t* limit_out) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  const std::int64_t used = proc_kib_field(root + "/proc/self/status", "VmSize:").value_or(0);
  *limit_out = static_cast<std::int64_t>(limit.rlim_cur);
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(limit.rlim_cur) - used);
}

}  // namespace

std::optional<std::int64_t> proc_kib_field(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::int64_t kib = 0;
    if (fields >> name >> kib && name == key && kib >= 0) return kib * 1024;
  }
  return std::nullopt;
}

std::string binary_bytes(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[64];
  if (b >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f GiB", b / (1024.0 * 1024 * 1024));
  } else if (b >= 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", b / (1024.0 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f KiB", b / 1024.0);
  }
  return text;
}

MemoryBudget memory_budget(const std::string& root) {
  MemoryBudget budget;
  if (const auto available = proc_kib_field(root + "/proc/meminfo", "MemAvailable:")) {
    budget.available = *available;
    budget.source = "MemAvailable " + binary_bytes(*available);
  }
  const CgroupRoom cgroup = cgroup_room(root);
  if (cgroup.room >= 0 && (budget.available < 0 || cgroup.room < budget.available)) {
    budget.available = cgroup.room;
    budget.source = "cgroup memory limit " + binary_bytes(cgroup.limit) + ", " + binary_bytes(cgroup.used) + " of it used" +
                    (budget.source.empty() ? "" : "; " + budget.source);
  }
  if (root.empty()) {  // the limit is this process's own, not a fixture's
    std::int64_t limit = 0;
    const std::int64_t room = address_space_room(root, &limit);
    if (room >= 0 && (budget.available < 0 || room < budget.available)) {
      budget.available = room;
      budget.source = "address-space limit (ulimit -v) " + binary_bytes(limit) + ", " + binary_bytes(limit - room) + " of it mapped" +
                      (budget.source.empty() ? "" : "; " + budget.source);
    }
  }
  return budget;
}

std::optional<Error> check_memory_fits(std::int64_t needed, const std::string& what, const std::string& breakdown, const MemoryBudget& budget) {
  if (budget.available < 0 || needed <= budget.available) return std::nullopt;
  return Error{what + " needs about " + binary_bytes(needed) + " of memory (" + breakdown + "; analytic estimate), but only " +
               binary_bytes(budget.available) + " are available (" + budget.source + "); nothing was allocated"};
}

}  // namespace hwprof::common
