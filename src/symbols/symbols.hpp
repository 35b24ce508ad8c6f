// The symbolizer: a sampled instruction pointer or call-chain address of a process, named as
// a function of a module (docs/sampling.md, "Symbols"). It knows nothing of how the addresses
// and mappings were collected: a sampling backend, a recorded file and a test give it the
// same plain values (symbols/mappings.hpp, symbols/perf_map.hpp).
//
// Names come, in this order, from the ELF symbols of the mapped file (.symtab, else .dynsym,
// through libdw), from a perf map file for anonymous memory (JIT code), and otherwise the
// module and offset ("libfoo.so+0x1a2b") or, outside every mapping and map entry,
// "[unknown] 0xADDR". Every address gets an answer; none is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "symbols/mappings.hpp"
#include "symbols/perf_map.hpp"

namespace hwprof::symbols {

// Where a symbol's name came from.
enum class SymbolSource {
  elf_symbol,     // the mapped file's .symtab or .dynsym
  perf_map,       // an entry of a perf map file
  module_offset,  // in a mapped file, but no symbol covers it (stripped code, no libdw, unreadable file)
  unknown,        // outside every file mapping and every perf map entry
};

struct Symbol {
  std::uint64_t address = 0;
  SymbolSource source = SymbolSource::unknown;
  // The function: demangled where it is a mangled C++ name, else the raw name. Empty for
  // module_offset and unknown.
  std::string function;
  std::uint64_t function_offset = 0;  // address - the function's start (elf_symbol, perf_map)
  // The mapped file's name ("libc.so.6", "[vdso]"), the perf map file's ("perf-123.map"), the
  // anonymous mapping's ("[anon]", "[heap]"); empty outside every mapping and map entry.
  std::string module;
  // In a file mapping: address - start + pgoff, the offset in the file.
  std::optional<std::uint64_t> file_offset;
  // Where the file's ELF headers were read: the address in the module's own address space,
  // the one `addr2line -e FILE` and `objdump` use (for a shared library, address - load bias).
  std::optional<std::uint64_t> module_address;
};

// How a frame is shown: the function; "libfoo.so+0x1a2b" (the module address where the ELF
// was read, else the file offset); "[unknown] 0x7f001234".
std::string symbol_label(const Symbol& symbol);

// Symbols of one address space, each address resolved once and kept (a hash map per address;
// each module's file opened once, each function's name demangled once).
//
// Not thread-safe: resolve() fills the caches. Use one Symbolizer per thread, or one behind a
// lock; the references it returns stay valid, unchanged, for its lifetime.
class Symbolizer {
 public:
  // `mappings`: the executable mappings of the address space (where two overlap, the later one
  // covers, as a later PERF_RECORD_MMAP2 replaces what was mapped there). `perf_maps`: files
  // already read; an address in no file mapping is looked up in them, in their order.
  explicit Symbolizer(std::vector<Mapping> mappings, std::vector<PerfMap> perf_maps = {});
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;
  ~Symbolizer();

  const Symbol& resolve(std::uint64_t address);

  // What a user should be told, each once: a build without libdw, a module whose symbols could
  // not be read (and why), a deleted file, a perf map file's skipped lines. It grows as
  // resolve() meets modules for the first time.
  const std::vector<std::string>& warnings() const;
  // Adds a warning of the caller's (a perf map file that could not be read).
  void warn(std::string message);

  std::size_t cached_addresses() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A live process's symbolizer: its executable mappings (/proc/PID/maps) and its perf map file
// (/tmp/perf-PID.map) where it has one. Without one, there is no JIT to name; one that cannot be
// used (too large, not a regular file, owned by another user) is a warning, not an error.
Result<Symbolizer> symbolizer_for_process(int pid, const PerfMapLimits& limits = {});

// The symbolizer of a process that has exited (`hwprof record`): the executable mappings its
// sampler kept (symbols/recorded_mappings.hpp) and its perf map file, read after it exited and
// believed only when owned by hwprof's user or root (its own user cannot be asked any more).
Symbolizer symbolizer_for_exited_process(int pid, std::vector<Mapping> mappings, const PerfMapLimits& limits = {});

}  // namespace hwprof::symbols
