#include "session/output_folder.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/stages.hpp"

namespace hwprof::session {
namespace {

constexpr const char* kClaimFile = ".hwprof-owner";

// Field 22 of /proc/PID/stat: the process's start time in clock ticks since boot; together
// with the pid it names one process, even once the pid is given to another (proc(5)).
unsigned long long start_time_of(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return 0;
  char text[1024] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = '\0';
  const char* after_name = std::strrchr(text, ')');  // the command name may hold spaces
  if (after_name == nullptr) return 0;
  unsigned long long start = 0;
  // After ") ": state (field 3), then fields 4..21, then starttime (22).
  if (std::sscanf(after_name + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &start) != 1) return 0;
  return start;
}

std::string claim_text(pid_t pid) {
  return std::to_string(pid) + " " + std::to_string(start_time_of(pid)) + "\n";
}

// The claim's process, when it is another one that still runs.
bool held_by_another_live_process(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;  // unreadable: someone else's; never take it over
  struct stat st {};
  char text[64] = {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const ssize_t n = regular ? ::read(fd, text, sizeof text - 1) : -1;
  ::close(fd);
  if (!regular) return true;  // not a file we wrote: leave it alone
  long long pid = 0;
  unsigned long long start = 0;
  if (n <= 0 || std::sscanf(text, "%lld %llu", &pid, &start) != 2 || pid <= 0) return false;  // half-written or foreign: stale
  if (pid == ::getpid()) return false;
  const bool running = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
  return running && (start == 0 || start_time_of(static_cast<pid_t>(pid)) == start);
}

bool write_claim(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const std::string text = claim_text(::getpid());
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) ::unlink(path.c_str());
  return written;
}

}  // namespace

std::string own_folder_inside(const std::string& dir, pid_t pid) {
  return dir + "/pid-" + std::to_string(pid);
}

OutputFolder claim_output_folder(const std::string& dir) {
  OutputFolder out;
  out.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    out.problem = "cannot create the folder " + dir + ": " + ec.message();
    return out;
  }
  const std::string path = dir + "/" + kClaimFile;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (write_claim(path)) {
      out.owner = true;
      return out;
    }
    if (errno != EEXIST || held_by_another_live_process(path)) break;
    ::unlink(path.c_str());  // a claim left by a process that has ended
  }
  out.dir = own_folder_inside(dir, ::getpid());
  return out;
}

void release_output_folder(const std::string& dir) noexcept {
  try {
    const std::string path = dir + "/" + kClaimFile;
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    char text[64] = {};
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n > 0 && std::string(text, static_cast<std::size_t>(n)) == claim_text(::getpid())) ::unlink(path.c_str());
  } catch (...) {
  }
}

}  // namespace hwprof::session
