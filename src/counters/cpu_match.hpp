// A counter family's match file, counters/<family>/cpus.match (the format is documented in
// counters/README.md): which CPUs — CPUID vendor, family and models — the family's group files
// fit, and what to know about those groups. Parsing with "file:line: what; expected what"
// errors, and the test of one CPU against the file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/stages.hpp"
#include "hwprof/cpu.hpp"
#include "hwprof/result.hpp"

namespace hwprof::counters {

// The match file's name in each family folder. Not a .txt: every .txt there is a group file.
inline constexpr std::string_view kCpuMatchFileName = "cpus.match";

struct ModelRange {
  int first = 0;  // inclusive
  int last = 0;   // inclusive
};

// One `vendor V family F models M,...` line.
struct CpuMatchRule {
  std::string vendor;  // CPUID leaf 0's twelve characters, "GenuineIntel"
  int family = 0;      // display family (base + extended), as CpuIdentity has it
  std::vector<ModelRange> models;
  int line = 0;
};

struct CpuMatch {
  std::string file;  // as named in messages
  std::vector<CpuMatchRule> rules;
  std::string note;  // the `note` lines joined by spaces, or ""
};

Result<CpuMatch> parse_cpu_match(std::string_view text, const std::string& source_name);
Result<CpuMatch> load_cpu_match(const std::string& path);

// The first rule of `match` that names `cpu`, or nullptr.
const CpuMatchRule* rule_naming(const CpuMatch& match, const CpuIdentity& cpu);

// 0x-prefixed upper-case hexadecimal, as the match files write CPUID numbers: "0x1A".
std::string cpuid_hex(int value);

// The lowest model that both rules name (same vendor, same family), or nullopt.
std::optional<int> first_shared_model(const CpuMatchRule& a, const CpuMatchRule& b);

}  // namespace hwprof::counters
