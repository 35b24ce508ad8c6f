// The CPU this runs on, as CPUID reports it, and the counter family hwprof uses for it.
#pragma once

#include <string>
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct CpuIdentity {
  std::string vendor;      // "GenuineIntel", "AuthenticAMD", ...
  int family = 0;          // display family (base + extended)
  int model = 0;           // display model (base + extended)
  int stepping = 0;
  std::string brand;       // "Intel(R) Xeon(R) Platinum 8480+"
  bool hypervisor = false; // CPUID.1:ECX[31]: running in a virtual machine
};

CpuIdentity detect_cpu();
// "skylake-sp" (Skylake-SP and Cascade Lake), "icelake-sp", "sapphire-rapids", "zen2",
// "zen3", "zen4", or "generic" for anything else.
std::string counter_family(const CpuIdentity& cpu);

}  // namespace hwprof
HWPROF_API_END
