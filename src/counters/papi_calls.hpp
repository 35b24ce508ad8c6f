// The one seam through which the PAPI backend reaches PAPI, and the few things it reads of
// the machine beside it (the threads of a process, whether a hardware PMU is exposed, a
// clock), so that tests can stand a fake PAPI in its place on machines without a PMU, as the
// perf backend's Syscalls seam does for the kernel (docs/design.md, "Tests"). A table of
// function pointers, the real ones by default: real runs call PAPI exactly as before.
// Built only with PAPI (HWPROF_HAVE_PAPI).
#pragma once

#if defined(HWPROF_HAVE_PAPI)

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <sys/types.h>

#include <papi.h>
#include "common/stages.hpp"

namespace hwprof::counters {

// The thread ids of process `pid` (0: this one) now, from /proc/<pid>/task.
std::vector<pid_t> proc_task_ids(pid_t pid);
// Thread `tid` of process `pid` (0: this one) still exists.
bool proc_task_alive(pid_t pid, pid_t tid);
// A core PMU is listed under /sys/bus/event_source/devices.
bool sysfs_hardware_pmu();
// CLOCK_MONOTONIC in ns. PAPI's own wall clock (PAPI_get_real_nsec) is CLOCK_REALTIME through
// a raw syscall: it can step backwards and costs a kernel entry.
std::uint64_t monotonic_clock_ns() noexcept;

// Every PAPI function the backend calls, named as in papi.h without the PAPI_ prefix.
struct PapiCalls {
  int (*library_init)(int version) = PAPI_library_init;
  int (*thread_init)(unsigned long (*id_function)()) = PAPI_thread_init;
  int (*multiplex_init)() = PAPI_multiplex_init;
  int (*get_opt)(int option, PAPI_option_t* value) = PAPI_get_opt;
  int (*set_opt)(int option, PAPI_option_t* value) = PAPI_set_opt;
  char* (*strerror)(int code) = PAPI_strerror;
  int (*num_components)() = PAPI_num_components;
  int (*get_component_index)(const char* name) = PAPI_get_component_index;
  const PAPI_component_info_t* (*get_component_info)(int component) = PAPI_get_component_info;
  int (*event_name_to_code)(const char* name, int* code) = PAPI_event_name_to_code;
  int (*query_event)(int code) = PAPI_query_event;
  int (*get_event_info)(int code, PAPI_event_info_t* info) = PAPI_get_event_info;
  int (*get_event_component)(int code) = PAPI_get_event_component;
  int (*create_eventset)(int* eventset) = PAPI_create_eventset;
  int (*assign_eventset_component)(int eventset, int component) = PAPI_assign_eventset_component;
  int (*attach)(int eventset, unsigned long tid) = PAPI_attach;
  int (*set_multiplex)(int eventset) = PAPI_set_multiplex;
  int (*add_event)(int eventset, int code) = PAPI_add_event;
  int (*start)(int eventset) = PAPI_start;
  int (*read)(int eventset, long long* values) = PAPI_read;
  int (*stop)(int eventset, long long* values) = PAPI_stop;
  int (*cleanup_eventset)(int eventset) = PAPI_cleanup_eventset;
  int (*destroy_eventset)(int* eventset) = PAPI_destroy_eventset;

  // Beside PAPI.
  std::vector<pid_t> (*task_ids)(pid_t pid) = proc_task_ids;
  bool (*task_alive)(pid_t pid, pid_t tid) = proc_task_alive;
  bool (*hardware_pmu_exposed)() = sysfs_hardware_pmu;
  std::uint64_t (*monotonic_ns)() noexcept = monotonic_clock_ns;
};

// What PAPI_library_init and the calls after it left: once per table of calls.
struct PapiLibrary {
  bool ready = false;
  std::string why;  // when not ready
  int version = 0;
  int multiplex_error = PAPI_OK;  // PAPI_multiplex_init's answer
};

// The calls in use and the library state they initialised.
struct PapiSeam {
  PapiCalls calls;
  std::once_flag init_once;
  PapiLibrary library;
};

// The seam in use: the real PAPI, or a test's while a ScopedPapiCalls lives.
PapiSeam& papi_seam() noexcept;

// For tests: PAPI is `calls` while this lives, initialised afresh through them (the real
// library's state is kept for afterwards). Sets opened meanwhile keep calling `calls`, so they
// must be destroyed first. Not to be used while another thread opens or reads a PAPI set.
class ScopedPapiCalls {
 public:
  explicit ScopedPapiCalls(const PapiCalls& calls);
  ~ScopedPapiCalls();
  ScopedPapiCalls(const ScopedPapiCalls&) = delete;
  ScopedPapiCalls& operator=(const ScopedPapiCalls&) = delete;

 private:
  PapiSeam seam_;
  PapiSeam* previous_;
};

}  // namespace hwprof::counters

#endif  // HWPROF_HAVE_PAPI
