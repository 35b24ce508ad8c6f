// Event names → perf_event_attr encodings. Three paths, tried in this order:
// 1. the kernel's generic events, from our own table: they must resolve even when libpfm4 is
//    forced to a PMU (LIBPFM_FORCE_PMU), where libpfm4 no longer knows its "perf" PMU;
// 2. sysfs raw specs "pmu/term=value,.../", encoded with the PMU's own sysfs format files
//    (what perf(1) does), for uncore events that libpfm4 4.13 has no name for;
// 3. everything else through libpfm4; on failure the message says which PMU the name needs.
#include "counters/event_resolver.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "counters/event_resolvers.hpp"

namespace hwprof::detail {
namespace {

constexpr const char* kSysfsDevices = "/sys/bus/event_source/devices";

}  // namespace

Result<ResolvedEvent> resolve_event(const std::string& name) {
  return resolve_event(name, kSysfsDevices);
}

Result<ResolvedEvent> resolve_event(const std::string& name, const std::string& sysfs_devices) {
  if (name.empty())
    return Error{"empty event name; expected for example cycles, FP_ARITH_INST_RETIRED:SCALAR_DOUBLE or uncore_imc/event=0x04,umask=0x0f/"};
  if (auto generic = resolver::resolve_generic(name)) return std::move(*generic);
  if (name.find('/') != std::string::npos) return resolver::resolve_raw_spec(name, sysfs_devices);
  return resolver::resolve_with_libpfm(name, sysfs_devices);
}

}  // namespace hwprof::detail

namespace hwprof {

std::vector<std::string> split_event_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  bool in_terms = false;  // between the slashes of pmu/terms/
  int braces = 0;
  auto take = [&](std::size_t end) {
    std::string_view part = list.substr(start, end - start);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == '\t')) part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    start = end + 1;
  };
  for (std::size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (c == '/') {
      in_terms = !in_terms;
    } else if (c == '{') {
      ++braces;
    } else if (c == '}' && braces > 0) {
      --braces;
    } else if (c == ',' && !in_terms && braces == 0) {
      take(i);
    }
  }
  take(list.size());
  return out;
}

}  // namespace hwprof
