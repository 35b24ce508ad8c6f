// Plateau detection on synthetic bandwidth curves, and the sizes of the calibration sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "calibrate/bandwidth.hpp"

namespace hwprof::detail {
namespace {

using Curve = std::vector<std::pair<std::int64_t, double>>;

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
// A Zen-like core as one thread sees it: 48 KiB L1, 1 MiB L2, 32 MiB L3.
const std::vector<std::int64_t> kThreeLevels = {48 * kKiB, 1 * kMiB, 32 * kMiB};
const std::vector<std::int64_t> kTwoLevels = {48 * kKiB, 1 * kMiB};

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

// Bandwidth stepping down at each cache: `levels[i]` well inside level i (the last value for
// DRAM), a geometric blend within ±25 % of each cache size.
double stepped(std::int64_t bytes, const std::vector<std::int64_t>& caches, const std::vector<double>& levels) {
  const double x = static_cast<double>(bytes);
  for (std::size_t i = 0; i < caches.size(); ++i) {
    const double c = static_cast<double>(caches[i]);
    if (x <= 0.8 * c) return levels[i];
    if (x < 1.25 * c) {
      const double t = std::log(x / (0.8 * c)) / std::log(1.25 / 0.8);
      return levels[i] * std::pow(levels[i + 1] / levels[i], t);
    }
  }
  return levels.back();
}

Curve curve_of(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& caches,
               const std::vector<double>& levels) {
  Curve curve;
  for (std::int64_t s : sizes) curve.emplace_back(s, stepped(s, caches, levels));
  return curve;
}

std::vector<std::string> names(const std::vector<Plateau>& plateaus) {
  std::vector<std::string> out;
  for (const Plateau& p : plateaus) out.push_back(p.level);
  return out;
}

const Plateau* level(const std::vector<Plateau>& plateaus, const std::string& name) {
  for (const Plateau& p : plateaus) {
    if (p.level == name) return &p;
  }
  return nullptr;
}

const std::vector<double> kFourLevels = {200.0, 100.0, 55.0, 20.0};

// Sharp steps: the level's value up to each cache size, the next one's beyond.
Curve sharp_curve(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& caches,
                  const std::vector<double>& levels) {
  Curve curve;
  for (std::int64_t s : sizes) {
    std::size_t i = 0;
    while (i < caches.size() && s > caches[i]) ++i;
    curve.emplace_back(s, levels[i]);
  }
  return curve;
}

TEST(FindPlateaus, CleanStepsGiveOnePlateauPerLevel) {
  const auto sizes = sweep_sizes(kThreeLevels, 1, 0);
  const auto plateaus = find_plateaus(sharp_curve(sizes, kThreeLevels, kFourLevels), kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    EXPECT_DOUBLE_EQ(plateaus[i].median_gbps, kFourLevels[i]) << plateaus[i].level;
    EXPECT_DOUBLE_EQ(plateaus[i].best_gbps, kFourLevels[i]) << plateaus[i].level;
    EXPECT_DOUBLE_EQ(plateaus[i].spread, 0.0) << plateaus[i].level;
    EXPECT_GE(plateaus[i].points, 3) << plateaus[i].level;
  }
  // Each cache plateau covers exactly its level's points; DRAM's starts at 4× the LLC.
  EXPECT_EQ(plateaus[0].from_bytes, sizes.front());
  for (std::size_t i = 0; i < kThreeLevels.size(); ++i) {
    const auto past = std::upper_bound(sizes.begin(), sizes.end(), kThreeLevels[i]);
    EXPECT_EQ(plateaus[i].to_bytes, *(past - 1)) << plateaus[i].level;
    if (i + 1 < kThreeLevels.size()) {
      EXPECT_EQ(plateaus[i + 1].from_bytes, *past) << plateaus[i + 1].level;
    }
  }
  EXPECT_EQ(plateaus[3].from_bytes, *std::lower_bound(sizes.begin(), sizes.end(), 4 * kThreeLevels[2] * 99 / 100));
  EXPECT_EQ(plateaus[3].to_bytes, sizes.back());
}

TEST(FindPlateaus, GradualTransitionsStayOutOfThePlateaus) {
  const auto sizes = sweep_sizes(kThreeLevels, 1, 0);
  const auto plateaus = find_plateaus(curve_of(sizes, kThreeLevels, kFourLevels), kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    EXPECT_DOUBLE_EQ(plateaus[i].median_gbps, kFourLevels[i]) << plateaus[i].level;
    // Points already sliding towards the next level, if any remain, are within 5 %.
    EXPECT_LE(plateaus[i].best_gbps, 1.05 * kFourLevels[i]) << plateaus[i].level;
    EXPECT_LE(plateaus[i].spread, 0.05 * kFourLevels[i] / plateaus[i].median_gbps + 1e-12) << plateaus[i].level;
  }
  EXPECT_LE(plateaus[0].to_bytes, kThreeLevels[0]);
  for (std::size_t i = 1; i < plateaus.size(); ++i) {
    EXPECT_GE(plateaus[i].from_bytes, kThreeLevels[i - 1]) << plateaus[i].level;
    if (i < kThreeLevels.size()) {
      EXPECT_LE(plateaus[i].to_bytes, kThreeLevels[i]) << plateaus[i].level;
    }
  }
  EXPECT_GE(plateaus[3].from_bytes, 4 * kThreeLevels[2] * 99 / 100);
}

TEST(FindPlateaus, FivePercentNoiseStillFindsEveryLevel) {
  const auto sizes = sweep_sizes(kThreeLevels, 1, 0);
  for (unsigned seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-0.05, 0.05);
    Curve curve = curve_of(sizes, kThreeLevels, kFourLevels);
    for (auto& point : curve) point.second *= 1.0 + noise(rng);
    const auto plateaus = find_plateaus(curve, kThreeLevels);
    ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1", "l2", "l3", "dram"})) << "seed " << seed;
    for (std::size_t i = 0; i < plateaus.size(); ++i) {
      EXPECT_NEAR(plateaus[i].median_gbps, kFourLevels[i], 0.05 * kFourLevels[i]) << "seed " << seed;
      EXPECT_LE(plateaus[i].best_gbps, 1.10 * kFourLevels[i]) << "seed " << seed;  // noise + a blended edge
      EXPECT_LE(plateaus[i].spread, 0.15) << "seed " << seed;
    }
  }
}

TEST(FindPlateaus, WithoutAnL3TheNamesStopAtL2AndDram) {
  const auto sizes = sweep_sizes(kTwoLevels, 1, 0);
  const std::vector<double> levels = {200.0, 100.0, 20.0};
  const auto plateaus = find_plateaus(curve_of(sizes, kTwoLevels, levels), kTwoLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1", "l2", "dram"}));
  EXPECT_DOUBLE_EQ(plateaus[2].median_gbps, 20.0);
  EXPECT_GE(plateaus[2].from_bytes, kTwoLevels[1]);
}

TEST(FindPlateaus, ATransitionalPointBelongsToNoPlateau) {
  // Sharp steps at each cache size, and one point halfway (in size and bandwidth) between the
  // last L2 point and the first L3 point.
  Curve curve;
  for (std::int64_t s : grid(6 * kKiB, 512 * kMiB, 2)) {
    const double v = s < kThreeLevels[0] ? 200.0 : s < kThreeLevels[1] ? 100.0 : s < kThreeLevels[2] ? 55.0 : 20.0;
    curve.emplace_back(s, v);
  }
  const auto first_l3 = std::find_if(curve.begin(), curve.end(), [](const auto& p) { return p.second == 55.0; });
  const auto between = static_cast<std::int64_t>(std::sqrt(static_cast<double>(first_l3->first) * static_cast<double>((first_l3 - 1)->first)));
  curve.insert(first_l3, {between, 75.0});
  const auto plateaus = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  for (const Plateau& p : plateaus) {
    EXPECT_FALSE(p.from_bytes <= between && between <= p.to_bytes) << p.level << " " << p.from_bytes << "-" << p.to_bytes;
    EXPECT_DOUBLE_EQ(p.spread, 0.0) << p.level;
  }
  EXPECT_DOUBLE_EQ(level(plateaus, "l2")->median_gbps, 100.0);
  EXPECT_DOUBLE_EQ(level(plateaus, "l3")->median_gbps, 55.0);
}

TEST(FindPlateaus, AFlatStretchJustPastTheLlcIsNotDram) {
  // A victim or non-inclusive LLC still serves part of a working set a little larger than
  // itself: that stretch is neither L3 nor DRAM.
  Curve curve;
  for (std::int64_t s : grid(4 * kMiB, 48 * kMiB, 4)) curve.emplace_back(s, s <= kThreeLevels[2] ? 55.0 : 40.0);
  const auto without_dram = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(without_dram), (std::vector<std::string>{"l3"}));
  EXPECT_LE(without_dram[0].to_bytes, kThreeLevels[2]);
  // Still partly cached at twice the LLC (a guest's vCPUs may share more L3 than it reports).
  for (std::int64_t s : grid(64 * kMiB, 96 * kMiB, 2)) curve.emplace_back(s, 30.0);
  for (std::int64_t s : grid(128 * kMiB, 512 * kMiB, 2)) curve.emplace_back(s, 20.0);
  const auto plateaus = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l3", "dram"}));
  EXPECT_DOUBLE_EQ(plateaus[1].median_gbps, 20.0);
  EXPECT_DOUBLE_EQ(plateaus[1].best_gbps, 20.0);
  EXPECT_EQ(plateaus[1].from_bytes, 128 * kMiB);
}

TEST(FindPlateaus, OneOutlierDoesNotSplitAPlateau) {
  const auto sizes = grid(64 * kKiB, 768 * kKiB, 4);  // well inside L2
  Curve curve;
  for (std::int64_t s : sizes) curve.emplace_back(s, 100.0);
  curve[curve.size() / 2].second = 60.0;  // a hiccup: another process, an interrupt
  const auto plateaus = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l2"}));
  EXPECT_EQ(plateaus[0].points, static_cast<int>(sizes.size()) - 1);
  EXPECT_EQ(plateaus[0].from_bytes, sizes.front());
  EXPECT_EQ(plateaus[0].to_bytes, sizes.back());
  EXPECT_DOUBLE_EQ(plateaus[0].median_gbps, 100.0);
}

TEST(FindPlateaus, AMonotoneSlopeHasNoPlateaus) {
  const auto sizes = grid(6 * kKiB, 128 * kMiB, 2);
  Curve curve;
  double v = 300.0;
  for (std::int64_t s : sizes) {
    curve.emplace_back(s, v);
    v *= 0.92;
  }
  EXPECT_TRUE(find_plateaus(curve, kThreeLevels).empty());
  // Rising the other way round (a prefetcher warming up) is no plateau either.
  for (auto& point : curve) point.second = 3000.0 / point.second;
  EXPECT_TRUE(find_plateaus(curve, kThreeLevels).empty());
}

TEST(FindPlateaus, TooFewPointsFindNothing) {
  EXPECT_TRUE(find_plateaus({}, kThreeLevels).empty());
  EXPECT_TRUE(find_plateaus({{8 * kKiB, 200.0}}, kThreeLevels).empty());
  EXPECT_TRUE(find_plateaus({{8 * kKiB, 200.0}, {16 * kKiB, 200.0}}, kThreeLevels).empty());
  const auto three = find_plateaus({{8 * kKiB, 200.0}, {12 * kKiB, 201.0}, {16 * kKiB, 199.0}}, kThreeLevels);
  ASSERT_EQ(names(three), (std::vector<std::string>{"l1"}));
  EXPECT_EQ(three[0].points, 3);
}

TEST(FindPlateaus, UnsortedInputAndUnusableValues) {
  Curve curve = {{16 * kKiB, 200.0}, {8 * kKiB, 200.0}, {12 * kKiB, std::nan("")},
                 {24 * kKiB, 200.0}, {20 * kKiB, -1.0},  {10 * kKiB, 200.0}};
  const auto plateaus = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l1"}));
  EXPECT_EQ(plateaus[0].points, 4);
  EXPECT_EQ(plateaus[0].from_bytes, 8 * kKiB);
  EXPECT_EQ(plateaus[0].to_bytes, 24 * kKiB);
}

TEST(FindPlateaus, WithoutCacheSizesEverythingIsDram) {
  const auto plateaus = find_plateaus({{8 * kKiB, 200.0}, {12 * kKiB, 200.0}, {16 * kKiB, 200.0}}, {});
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"dram"}));
}

TEST(BandFallbacks, ANoisyLevelIsReportedFromInsideItsBandAndMarked) {
  // L1 and L3 flat; L2 a saw-tooth no plateau survives; DRAM flat.
  Curve curve;
  for (std::int64_t s : grid(6 * kKiB, 512 * kMiB, 4)) {
    double v = stepped(s, kThreeLevels, {600.0, 300.0, 150.0, 40.0});
    if (s > 60 * kKiB && s < 900 * kKiB) v *= (curve.size() % 2 == 0) ? 1.3 : 0.75;
    curve.emplace_back(s, v);
  }
  const auto found = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(level(found, "l2"), nullptr) << "the saw-tooth must not pass for a plateau";
  const auto all = with_band_fallbacks(found, curve, kThreeLevels);
  ASSERT_EQ(names(all), (std::vector<std::string>{"l1", "l2", "l3", "dram"}));
  const Plateau* l2 = level(all, "l2");
  ASSERT_NE(l2, nullptr);
  EXPECT_FALSE(l2->flat);
  // Only points well inside L2's band: above twice L1, at most three quarters of L2.
  EXPECT_GT(l2->from_bytes, 2 * 48 * kKiB);
  EXPECT_LE(l2->to_bytes, 3 * kMiB / 4);
  EXPECT_NEAR(l2->best_gbps, 390.0, 1e-9);
  EXPECT_GT(l2->spread, 0.5);
  // The plateaus that were found are kept as they were.
  for (const char* name : {"l1", "l3", "dram"}) {
    const Plateau* kept = level(all, name);
    const Plateau* original = level(found, name);
    ASSERT_NE(kept, nullptr) << name;
    ASSERT_NE(original, nullptr) << name;
    EXPECT_TRUE(kept->flat) << name;
    EXPECT_EQ(kept->points, original->points) << name;
  }
}

TEST(BandFallbacks, ALevelWithoutPointsInsideItsBandStaysAbsent) {
  // Points only inside L1 and far into DRAM, none flat enough for a plateau anywhere.
  const Curve curve = {{8 * kKiB, 500.0}, {16 * kKiB, 200.0}, {512 * kMiB, 40.0}};
  const auto all = with_band_fallbacks(find_plateaus(curve, kThreeLevels), curve, kThreeLevels);
  ASSERT_EQ(names(all), (std::vector<std::string>{"l1", "dram"}));
  EXPECT_FALSE(all[0].flat);
  EXPECT_DOUBLE_EQ(all[0].best_gbps, 500.0);
  EXPECT_DOUBLE_EQ(all[1].best_gbps, 40.0);
  EXPECT_EQ(all[1].points, 1);
}

TEST(FindPlateaus, TwoFlatStretchesInOneLevelKeepTheLonger) {
  Curve curve;
  for (std::int64_t s : grid(64 * kKiB, 128 * kKiB, 4)) curve.emplace_back(s, 150.0);   // 5 points
  for (std::int64_t s : grid(256 * kKiB, 512 * kKiB, 2)) curve.emplace_back(s, 100.0);  // 3 points
  const auto plateaus = find_plateaus(curve, kThreeLevels);
  ASSERT_EQ(names(plateaus), (std::vector<std::string>{"l2"}));
  EXPECT_DOUBLE_EQ(plateaus[0].median_gbps, 150.0);
  EXPECT_EQ(plateaus[0].points, 5);
}

// --- sweep sizes ---

void expect_sweep_properties(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& caches, int threads,
                             std::int64_t min_dram) {
  const std::int64_t granule = 1536 * threads;
  ASSERT_GE(sizes.size(), 2u);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(sizes[i] % granule, 0) << sizes[i];
    if (i == 0) continue;
    EXPECT_GT(sizes[i], sizes[i - 1]);
    // At most half an octave apart (a little more where rounding to whole blocks bites).
    const double limit = sizes[i - 1] >= 64 * granule ? std::sqrt(2.0) * 1.01 : 1.6;
    EXPECT_LE(static_cast<double>(sizes[i]) / static_cast<double>(sizes[i - 1]), limit) << sizes[i];
  }
  const std::int64_t l1 = caches.front();
  EXPECT_LE(sizes.front(), std::max(granule, l1 / 8 * 5 / 4));
  EXPECT_GE(sizes.front(), std::max(granule, l1 / 16));
  const std::int64_t last = std::max(8 * caches.back(), min_dram);
  EXPECT_GE(sizes.back(), last);
  EXPECT_LT(sizes.back(), last + granule);
}

std::size_t count_between(const std::vector<std::int64_t>& sizes, double from, double to) {
  return static_cast<std::size_t>(std::count_if(sizes.begin(), sizes.end(), [&](std::int64_t s) {
    return static_cast<double>(s) >= from && static_cast<double>(s) <= to;
  }));
}

TEST(SweepSizes, OneThreadFromAnEighthOfL1ToEightTimesTheLlc) {
  const auto sizes = sweep_sizes(kThreeLevels, 1, 0);
  expect_sweep_properties(sizes, kThreeLevels, 1, 0);
  // About 4 points per octave within a factor 2 of each cache size, about 2 elsewhere.
  for (std::int64_t c : kThreeLevels) {
    EXPECT_GE(count_between(sizes, 0.5 * static_cast<double>(c), 2.0 * static_cast<double>(c)), 8u) << c;
  }
  const double from = 2.0 * static_cast<double>(kThreeLevels[1]);
  const double to = 0.5 * static_cast<double>(kThreeLevels[2]);  // 3 octaves with no cache size in them
  EXPECT_LE(count_between(sizes, from, to), 7u);
  EXPECT_GE(count_between(sizes, from, to), 5u);
  EXPECT_LE(sizes.size(), 45u);  // the calibration's time budget
}

TEST(SweepSizes, TwoThreadsUseWholeBlocksPerWorker) {
  const std::vector<std::int64_t> caches = {96 * kKiB, 2 * kMiB, 32 * kMiB};
  const auto sizes = sweep_sizes(caches, 2, 0);
  expect_sweep_properties(sizes, caches, 2, 0);
}

TEST(SweepSizes, MinimumDramSizeExtendsTheSweep) {
  const auto sizes = sweep_sizes(kThreeLevels, 1, 512 * kMiB);
  expect_sweep_properties(sizes, kThreeLevels, 1, 512 * kMiB);
  const auto shorter = sweep_sizes(kThreeLevels, 1, 64 * kMiB);  // below 8 × LLC: no effect
  EXPECT_EQ(shorter.back(), sweep_sizes(kThreeLevels, 1, 0).back());
}

TEST(SweepSizes, WithoutAnL3TheSweepEndsPastL2) {
  const auto sizes = sweep_sizes(kTwoLevels, 1, 0);
  expect_sweep_properties(sizes, kTwoLevels, 1, 0);
  EXPECT_LT(sizes.back(), 8 * kMiB + 1536);
}

TEST(SweepSizes, UnknownCachesStillGiveASweep) {
  const auto sizes = sweep_sizes({}, 1, 0);
  ASSERT_GE(sizes.size(), 10u);
  EXPECT_TRUE(std::is_sorted(sizes.begin(), sizes.end()));
  EXPECT_GE(sizes.back(), 64 * kMiB);
  EXPECT_FALSE(sweep_sizes({0, -1}, 0, 0).empty());
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
}  // namespace hwprof::detail
