// HWPROF_OUTPUT's reports of the default session, written before exit when a program asks
// (hwprof_write_output, <hwprof/regions.h>): what the at-exit handler would write, once.
#pragma once

namespace hwprof::session {

// What write_default_output did (hwprof_write_output returns it).
inline constexpr int kOutputWritten = 0;
inline constexpr int kNothingToWrite = 1;     // no HWPROF_OUTPUT, regions disabled, no region entered yet, or written already
inline constexpr int kOutputFailed = -1;      // said on stderr
inline constexpr int kStoppedBySignal = 128;  // + the signal that stopped the writer

// Writes the reports now into HWPROF_OUTPUT's folder, as the at-exit handler would (by a
// forked writer, sampling stopped first), and disarms that handler. A SIGINT, SIGTERM or
// SIGHUP that arrives while the writer runs stops it (nothing half-written is left) and is
// not delivered: the caller ends the program as it was ending (docs/regions.md).
int write_default_output() noexcept;

}  // namespace hwprof::session
