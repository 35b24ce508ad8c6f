// The inputs of the theoretical peak besides the ISA: the frequency (and where it came from)
// and the number of physical cores.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "calibrate/compute.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof::detail {
namespace {

// The number at the start of `text` (after spaces), locale-independent; 0 when none.
double leading_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  (void)end;
  return error == std::errc() ? value : 0.0;
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "@ 2.10GHz" or "@ 2100MHz" in a CPUID brand string; 0 when absent.
double brand_ghz(const std::string& brand) {
  const auto at = brand.rfind('@');
  if (at == std::string::npos) return 0.0;
  const std::string_view rest = std::string_view(brand).substr(at + 1);
  const double value = leading_number(rest);
  if (value <= 0.0) return 0.0;
  if (rest.find("GHz") != std::string_view::npos) return value;
  if (rest.find("MHz") != std::string_view::npos) return value / 1000.0;
  return 0.0;
}

// The highest "cpu MHz" in /proc/cpuinfo (lines are per logical CPU and, on bare metal, the
// current clocks, so an idle CPU shows a low one), in GHz; 0 when absent.
double proc_cpuinfo_ghz(const std::string& path) {
  std::ifstream in(path);
  double best_mhz = 0.0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    best_mhz = std::max(best_mhz, leading_number(std::string_view(line).substr(colon + 1)));
  }
  return best_mhz / 1000.0;
}

// "0-3,8,10-11" → {0, 1, 2, 3, 8, 10, 11}; what does not parse is skipped.
std::vector<int> cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    pos = comma + 1;
    int first = -1, last = -1;
    const char* begin = item.data();
    const char* end = item.data() + item.size();
    auto [next, error] = std::from_chars(begin, end, first);
    if (error != std::errc()) continue;
    last = first;
    if (next != end && *next == '-' && std::from_chars(next + 1, end, last).ec != std::errc()) continue;
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace

double nominal_ghz_from(const std::string& cpufreq_dir, const std::string& proc_cpuinfo, const std::string& brand,
                        std::string* source) {
  const auto found = [source](double ghz, const char* where) {
    if (source != nullptr) *source = where;
    return ghz;
  };
  const double max_khz = leading_number(first_line_of(cpufreq_dir + "/cpuinfo_max_freq"));
  if (max_khz > 0.0) return found(max_khz / 1e6, "cpuinfo_max_freq");
  if (const double ghz = brand_ghz(brand); ghz > 0.0) return found(ghz, "brand string");
  if (const double ghz = proc_cpuinfo_ghz(proc_cpuinfo); ghz > 0.0) return found(ghz, "/proc/cpuinfo cpu MHz");
  return found(0.0, "unknown");
}

double nominal_ghz(std::string* source) {
  return nominal_ghz_from("/sys/devices/system/cpu/cpu0/cpufreq", "/proc/cpuinfo", detect_cpu().brand, source);
}

int physical_cores_from(const std::string& sysfs_cpu_dir) {
  const std::vector<int> online = cpu_list(first_line_of(sysfs_cpu_dir + "/online"));
  if (online.empty()) return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu : online) {
    const std::string topology = sysfs_cpu_dir + "/cpu" + std::to_string(cpu) + "/topology/";
    const std::string package = first_line_of(topology + "physical_package_id");
    const std::string core = first_line_of(topology + "core_id");
    if (package.empty() || core.empty()) return static_cast<int>(online.size());
    cores.emplace(package, core);
  }
  return static_cast<int>(cores.size());
}

int physical_cores() { return physical_cores_from("/sys/devices/system/cpu"); }

}  // namespace hwprof::detail
