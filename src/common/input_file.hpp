// Reading one input file (a model spec, a machine report, a profile, an event-group file) the
// way a hostile or careless path needs: the file's type is checked before anything is read (a
// directory, a device such as /dev/zero or /dev/urandom, or a socket is refused by name), a
// regular file's size before it is read, and every read is bounded, so that a 3 GB file, an
// endless device or a FIFO nobody writes into costs neither memory nor a hang. Pipes work
// (`hwprof summary <(cat model.json)`); a pipe that stays silent is given up after a while.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "hwprof/result.hpp"

namespace hwprof::common {

// How long a pipe or FIFO may stay silent before the read is given up.
inline constexpr int kPipeIdleSeconds = 10;

// What a reader accepts: a regular file or a pipe (a user's `<(command)`), or a regular file
// only (a file another program leaves behind, such as a perf map file: a FIFO there is never
// what was meant, and waiting on it would stall the reader).
enum class InputKinds { file_or_pipe, regular_file };

// The whole of `path`, at most `max_bytes` of it. `what` names the kind of file in messages
// ("model spec", "event-group file"); every message starts with the path.
Result<std::string> read_input_file(const std::string& path, std::string_view what, std::size_t max_bytes,
                                    InputKinds accept = InputKinds::file_or_pipe);

}  // namespace hwprof::common
