// Regions in your own C++ code: one header, one line per region, no Session to pass around
// (after LIKWID's markers, PAPI's high-level API, Caliper and Tracy):
//
//   #include <hwprof/regions.hpp>
//   void forward() {
//     HWPROF_SCOPE_WORK("fc1", 2.0 * m * n * k, 4.0 * (m * k + k * n + m * n));  // FLOPs, bytes per call
//     sgemm(...);
//   }
//
// and run the program with HWPROF_OUTPUT=DIR: at normal exit, DIR holds the same profile.json,
// profile.txt (the table), profile.csv, roofline.svg, report.html and trace.json as `hwprof
// profile -o DIR`, every region placed on this machine's stored calibration. Linked with
// hwprof::regions (CMake) or `pkg-config hwprof-regions`: no OpenBLAS, OpenMP or report code
// in the program's link line (the reports are made by a module loaded at exit).
//
// The environment (read once, when the first region is entered):
//   HWPROF_OUTPUT=DIR       write the reports there at exit (DIR/rank-N under MPI)
//   HWPROF_BACKEND=timer|perf|papi|auto   default: auto with HWPROF_OUTPUT or events, else timer
//   HWPROF_EVENTS=a,b,...   counter events; HWPROF_GROUP=NAME an event group (hwprof info lists them)
//   HWPROF_DISABLE=1        regions cost a load and a branch, and nothing is measured
// Without any of them the program runs as it would without hwprof and writes nothing.
//
// HWPROF_SCOPE(name) takes a string literal (bound to its call site once) or any string (a
// std::string, name.c_str(): looked up by its text each time, like Tracy's transient zones).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/regions.h"
#include "hwprof/session.hpp"

HWPROF_API_BEGIN
namespace hwprof {

// The process-wide session the scopes use, opened on first use from the environment (above).
// With HWPROF_DISABLE=1 it is a session that measures nothing.
Session& default_session();
bool regions_enabled() noexcept;

// Writes a session's reports into `dir` (created if needed), each file whole or not at all;
// what HWPROF_OUTPUT does at exit for the default session. `written` gets the files' paths.
std::optional<Error> write_session_report(const Session& session, const std::string& dir, std::vector<std::string>* written = nullptr);

namespace detail {
// The report module's entry point `symbol` (the module is loaded on first use and stays), or
// nullptr with where it looked in `tried`: how HWPROF_OUTPUT's reports and hwprof::mpi's
// merged report are made without linking report code into the program.
void* report_module_symbol(const char* symbol, std::string* tried) noexcept;
// 0: not opened yet; 1: disabled; otherwise the default session's state.
extern std::atomic<std::uintptr_t> default_state_word;
Session::State* open_default_state() noexcept;  // nullptr when disabled
// Asks the default session, before it opens, to keep at least this many call paths per thread
// (hwprof::torch: a model's modules and ops make thousands); HWPROF_CALL_PATHS still wins.
void want_call_paths(std::size_t per_thread) noexcept;
// Asks the default session, before it opens, for a timeline of `events` calls whose second half
// keeps the latest ones, cut at whole steps (hwprof::torch: a training run's first and last
// steps); not when sampling or under hwprof record, whose samples need the first calls in order.
// HWPROF_TIMELINE_EVENTS still sets the size.
void want_step_timeline(std::size_t events) noexcept;
inline Session::State* default_state() noexcept {
  const std::uintptr_t word = default_state_word.load(std::memory_order_acquire);
  if (word > 1) return reinterpret_cast<Session::State*>(word);  // NOLINT(performance-no-int-to-ptr)
  return word == 1 ? nullptr : open_default_state();
}
}  // namespace detail

// A region of the default session from here to the end of the scope: with HWPROF_DISABLE=1
// (no state) it costs a load and a branch.
class ScopedRegion : public Region {
 public:
  ScopedRegion(RegionSite& site, std::string_view name) noexcept : Region(detail::default_state(), site, name) {}
  // With the region's work per call: its FLOPs and bytes, for the roofline.
  ScopedRegion(RegionSite& site, std::string_view name, double flops, double bytes) noexcept : ScopedRegion(site, name) { set_work(flops, bytes); }
};

}  // namespace hwprof
HWPROF_API_END

#if defined(HWPROF_DISABLE_REGIONS)
#define HWPROF_SCOPE(name) static_cast<void>(0)
#define HWPROF_SCOPE_WORK(name, flops, bytes) static_cast<void>(0)
#else
#define HWPROF_SCOPE(name)                                                                                                           \
  static ::hwprof::RegionSite HWPROF_CONCAT_(hwprof_scope_site_, __LINE__){::hwprof::detail::static_name(name), __FILE__, __LINE__}; \
  const ::hwprof::ScopedRegion HWPROF_CONCAT_(hwprof_scope_, __LINE__)(HWPROF_CONCAT_(hwprof_scope_site_, __LINE__), name)
#define HWPROF_SCOPE_WORK(name, flops, bytes)                                                                                        \
  static ::hwprof::RegionSite HWPROF_CONCAT_(hwprof_scope_site_, __LINE__){::hwprof::detail::static_name(name), __FILE__, __LINE__}; \
  const ::hwprof::ScopedRegion HWPROF_CONCAT_(hwprof_scope_, __LINE__)(HWPROF_CONCAT_(hwprof_scope_site_, __LINE__), name,           \
                                                                       static_cast<double>(flops), static_cast<double>(bytes))
#endif
