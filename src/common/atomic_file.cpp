#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic_file.hpp"
#include "hwprof/atomic_file.hpp"

namespace hwprof {
namespace {

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A path that names one of this process's open descriptors: writing there must go to that
// descriptor (the terminal, the pipe, the file the shell opened), never replace what it names.
bool names_a_descriptor(std::string_view path) {
  return path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0 ||
         (path.rfind("/proc/", 0) == 0 && path.find("/fd/") != std::string_view::npos);
}

// Where a write to `path` lands: `path` with the symlinks of its last component followed (at
// most 40, as the kernel allows), so that the link stays and its target is replaced — even a
// target that does not exist yet. The chain stops at a link to one of this process's
// descriptors (whose "target", such as pipe:[123], is no path), and `via_descriptor` says so.
// Empty when the links loop (or chain further than the kernel would follow).
std::string final_target(const std::string& path, bool* via_descriptor) {
  std::string current = path;
  *via_descriptor = false;
  for (int hop = 0;; ++hop) {
    if (names_a_descriptor(current)) {
      *via_descriptor = true;
      break;
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    if (hop == 40) return {};
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) return {};
    target.resize(static_cast<std::size_t>(n));
    current = target.front() == '/' ? target : parent_of(current) + "/" + target;
  }
  return current;
}

// What no report is ever written onto, whether the write is checked ahead or done.
std::optional<Error> refused_target(const std::string& path, mode_t mode) {
  if (S_ISDIR(mode)) return Error{path + ": is a directory; give a file name"};
  if (S_ISBLK(mode)) return Error{path + ": is a block device; hwprof does not write onto disks"};
  if (S_ISSOCK(mode)) return Error{path + ": is a socket; give a file name"};
  return std::nullopt;
}

std::optional<Error> write_all(int fd, const std::string& path, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{path + ": write failed (" + errno_text(errno) + ")"};
    }
    done += static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

// The parts of a file's content written to `fd` through a buffer of its own; the first failed
// write is kept and what comes after it dropped.
class BufferedWriter {
 public:
  BufferedWriter(int fd, const std::string& path) : fd_(fd), path_(path) { buffer_.reserve(kSize); }
  void add(std::string_view part) {
    if (error_) return;
    if (buffer_.size() + part.size() > kSize) flush();
    if (part.size() >= kSize) {
      if (!error_) error_ = write_all(fd_, path_, part);
      return;
    }
    buffer_.append(part);
  }
  std::optional<Error> finish() {
    flush();
    return error_;
  }

 private:
  static constexpr std::size_t kSize = 1 << 16;
  void flush() {
    if (!error_ && !buffer_.empty()) error_ = write_all(fd_, path_, buffer_);
    buffer_.clear();
  }
  int fd_;
  const std::string& path_;
  std::string buffer_;
  std::optional<Error> error_;
};

using Produce = std::function<void(const common::TextSink&)>;

std::optional<Error> write_parts(int fd, const std::string& path, const Produce& produce) {
  BufferedWriter writer(fd, path);
  produce([&writer](std::string_view part) { writer.add(part); });
  return writer.finish();
}

// A device, FIFO or descriptor: written in place (nothing to replace atomically).
std::optional<Error> write_in_place(const std::string& path, const Produce& produce, bool fifo) {
  // O_NONBLOCK so that a FIFO nobody reads fails at once (ENXIO) instead of waiting forever.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO && fifo) return Error{path + ": a FIFO that no program is reading; nothing was written"};
    return Error{path + ": cannot open for writing (" + errno_text(errno) + ")"};
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::optional<Error> error;
  try {
    error = write_parts(fd, path, produce);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && !error) error = Error{path + ": close failed (" + errno_text(errno) + ")"};
  return error;
}

}  // namespace

std::optional<Error> check_output_path(const std::string& path) {
  if (path.empty()) return Error{"the output path is empty"};
  bool via_descriptor = false;
  const std::string target = final_target(path, &via_descriptor);
  if (target.empty()) return Error{path + ": cannot follow its symbolic links (" + errno_text(ELOOP) + ")"};
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (auto refused = refused_target(path, st.st_mode)) return refused;
    if (!S_ISREG(st.st_mode) || via_descriptor) return std::nullopt;
  }
  const std::string dir = parent_of(target);
  struct stat dst {};
  if (::stat(dir.c_str(), &dst) != 0) return Error{path + ": the folder " + dir + " cannot be used (" + errno_text(errno) + ")"};
  if (!S_ISDIR(dst.st_mode)) return Error{path + ": " + dir + " is not a folder"};
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return Error{path + ": cannot write into " + dir + " (" + errno_text(errno) + ")"};
  return std::nullopt;
}

std::optional<Error> write_file_atomically(const std::string& path, const std::string& content) {
  return common::write_file_atomically_in_parts(path, [&content](const common::TextSink& sink) { sink(content); });
}

namespace common {

std::optional<Error> write_file_atomically_in_parts(const std::string& path, const std::function<void(const TextSink&)>& produce) {
  if (path.empty()) return Error{"the output path is empty"};
  bool via_descriptor = false;
  const std::string target = final_target(path, &via_descriptor);
  if (target.empty()) return Error{path + ": cannot follow its symbolic links (" + errno_text(ELOOP) + ")"};
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists) {
    if (auto refused = refused_target(path, existing.st_mode)) return refused;
    if (!S_ISREG(existing.st_mode) || via_descriptor) return write_in_place(path, produce, S_ISFIFO(existing.st_mode));
  }
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot create a temporary file beside it (" + errno_text(errno) + ")"};
  auto fail = [&](const std::string& what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Error{path + ": " + what + " (" + errno_text(saved) + "); nothing was written"};
  };
  std::optional<Error> written;
  try {
    written = write_parts(fd, path, produce);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (written) {
    ::close(fd);
    ::unlink(temp.c_str());
    return Error{written->message + "; nothing was written"};
  }
  // mkostemp creates 0600: a file replaced keeps its permissions (and, where allowed, its
  // owner); a new one gets what a plain create would give it.
  mode_t mode = 0;
  if (exists) {
    mode = existing.st_mode & 07777;
    if (::fchown(fd, existing.st_uid, existing.st_gid) != 0) {
      mode &= 0777;  // not the owner's: no set-id bits on a file of another owner
    }
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) return fail("cannot set permissions");
  if (::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{path + ": close failed (" + errno_text(saved) + "); nothing was written"};
  }
  if (::rename(temp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{path + ": cannot rename the temporary file into place (" + errno_text(saved) + ")"};
  }
  return std::nullopt;
}

}  // namespace common
}  // namespace hwprof
