// libFuzzer harness: a model spec through the parser and, when it parses, the cost model (the
// same contract as tests/unit/graph/spec_fuzz_test.cpp, on coverage-guided inputs).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source_name = "fuzz/model.json";
  const auto graph = hwprof::parse_model(hwprof::fuzz::as_text(data, size), source_name);
  if (const hwprof::Graph* g = hwprof::fuzz::value_or_named_error(graph, source_name)) {
    hwprof::fuzz::value_or_named_error(hwprof::analyze(*g), source_name);
  }
  return 0;
}
