// Number formatting shared by the reports and the analysis's labels.
#pragma once

#include <cstdint>
#include <string>
#include "common/stages.hpp"

namespace hwprof::analysis {

std::string group_digits(std::int64_t value);         // 1814073344 → "1,814,073,344"
std::string si(double value, const char* unit = "");  // 1.814e9 → "1.81 G"
std::string megabytes(std::int64_t bytes);            // decimal MB, "46.76 MB"
std::string percent(double fraction);                 // 0.1234 → "12.3%"
// Milliseconds with about four significant digits and never an exponent: 812.3, 12.35,
// 1.235, 0.1235, 0.00080 — so that a column of times lines up.
std::string milliseconds(double v);
// A ceiling's figure in a label: 812, 1.23, 0.0456 (no decimals from 1000 up).
std::string short_number(double v);

}  // namespace hwprof::analysis
