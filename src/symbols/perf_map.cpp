#include "symbols/perf_map.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <system_error>

#include "common/input_file.hpp"
#include "common/stages.hpp"

namespace hwprof::symbols {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

std::string_view skip_blanks(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  return text;
}

// A hex number, with or without 0x, up to the next blank; moves past it.
std::optional<std::uint64_t> take_hex(std::string_view& text) {
  std::size_t length = 0;
  while (length < text.size() && !is_blank(text[length])) ++length;
  std::string_view digits = text.substr(0, length);
  text.remove_prefix(length);
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  std::uint64_t value = 0;
  if (digits.empty()) return std::nullopt;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

// A name holds no control character: a NUL or an escape in a "name" is binary data, not a JIT's
// output (a tab is kept: some JITs put one in a signature).
bool printable_name(std::string_view name) {
  return !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// One line, "START SIZE name"; nullopt for anything else.
std::optional<PerfMapEntry> parse_entry(std::string_view line, std::size_t line_number) {
  while (!line.empty() && (line.back() == '\r' || is_blank(line.back()))) line.remove_suffix(1);
  line = skip_blanks(line);
  const auto start = take_hex(line);
  if (!start || line.empty()) return std::nullopt;
  line = skip_blanks(line);
  const auto size = take_hex(line);
  if (!size || line.empty()) return std::nullopt;
  line = skip_blanks(line);
  if (!printable_name(line) || *size > std::numeric_limits<std::uint64_t>::max() - *start) return std::nullopt;
  return PerfMapEntry{*start, *size, std::string(line), line_number};
}

// How many entries share addresses with another.
std::size_t count_overlapping(const std::vector<PerfMapEntry>& entries) {
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return entries[a].start < entries[b].start; });
  std::vector<bool> overlaps(entries.size(), false);
  std::size_t reach = 0;  // the entry reaching furthest so far
  for (std::size_t k = 1; k < order.size(); ++k) {
    const PerfMapEntry& before = entries[order[reach]];
    if (entries[order[k]].start < before.start + before.size) {
      overlaps[order[k]] = true;
      overlaps[order[reach]] = true;
    }
    if (entries[order[k]].start + entries[order[k]].size > before.start + before.size) reach = k;
  }
  return static_cast<std::size_t>(std::count(overlaps.begin(), overlaps.end(), true));
}

std::string line_list(const std::vector<std::size_t>& lines, std::size_t total) {
  std::string text;
  for (std::size_t line : lines) text += (text.empty() ? "" : ", ") + std::to_string(line);
  return text + (total > lines.size() ? ", ..." : "");
}

}  // namespace

std::vector<std::string> PerfMap::warnings() const {
  std::vector<std::string> out;
  if (skipped_lines > 0) {
    out.push_back(path + ": " + std::to_string(skipped_lines) + " line" + (skipped_lines == 1 ? "" : "s") +
                  " skipped, not \"START SIZE name\" with START and SIZE in hex (line " + line_list(first_skipped, skipped_lines) + ")");
  }
  if (zero_size_entries > 0) {
    out.push_back(path + ": " + std::to_string(zero_size_entries) + " entr" + (zero_size_entries == 1 ? "y" : "ies") +
                  " of size 0 ignored (an entry of size 0 names no address)");
  }
  if (overlapping_entries > 0) {
    out.push_back(path + ": " + std::to_string(overlapping_entries) +
                  " entries share addresses with another; where they overlap, the later line names the address");
  }
  return out;
}

const PerfMapEntry* find_entry(const PerfMap& map, std::uint64_t address) {
  const AddressRange* piece = find_range(map.pieces, address);
  return piece ? &map.entries[piece->index] : nullptr;
}

Result<PerfMap> parse_perf_map(std::string_view text, const std::string& path, const PerfMapLimits& limits) {
  PerfMap map;
  map.path = path;
  const std::size_t max_entries = std::min<std::size_t>(limits.max_entries, std::numeric_limits<std::uint32_t>::max());
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (skip_blanks(line).empty() || line == "\r") continue;
    auto entry = line.size() > limits.max_line_bytes ? std::nullopt : parse_entry(line, line_number);
    if (!entry) {
      if (map.first_skipped.size() < kReportedLines) map.first_skipped.push_back(line_number);
      ++map.skipped_lines;
      continue;
    }
    if (entry->size == 0) {
      ++map.zero_size_entries;
      continue;
    }
    if (map.entries.size() == max_entries) {
      return Error{path + ": more than " + std::to_string(max_entries) + " entries (line " + std::to_string(line_number) +
                   "); a perf map file may have at most " + std::to_string(max_entries) + " entries"};
    }
    map.entries.push_back(std::move(*entry));
  }
  std::vector<AddressRange> ranges;
  ranges.reserve(map.entries.size());
  for (std::size_t i = 0; i < map.entries.size(); ++i) {
    const PerfMapEntry& e = map.entries[i];
    ranges.push_back(AddressRange{e.start, e.start + e.size, static_cast<std::uint32_t>(i)});
  }
  map.pieces = latest_wins(ranges);
  map.overlapping_entries = count_overlapping(map.entries);
  return map;
}

Result<PerfMap> read_perf_map(const std::string& path, const PerfMapLimits& limits) {
  auto text = read_input_file(path, "perf map file", limits.max_bytes, InputKinds::regular_file);
  if (!text) return text.error();
  return parse_perf_map(*text, path, limits);
}

std::string perf_map_path(int pid) {
  return "/tmp/perf-" + std::to_string(pid) + ".map";
}

}  // namespace hwprof::symbols
