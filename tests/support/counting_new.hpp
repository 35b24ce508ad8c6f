// Counts the allocations of the whole binary by replacing the global operator new, for the
// tests of measured paths that must allocate nothing (docs/design.md, "Rules every part keeps"). Include it in exactly one
// file of a test binary of its own: the replacement is program-wide.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

namespace hwprof::test {
inline std::atomic<long> allocations{0};
}  // namespace hwprof::test

// The replacement operator new below allocates with malloc, so its operator delete frees
// with free; GCC cannot see the pairing and warns about every delete.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t size) {
  hwprof::test::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
