#include "symbols/elf_module.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(HWPROF_HAVE_LIBDW)
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include "common/stages.hpp"
#endif

namespace hwprof::symbols {

std::optional<std::uint64_t> module_address(const std::vector<ElfModule::Segment>& segments, std::uint64_t file_offset, std::uint64_t pgoff,
                                            std::uint64_t page_size) {
  // The kernel maps each PT_LOAD segment from the page its file offset falls in, so a page may
  // hold the end of one segment and the start of the next. Then the executable segment, and
  // of those the one the mapping itself began in (its pgoff), is the one the mapping holds.
  const auto holds = [&](const ElfModule::Segment& s, std::uint64_t offset) {
    const std::uint64_t first_page = s.offset - s.offset % page_size;
    return offset >= first_page && offset < s.offset + s.file_size;
  };
  const ElfModule::Segment* found = nullptr;
  int best = -1;
  for (const ElfModule::Segment& s : segments) {
    if (!holds(s, file_offset)) continue;
    const int score = (s.executable ? 2 : 0) + (holds(s, pgoff) ? 1 : 0);
    if (score > best) {
      found = &s;
      best = score;
    }
  }
  if (found == nullptr) return std::nullopt;
  return found->vaddr - found->offset + file_offset;  // modulo 2^64: the head page lies before vaddr
}

std::vector<ElfModule::FunctionSymbol> function_table(std::vector<RawFunction> raw) {
  std::sort(raw.begin(), raw.end(), [](const RawFunction& a, const RawFunction& b) {
    if (a.start != b.start) return a.start < b.start;
    if ((a.size > 0) != (b.size > 0)) return a.size > 0;
    if (a.binding != b.binding) return a.binding < b.binding;
    return std::strcmp(a.name, b.name) < 0;
  });
  std::vector<ElfModule::FunctionSymbol> table;
  table.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && raw[i].start == raw[i - 1].start) continue;  // an alias, less preferred
    std::uint64_t end = raw[i].start + raw[i].size;
    if (raw[i].size == 0) {
      std::size_t next = i + 1;
      while (next < raw.size() && raw[next].start == raw[i].start) ++next;
      end = next < raw.size() ? std::min(raw[next].start, raw[i].section_end) : raw[i].section_end;
    }
    if (end > raw[i].start) table.push_back(ElfModule::FunctionSymbol{raw[i].start, end, raw[i].name});
  }
  return table;
}

#if defined(HWPROF_HAVE_LIBDW)

namespace {

// A descriptor of `path` for reading where it is a regular file; else -1, and why in `why`.
int open_regular(const char* path, std::string* why = nullptr) {
  // O_NONBLOCK: a FIFO at the path opens at once instead of waiting for a writer.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (why != nullptr) *why = std::string("cannot open it to read its symbols (") + std::strerror(errno) + ")";
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    if (why != nullptr) *why = "is not a regular file; its symbols are not read";
    return -1;
  }
  return fd;
}

// The main file is always given (dwfl_report_elf): nothing to find.
int no_elf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}

// A separate debug file only where a debug package installs it by build ID,
// /usr/lib/debug/.build-id/NN/NNNN....debug (Debian's -dbgsym packages), opened like every file
// here. Not elfutils' standard search: it would follow .gnu_debuglink into the mapped file's own
// folder (where anything may lie under that name, a FIFO included, opened blocking) and ask
// debuginfod servers where DEBUGINFOD_URLS is set; naming a profile waits on neither.
int debug_file_by_build_id(Dwfl_Module* module, void**, const char*, Dwarf_Addr, const char*, const char*, GElf_Word, char** found) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int length = dwfl_module_build_id(module, &bits, &vaddr);
  if (length < 2 || bits == nullptr) return -1;
  std::string path = "/usr/lib/debug/.build-id/";
  char digits[3];
  for (int i = 0; i < length; ++i) {
    std::snprintf(digits, sizeof digits, "%02x", bits[i]);
    path += digits;
    if (i == 0) path += '/';
  }
  path += ".debug";
  const int fd = open_regular(path.c_str());
  if (fd >= 0 && found != nullptr) *found = ::strdup(path.c_str());  // libdwfl frees it
  return fd;
}

const Dwfl_Callbacks* callbacks() {
  static char* debuginfo_path = nullptr;
  static const Dwfl_Callbacks callbacks = {
      .find_elf = no_elf,
      .find_debuginfo = debug_file_by_build_id,
      .section_address = dwfl_offline_section_address,
      .debuginfo_path = &debuginfo_path,
  };
  return &callbacks;
}

std::string dwfl_problem() {
  const char* message = dwfl_errmsg(-1);
  return message != nullptr ? message : "unknown libdwfl error";
}

// The end of section `index` of `elf`, in the module's addresses.
std::uint64_t section_end(Elf* elf, GElf_Word index, Dwarf_Addr bias) {
  GElf_Shdr header_memory;
  Elf_Scn* section = elf != nullptr ? elf_getscn(elf, index) : nullptr;
  const GElf_Shdr* header = section != nullptr ? gelf_getshdr(section, &header_memory) : nullptr;
  return header != nullptr ? header->sh_addr + header->sh_size + bias : 0;
}

// The module's function symbols: its .symtab, else a local debug file's, else its .dynsym
// (libdwfl chooses), with MiniDebugInfo (.gnu_debugdata) where the file has it.
std::vector<RawFunction> raw_functions(Dwfl_Module* module) {
  std::vector<RawFunction> raw;
  const int count = dwfl_module_getsymtab(module);
  for (int i = 1; i < count; ++i) {
    GElf_Sym symbol{};
    GElf_Addr address = 0;
    GElf_Word section = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(module, i, &symbol, &address, &section, &elf, &bias);
    const int type = GELF_ST_TYPE(symbol.st_info);
    if (name == nullptr || *name == '\0' || (type != STT_FUNC && type != STT_GNU_IFUNC)) continue;
    if (section == SHN_UNDEF || section == SHN_ABS || section == static_cast<GElf_Word>(-1)) continue;  // imports, constants
    const int binding = GELF_ST_BIND(symbol.st_info) == STB_GLOBAL ? 0 : GELF_ST_BIND(symbol.st_info) == STB_WEAK ? 1 : 2;
    raw.push_back(RawFunction{address, symbol.st_size, symbol.st_size == 0 ? section_end(elf, section, bias) : 0, binding, name});
  }
  return raw;
}

}  // namespace

struct ElfModule::Handle {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;
  ~Handle() {
    if (dwfl != nullptr) dwfl_end(dwfl);  // closes the file too
  }
};

bool elf_symbols_available() {
  return true;
}

Result<std::unique_ptr<ElfModule>> ElfModule::open(const std::string& path) {
  std::string why;
  const int fd = open_regular(path.c_str(), &why);
  if (fd < 0) return Error{path + ": " + why};
  auto handle = std::make_unique<Handle>();
  handle->dwfl = dwfl_begin(callbacks());
  if (handle->dwfl == nullptr) {
    ::close(fd);
    return Error{path + ": libdwfl could not start (" + dwfl_problem() + ")"};
  }
  dwfl_report_begin(handle->dwfl);
  // Base 0 with add_p_vaddr: the module sits at its own addresses (load bias 0). On success
  // libdwfl owns the descriptor and closes it at dwfl_end.
  handle->module = dwfl_report_elf(handle->dwfl, path.c_str(), path.c_str(), fd, 0, true);
  if (handle->module == nullptr) {
    ::close(fd);
    return Error{path + ": not an ELF file libdwfl can read (" + dwfl_problem() + ")"};
  }
  if (dwfl_report_end(handle->dwfl, nullptr, nullptr) != 0) return Error{path + ": libdwfl refused it (" + dwfl_problem() + ")"};
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(handle->module, &bias);
  GElf_Ehdr header_memory;
  const GElf_Ehdr* header = elf != nullptr ? gelf_getehdr(elf, &header_memory) : nullptr;
  if (header == nullptr || (header->e_type != ET_EXEC && header->e_type != ET_DYN)) {
    return Error{path + ": not an ELF executable or shared library"};
  }
  std::size_t count = 0;
  if (elf_getphdrnum(elf, &count) != 0) return Error{path + ": its program headers cannot be read"};
  std::vector<Segment> segments;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr_memory;
    const GElf_Phdr* phdr = gelf_getphdr(elf, static_cast<int>(i), &phdr_memory);
    if (phdr != nullptr && phdr->p_type == PT_LOAD) {
      segments.push_back(Segment{phdr->p_offset, phdr->p_filesz, phdr->p_vaddr, (phdr->p_flags & PF_X) != 0});
    }
  }
  std::vector<FunctionSymbol> functions = function_table(raw_functions(handle->module));
  return std::unique_ptr<ElfModule>(new ElfModule(std::move(handle), std::move(segments), std::move(functions)));
}

#else  // built without libdw

struct ElfModule::Handle {};

bool elf_symbols_available() {
  return false;
}

Result<std::unique_ptr<ElfModule>> ElfModule::open(const std::string& path) {
  return Error{path + ": " + std::string(kWithoutLibdw)};
}

#endif

ElfModule::ElfModule(std::unique_ptr<Handle> handle, std::vector<Segment> segments, std::vector<FunctionSymbol> functions)
    : handle_(std::move(handle)), segments_(std::move(segments)), functions_(std::move(functions)) {
  // Where one symbol lies inside another (a local label typed as a function), the inner one,
  // the later in the table, names its addresses and the outer one the rest.
  std::vector<AddressRange> ranges;
  ranges.reserve(functions_.size());
  for (std::size_t i = 0; i < functions_.size(); ++i) {
    ranges.push_back(AddressRange{functions_[i].start, functions_[i].end, static_cast<std::uint32_t>(i)});
  }
  pieces_ = latest_wins(ranges);
}

ElfModule::~ElfModule() = default;

std::optional<ElfFunction> ElfModule::function_at(std::uint64_t address) const {
  const AddressRange* piece = find_range(pieces_, address);
  if (piece == nullptr) return std::nullopt;
  const FunctionSymbol& function = functions_[piece->index];
  return ElfFunction{function.name, function.start};
}

std::optional<std::uint64_t> ElfModule::address_of(std::uint64_t file_offset, std::uint64_t pgoff) const {
  static const std::uint64_t page_size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return module_address(segments_, file_offset, pgoff, page_size);
}

}  // namespace hwprof::symbols
