// The UTC timestamp every report carries ("created"), ISO 8601 to the second.
#pragma once

#include <ctime>
#include <string>

namespace hwprof::common {

inline std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

}  // namespace hwprof::common
