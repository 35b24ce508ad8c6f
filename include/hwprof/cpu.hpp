// The CPU this runs on, as CPUID reports it, and the counter family hwprof uses for it.
#pragma once

#include <string>
#include "hwprof/export.hpp"

HWPROF_API_BEGIN

namespace hwprof {

struct CpuIdentity {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  int family = 0;      // display family (base + extended)
  int model = 0;       // display model (base + extended)
  int stepping = 0;
  std::string brand;        // "Intel(R) Xeon(R) Platinum 8480+"
  bool hypervisor = false;  // CPUID.1:ECX[31]: running in a virtual machine
};

CpuIdentity detect_cpu();
// "skylake-sp" (Skylake-SP and Cascade Lake), "icelake-sp", "sapphire-rapids" (and Emerald
// Rapids), "granite-rapids", "zen2", "zen3", "zen4", "zen5", or "generic" for anything else.
std::string counter_family(const CpuIdentity& cpu);
// What to know about a family's groups, in a sentence, or "" when nothing: where libpfm4 4.13
// cannot name its events (the groups then use raw encodings, and from where), and for
// "generic" that there are no FLOP, DRAM or LLC events.
std::string counter_family_note(const std::string& family);

}  // namespace hwprof
HWPROF_API_END
