// Where a region keeps the times of its calls: a bounded, uniform sample of them.
//
// Each region holds its first kInlineSamples samples in a small block allocated when it is
// registered, so that a name costs well under a kilobyte. A region called more often claims a
// larger block (up to SessionOptions::samples_per_region samples) from its session's arena:
// address space reserved once, when the session opens, and committed page by page as samples
// are written — the measured path never calls the allocator. Once a region's samples are full,
// call n replaces a kept sample with probability k/(n+1) (Vitter's Algorithm R), so the kept
// samples stay a uniform sample of every call however long the program runs; a region that
// finds the arena used up keeps its small block and samples into that instead. Totals, the
// minimum and the maximum are kept exactly over every call. docs/regions.md describes it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>
#include "common/stages.hpp"

namespace hwprof::session {

inline constexpr std::size_t kInlineSamples = 64;
inline constexpr std::size_t kNotKept = std::numeric_limits<std::size_t>::max();

// C++20 atomic<double>::fetch_add is a compare-exchange loop; so are these two.
void atomic_min(std::atomic<double>& target, double value) noexcept;
void atomic_max(std::atomic<double>& target, double value) noexcept;

// Where call `n` (counted from 0) keeps its sample in a reservoir of `k`: slot n while n < k,
// then a slot below k with probability k/(n+1), else kNotKept. The random draw is a hash of
// (n, seed), so that no state is shared between the threads that record; `seed` should be
// well mixed already (RegionSamples mixes a region's id once).
std::size_t reservoir_slot(std::uint64_t n, std::size_t k, std::uint64_t seed) noexcept;

// Address space for the regions' larger sample blocks, reserved once (mmap, MAP_NORESERVE:
// untouched pages cost no memory) and handed out by a lock-free bump index. Zeroed.
class SampleArena {
 public:
  SampleArena() = default;
  ~SampleArena();
  SampleArena(const SampleArena&) = delete;
  SampleArena& operator=(const SampleArena&) = delete;

  // Room for `samples` (inclusive and exclusive time each); false when the address space
  // cannot be had (the regions then keep their small blocks only).
  bool reserve(std::size_t samples) noexcept;
  // A zeroed block of `samples`, or nullptr when the arena is used up.
  float* claim(std::size_t samples) noexcept;
  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t claimed() const noexcept { return next_.load(std::memory_order_relaxed); }

 private:
  float* base_ = nullptr;
  std::size_t capacity_ = 0;  // samples
  std::atomic<std::size_t> next_{0};
};

// A block of fresh anonymous pages (mmap, MAP_NORESERVE): zero, and no memory until touched.
class ZeroPages {
 public:
  ZeroPages() = default;
  ~ZeroPages();
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  // `bytes` of them; false when the address space cannot be had.
  bool map(std::size_t bytes) noexcept;
  void* data() const noexcept { return base_; }

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
};

// One region's kept samples and its exact totals.
class RegionSamples {
 public:
  // Allocates the small block: min(capacity, kInlineSamples) samples now, the rest claimed
  // from the arena by the call that first needs them. `seed` decorrelates regions' draws.
  // `all`: every sample allocated now (the session's own hidden regions).
  void allocate(std::size_t capacity, std::uint64_t seed, bool all = false);

  // Records call `n` (its index among the region's calls). Never allocates, never throws.
  // Returns the total inclusive time before it.
  double record(std::uint64_t n, SampleArena* arena, double inclusive, double exclusive) noexcept;
  // Adds a piece of call `n` to it (observer::enter_continuing) when `calls` (the region's calls
  // now) says no call came since: to the totals, and to its kept sample, where it has one.
  void extend(std::uint64_t n, std::uint64_t calls, double inclusive, double exclusive) noexcept;
  void clear() noexcept;

  // The samples kept after `calls` calls: min(calls, the reservoir's size).
  std::size_t kept(std::uint64_t calls) const noexcept;
  std::size_t capacity() const noexcept { return capacity_; }
  std::vector<double> inclusive(std::uint64_t calls) const;
  std::vector<double> exclusive(std::uint64_t calls) const;

  double total_inclusive() const noexcept { return total_inclusive_.load(std::memory_order_relaxed); }
  double total_exclusive() const noexcept { return total_exclusive_.load(std::memory_order_relaxed); }
  double min_inclusive() const noexcept { return min_inclusive_.load(std::memory_order_relaxed); }
  double max_inclusive() const noexcept { return max_inclusive_.load(std::memory_order_relaxed); }
  double min_exclusive() const noexcept { return min_exclusive_.load(std::memory_order_relaxed); }
  double max_exclusive() const noexcept { return max_exclusive_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kNotYet = 0;    // the large block is not needed yet, or not asked for
  static constexpr int kClaiming = 1;  // one thread is claiming it
  static constexpr int kClaimed = 2;
  static constexpr int kNone = 3;  // the arena had none left: the small block is the reservoir

  std::size_t reservoir(std::uint64_t n, SampleArena* arena) noexcept;
  float* at(std::size_t slot) const noexcept;
  std::vector<double> copy(std::uint64_t calls, std::size_t offset) const;

  std::size_t capacity_ = 0;
  std::size_t small_count_ = 0;
  std::uint64_t seed_ = 0;
  std::unique_ptr<float[]> small_;  // two floats per sample: inclusive, exclusive
  std::atomic<float*> large_{nullptr};
  std::atomic<int> large_state_{kNotYet};
  std::atomic<double> total_inclusive_{0.0};
  std::atomic<double> total_exclusive_{0.0};
  std::atomic<double> min_inclusive_{std::numeric_limits<double>::infinity()};
  std::atomic<double> max_inclusive_{0.0};
  std::atomic<double> min_exclusive_{std::numeric_limits<double>::infinity()};
  std::atomic<double> max_exclusive_{0.0};
};

}  // namespace hwprof::session
