#include "symbols/symbols.hpp"

#include <cxxabi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "common/stages.hpp"
#include "symbols/address_ranges.hpp"
#include "symbols/elf_module.hpp"

namespace hwprof::symbols {
namespace {

// Names longer than this are shown raw: a perf map file is another program's output, and a
// name of many kilobytes is no C++ symbol anyone needs demangled.
constexpr std::size_t kMaxDemangledInput = std::size_t{16} << 10;

std::string demangle(const char* raw, std::size_t length) {
  if (length < 2 || raw[0] != '_' || raw[1] != 'Z' || length > kMaxDemangledInput) return std::string(raw, length);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(raw, nullptr, nullptr, &status), &std::free);
  return status == 0 && out != nullptr ? std::string(out.get()) : std::string(raw, length);
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

// One mapped file: opened at most once, whatever the number of its mappings; its functions'
// demangled names by their start.
struct SymbolizerModule {
  std::unique_ptr<ElfModule> elf;  // null: not an ELF file we could read
  std::unordered_map<std::uint64_t, std::string> names;

  const std::string& name_of(const ElfFunction& function) {
    auto [it, inserted] = names.try_emplace(function.start);
    if (inserted) it->second = demangle(function.name.data(), function.name.size());
    return it->second;
  }
};

std::string symbol_label(const Symbol& symbol) {
  switch (symbol.source) {
    case SymbolSource::elf_symbol:
    case SymbolSource::perf_map:
      return symbol.function;
    case SymbolSource::module_offset:  // the module's own address where its ELF file says it, else the file offset
      if (const std::optional<std::uint64_t> at = symbol.module_address ? symbol.module_address : symbol.file_offset)
        return symbol.module + "+" + hex(*at);
      break;
    case SymbolSource::unknown:
      break;
  }
  return "[unknown] " + hex(symbol.address);
}

struct Symbolizer::State {
  std::vector<Mapping> mappings;
  std::vector<AddressRange> pieces;  // index: into `mappings`
  std::vector<PerfMap> perf_maps;
  std::vector<SymbolizerModule*> slot_of_mapping;           // null until the mapping's first address
  std::unordered_map<std::string, SymbolizerModule> slots;  // by path: references stay valid as it grows
  std::unordered_map<std::uint64_t, Symbol> cache;
  std::vector<std::string> warnings;

  SymbolizerModule& slot_for(std::uint32_t mapping_index);
  bool from_perf_map(Symbol& symbol) const;
  void from_mapping(Symbol& symbol, std::uint32_t mapping_index);
  Symbol compute(std::uint64_t address);
};

SymbolizerModule& Symbolizer::State::slot_for(std::uint32_t mapping_index) {
  if (SymbolizerModule* known = slot_of_mapping[mapping_index]) return *known;
  const Mapping& mapping = mappings[mapping_index];
  // A deleted file is shown by module+offset: the file now at its path (if any) is another one.
  const std::string key = mapping.deleted ? mapping.path + " (deleted)" : mapping.path;
  auto [it, inserted] = slots.try_emplace(key);
  SymbolizerModule& slot = it->second;
  slot_of_mapping[mapping_index] = &slot;
  if (!inserted || mapping.path.front() == '[') return slot;  // "[vdso]": no file to read
  if (mapping.deleted) {
    warnings.push_back(mapping.path + ": deleted or replaced since it was mapped; its addresses are shown as module+offset");
  } else if (elf_symbols_available()) {
    auto opened = ElfModule::open(mapping.path);
    if (opened) {
      slot.elf = std::move(*opened);
    } else {
      warnings.push_back(opened.error().message + "; its addresses are shown as module+offset");
    }
  }
  return slot;
}

bool Symbolizer::State::from_perf_map(Symbol& symbol) const {
  for (const PerfMap& map : perf_maps) {
    const PerfMapEntry* entry = find_entry(map, symbol.address);
    if (entry == nullptr) continue;
    symbol.source = SymbolSource::perf_map;
    symbol.function = demangle(entry->name.c_str(), entry->name.size());
    symbol.function_offset = symbol.address - entry->start;
    symbol.module = module_name(map.path);
    return true;
  }
  return false;
}

void Symbolizer::State::from_mapping(Symbol& symbol, std::uint32_t mapping_index) {
  const Mapping& mapping = mappings[mapping_index];
  symbol.source = SymbolSource::module_offset;
  symbol.module = module_name(mapping.path);
  symbol.file_offset = symbol.address - mapping.start + mapping.pgoff;
  SymbolizerModule& slot = slot_for(mapping_index);
  if (slot.elf == nullptr) return;
  symbol.module_address = slot.elf->address_of(*symbol.file_offset, mapping.pgoff);
  if (!symbol.module_address) return;
  const auto function = slot.elf->function_at(*symbol.module_address);
  if (!function) return;
  symbol.source = SymbolSource::elf_symbol;
  symbol.function = slot.name_of(*function);
  symbol.function_offset = *symbol.module_address - function->start;
}

Symbol Symbolizer::State::compute(std::uint64_t address) {
  Symbol symbol;
  symbol.address = address;
  const AddressRange* piece = find_range(pieces, address);
  if (piece != nullptr && !is_anonymous(mappings[piece->index])) {
    from_mapping(symbol, piece->index);
    return symbol;
  }
  if (from_perf_map(symbol)) return symbol;
  if (piece != nullptr) symbol.module = mappings[piece->index].path.empty() ? "[anon]" : module_name(mappings[piece->index].path);
  return symbol;
}

Symbolizer::Symbolizer(std::vector<Mapping> mappings, std::vector<PerfMap> perf_maps) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.mappings = std::move(mappings);
  s.perf_maps = std::move(perf_maps);
  std::vector<AddressRange> ranges;
  ranges.reserve(s.mappings.size());
  for (std::size_t i = 0; i < s.mappings.size(); ++i) {
    ranges.push_back(AddressRange{s.mappings[i].start, s.mappings[i].end, static_cast<std::uint32_t>(i)});
  }
  s.pieces = latest_wins(ranges);
  s.slot_of_mapping.assign(s.mappings.size(), nullptr);
  if (!elf_symbols_available()) s.warnings.push_back(std::string(kWithoutLibdw) + "; every address in a file is shown as module+offset");
  for (const PerfMap& map : s.perf_maps) {
    for (std::string& warning : map.warnings()) s.warnings.push_back(std::move(warning));
  }
}

Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;
Symbolizer::~Symbolizer() = default;

const Symbol& Symbolizer::resolve(std::uint64_t address) {
  auto found = state_->cache.find(address);
  if (found != state_->cache.end()) return found->second;
  return state_->cache.emplace(address, state_->compute(address)).first->second;
}

const std::vector<std::string>& Symbolizer::warnings() const {
  return state_->warnings;
}

void Symbolizer::warn(std::string message) {
  state_->warnings.push_back(std::move(message));
}

std::size_t Symbolizer::cached_addresses() const {
  return state_->cache.size();
}

namespace {

// The perf map file of `pid`, where it has one and it can be believed; what is wrong with it
// goes to `symbolizer.warn` by the caller. /tmp is everyone's, and the file is written by the
// process itself: one owned by neither its user (`process_uid`, where known), nor ours, nor root
// is not believed (Linux perf reads only files of its own user or root).
std::vector<PerfMap> believed_perf_map(int pid, std::optional<uid_t> process_uid, const PerfMapLimits& limits, std::vector<std::string>& warnings) {
  std::vector<PerfMap> maps;
  const std::string path = perf_map_path(pid);
  struct stat file {};
  if (::stat(path.c_str(), &file) != 0) {
    const int error = errno;
    if (error != ENOENT) warnings.push_back(path + ": cannot be read (" + std::strerror(error) + "); JIT code is not named");
    return maps;
  }
  const bool owned = process_uid && file.st_uid == *process_uid;
  if (!owned && file.st_uid != ::geteuid() && file.st_uid != 0) {
    warnings.push_back(path + ": owned by user " + std::to_string(file.st_uid) +
                       ", neither the process's nor hwprof's nor root; not read, JIT code is not named");
    return maps;
  }
  auto map = read_perf_map(path, limits);
  if (!map) {
    warnings.push_back(map.error().message + "; JIT code is not named");
    return maps;
  }
  maps.push_back(std::move(*map));
  return maps;
}

Symbolizer symbolizer_with_perf_map(int pid, std::vector<Mapping> mappings, std::optional<uid_t> process_uid, const PerfMapLimits& limits) {
  std::vector<std::string> warnings;
  std::vector<PerfMap> maps = believed_perf_map(pid, process_uid, limits, warnings);
  Symbolizer symbolizer(std::move(mappings), std::move(maps));
  for (std::string& w : warnings) symbolizer.warn(std::move(w));
  return symbolizer;
}

}  // namespace

Result<Symbolizer> symbolizer_for_process(int pid, const PerfMapLimits& limits) {
  auto mappings = read_proc_maps(pid);
  if (!mappings) return mappings.error();
  struct stat process {};
  const bool alive = ::stat(("/proc/" + std::to_string(pid)).c_str(), &process) == 0;
  return symbolizer_with_perf_map(pid, std::move(*mappings), alive ? std::optional<uid_t>(process.st_uid) : std::nullopt, limits);
}

Symbolizer symbolizer_for_exited_process(int pid, std::vector<Mapping> mappings, const PerfMapLimits& limits) {
  return symbolizer_with_perf_map(pid, std::move(mappings), std::nullopt, limits);
}

}  // namespace hwprof::symbols
