// What naming a profile's call chains costs: 100,000 samples of 100 frames each (10 million
// frame addresses) drawn from 50,000 distinct addresses in this process's own code (the
// benchmark, hwprof, libc, libstdc++, OpenBLAS: every executable file it maps), named by the
// symbolizer (src/symbols/symbols.hpp; docs/sampling.md, "Symbols"). The goal: well under 2 s.
// Frames are drawn uniformly, so the per-address cache is hit with no locality: real call
// chains repeat far more.
//
// Printed: the time to read the mappings, the first pass (the 50,000 distinct addresses named
// once each, the rest from the cache), a second pass (all from the cache), and two peers
// measured in the same run: the same 10 million lookups in a bare hash map of addresses (the
// floor of any per-address cache) and glibc's dladdr on the 50,000 distinct addresses (.dynsym
// only) beside a fresh symbolizer naming the same; and per module, how many of the distinct
// addresses were named (the rest are in code its symbol tables do not cover: stripped).
//   hwprof_symbols_bench [SAMPLES=100000] [FRAMES=100] [DISTINCT=50000]
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbols/symbols.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `count` distinct addresses spread over the code of the executable file mappings, each
// mapping's share by its size.
std::vector<std::uint64_t> code_addresses(const std::vector<hwprof::symbols::Mapping>& mappings, std::size_t count, std::mt19937_64& rng) {
  std::vector<const hwprof::symbols::Mapping*> files;
  std::uint64_t total = 0;
  for (const auto& m : mappings) {
    if (hwprof::symbols::is_anonymous(m) || m.path.front() == '[') continue;
    files.push_back(&m);
    total += m.end - m.start;
  }
  std::unordered_map<std::uint64_t, bool> seen;
  std::vector<std::uint64_t> out;
  std::uniform_int_distribution<std::uint64_t> pick(0, total - 1);
  while (out.size() < count && total > 0) {
    std::uint64_t at = pick(rng);
    for (const auto* m : files) {
      if (at < m->end - m->start) {
        const std::uint64_t address = m->start + at;
        if (seen.emplace(address, true).second) out.push_back(address);
        break;
      }
      at -= m->end - m->start;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t samples = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
  const std::size_t frames = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100;
  const std::size_t distinct = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 50000;
  if (samples == 0 || frames == 0 || distinct == 0) {
    std::fprintf(stderr, "usage: %s [SAMPLES>0] [FRAMES>0] [DISTINCT>0]\n", argv[0]);
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  auto made = hwprof::symbols::symbolizer_for_process(::getpid());
  if (!made) {
    std::fprintf(stderr, "%s\n", made.error().message.c_str());
    return 1;
  }
  hwprof::symbols::Symbolizer symbolizer = std::move(*made);
  const double setup = seconds_since(start);
  auto mappings = hwprof::symbols::read_proc_maps(::getpid());
  if (!mappings) return 1;
  std::mt19937_64 rng(42);
  const std::vector<std::uint64_t> addresses = code_addresses(*mappings, distinct, rng);
  std::vector<std::uint64_t> chain(samples * frames);
  std::uniform_int_distribution<std::size_t> which(0, addresses.size() - 1);
  for (std::uint64_t& frame : chain) frame = addresses[which(rng)];

  std::size_t by_source[4] = {};
  start = std::chrono::steady_clock::now();
  for (std::uint64_t frame : chain) ++by_source[static_cast<int>(symbolizer.resolve(frame).source)];
  const double first = seconds_since(start);
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_module;  // distinct addresses: named, module+offset
  for (std::uint64_t address : addresses) {
    const hwprof::symbols::Symbol& symbol = symbolizer.resolve(address);
    auto& counts = by_module[symbol.module];
    ++(symbol.source == hwprof::symbols::SymbolSource::elf_symbol ? counts.first : counts.second);
  }
  std::size_t check = 0;
  start = std::chrono::steady_clock::now();
  for (std::uint64_t frame : chain) check += symbolizer.resolve(frame).function.size();
  const double second = seconds_since(start);

  // Peer 1: the same lookups in a bare hash map from address to a small number.
  std::unordered_map<std::uint64_t, std::uint32_t> bare;
  for (std::size_t i = 0; i < addresses.size(); ++i) bare.emplace(addresses[i], static_cast<std::uint32_t>(i));
  start = std::chrono::steady_clock::now();
  for (std::uint64_t frame : chain) check += bare.find(frame)->second;
  const double floor = seconds_since(start);

  // Peer 2: naming each distinct address once, dladdr against a fresh symbolizer.
  start = std::chrono::steady_clock::now();
  for (std::uint64_t address : addresses) {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_sname != nullptr) ++check;
  }
  const double dladdr_time = seconds_since(start);
  auto fresh = hwprof::symbols::symbolizer_for_process(::getpid());
  if (!fresh) return 1;
  start = std::chrono::steady_clock::now();
  for (std::uint64_t address : addresses) check += fresh->resolve(address).function.size();
  const double cold = seconds_since(start);

  const std::size_t total = chain.size();
  std::printf("symbolizer: %zu samples x %zu frames = %zu frame addresses, %zu distinct, over %zu executable mappings\n", samples, frames, total,
              addresses.size(), mappings->size());
  std::printf("  read the mappings:                 %8.4f s\n", setup);
  std::printf("  first pass (distinct named once):  %8.4f s  (%.1f ns per frame)\n", first, 1e9 * first / static_cast<double>(total));
  std::printf("  second pass (all cached):          %8.4f s  (%.1f ns per frame; %.2fx a bare hash map's %.4f s)\n", second,
              1e9 * second / static_cast<double>(total), second / floor, floor);
  std::printf("  distinct addresses named cold:     %8.4f s  (%.2f us each; %.2fx glibc dladdr's %.4f s, which reads .dynsym only)\n", cold,
              1e6 * cold / static_cast<double>(addresses.size()), cold / dladdr_time, dladdr_time);
  std::printf("  frames by source: elf_symbol %zu, perf_map %zu, module_offset %zu, unknown %zu\n", by_source[0], by_source[1], by_source[2],
              by_source[3]);
  for (const auto& [module, counts] : by_module) {
    std::printf("    %-34s %6zu distinct addresses named, %6zu module+offset\n", module.c_str(), counts.first, counts.second);
  }
  for (const std::string& warning : symbolizer.warnings()) std::printf("  warning: %s\n", warning.c_str());
  std::printf("  (checksum %zu)\n", check);
  return 0;
}
