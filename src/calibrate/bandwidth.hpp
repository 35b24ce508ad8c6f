// Memory-bandwidth ceilings: STREAM's copy, scale, add and triad kernels, written for this
// project, swept over working-set sizes from inside L1 to beyond the last-level cache, with
// worker threads pinned one per core and arrays first-touched by the thread that uses them.
//
// Bytes follow STREAM's convention (McCalpin, "STREAM: Sustainable Memory Bandwidth in High
// Performance Computers"): copy and scale move 2 × 8 bytes per element, add and triad
// 3 × 8 bytes; write-allocate traffic is not counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/compute.hpp"

namespace hwprof::detail {

enum class StreamKernel { copy, scale, add, triad };
const char* stream_kernel_name(StreamKernel kernel) noexcept;
// Bytes one element of the kernel counts by STREAM's convention: 16 (copy, scale) or 24.
int stream_bytes_per_element(StreamKernel kernel) noexcept;

struct BandwidthOptions {
  std::vector<int> cpus;                      // one worker pinned to each; size = threads
  std::vector<std::int64_t> working_sets;     // total bytes of the kernel's arrays, all threads together
  std::vector<StreamKernel> kernels = {StreamKernel::copy, StreamKernel::scale, StreamKernel::add, StreamKernel::triad};
  bool nontemporal = false;                   // streaming stores (for the DRAM ceiling)
  double seconds_per_point = 0.002;           // minimum timed time per repetition (2 ms measures what 20 ms does)
  int repetitions = 5;                        // after one warm-up; one slowed by another process is run again
  std::optional<Isa> isa;                     // the kernels' ISA; unset: the best this CPU and OS support
};

struct BandwidthSample {
  std::int64_t working_set = 0;  // bytes actually used: the request rounded to whole blocks per worker
  StreamKernel kernel = StreamKernel::triad;
  bool nontemporal = false;
  double best_gbps = 0.0;        // decimal GB/s, STREAM bytes
  double median_gbps = 0.0;
  double spread = 0.0;           // (max - min) / median over the repetitions
  int repetitions = 0;
  std::string isa;               // the kernel variant: "sse2", "avx2_fma", "avx512f"
  bool pinned = false;           // every worker was pinned and sched_getcpu() found it on its CPU after each repetition
  std::string note;              // empty, or what qualifies the number: a worker ran unpinned or elsewhere,
                                 // or repetitions kept although another process shared a worker's CPU
};

// Why measure_bandwidth would measure nothing with these options, or "" when they are fine:
// no CPUs, a CPU outside this process's affinity mask, no sizes or kernels, an ISA this CPU
// lacks, more memory than the machine has.
std::string bandwidth_options_error(const BandwidthOptions& options);

// One sample per (working set, kernel), sizes outer. Nothing when the options are wrong or
// the threads or memory cannot be had; `why`, when given, then says what went wrong.
std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options);
std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options, std::string* why);

// Working-set sizes for a sweep: geometric, from well inside L1 (per thread) to at least
// 8 × the last-level cache (DRAM is measured from 4× on) (and at least `min_dram_bytes`), denser around each cache size.
// `cache_bytes_per_level` as for find_plateaus: bytes per level as the threads see them
// together. Sizes are whole blocks per worker for every kernel (multiples of threads × 1536).
std::vector<std::int64_t> sweep_sizes(const std::vector<std::int64_t>& cache_bytes_per_level, int threads,
                                      std::int64_t min_dram_bytes);

// A region of the curve where bandwidth is flat, and the memory level it belongs to.
struct Plateau {
  std::string level;             // "l1", "l2", "l3", "dram"
  std::int64_t from_bytes = 0;   // working-set range of the points in it
  std::int64_t to_bytes = 0;
  double best_gbps = 0.0;        // best of the points' values
  double median_gbps = 0.0;      // median of the points' values
  double spread = 0.0;           // (max - min) / median of the points' values
  int points = 0;
  bool flat = true;              // false: no plateau was found; the level's band stands in
};

// Finds plateaus in a (working set bytes, GB/s) curve and names them by the cache sizes
// (bytes per level as the threads see them together: L1/L2 per core × threads, shared L3).
// Robust to noise: a level whose points do not form a plateau is left out, not invented.
// At most one plateau per level, in order of size.
std::vector<Plateau> find_plateaus(const std::vector<std::pair<std::int64_t, double>>& curve,
                                   const std::vector<std::int64_t>& cache_bytes_per_level);

// For each level that `found` lacks (a host too noisy for a flat run), the points well inside
// that level's band of sizes — away from the transitions at both ends — marked flat = false,
// so the report still has every level's ceiling and says it is not a plateau. A level with
// no such point stays absent. Returns found's plateaus and these, in order of size.
std::vector<Plateau> with_band_fallbacks(std::vector<Plateau> found,
                                         const std::vector<std::pair<std::int64_t, double>>& curve,
                                         const std::vector<std::int64_t>& cache_bytes_per_level);

// The kernels themselves, for tests: one pass over `n` elements (a multiple of
// kStreamBlock; arrays 64-byte aligned) with the ISA's variant. False when this CPU or OS
// lacks the ISA.
inline constexpr std::size_t kStreamBlock = 32;
bool run_stream_kernel(StreamKernel kernel, Isa isa, bool nontemporal, double* a, double* b, double* c, std::size_t n,
                       double scalar) noexcept;

}  // namespace hwprof::detail
