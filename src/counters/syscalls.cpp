#include "counters/syscalls.hpp"

#include <cerrno>
#include <cstdlib>

#include <dirent.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"

namespace hwprof::counters {

int Syscalls::perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept {
  const long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

long Syscalls::read(int fd, void* buffer, std::size_t size) noexcept {
  const ssize_t n = ::read(fd, buffer, size);
  return n < 0 ? -errno : static_cast<long>(n);
}

int Syscalls::ioctl(int fd, unsigned long request, unsigned long argument) noexcept {
  return ::ioctl(fd, request, argument) < 0 ? -errno : 0;
}

int Syscalls::close(int fd) noexcept {
  return ::close(fd) < 0 ? -errno : 0;
}

std::vector<pid_t> Syscalls::threads() noexcept {
  std::vector<pid_t> tids;
  try {
    DIR* dir = ::opendir("/proc/self/task");
    if (dir == nullptr) return {::gettid()};
    while (const dirent* entry = ::readdir(dir)) {
      char* end = nullptr;
      const long tid = std::strtol(entry->d_name, &end, 10);
      if (end != entry->d_name && *end == '\0' && tid > 0) tids.push_back(static_cast<pid_t>(tid));
    }
    ::closedir(dir);
  } catch (...) {
    // Out of memory while listing threads: count the calling thread at least.
    return {};
  }
  return tids;
}

const volatile perf_event_mmap_page* Syscalls::map_counter(int fd) noexcept {
  void* page = ::mmap(nullptr, static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), PROT_READ, MAP_SHARED, fd, 0);
  return page == MAP_FAILED ? nullptr : static_cast<const volatile perf_event_mmap_page*>(page);
}

void Syscalls::unmap_counter(const volatile perf_event_mmap_page* page) noexcept {
  // munmap takes a plain pointer; the page is only ever read through `volatile`.
  ::munmap(const_cast<perf_event_mmap_page*>(page), static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
}

void* Syscalls::map_ring(int fd, std::size_t bytes, int* error) noexcept {
  void* ring = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ring != MAP_FAILED) return ring;
  *error = errno;
  return nullptr;
}

void Syscalls::unmap_ring(void* ring, std::size_t bytes) noexcept {
  ::munmap(ring, bytes);
}

int Syscalls::poll(pollfd* fds, std::size_t count, int timeout_ms) noexcept {
  const int ready = ::poll(fds, static_cast<nfds_t>(count), timeout_ms);
  if (ready >= 0) return ready;
  return errno == EINTR ? 0 : -errno;
}

std::vector<int> Syscalls::online_cpus() noexcept {
  try {
    return parse_cpu_list(read_first_line("/sys/devices/system/cpu/online"));
  } catch (...) {
    return {};  // out of memory: the caller reports that no CPU was listed
  }
}

Syscalls& system_calls() noexcept {
  // Never destroyed: code that runs at exit (the regions library's atexit handler stops its
  // sampler and reads its counters) may come after the destructors of statics constructed
  // later than it was registered.
  static Syscalls* const real = new Syscalls;
  return *real;
}

long read_exact(Syscalls& sys, int fd, void* buffer, std::size_t size) noexcept {
  long n = 0;
  do {
    n = sys.read(fd, buffer, size);
  } while (n == -EINTR);
  if (n < 0) return n;
  return static_cast<std::size_t>(n) == size ? n : -EIO;
}

int open_event(Syscalls& sys, perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept {
  int fd = 0;
  do {
    fd = sys.perf_event_open(attr, pid, cpu, group_fd, flags);
  } while (fd == -EINTR);
  return fd;
}

}  // namespace hwprof::counters
