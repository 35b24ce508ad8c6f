// A number for a report's JSON: the value, or null where there is none (absent, NaN, ±inf) —
// never a 0 that was not measured.
#pragma once

#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>
#include "common/stages.hpp"

namespace hwprof::report {

inline nlohmann::ordered_json json_number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}
inline nlohmann::ordered_json json_number(const std::optional<double>& v) {
  return v ? json_number(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace hwprof::report
