// A region's calls by variant (an op's calls by input shapes: observer::note_variant), in bounded
// memory however many variants a program makes: kVariantSlots are kept apart, and when a new
// one comes and they are all taken, the one with the least time so far gives up its slot and
// its figures go to `other` (the Space-Saving rule of Metwally, Agrawal and El Abbadi, "Efficient
// computation of frequent and top-k elements in data streams", 2005, with time as the weight and
// exact figures: a variant's figures count its calls since it took its slot, and `other` holds
// the rest, so that the variants and `other` always add up to the region's calls). The variants
// that take the most time keep their slots. docs/torch.md, "Shapes".
//
// The measured path (add) finds its variant's slot with a few loads and adds to it; only a
// variant without a slot takes the table's lock. Never allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/session.hpp"

namespace hwprof::session {

inline constexpr std::size_t kVariantSlots = 16;

class VariantTable {
 public:
  // One call of variant `key` (non-zero).
  void add(std::uint64_t key, double ns, double flops, double bytes) noexcept;
  // Time added to a call already counted (a piece of it: observer::enter_continuing).
  void extend(std::uint64_t key, double ns) noexcept;
  void clear() noexcept;

  struct Entry {
    std::uint64_t key = 0;  // 0: `other`
    std::uint64_t calls = 0;
    double ns = 0.0;
    double flops = 0.0;
    double bytes = 0.0;
  };
  // The kept variants with calls, then `other` where it has any (key 0).
  std::vector<Entry> entries() const;

 private:
  struct Figures {
    std::atomic<std::uint64_t> calls{0};
    std::atomic<std::uint64_t> ns{0};  // whole nanoseconds: one atomic add, not a compare-exchange loop
    std::atomic<double> flops{0.0};
    std::atomic<double> bytes{0.0};
  };
  // The slots' keys side by side (two cache lines to search), their figures apart.
  int find(std::uint64_t key) const noexcept;  // the slot, or -1
  int claim(std::uint64_t key) noexcept;       // under the lock

  std::atomic<std::uint64_t> keys_[kVariantSlots] = {};
  Figures figures_[kVariantSlots];
  Figures other_;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
};

}  // namespace hwprof::session
