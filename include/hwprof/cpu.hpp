// The CPU this runs on, as CPUID reports it, and the counter family hwprof uses for it.
#pragma once

#include <string>
#include <vector>

#include "hwprof/export.hpp"
#include "hwprof/result.hpp"

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

// The counter family of a CPU: the folder under counters/ whose group files fit it.
struct CounterFamily {
  std::string name;        // "zen5", "sapphire-rapids", ...; "generic" where no family's match file names the CPU
  std::string note;        // what to know about the family's groups, in a sentence, or ""
  std::string match_file;  // the match file that names the CPU; "" for "generic"
};

// Reads the match file of every family folder, counters/<family>/cpus.match (the first of
// `counters_dirs` that has it; format in counters/README.md), and gives the family whose file
// names `cpu`. Never "generic" in place of an answer it could not give; the errors: no match
// file in any of `counters_dirs` (the data folder is missing: the family is unknown), a match
// file that does not parse ("file:line: problem"), a folder of group files without a match
// file, a match file in generic/ or software/ (which fit every CPU), and two families' files
// that name one CPU (both files and lines).
Result<CounterFamily> counter_family(const CpuIdentity& cpu, const std::vector<std::string>& counters_dirs);

}  // namespace hwprof
HWPROF_API_END
