// The machine report: the ceilings `hwprof calibrate` measured on this machine (bandwidth of
// every memory level, FMA and GEMM compute), the theoretical peaks for context, and the CPU
// they belong to. Profiles place layers under these ceilings; a report from another CPU is
// never used silently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

HWPROF_API_BEGIN

namespace hwprof {

inline constexpr int kMachineSchema = 1;

struct CacheInfo {
  int level = 0;
  std::string type;  // "Data", "Unified"
  std::int64_t size_bytes = 0;
  int shared_by = 1;   // logical CPUs sharing one instance (0: the source does not say)
  std::string source;  // "sysfs", "cpuid" or "sysconf" ("" in reports that predate sources)
};

// What one source said about the caches. Every source consulted is kept, also one that said
// nothing (then `absent` says why): a VM may have no sysfs cache directory, or a CPUID that
// reports the host's whole L3.
struct CacheSource {
  std::string source;              // "sysfs", "cpuid", "sysconf"
  std::string how;                 // what was read: "/sys/devices/system/cpu/cpu*/cache", "leaf 4", ...
  std::vector<CacheInfo> levels;   // L1 first
  std::string absent;              // why nothing was said; empty when levels are given
  std::vector<std::string> notes;  // e.g. CPUs whose caches differ (a hybrid processor)
};

struct MachineCpu {
  std::string vendor;
  std::string brand;
  int family = 0;
  int model = 0;
  int stepping = 0;
  std::vector<std::string> flags;  // the ISA features that matter here: sse2, avx2, fma, avx512f
  int logical_cpus = 0;
  int cores = 0;                           // physical cores
  std::vector<CacheInfo> caches;           // data and unified caches, by level: the first source that said something
  std::vector<CacheSource> cache_sources;  // every source consulted (sysfs, CPUID, sysconf)
  std::vector<std::string> cache_notes;    // where the sources disagree, in words
  double frequency_ghz = 0.0;
  std::string frequency_source;
  bool hypervisor = false;
};

// The data-cache capacity `threads` workers (one per physical core) have at each level, L1
// first: a private cache counts once per worker, a shared one once per instance they span.
// Levels the CPU did not describe are left out.
std::vector<std::int64_t> cache_capacities(const MachineCpu& cpu, int threads);

// A GEMM ceiling's variant: this prefix, then the OpenBLAS core it ran on (openblas_get_corename).
inline constexpr std::string_view kOpenBlasVariantPrefix = "openblas ";

// One measured ceiling: best and median over the repetitions, and their spread.
struct Ceiling {
  double best = 0.0;
  double median = 0.0;
  double spread = 0.0;  // (max - min) / median
  int repetitions = 0;
  std::int64_t size = 0;  // bandwidth: working-set bytes of the best point; GEMM: n
  std::string variant;    // FMA: the ISA; bandwidth: "" or "nontemporal"
  std::string note;       // empty, or what qualifies the number (a worker ran unpinned, shared its CPU)
};

// GB/s (decimal), STREAM byte convention: write-allocate traffic is not counted.
struct BandwidthLevel {
  std::int64_t from_bytes = 0;  // the working-set range of the sweep points that measure it
  std::int64_t to_bytes = 0;
  std::map<std::string, Ceiling> kernels;  // "copy", "scale", "add", "triad", "copy_nt", "triad_nt"
  // False when the sweep showed no flat run for this level (a noisy host, a cache without a
  // knee, DRAM without a flat tail): the ceilings are the best that could be had, less certain.
  bool plateau = true;
  // Where a cache level ends for this run's threads: the sweep's knee, else the size the
  // cache description reports (0: unknown; DRAM: 0). Reports before levels came from the
  // sweep have none; then the CPU's caches decide (cache_capacities).
  std::int64_t capacity_bytes = 0;
  std::string capacity_source;      // "sweep", or the source of a reported size ("sysfs", "cpuid", "sysconf")
  std::int64_t reported_bytes = 0;  // what the cache description says for this run's threads (0: nothing)
  std::string note;                 // a disagreement with the sources, or what makes the level uncertain
};

struct SweepPoint {
  std::int64_t bytes = 0;
  std::string kernel;  // "copy", ..., with "_nt" for non-temporal stores
  double best_gbps = 0.0;
  double median_gbps = 0.0;
};

struct CalibrationRun {
  int threads = 0;
  std::vector<int> cpus;                            // where the workers were pinned
  std::map<std::string, BandwidthLevel> bandwidth;  // "l1", "l2", "l3", "dram": the levels found
  std::map<std::string, Ceiling> compute;           // "fma_sp", "fma_dp", "gemm_sp", "gemm_dp"
  std::vector<SweepPoint> sweep;
  std::vector<std::string> notes;  // what the level detection could not settle (points that belong to no level, ...)
  double seconds = 0.0;
};

// Whether the calibration measured this machine or its neighbours too.
struct Contention {
  bool contended = false;             // disturbed, and still so after the disturbed parts were measured again
  double others_cpus = 0.0;           // the most CPU other processes used during any phase
  double steal_percent = 0.0;         // the most the hypervisor stole during any phase
  std::vector<std::string> evidence;  // what was seen, phase by phase, and who was busy
};

struct TheoreticalPeaks {
  std::string isa;
  int cores = 0;
  double ghz = 0.0;
  std::string ghz_source;
  int sp_flops_per_cycle = 0;
  int dp_flops_per_cycle = 0;
  double sp_gflops = 0.0;
  double dp_gflops = 0.0;
  std::string assumptions;
};

struct Machine {
  int schema = kMachineSchema;
  std::string created;  // ISO 8601, UTC
  std::string host;
  std::string hwprof_version;
  bool quick = false;
  MachineCpu cpu;
  TheoreticalPeaks theoretical;
  std::vector<CalibrationRun> runs;  // one per thread count
  Contention contention;

  // The run with exactly `threads` threads, or nullptr.
  const CalibrationRun* run_for(int threads) const noexcept;
};

// What a report must satisfy to be believed, each violation naming the fields (JSON paths)
// and their values: L1 >= L2 >= L3 >= DRAM triad bandwidth, DP <= SP, GEMM <= the FMA peak of
// its precision, measured compute <= 2x the theoretical figure (5 % allowed for noise where
// two measurements are compared). Empty when it holds.
std::vector<std::string> implausible_fields(const Machine& machine);

// What a profile placed under `machine`'s run with `threads` threads must say about it first:
// measured under contention, DRAM without a flat tail, levels whose end is unknown, a quick
// calibration. Empty when there is nothing to doubt.
std::vector<std::string> calibration_doubts(const Machine& machine, int threads);

std::string machine_to_json(const Machine& machine);
// Errors name the file, the place (line:column and JSON path) and what was expected.
Result<Machine> machine_from_json(std::string_view text, const std::string& source_name);
Result<Machine> load_machine(const std::string& path);

// This CPU, as a report describes it.
MachineCpu describe_this_cpu();
// Why a report measured on `report` does not describe `here`, or nullopt when it does.
std::optional<std::string> foreign_cpu(const MachineCpu& report, const MachineCpu& here);

// Where reports are kept: $XDG_DATA_HOME/hwprof/machines, else ~/.local/share/hwprof/machines
// with ~ from $HOME, else from the password database. Empty when there is no home at all
// (never the working directory): then nothing is stored or read, and the messages say so.
std::string machine_store_dir();
// What every caller says when machine_store_dir() is empty: why, and how to do without.
Error no_machine_store_error();
// The file this machine's report has there: host name plus CPU identity (empty with the dir).
std::string machine_store_path(const std::string& host, const MachineCpu& cpu);
// The stored report for this machine: an error says what is missing or wrong (absent,
// corrupt, another CPU's) and how to fix it.
Result<Machine> load_stored_machine();
// The same for a caller that has described this machine already.
Result<Machine> load_stored_machine(const std::string& host, const MachineCpu& here);
// This machine's host name, as reports and the machine store name it.
std::string this_host_name();
// Stores a calibration as this machine's (what `hwprof calibrate` does; `hwprof profile` and
// HWPROF_OUTPUT then find it), written whole or not at all. Refused, with the reasons, when it
// was contended (unless `allow_contended`) or breaks a plausibility rule. `path` gets the file.
std::optional<Error> store_machine(const Machine& machine, bool allow_contended = false, std::string* path = nullptr);

struct CalibrationOptions {
  std::vector<int> threads;  // empty: 1 and the number of physical cores
  bool quick = false;        // ≤ 5 s: fewer sizes and repetitions
  bool single_precision = true;
  bool double_precision = true;
  std::function<void(const std::string&)> progress;  // called with short status lines
};

// Held while a calibration runs, so that two never measure at once on one machine (each
// would measure the other): an flock on the store's lock file, shared by every hwprof
// process on the machine. Waits for a running calibration, saying so through `waiting`.
class CalibrationLock {
 public:
  static Result<CalibrationLock> acquire(const std::function<void(const std::string&)>& waiting);
  CalibrationLock(CalibrationLock&& other) noexcept;
  CalibrationLock& operator=(CalibrationLock&&) = delete;
  CalibrationLock(const CalibrationLock&) = delete;
  CalibrationLock& operator=(const CalibrationLock&) = delete;
  ~CalibrationLock();

 private:
  explicit CalibrationLock(int fd) noexcept : fd_(fd) {}
  int fd_ = -1;
};

Result<Machine> calibrate(const CalibrationOptions& options);

// Where a profile takes its ceilings from, in this order: `file` (refused when it was measured
// on another CPU), this machine's stored report, or, when `quick_if_missing`, a quick
// calibration made now (after waiting for one another process is making). A sound quick
// calibration is stored for the next run; a contended or implausible one serves this run only.
struct CeilingsOptions {
  std::string file;
  bool quick_if_missing = true;
  int threads = 0;                                   // the quick calibration's threads; 0: its default
  std::function<void(const std::string&)> progress;  // the quick calibration's status lines
  std::function<void(const std::string&)> notice;    // what was decided: waiting, calibrating, stored
};

struct Ceilings {
  Machine machine;
  std::string source;  // the file, or a parenthesised note for a calibration that was not stored
};

Result<Ceilings> find_ceilings(const CeilingsOptions& options);

}  // namespace hwprof
HWPROF_API_END
