// Memory levels from synthetic bandwidth curves (the sweep's knees decide; the sources only
// name and are compared), the sweep's sizes, and the rule that DRAM never starts below a
// reported cache. Recorded machines are in machine_fixtures_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "calibrate/bandwidth.hpp"
#include "calibrate/memory_levels.hpp"
#include "calibrate/memory_sweep.hpp"
#include "common/stages.hpp"
#include "level_detection_support.hpp"
#include "text_support.hpp"

namespace hwprof::calibration {
namespace {

using test::level;
using test::names;

using ::hwprof::test::kKiB;
using ::hwprof::test::kMiB;
// A Zen-like core as one thread sees it: 48 KiB L1, 1 MiB L2, 32 MiB L3.
const std::vector<std::int64_t> kThreeLevels = {48 * kKiB, 1 * kMiB, 32 * kMiB};
const std::vector<double> kFourLevels = {200.0, 100.0, 55.0, 20.0};

// Sizes 2^(k/per_octave) from `from` to `to`.
std::vector<std::int64_t> grid(std::int64_t from, std::int64_t to, int per_octave) {
  std::vector<std::int64_t> sizes;
  for (int k = 0;; ++k) {
    const double bytes = static_cast<double>(from) * std::exp2(static_cast<double>(k) / per_octave);
    if (bytes > static_cast<double>(to) * 1.0001) break;
    sizes.push_back(std::llround(bytes));
  }
  return sizes;
}

// Bandwidth stepping down past each cache: `levels[i]` inside level i (the last for DRAM), a
// geometric blend from each cache size to 1.5× it.
double stepped(std::int64_t bytes, const std::vector<std::int64_t>& caches, const std::vector<double>& levels) {
  const double x = static_cast<double>(bytes);
  for (std::size_t i = 0; i < caches.size(); ++i) {
    const double c = static_cast<double>(caches[i]);
    if (x <= c) return levels[i];
    if (x < 1.5 * c) {
      const double t = std::log(x / c) / std::log(1.5);
      return levels[i] * std::pow(levels[i + 1] / levels[i], t);
    }
  }
  return levels.back();
}

Curve curve_of(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& caches, const std::vector<double>& levels) {
  Curve curve;
  for (std::int64_t s : sizes) curve.emplace_back(s, stepped(s, caches, levels));
  return curve;
}

LevelEvidence reported(const std::vector<std::int64_t>& caches, const std::string& source = "sysfs") {
  LevelEvidence e;
  e.reported = caches;
  e.reported_source = caches.empty() ? "" : source;
  e.largest_reported = caches.empty() ? 0 : *std::max_element(caches.begin(), caches.end());
  e.largest_source = e.reported_source;
  return e;
}

bool any_note_has(const LevelDetection& d, const std::string& text) {
  return std::any_of(d.notes.begin(), d.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// Within a factor of `factor` of `expected`.
void expect_near_size(std::int64_t actual, std::int64_t expected, double factor, const std::string& what) {
  EXPECT_GE(static_cast<double>(actual), static_cast<double>(expected) / factor) << what << ": " << actual;
  EXPECT_LE(static_cast<double>(actual), static_cast<double>(expected) * factor) << what << ": " << actual;
}

TEST(DetectLevels, CleanStepsGiveEveryLevelWithItsKnee) {
  const Curve curve = curve_of(grid(6 * kKiB, 256 * kMiB, 4), kThreeLevels, kFourLevels);
  const LevelDetection d = detect_levels(curve, reported(kThreeLevels));
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  for (std::size_t i = 0; i < 3; ++i) {
    const DetectedLevel& l = d.levels[i];
    EXPECT_EQ(l.capacity_source, "sweep") << l.level;
    expect_near_size(l.capacity_bytes, kThreeLevels[i], 1.4, l.level);
    EXPECT_EQ(l.reported_bytes, kThreeLevels[i]);
    EXPECT_TRUE(l.note.empty()) << l.level << ": " << l.note;
    EXPECT_TRUE(l.flat);
  }
  EXPECT_TRUE(d.dram_flat);
  EXPECT_EQ(d.extend_to, 0);
  const DetectedLevel& dram = level(d, "dram");
  ASSERT_GE(dram.sizes.size(), kTailPoints);
  EXPECT_GT(dram.sizes.front(), 32 * kMiB) << "DRAM starts past the last cache";
}

// This project's Zen 5 VM, a quick calibration on a quiet machine: L1 and L2 within 20 % of
// each other and of the band past them, one knee at ~34 MiB, CPUID reporting 48 KiB / 1 MiB /
// 508 MiB. The sweep's one cache band is named L3; L1 and L2 end at their reported sizes, and
// the L3 band must not keep their points (its ceiling came out as an L1 point, above L2's).
TEST(DetectLevels, ABandNamedForAnOuterLevelLeavesTheInnerLevelsTheirPoints) {
  const std::vector<std::int64_t> cpuid = {48 * kKiB, 1 * kMiB, 508 * kMiB};
  Curve curve;
  for (std::int64_t s : grid(6 * kKiB, 720 * kMiB, 2)) {
    double gbps = s <= 48 * kKiB ? 81.8 : s <= 1 * kMiB ? 76.5 : s <= 34 * kMiB ? 70.0 : s <= 508 * kMiB ? 45.0 : 32.8;
    curve.emplace_back(s, gbps);
  }
  const LevelDetection d = detect_levels(curve, reported(cpuid, "cpuid"));
  std::int64_t inner_end = 0;
  for (const DetectedLevel& l : d.levels) {
    if (l.level == "dram") continue;
    ASSERT_FALSE(l.sizes.empty()) << l.level;
    EXPECT_GT(l.sizes.front(), inner_end) << l.level << " starts inside the level before it";
    inner_end = std::max(inner_end, l.capacity_bytes);
  }
}

TEST(DetectLevels, WithoutAnySourceTheKneesAloneNameTheLevels) {
  // A virtual machine that hides its caches: no sysfs cache, nothing from CPUID. DRAM used to be "a band from 0
  // bytes up"; the knees must find the caches by themselves.
  const Curve curve = curve_of(grid(6 * kKiB, 256 * kMiB, 4), kThreeLevels, kFourLevels);
  const LevelDetection d = detect_levels(curve, LevelEvidence{});
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  expect_near_size(level(d, "l3").capacity_bytes, 32 * kMiB, 1.4, "l3");
  EXPECT_EQ(level(d, "l2").reported_bytes, 0);
  EXPECT_GT(level(d, "dram").sizes.front(), 32 * kMiB);
  for (std::int64_t s : level(d, "dram").sizes) {
    EXPECT_NEAR(stepped(s, kThreeLevels, kFourLevels), 20.0, 1e-9) << "DRAM's points are DRAM's: " << s;
  }
}

TEST(DetectLevels, FivePercentNoiseStillFindsEveryLevel) {
  const auto sizes = grid(6 * kKiB, 256 * kMiB, 4);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.05, 0.05);
  for (int trial = 0; trial < 20; ++trial) {
    Curve curve = curve_of(sizes, kThreeLevels, kFourLevels);
    for (auto& p : curve) p.second *= 1.0 + noise(rng);
    const LevelDetection d = detect_levels(curve, reported(kThreeLevels));
    ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"})) << "trial " << trial;
    for (std::size_t i = 0; i < 3; ++i) expect_near_size(d.levels[i].capacity_bytes, kThreeLevels[i], 1.5, d.levels[i].level);
  }
}

TEST(DetectLevels, DramNeverStartsBelowTheLargestReportedCache) {
  // CPUID says L3 = 508 MiB (the host socket's), the guest's L3 ends at 32 MiB: past the knee
  // the curve is flat, but nothing below 508 MiB may be called DRAM.
  const std::int64_t inflated = 508 * kMiB;
  LevelEvidence e = reported({48 * kKiB, 1 * kMiB, inflated}, "cpuid");
  e.largest_source = "CPUID leaves 0x80000005/0x80000006";
  const Curve short_sweep = curve_of(grid(6 * kKiB, 512 * kMiB, 4), kThreeLevels, kFourLevels);
  const LevelDetection first = detect_levels(short_sweep, e);
  EXPECT_FALSE(first.dram_flat) << "no flat point above 508 MiB yet";
  EXPECT_GT(first.extend_to, 2 * inflated) << "the sweep must go on past 508 MiB";
  const DetectedLevel& l3 = level(first, "l3");
  expect_near_size(l3.capacity_bytes, 32 * kMiB, 1.4, "l3 from the knee, not from CPUID");
  EXPECT_NE(l3.note.find("508 MiB"), std::string::npos) << l3.note;
  EXPECT_NE(l3.note.find("cpuid"), std::string::npos) << l3.note;
  EXPECT_TRUE(any_note_has(first, "counted as neither cache nor DRAM")) << "the points between 32 and 508 MiB";
  for (const DetectedLevel& l : first.levels) {
    if (l.level != "dram") continue;
    EXPECT_FALSE(l.flat);
    EXPECT_FALSE(l.note.empty());
  }

  const Curve long_sweep = curve_of(grid(6 * kKiB, 1600 * kMiB, 4), kThreeLevels, kFourLevels);
  const LevelDetection d = detect_levels(long_sweep, e);
  EXPECT_TRUE(d.dram_flat);
  EXPECT_EQ(d.extend_to, 0);
  const DetectedLevel& dram = level(d, "dram");
  ASSERT_GE(dram.sizes.size(), kTailPoints);
  EXPECT_GT(dram.sizes.front(), inflated);
}

TEST(DetectLevels, NoFlatTailAsksForMoreAndMarksDramUncertain) {
  // Bandwidth still falling at the end of the sweep (a victim LLC with a long tail).
  Curve curve = curve_of(grid(6 * kKiB, 16 * kMiB, 4), kThreeLevels, kFourLevels);
  double v = 55.0;
  for (std::int64_t s : grid(24 * kMiB, 256 * kMiB, 2)) curve.emplace_back(s, v *= 0.85);
  const LevelDetection d = detect_levels(curve, reported(kThreeLevels));
  EXPECT_FALSE(d.dram_flat);
  EXPECT_GE(d.extend_to, 4 * curve.back().first - 1) << "two octaves on";
  const DetectedLevel& dram = level(d, "dram");
  EXPECT_FALSE(dram.sizes.empty()) << "the best that could be had, marked";
  EXPECT_FALSE(dram.flat);
  EXPECT_NE(dram.note.find("still falling"), std::string::npos) << dram.note;
}

TEST(DetectLevels, AKneeFarFromTheReportedSizeIsNoted) {
  // sysfs reports 16 × 2 MiB of L2 for 16 vCPUs, the sweep's L2 ends at 13 MiB: hyperthread
  // pairs on the host (the lent Emerald Rapids guest).
  const std::vector<std::int64_t> sysfs = {768 * kKiB, 32 * kMiB, 300 * kMiB};
  const std::vector<std::int64_t> real = {384 * kKiB, 13 * kMiB, 240 * kMiB};
  const Curve curve = curve_of(grid(96 * kKiB, 2048 * kMiB, 4), real, {3000, 650, 160, 95});
  LevelEvidence e = reported(sysfs);
  e.threads = 16;
  const LevelDetection d = detect_levels(curve, e);
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  const DetectedLevel& l2 = level(d, "l2");
  expect_near_size(l2.capacity_bytes, 13 * kMiB, 1.4, "l2");
  EXPECT_NE(l2.note.find("16 threads"), std::string::npos) << l2.note;
  EXPECT_NE(l2.note.find("hyperthreads"), std::string::npos) << l2.note;
  EXPECT_TRUE(level(d, "l3").note.empty()) << "240 of 300 MiB is within 2x: " << level(d, "l3").note;
  EXPECT_GT(level(d, "dram").sizes.front(), 300 * kMiB);
}

TEST(DetectLevels, AReportedLevelWithoutAKneeComesFromItsBandAndIsMarked) {
  // L3 as fast as DRAM within 20 %: no knee; the sources say there is one.
  const Curve curve = curve_of(grid(6 * kKiB, 256 * kMiB, 4), kThreeLevels, {200.0, 100.0, 22.0, 20.0});
  const LevelDetection d = detect_levels(curve, reported(kThreeLevels));
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  const DetectedLevel& l3 = level(d, "l3");
  EXPECT_FALSE(l3.flat);
  EXPECT_EQ(l3.capacity_source, "sysfs");
  EXPECT_EQ(l3.capacity_bytes, 32 * kMiB);
  ASSERT_FALSE(l3.sizes.empty());
  EXPECT_GT(l3.sizes.front(), 2 * kMiB);
  EXPECT_LE(l3.sizes.back(), 24 * kMiB);
  EXPECT_NE(l3.note.find("no knee"), std::string::npos);
  EXPECT_GT(level(d, "dram").sizes.front(), 32 * kMiB);
}

TEST(DetectLevels, ARiseWithinALevelDoesNotSplitIt) {
  // The recorded Zen 5 VM: L2 climbs from 160 to 210 GB/s across its range (prefetch).
  Curve curve;
  for (std::int64_t s : grid(8 * kKiB, 45 * kKiB, 4)) curve.emplace_back(s, 480.0);
  double v = 155.0;
  for (std::int64_t s : grid(64 * kKiB, 724 * kKiB, 4)) curve.emplace_back(s, v *= 1.03);
  for (std::int64_t s : grid(2 * kMiB, 12 * kMiB, 4)) curve.emplace_back(s, 95.0);
  for (std::int64_t s : grid(64 * kMiB, 512 * kMiB, 4)) curve.emplace_back(s, 36.0);
  const LevelDetection d = detect_levels(curve, LevelEvidence{});
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  EXPECT_EQ(level(d, "l2").sizes.front(), grid(64 * kKiB, 724 * kKiB, 4).front());
}

TEST(DetectLevels, OneOutlierDoesNotSplitAPlateau) {
  Curve curve = curve_of(grid(6 * kKiB, 256 * kMiB, 4), kThreeLevels, kFourLevels);
  for (auto& p : curve) {
    if (p.first > 100 * kKiB && p.first < 140 * kKiB) p.second = 60.0;  // a hiccup inside L2
  }
  const LevelDetection d = detect_levels(curve, reported(kThreeLevels));
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  EXPECT_LT(level(d, "l2").sizes.front(), 100 * kKiB);
  EXPECT_GT(level(d, "l2").sizes.back(), 140 * kKiB);
}

TEST(DetectLevels, MoreThanThreeKneesAreJoinedToThree) {
  const std::vector<std::int64_t> four = {32 * kKiB, 512 * kKiB, 8 * kMiB, 64 * kMiB};
  const Curve curve = curve_of(grid(4 * kKiB, 1024 * kMiB, 4), four, {400, 200, 150, 60, 20});
  const LevelDetection d = detect_levels(curve, LevelEvidence{});
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  EXPECT_EQ(d.knees.size(), 3u);
  EXPECT_TRUE(level(d, "dram").flat);
}

TEST(DetectLevels, AFurtherLevelPastL3IsNeitherCacheNorDram) {
  // Recorded on this project's VM, 2 threads: a plateau at 93 GB/s from 64 to 128 MiB between
  // its 32 MiB L3 and DRAM, which no source describes.
  const std::vector<std::int64_t> ends = {96 * kKiB, 2 * kMiB, 40 * kMiB, 300 * kMiB};
  const Curve curve = curve_of(grid(12 * kKiB, 1536 * kMiB, 4), ends, {780, 265, 150, 93, 54});
  const LevelDetection d = detect_levels(curve, LevelEvidence{});
  ASSERT_EQ(names(d), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  expect_near_size(level(d, "l3").capacity_bytes, 40 * kMiB, 1.4, "l3 ends where it does, not past the extra level");
  EXPECT_TRUE(any_note_has(d, "a further level past L3")) << testing::PrintToString(d.notes);
  EXPECT_GT(level(d, "dram").sizes.front(), 300 * kMiB) << "DRAM starts past the extra level too";
}

TEST(DetectLevels, AMonotoneSlopeHasNoLevelsAndAsksForMore) {
  Curve curve;
  double v = 300.0;
  for (std::int64_t s : grid(6 * kKiB, 128 * kMiB, 2)) curve.emplace_back(s, v *= 0.9);
  const LevelDetection d = detect_levels(curve, LevelEvidence{});
  EXPECT_TRUE(d.knees.empty());
  EXPECT_FALSE(d.dram_flat);
  EXPECT_GT(d.extend_to, 128 * kMiB);
  for (const DetectedLevel& l : d.levels) EXPECT_FALSE(l.flat) << l.level;
}

TEST(DetectLevels, UnsortedInputUnusableValuesAndNothingAtAll) {
  Curve curve = curve_of(grid(6 * kKiB, 256 * kMiB, 4), kThreeLevels, kFourLevels);
  std::reverse(curve.begin(), curve.end());
  curve.emplace_back(100 * kKiB, std::nan(""));
  curve.emplace_back(200 * kKiB, -1.0);
  curve.emplace_back(0, 50.0);
  EXPECT_EQ(names(detect_levels(curve, reported(kThreeLevels))), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  const LevelDetection none = detect_levels({}, reported(kThreeLevels));
  EXPECT_TRUE(none.levels.empty());
  EXPECT_FALSE(none.notes.empty());
}

// --- sweep sizes ---

TEST(SweepSizes, WholeBlocksAscendingDenserNearCaches) {
  for (int threads : {1, 2, 16}) {
    const std::int64_t granule = 1536 * threads;
    const auto sizes = sweep_sizes(6 * kKiB * threads, 256 * kMiB, 2, kThreeLevels, threads);
    ASSERT_GE(sizes.size(), 10u);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(sizes[i] % granule, 0) << sizes[i];
      if (i > 0) {
        EXPECT_GT(sizes[i], sizes[i - 1]);
      }
    }
    EXPECT_GE(sizes.back(), 256 * kMiB);
    EXPECT_LT(sizes.back(), 256 * kMiB + granule);
  }
  const auto sizes = sweep_sizes(6 * kKiB, 256 * kMiB, 2, kThreeLevels, 1);
  const auto count = [&](double from, double to) {
    return std::count_if(sizes.begin(), sizes.end(), [&](std::int64_t s) { return s >= from && s <= to; });
  };
  EXPECT_GE(count(16 * kMiB, 64 * kMiB), 8) << "quarter octaves within 2x of 32 MiB";
  EXPECT_LE(count(2 * kMiB, 16 * kMiB), 7) << "half octaves away from every cache";
  EXPECT_FALSE(sweep_sizes(0, 0, 0, {0, -1}, 0).empty());
}

TEST(PlannedSizes, PastTheLargestReportedCacheWithinMemory) {
  LevelEvidence e = reported({96 * kKiB, 2 * kMiB, 508 * kMiB}, "cpuid");
  const auto sizes = planned_sizes(e, 2, false, std::int64_t{8} << 30);
  EXPECT_GE(sizes.back(), static_cast<std::int64_t>(2.9 * 508 * kMiB) - 1);
  EXPECT_LE(sizes.front(), 96 * kKiB / 8 + 3072);
  const auto capped = planned_sizes(e, 2, false, 600 * kMiB);
  EXPECT_LE(capped.back(), 600 * kMiB + 3072);
  const auto unknown = planned_sizes(LevelEvidence{}, 1, false, std::int64_t{8} << 30);
  EXPECT_GE(unknown.back(), 256 * kMiB) << "no source: still far enough for DRAM";
  // Quick: DRAM's points in quarter octaves just above the largest reported cache, so half
  // the arrays full calibration needs.
  const auto quick = planned_sizes(e, 2, true, std::int64_t{8} << 30);
  EXPECT_GT(quick.back(), 508 * kMiB);
  EXPECT_LT(quick.back(), 1.5 * 508 * kMiB);
  EXPECT_GE(std::count_if(quick.begin(), quick.end(), [](std::int64_t s) { return s > 508 * kMiB; }), 3);
}

TEST(StreamKernels, NamesAndStreamByteConvention) {
  EXPECT_STREQ(stream_kernel_name(StreamKernel::copy), "copy");
  EXPECT_STREQ(stream_kernel_name(StreamKernel::triad), "triad");
  EXPECT_EQ(stream_bytes_per_element(StreamKernel::copy), 16);
  EXPECT_EQ(stream_bytes_per_element(StreamKernel::scale), 16);
  EXPECT_EQ(stream_bytes_per_element(StreamKernel::add), 24);
  EXPECT_EQ(stream_bytes_per_element(StreamKernel::triad), 24);
}

}  // namespace
}  // namespace hwprof::calibration
