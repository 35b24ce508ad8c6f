#include <limits>

#include <gtest/gtest.h>

#include "common/count.hpp"
#include "common/stages.hpp"

namespace hwprof::cost {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

TEST(Count, ArithmeticIsExactInRange) {
  const Count c = Count(3) * 4 + 5 - 2;
  EXPECT_FALSE(c.overflowed());
  EXPECT_EQ(c.value(), 15);
}

TEST(Count, OverflowIsRememberedThroughLaterOperations) {
  const Count big = Count(kMax / 2 + 1) * 2;
  EXPECT_TRUE(big.overflowed());
  EXPECT_TRUE((big - Count(kMax)).overflowed());
  EXPECT_TRUE((Count(0) + big).overflowed());
  EXPECT_TRUE((Count(kMax) + 1).overflowed());
  EXPECT_TRUE((Count(-kMax) - 2).overflowed());
  Count sum = kMax;
  sum += 0;
  EXPECT_FALSE(sum.overflowed());
  sum += 1;
  EXPECT_TRUE(sum.overflowed());
}

}  // namespace
}  // namespace hwprof::cost
