// How every subcommand ends: a report to stdout or a file, or an error on stderr.
#pragma once

#include <cstdint>
#include <string>

#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;  // bad input or a failed operation
inline constexpr int kExitUsage = 2;  // bad command line

int fail(const Error& error);
// Writes `text` to `path` atomically, or to stdout when path is empty.
int emit(const std::string& text, const std::string& path);
// A file's size for "wrote ..." lines: bytes, kB or MB (decimal).
std::string size_text(std::uintmax_t bytes);

}  // namespace hwprof::cli
