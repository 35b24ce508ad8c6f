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
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/compute.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {

enum class StreamKernel { copy, scale, add, triad };
const char* stream_kernel_name(StreamKernel kernel) noexcept;
// Bytes one element of the kernel counts by STREAM's convention: 16 (copy, scale) or 24.
int stream_bytes_per_element(StreamKernel kernel) noexcept;

struct BandwidthOptions {
  std::vector<int> cpus;                   // one worker pinned to each; size = threads
  std::vector<std::int64_t> working_sets;  // total bytes of the kernel's arrays, all threads together
  std::vector<StreamKernel> kernels = {StreamKernel::copy, StreamKernel::scale, StreamKernel::add, StreamKernel::triad};
  bool nontemporal = false;          // streaming stores (for the DRAM ceiling)
  double seconds_per_point = 0.002;  // minimum timed time per repetition (2 ms measures what 20 ms does)
  int repetitions = 5;               // after one warm-up; one slowed by another process is run again
  std::optional<Isa> isa;            // the kernels' ISA; unset: the best this CPU and OS support
};

struct BandwidthSample {
  std::int64_t working_set = 0;  // bytes actually used: the request rounded to whole blocks per worker
  StreamKernel kernel = StreamKernel::triad;
  bool nontemporal = false;
  double best_gbps = 0.0;  // decimal GB/s, STREAM bytes
  double median_gbps = 0.0;
  double spread = 0.0;  // (max - min) / median over the repetitions
  int repetitions = 0;
  std::string isa;      // the kernel variant: "sse2", "avx2_fma", "avx512f"
  bool pinned = false;  // every worker was pinned and sched_getcpu() found it on its CPU after each repetition
  int shared = 0;       // repetitions kept although a worker had its CPU less than 90 % of the time
  std::string note;     // empty, or what qualifies the number: a worker ran unpinned or elsewhere,
                        // or repetitions kept although another process shared a worker's CPU
};

// Why measure_bandwidth would measure nothing with these options, or "" when they are fine:
// no CPUs, a CPU outside this process's affinity mask, no sizes or kernels, an ISA this CPU
// lacks, more memory than the machine has.
std::string bandwidth_options_error(const BandwidthOptions& options);

// A team of pinned workers with their arrays, kept across measurements: on some hosts
// first-touching gigabytes of arrays costs more than measuring them (a guest whose memory the
// host backs on first use: 1.5 GB took 1-5 s on this project's VMs), so a sweep allocates once.
class StreamWorkers {
 public:
  // Arrays exactly as large as `options` need; later measurements may use other kernels and
  // sizes that fit them (holds).
  explicit StreamWorkers(const BandwidthOptions& options);
  ~StreamWorkers();
  StreamWorkers(const StreamWorkers&) = delete;
  StreamWorkers& operator=(const StreamWorkers&) = delete;

  // Why there are no workers ("" when there are).
  const std::string& error() const noexcept { return error_; }
  // Every working set of `options` fits the arrays with every kernel of it.
  bool holds(const BandwidthOptions& options) const noexcept;
  // One sample per (working set, kernel) of `options`, whose cpus must be these workers';
  // nothing, and `why`, when the options are wrong or a working set does not fit.
  std::vector<BandwidthSample> measure(const BandwidthOptions& options, std::string* why);

 private:
  void start(const BandwidthOptions& options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

// One sample per (working set, kernel), sizes outer, on a team of its own. Nothing when the
// options are wrong or the threads or memory cannot be had; `why`, when given, then says what
// went wrong.
std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options);
std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options, std::string* why);

// Working-set sizes for a sweep from `first` to `last` bytes (both included): a geometric
// grid of `per_octave` points per octave, twice as dense within a factor of 2 of each size
// in `dense_at` (where a cache may end and the curve steps down). Sizes are whole blocks per
// worker for every kernel (multiples of threads × 1536), ascending, without duplicates.
std::vector<std::int64_t> sweep_sizes(std::int64_t first, std::int64_t last, int per_octave, const std::vector<std::int64_t>& dense_at, int threads);

// The kernels themselves, for tests: one pass over `n` elements (a multiple of
// kStreamBlock; arrays 64-byte aligned) with the ISA's variant. False when this CPU or OS
// lacks the ISA.
inline constexpr std::size_t kStreamBlock = 32;
bool run_stream_kernel(StreamKernel kernel, Isa isa, bool nontemporal, double* a, double* b, double* c, std::size_t n, double scalar) noexcept;

}  // namespace hwprof::calibration
