// Reading a LevelDetection in tests: its level names in order, and one level by name.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "calibrate/memory_levels.hpp"

namespace hwprof::test {

inline std::vector<std::string> names(const calibration::LevelDetection& d) {
  std::vector<std::string> out;
  for (const calibration::DetectedLevel& l : d.levels) out.push_back(l.level);
  return out;
}

// The level named `name`; a failure (and an empty level) when there is none.
inline const calibration::DetectedLevel& level(const calibration::LevelDetection& d, const std::string& name) {
  for (const calibration::DetectedLevel& l : d.levels) {
    if (l.level == name) return l;
  }
  ADD_FAILURE() << "no level " << name;
  static const calibration::DetectedLevel none;
  return none;
}

}  // namespace hwprof::test
