#include "common/launch_rank.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/printable.hpp"

namespace hwprof::common {
namespace {

// A plain non-negative integer below 2^30, or -1.
int parse_count(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value >= (1L << 30)) return -1;
  return static_cast<int>(value);
}

// A launcher variable's value as it can be shown on a line: quoted, at most 62 characters,
// control characters escaped.
std::string printable(const char* value) {
  const std::string_view text(value);
  return "'" + printable_name(text.substr(0, 62)) + (text.size() > 62 ? "...'" : "'");
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
  LaunchRank out;
  const auto unusable = [&](const char* name, const char* value, const char* why) {
    out.problems.push_back(std::string(name) + "=" + printable(value) + " " + why);
  };
  for (const Source& s : kSources) {
    const char* rank_text = get(s.rank);
    const char* size_text = get(s.size);
    const bool size_set = size_text != nullptr && *size_text != '\0';
    if (rank_text == nullptr || *rank_text == '\0') continue;
    if (s.size_required && !size_set) continue;  // RANK alone: not a launcher's
    const int rank = parse_count(rank_text);
    const int size = size_set ? parse_count(size_text) : 0;
    if (rank < 0) {
      unusable(s.rank, rank_text, "is not a rank (a whole number from 0 to 2^30 - 1): not used");
    } else if (size_set && size <= 0) {
      unusable(s.size, size_text, "is not a number of ranks (a whole number from 1 to 2^30 - 1): not used");
    } else if (size_set && rank >= size) {
      unusable(s.rank, rank_text, ("is not below " + std::string(s.size) + "=" + printable(size_text) + ": not used").c_str());
    } else {
      out.rank = rank;
      out.size = size;
      out.variable = s.rank;
      return out;
    }
  }
  return out;
}

std::string rank_folder(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d", rank);
  return name;
}

}  // namespace hwprof::common
