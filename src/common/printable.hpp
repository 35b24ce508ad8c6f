// Text read from a file (an ONNX node's name, op type or value name) made safe for a terminal
// and a report: control characters (C0, DEL and the C1 range U+0080–U+009F in UTF-8) become
// "\x1b"-style escapes, so that an ESC, BEL, CR or NUL in a name neither drives the terminal
// nor cuts the name short. Other UTF-8 text is kept as it is.
#pragma once

#include <string>
#include <string_view>

namespace hwprof::common {

// A name: control characters escaped, and a backslash written "\\", so that two different
// names stay different ("a\x1b" spelled out and "a" + ESC do not meet).
std::string printable_name(std::string_view text);

// A whole message: control characters escaped except the newlines that separate its lines;
// a backslash is kept (names inside it were escaped with printable_name already).
std::string printable_message(std::string_view text);

}  // namespace hwprof::common
