// One seam for the CPUID instruction, so that every rule that reads the processor (its
// identity, its caches) can be tested on the recorded answers of processors we don't have.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hwprof/result.hpp"

namespace hwprof::common {

struct CpuidRegs {
  std::uint32_t eax = 0;
  std::uint32_t ebx = 0;
  std::uint32_t ecx = 0;
  std::uint32_t edx = 0;
};

// CPUID(leaf, subleaf). A leaf above the processor's maximum (leaf 0's or 0x80000000's EAX)
// answers all zeros here, where real processors repeat another leaf: callers check the
// maximum and can then treat zeros as "nothing said".
using CpuidFn = std::function<CpuidRegs(std::uint32_t leaf, std::uint32_t subleaf)>;

// This processor (all zeros off x86).
CpuidFn this_cpu_cpuid();

// Recorded answers, one per line: "LEAF SUBLEAF EAX EBX ECX EDX" in hexadecimal (the leaf
// with or without 0x; '#' starts a comment). Leaves not listed answer zeros. Errors name the
// source and the line.
Result<CpuidFn> cpuid_from_text(std::string_view text, const std::string& source_name);

// The 12 vendor characters of leaf 0 ("GenuineIntel", "AuthenticAMD"; empty without CPUID).
std::string cpuid_vendor(const CpuidFn& cpuid);

}  // namespace hwprof::common
