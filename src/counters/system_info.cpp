#include "counters/system_info.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "counters/syscalls.hpp"

namespace hwprof::counters {
namespace {

bool has_capability(int capability) {
  __user_cap_header_struct header{};
  __user_cap_data_struct data[2]{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  const int word = capability / 32;
  return (data[word].effective & (1u << (capability % 32))) != 0;
}

// User-space rdpmc needs a hardware counter whose mmap page says cap_user_rdpmc.
std::string probe_rdpmc(bool hardware_pmu, bool* available) {
  *available = false;
  if (!hardware_pmu) return "unavailable: no hardware PMU is exposed";
  const std::string setting = read_first_line("/sys/bus/event_source/devices/cpu/rdpmc");
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const int fd = open_event(system_calls(), attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return std::string("unavailable: cannot open a cycles counter (") + std::strerror(-fd) + ")";
  const long page = ::sysconf(_SC_PAGESIZE);
  void* map = ::mmap(nullptr, static_cast<std::size_t>(page), PROT_READ, MAP_SHARED, fd, 0);
  std::string result;
  if (map == MAP_FAILED) {
    result = std::string("unavailable: cannot map the counter page (") + std::strerror(errno) + ")";
  } else {
    const auto* mp = static_cast<const perf_event_mmap_page*>(map);
    *available = mp->cap_user_rdpmc != 0;
    result = *available ? "enabled (cap_user_rdpmc)"
                        : "disabled by the kernel (cap_user_rdpmc = 0; /sys/bus/event_source/devices/cpu/rdpmc = " +
                              (setting.empty() ? std::string("?") : setting) + ")";
    ::munmap(map, static_cast<std::size_t>(page));
  }
  ::close(fd);
  return result;
}

}  // namespace

bool hardware_pmu_exposed(const std::string& devices) {
  for (const char* pmu : {"cpu", "cpu_core", "cpu_atom", "armv8_pmuv3"}) {
    if (::access((devices + "/" + pmu).c_str(), F_OK) == 0) return true;
  }
  return false;
}

SystemInfo probe_system() {
  SystemInfo info;
  utsname u{};
  if (::uname(&u) == 0) info.kernel = std::string(u.sysname) + " " + u.release;
  try {
    info.perf_event_paranoid = std::stoi(read_first_line("/proc/sys/kernel/perf_event_paranoid"));
  } catch (...) {
    info.perf_event_paranoid = 99;  // unreadable: assume the strictest
  }
  info.root = ::geteuid() == 0;
  constexpr int kCapSysAdmin = 21;
  constexpr int kCapPerfmon = 38;
  info.cap_perfmon = has_capability(kCapPerfmon) || has_capability(kCapSysAdmin);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/bus/event_source/devices", ec)) {
    PmuInfo pmu;
    pmu.name = entry.path().filename().string();
    try {
      pmu.type = std::stoi(read_first_line(entry.path().string() + "/type"));
    } catch (...) {
      pmu.type = -1;
    }
    info.pmus.push_back(pmu);
  }
  std::sort(info.pmus.begin(), info.pmus.end(), [](const PmuInfo& a, const PmuInfo& b) { return a.type < b.type; });
  info.hardware_pmu = hardware_pmu_exposed();
  info.rdpmc = probe_rdpmc(info.hardware_pmu, &info.rdpmc_available);
  return info;
}

}  // namespace hwprof::counters
