// Perf map files: the names a JIT gives the code it generates, one "START SIZE name" line per
// function (START and SIZE in hex, with or without 0x), in /tmp/perf-PID.map. Linux perf reads
// them (its tools/perf/Documentation/jit-interface.txt); oneDNN writes them when
// ONEDNN_JIT_PROFILE asks for it. The symbolizer names addresses in anonymous memory through
// them (docs/sampling.md, "Symbols"). The file is another program's output: it is read with
// limits, and a bad line is skipped and counted, never a reason to give up the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"
#include "symbols/address_ranges.hpp"

namespace hwprof::symbols {

struct PerfMapLimits {
  std::size_t max_bytes = std::size_t{256} << 20;      // a larger file is refused before it is read
  std::size_t max_entries = std::size_t{4} << 20;      // a file with more entries is refused
  std::size_t max_line_bytes = std::size_t{64} << 10;  // a longer line is skipped as garbage
};

struct PerfMapEntry {
  std::uint64_t start = 0;
  std::uint64_t size = 0;
  std::string name;
  std::size_t line = 0;  // 1-based, in the file
};

// A perf map file read and checked. `entries` are the good lines, in the file's order;
// `pieces` cover each address by at most one entry: where entries overlap, the later line
// wins (a JIT reuses the memory of code it freed, and the later entry is the code there now).
struct PerfMap {
  std::string path;
  std::vector<PerfMapEntry> entries;
  std::vector<AddressRange> pieces;        // index: into `entries`
  std::size_t skipped_lines = 0;           // not "START SIZE name"
  std::vector<std::size_t> first_skipped;  // their line numbers, the first kReportedLines of them
  std::size_t zero_size_entries = 0;       // "START 0 name": name no address, ignored
  std::size_t overlapping_entries = 0;     // entries that share addresses with another

  // What a user should hear about the file (skipped lines with their numbers, ignored and
  // overlapping entries), one message each, starting with the path; empty for a clean file.
  std::vector<std::string> warnings() const;
};

inline constexpr std::size_t kReportedLines = 5;

// The entry naming `address`, or nullptr.
const PerfMapEntry* find_entry(const PerfMap& map, std::uint64_t address);

// `text` as the perf map file `path` (which names it in messages). An error only when the
// text holds more entries than the limit allows.
Result<PerfMap> parse_perf_map(std::string_view text, const std::string& path, const PerfMapLimits& limits = {});

// The file at `path`: a regular file only (a FIFO, a device such as /dev/zero or a directory
// is refused by name without reading it), at most limits.max_bytes of it; then parsed as above.
// A missing file is an error too: the caller decides whether a process without one matters.
Result<PerfMap> read_perf_map(const std::string& path, const PerfMapLimits& limits = {});

// Where a process's JIT writes its perf map file: /tmp/perf-PID.map.
std::string perf_map_path(int pid);

}  // namespace hwprof::symbols
