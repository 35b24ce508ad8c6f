#include "analyze/number_format.hpp"

#include <cmath>

#include <fmt/format.h>
#include "common/stages.hpp"

namespace hwprof::analysis {

std::string group_digits(std::int64_t value) {
  const bool negative = value < 0;
  std::string digits = std::to_string(value);
  if (negative) digits.erase(0, 1);
  std::string out;
  const std::size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  out += digits.substr(0, first);
  for (std::size_t i = first; i < digits.size(); i += 3) out += "," + digits.substr(i, 3);
  return negative ? "-" + out : out;
}

std::string si(double value, const char* unit) {
  static const char* const prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int k = 0;
  double v = value;
  while (std::fabs(v) >= 1000.0 && k < 6) {
    v /= 1000.0;
    ++k;
  }
  if (k == 0 && v == std::floor(v)) return fmt::format("{:.0f} {}", v, unit);
  return fmt::format("{:.2f} {}{}", v, prefixes[k], unit);
}

std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6);
}

std::string milliseconds(double v) {
  if (v >= 100) return fmt::format("{:.1f}", v);
  if (v >= 10) return fmt::format("{:.2f}", v);
  if (v >= 1) return fmt::format("{:.3f}", v);
  if (v >= 0.01) return fmt::format("{:.4f}", v);
  return fmt::format("{:.5f}", v);
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", fraction * 100.0);
}

std::string short_number(double v) {
  return v >= 1000 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace hwprof::analysis
