// Reading a parsed JSON document the way the project reads its inputs (model specs, machine
// reports, profiles): every problem becomes one message naming the file, the line and
// column (SourceText::locate), the JSON pointer and what was expected. Readers throw
// JsonReadError internally and turn it into an Error at their public boundary, so that a
// deep reader needs no error plumbing on every line.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "hwprof/source_text.hpp"

namespace hwprof::common {

struct JsonReadError {
  std::string message;
};

// A JSON pointer token for `key` (RFC 6901: '~' → "~0", '/' → "~1"), so that keys such as
// "DP GFLOP/s" still locate.
inline std::string json_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Json: nlohmann::json, or nlohmann::ordered_json where member order must survive a round trip.
template <class Json>
class BasicJsonReader {
 public:
  explicit BasicJsonReader(const SourceText& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw JsonReadError{source_.locate(pointer) + ": " + (pointer.empty() ? "" : pointer + ": ") + problem};
  }
  const Json& member(const Json& object, const std::string& pointer, const char* key) const {
    if (!object.is_object()) fail(pointer, std::string("expected an object, got ") + object.type_name());
    if (!object.contains(key)) fail(pointer, std::string("missing \"") + key + "\"");
    return object[key];
  }
  double number(const Json& object, const std::string& pointer, const char* key, bool positive) const {
    const Json& v = member(object, pointer, key);
    const std::string at = pointer + "/" + json_pointer_token(key);
    if (!v.is_number()) fail(at, std::string("expected a number, got ") + v.type_name());
    const double d = v.template get<double>();
    if (!std::isfinite(d) || (positive ? d <= 0.0 : d < 0.0)) {
      fail(at, std::string("expected a ") + (positive ? "positive" : "non-negative") + " finite number, got " + v.dump());
    }
    return d;
  }
  std::int64_t integer(const Json& object, const std::string& pointer, const char* key, std::int64_t min) const {
    const Json& v = member(object, pointer, key);
    const std::string at = pointer + "/" + json_pointer_token(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.template get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) ||
        v.template get<std::int64_t>() < min) {
      fail(at, "expected an integer >= " + std::to_string(min) + ", got " + v.dump());
    }
    return v.template get<std::int64_t>();
  }
  std::string string(const Json& object, const std::string& pointer, const char* key) const {
    const Json& v = member(object, pointer, key);
    if (!v.is_string()) fail(pointer + "/" + json_pointer_token(key), std::string("expected a string, got ") + v.type_name());
    return v.template get<std::string>();
  }
  bool boolean(const Json& object, const std::string& pointer, const char* key) const {
    const Json& v = member(object, pointer, key);
    if (!v.is_boolean()) fail(pointer + "/" + json_pointer_token(key), std::string("expected true or false, got ") + v.type_name());
    return v.template get<bool>();
  }

 private:
  const SourceText& source_;
};

using JsonReader = BasicJsonReader<nlohmann::json>;

}  // namespace hwprof::common
