// What every harness checks: a parser given any bytes returns a value, or an Error whose message
// starts with the source name it was given (so that the user learns which file is wrong). A
// broken promise aborts, which libFuzzer reports as a crash and the replay test as a failure;
// so does an exception escaping the parser (the library promises not to throw).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hwprof/result.hpp"

namespace hwprof::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void require_named(const std::string& message, const std::string& source_name) {
  if (message.size() > source_name.size() && message.compare(0, source_name.size(), source_name) == 0) return;
  std::fprintf(stderr, "hwprof fuzz: an error that does not start with the source name '%s': '%s'\n", source_name.c_str(), message.c_str());
  std::abort();
}

// The value, or nullptr after checking the error's message.
template <class T>
const T* value_or_named_error(const Result<T>& result, const std::string& source_name) {
  if (result.ok()) return &*result;
  require_named(result.error().message, source_name);
  return nullptr;
}

}  // namespace hwprof::fuzz
