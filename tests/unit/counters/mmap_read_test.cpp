// The user-space counter read (rdpmc + the mmap page's sequence lock) against a simulated
// perf_event_mmap_page: no PMU needed.
#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "counters/mmap_read.hpp"

namespace hwprof::counters {
namespace {

perf_event_mmap_page page;
std::uint64_t pmc_value = 0;
int rdpmc_calls = 0;
std::uint32_t last_counter = 0;
bool writer_races_once = false;

std::uint64_t fake_rdpmc(std::uint32_t counter) noexcept {
  ++rdpmc_calls;
  last_counter = counter;
  if (writer_races_once) {
    // The kernel reschedules the event while we read: new offset, lock bumped.
    writer_races_once = false;
    page.offset = 5000;
    page.lock = page.lock + 1;
  }
  return pmc_value;
}

std::uint64_t fake_rdtsc() noexcept {
  return 1'000'000;
}

class MmapRead : public ::testing::Test {
 protected:
  void SetUp() override {
    page = perf_event_mmap_page{};
    page.lock = 2;
    page.index = 3;  // hardware counter 2
    page.offset = -100;
    page.time_enabled = 500;
    page.time_running = 500;
    page.cap_user_rdpmc = 1;
    page.pmc_width = 48;
    pmc_value = 1100;
    rdpmc_calls = 0;
    writer_races_once = false;
  }
  MmapCounterValue value;
};

TEST_F(MmapRead, CountIsOffsetPlusTheHardwareCounter) {
  ASSERT_TRUE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  EXPECT_EQ(value.count, 1000u);
  EXPECT_EQ(last_counter, 2u);  // rdpmc(index - 1)
  EXPECT_EQ(value.time_enabled, 500u);
  EXPECT_EQ(value.time_running, 500u);
}

TEST_F(MmapRead, TheCounterIsSignExtendedFromItsWidth) {
  pmc_value = 0xFFFF'FFFF'FFF0;  // -16 in 48 bits
  page.offset = 116;
  ASSERT_TRUE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  EXPECT_EQ(value.count, 100u);
}

TEST_F(MmapRead, AConcurrentUpdateIsRetried) {
  writer_races_once = true;
  ASSERT_TRUE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  EXPECT_EQ(rdpmc_calls, 2);
  EXPECT_EQ(value.count, 6100u);  // the second, consistent read: 5000 + 1100
}

TEST_F(MmapRead, AnEventNotOnThePmuFallsBackToRead) {
  page.index = 0;
  EXPECT_FALSE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  EXPECT_EQ(rdpmc_calls, 0);
}

TEST_F(MmapRead, WithoutUserRdpmcItFallsBackToRead) {
  page.cap_user_rdpmc = 0;
  EXPECT_FALSE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  EXPECT_EQ(rdpmc_calls, 0);
}

TEST_F(MmapRead, TimesAreExtendedToNowWithTheTimeConversion) {
  page.cap_user_time = 1;
  page.time_enabled = 1000;
  page.time_running = 400;  // multiplexed, so the times must be brought up to date
  page.time_offset = 50;
  page.time_mult = 3;
  page.time_shift = 2;
  ASSERT_TRUE(read_mmap_counter(&page, fake_rdpmc, fake_rdtsc, &value));
  // delta = 50 + (1,000,000 >> 2)·3 + ((1,000,000 & 3)·3 >> 2) = 50 + 750,000 + 0
  EXPECT_EQ(value.time_enabled, 1000u + 750'050u);
  EXPECT_EQ(value.time_running, 400u + 750'050u);
}

}  // namespace
}  // namespace hwprof::counters
