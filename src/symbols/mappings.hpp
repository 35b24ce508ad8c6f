// The executable mappings of a process: where each file's code lies in its address space, as
// /proc/PID/maps lists it or a PERF_RECORD_MMAP2 record gives it. The symbolizer
// (symbols/symbols.hpp) finds the module of a sampled address through them
// (docs/sampling.md, "Symbols").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/result.hpp"

namespace hwprof::symbols {

// One executable mapping: the addresses [start, end) hold the file `path` from the file offset
// `pgoff` on. `path` is empty for anonymous memory (JIT code), a name in brackets for the
// kernel's own ("[vdso]", "[vsyscall]"), and otherwise the file as the kernel named it when it
// was mapped; `deleted` says that the file was removed or replaced since (the kernel's
// " (deleted)" suffix, taken off `path`), so that the file now at `path` is not the one mapped.
struct Mapping {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t pgoff = 0;
  std::string path;
  bool deleted = false;
};

// The executable mappings ('x' in the permissions) of a /proc/PID/maps text, in its order; the
// others are left out. `source` names the text in messages ("/proc/123/maps"). A line that is
// not "START-END PERMS OFFSET DEV INODE [PATH]" is an error naming `source` and the line.
Result<std::vector<Mapping>> parse_proc_maps(std::string_view text, std::string_view source);

// /proc/PID/maps of a live process, parsed as above (at most kMaxProcMapsBytes of it).
inline constexpr std::size_t kMaxProcMapsBytes = std::size_t{64} << 20;
Result<std::vector<Mapping>> read_proc_maps(int pid);

// Whether a mapping holds no file to read symbols from: anonymous memory, or a name in brackets
// other than the kernel's code pages ("[heap]", "[anon:...]"), or memory a program named
// itself ("/memfd:...", "//anon"). JIT code lives there, and perf map files name it.
bool is_anonymous(const Mapping& mapping);

// The file name of a mapping's path ("libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6");
// a bracketed name or an empty path as it is.
std::string module_name(std::string_view path);

}  // namespace hwprof::symbols
