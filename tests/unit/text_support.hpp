// Small helpers that many test files need, defined once so that the files can also be compiled
// together (the ci and release presets build with CMAKE_UNITY_BUILD).
#pragma once

#include <cstdint>
#include <string_view>

namespace hwprof::test {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

}  // namespace hwprof::test
