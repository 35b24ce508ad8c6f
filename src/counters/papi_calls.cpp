#include "counters/papi_calls.hpp"

#if defined(HWPROF_HAVE_PAPI)

#include <atomic>
#include <cstdlib>
#include <ctime>

#include <dirent.h>
#include <unistd.h>

#include "common/monotonic_clock.hpp"
#include "common/stages.hpp"
#include "counters/system_info.hpp"

namespace hwprof::counters {
namespace {

std::string proc_task_dir(pid_t pid) {
  return pid == 0 ? std::string("/proc/self/task") : "/proc/" + std::to_string(pid) + "/task";
}

PapiSeam& real_papi_seam() noexcept {
  static PapiSeam real;
  return real;
}

std::atomic<PapiSeam*>& current_papi_seam() noexcept {
  static std::atomic<PapiSeam*> current{&real_papi_seam()};
  return current;
}

}  // namespace

std::vector<pid_t> proc_task_ids(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* dir = ::opendir(proc_task_dir(pid).c_str());
  if (dir == nullptr) return tids;
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  return tids;
}

bool proc_task_alive(pid_t pid, pid_t tid) {
  return ::access((proc_task_dir(pid) + "/" + std::to_string(tid)).c_str(), F_OK) == 0;
}

bool sysfs_hardware_pmu() {
  return hardware_pmu_exposed();
}

std::uint64_t monotonic_clock_ns() noexcept {
  return monotonic_ns();
}

PapiSeam& papi_seam() noexcept {
  return *current_papi_seam().load(std::memory_order_acquire);
}

ScopedPapiCalls::ScopedPapiCalls(const PapiCalls& calls) : previous_(&papi_seam()) {
  seam_.calls = calls;
  current_papi_seam().store(&seam_, std::memory_order_release);
}

ScopedPapiCalls::~ScopedPapiCalls() {
  current_papi_seam().store(previous_, std::memory_order_release);
}

}  // namespace hwprof::counters

#endif  // HWPROF_HAVE_PAPI
