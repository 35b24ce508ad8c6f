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

#include "hwprof/result.hpp"

namespace hwprof {

inline constexpr int kMachineSchema = 1;

struct CacheInfo {
  int level = 0;
  std::string type;             // "Data", "Unified"
  std::int64_t size_bytes = 0;
  int shared_by = 1;            // logical CPUs sharing one instance
};

struct MachineCpu {
  std::string vendor;
  std::string brand;
  int family = 0;
  int model = 0;
  int stepping = 0;
  std::vector<std::string> flags;  // the ISA features that matter here: sse2, avx2, fma, avx512f
  int logical_cpus = 0;
  int cores = 0;                   // physical cores
  std::vector<CacheInfo> caches;   // data and unified caches, by level
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
  double spread = 0.0;       // (max - min) / median
  int repetitions = 0;
  std::int64_t size = 0;     // bandwidth: working-set bytes of the best point; GEMM: n
  std::string variant;       // FMA: the ISA; bandwidth: "" or "nontemporal"
  std::string note;          // empty, or what qualifies the number (a worker ran unpinned, shared its CPU)
};

// GB/s (decimal), STREAM byte convention: write-allocate traffic is not counted.
struct BandwidthLevel {
  std::int64_t from_bytes = 0;  // the working-set range the plateau covers
  std::int64_t to_bytes = 0;
  std::map<std::string, Ceiling> kernels;  // "copy", "scale", "add", "triad", "copy_nt", "triad_nt"
  // False when the sweep showed no flat run for this level (a noisy host): the ceilings are
  // then the best of the points well inside the level's band of sizes, and less certain.
  bool plateau = true;
};

struct SweepPoint {
  std::int64_t bytes = 0;
  std::string kernel;        // "copy", ..., with "_nt" for non-temporal stores
  double best_gbps = 0.0;
  double median_gbps = 0.0;
};

struct CalibrationRun {
  int threads = 0;
  std::vector<int> cpus;                          // where the workers were pinned
  std::map<std::string, BandwidthLevel> bandwidth;  // "l1", "l2", "l3", "dram": the levels found
  std::map<std::string, Ceiling> compute;           // "fma_sp", "fma_dp", "gemm_sp", "gemm_dp"
  std::vector<SweepPoint> sweep;
  double seconds = 0.0;
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
  std::string created;   // ISO 8601, UTC
  std::string host;
  std::string hwprof_version;
  bool quick = false;
  MachineCpu cpu;
  TheoreticalPeaks theoretical;
  std::vector<CalibrationRun> runs;  // one per thread count

  // The run with exactly `threads` threads, or nullptr.
  const CalibrationRun* run_for(int threads) const noexcept;
};

std::string machine_to_json(const Machine& machine);
// Errors name the file, the place (line:column and JSON path) and what was expected.
Result<Machine> machine_from_json(std::string_view text, const std::string& source_name);
Result<Machine> load_machine(const std::string& path);

// This CPU, as a report describes it.
MachineCpu describe_this_cpu();
// Why a report measured on `report` does not describe `here`, or nullopt when it does.
std::optional<std::string> foreign_cpu(const MachineCpu& report, const MachineCpu& here);

// Where reports are kept: $XDG_DATA_HOME/hwprof/machines, else ~/.local/share/hwprof/machines.
std::string machine_store_dir();
// The file this machine's report has there: host name plus CPU identity.
std::string machine_store_path(const std::string& host, const MachineCpu& cpu);
// The stored report for this machine: an error says what is missing or wrong (absent,
// corrupt, another CPU's) and how to fix it.
Result<Machine> load_stored_machine();

struct CalibrationOptions {
  std::vector<int> threads;     // empty: 1 and the number of physical cores
  bool quick = false;           // ≤ 5 s: fewer sizes and repetitions
  bool single_precision = true;
  bool double_precision = true;
  std::function<void(const std::string&)> progress;  // called with short status lines
};

Result<Machine> calibrate(const CalibrationOptions& options);

}  // namespace hwprof
