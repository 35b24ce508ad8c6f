// "line:column" of a byte offset in a spec's text, for messages. Columns count UTF-8
// characters, not bytes, as editors do.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hwprof::detail {

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

}  // namespace hwprof::detail
