#include "symbols/recorded_mappings.hpp"

#include <limits>

#include <sys/mman.h>
#include "common/stages.hpp"

namespace hwprof::symbols {
namespace {

// A process's parent where `store` saw it forked (a new process, not a thread), and when.
struct ForkedFrom {
  std::uint32_t parent = 0;
  std::uint64_t time_ns = 0;
};

ForkedFrom recorded_parent(const SampleStore& store, std::uint32_t pid) {
  for (const TaskRecord& t : store.tasks) {
    if (!t.exit && t.pid == pid && t.tid == pid && t.ppid != pid) return {t.ppid, t.time_ns};
  }
  return {};
}

// Up to `before` (ns): the inherited ones of `pid`'s forebears first, then its own. `depth`
// bounds the walk up the forks (records that name a cycle are input, not a promise).
void add_recorded_mappings(const SampleStore& store, std::uint32_t pid, std::uint64_t before, int depth, std::vector<Mapping>& out) {
  if (depth > 64) return;
  const ForkedFrom parent = recorded_parent(store, pid);
  if (parent.parent != 0 && parent.parent != pid) add_recorded_mappings(store, parent.parent, parent.time_ns, depth + 1, out);
  for (const MappingRecord& m : store.mappings) {
    if (m.pid != pid || m.time_ns > before || m.length == 0) continue;
    if (m.prot != 0 && (m.prot & PROT_EXEC) == 0) continue;  // MMAP (no prot) sends executable mappings only
    Mapping mapping;
    mapping.start = m.address;
    mapping.end = m.address + m.length < m.address ? std::numeric_limits<std::uint64_t>::max() : m.address + m.length;
    mapping.pgoff = m.file_offset;
    mapping.path = m.filename.rfind("//anon", 0) == 0 ? std::string() : m.filename;
    out.push_back(std::move(mapping));
  }
}

}  // namespace

std::vector<Mapping> recorded_mappings(const SampleStore& store, std::uint32_t pid) {
  std::vector<Mapping> out;
  add_recorded_mappings(store, pid, std::numeric_limits<std::uint64_t>::max(), 0, out);
  return out;
}

}  // namespace hwprof::symbols
