#include <gtest/gtest.h>

#include "common/suggest.hpp"

namespace hwprof::common {
namespace {

TEST(Suggest, EditDistanceCountsTranspositionsAsOneEdit) {
  EXPECT_EQ(edit_distance("conv2d", "conv2d"), 0u);
  EXPECT_EQ(edit_distance("cnov2d", "conv2d"), 1u);
  EXPECT_EQ(edit_distance("conv", "conv2d"), 2u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("ReLU", "relu"), 0u);
}

TEST(Suggest, NearestOnlyWhenNearEnough) {
  const std::vector<std::string_view> ops = {"conv2d", "linear", "layernorm", "relu", "relu6"};
  EXPECT_EQ(nearest("conv2", ops).value_or(""), "conv2d");
  EXPECT_EQ(nearest("lnear", ops).value_or(""), "linear");
  EXPECT_EQ(nearest("layer_norm", ops).value_or(""), "layernorm");
  EXPECT_FALSE(nearest("transformer", ops).has_value());
  EXPECT_EQ(did_you_mean("relu7", ops), " (did you mean 'relu6'?)");
  EXPECT_EQ(did_you_mean("xyz", ops), "");
}

}  // namespace
}  // namespace hwprof::common
