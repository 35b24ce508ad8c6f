#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwprof/report.hpp"

namespace hwprof {

std::optional<Error> write_file_atomically(const std::string& path, const std::string& content) {
  if (path.empty()) return Error{"output path is empty"};
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Error{path + ": cannot create a temporary file beside it (" + std::strerror(errno) + ")"};
  auto fail = [&](const char* what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Error{path + ": " + what + " (" + std::strerror(saved) + "); nothing was written"};
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkostemp creates 0600; give the file the permissions a plain create would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) return fail("cannot set permissions");
  if (::fsync(fd) != 0) return fail("fsync failed");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{path + ": close failed (" + std::string(std::strerror(saved)) + "); nothing was written"};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temp.c_str());
    return Error{path + ": cannot rename the temporary file into place (" + std::string(std::strerror(saved)) + ")"};
  }
  return std::nullopt;
}

}  // namespace hwprof
