// CPUID → CpuIdentity, and the counter family whose group files fit that CPU.
//
// Where the model numbers come from:
// - Intel: intel/perfmon mapfile.csv, which maps "GenuineIntel-6-<model>" to an event list:
//   55 (steppings 0-4 SKX, 5-F Cascade Lake/Cooper Lake, same uncore and FP events),
//   6A and 6C (ICX), 8F (SPR), CF (EMR: the Sapphire Rapids event list with the same
//   FP_ARITH and IMC CAS encodings). The names match Linux arch/x86/include/asm/intel-family.h
//   (SKYLAKE_X, ICELAKE_X, ICELAKE_D, SAPPHIRERAPIDS_X, EMERALDRAPIDS_X).
// - AMD: Linux arch/x86/kernel/cpu/amd.c, bsp_init_amd(), "Figure out Zen generations":
//   family 17h models 30-4F, 60-7F, 90-91, A0-AF are Zen 2 (00-2F and 50-5F are Zen 1);
//   family 19h models 00-0F and 20-5F are Zen 3, 10-1F and 60-AF are Zen 4.
#include <cstdint>
#include <string>

#include "hwprof/cpu.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hwprof {
namespace {

bool in_range(int value, int low, int high) { return value >= low && value <= high; }

#if defined(__x86_64__) || defined(__i386__)
std::string register_chars(std::uint32_t value) {
  std::string out;
  for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((value >> shift) & 0xffU);
  return out;
}

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}
#endif

}  // namespace

CpuIdentity detect_cpu() {
  CpuIdentity cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return cpu;
  cpu.vendor = register_chars(ebx) + register_chars(edx) + register_chars(ecx);
  if (eax >= 1 && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0) {
    const int base_family = static_cast<int>((eax >> 8) & 0xfU);
    const int base_model = static_cast<int>((eax >> 4) & 0xfU);
    cpu.stepping = static_cast<int>(eax & 0xfU);
    // SDM Vol. 2A, CPUID leaf 01H: the extended fields count only for families 6 and 15.
    cpu.family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xffU) : base_family;
    cpu.model = (base_family == 0x6 || base_family == 0xf) ? (static_cast<int>((eax >> 16) & 0xfU) << 4) + base_model
                                                           : base_model;
    cpu.hypervisor = ((ecx >> 31) & 1U) != 0;
  }
  if (__get_cpuid(0x80000000U, &eax, &ebx, &ecx, &edx) != 0 && eax >= 0x80000004U) {
    std::string brand;
    for (unsigned leaf = 0x80000002U; leaf <= 0x80000004U; ++leaf) {
      __get_cpuid(leaf, &eax, &ebx, &ecx, &edx);
      brand += register_chars(eax) + register_chars(ebx) + register_chars(ecx) + register_chars(edx);
    }
    cpu.brand = trimmed(brand.substr(0, brand.find('\0')));
  }
#endif
  return cpu;
}

std::string counter_family(const CpuIdentity& cpu) {
  if (cpu.vendor == "GenuineIntel" && cpu.family == 6) {
    switch (cpu.model) {
      case 0x55: return "skylake-sp";
      case 0x6A:
      case 0x6C: return "icelake-sp";
      case 0x8F:
      case 0xCF: return "sapphire-rapids";
      default: return "generic";
    }
  }
  if (cpu.vendor == "AuthenticAMD" && cpu.family == 0x17) {
    const int m = cpu.model;
    if (in_range(m, 0x30, 0x4F) || in_range(m, 0x60, 0x7F) || in_range(m, 0x90, 0x91) || in_range(m, 0xA0, 0xAF)) {
      return "zen2";
    }
  }
  if (cpu.vendor == "AuthenticAMD" && cpu.family == 0x19) {
    const int m = cpu.model;
    if (in_range(m, 0x00, 0x0F) || in_range(m, 0x20, 0x5F)) return "zen3";
    if (in_range(m, 0x10, 0x1F) || in_range(m, 0x60, 0xAF)) return "zen4";
  }
  return "generic";
}

}  // namespace hwprof
