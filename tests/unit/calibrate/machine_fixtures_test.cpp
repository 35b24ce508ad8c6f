// Every rule that reads a machine — its identity, its cache sources, where each memory level
// ends, what is DRAM — checked on machines we don't have: two recorded ones (this project's
// Zen 5 VM without sysfs cache information and with an inflated CPUID L3, and a lent Emerald
// Rapids guest with sysfs) and three built from public specifications (a Sapphire Rapids
// server, an Alder Lake hybrid client, a two-socket Cascade Lake). tests/fixtures/machines/
// README.md says where each file came from; the counter family each machine gets is checked
// with the counters' tests (tests/unit/counters/counter_family_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/memory_levels.hpp"
#include "common/cpu_topology.hpp"
#include "counters/cpu_identity.hpp"
#include "hwprof/cpu.hpp"
#include "level_detection_support.hpp"
#include "machine/cache_topology.hpp"
#include "machine_fixture.hpp"
#include "text_support.hpp"

namespace hwprof::test {
namespace {

using calibration::DetectedLevel;
using calibration::LevelDetection;
using machine::CacheReport;

using ::hwprof::test::kKiB;
using ::hwprof::test::kMiB;

const CacheReport& source(const std::vector<CacheReport>& reports, const std::string& name) {
  for (const CacheReport& r : reports) {
    if (r.source == name) return r;
  }
  throw std::runtime_error("no source " + name);
}

std::int64_t level_size(const CacheReport& r, int level) {
  for (const CacheInfo& c : r.levels) {
    if (c.level == level) return c.size_bytes;
  }
  return 0;
}

using ::hwprof::test::contains;

// A machine as calibrate sees it: its sources, and detection on a recorded sweep with the
// workers on the first `threads` cores.
struct Seen {
  std::vector<CacheReport> reports;
  std::vector<int> cpus;
  machine::LevelEvidence evidence;
  LevelDetection levels;
};

Seen calibrate_on(const MachineFixture& f, int threads) {
  Seen s;
  s.reports = f.reports();
  const std::vector<int> cores = common::cpus_one_per_core_from(f.sysfs_cpu_dir());
  EXPECT_GE(static_cast<int>(cores.size()), threads);
  s.cpus.assign(cores.begin(), cores.begin() + std::min<std::ptrdiff_t>(threads, static_cast<std::ptrdiff_t>(cores.size())));
  s.evidence = machine::level_evidence(s.reports, s.cpus, static_cast<int>(f.online().size()), static_cast<int>(cores.size()));
  s.levels = calibration::detect_levels(f.sweep(threads), s.evidence);
  return s;
}

void expect_between(std::int64_t value, std::int64_t low, std::int64_t high, const std::string& what) {
  EXPECT_GE(value, low) << what;
  EXPECT_LE(value, high) << what;
}

// --- this project's VM: AMD Zen 5 guest, no sysfs caches, CPUID L3 = 508 MiB ---

TEST(ZenFiveVm, IdentityFromItsCpuid) {
  const MachineFixture f("zen5-vm-nosysfs");
  const CpuIdentity id = counters::identity_from_cpuid(f.cpuid());
  EXPECT_EQ(id.vendor, "AuthenticAMD");
  EXPECT_EQ(id.family, 0x1A);
  EXPECT_EQ(id.model, 2);
  EXPECT_TRUE(id.hypervisor);
  EXPECT_EQ(id.brand, "Oxide Virtual Turin-like Processor");
}

TEST(ZenFiveVm, SourcesSayWhatTheyHaveAndWhyNot) {
  const MachineFixture f("zen5-vm-nosysfs");
  const auto reports = f.reports();
  const CacheReport& sysfs = source(reports, "sysfs");
  EXPECT_TRUE(sysfs.levels.empty());
  EXPECT_TRUE(contains(sysfs.absent, "does not exist")) << sysfs.absent;
  const CacheReport& cpuid = source(reports, "cpuid");
  EXPECT_TRUE(contains(cpuid.how, "0x80000005")) << "leaf 0x8000001D is all zeros here: " << cpuid.how;
  EXPECT_EQ(level_size(cpuid, 1), 48 * kKiB);
  EXPECT_EQ(level_size(cpuid, 2), 1 * kMiB);
  EXPECT_EQ(level_size(cpuid, 3), 508 * kMiB);
  ASSERT_FALSE(cpuid.notes.empty());
  EXPECT_TRUE(contains(cpuid.notes[0], "0x8000001D describes no cache"));
  const CacheReport& sysconf = source(reports, "sysconf");
  EXPECT_EQ(level_size(sysconf, 3), 532676608) << "glibc reads the same legacy leaf";
  EXPECT_TRUE(machine::compare_cache_reports(reports).empty()) << "CPUID and sysconf agree (both wrong)";
  const auto chosen = machine::chosen_caches(reports);
  ASSERT_EQ(chosen.size(), 3u);
  EXPECT_EQ(chosen[2].source, "cpuid");
  EXPECT_EQ(chosen[2].shared_by, 0) << "the legacy leaves say nothing about sharing";
}

TEST(ZenFiveVm, OneThreadsLevelsComeFromTheSweepNotFromCpuid) {
  const Seen s = calibrate_on(MachineFixture("zen5-vm-nosysfs"), 1);
  EXPECT_EQ(s.evidence.largest_reported, 508 * kMiB);
  ASSERT_EQ(names(s.levels).size(), 4u) << testing::PrintToString(names(s.levels));
  expect_between(level(s.levels, "l1").capacity_bytes, 40 * kKiB, 64 * kKiB, "L1 knee");
  expect_between(level(s.levels, "l2").capacity_bytes, 700 * kKiB, 1536 * kKiB, "L2 knee");
  const DetectedLevel& l3 = level(s.levels, "l3");
  expect_between(l3.capacity_bytes, 16 * kMiB, 96 * kMiB, "L3 knee (a 32 MiB CCX seen through a VM)");
  EXPECT_EQ(l3.capacity_source, "sweep");
  EXPECT_TRUE(contains(l3.note, "508 MiB")) << l3.note;
  // The recorded sweep stopped at 512 MiB, below CPUID's 508 MiB + a flat tail: DRAM must not
  // be called found, and the sweep must be told to go on.
  EXPECT_FALSE(s.levels.dram_flat);
  EXPECT_GT(s.levels.extend_to, 1024 * kMiB);
  for (const DetectedLevel& l : s.levels.levels) {
    if (l.level == "dram") {
      EXPECT_FALSE(l.flat);
    }
  }
}

TEST(ZenFiveVm, TwoThreadsDoubleThePrivateLevels) {
  const Seen s = calibrate_on(MachineFixture("zen5-vm-nosysfs"), 2);
  ASSERT_GE(s.evidence.reported.size(), 3u);
  EXPECT_EQ(s.evidence.reported[0], 96 * kKiB);
  EXPECT_EQ(s.evidence.reported[1], 2 * kMiB);
  EXPECT_EQ(s.evidence.reported[2], 508 * kMiB) << "one L3 as far as CPUID knows";
  expect_between(level(s.levels, "l1").capacity_bytes, 80 * kKiB, 128 * kKiB, "L1 knee");
  expect_between(level(s.levels, "l2").capacity_bytes, 1 * kMiB, 3 * kMiB, "L2 knee");
  expect_between(level(s.levels, "l3").capacity_bytes, 16 * kMiB, 96 * kMiB, "L3 knee");
  EXPECT_FALSE(s.levels.dram_flat) << "nothing flat above 508 MiB in a sweep that ends at 512 MiB";
}

// --- the lent Emerald Rapids guest: 16 vCPUs, sysfs L3 300 MiB ---

TEST(EmeraldRapidsVm, SourcesAgreeOnAThreeHundredMegabyteL3) {
  const MachineFixture f("emr-vm-sysfs");
  const CpuIdentity id = counters::identity_from_cpuid(f.cpuid());
  EXPECT_EQ(id.vendor, "GenuineIntel");
  EXPECT_EQ(id.family, 6);
  EXPECT_EQ(id.model, 0xCF);
  EXPECT_TRUE(id.hypervisor);
  const auto reports = f.reports();
  const CacheReport& sysfs = source(reports, "sysfs");
  EXPECT_EQ(level_size(sysfs, 1), 48 * kKiB);
  EXPECT_EQ(level_size(sysfs, 2), 2 * kMiB);
  EXPECT_EQ(level_size(sysfs, 3), 300 * kMiB);
  EXPECT_EQ(sysfs.levels[2].shared_by, 16);
  EXPECT_TRUE(sysfs.notes.empty()) << "every vCPU alike";
  const CacheReport& cpuid = source(reports, "cpuid");
  EXPECT_EQ(cpuid.how, "leaf 4");
  EXPECT_EQ(level_size(cpuid, 3), 300 * kMiB);
  EXPECT_TRUE(machine::compare_cache_reports(reports).empty());
  const std::vector<int> cores = common::cpus_one_per_core_from(f.sysfs_cpu_dir());
  EXPECT_EQ(cores.size(), 16u);
  const auto all = machine::capacities_for(sysfs, cores, 16, 16);
  EXPECT_EQ(all, (std::vector<std::int64_t>{768 * kKiB, 32 * kMiB, 300 * kMiB}));
}

TEST(EmeraldRapidsVm, SixteenThreadsFindHalfTheL2SysfsReports) {
  const Seen s = calibrate_on(MachineFixture("emr-vm-sysfs"), 16);
  EXPECT_EQ(names(s.levels), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  expect_between(level(s.levels, "l1").capacity_bytes, 300 * kKiB, 600 * kKiB, "L1 knee");
  const DetectedLevel& l2 = level(s.levels, "l2");
  expect_between(l2.capacity_bytes, 9 * kMiB, 18 * kMiB, "L2 knee");
  EXPECT_TRUE(contains(l2.note, "hyperthreads")) << "half of 32 MiB: " << l2.note;
  expect_between(level(s.levels, "l3").capacity_bytes, 150 * kMiB, 400 * kMiB, "L3 knee");
  EXPECT_TRUE(s.levels.dram_flat);
  const DetectedLevel& dram = level(s.levels, "dram");
  EXPECT_GT(dram.sizes.front(), 300 * kMiB) << "never below sysfs's L3";
}

TEST(EmeraldRapidsVm, OneThreadReachesAThirdOfTheL3) {
  const Seen s = calibrate_on(MachineFixture("emr-vm-sysfs"), 1);
  EXPECT_EQ(names(s.levels), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  expect_between(level(s.levels, "l1").capacity_bytes, 36 * kKiB, 64 * kKiB, "L1 knee");
  expect_between(level(s.levels, "l2").capacity_bytes, 1536 * kKiB, 3 * kMiB, "L2 knee");
  const DetectedLevel& l3 = level(s.levels, "l3");
  expect_between(l3.capacity_bytes, 64 * kMiB, 160 * kMiB, "L3 knee");
  EXPECT_FALSE(l3.note.empty()) << "a third of sysfs's 300 MiB";
  for (const DetectedLevel& l : s.levels.levels) {
    if (l.level == "dram") {
      ASSERT_FALSE(l.sizes.empty());
      EXPECT_GT(l.sizes.front(), 300 * kMiB);
    }
  }
}

// --- built from public specifications (tests/fixtures/machines/*/about.md) ---

// Bare metal: sources agree, no hypervisor; levels and DRAM as `ends` says (within 1.5x).
void expect_levels(const Seen& s, const std::vector<std::int64_t>& ends, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(names(s.levels), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  for (std::size_t i = 0; i < 3; ++i) {
    const DetectedLevel& l = s.levels.levels[i];
    EXPECT_EQ(l.capacity_source, "sweep") << l.level;
    expect_between(l.capacity_bytes, ends[i] * 2 / 3, ends[i] * 3 / 2, l.level + " knee");
  }
  EXPECT_TRUE(s.levels.dram_flat);
  EXPECT_GT(level(s.levels, "dram").sizes.front(), std::max(s.levels.knees.back(), s.evidence.largest_reported));
}

TEST(SapphireRapidsServer, ThreeLevelsAndALargeLlcThatIsNotTheLastWord) {
  const MachineFixture f("spr-xeon-8480");
  const CpuIdentity id = counters::identity_from_cpuid(f.cpuid());
  EXPECT_EQ(id.model, 0x8F);
  EXPECT_FALSE(id.hypervisor);
  const auto reports = f.reports();
  EXPECT_TRUE(machine::compare_cache_reports(reports).empty());
  EXPECT_EQ(level_size(source(reports, "sysfs"), 3), 105 * kMiB);
  EXPECT_EQ(level_size(source(reports, "cpuid"), 3), 105 * kMiB);
  EXPECT_EQ(source(reports, "sysfs").levels[0].shared_by, 2) << "a core's two hyperthreads";
  const Seen one = calibrate_on(f, 1);
  EXPECT_EQ(one.evidence.reported, (std::vector<std::int64_t>{48 * kKiB, 2 * kMiB, 105 * kMiB}));
  expect_levels(one, {48 * kKiB, 2 * kMiB, 107 * kMiB}, "1 thread");
  const Seen all = calibrate_on(f, 56);
  EXPECT_EQ(all.cpus.size(), 56u);
  EXPECT_EQ(all.cpus.back(), 55) << "one worker per core: the first hyperthread of each";
  EXPECT_EQ(all.evidence.reported, (std::vector<std::int64_t>{56 * 48 * kKiB, 112 * kMiB, 105 * kMiB}));
  EXPECT_EQ(all.evidence.largest_reported, 112 * kMiB) << "56 L2s hold more than the one L3";
  expect_levels(all, {56 * 48 * kKiB, 112 * kMiB, 217 * kMiB}, "56 threads");
  EXPECT_TRUE(contains(level(all.levels, "l3").note, "non-inclusive")) << "217 MiB against 105 MiB reported";
}

TEST(AlderLakeHybrid, PAndECoresCachesAreCountedWhereTheWorkersRun) {
  const MachineFixture f("adl-i9-12900k");
  const CpuIdentity id = counters::identity_from_cpuid(f.cpuid());
  EXPECT_EQ(id.model, 0x97);
  const auto reports = f.reports();
  const CacheReport& sysfs = source(reports, "sysfs");
  EXPECT_EQ(level_size(sysfs, 2), 1280 * kKiB) << "CPU 0, a P-core";
  ASSERT_EQ(sysfs.notes.size(), 2u) << testing::PrintToString(sysfs.notes);
  EXPECT_TRUE(contains(sysfs.notes[0], "L1 differs between CPUs")) << sysfs.notes[0];
  EXPECT_TRUE(contains(sysfs.notes[0], "32 KiB on CPU 16,17")) << sysfs.notes[0];
  EXPECT_TRUE(contains(sysfs.notes[1], "L2 differs between CPUs")) << sysfs.notes[1];
  EXPECT_TRUE(machine::compare_cache_reports(reports).empty()) << "CPUID and sysconf describe CPU 0 as sysfs does";
  const std::vector<int> cores = common::cpus_one_per_core_from(f.sysfs_cpu_dir());
  EXPECT_EQ(cores, (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14, 16, 17, 18, 19, 20, 21, 22, 23}));
  const Seen all = calibrate_on(f, 16);
  EXPECT_EQ(all.evidence.reported, (std::vector<std::int64_t>{8 * 48 * kKiB + 8 * 32 * kKiB, 8 * 1280 * kKiB + 2 * 2 * kMiB, 30 * kMiB}))
      << "eight P-core L2s and two E-core clusters' L2s";
  // CPUID knows only the CPU it ran on: it would count sixteen P-cores.
  const auto cpuid_view = machine::capacities_for(source(all.reports, "cpuid"), all.cpus, 24, 16);
  EXPECT_EQ(cpuid_view[1], 16 * 1280 * kKiB);
  expect_levels(all, {640 * kKiB, 14 * kMiB, 30 * kMiB}, "16 threads");
  expect_levels(calibrate_on(f, 1), {48 * kKiB, 1280 * kKiB, 30 * kMiB}, "1 thread on a P-core");
}

TEST(TwoSocketCascadeLake, WorkersOnBothSocketsHaveBothL3s) {
  const MachineFixture f("clx-2s-gold6248");
  const CpuIdentity id = counters::identity_from_cpuid(f.cpuid());
  EXPECT_EQ(id.model, 0x55);
  EXPECT_EQ(id.stepping, 7);
  const auto reports = f.reports();
  const CacheReport& sysfs = source(reports, "sysfs");
  EXPECT_EQ(level_size(sysfs, 3), 28160 * kKiB);
  EXPECT_EQ(sysfs.levels[2].shared_by, 40);
  EXPECT_EQ(std::count_if(sysfs.instances.begin(), sysfs.instances.end(), [](const machine::CacheInstance& i) { return i.level == 3; }), 2);
  const std::vector<int> cores = common::cpus_one_per_core_from(f.sysfs_cpu_dir());
  ASSERT_EQ(cores.size(), 40u) << "core ids repeat across sockets: cores are (package, core) pairs";
  EXPECT_EQ(cores.back(), 39);
  const Seen all = calibrate_on(f, 40);
  EXPECT_EQ(all.evidence.reported, (std::vector<std::int64_t>{40 * 32 * kKiB, 40 * kMiB, 2 * 28160 * kKiB}));
  EXPECT_EQ(machine::capacities_for(source(all.reports, "sysconf"), all.cpus, 80, 40).back(), 28160 * kKiB) << "sysconf knows nothing of sockets";
  expect_levels(all, {1280 * kKiB, 40 * kMiB, 95 * kMiB}, "40 threads");
  const Seen one = calibrate_on(f, 1);
  EXPECT_EQ(one.evidence.reported, (std::vector<std::int64_t>{32 * kKiB, 1 * kMiB, 28160 * kKiB}));
  expect_levels(one, {32 * kKiB, 1 * kMiB, 28 * kMiB}, "1 thread");
}

}  // namespace
}  // namespace hwprof::test
