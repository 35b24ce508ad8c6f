// Running a user's command under hwprof (`hwprof stat -- CMD`, `hwprof record -- CMD`): forked,
// held before its exec until the caller has attached to its pid (counters or a sampler opened
// with enable_on_exec), then exec'd without a shell; SIGTERM, SIGHUP, SIGINT and SIGQUIT sent
// to hwprof are passed on to it, and its exit status is hwprof's.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::cli {

struct ChildResult {
  int exit_code = 0;       // its exit status, or 128 + the signal that ended it; 127 where it could not be run
  std::string exec_error;  // why it could not be run ("cannot run 'x': No such file or directory"); empty when it ran
  double wall_seconds = 0.0;
  double user_seconds = 0.0;
  double system_seconds = 0.0;
};

// Called with the child's pid while it waits before its exec. An error stops the child before
// it execs (nothing of the command runs), and run_child returns that error.
using AttachToChild = std::function<std::optional<Error>(pid_t)>;

// Runs `command` (argv[0] looked up in PATH), with `environment_added` ("NAME=value") set in
// its environment over what hwprof's has. An error: the child could not be made or attached to.
Result<ChildResult> run_child(const std::vector<std::string>& command, const AttachToChild& attach,
                              const std::vector<std::string>& environment_added = {});

// The command as a line shows it: words with spaces or quotes in single quotes.
std::string quote_command(const std::vector<std::string>& command);

}  // namespace hwprof::cli
