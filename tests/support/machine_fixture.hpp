// Recorded (and public-spec) machines for the tests: tests/fixtures/machines/<name>/ holds a
// machine's sysfs cpu directory as text, its CPUID answers, its sysconf cache sizes and its
// triad sweeps (README.md there). A MachineFixture rebuilds the sysfs tree in a temporary
// directory so the real readers run on it.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/memory_levels.hpp"
#include "common/cpu_topology.hpp"
#include "common/cpuid.hpp"
#include "counters/system_info.hpp"
#include "machine/cache_topology.hpp"

namespace hwprof::test {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class MachineFixture {
 public:
  explicit MachineFixture(const std::string& name)
      : dir_(std::filesystem::path(HWPROF_FIXTURES_DIR) / "machines" / name),
        sysfs_(std::filesystem::temp_directory_path() / ("hwprof-fixture-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(sysfs_);
    std::istringstream lines(read_text(dir_ / "sysfs.txt"));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      const auto tab = line.find('\t');
      if (tab == std::string::npos) continue;
      const std::filesystem::path file = sysfs_ / line.substr(0, tab);
      std::filesystem::create_directories(file.parent_path());
      std::ofstream(file) << line.substr(tab + 1) << "\n";
    }
    std::istringstream conf(read_text(dir_ / "sysconf.txt"));
    while (std::getline(conf, line)) {
      std::istringstream fields(line);
      std::string key;
      long value = 0;
      if (line.empty() || line[0] == '#' || !(fields >> key >> value)) continue;
      sysconf_[key] = value;
    }
  }
  ~MachineFixture() {
    std::error_code ec;
    std::filesystem::remove_all(sysfs_, ec);
  }
  MachineFixture(const MachineFixture&) = delete;
  MachineFixture& operator=(const MachineFixture&) = delete;

  std::string sysfs_cpu_dir() const { return sysfs_.string(); }
  std::vector<int> online() const { return common::parse_cpu_list(common::read_first_line(sysfs_cpu_dir() + "/online")); }

  common::CpuidFn cpuid() const {
    auto fn = common::cpuid_from_text(read_text(dir_ / "cpuid.txt"), (dir_ / "cpuid.txt").string());
    EXPECT_TRUE(fn.ok()) << (fn.ok() ? "" : fn.error().message);
    return fn.ok() ? *fn : common::CpuidFn([](std::uint32_t, std::uint32_t) { return common::CpuidRegs{}; });
  }

  // sysconf as this machine's glibc answers it, by getconf name.
  std::function<long(int)> sysconf() const {
    const std::map<int, std::string> names = {{_SC_LEVEL1_DCACHE_SIZE, "LEVEL1_DCACHE_SIZE"},
                                              {_SC_LEVEL2_CACHE_SIZE, "LEVEL2_CACHE_SIZE"},
                                              {_SC_LEVEL3_CACHE_SIZE, "LEVEL3_CACHE_SIZE"},
                                              {_SC_LEVEL4_CACHE_SIZE, "LEVEL4_CACHE_SIZE"}};
    const std::map<std::string, long> values = sysconf_;
    return [names, values](int name) -> long {
      auto n = names.find(name);
      if (n == names.end()) return -1;
      auto v = values.find(n->second);
      return v == values.end() ? 0 : v->second;
    };
  }

  // The three sources, in the order hwprof consults them.
  std::vector<machine::CacheReport> reports() const {
    return {machine::caches_from_sysfs(sysfs_cpu_dir(), online()), machine::caches_from_cpuid(cpuid()), machine::caches_from_sysconf(sysconf())};
  }

  calibration::Curve sweep(int threads) const {
    calibration::Curve curve;
    std::istringstream lines(read_text(dir_ / ("sweep-" + std::to_string(threads) + ".csv")));
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#' || line.rfind("bytes", 0) == 0) continue;
      const auto comma = line.find(',');
      curve.emplace_back(std::stoll(line.substr(0, comma)), std::stod(line.substr(comma + 1)));
    }
    EXPECT_FALSE(curve.empty()) << dir_ << " has no sweep for " << threads << " thread(s)";
    return curve;
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path sysfs_;
  std::map<std::string, long> sysconf_;
};

}  // namespace hwprof::test
