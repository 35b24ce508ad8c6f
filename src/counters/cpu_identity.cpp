// CPUID → CpuIdentity. Which counter family a CPU has is data: the match files of
// counters/<family>/ (counter_family.cpp).
#include <cstdint>
#include <string>

#include "common/cpuid.hpp"
#include "common/stages.hpp"
#include "counters/cpu_identity.hpp"
#include "hwprof/cpu.hpp"

namespace hwprof {
namespace {

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

namespace counters {

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

}  // namespace counters

CpuIdentity detect_cpu() {
  return counters::identity_from_cpuid(common::this_cpu_cpuid());
}

}  // namespace hwprof
