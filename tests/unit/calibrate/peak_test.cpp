// The theoretical peak (src/calibrate/peak.cpp): every row of the FLOPs-per-cycle table,
// the cores × GHz × FLOPs/cycle arithmetic, the conservative fallback for unknown CPUs, and
// the assumptions text; its inputs (src/machine/peak_inputs.cpp) from fake sysfs and
// /proc/cpuinfo files; and the repetition statistics. No hardware.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "calibrate/compute.hpp"
#include "common/stages.hpp"
#include "text_support.hpp"

namespace hwprof::calibration {
namespace {

using ::hwprof::test::contains;

// ---- the table ---------------------------------------------------------------------------

TEST(PeakTable, EveryRowGivesItsFiguresAtBothEndsOfEveryModelRange) {
  ASSERT_FALSE(peak_table().empty());
  for (const PeakTableRow& row : peak_table()) {
    ASSERT_FALSE(row.models.empty()) << row.name;
    EXPECT_GT(row.dp_avx2, 0) << row.name << ": every row's CPUs have AVX2+FMA";
    for (const auto& [first, last] : row.models) {
      ASSERT_LE(first, last) << row.name;
      for (const int model : {first, last}) {
        SCOPED_TRACE(row.name + " model " + std::to_string(model));
        const TheoreticalPeak avx2 = theoretical_peak(row.vendor, row.family, model, Isa::avx2_fma, 4, 2.5, "brand string");
        EXPECT_EQ(avx2.dp_flops_per_cycle, row.dp_avx2);
        EXPECT_EQ(avx2.sp_flops_per_cycle, 2 * row.dp_avx2);
        EXPECT_TRUE(contains(avx2.assumptions, row.name)) << avx2.assumptions;
        EXPECT_TRUE(contains(avx2.assumptions, row.basis)) << avx2.assumptions;

        const TheoreticalPeak avx512 = theoretical_peak(row.vendor, row.family, model, Isa::avx512f, 4, 2.5, "brand string");
        if (row.dp_avx512 > 0) {
          EXPECT_EQ(avx512.dp_flops_per_cycle, row.dp_avx512);
          EXPECT_EQ(avx512.sp_flops_per_cycle, 2 * row.dp_avx512);
        } else {
          EXPECT_EQ(avx512.dp_flops_per_cycle, 16) << "a CPU without AVX-512 falls back to one 512-bit FMA unit";
          EXPECT_TRUE(contains(avx512.assumptions, "is not expected to run avx512f")) << avx512.assumptions;
        }
      }
    }
  }
}

TEST(PeakTable, RowsOfOneFamilyDoNotOverlap) {
  const auto& table = peak_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    for (std::size_t j = i + 1; j < table.size(); ++j) {
      if (table[i].vendor != table[j].vendor || table[i].family != table[j].family) continue;
      for (const auto& [a_first, a_last] : table[i].models) {
        for (const auto& [b_first, b_last] : table[j].models) {
          EXPECT_TRUE(a_last < b_first || b_last < a_first) << table[i].name << " overlaps " << table[j].name;
        }
      }
    }
  }
}

struct Known {
  const char* vendor;
  int family;
  int model;
  Isa isa;
  int dp;
  int sp;
};

TEST(PeakTable, KnownCpus) {
  const Known known[] = {
      {"GenuineIntel", 6, 0x55, Isa::avx512f, 32, 64},      // Skylake-SP, 2 AVX-512 FMA units
      {"GenuineIntel", 6, 0x55, Isa::avx2_fma, 16, 32},     // the same with AVX2
      {"GenuineIntel", 6, 0x8F, Isa::avx512f, 32, 64},      // Sapphire Rapids
      {"GenuineIntel", 6, 0x7E, Isa::avx512f, 16, 32},      // Ice Lake client, 1 AVX-512 FMA unit
      {"GenuineIntel", 6, 0x3F, Isa::avx2_fma, 16, 32},     // Haswell-EP
      {"GenuineIntel", 6, 0x9E, Isa::avx2_fma, 16, 32},     // Coffee Lake
      {"GenuineIntel", 6, 0xBE, Isa::avx2_fma, 8, 16},      // Alder Lake-N (Gracemont)
      {"AuthenticAMD", 0x17, 0x01, Isa::avx2_fma, 8, 16},   // Zen (Naples)
      {"AuthenticAMD", 0x17, 0x31, Isa::avx2_fma, 16, 32},  // Zen 2 (Rome)
      {"AuthenticAMD", 0x19, 0x01, Isa::avx2_fma, 16, 32},  // Zen 3 (Milan)
      {"AuthenticAMD", 0x19, 0x11, Isa::avx512f, 16, 32},   // Zen 4 (Genoa): 256-bit datapaths
      {"AuthenticAMD", 0x1A, 0x02, Isa::avx512f, 32, 64},   // Zen 5 (Turin): 512-bit datapaths
      {"AuthenticAMD", 0x1A, 0x44, Isa::avx512f, 32, 64},   // Zen 5 (Granite Ridge)
      {"AuthenticAMD", 0x1A, 0x24, Isa::avx512f, 16, 32},   // Zen 5 mobile (Strix Point)
      {"AuthenticAMD", 0x1A, 0x02, Isa::avx2_fma, 16, 32},  // Zen 5 with AVX2
  };
  for (const Known& k : known) {
    const TheoreticalPeak p = theoretical_peak(k.vendor, k.family, k.model, k.isa, 1, 1.0, "brand string");
    EXPECT_EQ(p.dp_flops_per_cycle, k.dp) << k.vendor << " " << k.family << " " << k.model << ": " << p.assumptions;
    EXPECT_EQ(p.sp_flops_per_cycle, k.sp) << k.vendor << " " << k.family << " " << k.model;
    EXPECT_EQ(p.isa, isa_name(k.isa));
  }
}

TEST(PeakTable, Sse2IsOneMultiplyAndOneAddPerCycleOnEveryCpu) {
  for (const auto& [vendor, family, model] :
       {std::tuple<const char*, int, int>{"GenuineIntel", 6, 0x55}, {"AuthenticAMD", 0x1A, 0x02}, {"CentaurHauls", 7, 0x3B}}) {
    const TheoreticalPeak p = theoretical_peak(vendor, family, model, Isa::sse2, 2, 3.0, "brand string");
    EXPECT_EQ(p.dp_flops_per_cycle, 4);
    EXPECT_EQ(p.sp_flops_per_cycle, 8);
    EXPECT_TRUE(contains(p.assumptions, "128-bit multiply and one 128-bit add")) << p.assumptions;
  }
}

TEST(PeakTable, UnknownCpusFallBackToTheIsasConservativeRowAndSaySo) {
  const TheoreticalPeak avx2 = theoretical_peak("GenuineIntel", 6, 0x01, Isa::avx2_fma, 8, 2.0, "brand string");
  EXPECT_EQ(avx2.dp_flops_per_cycle, 8);
  EXPECT_EQ(avx2.sp_flops_per_cycle, 16);
  EXPECT_TRUE(contains(avx2.assumptions, "CPU not in the peak table")) << avx2.assumptions;
  EXPECT_TRUE(contains(avx2.assumptions, "conservative")) << avx2.assumptions;
  EXPECT_TRUE(contains(avx2.assumptions, "GenuineIntel family 0x6 model 0x1")) << avx2.assumptions;

  const TheoreticalPeak avx512 = theoretical_peak("AuthenticAMD", 0x1A, 0x70, Isa::avx512f, 8, 2.0, "brand string");
  EXPECT_EQ(avx512.dp_flops_per_cycle, 16);
  EXPECT_EQ(avx512.sp_flops_per_cycle, 32);
  EXPECT_TRUE(contains(avx512.assumptions, "CPU not in the peak table")) << avx512.assumptions;

  const TheoreticalPeak other = theoretical_peak("SomeVendor", 1, 1, Isa::avx2_fma, 1, 1.0, "brand string");
  EXPECT_EQ(other.dp_flops_per_cycle, 8);
}

// ---- arithmetic and the assumptions text --------------------------------------------------

TEST(TheoreticalPeak, IsCoresTimesGhzTimesFlopsPerCycle) {
  // This machine's row: Zen 5 Turin, 2 cores, the 2.596 GHz /proc/cpuinfo clock.
  const TheoreticalPeak p = theoretical_peak("AuthenticAMD", 0x1A, 0x02, Isa::avx512f, 2, 2.596, "/proc/cpuinfo cpu MHz");
  EXPECT_DOUBLE_EQ(p.dp_gflops, 2 * 2.596 * 32);  // 166.144
  EXPECT_DOUBLE_EQ(p.sp_gflops, 2 * 2.596 * 64);  // 332.288
  EXPECT_EQ(p.cores, 2);
  EXPECT_DOUBLE_EQ(p.ghz, 2.596);
  EXPECT_EQ(p.ghz_source, "/proc/cpuinfo cpu MHz");
  EXPECT_TRUE(contains(p.assumptions, "AMD Zen 5 server / desktop")) << p.assumptions;
  EXPECT_TRUE(contains(p.assumptions, "32 DP / 64 SP")) << p.assumptions;
  EXPECT_TRUE(contains(p.assumptions, "2 cores × 2.596 GHz from /proc/cpuinfo cpu MHz")) << p.assumptions;
  EXPECT_TRUE(contains(p.assumptions, "turbo can run above it")) << p.assumptions;

  const TheoreticalPeak skx = theoretical_peak("GenuineIntel", 6, 0x55, Isa::avx512f, 28, 2.5, "brand string");
  EXPECT_DOUBLE_EQ(skx.dp_gflops, 28 * 2.5 * 32);  // 2240
  EXPECT_DOUBLE_EQ(skx.sp_gflops, 28 * 2.5 * 64);
  EXPECT_TRUE(contains(skx.assumptions, "only the first")) << "the 1-FMA-unit SKUs are named: " << skx.assumptions;
}

TEST(TheoreticalPeak, SaysWhatTheFrequencySourceMeans) {
  const auto text = [](const char* source) { return theoretical_peak("GenuineIntel", 6, 0x55, Isa::avx512f, 1, 3.0, source).assumptions; };
  EXPECT_TRUE(contains(text("cpuinfo_max_freq"), "upper bound"));
  EXPECT_TRUE(contains(text("brand string"), "nominal (base) clock"));
  EXPECT_TRUE(contains(text("/proc/cpuinfo cpu MHz"), "TSC"));
  EXPECT_TRUE(contains(text("TSC"), "GHz from TSC: how this source relates to the running clock is not known"));
}

TEST(TheoreticalPeak, UnknownFrequencyGivesNoGflops) {
  const TheoreticalPeak p = theoretical_peak("AuthenticAMD", 0x19, 0x01, Isa::avx2_fma, 4, 0.0, "unknown");
  EXPECT_EQ(p.dp_flops_per_cycle, 16);
  EXPECT_EQ(p.dp_gflops, 0.0);
  EXPECT_EQ(p.sp_gflops, 0.0);
  EXPECT_TRUE(contains(p.assumptions, "Frequency unknown")) << p.assumptions;
}

TEST(IsaName, NamesEveryIsa) {
  EXPECT_STREQ(isa_name(Isa::sse2), "sse2");
  EXPECT_STREQ(isa_name(Isa::avx2_fma), "avx2_fma");
  EXPECT_STREQ(isa_name(Isa::avx512f), "avx512f");
}

// ---- frequency and cores from fake files ---------------------------------------------------

class FakeFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("hwprof-peak-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string path(const std::string& relative) const { return (root_ / relative).string(); }

  std::filesystem::path root_;
};

constexpr const char* kCpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.124\n\nprocessor\t: 1\ncpu MHz\t\t: 2400.000\n";

TEST_F(FakeFiles, FrequencyPrefersCpufreqMax) {
  write("cpufreq/cpuinfo_max_freq", "3500000\n");
  write("cpuinfo", kCpuinfo);
  std::string source;
  EXPECT_DOUBLE_EQ(nominal_ghz_from(path("cpufreq"), path("cpuinfo"), "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", &source), 3.5);
  EXPECT_EQ(source, "cpuinfo_max_freq");
}

TEST_F(FakeFiles, FrequencyFromTheBrandStringWithoutCpufreq) {
  write("cpuinfo", kCpuinfo);
  std::string source;
  EXPECT_DOUBLE_EQ(nominal_ghz_from(path("none"), path("cpuinfo"), "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", &source), 2.4);
  EXPECT_EQ(source, "brand string");
  EXPECT_DOUBLE_EQ(nominal_ghz_from(path("none"), path("cpuinfo"), "Some CPU @ 1800MHz", &source), 1.8);
  EXPECT_EQ(source, "brand string");
}

TEST_F(FakeFiles, FrequencyFromProcCpuinfoIsTheHighestCpuMhz) {
  write("cpuinfo", kCpuinfo);
  std::string source;
  EXPECT_DOUBLE_EQ(nominal_ghz_from(path("none"), path("cpuinfo"), "AMD EPYC", &source), 2.596124);
  EXPECT_EQ(source, "/proc/cpuinfo cpu MHz");
}

TEST_F(FakeFiles, FrequencyUnknownWhenNothingSays) {
  write("cpufreq/cpuinfo_max_freq", "garbage\n");
  write("cpuinfo", "processor\t: 0\n");
  std::string source;
  EXPECT_EQ(nominal_ghz_from(path("cpufreq"), path("cpuinfo"), "AMD EPYC @ fast", &source), 0.0);
  EXPECT_EQ(source, "unknown");
  EXPECT_EQ(nominal_ghz_from(path("none"), path("none"), "", nullptr), 0.0);
}

TEST_F(FakeFiles, PhysicalCoresCountsPackageAndCorePairs) {
  // Two packages, two cores each, two threads per core: 8 CPUs, 4 cores; cpu 7 offline.
  write("online", "0-6\n");
  const int package[] = {0, 0, 0, 0, 1, 1, 1};
  const int core[] = {0, 1, 0, 1, 0, 1, 0};
  for (int cpu = 0; cpu < 7; ++cpu) {
    write("cpu" + std::to_string(cpu) + "/topology/physical_package_id", std::to_string(package[cpu]) + "\n");
    write("cpu" + std::to_string(cpu) + "/topology/core_id", std::to_string(core[cpu]) + "\n");
  }
  EXPECT_EQ(physical_cores_from(root_.string()), 4);
}

TEST_F(FakeFiles, PhysicalCoresFallsBackToOnlineCpus) {
  write("online", "0,2-3\n");
  write("cpu0/topology/core_id", "0\n");  // no physical_package_id
  EXPECT_EQ(physical_cores_from(root_.string()), 3);
}

TEST_F(FakeFiles, PhysicalCoresWithoutSysfsIsTheHardwareConcurrency) {
  EXPECT_EQ(physical_cores_from(path("none")), static_cast<int>(std::max(1U, std::thread::hardware_concurrency())));
}

// This machine's count against the kernel's other account of it: the distinct (physical id,
// core id) pairs of /proc/cpuinfo (online CPUs, as sysfs's "online" list).
TEST(PhysicalCores, ThisMachineAgreesWithProcCpuinfo) {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line;
  std::string package;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "physical id") package = value;
    if (key == "core id") cores.emplace(package, value);
  }
  if (cores.empty()) GTEST_SKIP() << "/proc/cpuinfo gives no physical id and core id here (not x86, or a container without them)";
  EXPECT_EQ(physical_cores(), static_cast<int>(cores.size()));
}

// ---- repetition statistics ---------------------------------------------------------------

TEST(RepetitionStats, BestMedianAndSpread) {
  const RepetitionStats odd = summarize_repetitions({90.0, 100.0, 95.0});
  EXPECT_DOUBLE_EQ(odd.best, 100.0);
  EXPECT_DOUBLE_EQ(odd.median, 95.0);
  EXPECT_DOUBLE_EQ(odd.spread, 10.0 / 95.0);

  const RepetitionStats even = summarize_repetitions({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(even.best, 4.0);
  EXPECT_DOUBLE_EQ(even.median, 2.5);
  EXPECT_DOUBLE_EQ(even.spread, 3.0 / 2.5);

  const RepetitionStats one = summarize_repetitions({7.0});
  EXPECT_DOUBLE_EQ(one.best, 7.0);
  EXPECT_DOUBLE_EQ(one.median, 7.0);
  EXPECT_DOUBLE_EQ(one.spread, 0.0);

  const RepetitionStats none = summarize_repetitions({});
  EXPECT_EQ(none.best, 0.0);
  EXPECT_EQ(none.median, 0.0);
  EXPECT_EQ(none.spread, 0.0);
}

}  // namespace
}  // namespace hwprof::calibration
