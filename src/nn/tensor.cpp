// Tensor storage from the tracking allocator: 64-byte-aligned blocks, counted process-wide
// with relaxed atomics (the peak is a maximum kept by compare-and-swap).
#include "hwprof/tensor.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

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
    // aligned_alloc needs a multiple of the alignment; a zero-byte tensor still gets a block.
    const auto rounded = static_cast<std::size_t>((size + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment);
    data = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
    if (data == nullptr) throw std::bad_alloc();
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    raise_peak(g_current.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  }
  ~Storage() {
    std::free(data);
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
  return s;
}

void reset_peak_allocation() noexcept { g_peak.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed); }

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

void* Tensor::data() noexcept { return storage_ ? storage_->data : nullptr; }
const void* Tensor::data() const noexcept { return storage_ ? storage_->data : nullptr; }

Tensor Tensor::reshaped(Shape shape) const {
  if (checked_numel(shape) != numel_) throw std::invalid_argument("Tensor::reshaped: element count differs");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

}  // namespace hwprof
