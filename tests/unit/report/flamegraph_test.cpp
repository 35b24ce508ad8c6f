// Sampled stacks as folded stacks, speedscope JSON and a flame graph SVG (src/report/flamegraph.cpp).
#include "report/flamegraph.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/stages.hpp"
#include "markup_check.hpp"

namespace hwprof::report {
namespace {

using ::testing::HasSubstr;

// conv1 → im2col (3 samples) and conv1 → sgemm → kernel (5); fc → [unknown] (2).
const std::vector<std::string> kNames = {"conv1", "im2col", "sgemm_;kernel\n", "sgemm", "fc"};
const std::vector<SampledStack> kStacks = {{{0, 1}, 3}, {{0, 3, 2}, 5}, {{4, 9}, 2}, {{4}, 0}};

TEST(FoldedStacks, OneLinePerStackRootFirstWithItsCount) {
  EXPECT_EQ(folded_stacks(kNames, kStacks), "conv1;im2col 3\nconv1;sgemm;sgemm__kernel_ 5\nfc;[unknown] 2\n");
}

TEST(Speedscope, ASampledProfileOfTheSharedFramesWeightedByCount) {
  const auto doc = nlohmann::json::parse(speedscope_json("resnet18", kNames, kStacks));
  EXPECT_EQ(doc.at("$schema"), "https://www.speedscope.app/file-format-schema.json");
  const auto& frames = doc.at("shared").at("frames");
  ASSERT_EQ(frames.size(), 6u);  // the five names and [unknown] for index 9
  EXPECT_EQ(frames[5].at("name"), "[unknown]");
  const auto& p = doc.at("profiles").at(0);
  EXPECT_EQ(p.at("type"), "sampled");
  EXPECT_EQ(p.at("endValue"), 10);
  EXPECT_EQ(p.at("samples"), nlohmann::json::parse("[[0, 1], [0, 3, 2], [4, 5]]"));
  EXPECT_EQ(p.at("weights"), nlohmann::json::parse("[3, 5, 2]"));
}

TEST(FlameGraph, FramesAsWideAsTheirSamplesCallersBelow) {
  const std::string svg = flamegraph_svg("resnet18 <b8>", kNames, kStacks, 1001.0, true);
  const test::Markup m = test::parse_markup(svg, test::Dialect::xml);
  ASSERT_EQ(m.problem, "");
  // The frames (the first rect is the picture's white background).
  std::vector<const test::Element*> rects;
  for (const test::Element* r : m.all("rect")) {
    if (r->attributes.count("rx") != 0) rects.push_back(r);
  }
  ASSERT_EQ(rects.size(), 6u);  // conv1, im2col, sgemm, kernel, fc, [unknown]
  // 1000 px for 10 samples: conv1 800, fc 200; im2col 300 above conv1 (a smaller y).
  const auto width = [&](std::size_t i) { return std::stod(rects[i]->attributes.at("width")); };
  const auto y = [&](std::size_t i) { return std::stod(rects[i]->attributes.at("y")); };
  EXPECT_NEAR(width(0), 800.0, 0.1);
  EXPECT_NEAR(width(1), 300.0, 0.1);
  EXPECT_LT(y(1), y(0));
  EXPECT_THAT(svg, HasSubstr("<title>conv1 (8 samples, 80.0%)</title>"));
  EXPECT_THAT(svg, HasSubstr("resnet18 &lt;b8&gt; (10 samples)"));
  // A frame under a pixel is not drawn: 1 sample in 10,001 at 1,000 px.
  const std::vector<SampledStack> thin = {{{0}, 10000}, {{4}, 1}};
  EXPECT_EQ(test::parse_markup(flamegraph_svg("t", kNames, thin, 1001.0, true), test::Dialect::xml).all("rect").size(), 2u);  // background, conv1
  // No samples: a valid picture with its title only.
  const std::string empty = flamegraph_svg("t", kNames, {}, 600.0, false);
  EXPECT_EQ(test::parse_markup(empty, test::Dialect::xml).problem, "");
  EXPECT_THAT(empty, HasSubstr("t (0 samples)"));
}

}  // namespace
}  // namespace hwprof::report
