#include "cli/output.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "common/stages.hpp"
#include "hwprof/engine/report.hpp"

namespace hwprof::cli {

int fail(const Error& error) {
  std::cerr << "hwprof: error: " << error.message << "\n";
  return kExitError;
}

int emit(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    std::cout.flush();
    if (!std::cout) return fail(Error{"cannot write to standard output"});
    return kExitOk;
  }
  if (auto error = write_file_atomically(path, text)) return fail(*error);
  return kExitOk;
}

std::string size_text(std::uintmax_t bytes) {
  if (bytes < 10'000) return fmt::format("{} bytes", bytes);
  if (bytes < 10'000'000) return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

}  // namespace hwprof::cli
