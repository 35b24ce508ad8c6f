#include "cli/child_process.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iterator>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/stages.hpp"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace hwprof::cli {
namespace {

// The child being run, for the signal handler: hwprof forwards SIGTERM, SIGHUP, SIGINT and
// SIGQUIT to it (as perf stat and perf record do), waits for it to end, and still reports.
volatile sig_atomic_t g_child_process = 0;

void forward_signal_to_child(int signal, siginfo_t* info, void* /*context*/) {
  // A signal the terminal raised (^C) reached the child's process group already: only what a
  // process sent to hwprof alone (kill, a job scheduler) needs passing on.
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  if (g_child_process > 0) ::kill(static_cast<pid_t>(g_child_process), signal);
}

constexpr int kForwardedSignals[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT};

// hwprof's environment with `added` over it, built before the fork: the child of a process
// with threads (OpenBLAS starts its own) may call only async-signal-safe functions before exec.
std::vector<std::string> child_environment(const std::vector<std::string>& added) {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const std::string& a : added) {
      const std::size_t eq = a.find('=');
      replaced = replaced || (entry.size() > eq && entry.substr(0, eq + 1) == std::string_view(a).substr(0, eq + 1));
    }
    if (!replaced) out.emplace_back(entry);
  }
  out.insert(out.end(), added.begin(), added.end());
  return out;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

double rusage_seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
}

}  // namespace

// Long: the fork, the child's wait and exec, and the parent's attach, go-ahead, signal
// forwarding and wait are one sequence whose order is the point.
Result<ChildResult> run_child(const std::vector<std::string>& command, const AttachToChild& attach,
                              const std::vector<std::string>& environment_added) {
  if (command.empty()) return Error{"no program given"};
  std::vector<std::string> args = command;
  std::vector<std::string> env = child_environment(environment_added);
  std::vector<char*> argv = pointers_to(args);
  std::vector<char*> envp = pointers_to(env);
  int go[2];
  int failed[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  if (::pipe2(failed, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(go[0]);
    ::close(go[1]);
    return Error{std::string("pipe: ") + std::strerror(error)};
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    for (int fd : {go[0], go[1], failed[0], failed[1]}) ::close(fd);
    return Error{std::string("fork: ") + std::strerror(error)};
  }
  if (pid == 0) {
    ::close(go[1]);
    ::close(failed[0]);
    char byte = 0;
    ssize_t n = 0;
    while ((n = ::read(go[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) ::_exit(127);  // hwprof could not attach: the command is not run
    ::execvpe(argv[0], argv.data(), envp.data());
    const int error = errno;
    (void)!::write(failed[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(go[0]);
  ::close(failed[1]);
  if (auto error = attach(pid)) {
    ::close(go[1]);
    ::close(failed[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return *error;
  }
  // Like time(1) and perf stat: the child gets the signal, we wait for it and report.
  g_child_process = pid;
  struct sigaction forward {};
  forward.sa_sigaction = forward_signal_to_child;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  struct sigaction old[std::size(kForwardedSignals)] = {};
  for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) ::sigaction(kForwardedSignals[i], &forward, &old[i]);
  const auto start = std::chrono::steady_clock::now();
  (void)!::write(go[1], "x", 1);
  ::close(go[1]);
  int exec_error = 0;
  const bool exec_failed = ::read(failed[0], &exec_error, sizeof exec_error) == static_cast<ssize_t>(sizeof exec_error);
  ::close(failed[0]);
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  ChildResult result;
  result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  g_child_process = 0;
  for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) ::sigaction(kForwardedSignals[i], &old[i], nullptr);
  if (exec_failed) {
    result.exit_code = 127;
    result.exec_error = "cannot run '" + command.front() + "': " + std::strerror(exec_error);
    return result;
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.user_seconds = rusage_seconds(usage.ru_utime);
  result.system_seconds = rusage_seconds(usage.ru_stime);
  return result;
}

std::string quote_command(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& arg : command) {
    if (!out.empty()) out += ' ';
    out += arg.find_first_of(" \t'\"") == std::string::npos ? arg : "'" + arg + "'";
  }
  return out;
}

}  // namespace hwprof::cli
