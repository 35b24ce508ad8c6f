// libFuzzer harness: an event-group file (counters/<family>/NAME.txt) through its parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "hwprof/event_group.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source_name = "fuzz/group.txt";
  hwprof::fuzz::value_or_named_error(hwprof::parse_event_group(hwprof::fuzz::as_text(data, size), source_name), source_name);
  return 0;
}
