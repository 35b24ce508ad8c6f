#include "common/input_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hwprof::common {
namespace {

// What a file that cannot hold text is, for "PATH: is a character device, not a model spec".
const char* unreadable_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return nullptr;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// "a model spec", "an event-group file".
std::string a(std::string_view what) {
  const bool vowel = !what.empty() && std::string_view("aeiou").find(what.front()) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(what);
}

std::string too_large(const std::string& path, std::string_view what, std::size_t max_bytes, const std::string& size) {
  return path + ": " + size + "; " + a(what) + " may have at most " + std::to_string(max_bytes) + " bytes";
}

}  // namespace

Result<std::string> read_input_file(const std::string& path, std::string_view what, std::size_t max_bytes, InputKinds accept) {
  if (path.empty()) return Error{"the path of the " + std::string(what) + " is empty"};
  // O_NONBLOCK: opening a FIFO that no program writes into returns at once instead of waiting.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    return Error{path + ": cannot open the " + std::string(what) + " (" + std::strerror(errno) + ")"};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error{path + ": cannot read the " + std::string(what) + " (" + std::strerror(errno) + ")"};
  const char* const wanted = accept == InputKinds::regular_file ? "; give a regular file" : "; give a regular file or a pipe";
  if (const char* kind = unreadable_kind(st.st_mode)) return Error{path + ": is " + kind + ", not " + a(what) + wanted};
  const bool regular = S_ISREG(st.st_mode);
  if (!regular && accept == InputKinds::regular_file) {
    return Error{path + ": is a FIFO or pipe, not " + a(what) + wanted};
  }
  if (regular && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    return Error{too_large(path, what, max_bytes, std::to_string(st.st_size) + " bytes")};
  }
  std::string text;
  if (regular) text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
        return Error{too_large(path, what, max_bytes, "more than " + std::to_string(max_bytes) + " bytes")};
      }
      text.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) break;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Error{path + ": cannot read the " + std::string(what) + " (" + std::strerror(errno) + ")"};
    }
    // A pipe or FIFO with a writer but nothing to read yet.
    pollfd p{fd.get(), POLLIN, 0};
    int ready = 0;
    while ((ready = ::poll(&p, 1, kPipeIdleSeconds * 1000)) < 0 && errno == EINTR) {
    }
    if (ready == 0) {
      return Error{path + ": the pipe or FIFO sent nothing for " + std::to_string(kPipeIdleSeconds) + " s; stopped waiting for the " +
                   std::string(what)};
    }
  }
  if (text.empty() && S_ISFIFO(st.st_mode)) {
    return Error{path + ": the pipe or FIFO gave no data (is a program writing into it?); expected " + a(what)};
  }
  return text;
}

}  // namespace hwprof::common
