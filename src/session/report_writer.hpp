// A session's reports, made by the report module (libhwprof-report.so, loaded on demand so
// that programs using only regions link no report, BLAS or OpenMP code), or — when the module
// cannot be found — a plain table of the regions written by this library itself.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "hwprof/session.hpp"

namespace hwprof::session {

// The module's entry point (src/report_module/report_module.cpp). `version` must be the library's
// HWPROF_VERSION string: the snapshot is passed as a C++ object. Returns 0 on success; the
// message then lists the files written, one per line, else says what went wrong.
using ReportModuleEntry = int (*)(const SessionSnapshot* snapshot, const char* version, const char* dir, char* message, std::size_t message_size);
inline constexpr const char* kReportModuleEntry = "hwprof_report_module_write";
inline constexpr const char* kReportModuleFile = "libhwprof-report.so";

// Its second entry point: hwprof::mpi's merged ranks (session/merged_ranks.hpp), written as
// merged.json, merged.txt and merged.html into `dir`, the ceilings of this machine's stored
// calibration added. The same contract as the first.
struct MergedRanks;
using ReportModuleMergedEntry = int (*)(MergedRanks* merged, const char* version, const char* dir, char* message, std::size_t message_size);
inline constexpr const char* kReportModuleMergedEntry = "hwprof_report_module_write_merged";

// Its third: the session's snapshot and what HWPROF_SAMPLE's sampler took
// (session/session_sampling.hpp), written as the first writes a snapshot, with the sampling
// breakdown added to the profile. The same contract as the first.
struct SessionSamples;
using ReportModuleSampledEntry = int (*)(const SessionSnapshot* snapshot, const SessionSamples* samples, const char* version, const char* dir,
                                         char* message, std::size_t message_size);
inline constexpr const char* kReportModuleSampledEntry = "hwprof_report_module_write_sampled";

// write_session_report (regions.hpp) with the sampler's samples, where `samples` is not null.
std::optional<Error> write_session_report_sampled(const Session& session, const SessionSamples* samples, const std::string& dir,
                                                  std::vector<std::string>* written);
// The same from a snapshot taken before: what a forked report writer is given, so that it takes
// none of the session's locks (another thread of the program may have held one at the fork).
std::optional<Error> write_snapshot_report_sampled(const SessionSnapshot& snapshot, const SessionSamples* samples, const std::string& dir,
                                                   std::vector<std::string>* written);

// Where a program's build said the module is (the HWPROF_REPORT_MODULE_PATH its include flags
// define, registered by the header before main).
void set_report_module_hint(const char* path) noexcept;
// That path, or "" where the build gave none.
std::string report_module_hint();

// The plain table written when there is no module: one row per region.
std::string regions_text_table(const SessionSnapshot& snapshot);

}  // namespace hwprof::session
