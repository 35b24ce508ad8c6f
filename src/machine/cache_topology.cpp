#include "machine/cache_topology.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <unistd.h>

#include "common/cpu_topology.hpp"
#include "common/stages.hpp"
#include "counters/system_info.hpp"

namespace hwprof::machine {
namespace {

// "48K", "32768K", "1M", "1G" (the kernel's cacheinfo size attribute), or plain bytes.
std::int64_t parse_size(std::string text) {
  std::int64_t scale = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'M' || text.back() == 'G')) {
    scale = text.back() == 'K' ? 1024 : text.back() == 'M' ? std::int64_t{1024} * 1024 : std::int64_t{1024} * 1024 * 1024;
    text.pop_back();
  }
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 12) return 0;
  return std::stoll(text) * scale;
}

bool data_cache(const std::string& type) {
  return type == "Data" || type == "Unified";
}

bool holds(const std::vector<int>& cpus, int cpu) {
  return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
}

// One description per level: the instance `first_cpu` uses, else the level's first instance.
std::vector<CacheInfo> levels_of_first_cpu(const std::vector<CacheInstance>& instances, int first_cpu) {
  std::map<int, const CacheInstance*> chosen;
  for (const CacheInstance& i : instances) {
    auto [it, inserted] = chosen.emplace(i.level, &i);
    if (!inserted && holds(i.cpus, first_cpu) && !holds(it->second->cpus, first_cpu)) it->second = &i;
  }
  std::vector<CacheInfo> levels;
  for (const auto& [level, i] : chosen) levels.push_back({level, i->type, i->size_bytes, static_cast<int>(i->cpus.size()), "sysfs"});
  return levels;
}

// CPUID's deterministic cache parameters (leaf 4 and 0x8000001D share the layout): subleaves
// until a type of 0 ("no more caches"), at most 16.
std::vector<CacheInfo> deterministic_leaf(const CpuidFn& cpuid, std::uint32_t leaf) {
  std::vector<CacheInfo> levels;
  for (std::uint32_t sub = 0; sub < 16; ++sub) {
    const CpuidRegs r = cpuid(leaf, sub);
    const std::uint32_t type = r.eax & 0x1fU;
    if (type == 0) break;
    if (type != 1 && type != 3) continue;  // 2: instruction cache
    const std::int64_t ways = ((r.ebx >> 22) & 0x3ffU) + 1;
    const std::int64_t partitions = ((r.ebx >> 12) & 0x3ffU) + 1;
    const std::int64_t line = (r.ebx & 0xfffU) + 1;
    const std::int64_t sets = static_cast<std::int64_t>(r.ecx) + 1;
    CacheInfo c;
    c.level = static_cast<int>((r.eax >> 5) & 0x7U);
    c.type = type == 1 ? "Data" : "Unified";
    c.size_bytes = ways * partitions * line * sets;
    c.shared_by = static_cast<int>(((r.eax >> 14) & 0xfffU) + 1);  // an upper bound on the logical IDs sharing it
    c.source = "cpuid";
    if (c.level >= 1) levels.push_back(c);
  }
  return levels;
}

std::vector<CacheInfo> amd_legacy_leaves(const CpuidFn& cpuid) {
  std::vector<CacheInfo> levels;
  const std::uint32_t max_extended = cpuid(0x80000000U, 0).eax;
  if (max_extended >= 0x80000005U) {
    const std::int64_t l1 = static_cast<std::int64_t>(cpuid(0x80000005U, 0).ecx >> 24) * 1024;
    if (l1 > 0) levels.push_back({1, "Data", l1, 0, "cpuid"});
  }
  if (max_extended >= 0x80000006U) {
    const CpuidRegs r = cpuid(0x80000006U, 0);
    const std::int64_t l2 = static_cast<std::int64_t>(r.ecx >> 16) * 1024;
    const std::int64_t l3 = static_cast<std::int64_t>(r.edx >> 18) * 512 * 1024;
    if (l2 > 0) levels.push_back({2, "Unified", l2, 0, "cpuid"});
    if (l3 > 0) levels.push_back({3, "Unified", l3, 0, "cpuid"});
  }
  return levels;
}

void sort_levels(std::vector<CacheInfo>& levels) {
  std::sort(levels.begin(), levels.end(), [](const CacheInfo& a, const CacheInfo& b) { return a.level < b.level; });
}

}  // namespace

std::string binary_size(std::int64_t bytes) {
  const auto d = static_cast<double>(bytes);
  if (bytes >= (std::int64_t{1} << 30)) return fmt::format("{:.3g} GiB", d / (std::int64_t{1} << 30));
  if (bytes >= (1 << 20)) return fmt::format("{:.4g} MiB", d / (1 << 20));
  if (bytes >= 1024) return fmt::format("{:.4g} KiB", d / 1024);
  return fmt::format("{} B", bytes);
}

CacheReport caches_from_sysfs(const std::string& sysfs_cpu_dir, const std::vector<int>& cpus) {
  CacheReport report;
  report.source = "sysfs";
  report.how = sysfs_cpu_dir + "/cpu*/cache/index*";
  std::map<std::tuple<int, std::string, std::string>, CacheInstance> instances;  // level, type, shared_cpu_list
  std::map<int, std::set<std::int64_t>> sizes_by_level;
  std::map<int, std::map<std::int64_t, std::vector<int>>> cpus_by_size;  // level → size → CPUs with it
  int first_with_caches = -1;
  for (int cpu : cpus) {
    const std::string dir = sysfs_cpu_dir + "/cpu" + std::to_string(cpu) + "/cache";
    std::error_code ec;
    std::vector<std::string> indices;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().filename().string().rfind("index", 0) == 0) indices.push_back(entry.path().string());
    }
    std::sort(indices.begin(), indices.end());
    for (const std::string& index : indices) {
      const std::string type = read_first_line(index + "/type");
      if (!data_cache(type)) continue;
      const std::string level_text = read_first_line(index + "/level");
      const std::int64_t size = parse_size(read_first_line(index + "/size"));
      if (level_text.size() != 1 || level_text[0] < '1' || level_text[0] > '9' || size <= 0) continue;  // unreadable: left out, not guessed
      const int level = level_text[0] - '0';
      std::string shared = read_first_line(index + "/shared_cpu_list");
      std::vector<int> sharing = parse_cpu_list(shared);
      if (sharing.empty()) {
        sharing = {cpu};
        shared = std::to_string(cpu);
      }
      CacheInstance& inst = instances[{level, type, shared}];
      inst.level = level;
      inst.type = type;
      inst.size_bytes = std::max(inst.size_bytes, size);
      inst.cpus = sharing;
      sizes_by_level[level].insert(size);
      auto& list = cpus_by_size[level][size];
      if (std::find(list.begin(), list.end(), cpu) == list.end()) list.push_back(cpu);
      if (first_with_caches < 0) first_with_caches = cpu;
    }
  }
  for (auto& [key, inst] : instances) report.instances.push_back(inst);
  if (report.instances.empty()) {
    std::error_code ec;
    const std::string first = sysfs_cpu_dir + "/cpu" + std::to_string(cpus.empty() ? 0 : cpus.front()) + "/cache";
    report.absent = std::filesystem::exists(first, ec) ? first + " describes no data cache that can be read"
                                                       : first + " does not exist: this kernel (or virtual machine) describes no caches in sysfs";
    return report;
  }
  report.levels = levels_of_first_cpu(report.instances, first_with_caches);
  for (const auto& [level, sizes] : sizes_by_level) {
    if (sizes.size() < 2) continue;
    std::string parts;
    for (const auto& [size, with] : cpus_by_size[level]) {
      std::string list;
      for (int c : with) list += (list.empty() ? "" : ",") + std::to_string(c);
      parts += fmt::format("{}{} on CPU {}", parts.empty() ? "" : ", ", binary_size(size), list);
    }
    report.notes.push_back(
        fmt::format("L{} differs between CPUs ({}): a hybrid processor; each run's capacity counts "
                    "the caches of the CPUs its workers ran on",
                    level, parts));
  }
  return report;
}

CacheReport caches_from_cpuid(const CpuidFn& cpuid) {
  CacheReport report;
  report.source = "cpuid";
  const std::string vendor = cpuid_vendor(cpuid);
  if (vendor.empty()) {
    report.absent = "no CPUID (not an x86 processor)";
    return report;
  }
  const std::uint32_t max_basic = cpuid(0, 0).eax;
  const std::uint32_t max_extended = cpuid(0x80000000U, 0).eax;
  const bool amd = vendor == "AuthenticAMD" || vendor == "HygonGenuine";
  const auto leaf4 = [&] { return max_basic >= 4 ? deterministic_leaf(cpuid, 4) : std::vector<CacheInfo>{}; };
  const auto leaf1d = [&] {
    // Fn8000_0001 ECX[22] TopologyExtensions says whether Fn8000_001D is there.
    const bool topoext = max_extended >= 0x80000001U && ((cpuid(0x80000001U, 0).ecx >> 22) & 1U) != 0;
    return topoext && max_extended >= 0x8000001DU ? deterministic_leaf(cpuid, 0x8000001DU) : std::vector<CacheInfo>{};
  };
  std::vector<std::string> empty;
  if (amd) {
    report.levels = leaf1d();
    report.how = "leaf 0x8000001D";
    if (report.levels.empty()) {
      empty.push_back("leaf 0x8000001D");
      report.levels = amd_legacy_leaves(cpuid);
      report.how = "leaves 0x80000005/0x80000006 (AMD's legacy sizes, no sharing)";
    }
  } else {
    report.levels = leaf4();
    report.how = "leaf 4";
    if (report.levels.empty()) {
      empty.push_back("leaf 4");
      report.levels = leaf1d();
      report.how = "leaf 0x8000001D";
    }
  }
  if (!empty.empty() && !report.levels.empty()) {
    report.notes.push_back(
        fmt::format("{} {} describes no cache here (a hypervisor may leave it empty); sizes from {}", vendor, empty.front(), report.how));
  }
  sort_levels(report.levels);
  if (report.levels.empty()) {
    report.how.clear();
    report.absent = amd ? "leaves 0x8000001D and 0x80000005/6 describe no cache" : "leaves 4 and 0x8000001D describe no cache";
  }
  return report;
}

CacheReport caches_from_sysconf(const std::function<long(int)>& sysconf_fn) {
  CacheReport report;
  report.source = "sysconf";
  report.how = "sysconf(_SC_LEVEL1_DCACHE_SIZE ... _SC_LEVEL4_CACHE_SIZE)";
  const std::pair<int, int> names[] = {
      {1, _SC_LEVEL1_DCACHE_SIZE}, {2, _SC_LEVEL2_CACHE_SIZE}, {3, _SC_LEVEL3_CACHE_SIZE}, {4, _SC_LEVEL4_CACHE_SIZE}};
  for (const auto& [level, name] : names) {
    const long size = sysconf_fn(name);
    if (size > 0) report.levels.push_back({level, level == 1 ? "Data" : "Unified", size, 0, "sysconf"});
  }
  if (report.levels.empty()) {
    report.how.clear();
    report.absent = "sysconf reports no cache size";
  }
  return report;
}

std::vector<CacheReport> cache_reports_of_this_machine() {
  std::vector<int> online = parse_cpu_list(read_first_line("/sys/devices/system/cpu/online"));
  if (online.empty()) {
    for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) online.push_back(static_cast<int>(i));
  }
  return {caches_from_sysfs("/sys/devices/system/cpu", online), caches_from_cpuid(this_cpu_cpuid()),
          caches_from_sysconf([](int name) { return ::sysconf(name); })};
}

std::vector<CacheInfo> chosen_caches(const std::vector<CacheReport>& reports) {
  for (const CacheReport& r : reports) {
    if (!r.levels.empty()) return r.levels;
  }
  return {};
}

std::vector<std::int64_t> capacities_for(const CacheReport& report, const std::vector<int>& cpus, int logical_cpus, int cores) {
  std::vector<std::int64_t> capacity;
  const auto add = [&](int level, std::int64_t bytes) {
    if (level < 1) return;
    if (static_cast<std::size_t>(level) > capacity.size()) capacity.resize(static_cast<std::size_t>(level), 0);
    capacity[static_cast<std::size_t>(level - 1)] += bytes;
  };
  if (!report.instances.empty()) {
    for (const CacheInstance& inst : report.instances) {
      if (std::any_of(cpus.begin(), cpus.end(), [&](int c) { return holds(inst.cpus, c); })) add(inst.level, inst.size_bytes);
    }
    return capacity;
  }
  // Without instances: `shared_by` logical CPUs per instance (0: unknown, then private below
  // the last level and one instance for the last), as cores (workers run one per core),
  // workers filling instances in order.
  const int workers = std::max(1, static_cast<int>(cpus.size()));
  const int logical = std::max(1, logical_cpus);
  int last_level = 0;
  for (const CacheInfo& c : report.levels) last_level = std::max(last_level, c.level);
  for (const CacheInfo& c : report.levels) {
    int sharing = c.shared_by;
    if (sharing <= 0) sharing = c.level == last_level && c.level > 1 ? logical : 1;
    const int sharing_cores = std::max(1, std::min(sharing, logical) * std::max(1, cores) / logical);
    add(c.level, c.size_bytes * ((workers + sharing_cores - 1) / sharing_cores));
  }
  return capacity;
}

LevelEvidence level_evidence(const std::vector<CacheReport>& reports, const std::vector<int>& cpus, int logical_cpus, int cores) {
  LevelEvidence e;
  e.threads = static_cast<int>(cpus.size());
  for (const CacheReport& r : reports) {
    if (r.levels.empty()) continue;
    const std::vector<std::int64_t> capacity = capacities_for(r, cpus, logical_cpus, cores);
    if (e.reported_source.empty()) {
      e.reported = capacity;
      e.reported_source = r.source;
    }
    const std::int64_t largest = capacity.empty() ? 0 : *std::max_element(capacity.begin(), capacity.end());
    if (largest > e.largest_reported) {
      e.largest_reported = largest;
      e.largest_source = r.source == "cpuid" ? "CPUID " + r.how : r.source;
    }
  }
  return e;
}

std::vector<std::string> compare_cache_reports(const std::vector<CacheReport>& reports) {
  std::vector<std::string> notes;
  std::set<int> levels;
  for (const CacheReport& r : reports) {
    for (const CacheInfo& c : r.levels) levels.insert(c.level);
  }
  for (int level : levels) {
    std::vector<std::pair<std::string, std::int64_t>> said;  // source, size (0: lacks the level)
    for (const CacheReport& r : reports) {
      if (r.levels.empty()) continue;
      std::int64_t size = 0;
      for (const CacheInfo& c : r.levels) {
        if (c.level == level) size = c.size_bytes;
      }
      said.emplace_back(r.source + (r.how.empty() || r.source == "sysfs" || r.source == "sysconf" ? "" : " " + r.how), size);
    }
    if (said.size() < 2) continue;
    const auto [low, high] = std::minmax_element(said.begin(), said.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (low->second > 0 && static_cast<double>(high->second) <= 1.1 * static_cast<double>(low->second)) continue;
    std::string parts;
    for (const auto& [source, size] : said) {
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", source, size > 0 ? binary_size(size) : std::string("no such level"));
    }
    notes.push_back(fmt::format("the sources disagree on L{}: {}", level, parts));
  }
  return notes;
}

}  // namespace hwprof::machine
