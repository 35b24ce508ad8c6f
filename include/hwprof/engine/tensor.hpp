// Tensor: a dense, row-major, 64-byte-aligned array of float32 or int32 with a full shape
// (batch dimension first, unlike a Graph's per-sample shapes). Storage is shared between a
// tensor and its reshaped views, and comes from one process-wide tracking allocator whose
// current and peak bytes are the measured side of memory profiling.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hwprof/engine/graph.hpp"
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

// What the tensor allocator has handed out, process-wide (every thread together).
struct AllocationStats {
  std::int64_t current_bytes = 0;  // live now
  std::int64_t peak_bytes = 0;     // the most live at once since the last reset_peak_allocation()
  std::int64_t allocations = 0;    // since process start
  std::int64_t deallocations = 0;
  // Freed blocks of 1 MiB or more kept for reuse (not live, not counted above): the next
  // tensor of the same size takes one instead of fresh pages from the kernel, whose first
  // touch faults. At most as many bytes as the peak of live ones are kept.
  std::int64_t cached_bytes = 0;
};
AllocationStats allocation_stats() noexcept;
// Starts a new peak from the bytes live now (for measuring one phase's peak).
void reset_peak_allocation() noexcept;
// Gives every cached block back to the system; returns the bytes released.
std::int64_t release_cached_tensor_memory() noexcept;

inline constexpr std::size_t kTensorAlignment = 64;

class Tensor {
 public:
  Tensor() = default;
  // Uninitialised storage. Throws std::bad_alloc when memory runs out (a Tensor of a
  // negative or overflowing size is a programming error: the Graph's shapes never are).
  static Tensor empty(Shape shape, DType dtype = DType::f32);
  static Tensor zeros(Shape shape, DType dtype = DType::f32);

  bool defined() const noexcept { return storage_ != nullptr; }
  const Shape& shape() const noexcept { return shape_; }
  std::int64_t dim(std::size_t i) const { return shape_.at(i); }
  DType dtype() const noexcept { return dtype_; }
  std::int64_t numel() const noexcept { return numel_; }
  std::int64_t bytes() const noexcept { return numel_ * 4; }  // float32 and int32 are 4 bytes

  void* data() noexcept;
  const void* data() const noexcept;
  float* f32() noexcept { return static_cast<float*>(data()); }
  const float* f32() const noexcept { return static_cast<const float*>(data()); }
  std::int32_t* i32() noexcept { return static_cast<std::int32_t*>(data()); }
  const std::int32_t* i32() const noexcept { return static_cast<const std::int32_t*>(data()); }

  // The same storage under another shape of equal numel.
  Tensor reshaped(Shape shape) const;
  // True when both name the same storage.
  bool shares_storage_with(const Tensor& other) const noexcept { return storage_ == other.storage_; }

 private:
  struct Storage;
  std::shared_ptr<Storage> storage_;
  Shape shape_;
  DType dtype_ = DType::f32;
  std::int64_t numel_ = 0;
};

}  // namespace hwprof
HWPROF_API_END
