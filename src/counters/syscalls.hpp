// The one seam through which the perf_event backend reaches the kernel, so that tests can
// inject EACCES, ENOENT, EOPNOTSUPP, EINVAL, EMFILE, EINTR and short reads (docs/design.md,
// "Tests"; fmt's posix-mock does the same). Every call returns a result or -errno; nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "counters/mmap_read.hpp"

struct perf_event_attr;
struct pollfd;

namespace hwprof::counters {

class Syscalls {
 public:
  virtual ~Syscalls() = default;
  // fd, or -errno.
  virtual int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept;
  // bytes read, or -errno.
  virtual long read(int fd, void* buffer, std::size_t size) noexcept;
  // 0, or -errno.
  virtual int ioctl(int fd, unsigned long request, unsigned long argument) noexcept;
  virtual int close(int fd) noexcept;
  // The thread ids of this process now (/proc/self/task).
  virtual std::vector<pid_t> threads() noexcept;
  // Where the kernel describes its PMUs (tests give a fake tree).
  virtual std::string pmu_devices() const { return "/sys/bus/event_source/devices"; }
  // The event's perf_event_mmap_page (one page mapped read-only), or nullptr.
  virtual const volatile perf_event_mmap_page* map_counter(int fd) noexcept;
  virtual void unmap_counter(const volatile perf_event_mmap_page* page) noexcept;
  // A sampling event's ring buffer: `bytes` (a header page and 2^n data pages) mapped
  // read-write, so that the kernel sees the reader's data_tail and never overwrites unread
  // records (docs/sampling.md, "The ring buffers"); nullptr with the errno in *error.
  virtual void* map_ring(int fd, std::size_t bytes, int* error) noexcept;
  virtual void unmap_ring(void* ring, std::size_t bytes) noexcept;
  // poll(2): how many fds are ready, 0 on a timeout or EINTR, or -errno.
  virtual int poll(pollfd* fds, std::size_t count, int timeout_ms) noexcept;
  // The online CPUs (/sys/devices/system/cpu/online); empty when unreadable.
  virtual std::vector<int> online_cpus() noexcept;
  virtual RdpmcFunction rdpmc() const noexcept { return rdpmc_instruction; }
  virtual RdtscFunction rdtsc() const noexcept { return rdtsc_instruction; }
};

Syscalls& system_calls() noexcept;

// EINTR is retried here, in one place; a short read is -EIO (a partial group read must never
// be parsed as a whole one).
long read_exact(Syscalls& sys, int fd, void* buffer, std::size_t size) noexcept;
int open_event(Syscalls& sys, perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) noexcept;

}  // namespace hwprof::counters
