#include "session/sample_reservoir.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include <sys/mman.h>
#include "common/stages.hpp"

namespace hwprof::session {
namespace {

// SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", 2014): a well-mixed 64-bit hash of a counter.
std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void store(float* where, double value) noexcept {
  std::atomic_ref<float>(*where).store(static_cast<float>(value), std::memory_order_relaxed);
}

float load(const float* where) noexcept {
  return std::atomic_ref<float>(*const_cast<float*>(where)).load(std::memory_order_relaxed);  // NOLINT: atomic_ref needs a non-const object
}

}  // namespace

void atomic_min(std::atomic<double>& target, double value) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (value < current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

void atomic_max(std::atomic<double>& target, double value) noexcept {
  double current = target.load(std::memory_order_relaxed);
  while (value > current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
  }
}

std::size_t reservoir_slot(std::uint64_t n, std::size_t k, std::uint64_t seed) noexcept {
  if (n < k) return static_cast<std::size_t>(n);
  // A draw in [0, n] by multiplying instead of dividing (Lemire, "Fast random integer
  // generation in an interval", 2019): a 64-bit division would be most of a region's cost.
  __extension__ using Wide = unsigned __int128;  // GCC and clang's; __extension__: not ISO C++
  const auto j = static_cast<std::uint64_t>((static_cast<Wide>(mix(n ^ seed)) * (n + 1)) >> 64);
  return j < k ? static_cast<std::size_t>(j) : kNotKept;
}

// ---- the arena ---------------------------------------------------------------------------

SampleArena::~SampleArena() {
  if (base_ != nullptr) ::munmap(base_, capacity_ * 2 * sizeof(float));
}

bool SampleArena::reserve(std::size_t samples) noexcept {
  if (base_ != nullptr || samples == 0) return base_ != nullptr;
  void* p = ::mmap(nullptr, samples * 2 * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = static_cast<float*>(p);
  capacity_ = samples;
  return true;
}

float* SampleArena::claim(std::size_t samples) noexcept {
  std::size_t start = next_.load(std::memory_order_relaxed);
  do {
    if (base_ == nullptr || samples > capacity_ - start) return nullptr;
  } while (!next_.compare_exchange_weak(start, start + samples, std::memory_order_relaxed));
  return base_ + 2 * start;  // fresh anonymous pages read as zero
}

ZeroPages::~ZeroPages() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

bool ZeroPages::map(std::size_t bytes) noexcept {
  if (base_ != nullptr || bytes == 0) return base_ != nullptr;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = p;
  bytes_ = bytes;
  return true;
}

// ---- one region ----------------------------------------------------------------------------

void RegionSamples::allocate(std::size_t capacity, std::uint64_t seed, bool all) {
  capacity_ = capacity;
  small_count_ = all ? capacity : std::min(capacity, kInlineSamples);
  seed_ = mix(seed);  // mixed once here, not on every call
  small_ = std::make_unique<float[]>(2 * small_count_);
}

// The reservoir's size for call n, claiming the large block the first time it is needed.
std::size_t RegionSamples::reservoir(std::uint64_t n, SampleArena* arena) noexcept {
  if (n < small_count_ || capacity_ == small_count_) return small_count_;
  int state = large_state_.load(std::memory_order_acquire);
  if (state == kNotYet && large_state_.compare_exchange_strong(state, kClaiming, std::memory_order_acq_rel)) {
    float* block = arena != nullptr ? arena->claim(capacity_ - small_count_) : nullptr;
    large_.store(block, std::memory_order_relaxed);
    state = block != nullptr ? kClaimed : kNone;
    large_state_.store(state, std::memory_order_release);
  }
  // Another thread is claiming: a bump of an index, so this wait is a few loads (a yield
  // only if that thread was descheduled in between).
  for (int spins = 0; state == kClaiming || state == kNotYet; ++spins) {
    if (spins > 1000) std::this_thread::yield();
    state = large_state_.load(std::memory_order_acquire);
  }
  return state == kClaimed ? capacity_ : small_count_;
}

float* RegionSamples::at(std::size_t slot) const noexcept {
  if (slot < small_count_) return small_.get() + 2 * slot;
  return large_.load(std::memory_order_relaxed) + 2 * (slot - small_count_);
}

double RegionSamples::record(std::uint64_t n, SampleArena* arena, double inclusive, double exclusive) noexcept {
  const double before = total_inclusive_.fetch_add(inclusive, std::memory_order_relaxed);
  total_exclusive_.fetch_add(exclusive, std::memory_order_relaxed);
  atomic_min(min_inclusive_, inclusive);
  atomic_max(max_inclusive_, inclusive);
  atomic_min(min_exclusive_, exclusive);
  atomic_max(max_exclusive_, exclusive);
  if (capacity_ == 0) return before;
  const std::size_t slot = reservoir_slot(n, reservoir(n, arena), seed_);
  if (slot == kNotKept) return before;
  float* where = at(slot);
  store(where, inclusive);
  store(where + 1, exclusive);
  return before;
}

void RegionSamples::extend(std::uint64_t n, std::uint64_t calls, double inclusive, double exclusive) noexcept {
  total_inclusive_.fetch_add(inclusive, std::memory_order_relaxed);
  total_exclusive_.fetch_add(exclusive, std::memory_order_relaxed);
  if (capacity_ == 0 || calls != n + 1) return;  // another call came since: only the totals have it
  const std::size_t size = large_state_.load(std::memory_order_acquire) == kClaimed ? capacity_ : small_count_;
  const std::size_t slot = reservoir_slot(n, size, seed_);
  if (slot == kNotKept) return;
  float* where = at(slot);
  const double whole = load(where) + inclusive;
  store(where, whole);
  store(where + 1, load(where + 1) + exclusive);
  atomic_max(max_inclusive_, whole);
}

void RegionSamples::clear() noexcept {
  total_inclusive_.store(0.0, std::memory_order_relaxed);
  total_exclusive_.store(0.0, std::memory_order_relaxed);
  min_inclusive_.store(std::numeric_limits<double>::infinity(), std::memory_order_relaxed);
  max_inclusive_.store(0.0, std::memory_order_relaxed);
  min_exclusive_.store(std::numeric_limits<double>::infinity(), std::memory_order_relaxed);
  max_exclusive_.store(0.0, std::memory_order_relaxed);
}

std::size_t RegionSamples::kept(std::uint64_t calls) const noexcept {
  const std::size_t size = large_state_.load(std::memory_order_acquire) == kClaimed ? capacity_ : small_count_;
  return static_cast<std::size_t>(std::min<std::uint64_t>(calls, size));
}

std::vector<double> RegionSamples::copy(std::uint64_t calls, std::size_t offset) const {
  const std::size_t n = kept(calls);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = load(at(i) + offset);
  return out;
}

std::vector<double> RegionSamples::inclusive(std::uint64_t calls) const {
  return copy(calls, 0);
}

std::vector<double> RegionSamples::exclusive(std::uint64_t calls) const {
  return copy(calls, 1);
}

}  // namespace hwprof::session
