// CPUID → CpuIdentity, and the counter family whose group files fit that CPU.
//
// Where the model numbers come from:
// - Intel: intel/perfmon mapfile.csv, which maps "GenuineIntel-6-<model>" to an event list:
//   55 (steppings 0-4 SKX, 5-F Cascade Lake/Cooper Lake, same uncore and FP events),
//   6A and 6C (ICX), 8F (SPR), CF (EMR: the Sapphire Rapids event list with the same
//   FP_ARITH and IMC CAS encodings), AD and AE (GNR: Granite Rapids-SP/AP and -D). The names
//   match Linux arch/x86/include/asm/intel-family.h (SKYLAKE_X, ICELAKE_X, ICELAKE_D,
//   SAPPHIRERAPIDS_X, EMERALDRAPIDS_X, GRANITERAPIDS_X, GRANITERAPIDS_D).
// - AMD: Linux arch/x86/kernel/cpu/amd.c, bsp_init_amd(), "Figure out Zen generations":
//   family 17h models 30-4F, 60-7F, 90-91, A0-AF are Zen 2 (00-2F and 50-5F are Zen 1);
//   family 19h models 00-0F and 20-5F are Zen 3, 10-1F and 60-AF are Zen 4; family 1Ah models
//   00-2F, 40-4F and 60-7F are Zen 5 (X86_FEATURE_ZEN5; 50-5F, 80-AF and C0-CF are Zen 6,
//   which no group here covers yet).
#include <cstdint>
#include <string>

#include "common/cpuid.hpp"
#include "counters/cpu_identity.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof {
namespace {

bool in_range(int value, int low, int high) {
  return value >= low && value <= high;
}

std::string register_chars(std::uint32_t value) {
  std::string out;
  for (int shift = 0; shift < 32; shift += 8) out += static_cast<char>((value >> shift) & 0xffU);
  return out;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

}  // namespace

namespace detail {

CpuIdentity identity_from_cpuid(const CpuidFn& cpuid) {
  CpuIdentity cpu;
  const CpuidRegs leaf0 = cpuid(0, 0);
  cpu.vendor = cpuid_vendor(cpuid);
  if (cpu.vendor.empty()) return cpu;
  if (leaf0.eax >= 1) {
    const std::uint32_t eax = cpuid(1, 0).eax;
    const std::uint32_t ecx = cpuid(1, 0).ecx;
    const int base_family = static_cast<int>((eax >> 8) & 0xfU);
    const int base_model = static_cast<int>((eax >> 4) & 0xfU);
    cpu.stepping = static_cast<int>(eax & 0xfU);
    // SDM Vol. 2A, CPUID leaf 01H: the extended fields count only for families 6 and 15.
    cpu.family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xffU) : base_family;
    cpu.model = (base_family == 0x6 || base_family == 0xf) ? (static_cast<int>((eax >> 16) & 0xfU) << 4) + base_model : base_model;
    cpu.hypervisor = ((ecx >> 31) & 1U) != 0;
  }
  if (cpuid(0x80000000U, 0).eax >= 0x80000004U) {
    std::string brand;
    for (std::uint32_t leaf = 0x80000002U; leaf <= 0x80000004U; ++leaf) {
      const CpuidRegs r = cpuid(leaf, 0);
      brand += register_chars(r.eax) + register_chars(r.ebx) + register_chars(r.ecx) + register_chars(r.edx);
    }
    cpu.brand = trimmed(brand.substr(0, brand.find('\0')));
  }
  return cpu;
}

}  // namespace detail

CpuIdentity detect_cpu() {
  return detail::identity_from_cpuid(detail::this_cpu_cpuid());
}

std::string counter_family(const CpuIdentity& cpu) {
  if (cpu.vendor == "GenuineIntel" && cpu.family == 6) {
    switch (cpu.model) {
      case 0x55:
        return "skylake-sp";
      case 0x6A:
      case 0x6C:
        return "icelake-sp";
      case 0x8F:
      case 0xCF:
        return "sapphire-rapids";
      case 0xAD:
      case 0xAE:
        return "granite-rapids";
      default:
        return "generic";
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
  if (cpu.vendor == "AuthenticAMD" && cpu.family == 0x1A) {
    const int m = cpu.model;
    if (in_range(m, 0x00, 0x2F) || in_range(m, 0x40, 0x4F) || in_range(m, 0x60, 0x7F)) return "zen5";
  }
  return "generic";
}

std::string counter_family_note(const std::string& family) {
  if (family == "zen5") {
    return "Zen 5: libpfm4 4.13 has no Zen 5 PMU (its FP events need libpfm4 >= 4.14 or raw encodings); the groups use raw "
           "encodings on the kernel's cpu, amd_umc and amd_l3 PMUs, from Linux perf's amdzen5 event list";
  }
  if (family == "granite-rapids") {
    return "Granite Rapids: libpfm4 4.13 has no Granite Rapids PMU; the groups use raw encodings on the kernel's cpu and "
           "uncore_imc PMUs, from Intel perfmon's GNR event lists";
  }
  if (family == "generic") {
    return "no FLOP, DRAM or LLC event tables for this CPU: only the kernel's generic events (cycles, instructions, caches, "
           "branches) and software events; a group file with raw encodings (counters/README.md) can add more";
  }
  return {};
}

}  // namespace hwprof
