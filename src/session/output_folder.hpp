// Which folder a process writes its HWPROF_OUTPUT reports into, so that two processes never
// mix their files in one folder: a child started with the same environment (fork then exec,
// posix_spawn, a launcher whose rank variable could not be used), a forked copy of the
// program, or an unrelated program run at the same time.
//
// The first process to open its regions claims the folder: it creates `.hwprof-owner` in it
// (O_EXCL), holding its pid and start time, and removes it once its reports are written. A
// process that finds the folder claimed by another live process writes into `pid-N/` inside
// it instead; a claim whose process has ended (killed before it could remove the file) is
// taken over. A forked child never holds its parent's claim: it writes into `pid-N/` too.
// docs/regions.md describes it.
#pragma once

#include <string>

#include <sys/types.h>
#include "common/stages.hpp"

namespace hwprof::session {

struct OutputFolder {
  std::string dir;      // where this process's reports go
  bool owner = false;   // this process claimed the folder it was given
  std::string problem;  // the folder could not be created (said at open; tried again at exit)
};

OutputFolder claim_output_folder(const std::string& dir);
// The folder of a process that does not own `dir`: dir/pid-N.
std::string own_folder_inside(const std::string& dir, pid_t pid);
// Removes the claim, if it is still this process's.
void release_output_folder(const std::string& dir) noexcept;

}  // namespace hwprof::session
