// STREAM's copy, scale, add and triad (McCalpin: c = a, b = s·c, c = a + b, a = b + s·c on
// doubles; 2, 2, 3 and 3 arrays of 8-byte elements counted per element, write-allocate traffic
// not counted) over a working-set sweep, on a team of pinned workers.
//
// Kernels. One loop body per kernel, compiled three times: for the portable default build
// (SSE2, x86-64's baseline) and with target attributes for AVX2+FMA and AVX-512F, picked at run
// time, so one binary reaches each machine's widest vectors. The loops are written so GCC
// vectorizes them at -O2 and -O3: restrict pointers, and an inner loop over a block of
// kStreamBlock elements whose trip count is a compile-time constant (GCC 12's -O2 cost model
// vectorizes only loops it needs no scalar remainder for). Non-temporal variants store with
// _mm_stream_pd / _mm256_stream_pd / _mm512_stream_pd and end with an sfence: their stores
// need no write-allocate read of the line, which normal stores pay in DRAM traffic (half as
// much again for copy, a third for triad) although STREAM's convention does not count it.
//
// Workers (a PinnedTeam). Worker i pins itself to cpus[i], then allocates and first-touches its own chunk of
// the three arrays (so the pages land on its NUMA node, and chunks never share a cache line).
// This thread times each repetition from the barrier that releases the workers to the barrier
// the last of them reaches; the warm-up finds how many kernel calls make a repetition last at
// least seconds_per_point. Each worker reads its CPU time around its calls: a repetition in
// which a worker had its CPU less than 90 % of the time measured another process, not memory,
// and is run again; each worker also checks with sched_getcpu() that it runs where it was pinned.
#include "calibrate/bandwidth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <immintrin.h>

#include "calibrate/pinned_team.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

// STREAM's scalar and initial values (a = 1, b = 2, c = 0).
constexpr double kScalar = 3.0;
constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Arrays of one worker sit 17 cache lines apart modulo 4 KiB, so a[i], b[i] and c[i] never
// share their low 12 address bits: a load whose address matches an earlier store there waits
// for it (4K aliasing) even when the full addresses differ.
constexpr std::size_t kSkew = 17 * kCacheLine;

using Pass = void (*)(double*, double*, double*, std::size_t, double) noexcept;

template <StreamKernel K>
[[gnu::always_inline]] inline void stream_pass(double* __restrict a, double* __restrict b, double* __restrict c, std::size_t n, double s) noexcept {
  for (std::size_t i = 0; i < n; i += kStreamBlock) {
    // Fully unrolled at -O2 too: one block is 4 cache lines of straight-line vector code.
#pragma GCC unroll 32
    for (std::size_t j = 0; j < kStreamBlock; ++j) {
      if constexpr (K == StreamKernel::copy) {
        c[i + j] = a[i + j];
      } else if constexpr (K == StreamKernel::scale) {
        b[i + j] = s * c[i + j];
      } else if constexpr (K == StreamKernel::add) {
        c[i + j] = a[i + j] + b[i + j];
      } else {
        a[i + j] = b[i + j] + s * c[i + j];
      }
    }
    // Without it GCC turns the copy into one memcpy call, whose large-size path switches to
    // non-temporal stores on its own. Free: it only orders memory accesses the loop makes anyway.
    asm volatile("" ::: "memory");
  }
}

template <StreamKernel K>
struct Sse2 {
  static void pass(double* __restrict a, double* __restrict b, double* __restrict c, std::size_t n, double s) noexcept {
    stream_pass<K>(a, b, c, n, s);
  }
};

template <StreamKernel K>
struct Avx2 {
  [[gnu::target("avx2,fma")]] static void pass(double* __restrict a, double* __restrict b, double* __restrict c, std::size_t n, double s) noexcept {
    stream_pass<K>(a, b, c, n, s);
  }
};

template <StreamKernel K>
struct Avx512 {
  [[gnu::target("avx512f")]] static void pass(double* __restrict a, double* __restrict b, double* __restrict c, std::size_t n, double s) noexcept {
    stream_pass<K>(a, b, c, n, s);
  }
};

template <StreamKernel K>
struct Sse2Stream {
  static void pass(double* a, double* b, double* c, std::size_t n, double s) noexcept {
    const __m128d vs = _mm_set1_pd(s);
    for (std::size_t i = 0; i < n; i += kStreamBlock) {
#pragma GCC unroll 16
      for (std::size_t k = 0; k < kStreamBlock; k += 2) {
        const std::size_t j = i + k;
        if constexpr (K == StreamKernel::copy) {
          _mm_stream_pd(c + j, _mm_load_pd(a + j));
        } else if constexpr (K == StreamKernel::scale) {
          _mm_stream_pd(b + j, _mm_mul_pd(vs, _mm_load_pd(c + j)));
        } else if constexpr (K == StreamKernel::add) {
          _mm_stream_pd(c + j, _mm_add_pd(_mm_load_pd(a + j), _mm_load_pd(b + j)));
        } else {
          _mm_stream_pd(a + j, _mm_add_pd(_mm_load_pd(b + j), _mm_mul_pd(vs, _mm_load_pd(c + j))));
        }
      }
    }
    _mm_sfence();
  }
};

template <StreamKernel K>
struct Avx2Stream {
  [[gnu::target("avx2,fma")]] static void pass(double* a, double* b, double* c, std::size_t n, double s) noexcept {
    const __m256d vs = _mm256_set1_pd(s);
    for (std::size_t i = 0; i < n; i += kStreamBlock) {
#pragma GCC unroll 16
      for (std::size_t k = 0; k < kStreamBlock; k += 4) {
        const std::size_t j = i + k;
        if constexpr (K == StreamKernel::copy) {
          _mm256_stream_pd(c + j, _mm256_load_pd(a + j));
        } else if constexpr (K == StreamKernel::scale) {
          _mm256_stream_pd(b + j, _mm256_mul_pd(vs, _mm256_load_pd(c + j)));
        } else if constexpr (K == StreamKernel::add) {
          _mm256_stream_pd(c + j, _mm256_add_pd(_mm256_load_pd(a + j), _mm256_load_pd(b + j)));
        } else {
          _mm256_stream_pd(a + j, _mm256_fmadd_pd(vs, _mm256_load_pd(c + j), _mm256_load_pd(b + j)));
        }
      }
    }
    _mm_sfence();
  }
};

template <StreamKernel K>
struct Avx512Stream {
  [[gnu::target("avx512f")]] static void pass(double* a, double* b, double* c, std::size_t n, double s) noexcept {
    const __m512d vs = _mm512_set1_pd(s);
    for (std::size_t i = 0; i < n; i += kStreamBlock) {
#pragma GCC unroll 16
      for (std::size_t k = 0; k < kStreamBlock; k += 8) {
        const std::size_t j = i + k;
        if constexpr (K == StreamKernel::copy) {
          _mm512_stream_pd(c + j, _mm512_load_pd(a + j));
        } else if constexpr (K == StreamKernel::scale) {
          _mm512_stream_pd(b + j, _mm512_mul_pd(vs, _mm512_load_pd(c + j)));
        } else if constexpr (K == StreamKernel::add) {
          _mm512_stream_pd(c + j, _mm512_add_pd(_mm512_load_pd(a + j), _mm512_load_pd(b + j)));
        } else {
          _mm512_stream_pd(a + j, _mm512_fmadd_pd(vs, _mm512_load_pd(c + j), _mm512_load_pd(b + j)));
        }
      }
    }
    _mm_sfence();
  }
};

// The four kernels of one variant, indexed by StreamKernel.
template <template <StreamKernel> class V>
constexpr std::array<Pass, 4> passes() {
  return {&V<StreamKernel::copy>::pass, &V<StreamKernel::scale>::pass, &V<StreamKernel::add>::pass, &V<StreamKernel::triad>::pass};
}

Pass pass_for(StreamKernel kernel, Isa isa, bool nontemporal) noexcept {
  static constexpr std::array<Pass, 4> kSse2 = passes<Sse2>();
  static constexpr std::array<Pass, 4> kAvx2 = passes<Avx2>();
  static constexpr std::array<Pass, 4> kAvx512 = passes<Avx512>();
  static constexpr std::array<Pass, 4> kSse2Stream = passes<Sse2Stream>();
  static constexpr std::array<Pass, 4> kAvx2Stream = passes<Avx2Stream>();
  static constexpr std::array<Pass, 4> kAvx512Stream = passes<Avx512Stream>();
  const auto k = static_cast<std::size_t>(kernel);
  switch (isa) {
    case Isa::avx512f:
      return nontemporal ? kAvx512Stream[k] : kAvx512[k];
    case Isa::avx2_fma:
      return nontemporal ? kAvx2Stream[k] : kAvx2[k];
    case Isa::sse2:
      break;
  }
  return nontemporal ? kSse2Stream[k] : kSse2[k];
}

bool isa_supported(Isa isa) {
  const std::vector<Isa> isas = supported_isas();
  return std::find(isas.begin(), isas.end(), isa) != isas.end();
}

std::size_t round_up(std::size_t bytes, std::size_t multiple) {
  return (bytes + multiple - 1) / multiple * multiple;
}

// Elements per array per worker for a working set: whole blocks, at least one.
std::size_t elements_per_worker(std::int64_t working_set, StreamKernel kernel, std::size_t workers) {
  const auto per_worker =
      static_cast<std::size_t>(std::max<std::int64_t>(working_set, 0)) / (static_cast<std::size_t>(stream_bytes_per_element(kernel)) * workers);
  return std::max(kStreamBlock, per_worker / kStreamBlock * kStreamBlock);
}

std::size_t largest_elements_per_worker(const BandwidthOptions& options) {
  std::size_t largest = kStreamBlock;
  for (std::int64_t w : options.working_sets) {
    for (StreamKernel k : options.kernels) largest = std::max(largest, elements_per_worker(w, k, options.cpus.size()));
  }
  return largest;
}

// One worker's block: a, b and c, kSkew apart modulo a page, each 64-byte aligned.
std::size_t array_stride(std::size_t elements) {
  return round_up(elements * sizeof(double), 4096) + kSkew;
}
std::size_t block_bytes(std::size_t elements) {
  const std::size_t bytes = 3 * array_stride(elements);
  return bytes >= kHugePage ? round_up(bytes, kHugePage) : round_up(bytes, 4096);
}

// What the workers run in one repetition.
struct Job {
  Pass pass = nullptr;
  std::size_t elements = 0;
  std::int64_t calls = 0;
};

// The workers of a sweep: a pinned team, each worker with its own three arrays, allocated and
// first-touched by the worker on its CPU.
class StreamTeam {
 public:
  StreamTeam(const std::vector<int>& cpus, std::size_t elements)
      : arrays_(cpus.size()), team_(cpus, [this, elements](std::size_t i) { allocate(arrays_[i], elements); }) {
    error_ = team_.error();
    for (std::size_t i = 0; i < arrays_.size() && error_.empty(); ++i) {
      if (arrays_[i].block == nullptr) {
        error_ = "cannot allocate " + std::to_string(block_bytes(elements) >> 20) + " MiB of arrays for worker " + std::to_string(i) + " (on CPU " +
                 std::to_string(cpus[i]) + "): lower the largest working set";
      }
    }
  }

  ~StreamTeam() {
    for (Arrays& arrays : arrays_) std::free(arrays.block);
  }

  StreamTeam(const StreamTeam&) = delete;
  StreamTeam& operator=(const StreamTeam&) = delete;

  const std::string& error() const { return error_; }

  // `released`: seconds from releasing the workers to the last one's finish, on this thread's
  // clock (what a rate is over); `shortest`: the shortest worker's own run (what sizes one).
  PinnedTeam::Timing run(const Job& job) {
    return team_.run([this, job](std::size_t i) {
      const Arrays w = arrays_[i];  // copies: the calls are opaque, so nothing is reloaded between them
      if (w.block == nullptr) return;
      for (std::int64_t r = 0; r < job.calls; ++r) job.pass(w.a, w.b, w.c, job.elements, kScalar);
    });
  }

  bool on_their_cpus() const noexcept { return team_.on_their_cpus(); }
  double least_cpu_share() const noexcept { return team_.least_cpu_share(); }
  std::string placement_note() const { return team_.placement_note(); }

 private:
  // One cache line (at least) per worker's pointers, so their writes never share one.
  struct alignas(kCacheLine) Arrays {
    void* block = nullptr;
    double* a = nullptr;
    double* b = nullptr;
    double* c = nullptr;
  };

  static void allocate(Arrays& w, std::size_t elements) {
    const std::size_t bytes = block_bytes(elements);
    w.block = std::aligned_alloc(bytes >= kHugePage ? kHugePage : 4096, bytes);
    if (w.block == nullptr) return;
    // Fewer TLB misses on the DRAM-sized sweep points; a hint the kernel may ignore.
    if (bytes >= kHugePage) ::madvise(w.block, bytes, MADV_HUGEPAGE);
    auto* base = static_cast<char*>(w.block);
    const std::size_t stride = array_stride(elements);
    w.a = reinterpret_cast<double*>(base);
    w.b = reinterpret_cast<double*>(base + stride);
    w.c = reinterpret_cast<double*>(base + 2 * stride);
    for (std::size_t i = 0; i < elements; ++i) {
      w.a[i] = 1.0;
      w.b[i] = 2.0;
      w.c[i] = 0.0;
    }
  }

  std::vector<Arrays> arrays_;  // before the team: the team's setup fills them
  PinnedTeam team_;
  std::string error_;
};

// Calls that would make a repetition last `seconds`, from one that ran `calls` in `took`. A
// call shorter than the barriers' latency makes the estimate low, never high, so it only ever
// overshoots by the 10 % margin.
std::int64_t grown(std::int64_t calls, double took, double seconds) noexcept {
  const double wanted = static_cast<double>(calls) * 1.1 * seconds / std::max(took, 1e-9);
  return std::max(calls + 1, static_cast<std::int64_t>(std::ceil(std::min(wanted, 1e12))));
}

// The warm-up: calls per repetition, grown from `calls` until every worker's own run lasts
// `seconds`. Not the released time: beside a process that keeps a worker's CPU busy, a worker
// waits a time slice for its CPU after every release, and one call then looked long enough (a
// 6 KiB L1 point came out at 0.003 GB/s, against 18 GB/s for DRAM).
std::int64_t calls_for(StreamTeam& team, Pass pass, std::size_t elements, double seconds, std::int64_t calls) {
  for (;;) {
    const double took = team.run({pass, elements, calls}).shortest;
    if (took >= seconds) return calls;
    calls = grown(calls, took, seconds);
  }
}

// What qualifies one point's repetitions.
struct PointNotes {
  std::string placement;  // where a worker was found off its CPU, if one was
  int shared = 0;         // repetitions kept although a worker had its CPU less than kMinCpuShare of the time
};

// Rates (GB/s) of `repetitions` repetitions after the warm-up, into `rates`. A hiccup during
// the warm-up can make a few calls look long enough; a repetition that then lasts under half
// the target shows it, and the warm-up resumes from there (a few times at most).
PointNotes measure_point(StreamTeam& team, Pass pass, std::size_t elements, double bytes_per_call, double seconds, int repetitions,
                         std::vector<double>& rates) {
  constexpr int kMaxRestarts = 3;
  PointNotes notes;
  std::int64_t calls = calls_for(team, pass, elements, seconds, 1);
  int restarts = 0;
  int reruns = 0;
  rates.clear();
  while (static_cast<int>(rates.size()) < repetitions) {
    const double took = team.run({pass, elements, calls}).released;
    if (notes.placement.empty() && !team.on_their_cpus()) notes.placement = team.placement_note();
    if (took < 0.5 * seconds && restarts < kMaxRestarts) {
      ++restarts;
      calls = calls_for(team, pass, elements, seconds, grown(calls, took, seconds));
      rates.clear();
      notes.shared = 0;
      continue;
    }
    if (team.least_cpu_share() < kMinCpuShare) {
      if (reruns < repetitions) {
        ++reruns;
        continue;
      }
      ++notes.shared;
    }
    rates.push_back(bytes_per_call * static_cast<double>(calls) / took / 1e9);
  }
  return notes;
}

}  // namespace

const char* stream_kernel_name(StreamKernel kernel) noexcept {
  switch (kernel) {
    case StreamKernel::copy:
      return "copy";
    case StreamKernel::scale:
      return "scale";
    case StreamKernel::add:
      return "add";
    case StreamKernel::triad:
      return "triad";
  }
  return "unknown";
}

int stream_bytes_per_element(StreamKernel kernel) noexcept {
  return kernel == StreamKernel::copy || kernel == StreamKernel::scale ? 16 : 24;
}

bool run_stream_kernel(StreamKernel kernel, Isa isa, bool nontemporal, double* a, double* b, double* c, std::size_t n, double scalar) noexcept {
  try {
    if (!isa_supported(isa)) return false;
  } catch (...) {
    return false;
  }
  pass_for(kernel, isa, nontemporal)(a, b, c, n / kStreamBlock * kStreamBlock, scalar);
  return true;
}

std::string bandwidth_options_error(const BandwidthOptions& options) {
  if (options.cpus.empty()) return "no CPUs to run on: give one CPU per worker thread";
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const bool known = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0;
  for (std::size_t i = 0; i < options.cpus.size(); ++i) {
    const int cpu = options.cpus[i];
    if (cpu < 0 || cpu >= CPU_SETSIZE || (known && !CPU_ISSET(cpu, &allowed))) {
      return "CPU " + std::to_string(cpu) + " is not one this process may run on (see `taskset -p " + std::to_string(::getpid()) +
             "`): pick CPUs from its affinity mask";
    }
    if (std::find(options.cpus.begin(), options.cpus.begin() + static_cast<std::ptrdiff_t>(i), cpu) !=
        options.cpus.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "CPU " + std::to_string(cpu) + " is listed twice: one worker per CPU";
    }
  }
  if (options.working_sets.empty()) return "no working-set sizes to measure";
  for (std::int64_t w : options.working_sets) {
    if (w <= 0) return "working set of " + std::to_string(w) + " bytes: sizes must be positive";
  }
  if (options.kernels.empty()) return "no kernels to run: choose among copy, scale, add and triad";
  if (!(options.seconds_per_point > 0.0 && options.seconds_per_point <= 60.0)) {
    return "seconds per point " + std::to_string(options.seconds_per_point) + ": must be above 0 and at most 60";
  }
  if (options.repetitions < 1) return "repetitions " + std::to_string(options.repetitions) + ": at least 1";
  if (options.isa && !isa_supported(*options.isa)) {
    return std::string("ISA ") + isa_name(*options.isa) + ": this CPU or OS does not support it";
  }
  const double needed = static_cast<double>(block_bytes(largest_elements_per_worker(options))) * static_cast<double>(options.cpus.size());
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (physical > 0.0 && needed > 0.5 * physical) {
    return "the largest working set needs " + std::to_string(static_cast<long long>(needed / (1 << 20))) +
           " MiB of arrays, more than half of this machine's " + std::to_string(static_cast<long long>(physical / (1 << 20))) + " MiB: lower it";
  }
  return "";
}

struct StreamWorkers::Impl {
  Impl(const std::vector<int>& team_cpus, std::size_t team_elements) : cpus(team_cpus), elements(team_elements), team(team_cpus, team_elements) {}
  std::vector<int> cpus;
  std::size_t elements;  // per array per worker
  StreamTeam team;
};

StreamWorkers::StreamWorkers(const BandwidthOptions& options) {
  start(options);
}

void StreamWorkers::start(const BandwidthOptions& options) {
  if (error_ = bandwidth_options_error(options); !error_.empty()) return;
  impl_ = std::make_unique<Impl>(options.cpus, largest_elements_per_worker(options));
  error_ = impl_->team.error();
}

StreamWorkers::~StreamWorkers() = default;

bool StreamWorkers::holds(const BandwidthOptions& options) const noexcept {
  return impl_ && error_.empty() && options.cpus == impl_->cpus && largest_elements_per_worker(options) <= impl_->elements;
}

std::vector<BandwidthSample> StreamWorkers::measure(const BandwidthOptions& options, std::string* why) {
  const auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = reason;
    return std::vector<BandwidthSample>{};
  };
  if (!error_.empty() || !impl_) return fail(error_.empty() ? "no workers" : error_);
  if (options.cpus != impl_->cpus) return fail("these workers run on other CPUs than the options give");
  if (std::string error = bandwidth_options_error(options); !error.empty()) return fail(error);
  if (largest_elements_per_worker(options) > impl_->elements) {
    return fail("a working set is larger than these workers' arrays: make a team for it");
  }
  const std::vector<Isa> isas = supported_isas();
  const Isa isa = options.isa ? *options.isa : (isas.empty() ? Isa::sse2 : isas.back());
  const std::size_t workers = options.cpus.size();
  StreamTeam& team = impl_->team;

  std::vector<BandwidthSample> samples;
  samples.reserve(options.working_sets.size() * options.kernels.size());
  std::vector<double> rates;
  rates.reserve(static_cast<std::size_t>(options.repetitions));
  for (std::int64_t working_set : options.working_sets) {
    for (StreamKernel kernel : options.kernels) {
      const std::size_t elements = elements_per_worker(working_set, kernel, workers);
      const double bytes_per_call = static_cast<double>(elements * workers) * stream_bytes_per_element(kernel);
      const Pass pass = pass_for(kernel, isa, options.nontemporal);
      const PointNotes notes = measure_point(team, pass, elements, bytes_per_call, options.seconds_per_point, options.repetitions, rates);
      const RepetitionStats stats = summarize_repetitions(rates);
      BandwidthSample& s = samples.emplace_back();
      s.working_set = static_cast<std::int64_t>(elements * workers) * stream_bytes_per_element(kernel);
      s.kernel = kernel;
      s.nontemporal = options.nontemporal;
      s.best_gbps = stats.best;
      s.median_gbps = stats.median;
      s.spread = stats.spread;
      s.repetitions = options.repetitions;
      s.isa = isa_name(isa);
      s.pinned = notes.placement.empty();
      s.shared = notes.shared;
      s.note = notes.placement;
      if (notes.shared > 0) {
        s.note += std::string(s.note.empty() ? "" : "; ") + std::to_string(notes.shared) + " of " + std::to_string(options.repetitions) +
                  " repetitions shared a worker's CPU with another process";
      }
    }
  }
  return samples;
}

std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options) {
  return measure_bandwidth(options, nullptr);
}

std::vector<BandwidthSample> measure_bandwidth(const BandwidthOptions& options, std::string* why) {
  return StreamWorkers(options).measure(options, why);
}

std::vector<std::int64_t> sweep_sizes(std::int64_t first, std::int64_t last, int per_octave, const std::vector<std::int64_t>& dense_at, int threads) {
  const std::int64_t workers = std::max(threads, 1);
  // Whole blocks per worker for 2- and 3-array kernels: lcm(2, 3) × 8 bytes × kStreamBlock.
  const std::int64_t granule = std::int64_t{6} * 8 * static_cast<std::int64_t>(kStreamBlock) * workers;
  const int steps = std::max(1, per_octave) * 2;  // the fine grid; every other point away from dense_at
  first = std::max(first, granule);
  last = std::max(last, first);
  const auto dense = [&](double bytes) {
    return std::any_of(dense_at.begin(), dense_at.end(),
                       [&](std::int64_t c) { return c > 0 && bytes >= 0.5 * static_cast<double>(c) && bytes <= 2.0 * static_cast<double>(c); });
  };
  const auto on_granule = [&](double bytes) {
    return std::max(granule, static_cast<std::int64_t>(std::llround(bytes / static_cast<double>(granule))) * granule);
  };
  std::vector<std::int64_t> sizes;
  const int k0 = static_cast<int>(std::ceil(steps * std::log2(static_cast<double>(first))));
  // Stop a quarter step short of `last`, so the final point is not a near-duplicate of it.
  const double stop = static_cast<double>(last) / std::exp2(0.25 / steps);
  for (int k = k0;; ++k) {
    const double bytes = std::exp2(static_cast<double>(k) / steps);
    if (bytes >= stop) break;
    if (k != k0 && k % 2 != 0 && !dense(bytes)) continue;
    const std::int64_t size = on_granule(bytes);
    if (sizes.empty() || size > sizes.back()) sizes.push_back(size);
  }
  const std::int64_t final_size = (last + granule - 1) / granule * granule;
  if (sizes.empty() || final_size > sizes.back()) sizes.push_back(final_size);
  return sizes;
}

}  // namespace hwprof::calibration
