#include "session/region_variants.hpp"

#include <thread>

namespace hwprof::detail {
namespace {

void add_figures(std::atomic<std::uint64_t>& calls, std::atomic<double>& ns, std::atomic<double>& flops, std::atomic<double>& bytes,
                 std::uint64_t n, double t, double f, double b) noexcept {
  calls.fetch_add(n, std::memory_order_relaxed);
  ns.fetch_add(t, std::memory_order_relaxed);
  if (f > 0) flops.fetch_add(f, std::memory_order_relaxed);
  if (b > 0) bytes.fetch_add(b, std::memory_order_relaxed);
}

}  // namespace

VariantTable::Slot* VariantTable::find(std::uint64_t key) noexcept {
  for (Slot& s : slots_) {
    if (s.key.load(std::memory_order_acquire) == key) return &s;
  }
  return nullptr;
}

// An empty slot, else the one with the least time, its figures moved to `other` (exchanged
// out, so that a call another thread adds meanwhile lands in the new variant, not nowhere).
VariantTable::Slot* VariantTable::claim(std::uint64_t key) noexcept {
  Slot* least = &slots_[0];
  for (Slot& s : slots_) {
    if (s.key.load(std::memory_order_relaxed) == 0) {
      s.key.store(key, std::memory_order_release);
      return &s;
    }
    if (s.figures.ns.load(std::memory_order_relaxed) < least->figures.ns.load(std::memory_order_relaxed)) least = &s;
  }
  Figures& f = least->figures;
  add_figures(other_.calls, other_.ns, other_.flops, other_.bytes, f.calls.exchange(0), f.ns.exchange(0.0), f.flops.exchange(0.0),
              f.bytes.exchange(0.0));
  least->key.store(key, std::memory_order_release);
  return least;
}

void VariantTable::add(std::uint64_t key, double ns, double flops, double bytes) noexcept {
  Slot* s = find(key);
  if (s == nullptr) {
    // Taken for a few loads and stores by whichever thread found no slot for its variant.
    for (int spins = 0; lock_.test_and_set(std::memory_order_acquire); ++spins) {
      if (spins > 1000) std::this_thread::yield();
    }
    s = find(key);
    if (s == nullptr) s = claim(key);
    lock_.clear(std::memory_order_release);
  }
  add_figures(s->figures.calls, s->figures.ns, s->figures.flops, s->figures.bytes, 1, ns, flops, bytes);
}

void VariantTable::extend(std::uint64_t key, double ns) noexcept {
  Slot* s = find(key);
  (s != nullptr ? s->figures.ns : other_.ns).fetch_add(ns, std::memory_order_relaxed);
}

void VariantTable::clear() noexcept {
  for (Slot& s : slots_) {
    s.key.store(0, std::memory_order_relaxed);
    s.figures.calls.store(0, std::memory_order_relaxed);
    s.figures.ns.store(0.0, std::memory_order_relaxed);
    s.figures.flops.store(0.0, std::memory_order_relaxed);
    s.figures.bytes.store(0.0, std::memory_order_relaxed);
  }
  other_.calls.store(0, std::memory_order_relaxed);
  other_.ns.store(0.0, std::memory_order_relaxed);
  other_.flops.store(0.0, std::memory_order_relaxed);
  other_.bytes.store(0.0, std::memory_order_relaxed);
}

std::vector<VariantTable::Entry> VariantTable::entries() const {
  std::vector<Entry> out;
  for (const Slot& s : slots_) {
    const std::uint64_t key = s.key.load(std::memory_order_acquire);
    const std::uint64_t calls = s.figures.calls.load(std::memory_order_relaxed);
    if (key == 0 || calls == 0) continue;
    out.push_back({key, calls, s.figures.ns.load(std::memory_order_relaxed), s.figures.flops.load(std::memory_order_relaxed),
                   s.figures.bytes.load(std::memory_order_relaxed)});
  }
  if (const std::uint64_t calls = other_.calls.load(std::memory_order_relaxed); calls > 0) {
    out.push_back({0, calls, other_.ns.load(std::memory_order_relaxed), other_.flops.load(std::memory_order_relaxed),
                   other_.bytes.load(std::memory_order_relaxed)});
  }
  return out;
}

}  // namespace hwprof::detail
