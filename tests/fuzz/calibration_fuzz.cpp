// libFuzzer harness: a calibration (machine report, `hwprof calibrate -o`) through its reader.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "hwprof/engine/machine.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source_name = "fuzz/machine.json";
  hwprof::fuzz::value_or_named_error(hwprof::machine_from_json(hwprof::fuzz::as_text(data, size), source_name), source_name);
  return 0;
}
