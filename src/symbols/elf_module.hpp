// One ELF file's function symbols, read through elfutils' libdwfl (Debian libdw-dev): its
// .symtab where the file has one, else the .symtab of a debug file installed by build ID, else
// its .dynsym (a stripped library keeps the functions it exports). The only file of hwprof
// that includes libdw; built without it, open() says so and the symbolizer shows module+offset
// (docs/sampling.md, "Symbols").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "symbols/address_ranges.hpp"

namespace hwprof::symbols {

// Whether this build reads ELF symbols (HWPROF_WITH_LIBDW), and why not where it does not.
bool elf_symbols_available();
inline constexpr std::string_view kWithoutLibdw = "built without libdw: install libdw-dev and rebuild hwprof to name functions in ELF files";

struct ElfFunction {
  std::string_view name;    // raw (mangled) as the symbol table holds it; valid while the module lives
  std::uint64_t start = 0;  // in the module's own address space
};

// The file is opened once, with libdwfl placing it at its own addresses (load bias 0): the
// symbolizer turns a sampled address into the module's address first (address_of), the way
// `addr2line -e FILE` wants it, so one open module serves every process and mapping of it.
// Its function symbols are read once, when it is opened, into a table sorted by address: a
// lookup is a binary search (libdwfl's own dwfl_module_addrinfo reads the whole symbol table
// at every call, some 70 us an address in a process with OpenBLAS).
class ElfModule {
 public:
  // The file at `path`: a regular file (a FIFO or device is refused without blocking) that is
  // an ELF executable or shared library; otherwise why not, starting with the path.
  static Result<std::unique_ptr<ElfModule>> open(const std::string& path);
  ElfModule(const ElfModule&) = delete;
  ElfModule& operator=(const ElfModule&) = delete;
  ~ElfModule();

  // The module address of `file_offset`, in a mapping of the file from `pgoff` on: through the
  // PT_LOAD segment that mapping holds. nullopt where no segment holds it.
  std::optional<std::uint64_t> address_of(std::uint64_t file_offset, std::uint64_t pgoff) const;
  // The function whose symbol covers `address` (a module address), or nullopt.
  std::optional<ElfFunction> function_at(std::uint64_t address) const;

  struct Segment {
    std::uint64_t offset = 0;
    std::uint64_t file_size = 0;
    std::uint64_t vaddr = 0;
    bool executable = false;  // PF_X
  };
  // A function symbol as the table holds it: [start, end), its name libdwfl's.
  struct FunctionSymbol {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    const char* name = nullptr;
  };

 private:
  struct Handle;
  ElfModule(std::unique_ptr<Handle> handle, std::vector<Segment> segments, std::vector<FunctionSymbol> functions);
  std::unique_ptr<Handle> handle_;
  std::vector<Segment> segments_;
  std::vector<FunctionSymbol> functions_;  // sorted by start
  std::vector<AddressRange> pieces_;       // index: into functions_; an inner symbol covers its outer one
};

// `file_offset` as a module address, through the PT_LOAD segment of `segments` that an
// executable mapping from `pgoff` holds it in: a free function, tested on made-up segments.
std::optional<std::uint64_t> module_address(const std::vector<ElfModule::Segment>& segments, std::uint64_t file_offset, std::uint64_t pgoff,
                                            std::uint64_t page_size);

// One function symbol as a symbol table gives it, before the table is made.
struct RawFunction {
  std::uint64_t start = 0;
  std::uint64_t size = 0;         // 0: the symbol says no size (hand-written assembly, _init)
  std::uint64_t section_end = 0;  // where the symbol's section ends
  int binding = 0;                // 0 global, 1 weak, 2 local: the name preferred among aliases
  const char* name = nullptr;
};
// The table: sorted by start, one symbol per start (among aliases, one with a size, then by
// binding, then by name, so the same file always gives the same name); a symbol without a size
// reaches to the next symbol or its section's end, never over code of another section.
std::vector<ElfModule::FunctionSymbol> function_table(std::vector<RawFunction> raw);

}  // namespace hwprof::symbols
