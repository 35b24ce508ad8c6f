// The cache sources' readers on hand-made inputs: CPUID answers as text (and its errors),
// sysfs trees with unreadable parts, sysconf, sharing, and how the sources are compared.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "common/cpuid.hpp"
#include "common/stages.hpp"
#include "machine/cache_topology.hpp"
#include "text_support.hpp"

namespace hwprof::calibration {
namespace {

using ::hwprof::test::kKiB;
using ::hwprof::test::kMiB;

// A leaf-4 style subleaf (Intel SDM Vol. 2A, CPUID leaf 04H) for a cache of `ways` ×
// 64-byte lines × `sets`, shared by up to `sharing` logical IDs.
std::string deterministic(std::uint32_t leaf, int sub, int type, int level, int ways, int sets, int sharing) {
  const std::uint32_t eax =
      static_cast<std::uint32_t>(type) | (static_cast<std::uint32_t>(level) << 5) | (1U << 8) | (static_cast<std::uint32_t>(sharing - 1) << 14);
  const std::uint32_t ebx = 63U | (static_cast<std::uint32_t>(ways - 1) << 22);
  char line[96];
  std::snprintf(line, sizeof line, "%x %d %08x %08x %08x 0\n", leaf, sub, eax, ebx, static_cast<std::uint32_t>(sets - 1));
  return line;
}

const std::string kIntelVendor = "0 0 00000020 756e6547 6c65746e 49656e69\n";  // max leaf 0x20, GenuineIntel
const std::string kAmdVendor = "0 0 00000010 68747541 444d4163 69746e65\n";    // AuthenticAMD

CpuidFn cpuid_of(const std::string& text) {
  auto fn = cpuid_from_text(text, "test");
  EXPECT_TRUE(fn.ok()) << (fn.ok() ? "" : fn.error().message);
  return *fn;
}

TEST(CpuidText, ParsesAndAnswersZerosForWhatItLacks) {
  const CpuidFn cpuid = cpuid_of("# comment\n" + kIntelVendor + "0x1 0 000806f8 0 80000000 0  # trailing\n\n");
  EXPECT_EQ(cpuid_vendor(cpuid), "GenuineIntel");
  EXPECT_EQ(cpuid(1, 0).eax, 0x000806f8U);
  EXPECT_EQ(cpuid(7, 0).eax, 0U);
  EXPECT_EQ(cpuid_vendor(cpuid_of("")), "");
}

TEST(CpuidText, ErrorsNameTheLine) {
  for (const char* bad : {"0 0 1 2 3\n", "0 0 1 2 3 4 5\n", "0 0 1 2 3 zz\n", "0 0 1 2 3 100000000\n"}) {
    auto fn = cpuid_from_text(std::string("# ok\n") + bad, "answers.txt");
    ASSERT_FALSE(fn.ok()) << bad;
    EXPECT_NE(fn.error().message.find("answers.txt:2:"), std::string::npos) << fn.error().message;
  }
}

TEST(CacheSources, IntelLeafFourGivesSizesAndSharing) {
  const CpuidFn cpuid = cpuid_of(kIntelVendor + deterministic(4, 0, 1, 1, 12, 64, 2) + deterministic(4, 1, 2, 1, 8, 64, 2) +
                                 deterministic(4, 2, 3, 2, 16, 2048, 2) + deterministic(4, 3, 3, 3, 15, 114688, 128) + "4 4 0 0 0 0\n");
  const CacheReport r = caches_from_cpuid(cpuid);
  EXPECT_EQ(r.how, "leaf 4");
  ASSERT_EQ(r.levels.size(), 3u) << "the instruction cache is left out";
  EXPECT_EQ(r.levels[0].size_bytes, 48 * kKiB);
  EXPECT_EQ(r.levels[1].size_bytes, 2 * kMiB);
  EXPECT_EQ(r.levels[2].size_bytes, 105 * kMiB);
  EXPECT_EQ(r.levels[2].shared_by, 128);
  EXPECT_EQ(r.levels[2].source, "cpuid");
}

TEST(CacheSources, AmdPrefersLeaf8000001DAndFallsBackToTheLegacyLeaves) {
  const std::string ext = "80000000 0 80000021 0 0 0\n80000001 0 0 0 00400000 0\n";  // TopologyExtensions
  const CacheReport topo =
      caches_from_cpuid(cpuid_of(kAmdVendor + ext + deterministic(0x8000001D, 0, 1, 1, 12, 64, 2) + deterministic(0x8000001D, 1, 3, 2, 16, 1024, 2) +
                                 deterministic(0x8000001D, 2, 3, 3, 16, 32768, 16)));
  EXPECT_EQ(topo.how, "leaf 0x8000001D");
  ASSERT_EQ(topo.levels.size(), 3u);
  EXPECT_EQ(topo.levels[2].size_bytes, 32 * kMiB);
  EXPECT_EQ(topo.levels[2].shared_by, 16);
  // A hypervisor that empties 0x8000001D: the legacy sizes, said to be without sharing.
  const CacheReport legacy = caches_from_cpuid(cpuid_of(kAmdVendor + ext + "80000005 0 0 0 300c0140 0\n80000006 0 0 0 04006140 0fe09140\n"));
  EXPECT_NE(legacy.how.find("legacy"), std::string::npos);
  ASSERT_EQ(legacy.levels.size(), 3u);
  EXPECT_EQ(legacy.levels[0].size_bytes, 48 * kKiB);
  EXPECT_EQ(legacy.levels[1].size_bytes, 1 * kMiB);
  EXPECT_EQ(legacy.levels[2].size_bytes, 508 * kMiB);
  EXPECT_EQ(legacy.levels[2].shared_by, 0);
  ASSERT_FALSE(legacy.notes.empty());
  // Nothing at all.
  const CacheReport none = caches_from_cpuid(cpuid_of(kAmdVendor));
  EXPECT_TRUE(none.levels.empty());
  EXPECT_FALSE(none.absent.empty());
  EXPECT_FALSE(caches_from_cpuid(cpuid_of("")).absent.empty()) << "not x86";
}

TEST(CacheSources, SysconfSizesOnly) {
  const std::map<int, long> values = {{_SC_LEVEL1_DCACHE_SIZE, 32768}, {_SC_LEVEL2_CACHE_SIZE, 1048576}, {_SC_LEVEL3_CACHE_SIZE, 0}};
  const CacheReport r = caches_from_sysconf([&](int name) {
    auto it = values.find(name);
    return it == values.end() ? -1L : it->second;
  });
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_EQ(r.levels[1].size_bytes, 1 * kMiB);
  EXPECT_TRUE(caches_from_sysconf([](int) { return -1L; }).levels.empty());
}

class SysfsTree : public testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("hwprof-sysfs-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text << "\n";
  }
  void cache(int cpu, int index, int level, const std::string& type, const std::string& size, const std::string& shared) {
    const std::string dir = "cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index) + "/";
    write(dir + "level", std::to_string(level));
    write(dir + "type", type);
    write(dir + "size", size);
    write(dir + "shared_cpu_list", shared);
  }
  std::filesystem::path root_;
};

TEST_F(SysfsTree, InstancesAndCapacitiesFollowSharedCpuLists) {
  // Two sockets of two cores each; L3 per socket.
  for (int cpu = 0; cpu < 4; ++cpu) {
    cache(cpu, 0, 1, "Data", "32K", std::to_string(cpu));
    cache(cpu, 1, 1, "Instruction", "32K", std::to_string(cpu));
    cache(cpu, 2, 2, "Unified", "1024K", std::to_string(cpu));
    cache(cpu, 3, 3, "Unified", "28160K", cpu < 2 ? "0-1" : "2-3");
  }
  const CacheReport r = caches_from_sysfs(root_.string(), {0, 1, 2, 3});
  ASSERT_EQ(r.levels.size(), 3u);
  EXPECT_EQ(r.levels[2].size_bytes, 28160 * kKiB);
  EXPECT_EQ(r.levels[2].shared_by, 2);
  EXPECT_EQ(r.instances.size(), 4u + 4u + 2u);
  EXPECT_EQ(capacities_for(r, {0}, 4, 4), (std::vector<std::int64_t>{32 * kKiB, 1 * kMiB, 28160 * kKiB}));
  EXPECT_EQ(capacities_for(r, {0, 1}, 4, 4), (std::vector<std::int64_t>{64 * kKiB, 2 * kMiB, 28160 * kKiB}));
  EXPECT_EQ(capacities_for(r, {0, 2}, 4, 4), (std::vector<std::int64_t>{64 * kKiB, 2 * kMiB, 2 * 28160 * kKiB}))
      << "one core on each socket touches both L3s";
}

TEST_F(SysfsTree, UnreadablePartsAreLeftOutNotGuessed) {
  cache(0, 0, 1, "Data", "48K", "0");
  cache(0, 2, 2, "Unified", "lots", "0");      // a size that does not parse
  cache(0, 3, 9, "Unified", "", "0");          // no size
  write("cpu0/cache/index4/type", "Unified");  // no level
  const CacheReport r = caches_from_sysfs(root_.string(), {0});
  ASSERT_EQ(r.levels.size(), 1u);
  EXPECT_EQ(r.levels[0].size_bytes, 48 * kKiB);
  const CacheReport absent = caches_from_sysfs((root_ / "nowhere").string(), {0});
  EXPECT_TRUE(absent.levels.empty());
  EXPECT_NE(absent.absent.find("does not exist"), std::string::npos);
}

TEST_F(SysfsTree, DifferentCachesOnDifferentCpusAreNoted) {
  cache(0, 0, 1, "Data", "48K", "0");
  cache(0, 2, 2, "Unified", "1280K", "0");
  cache(1, 0, 1, "Data", "32K", "1");
  cache(1, 2, 2, "Unified", "2048K", "1-4");
  const CacheReport r = caches_from_sysfs(root_.string(), {0, 1});
  EXPECT_EQ(r.levels[0].size_bytes, 48 * kKiB) << "the first CPU's description";
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("hybrid"), std::string::npos) << r.notes[0];
  EXPECT_EQ(capacities_for(r, {0, 1}, 5, 5)[1], 1280 * kKiB + 2048 * kKiB);
}

TEST(CacheSources, CapacitiesWithoutInstancesCountSharingAsCores) {
  CacheReport r;
  r.source = "cpuid";
  r.levels = {{1, "Data", 48 * kKiB, 2, "cpuid"}, {2, "Unified", 2 * kMiB, 2, "cpuid"}, {3, "Unified", 105 * kMiB, 128, "cpuid"}};
  // 112 logical CPUs on 56 cores: a cache "shared by 2" logical IDs is one core's.
  EXPECT_EQ(capacities_for(r, {0, 1, 2, 3}, 112, 56), (std::vector<std::int64_t>{4 * 48 * kKiB, 8 * kMiB, 105 * kMiB}));
  // Unknown sharing (AMD's legacy leaves): private below the last level, one last level.
  r.levels = {{1, "Data", 48 * kKiB, 0, "cpuid"}, {2, "Unified", 1 * kMiB, 0, "cpuid"}, {3, "Unified", 508 * kMiB, 0, "cpuid"}};
  EXPECT_EQ(capacities_for(r, {0, 1}, 2, 2), (std::vector<std::int64_t>{96 * kKiB, 2 * kMiB, 508 * kMiB}));
}

TEST(CacheSources, DisagreementsNameEverySourcesFigure) {
  CacheReport sysfs;
  sysfs.source = "sysfs";
  sysfs.levels = {{1, "Data", 48 * kKiB, 1, "sysfs"}, {3, "Unified", 32 * kMiB, 16, "sysfs"}};
  CacheReport cpuid;
  cpuid.source = "cpuid";
  cpuid.how = "leaf 0x8000001D";
  cpuid.levels = {{1, "Data", 48 * kKiB, 1, "cpuid"}, {2, "Unified", 1 * kMiB, 1, "cpuid"}, {3, "Unified", 508 * kMiB, 0, "cpuid"}};
  CacheReport silent;
  silent.source = "sysconf";
  silent.absent = "nothing";
  const auto notes = compare_cache_reports({sysfs, cpuid, silent});
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("L2"), std::string::npos);
  EXPECT_NE(notes[0].find("no such level"), std::string::npos);
  EXPECT_NE(notes[1].find("L3"), std::string::npos);
  EXPECT_NE(notes[1].find("32 MiB"), std::string::npos);
  EXPECT_NE(notes[1].find("508 MiB"), std::string::npos);
  EXPECT_EQ(binary_size(48 * kKiB), "48 KiB");
  EXPECT_EQ(binary_size(2 * std::int64_t{1} << 30), "2 GiB");
}

TEST(CacheSources, LevelEvidenceTakesTheFirstSourceAndTheLargestOfAll) {
  CacheReport sysfs;
  sysfs.source = "sysfs";
  sysfs.levels = {{1, "Data", 48 * kKiB, 1, "sysfs"}, {3, "Unified", 32 * kMiB, 2, "sysfs"}};
  CacheReport cpuid;
  cpuid.source = "cpuid";
  cpuid.how = "leaves 0x80000005/0x80000006 (AMD's legacy sizes, no sharing)";
  cpuid.levels = {{3, "Unified", 508 * kMiB, 0, "cpuid"}};
  const LevelEvidence e = level_evidence({sysfs, cpuid}, {0, 1}, 2, 2);
  EXPECT_EQ(e.reported_source, "sysfs");
  EXPECT_EQ(e.reported, (std::vector<std::int64_t>{96 * kKiB, 0, 32 * kMiB}));
  EXPECT_EQ(e.largest_reported, 508 * kMiB);
  EXPECT_NE(e.largest_source.find("CPUID"), std::string::npos);
  EXPECT_EQ(e.threads, 2);
}

}  // namespace
}  // namespace hwprof::calibration
