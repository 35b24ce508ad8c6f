// Tensor storage from the tracking allocator: 64-byte-aligned blocks, counted process-wide
// with relaxed atomics (the peak is a maximum kept by compare-and-swap).
#include "hwprof/engine/tensor.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define HWPROF_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define HWPROF_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define HWPROF_POISON(p, n) ((void)(p), (void)(n))
#define HWPROF_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace hwprof {
namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_deallocations{0};

void raise_peak(std::int64_t candidate) noexcept {
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (candidate > peak && !g_peak.compare_exchange_weak(peak, candidate, std::memory_order_relaxed)) {
  }
}

// Freed blocks kept for the next tensor of the same size. An engine frees and allocates the
// same sizes every iteration; glibc returns big blocks to the kernel (munmap, or trimming
// the heap top), and each fresh page then faults on first touch: ~2,300 faults, a few ms, per
// ResNet-18 batch-8 iteration on a VM. Under AddressSanitizer a kept block is poisoned, so a
// use after free is still caught.
constexpr std::size_t kCacheMinBytes = std::size_t{1} << 20;

struct BlockCache {
  std::mutex mutex;
  std::multimap<std::size_t, void*> blocks;  // size → block
  std::size_t bytes = 0;
};
std::atomic<std::int64_t> g_cached{0};

// Never destroyed: tensors in other static objects may be freed after this file's statics.
BlockCache& block_cache() {
  static auto* cache = new BlockCache;
  return *cache;
}

void* take_cached(std::size_t size) {
  if (size < kCacheMinBytes) return nullptr;
  BlockCache& c = block_cache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.blocks.find(size);
  if (it == c.blocks.end()) return nullptr;
  void* block = it->second;
  c.blocks.erase(it);
  c.bytes -= size;
  g_cached.store(static_cast<std::int64_t>(c.bytes), std::memory_order_relaxed);
  HWPROF_UNPOISON(block, size);
  return block;
}

bool keep(void* block, std::size_t size) noexcept {
  if (size < kCacheMinBytes) return false;
  BlockCache& c = block_cache();
  try {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (c.bytes + size > static_cast<std::size_t>(std::max<std::int64_t>(0, g_peak.load(std::memory_order_relaxed)))) return false;
    c.blocks.emplace(size, block);
    c.bytes += size;
    g_cached.store(static_cast<std::int64_t>(c.bytes), std::memory_order_relaxed);
  } catch (...) {  // no memory for the map's node: free the block instead
    return false;
  }
  HWPROF_POISON(block, size);
  return true;
}

std::size_t block_size(std::int64_t bytes) {
  // aligned_alloc needs a multiple of the alignment; a zero-byte tensor still gets a block.
  const auto rounded = static_cast<std::size_t>((bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment);
  return rounded == 0 ? kTensorAlignment : rounded;
}

std::int64_t checked_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("Tensor: negative dimension");
    if (d != 0 && n > (std::int64_t{1} << 60) / d) throw std::length_error("Tensor: size overflows");
    n *= d;
  }
  return n;
}

}  // namespace

struct Tensor::Storage {
  void* data = nullptr;
  std::int64_t bytes = 0;

  explicit Storage(std::int64_t size) : bytes(size) {
    const std::size_t block = block_size(size);
    data = take_cached(block);
    if (data == nullptr) data = std::aligned_alloc(kTensorAlignment, block);
    if (data == nullptr) {
      release_cached_tensor_memory();  // the cache's blocks of other sizes, then one more try
      data = std::aligned_alloc(kTensorAlignment, block);
    }
    if (data == nullptr) throw std::bad_alloc();
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    raise_peak(g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  }
  ~Storage() {
    if (!keep(data, block_size(bytes))) std::free(data);
    g_current.fetch_sub(bytes, std::memory_order_relaxed);
    g_deallocations.fetch_add(1, std::memory_order_relaxed);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

AllocationStats allocation_stats() noexcept {
  AllocationStats s;
  s.current_bytes = g_current.load(std::memory_order_relaxed);
  s.peak_bytes = g_peak.load(std::memory_order_relaxed);
  s.allocations = g_allocations.load(std::memory_order_relaxed);
  s.deallocations = g_deallocations.load(std::memory_order_relaxed);
  s.cached_bytes = g_cached.load(std::memory_order_relaxed);
  return s;
}

std::int64_t release_cached_tensor_memory() noexcept {
  BlockCache& c = block_cache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  const auto released = static_cast<std::int64_t>(c.bytes);
  for (auto& [size, block] : c.blocks) {
    HWPROF_UNPOISON(block, size);
    std::free(block);
  }
  c.blocks.clear();
  c.bytes = 0;
  g_cached.store(0, std::memory_order_relaxed);
  return released;
}

void reset_peak_allocation() noexcept {
  g_peak.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

Tensor Tensor::empty(Shape shape, DType dtype) {
  Tensor t;
  t.numel_ = checked_numel(shape);
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.storage_ = std::make_shared<Storage>(t.numel_ * 4);
  return t;
}

Tensor Tensor::zeros(Shape shape, DType dtype) {
  Tensor t = empty(std::move(shape), dtype);
  std::memset(t.data(), 0, static_cast<std::size_t>(t.bytes()));
  return t;
}

void* Tensor::data() noexcept {
  return storage_ ? storage_->data : nullptr;
}
const void* Tensor::data() const noexcept {
  return storage_ ? storage_->data : nullptr;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (checked_numel(shape) != numel_) throw std::invalid_argument("Tensor::reshaped: element count differs");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace hwprof
