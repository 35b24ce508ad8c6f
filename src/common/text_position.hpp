// "line:column" of a byte offset in a spec's text, for messages. Columns count UTF-8
// characters, not bytes, as editors do. And the nesting limit of every JSON reader.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hwprof::common {

inline std::string line_column(std::string_view text, std::size_t pos) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return std::to_string(line) + ":" + std::to_string(column);
}

// Every JSON input (spec, machine report, profile) may nest at most this deep: real files nest
// under 10 levels, and a file of 64 MiB of '[' would otherwise cost minutes and gigabytes.
inline constexpr std::size_t kMaxJsonDepth = 256;

// The offset of the first '[' or '{' (outside strings) that opens level kMaxJsonDepth + 1, or
// npos. One pass, no allocation: checked before a JSON text is parsed.
inline std::size_t json_nesting_overflow(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// "FILE:LINE:COLUMN: JSON nested deeper than 256 levels ..." when `text` is, else empty.
inline std::string json_nesting_error(std::string_view text, const std::string& source_name) {
  const std::size_t at = json_nesting_overflow(text);
  if (at == std::string_view::npos) return {};
  return source_name + ":" + line_column(text, at) + ": JSON nesting deeper than " + std::to_string(kMaxJsonDepth) +
         " levels; no hwprof file nests so deep (damaged or not a hwprof file?)";
}

}  // namespace hwprof::common
