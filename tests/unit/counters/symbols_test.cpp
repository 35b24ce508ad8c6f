// The symbolizer on this process's own code (a function of the test, libc's malloc, a stripped
// library it loads) and on made-up address spaces: every source of a name (ELF symbol, perf
// map, module+offset, unknown), the fallbacks, and files at a mapping's path that are not what
// they claim (missing, deleted, a FIFO, a device, not ELF). Names need libdw: without it those
// tests skip, and one checks that every address is then module+offset.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scratch_dir.hpp"
#include "symbols/elf_module.hpp"
#include "symbols/symbols.hpp"

#if defined(__clang__)
#define HWPROF_TEST_KEEP __attribute__((noinline, used))
#else
#define HWPROF_TEST_KEEP __attribute__((noipa, used))  // noipa: no clone under another name
#endif

namespace hwprof::symbols_test_code {

HWPROF_TEST_KEEP double weighted_total(const std::vector<double>& values, int scale) {
  double total = 0;
  for (double v : values) total += v * scale;
  return total;
}

}  // namespace hwprof::symbols_test_code

namespace hwprof {
namespace {

using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

// This program's file name, as the symbolizer names its module.
std::string this_program() {
  char path[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? symbols::module_name(std::string(path, static_cast<std::size_t>(n))) : "";
}

symbols::Symbolizer this_process() {
  auto symbolizer = symbols::symbolizer_for_process(::getpid());
  EXPECT_TRUE(symbolizer) << symbolizer.error().message;
  return symbolizer ? std::move(*symbolizer) : symbols::Symbolizer({});
}

TEST(Symbols, AFunctionOfThisProgramIsNamedDemangled) {
  if (!symbols::elf_symbols_available()) GTEST_SKIP() << symbols::kWithoutLibdw;
  ASSERT_EQ(symbols_test_code::weighted_total({1.0, 2.0}, 2), 6.0);
  const auto address = reinterpret_cast<std::uint64_t>(&symbols_test_code::weighted_total);
  symbols::Symbolizer symbolizer = this_process();
  for (std::uint64_t offset : {0u, 1u}) {
    const symbols::Symbol& symbol = symbolizer.resolve(address + offset);
    EXPECT_EQ(symbol.source, symbols::SymbolSource::elf_symbol);
    EXPECT_EQ(symbol.function, "hwprof::symbols_test_code::weighted_total(std::vector<double, std::allocator<double> > const&, int)");
    EXPECT_EQ(symbol.function_offset, offset);
    EXPECT_EQ(symbol.module, this_program());
    EXPECT_TRUE(symbol.module_address.has_value());
    EXPECT_EQ(symbols::symbol_label(symbol), symbol.function);
  }
}

TEST(Symbols, AnAddressInsideLibcMallocIsALibcSymbol) {
  if (!symbols::elf_symbols_available()) GTEST_SKIP() << symbols::kWithoutLibdw;
  // libc's own malloc, not a sanitizer's interceptor of the same name.
  void* libc = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr) << ::dlerror();
  const auto malloc_address = reinterpret_cast<std::uint64_t>(::dlsym(libc, "malloc"));
  ::dlclose(libc);
  ASSERT_NE(malloc_address, 0u);
  symbols::Symbolizer symbolizer = this_process();
  const symbols::Symbol& symbol = symbolizer.resolve(malloc_address + 16);
  EXPECT_EQ(symbol.source, symbols::SymbolSource::elf_symbol) << symbols::symbol_label(symbol);
  EXPECT_EQ(symbol.module, "libc.so.6");
  EXPECT_THAT(symbol.function, AnyOf("malloc", "__libc_malloc"));
  EXPECT_EQ(symbol.function_offset, 16u);
}

// Where libc's debug file lies if a debug package installed it by build ID (libc6-dbg), read
// from libc's NT_GNU_BUILD_ID note in this process; empty where libc has no build ID.
std::string libc_debug_file() {
  std::string path;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (name.size() < 9 || name.compare(name.size() - 9, 9, "libc.so.6") != 0) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE) continue;
          const auto* note = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
          const unsigned char* end = note + ph.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            const auto* header = reinterpret_cast<const ElfW(Nhdr)*>(note);
            const unsigned char* desc = note + sizeof(ElfW(Nhdr)) + ((header->n_namesz + 3) & ~3u);
            if (header->n_type == NT_GNU_BUILD_ID && header->n_descsz > 1) {
              std::string id;
              char digits[3];
              for (unsigned k = 0; k < header->n_descsz; ++k) {
                std::snprintf(digits, sizeof digits, "%02x", desc[k]);
                id += digits;
              }
              *static_cast<std::string*>(out) = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
              return 1;
            }
            note = desc + ((header->n_descsz + 3) & ~3u);
          }
        }
        return 0;
      },
      &path);
  return path;
}

TEST(Symbols, LibcsOwnFunctionsAreNamedThroughItsDebugFileWhereOneIsInstalled) {
  if (!symbols::elf_symbols_available()) GTEST_SKIP() << symbols::kWithoutLibdw;
  // memcpy is an IFUNC: dlsym gives the implementation it chose for this CPU, a local symbol
  // that only libc's .symtab names, and Debian's libc.so.6 has none (its debug file does).
  void* libc = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr) << ::dlerror();
  const auto chosen = reinterpret_cast<std::uint64_t>(::dlsym(libc, "memcpy"));
  ::dlclose(libc);
  symbols::Symbolizer symbolizer = this_process();
  const symbols::Symbol& symbol = symbolizer.resolve(chosen + 4);
  EXPECT_EQ(symbol.module, "libc.so.6");
  const std::string debug_file = libc_debug_file();
  struct stat st {};
  if (debug_file.empty() || ::stat(debug_file.c_str(), &st) != 0) {
    // Without the debug file: .dynsym's memcpy is the IFUNC resolver, not this code.
    EXPECT_NE(symbol.function, "memcpy") << "no " << debug_file;
    GTEST_SKIP() << "libc's debug file is not installed (" << debug_file << ", Debian's libc6-dbg): " << symbols::symbol_label(symbol);
  }
  EXPECT_EQ(symbol.source, symbols::SymbolSource::elf_symbol) << symbols::symbol_label(symbol);
  EXPECT_THAT(symbol.function, StartsWith("__mem"));  // __memmove_avx_unaligned_erms, __memcpy_evex_...
}

// The stripped copy of tests/unit/counters/symbols_test_library.cpp, loaded for the test.
class StrippedLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = ::dlopen(HWPROF_STRIPPED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << ::dlerror();
    using AddressOf = std::uintptr_t (*)();
    internal_ = reinterpret_cast<AddressOf>(::dlsym(handle_, "hwprof_symbols_test_internal"))();
    exported_ = reinterpret_cast<AddressOf>(::dlsym(handle_, "hwprof_symbols_test_exported"))();
    Dl_info info{};
    ASSERT_NE(::dladdr(reinterpret_cast<void*>(internal_), &info), 0);
    base_ = reinterpret_cast<std::uint64_t>(info.dli_fbase);
  }
  void TearDown() override {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  void* handle_ = nullptr;
  std::uint64_t internal_ = 0;
  std::uint64_t exported_ = 0;
  std::uint64_t base_ = 0;  // where the library's first segment, at module address 0, was loaded
};

TEST_F(StrippedLibrary, AnInternalFunctionIsModulePlusOffsetAndAnExportedOneIsNamed) {
  if (!symbols::elf_symbols_available()) GTEST_SKIP() << symbols::kWithoutLibdw;
  symbols::Symbolizer symbolizer = this_process();
  const symbols::Symbol& internal = symbolizer.resolve(internal_);
  EXPECT_EQ(internal.source, symbols::SymbolSource::module_offset) << internal.function;
  EXPECT_EQ(internal.module, "libhwprof-symbols-test-stripped.so");
  ASSERT_TRUE(internal.module_address.has_value());
  EXPECT_EQ(*internal.module_address, internal_ - base_);
  EXPECT_EQ(symbols::symbol_label(internal), "libhwprof-symbols-test-stripped.so+" + hex(internal_ - base_));
  EXPECT_TRUE(internal.function.empty());
  const symbols::Symbol& exported = symbolizer.resolve(exported_);
  EXPECT_EQ(exported.source, symbols::SymbolSource::elf_symbol);
  EXPECT_EQ(exported.function, "hwprof_symbols_test::exported_sum(int, double)");
  EXPECT_EQ(exported.module, "libhwprof-symbols-test-stripped.so");
}

TEST_F(StrippedLibrary, TheUnstrippedFileNamesTheInternalFunctionThroughSymtab) {
  if (!symbols::elf_symbols_available()) GTEST_SKIP() << symbols::kWithoutLibdw;
  auto maps = symbols::read_proc_maps(::getpid());
  ASSERT_TRUE(maps) << maps.error().message;
  bool swapped = false;
  for (symbols::Mapping& m : *maps) {
    if (internal_ >= m.start && internal_ < m.end) {
      EXPECT_EQ(m.path, HWPROF_STRIPPED_LIBRARY);
      m.path = HWPROF_UNSTRIPPED_LIBRARY;  // the same layout, with .symtab
      swapped = true;
    }
  }
  ASSERT_TRUE(swapped);
  symbols::Symbolizer symbolizer(*maps);
  const symbols::Symbol& internal = symbolizer.resolve(internal_);
  EXPECT_EQ(internal.source, symbols::SymbolSource::elf_symbol);
  EXPECT_EQ(internal.function, "(anonymous namespace)::internal_scale(int)");
  EXPECT_EQ(internal.module, "libhwprof-symbols-test.so");
}

TEST(Symbols, WithoutLibdwEveryFileAddressIsModulePlusOffsetAndSaysWhyOnce) {
  if (symbols::elf_symbols_available()) GTEST_SKIP() << "built with libdw: this checks a build without it";
  const auto address = reinterpret_cast<std::uint64_t>(&symbols_test_code::weighted_total);
  symbols::Symbolizer symbolizer = this_process();
  const symbols::Symbol& symbol = symbolizer.resolve(address);
  EXPECT_EQ(symbol.source, symbols::SymbolSource::module_offset);
  EXPECT_EQ(symbol.module, this_program());
  EXPECT_THAT(symbols::symbol_label(symbol), StartsWith(this_program() + "+0x"));
  ASSERT_EQ(symbolizer.warnings().size(), 1u);
  EXPECT_THAT(symbolizer.warnings()[0], HasSubstr("built without libdw: install libdw-dev"));
}

using SymbolizerTest = test::ScratchDirTest;

TEST_F(SymbolizerTest, PerfMapsNameJitCodeAndTheRestIsModuleOffsetOrUnknown) {
  auto map = symbols::read_perf_map(put("perf-42.map", "10100 100 jit_kernel_a\n50000 40 _ZN4dnnl4impl3fooEv\nnot an entry\n"));
  ASSERT_TRUE(map) << map.error().message;
  std::vector<symbols::PerfMap> maps;
  maps.push_back(std::move(*map));
  symbols::Symbolizer symbolizer(
      {{0x1000, 0x2000, 0x3000, "/nonexistent/libgone.so", false}, {0x10000, 0x20000, 0, "", false}, {0x30000, 0x31000, 0, "[vdso]", false}},
      std::move(maps));
  const symbols::Symbol& jit = symbolizer.resolve(0x10150);  // in anonymous memory
  EXPECT_EQ(jit.source, symbols::SymbolSource::perf_map);
  EXPECT_EQ(jit.function, "jit_kernel_a");
  EXPECT_EQ(jit.function_offset, 0x50u);
  EXPECT_EQ(jit.module, "perf-42.map");
  const symbols::Symbol& outside = symbolizer.resolve(0x50010);  // in no mapping
  EXPECT_EQ(outside.source, symbols::SymbolSource::perf_map);
  EXPECT_EQ(outside.function, "dnnl::impl::foo()");
  const symbols::Symbol& anonymous = symbolizer.resolve(0x10500);
  EXPECT_EQ(anonymous.source, symbols::SymbolSource::unknown);
  EXPECT_EQ(anonymous.module, "[anon]");
  EXPECT_EQ(symbols::symbol_label(anonymous), "[unknown] 0x10500");
  const symbols::Symbol& nowhere = symbolizer.resolve(0x99999);
  EXPECT_EQ(nowhere.source, symbols::SymbolSource::unknown);
  EXPECT_EQ(nowhere.module, "");
  EXPECT_EQ(symbols::symbol_label(nowhere), "[unknown] 0x99999");
  const symbols::Symbol& gone = symbolizer.resolve(0x1234);
  EXPECT_EQ(gone.source, symbols::SymbolSource::module_offset);
  EXPECT_EQ(gone.file_offset, 0x3234u);
  EXPECT_FALSE(gone.module_address.has_value());
  EXPECT_EQ(symbols::symbol_label(gone), "libgone.so+0x3234");
  EXPECT_EQ(symbols::symbol_label(symbolizer.resolve(0x30010)), "[vdso]+0x10");
  EXPECT_EQ(&symbolizer.resolve(0x1234), &gone);  // cached, and the reference stays
  EXPECT_EQ(symbolizer.cached_addresses(), 6u);
  const std::vector<std::string>& warnings = symbolizer.warnings();
  EXPECT_THAT(warnings, Contains(HasSubstr("perf-42.map: 1 line skipped")));
  if (symbols::elf_symbols_available()) {
    EXPECT_THAT(warnings, Contains("/nonexistent/libgone.so: cannot open it to read its symbols (No such file or directory); "
                                   "its addresses are shown as module+offset"));
  }
  symbolizer.resolve(0x1300);
  EXPECT_EQ(symbolizer.warnings().size(), warnings.size());  // once per module
}

TEST_F(SymbolizerTest, FilesThatAreNotWhatTheMappingSaysAreModuleOffsetWithoutWaiting) {
  const std::string fifo = path("libfifo.so");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = put("libtext.so", "not an ELF file\n");
  symbols::Symbolizer symbolizer({{0x1000, 0x2000, 0, fifo, false},
                                  {0x2000, 0x3000, 0, "/dev/zero", false},
                                  {0x3000, 0x4000, 0, text, false},
                                  {0x4000, 0x5000, 0, "/usr/lib/x86_64-linux-gnu/libc.so.6", true}});
  for (std::uint64_t address : {0x1010u, 0x2010u, 0x3010u, 0x4010u}) {
    EXPECT_EQ(symbolizer.resolve(address).source, symbols::SymbolSource::module_offset) << hex(address);
  }
  EXPECT_EQ(symbols::symbol_label(symbolizer.resolve(0x4010)), "libc.so.6+0x10");
  if (!symbols::elf_symbols_available()) return;
  EXPECT_THAT(symbolizer.warnings(), Contains(fifo + ": is not a regular file; its symbols are not read; its addresses are shown as module+offset"));
  EXPECT_THAT(symbolizer.warnings(), Contains(HasSubstr("/dev/zero: is not a regular file")));
  EXPECT_THAT(symbolizer.warnings(), Contains(HasSubstr(text + ": not an ELF file libdwfl can read")));
  EXPECT_THAT(symbolizer.warnings(), Contains("/usr/lib/x86_64-linux-gnu/libc.so.6: deleted or replaced since it was mapped; "
                                              "its addresses are shown as module+offset"));
}

TEST(Symbols, TheLaterOfTwoOverlappingMappingsHoldsTheirSharedAddresses) {
  symbols::Symbolizer symbolizer({{0x1000, 0x3000, 0, "/nonexistent/a.so", false}, {0x2000, 0x4000, 0, "/nonexistent/b.so", false}});
  EXPECT_EQ(symbolizer.resolve(0x1500).module, "a.so");
  EXPECT_EQ(symbolizer.resolve(0x2500).module, "b.so");
  EXPECT_EQ(*symbolizer.resolve(0x2500).file_offset, 0x500u);
}

// This process's own perf map file, removed afterwards.
class ProcessPerfMap : public ::testing::Test {
 protected:
  void TearDown() override { std::remove(path_.c_str()); }
  void write(const std::string& text) {
    FILE* f = std::fopen(path_.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  const std::string path_ = symbols::perf_map_path(::getpid());
};

TEST_F(ProcessPerfMap, AProcessPerfMapFileIsReadAndOneOverTheLimitIsAWarning) {
  write("7e0000001000 40 jit_process_kernel\nbad line\n");
  auto symbolizer = symbols::symbolizer_for_process(::getpid());
  ASSERT_TRUE(symbolizer) << symbolizer.error().message;
  const symbols::Symbol& jit = symbolizer->resolve(0x7e0000001010);
  EXPECT_EQ(jit.source, symbols::SymbolSource::perf_map);
  EXPECT_EQ(jit.function, "jit_process_kernel");
  EXPECT_THAT(symbolizer->warnings(), Contains(path_ + ": 1 line skipped, not \"START SIZE name\" with START and SIZE in hex (line 2)"));
  symbols::PerfMapLimits limits;
  limits.max_bytes = 10;
  auto limited = symbols::symbolizer_for_process(::getpid(), limits);
  ASSERT_TRUE(limited) << limited.error().message;
  EXPECT_EQ(limited->resolve(0x7e0000001010).source, symbols::SymbolSource::unknown);
  EXPECT_THAT(limited->warnings(), Contains(path_ + ": 44 bytes; a perf map file may have at most 10 bytes; JIT code is not named"));
}

}  // namespace
}  // namespace hwprof
