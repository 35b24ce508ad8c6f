#include "session/region_variants.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include "common/stages.hpp"

namespace hwprof::session {
namespace {

void add_figures(std::atomic<std::uint64_t>& calls, std::atomic<std::uint64_t>& ns, std::atomic<double>& flops, std::atomic<double>& bytes,
                 std::uint64_t n, std::uint64_t t, double f, double b) noexcept {
  calls.fetch_add(n, std::memory_order_relaxed);
  ns.fetch_add(t, std::memory_order_relaxed);
  if (f > 0) flops.fetch_add(f, std::memory_order_relaxed);
  if (b > 0) bytes.fetch_add(b, std::memory_order_relaxed);
}

}  // namespace

int VariantTable::find(std::uint64_t key) const noexcept {
  for (std::size_t i = 0; i < kVariantSlots; ++i) {
    if (keys_[i].load(std::memory_order_acquire) == key) return static_cast<int>(i);
  }
  return -1;
}

// An empty slot, else the one with the least time, its figures moved to `other` (exchanged
// out, so that a call another thread adds meanwhile lands in the new variant, not nowhere).
int VariantTable::claim(std::uint64_t key) noexcept {
  std::size_t least = 0;
  for (std::size_t i = 0; i < kVariantSlots; ++i) {
    if (keys_[i].load(std::memory_order_relaxed) == 0) {
      keys_[i].store(key, std::memory_order_release);
      return static_cast<int>(i);
    }
    if (figures_[i].ns.load(std::memory_order_relaxed) < figures_[least].ns.load(std::memory_order_relaxed)) least = i;
  }
  Figures& f = figures_[least];
  add_figures(other_.calls, other_.ns, other_.flops, other_.bytes, f.calls.exchange(0), f.ns.exchange(0), f.flops.exchange(0.0),
              f.bytes.exchange(0.0));
  keys_[least].store(key, std::memory_order_release);
  return static_cast<int>(least);
}

void VariantTable::add(std::uint64_t key, double ns, double flops, double bytes) noexcept {
  int slot = find(key);
  if (slot < 0) {
    // Taken for a few loads and stores by whichever thread found no slot for its variant.
    for (int spins = 0; lock_.test_and_set(std::memory_order_acquire); ++spins) {
      if (spins > 1000) std::this_thread::yield();
    }
    slot = find(key);
    if (slot < 0) slot = claim(key);
    lock_.clear(std::memory_order_release);
  }
  Figures& f = figures_[static_cast<std::size_t>(slot)];
  add_figures(f.calls, f.ns, f.flops, f.bytes, 1, static_cast<std::uint64_t>(std::llround(std::max(0.0, ns))), flops, bytes);
}

void VariantTable::extend(std::uint64_t key, double ns) noexcept {
  const int slot = find(key);
  (slot >= 0 ? figures_[static_cast<std::size_t>(slot)].ns : other_.ns)
      .fetch_add(static_cast<std::uint64_t>(std::llround(std::max(0.0, ns))), std::memory_order_relaxed);
}

void VariantTable::clear() noexcept {
  for (std::size_t i = 0; i < kVariantSlots; ++i) {
    keys_[i].store(0, std::memory_order_relaxed);
    figures_[i].calls.store(0, std::memory_order_relaxed);
    figures_[i].ns.store(0, std::memory_order_relaxed);
    figures_[i].flops.store(0.0, std::memory_order_relaxed);
    figures_[i].bytes.store(0.0, std::memory_order_relaxed);
  }
  other_.calls.store(0, std::memory_order_relaxed);
  other_.ns.store(0, std::memory_order_relaxed);
  other_.flops.store(0.0, std::memory_order_relaxed);
  other_.bytes.store(0.0, std::memory_order_relaxed);
}

std::vector<VariantTable::Entry> VariantTable::entries() const {
  std::vector<Entry> out;
  for (std::size_t i = 0; i < kVariantSlots; ++i) {
    const std::uint64_t key = keys_[i].load(std::memory_order_acquire);
    const Figures& f = figures_[i];
    const std::uint64_t calls = f.calls.load(std::memory_order_relaxed);
    if (key == 0 || calls == 0) continue;
    out.push_back({key, calls, static_cast<double>(f.ns.load(std::memory_order_relaxed)), f.flops.load(std::memory_order_relaxed),
                   f.bytes.load(std::memory_order_relaxed)});
  }
  if (const std::uint64_t calls = other_.calls.load(std::memory_order_relaxed); calls > 0) {
    out.push_back({0, calls, static_cast<double>(other_.ns.load(std::memory_order_relaxed)), other_.flops.load(std::memory_order_relaxed),
                   other_.bytes.load(std::memory_order_relaxed)});
  }
  return out;
}

}  // namespace hwprof::session
