#include "common/data_paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include <dlfcn.h>

namespace hwprof::common {
namespace fs = std::filesystem;

std::string this_binary_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&this_binary_path), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  const fs::path path = fs::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : path.string();
}

std::vector<std::string> data_directories(const char* environment, const std::string& kind, const std::string& installed_module) {
  std::vector<std::string> dirs;
  auto add = [&](const fs::path& dir) {
    const std::string text = dir.lexically_normal().string();
    for (const std::string& d : dirs) {
      if (d == text) return;
    }
    dirs.push_back(text);
  };
  if (const char* env = environment != nullptr ? std::getenv(environment) : nullptr; env != nullptr && *env != '\0') {
    std::string_view rest(env);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      if (colon != 0) add(fs::path(std::string(rest.substr(0, colon))));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  // A shared libhwprof in <prefix>/<libdir>: its data in <prefix>/<datadir>/hwprof.
  if (const std::string self = this_binary_path(); !self.empty()) {
    add(fs::path(self).parent_path() / HWPROF_LIBDIR_TO_DATADIR / "hwprof" / kind);
    // A program in <prefix>/bin linked with the static library.
    add(fs::path(self).parent_path().parent_path() / HWPROF_INSTALL_DATADIR_RELATIVE / "hwprof" / kind);
  }
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    add(exe.parent_path().parent_path() / HWPROF_INSTALL_DATADIR_RELATIVE / "hwprof" / kind);
  }
  // A program linked with the static library, built against a prefix it does not live in
  // (installed with `--prefix`, or moved): the prefix its build named. Only where the folder
  // exists, so that a build tree's module path adds no folder that is never there.
  if (!installed_module.empty()) {
    const fs::path libdir = fs::path(installed_module).parent_path().parent_path();
    const fs::path dir = (libdir / HWPROF_LIBDIR_TO_DATADIR / "hwprof" / kind).lexically_normal();
    if (fs::is_directory(dir, ec)) add(dir);
  }
  // The source tree (a build tree's programs), then the prefix it was configured for.
  add(fs::path(HWPROF_SOURCE_DIR) / kind);
  add(fs::path(HWPROF_INSTALL_FULL_DATADIR) / "hwprof" / kind);
  return dirs;
}

}  // namespace hwprof::common
