// Counter arithmetic without a PMU: multiplex scaling, mapping group reads back by id, and the
// PAPI backend's start/stop offsets summed over threads.
#include <climits>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "common/stages.hpp"
#include "counters/counter_math.hpp"

namespace hwprof::counters {
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

TEST(CounterMath, ThreadsAreSummedEventByEvent) {
  long long sums[2] = {0, 0};
  const long long first[2] = {100, 4000};
  const long long second[2] = {20, 500};
  EXPECT_TRUE(add_thread_counts(first, 2, sums));
  EXPECT_TRUE(add_thread_counts(second, 2, sums));
  EXPECT_EQ(sums[0], 120);
  EXPECT_EQ(sums[1], 4500);
  long long full[1] = {LLONG_MAX};
  const long long one[1] = {1};
  EXPECT_FALSE(add_thread_counts(one, 1, full));
}

TEST(CounterMath, AnIntervalOfCountersThatNeverStopIsTheDifferenceOfTwoReads) {
  long long totals[2] = {7, 0};
  const long long start[2] = {1000, 5};
  const long long stop[2] = {1250, 5};
  EXPECT_TRUE(close_interval(start, stop, 2, totals));
  EXPECT_EQ(totals[0], 257);
  EXPECT_EQ(totals[1], 0);
  const long long lowest[1] = {LLONG_MIN};
  const long long high[1] = {1};
  EXPECT_FALSE(close_interval(lowest, high, 1, totals));
}

TEST(CounterMath, ACountSoFarAddsTheOpenIntervalOnlyWhileRunning) {
  std::uint64_t value = 0;
  EXPECT_TRUE(count_so_far(250, 1000, 1070, false, &value));
  EXPECT_EQ(value, 250u);
  EXPECT_TRUE(count_so_far(250, 1000, 1070, true, &value));
  EXPECT_EQ(value, 320u);
  EXPECT_FALSE(count_so_far(0, 900, 800, true, &value));  // a multiplexed total scaled down
  EXPECT_FALSE(count_so_far(-1, 0, 0, false, &value));
  EXPECT_FALSE(count_so_far(LLONG_MAX, 0, 1, true, &value));
  EXPECT_FALSE(count_so_far(0, LLONG_MIN, 1, true, &value));
}

}  // namespace
}  // namespace hwprof::counters
