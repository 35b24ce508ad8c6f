// A file written whole or not at all (write_file_atomically, <hwprof/atomic_file.hpp>) from content
// made in parts: a large report (a trace of 100,000 calls) is written as it is made, so that
// writing it never needs the whole text in memory at once (docs/regions.md, "What is written").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hwprof/atomic_file.hpp"

namespace hwprof::common {

// Takes the parts of a file's content in order.
using TextSink = std::function<void(std::string_view part)>;

// The same guarantees as write_file_atomically: `produce` hands the content to the sink in
// parts, which are written through a small buffer; after a failed write the rest is dropped and
// the error returned, with nothing left behind. An exception from `produce` leaves nothing
// behind either, and is passed on.
std::optional<Error> write_file_atomically_in_parts(const std::string& path, const std::function<void(const TextSink&)>& produce);

}  // namespace hwprof::common
