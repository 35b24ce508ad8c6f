// Counter arithmetic without a PMU: multiplex scaling and mapping group reads back by id.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "counters/counter_math.hpp"

namespace hwprof::detail {
namespace {

TEST(CounterMath, ACounterThatRanThroughoutIsExact) {
  const CounterReading r = scale_counter(1000, 500, 500);
  EXPECT_EQ(r.status, CounterStatus::ok);
  EXPECT_DOUBLE_EQ(r.value, 1000.0);
  EXPECT_EQ(r.raw, 1000u);
  EXPECT_DOUBLE_EQ(r.running_fraction, 1.0);
}

TEST(CounterMath, MultiplexedCountersAreScaledAndSaySo) {
  // Ran a quarter of the time it was enabled: 250 counted → 1000 estimated.
  const CounterReading r = scale_counter(250, 400, 100);
  EXPECT_EQ(r.status, CounterStatus::multiplexed);
  EXPECT_DOUBLE_EQ(r.value, 1000.0);
  EXPECT_EQ(r.raw, 250u);
  EXPECT_DOUBLE_EQ(r.running_fraction, 0.25);
}

TEST(CounterMath, ACounterThatNeverRanIsNotCountedRatherThanZero) {
  EXPECT_EQ(scale_counter(0, 1000, 0).status, CounterStatus::not_counted);
  EXPECT_EQ(scale_counter(0, 0, 0).status, CounterStatus::not_counted);
  EXPECT_FALSE(scale_counter(0, 1000, 0).has_value());
  // Zero events over a real interval is a real zero.
  const CounterReading zero = scale_counter(0, 1000, 1000);
  EXPECT_EQ(zero.status, CounterStatus::ok);
  EXPECT_TRUE(zero.has_value());
}

TEST(CounterMath, RunningLongerThanEnabledIsClampedToOne) {
  // The kernel's times are sampled separately and can disagree by a tick.
  const CounterReading r = scale_counter(10, 100, 101);
  EXPECT_EQ(r.status, CounterStatus::ok);
  EXPECT_DOUBLE_EQ(r.value, 10.0);
}

TEST(CounterMath, GroupReadsMapBackById) {
  // nr = 3, enabled 900, running 300, then {value, id} in the kernel's order.
  const std::vector<std::uint64_t> words = {3, 900, 300, 11, 101, 22, 102, 33, 103};
  const std::uint64_t ids[] = {103, 101, 102};  // our order differs from the kernel's
  std::uint64_t values[3] = {};
  GroupTimes times;
  ASSERT_TRUE(parse_group_read(words.data(), words.size(), ids, 3, values, &times));
  EXPECT_EQ(values[0], 33u);
  EXPECT_EQ(values[1], 11u);
  EXPECT_EQ(values[2], 22u);
  EXPECT_EQ(times.enabled, 900u);
  EXPECT_EQ(times.running, 300u);
}

TEST(CounterMath, MalformedGroupReadsAreRejected) {
  const std::uint64_t ids[] = {101, 102};
  std::uint64_t values[2] = {};
  GroupTimes times;
  const std::vector<std::uint64_t> good = {2, 9, 9, 1, 101, 2, 102};
  EXPECT_TRUE(parse_group_read(good.data(), good.size(), ids, 2, values, &times));
  EXPECT_FALSE(parse_group_read(good.data(), 6, ids, 2, values, &times));  // short
  EXPECT_FALSE(parse_group_read(good.data(), 2, ids, 2, values, &times));  // no header
  const std::vector<std::uint64_t> wrong_count = {3, 9, 9, 1, 101, 2, 102, 3, 103};
  EXPECT_FALSE(parse_group_read(wrong_count.data(), wrong_count.size(), ids, 2, values, &times));
  const std::vector<std::uint64_t> unknown_id = {2, 9, 9, 1, 101, 2, 999};
  EXPECT_FALSE(parse_group_read(unknown_id.data(), unknown_id.size(), ids, 2, values, &times));
  EXPECT_EQ(group_read_words(2), 7u);
}

}  // namespace
}  // namespace hwprof::detail
