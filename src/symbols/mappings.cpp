#include "symbols/mappings.hpp"

#include <charconv>
#include <optional>
#include <string>
#include <system_error>

#include "common/input_file.hpp"
#include "common/stages.hpp"

namespace hwprof::symbols {
namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

// Reads the field of `line` up to the next `stop` (or the end), moving past the stop.
std::string_view take_until(std::string_view& line, char stop) {
  const std::size_t at = line.find(stop);
  const std::string_view field = line.substr(0, at);
  line.remove_prefix(at == std::string_view::npos ? line.size() : at + 1);
  return field;
}

std::optional<std::uint64_t> number(std::string_view text, int base) {
  std::uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// One line of /proc/PID/maps: "START-END PERMS OFFSET DEV INODE", then the path after the
// kernel's padding (proc(5)). nullopt for a line of another shape.
struct MapsLine {
  Mapping mapping;
  bool executable = false;
};
std::optional<MapsLine> parse_line(std::string_view line) {
  MapsLine out;
  const auto start = number(take_until(line, '-'), 16);
  const auto end = number(take_until(line, ' '), 16);
  const std::string_view perms = take_until(line, ' ');
  const auto pgoff = number(take_until(line, ' '), 16);
  const std::string_view device = take_until(line, ' ');
  const auto inode = number(take_until(line, ' '), 10);
  if (!start || !end || !pgoff || !inode || *end <= *start || perms.size() != 4 || device.find(':') == std::string_view::npos) {
    return std::nullopt;
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  out.mapping = Mapping{*start, *end, *pgoff, std::string(line), false};
  if (line.size() > kDeletedSuffix.size() && line.substr(line.size() - kDeletedSuffix.size()) == kDeletedSuffix) {
    out.mapping.path.resize(line.size() - kDeletedSuffix.size());
    out.mapping.deleted = true;
  }
  out.executable = perms[2] == 'x';
  return out;
}

}  // namespace

Result<std::vector<Mapping>> parse_proc_maps(std::string_view text, std::string_view source) {
  std::vector<Mapping> mappings;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::string_view line = take_until(text, '\n');
    if (line.empty()) continue;
    auto parsed = parse_line(line);
    if (!parsed) {
      return Error{std::string(source) + ":" + std::to_string(line_number) +
                   ": expected \"START-END PERMS OFFSET DEV INODE [PATH]\" (the format of /proc/PID/maps)"};
    }
    if (parsed->executable) mappings.push_back(std::move(parsed->mapping));
  }
  return mappings;
}

Result<std::vector<Mapping>> read_proc_maps(int pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/maps";
  auto text = read_input_file(path, "process's memory map", kMaxProcMapsBytes, InputKinds::regular_file);
  if (!text) return text.error();
  return parse_proc_maps(*text, path);
}

bool is_anonymous(const Mapping& mapping) {
  const std::string_view path = mapping.path;
  if (path.empty()) return true;
  if (path.front() == '[') return path != "[vdso]" && path != "[vsyscall]";
  return path.rfind("/memfd:", 0) == 0 || path.rfind("//anon", 0) == 0;
}

std::string module_name(std::string_view path) {
  if (path.empty() || path.front() == '[') return std::string(path);
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace hwprof::symbols
