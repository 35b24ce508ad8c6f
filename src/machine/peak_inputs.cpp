// The inputs of the theoretical peak besides the ISA: the frequency (and where it came from)
// and the number of physical cores.
#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "counters/system_info.hpp"
#include "hwprof/cpu.hpp"
#include "machine/peak_inputs.hpp"

namespace hwprof::machine {
namespace {

// The number at the start of `text` (after spaces), locale-independent; 0 when none.
double leading_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  (void)end;
  return error == std::errc() ? value : 0.0;
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

}  // namespace

double nominal_ghz_from(const std::string& cpufreq_dir, const std::string& proc_cpuinfo, const std::string& brand, std::string* source) {
  const auto found = [source](double ghz, const char* where) {
    if (source != nullptr) *source = where;
    return ghz;
  };
  const double max_khz = leading_number(read_first_line(cpufreq_dir + "/cpuinfo_max_freq"));
  if (max_khz > 0.0) return found(max_khz / 1e6, "cpuinfo_max_freq");
  if (const double ghz = brand_ghz(brand); ghz > 0.0) return found(ghz, "brand string");
  if (const double ghz = proc_cpuinfo_ghz(proc_cpuinfo); ghz > 0.0) return found(ghz, "/proc/cpuinfo cpu MHz");
  return found(0.0, "unknown");
}

double nominal_ghz(std::string* source) {
  return nominal_ghz_from("/sys/devices/system/cpu/cpu0/cpufreq", "/proc/cpuinfo", detect_cpu().brand, source);
}

int physical_cores_from(const std::string& sysfs_cpu_dir) {
  return static_cast<int>(cpus_one_per_core_from(sysfs_cpu_dir).size());
}

int physical_cores() {
  return physical_cores_from("/sys/devices/system/cpu");
}

}  // namespace hwprof::machine
