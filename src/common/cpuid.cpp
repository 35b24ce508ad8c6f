#include "common/cpuid.hpp"

#include <map>
#include <memory>
#include <sstream>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hwprof::common {

CpuidFn this_cpu_cpuid() {
  return [](std::uint32_t leaf, std::uint32_t subleaf) {
    CpuidRegs r;
#if defined(__x86_64__) || defined(__i386__)
    // __get_cpuid_count checks the leaf against its range's maximum, answering zeros above it.
    if (__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) == 0) return CpuidRegs{};
#else
    (void)leaf;
    (void)subleaf;
#endif
    return r;
  };
}

Result<CpuidFn> cpuid_from_text(std::string_view text, const std::string& source_name) {
  auto answers = std::make_shared<std::map<std::pair<std::uint32_t, std::uint32_t>, CpuidRegs>>();
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream fields(line);
    std::string word;
    std::uint64_t values[6] = {};
    int count = 0;
    bool bad = false;
    while (fields >> word) {
      if (count == 6) {
        bad = true;
        break;
      }
      std::size_t used = 0;
      try {
        values[count] = std::stoull(word, &used, 16);
      } catch (...) {
        used = 0;
      }
      if (used != word.size() || values[count] > 0xffffffffULL) {
        bad = true;
        break;
      }
      ++count;
    }
    if (count == 0 && !bad) continue;
    if (bad || count != 6) {
      return Error{source_name + ":" + std::to_string(number) + ": expected \"LEAF SUBLEAF EAX EBX ECX EDX\", six hexadecimal 32-bit numbers"};
    }
    (*answers)[{static_cast<std::uint32_t>(values[0]), static_cast<std::uint32_t>(values[1])}] =
        CpuidRegs{static_cast<std::uint32_t>(values[2]), static_cast<std::uint32_t>(values[3]), static_cast<std::uint32_t>(values[4]),
                  static_cast<std::uint32_t>(values[5])};
  }
  return CpuidFn([answers](std::uint32_t leaf, std::uint32_t subleaf) {
    auto it = answers->find({leaf, subleaf});
    return it == answers->end() ? CpuidRegs{} : it->second;
  });
}

std::string cpuid_vendor(const CpuidFn& cpuid) {
  const CpuidRegs r = cpuid(0, 0);
  std::string vendor;
  for (std::uint32_t word : {r.ebx, r.edx, r.ecx}) {
    for (int shift = 0; shift < 32; shift += 8) {
      const char c = static_cast<char>((word >> shift) & 0xffU);
      if (c != '\0') vendor += c;
    }
  }
  return vendor;
}

}  // namespace hwprof::common
