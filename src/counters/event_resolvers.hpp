// The pieces the three event resolvers share (event_resolver.cpp dispatches to them):
//   generic_events.cpp   the kernel's generic events, from a table of our own
//   sysfs_events.cpp     sysfs raw specs, "pmu/term=value,.../"
//   libpfm_events.cpp    everything else, through libpfm4
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "common/suggest.hpp"
#include "counters/event_resolver.hpp"

namespace hwprof::counters::resolver {

constexpr std::size_t kMaxListed = 8;

inline std::string in_quotes(std::string_view s) {
  return "'" + std::string(s) + "'";
}

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "a, b, c and 5 more"
inline std::string short_list(const std::vector<std::string>& items) {
  std::vector<std::string_view> shown(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), kMaxListed)));
  std::string out = join(shown);
  if (items.size() > kMaxListed) out += " and " + std::to_string(items.size() - kMaxListed) + " more";
  return out.empty() ? "none" : out;
}

// A trailing "u", "k", "uk" or "ku": whether to count the kernel too. User space always counts
// (ResolvedEvent has no exclude_user).
struct Levels {
  bool kernel = false;
  bool given = false;
};

inline std::optional<Levels> parse_levels(std::string_view modifiers) {
  if (modifiers != "u" && modifiers != "k" && modifiers != "uk" && modifiers != "ku") return std::nullopt;
  return Levels{modifiers.find('k') != std::string_view::npos, true};
}

// generic_events.cpp: the generic names (for suggestions), and a name's encoding; nullopt when
// `name` is not a generic event at all (an error when it is one with a bad modifier).
std::vector<std::string_view> generic_names();
std::optional<Result<ResolvedEvent>> resolve_generic(const std::string& name);

// sysfs_events.cpp: one sysfs line (trailing blanks removed), a decimal or 0x number, a
// folder's entries sorted; and a raw spec's encoding.
std::optional<std::string> read_line(const std::filesystem::path& path);
std::optional<std::uint64_t> parse_number(std::string_view text);
std::vector<std::string> list_names(const std::filesystem::path& dir);
Result<ResolvedEvent> resolve_raw_spec(const std::string& name, const std::filesystem::path& root);

// libpfm_events.cpp: a libpfm4 name's encoding, with `root` for the kernel's PMU types.
Result<ResolvedEvent> resolve_with_libpfm(const std::string& name, const std::filesystem::path& root);

}  // namespace hwprof::counters::resolver
