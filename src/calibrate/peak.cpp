// The theoretical peak: cores × GHz × FLOPs per cycle per core, from a table of what each
// core's vector units can start per cycle. An FMA counts 2 FLOPs per lane; SP has twice the
// lanes of DP, so the table holds DP FLOPs/cycle and SP is always twice that.
//
// Sources for the rows:
// - Intel: "Intel 64 and IA-32 Architectures Optimization Reference Manual" (order no.
//   248966): execution units per port for Haswell, Skylake (client and server, incl. the
//   port-5 FMA unit that only some Xeon Scalable SKUs have), Ice Lake, Golden Cove, Gracemont.
//   Agner Fog, "The microarchitecture of Intel, AMD and VIA CPUs" and "Instruction tables"
//   (agner.org/optimize) for FMA latency and throughput per core. WikiChip (en.wikichip.org)
//   for the per-SKU FMA-unit count of Skylake-SP / Cascade Lake.
// - AMD: "Software Optimization Guide for AMD Family 17h Processors" (pub. 55723, Zen:
//   256-bit operations split into two 128-bit halves on 2 FMA pipes), "... Family 17h Models
//   30h and Greater" (56305, Zen 2: 256-bit pipes), "... Family 19h" (56665, Zen 3), "... AMD
//   Family 19h Processors Models 10h+ / Zen 4" (57647: AVX-512 executed as two 256-bit halves),
//   "Software Optimization Guide for the AMD Zen5 Microarchitecture" (58455: four FP pipes,
//   two of them FMA, with a full 512-bit datapath on desktop and server parts; mobile parts
//   such as Strix Point keep 256-bit datapaths). Chips and Cheese's Zen 5 articles confirm the
//   2 × 512-bit FMA throughput on Granite Ridge and Turin.
// - Model numbers: Linux arch/x86/include/asm/intel-family.h and arch/x86/kernel/cpu/amd.c
//   (the Zen generation ranges in bsp_init_amd / init_amd_zen*).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/compute.hpp"
#include "common/stages.hpp"

namespace hwprof::calibration {
namespace {

// Without FMA, a multiply and an add per lane: one 128-bit multiply and one 128-bit add per
// cycle (separate ports since Core 2; most cores since Skylake and Zen can issue two of each,
// so this is the conservative figure).
constexpr int kSse2DpPerCycle = 4;
// Unknown CPUs: one full-width FMA unit for the ISA.
constexpr int kConservativeDpAvx2 = 8;
constexpr int kConservativeDpAvx512 = 16;

std::string hex(int value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%X", value);
  return text;
}

const PeakTableRow* find_row(const std::string& vendor, int family, int model) {
  for (const PeakTableRow& row : peak_table()) {
    if (row.vendor != vendor || row.family != family) continue;
    for (const auto& [first, last] : row.models) {
      if (model >= first && model <= last) return &row;
    }
  }
  return nullptr;
}

std::string frequency_caveat(const std::string& source) {
  if (source == "cpuinfo_max_freq") {
    return "the highest (turbo) clock the cpufreq driver reports; all-core and AVX/AVX-512 clocks are usually lower, "
           "so this is an upper bound";
  }
  if (source == "brand string") {
    return "the nominal (base) clock from the brand string; turbo can run above it and AVX-512 frequency offsets "
           "below it";
  }
  if (source == "/proc/cpuinfo cpu MHz") {
    return "a clock the kernel reports, not a rated one: under a hypervisor usually the TSC rate, and turbo can run "
           "above it, so measured peaks may exceed this figure";
  }
  return "how this source relates to the running clock is not known";
}

}  // namespace

const std::vector<PeakTableRow>& peak_table() {
  static const std::vector<PeakTableRow> table = {
      // ---- Intel, family 6 ----
      {"GenuineIntel",
       6,
       {{0x3C, 0x3C}, {0x3F, 0x3F}, {0x45, 0x46}, {0x3D, 0x3D}, {0x47, 0x47}, {0x4F, 0x4F}, {0x56, 0x56}},
       "Intel Haswell / Broadwell",
       0,
       16,
       "2 × 256-bit FMA units (ports 0 and 1)"},
      {"GenuineIntel",
       6,
       {{0x4E, 0x4E}, {0x5E, 0x5E}, {0x8E, 0x8E}, {0x9E, 0x9E}, {0xA5, 0xA6}},
       "Intel Skylake / Kaby Lake / Coffee Lake / Comet Lake (client)",
       0,
       16,
       "2 × 256-bit FMA units (ports 0 and 1)"},
      {"GenuineIntel",
       6,
       {{0x55, 0x55}},
       "Intel Skylake-SP / Cascade Lake / Cooper Lake",
       32,
       16,
       "2 × 512-bit FMA units (ports 0+1 fused, and port 5); Xeon Bronze, Silver and most Gold 5xxx SKUs have only the "
       "first, which halves the AVX-512 figure"},
      {"GenuineIntel",
       6,
       {{0x6A, 0x6A}, {0x6C, 0x6C}, {0x8F, 0x8F}, {0xCF, 0xCF}, {0xAD, 0xAE}},
       "Intel Ice Lake-SP / Sapphire Rapids / Emerald Rapids / Granite Rapids",
       32,
       16,
       "2 × 512-bit FMA units (ports 0+1 fused, and port 5)"},
      {"GenuineIntel", 6, {{0x57, 0x57}, {0x85, 0x85}}, "Intel Xeon Phi Knights Landing / Knights Mill", 32, 16, "2 × 512-bit vector units with FMA"},
      {"GenuineIntel",
       6,
       {{0x66, 0x66}, {0x7D, 0x7E}, {0x8C, 0x8D}, {0xA7, 0xA7}},
       "Intel Cannon Lake / Ice Lake / Tiger Lake / Rocket Lake (client)",
       16,
       16,
       "1 × 512-bit FMA unit (ports 0+1 fused), 2 × 256-bit for AVX2"},
      {"GenuineIntel",
       6,
       {{0x97, 0x97}, {0x9A, 0x9A}, {0xB7, 0xB7}, {0xBA, 0xBA}, {0xBF, 0xBF}, {0xAA, 0xAA}, {0xAC, 0xAC}, {0xBD, 0xBD}, {0xC5, 0xC6}},
       "Intel Alder Lake / Raptor Lake / Meteor Lake / Lunar Lake / Arrow Lake (hybrid)",
       0,
       16,
       "2 × 256-bit FMA units per P-core; E-cores have 2 × 128-bit (half), and the table assumes every core is a P-core"},
      {"GenuineIntel",
       6,
       {{0xBE, 0xBE}, {0xAF, 0xAF}},
       "Intel Gracemont / Crestmont E-core parts (Alder Lake-N, Sierra Forest)",
       0,
       8,
       "2 × 128-bit FMA units"},
      // ---- AMD ----
      {"AuthenticAMD", 0x17, {{0x00, 0x2F}, {0x50, 0x5F}}, "AMD Zen / Zen+", 0, 8, "2 × 128-bit FMA pipes; 256-bit operations split into two halves"},
      {"AuthenticAMD", 0x17, {{0x30, 0x4F}, {0x60, 0x7F}, {0x90, 0x91}, {0xA0, 0xAF}}, "AMD Zen 2", 0, 16, "2 × 256-bit FMA pipes (FP0, FP1)"},
      {"AuthenticAMD", 0x19, {{0x00, 0x0F}, {0x20, 0x5F}}, "AMD Zen 3", 0, 16, "2 × 256-bit FMA pipes (FP0, FP1)"},
      {"AuthenticAMD",
       0x19,
       {{0x10, 0x1F}, {0x60, 0xAF}},
       "AMD Zen 4",
       16,
       16,
       "2 × 256-bit FMA pipes; AVX-512 operations execute as two 256-bit halves"},
      {"AuthenticAMD",
       0x1A,
       {{0x00, 0x1F}, {0x40, 0x4F}},
       "AMD Zen 5 server / desktop (Turin, Granite Ridge)",
       32,
       16,
       "2 × 512-bit FMA pipes (full 512-bit datapath, AMD Zen5 optimization guide 58455)"},
      {"AuthenticAMD",
       0x1A,
       {{0x20, 0x2F}, {0x60, 0x6F}},
       "AMD Zen 5 mobile (Strix Point, Krackan Point)",
       16,
       16,
       "2 × 256-bit FMA pipes; AVX-512 operations execute as two 256-bit halves"},
      {"HygonGenuine", 0x18, {{0x00, 0xFF}}, "Hygon Dhyana (Zen)", 0, 8, "2 × 128-bit FMA pipes; 256-bit operations split into two halves"},
  };
  return table;
}

TheoreticalPeak theoretical_peak(const std::string& vendor, int family, int model, Isa isa, int cores, double ghz, const std::string& ghz_source) {
  TheoreticalPeak peak;
  peak.isa = isa_name(isa);
  peak.cores = cores;
  peak.ghz = ghz;
  peak.ghz_source = ghz_source;

  const std::string cpu = vendor + " family " + hex(family) + " model " + hex(model);
  const PeakTableRow* row = find_row(vendor, family, model);
  std::string basis;
  int dp = 0;
  if (isa == Isa::sse2) {
    dp = kSse2DpPerCycle;
    basis = std::string(row != nullptr ? row->name + ", " : "") +
            "SSE2 without FMA: one 128-bit multiply and one 128-bit add per cycle (cores that issue two of each reach "
            "twice this)";
  } else {
    const int table_dp = row == nullptr ? 0 : isa == Isa::avx512f ? row->dp_avx512 : row->dp_avx2;
    if (table_dp > 0) {
      dp = table_dp;
      basis = row->name + ": " + row->basis;
    } else {
      dp = isa == Isa::avx512f ? kConservativeDpAvx512 : kConservativeDpAvx2;
      basis = (row == nullptr ? "CPU not in the peak table" : row->name + " is not expected to run " + std::string(isa_name(isa))) +
              "; assumed one full-width " + std::string(isa_name(isa)) +
              " FMA unit (conservative: many cores have two, and may measure up to twice this)";
    }
  }
  peak.dp_flops_per_cycle = dp;
  peak.sp_flops_per_cycle = 2 * dp;
  peak.dp_gflops = cores * ghz * dp;
  peak.sp_gflops = cores * ghz * 2 * dp;

  char figures[160];
  std::snprintf(figures, sizeof(figures), " → %d DP / %d SP FLOPs per cycle per core with %s. ", dp, 2 * dp, isa_name(isa));
  peak.assumptions = cpu + ": " + basis + figures;
  if (ghz > 0.0) {
    char clock[96];
    std::snprintf(clock, sizeof(clock), "%d cores × %.3f GHz from ", cores, ghz);
    peak.assumptions += clock + ghz_source + ": " + frequency_caveat(ghz_source) + ".";
  } else {
    peak.assumptions += "Frequency unknown (no cpufreq, brand-string or /proc/cpuinfo clock), so no GFLOP/s figure.";
  }
  return peak;
}

}  // namespace hwprof::calibration
