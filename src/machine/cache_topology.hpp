// The data caches of this machine from every source that describes them: the kernel's sysfs
// (per CPU, with which CPUs share each instance), CPUID (leaf 4 on Intel, 0x8000001D on AMD,
// AMD's legacy leaves 0x80000005/6 where a hypervisor leaves 0x8000001D empty) and glibc's
// sysconf(_SC_LEVEL*_CACHE_SIZE). Each can be absent or wrong — a VM may expose no sysfs cache
// directory, or a CPUID that reports the host's whole L3 — so every description says where it
// came from, the sources are compared, and the calibration sweep's own knees decide where
// each level ends (src/calibrate/memory_levels.hpp). Every reader takes its input from a seam (a sysfs
// root, CPUID answers, a sysconf function), so recorded machines are tested like this one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cpuid.hpp"
#include "common/stages.hpp"
#include "hwprof/engine/machine.hpp"

namespace hwprof::machine {

// One cache instance as sysfs describes it: its level, type, size and the CPUs sharing it.
struct CacheInstance {
  int level = 0;
  std::string type;  // "Data" or "Unified"
  std::int64_t size_bytes = 0;
  std::vector<int> cpus;
};

// What one source says (CacheSource: source, how, levels, absent, notes), and for sysfs every
// instance among the CPUs read.
struct CacheReport : CacheSource {
  std::vector<CacheInstance> instances;
};

// The caches of `cpus` under a sysfs cpu directory (/sys/devices/system/cpu): each CPU's
// cache/index*/{level,type,size,shared_cpu_list}. `levels` describes the first CPU; a level
// whose size differs between CPUs (P- and E-cores) is noted.
CacheReport caches_from_sysfs(const std::string& sysfs_cpu_dir, const std::vector<int>& cpus);

// Deterministic cache parameters from CPUID: leaf 4 (Intel SDM Vol. 2A, "CPUID—Deterministic
// Cache Parameters Leaf"), leaf 0x8000001D (AMD APM Vol. 3, "Fn8000_001D Cache Topology
// Information", same register layout), or AMD's legacy Fn8000_0005 ECX[31:24] L1d KiB and
// Fn8000_0006 ECX[31:16] L2 KiB / EDX[31:18] L3 in 512 KiB units, which say nothing about
// sharing. The vendor's own leaf first, then the other's.
CacheReport caches_from_cpuid(const CpuidFn& cpuid);

// glibc's sysconf(_SC_LEVEL1_DCACHE_SIZE ... _SC_LEVEL4_CACHE_SIZE): sizes only (glibc reads
// them from CPUID itself on x86, so it shares CPUID's errors). `sysconf_fn` stands in for
// ::sysconf.
CacheReport caches_from_sysconf(const std::function<long(int)>& sysconf_fn);

// All three sources for the online CPUs of this machine.
std::vector<CacheReport> cache_reports_of_this_machine();

// The description a report carries: the first source that said something (sysfs, then
// CPUID, then sysconf), each level tagged with it. Empty when none did.
std::vector<CacheInfo> chosen_caches(const std::vector<CacheReport>& reports);

// Bytes of each level that workers on `cpus` (one per core) have together: a private cache
// once per worker, a shared one once per instance they touch — sysfs's shared_cpu_list where
// the report has instances, else `shared_by` logical CPUs (of `logical_cpus` on `cores`
// cores) per instance, filled in order. L1 first; 0 for a level the report lacks.
std::vector<std::int64_t> capacities_for(const CacheReport& report, const std::vector<int>& cpus, int logical_cpus, int cores);

// What level detection (src/calibrate/memory_levels.hpp) knows besides the sweep's curve.
struct LevelEvidence {
  std::vector<std::int64_t> reported;  // the chosen description's capacity per cache level for the run's CPUs, L1 first (0: none)
  std::string reported_source;         // "sysfs", "cpuid", "sysconf", or "" when no source said anything
  std::int64_t largest_reported = 0;   // the largest capacity any source reports for the run's CPUs
  std::string largest_source;          // the source of that figure, in words ("cpuid leaves 0x80000005/0x80000006")
  int threads = 1;                     // for the notes' wording
};

// What level detection knows from the sources for workers on `cpus`: the first source's
// capacities (the chosen description), and the largest cache any source reports for them.
LevelEvidence level_evidence(const std::vector<CacheReport>& reports, const std::vector<int>& cpus, int logical_cpus, int cores);

// The sources compared, level by level: where they disagree on a size by more than 10 %, or
// one has a level another lacks, a sentence that names each source's figure.
std::vector<std::string> compare_cache_reports(const std::vector<CacheReport>& reports);

// Fills cpu.caches (the chosen description), cpu.cache_sources and cpu.cache_notes.
void describe_caches(MachineCpu& cpu, const std::vector<CacheReport>& reports);

// "48 KiB", "1 MiB", "508 MiB": sizes as the kernel writes them, in binary units.
std::string binary_size(std::int64_t bytes);

}  // namespace hwprof::machine
