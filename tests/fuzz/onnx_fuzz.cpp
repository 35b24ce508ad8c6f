// libFuzzer harness: an ONNX file through the importer — protobuf parsing, the validation of
// every node's attributes, ONNX's checker and shape inference, the mapping onto hwprof's layers
// and hwprof's own shape inference — and, when it imports, the cost model; never the engine.
// Both import modes run: the strict one (`bench`, `run`) and the one that keeps what it cannot
// map (`summary`). The promise is the other harnesses' (fuzz_check.hpp): a value, or an error
// that starts with the file's name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A folder that does not exist: external data named by the input is never found, whatever it says.
  const std::string source_name = "/nonexistent-hwprof-fuzz/model.onnx";
  for (const bool keep_unsupported : {false, true}) {
    hwprof::LoadOptions options;
    options.keep_unsupported = keep_unsupported;
    const auto graph = hwprof::import_onnx(hwprof::fuzz::as_text(data, size), source_name, options);
    if (const hwprof::Graph* g = hwprof::fuzz::value_or_named_error(graph, source_name)) {
      hwprof::fuzz::value_or_named_error(hwprof::analyze(*g), source_name);
    }
  }
  return 0;
}
