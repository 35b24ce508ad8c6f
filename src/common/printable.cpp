#include "common/printable.hpp"

#include <cstdio>

namespace hwprof::common {
namespace {

std::string escaped(std::string_view text, bool names) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    char code[8];
    if (c == '\n' && !names) {
      out += '\n';
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // A C1 control character in UTF-8 (U+009B is a CSI to some terminals).
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned char>(text[i + 1]));
      out += code;
      ++i;
    } else if (c == '\\' && names) {
      out += "\\\\";
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string printable_name(std::string_view text) {
  return escaped(text, true);
}

std::string printable_message(std::string_view text) {
  return escaped(text, false);
}

}  // namespace hwprof::common
