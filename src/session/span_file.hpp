// The span file: what a program under `hwprof record` leaves for it at exit — its pid, its
// region names and its timeline as spans on CLOCK_MONOTONIC — so that the recorder can attribute
// the program's samples to its regions (docs/sampling.md, "Using it: hwprof record").
//
// The format is text, one record a line, fields separated by one space:
//
//   hwprof-spans 1
//   pid PID
//   timeline_dropped N
//   region ID NAME                           (NAME: bytes below '!', '%' and DEL as %HH)
//   span TID REGION DEPTH START_NS END_NS   (CLOCK_MONOTONIC nanoseconds)
//   end REGIONS SPANS                       (the counts of the lines above: the file is whole)
//
// The reader (profile/span_file_reader.hpp) takes it as hostile input.
#pragma once

#include <string>
#include <string_view>

#include "common/stages.hpp"
#include "hwprof/session.hpp"

namespace hwprof::session {

inline constexpr const char* kRecordSpansVariable = "HWPROF_RECORD_SPANS";  // the folder the files go into
inline constexpr std::string_view kSpanFileMagic = "hwprof-spans 1";

// The file of process `pid` in `folder`: FOLDER/spans-PID.txt.
std::string span_file_path(const std::string& folder, long pid);

// The snapshot as the span file's text.
std::string span_file_text(const SessionSnapshot& snapshot, long pid);

// Called once, when the default session opens with HWPROF_RECORD_SPANS set: at exit, the
// process (and each process it forks, with its own pid) writes its span file into `folder`,
// atomically; a failure is one line on stderr, never the program's exit status.
void write_span_file_at_exit(Session& session, std::string folder) noexcept;

}  // namespace hwprof::session
