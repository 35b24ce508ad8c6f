// The counter family of a CPU, from the match files of the family folders (counters/README.md,
// "Which CPUs a family fits"). The folders are read afresh on each call (a few small files,
// read where a session opens or a command starts), so an edited file counts at once.
//
// Data that cannot answer is an error, never "generic": a CPU the data does not name is one
// hwprof has no tables for, not the same as data that is missing or broken.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/suggest.hpp"
#include "counters/cpu_match.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof {
namespace {

namespace fs = std::filesystem;
using counters::CpuMatch;

// Folders that hold groups for any CPU: CPUID never chooses them.
const std::set<std::string> kEveryCpuFolders = {"generic", "software"};

constexpr const char* kGenericNote =
    "no FLOP, DRAM or LLC event tables for this CPU: only the kernel's generic events (cycles, instructions, caches, "
    "branches) and software events; a group file with raw encodings (counters/README.md) can add more";

std::string looked_in(const std::vector<std::string>& dirs) {
  std::vector<std::string_view> names(dirs.begin(), dirs.end());
  return names.empty() ? std::string("no folder") : common::join(names);
}

bool has_group_files(const fs::path& folder) {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".txt") return true;
  }
  return false;
}

// family name → the folders of that name, in the order of `dirs`.
Result<std::map<std::string, std::vector<fs::path>>> family_folders(const std::vector<std::string>& dirs) {
  std::map<std::string, std::vector<fs::path>> folders;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      if (it->is_directory(type_ec)) folders[it->path().filename().string()].push_back(it->path());
    }
    if (ec) return Error{dir + ": cannot list the counter families (" + ec.message() + ")"};
  }
  return folders;
}

// The match file of one family: the first of its folders that has one.
Result<std::optional<CpuMatch>> family_match(const std::string& family, const std::vector<fs::path>& folders, const std::vector<std::string>& dirs) {
  for (const fs::path& folder : folders) {
    const fs::path file = folder / counters::kCpuMatchFileName;
    std::error_code ec;
    if (!fs::exists(file, ec)) continue;
    if (kEveryCpuFolders.count(family) != 0) {
      return Error{file.string() + ": " + family +
                   "/ holds groups for every CPU and is never chosen by CPUID; expected no match file here (remove it)"};
    }
    auto match = counters::load_cpu_match(file.string());
    if (!match) return match.error();
    return std::optional<CpuMatch>(std::move(*match));
  }
  if (kEveryCpuFolders.count(family) != 0) return std::optional<CpuMatch>();
  for (const fs::path& folder : folders) {
    if (has_group_files(folder)) {
      return Error{folder.string() + ": group files but no " + std::string(counters::kCpuMatchFileName) + ", here or in " + looked_in(dirs) +
                   ", so no CPU can choose them; expected a match file naming the family's CPUs (counters/README.md)"};
    }
  }
  return std::optional<CpuMatch>();  // an empty folder is no family
}

// Two families that name one CPU: the first such pair, by family name and line.
std::optional<std::string> overlap(const std::vector<std::pair<std::string, CpuMatch>>& matches) {
  for (std::size_t i = 0; i < matches.size(); ++i) {
    for (std::size_t j = i + 1; j < matches.size(); ++j) {
      for (const counters::CpuMatchRule& a : matches[i].second.rules) {
        for (const counters::CpuMatchRule& b : matches[j].second.rules) {
          const auto model = counters::first_shared_model(a, b);
          if (!model) continue;
          return matches[i].second.file + ":" + std::to_string(a.line) + " and " + matches[j].second.file + ":" + std::to_string(b.line) +
                 " both name " + a.vendor + " family " + counters::cpuid_hex(a.family) + " model " + counters::cpuid_hex(*model) + " (" +
                 matches[i].first + " and " + matches[j].first + "); a CPU has one counter family: expected their model ranges apart";
        }
      }
    }
  }
  return std::nullopt;
}

// Every family's match file, by family name.
Result<std::vector<std::pair<std::string, CpuMatch>>> all_matches(const std::vector<std::string>& dirs) {
  auto folders = family_folders(dirs);
  if (!folders) return folders.error();
  std::vector<std::pair<std::string, CpuMatch>> matches;
  for (const auto& [family, paths] : *folders) {
    auto match = family_match(family, paths, dirs);
    if (!match) return match.error();
    if (*match) matches.emplace_back(family, std::move(**match));
  }
  if (matches.empty()) {
    return Error{"no <family>/" + std::string(counters::kCpuMatchFileName) + " in any counters folder looked in (" + looked_in(dirs) +
                 "): hwprof's counters/ data is missing (installed as share/hwprof/counters under the prefix; "
                 "$HWPROF_COUNTERS_PATH names another folder)"};
  }
  if (auto problem = overlap(matches)) return Error{*problem};
  return matches;
}

}  // namespace

Result<CounterFamily> counter_family(const CpuIdentity& cpu, const std::vector<std::string>& counters_dirs) {
  auto matches = all_matches(counters_dirs);
  if (!matches) return matches.error();
  for (const auto& [family, match] : *matches) {
    if (counters::rule_naming(match, cpu) != nullptr) return CounterFamily{family, match.note, match.file};
  }
  return CounterFamily{"generic", kGenericNote, {}};
}

}  // namespace hwprof
