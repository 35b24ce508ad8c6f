#include "common/launch_rank.hpp"

#include <cstdio>
#include <cstdlib>

namespace hwprof::detail {
namespace {

// A plain non-negative integer below 2^30, or -1.
int parse_count(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value >= (1L << 30)) return -1;
  return static_cast<int>(value);
}

}  // namespace

LaunchRank launch_rank(const std::function<const char*(const char*)>& getenv_fn) {
  const auto get = [&](const char* name) -> const char* { return getenv_fn ? getenv_fn(name) : std::getenv(name); };
  struct Source {
    const char* rank;
    const char* size;
    bool size_required;
  };
  constexpr Source kSources[] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", false},
                                 {"PMIX_RANK", "PMIX_SIZE", false},
                                 {"PMI_RANK", "PMI_SIZE", false},
                                 {"SLURM_PROCID", "SLURM_NTASKS", false},
                                 {"RANK", "WORLD_SIZE", true}};
  for (const Source& s : kSources) {
    const int rank = parse_count(get(s.rank));
    if (rank < 0) continue;
    const int size = parse_count(get(s.size));
    if (s.size_required && size <= 0) continue;
    if (size > 0 && rank >= size) continue;  // inconsistent: not a launch we understand
    return {rank, size > 0 ? size : 0, s.rank};
  }
  return {};
}

std::string rank_folder(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d", rank);
  return name;
}

}  // namespace hwprof::detail
