#include "common/cpu_topology.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>
#include <utility>

#include <pthread.h>
#include <sched.h>

namespace hwprof::common {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<int> parse_cpu_list(const std::string& list) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t comma = list.find(',', pos);
    const std::string part = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      const std::size_t dash = part.find('-');
      if (dash == std::string::npos) {
        cpus.push_back(std::stoi(part));
      } else {
        for (int c = std::stoi(part.substr(0, dash)); c <= std::stoi(part.substr(dash + 1)); ++c) cpus.push_back(c);
      }
    } catch (...) {
      return cpus;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return cpus;
}

std::vector<int> cpus_one_per_core() {
  return cpus_one_per_core_from("/sys/devices/system/cpu");
}

std::vector<int> cpus_one_per_core_from(const std::string& sysfs_cpu_dir) {
  std::vector<int> online = parse_cpu_list(read_first_line(sysfs_cpu_dir + "/online"));
  if (online.empty()) {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) online.push_back(static_cast<int>(i));
  }
  std::vector<int> chosen;
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu : online) {
    const std::string base = sysfs_cpu_dir + "/cpu" + std::to_string(cpu) + "/topology/";
    const std::string package = read_first_line(base + "physical_package_id");
    const std::string core = read_first_line(base + "core_id");
    // Without topology (some containers), every CPU counts as a core of its own.
    if (package.empty() || core.empty() || cores.insert({package, core}).second) chosen.push_back(cpu);
  }
  return chosen;
}

int online_logical_cpus() {
  const auto online = parse_cpu_list(read_first_line("/sys/devices/system/cpu/online"));
  return online.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : static_cast<int>(online.size());
}

bool pin_current_thread(int cpu, std::string* why) noexcept {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    if (why != nullptr) {
      try {
        *why = "cpu " + std::to_string(cpu) + " is out of range";
      } catch (...) {
        why->clear();
      }
    }
    return false;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error == 0) return true;
  if (why != nullptr) {
    try {
      *why = "pthread_setaffinity_np(cpu " + std::to_string(cpu) + "): " + std::strerror(error) +
             (error == EINVAL ? " (the CPU is offline or outside this process's affinity mask)" : "");
    } catch (...) {
      why->clear();  // out of memory for the message: the false result still says it
    }
  }
  return false;
}

std::optional<int> parse_thread_count(std::string_view text) {
  const std::string copy(text);  // strtol needs the NUL
  char* end = nullptr;
  const long n = std::strtol(copy.c_str(), &end, 10);
  if (copy.empty() || end == copy.c_str() || *end != '\0' || n < 1 || n > 65536) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace hwprof::common
