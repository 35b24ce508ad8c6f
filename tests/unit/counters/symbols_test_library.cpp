// A tiny shared library for the symbolizer's tests (symbols_test.cpp): an exported function,
// named by .dynsym even in the copy stripped of everything else, and a function of its own
// (internal linkage), which only .symtab names: in the stripped copy it is module+offset.
#include <cstdint>

#if defined(__clang__)
#define HWPROF_TEST_KEEP __attribute__((noinline, used))
#else
#define HWPROF_TEST_KEEP __attribute__((noipa, used))  // noipa: no clone under another name
#endif

namespace {

HWPROF_TEST_KEEP int internal_scale(int x) {
  volatile int y = x;
  return y * 3 + 1;
}

}  // namespace

namespace hwprof_symbols_test {

HWPROF_TEST_KEEP __attribute__((visibility("default"))) int exported_sum(int a, double b) {
  return a + static_cast<int>(b) + internal_scale(a);
}

}  // namespace hwprof_symbols_test

// The addresses, through exported C functions so that the test needs no mangled name.
extern "C" __attribute__((visibility("default"))) std::uintptr_t hwprof_symbols_test_internal() {
  return reinterpret_cast<std::uintptr_t>(&internal_scale);
}
extern "C" __attribute__((visibility("default"))) std::uintptr_t hwprof_symbols_test_exported() {
  return reinterpret_cast<std::uintptr_t>(&hwprof_symbols_test::exported_sum);
}
