// Small helpers that many test files need, defined once so that the files can also be compiled
// together (the ci and release presets build with CMAKE_UNITY_BUILD).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace hwprof::test {

inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A whole file's bytes ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// max |got - want| / max |want|: how hwprof's output is compared with a framework's (want must
// not be all zeros).
inline double max_relative_difference(const float* got, const float* want, std::size_t n) {
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
    largest = std::max(largest, std::abs(static_cast<double>(want[i])));
  }
  return worst / largest;
}

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

}  // namespace hwprof::test
