// Files written whole or not at all: every report, calibration and region table hwprof writes
// goes through here, so that a reader never sees half a file (docs/design.md, "Rules every
// part keeps"). Part of the regions library; <hwprof/engine/report.hpp> includes it.
#pragma once

#include <optional>
#include <string>

#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// Writes the whole file or nothing: a temporary file beside `path`, flushed, then renamed over
// it. A symlink's target is what gets replaced (the link stays), and a file replaced keeps its
// permissions and owner. What is not a regular file is never replaced: a character device
// (/dev/null) or a FIFO with a reader is written to directly, as is a descriptor of this
// process (/dev/stdout, /dev/fd/N, /proc/self/fd/N; appended to); a directory, a block device,
// a socket and a FIFO nobody reads are refused.
std::optional<Error> write_file_atomically(const std::string& path, const std::string& content);
// Whether write_file_atomically(path, ...) can succeed, checked before long work (a calibration)
// so that a bad destination fails at once: the path is not empty or a directory, and the folder
// it goes into exists and is writable.
std::optional<Error> check_output_path(const std::string& path);

}  // namespace hwprof
HWPROF_API_END
