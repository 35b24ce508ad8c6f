// Runs a program (no shell) and captures its exit code, stdout and stderr: for tests that
// exercise the real hwprof binary.
#pragma once

#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace hwprof::test {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `environment`: the child's whole environment ("NAME=value"); nullptr: this process's.
// `cwd`: the child's working folder; empty: this process's.
inline ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>* environment, const std::string& cwd = {}) {
  ProcessResult result;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> env;
  if (environment != nullptr) {
    for (const auto& e : *environment) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environment != nullptr ? env.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (spawned != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    return result;
  }
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline ProcessResult run_process(const std::vector<std::string>& argv) {
  return run_process(argv, nullptr);
}

#ifdef HWPROF_CLI_PATH
// The hwprof binary under test with these arguments.
inline ProcessResult run_hwprof(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {HWPROF_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}
#endif

}  // namespace hwprof::test
