// A profile's sampling section (src/report/sampling_report.cpp): rows by samples, each layer's
// leading functions with their shares and intervals, C++ names without their parameters or
// clone suffixes, too few samples said, the measured cost and the warnings; the JSON object.
#include "report/sampling_report.hpp"

#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include "common/stages.hpp"

namespace hwprof::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Profile sampled() {
  Profile p;
  SamplingProfile s;
  s.spec = "cpu-clock@1000";
  s.rate = "1000 Hz";
  s.samples = 130;
  s.sampled_passes = 3;
  s.unsampled_passes = 3;
  s.overhead = 0.012;
  s.overhead_noise = 0.004;
  s.ambiguous = 2;
  s.warnings = {"4 samples were lost"};
  SampledLayer conv{"conv1", 0, 100, 60, true, {}, 0, {}};
  conv.top = {{"sgemm_kernel_HASWELL", "libopenblas.so.0", 70, 0.70, 0.60, 0.78},
              {"hwprof::nn::(anonymous namespace)::im2col(hwprof::nn::Conv2dGeometry const&, float*, int) [clone ._omp_fn.0]", "hwprof", 30, 0.30,
               0.22, 0.40}};
  s.layers = {conv, SampledLayer{"fc", 1, 28, 0, false, {}, 0, {}, false}, SampledLayer{"(outside every layer)", -1, 2, 0, false, {}, 0, {}, true}};
  p.sampling = s;
  return p;
}

TEST(SamplingReport, EachLayersFunctionsWithTheirSharesAndWhatCannotBeSaid) {
  const std::string text = sampling_section(sampled(), 10);
  EXPECT_THAT(text, HasSubstr("Where inside the layers the time went (sampled: cpu-clock@1000, 1000 Hz; 130 samples on 3 of 6 measured passes)"));
  EXPECT_THAT(text, HasSubstr("sgemm_kernel_HASWELL 70% (60%-78%) · hwprof::nn::(anonymous namespace)::im2col [omp] 30% (22%-40%)"));
  EXPECT_THAT(text, Not(HasSubstr("Conv2dGeometry")));
  EXPECT_THAT(text, HasSubstr("too few samples to say"));
  EXPECT_THAT(text, HasSubstr("Sampling cost: the sampled passes' median was +1.2% of the others' (measured, same run; the unsampled passes "
                              "themselves spread ±0.4%)."));
  Profile noisy = sampled();
  noisy.sampling->overhead_noise = 0.05;
  EXPECT_THAT(sampling_section(noisy, 10), HasSubstr("so the cost is within the noise"));
  EXPECT_THAT(text, HasSubstr("2 samples on threads without a layer while several threads had one open"));
  EXPECT_THAT(text, HasSubstr("WARNING: 4 samples were lost"));
  // One row asked for: the rest said, not dropped silently.
  EXPECT_THAT(sampling_section(sampled(), 1), HasSubstr("... 2 more rows with samples"));
  // Without sampling, nothing.
  EXPECT_EQ(sampling_section(Profile{}, 10), "");
}

TEST(SamplingReport, PartsOfTheCodeComeFirstWithTheirIntervalsThenTheFunctions) {
  Profile p = sampled();
  p.sampling->layers[0].parts = {{"GEMM kernel", 70, 0.70, 0.60, 0.78}, {"im2col", 30, 0.30, 0.22, 0.40}};
  const std::string text = sampling_section(p, 10);
  EXPECT_THAT(text, HasSubstr("Parts of the code: share of the layer's samples (95% interval)"));
  EXPECT_THAT(text, HasSubstr("conv1                       100  GEMM kernel 70% (60%-78%) · im2col 30% (22%-40%)\n"));
  // The functions on the row's second line, under the parts, with their shares.
  EXPECT_THAT(
      text,
      HasSubstr("\n                                 functions: sgemm_kernel_HASWELL 70% · hwprof::nn::(anonymous namespace)::im2col [omp] 30%\n"));
  EXPECT_THAT(text, HasSubstr("Parts: each sample's function sorted by kind"));
  const auto j = sampling_json(*p.sampling);
  EXPECT_EQ(j["layers"][0]["parts"][1]["part"], "im2col");
  EXPECT_EQ(j["layers"][0]["parts"][1]["samples"], 30);
}

TEST(SamplingReport, TheJsonObjectCarriesEveryRowAndAnUnknownCostAsNull) {
  Profile p = sampled();
  p.sampling->overhead = std::nan("");
  const auto j = sampling_json(*p.sampling);
  EXPECT_EQ(j["samples"], 130);
  EXPECT_TRUE(j["overhead"].is_null());
  ASSERT_EQ(j["layers"].size(), 3u);
  EXPECT_EQ(j["layers"][0]["top"][0]["function"], "sgemm_kernel_HASWELL");
  EXPECT_EQ(j["layers"][0]["by_pool_workers"], 60);
  EXPECT_FALSE(j["layers"][1]["enough"]);
}

}  // namespace
}  // namespace hwprof::report
