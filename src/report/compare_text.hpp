// The words a comparison's table and page share.
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::report {

inline std::string percent_change(double change) {
  return fmt::format("{:+.1f}%", 100 * change);
}

inline std::string efficiency_text(const std::optional<double>& e) {
  return e ? fmt::format("{:.1f}%", 100 * *e) : "-";
}

// "Model total" or "Program total": the total's name as a line's title.
inline std::string total_title(const std::string& name) {
  std::string out = name;
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 'a' + 'A');
  return out;
}

inline std::string p_text(const std::optional<double>& p) {
  if (!p) return "-";
  if (*p < 1e-4) return "<0.0001";
  return fmt::format("{:.4f}", *p);
}

}  // namespace hwprof::report
