// hwprof compare: the rank test against published values, and the per-layer verdicts.
#include <cmath>
#include <cstdio>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/statistics.hpp"
#include "report/compare.hpp"
#include "report/profile_view.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

TEST(MannWhitney, MatchesScipysDocumentedExample) {
  // scipy.stats.mannwhitneyu documentation: males [19, 22, 16, 29, 24], females [20, 11, 17, 12]
  // give U = 17 and the exact two-sided p = 0.1111 (method="exact").
  const RankTest t = mann_whitney_u({19, 22, 16, 29, 24}, {20, 11, 17, 12});
  EXPECT_DOUBLE_EQ(t.u, 17.0);
  EXPECT_TRUE(t.exact);
  EXPECT_NEAR(t.p_value, 0.1111111111, 1e-9);
}

TEST(MannWhitney, ExactExtremesAndSymmetry) {
  // Complete separation: p = 2 / C(n1 + n2, n1).
  const RankTest three = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(three.u, 0.0);
  EXPECT_NEAR(three.p_value, 0.1, 1e-12);
  EXPECT_NEAR(mann_whitney_min_p(3, 3), 0.1, 1e-12);
  const RankTest five = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_NEAR(five.p_value, 2.0 / 252.0, 1e-12);
  EXPECT_NEAR(mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).p_value, five.p_value, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).u, 25.0);
  EXPECT_NEAR(mann_whitney_min_p(10, 10), 2.0 / 184756.0, 1e-15);
}

TEST(MannWhitney, TiesAndLargeSamplesUseTheNormalApproximation) {
  const RankTest equal = mann_whitney_u({2, 2, 2, 2}, {2, 2, 2});
  EXPECT_FALSE(equal.exact);
  EXPECT_DOUBLE_EQ(equal.p_value, 1.0);
  // 60 against the same 60 shifted by 30 (no ties): U = 450 of 3600, far from the mean 1800.
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 30.5);
  }
  const RankTest shifted = mann_whitney_u(a, b);
  EXPECT_FALSE(shifted.exact);
  EXPECT_DOUBLE_EQ(shifted.u, 435.0);  // pairs with a_i > b_j: i − 30 for each i from 31 to 59
  // z = (1800 − 435 − 0.5) / sqrt(60·60·121/12), with no ties; p = erfc(z/√2)
  EXPECT_NEAR(shifted.p_value, std::erfc((1800.0 - 435.0 - 0.5) / std::sqrt(3600.0 * 121.0 / 12.0) / std::sqrt(2.0)), 1e-20);
  EXPECT_LT(shifted.p_value, 1e-10);
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1.0);
}

TEST(MannWhitney, TiesMatchScipysAsymptoticPValues) {
  // References: scipy 1.10.1, scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
  // method="asymptotic", use_continuity=True) (tie-corrected variance, continuity correction),
  // computed once; scipy's statistic is the U of the first sample, as ours.
  struct Reference {
    std::vector<double> a;
    std::vector<double> b;
    double u;
    double p;
  };
  const std::vector<Reference> references = {
      {{1, 2, 2, 3, 3, 3}, {2, 3, 4, 4, 5}, 5.5, 0.08871369199677616},
      {{1.5, 1.5, 2.5, 2.5, 2.5, 4}, {2.5, 4, 4, 6, 6, 6, 7}, 3.5, 0.012611733977298952},
      {{10, 10, 10, 11, 12}, {10, 11, 11, 12, 12, 13}, 7.5, 0.18228717573889341},
      {{1, 1, 1, 1, 2}, {2, 2, 2, 2, 2}, 2.5, 0.019964453305216043},
  };
  for (const Reference& r : references) {
    const RankTest t = mann_whitney_u(r.a, r.b);
    EXPECT_FALSE(t.exact);
    EXPECT_DOUBLE_EQ(t.u, r.u);
    EXPECT_NEAR(t.p_value, r.p, 1e-12 * r.p) << "U = " << r.u;
  }
}

TEST(Holm, TheMonotoneStepRaisesALaterPToAnEarlierOnes) {
  // Sorted: .005 × 4 = .02, .01 × 3 = .03, .03 × 2 = .06, .04 × 1 = .04, raised to .06 (the
  // adjusted values never fall along the sorted order), given back in the input's order.
  const std::vector<double> adjusted = analysis::holm_adjust({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_NEAR(adjusted[0], 0.03, 1e-15);
  EXPECT_NEAR(adjusted[1], 0.06, 1e-15);
  EXPECT_NEAR(adjusted[2], 0.06, 1e-15);
  EXPECT_NEAR(adjusted[3], 0.02, 1e-15);
  // Capped at 1; one p-value is its own adjustment.
  EXPECT_EQ(analysis::holm_adjust({0.5, 0.6}), (std::vector<double>{1.0, 1.0}));
  EXPECT_EQ(analysis::holm_adjust({0.2}), (std::vector<double>{0.2}));
  EXPECT_TRUE(analysis::holm_adjust({}).empty());
}

// Two profiles of the same model: B's layers as A's, with some changed.
struct Pair {
  Profile a;
  Profile b;
};

void set_samples(LayerProfile& l, double median, std::size_t n, double spread = 0.02) {
  l.samples_ms.clear();
  for (std::size_t k = 0; k < n; ++k) l.samples_ms.push_back(median * (1 - spread + 2 * spread * static_cast<double>(k) / static_cast<double>(n)));
  l.time_ms = summarize(l.samples_ms);
}

Pair pair_of(std::size_t n) {
  Pair p{test::synthetic_profile({false, true, n}), test::synthetic_profile({false, true, n})};
  for (Profile* x : {&p.a, &p.b}) {
    for (LayerProfile& l : x->layers) set_samples(l, l.time_ms.median, n);
    set_samples(x->total, x->total.time_ms.median, n);
  }
  return p;
}

TEST(CompareProfiles, ASlowerLayerIsSlowerAndTheOthersAreNot) {
  Pair p = pair_of(20);
  LayerProfile& slow = p.b.layers[1];
  set_samples(slow, slow.time_ms.median * 1.5, 20);
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  ASSERT_EQ(c.layers.size(), p.a.layers.size());
  for (const analysis::LayerChange& l : c.layers) {
    SCOPED_TRACE(l.name);
    ASSERT_TRUE(l.p_adjusted.has_value());
    if (l.name == analysis::display_name(slow)) {
      EXPECT_EQ(l.verdict, analysis::Verdict::slower);
      EXPECT_NEAR(l.change, 0.5, 0.01);
      EXPECT_LT(*l.p_adjusted, 0.05);
    } else {
      EXPECT_EQ(l.verdict, analysis::Verdict::same);
      EXPECT_DOUBLE_EQ(l.change, 0.0);
    }
  }
  EXPECT_EQ(c.total.verdict, analysis::Verdict::same);
  const auto gate = analysis::regressions(c, 10.0);
  ASSERT_EQ(gate.size(), 1u);
  EXPECT_EQ(gate[0]->name, analysis::display_name(slow));
  EXPECT_TRUE(analysis::regressions(c, 60.0).empty()) << "50% slower is within a 60% gate";
  const std::string table = report::comparison_table(c);
  EXPECT_THAT(table, HasSubstr("1 slower"));
  char shown[32];
  std::snprintf(shown, sizeof shown, "%+.1f%%", 100 * c.layers[1].change);
  EXPECT_THAT(table, HasSubstr(shown));
  const auto j = nlohmann::json::parse(report::comparison_json(c));
  EXPECT_EQ(j["layers"][1]["verdict"], "slower");
  EXPECT_EQ(j["total"]["verdict"], "no significant change");
}

TEST(CompareProfiles, ThePageJoinsEachLayersPointsWithAnArrow) {
  Pair p = pair_of(20);
  LayerProfile& slow = p.b.layers[1];
  set_samples(slow, slow.time_ms.median * 1.5, 20);
  ASSERT_TRUE(slow.roofline.has_value());
  slow.roofline->gflops_per_s /= 1.5;  // its placement in B, as the profiler would make it
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  const std::string html = report::comparison_html(c, p.b);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("marker-end=\"url(#arrow)\""));
  EXPECT_THAT(html, HasSubstr("class=\"slower\">slower"));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("<script>alert"))) << "layer names are escaped";
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;"));
}

TEST(CompareProfiles, HolmKeepsOneLuckyLayerFromBeingCalledFaster) {
  // With the raw p of a layer whose samples barely separate (exact p ≈ 0.03 on its own), and
  // many layers tested, the Holm-adjusted p is not below 0.05.
  Pair p = pair_of(6);
  LayerProfile& lucky = p.b.layers[0];
  lucky.samples_ms = {0.95, 0.97, 0.99, 1.00, 1.01, 1.02};
  p.a.layers[0].samples_ms = {1.00, 1.03, 1.04, 1.05, 1.06, 1.07};
  lucky.time_ms = summarize(lucky.samples_ms);
  p.a.layers[0].time_ms = summarize(p.a.layers[0].samples_ms);
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  const analysis::LayerChange& l = c.layers[0];
  ASSERT_TRUE(l.p_value.has_value());
  EXPECT_LT(*l.p_value, 0.05);
  EXPECT_GE(*l.p_adjusted, 0.05);
  EXPECT_EQ(l.verdict, analysis::Verdict::same);
}

TEST(CompareProfiles, TooFewSamplesAndOldProfilesSaySo) {
  Pair three = pair_of(3);
  set_samples(three.b.layers[0], three.b.layers[0].time_ms.median * 3, 3);
  const analysis::ProfileComparison c = analysis::compare_profiles(three.a, three.b);
  EXPECT_EQ(c.layers[0].verdict, analysis::Verdict::too_few_samples);
  EXPECT_THAT(c.layers[0].note, HasSubstr("more --iterations"));
  EXPECT_TRUE(analysis::regressions(c, 5.0).empty()) << "never a gate failure without evidence";

  Pair old = pair_of(20);
  for (LayerProfile& l : old.a.layers) l.samples_ms.clear();
  const analysis::ProfileComparison o = analysis::compare_profiles(old.a, old.b);
  EXPECT_EQ(o.layers[0].verdict, analysis::Verdict::untested);
  EXPECT_FALSE(o.layers[0].p_value.has_value());
  EXPECT_THAT(o.layers[0].note, HasSubstr("no per-call times kept in A"));
}

TEST(CompareProfiles, UnmatchedLayersAndDifferentRunsAreListed) {
  Pair p = pair_of(10);
  p.b.layers[2].name = "renamed";
  p.b.batch = p.a.batch * 2;
  p.b.threads = 4;
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  EXPECT_EQ(c.only_in_b, std::vector<std::string>{analysis::display_name(p.b.layers[2])});
  EXPECT_EQ(c.only_in_a, std::vector<std::string>{analysis::display_name(p.a.layers[2])});
  EXPECT_EQ(c.layers.size(), p.a.layers.size() - 1);
  EXPECT_THAT(c.differences, ::testing::Contains(HasSubstr("batch: 4 in A, 8 in B")));
  EXPECT_THAT(c.differences, ::testing::Contains(HasSubstr("threads: 2 in A, 4 in B")));
  EXPECT_THAT(report::comparison_table(c), HasSubstr("NOTE: the runs differ: batch"));
}

TEST(CompareProfiles, DuplicateNamesAreMatchedByOccurrence) {
  // A block written out by hand twice: two layers named alike. The first of A goes with the
  // first of B, the second with the second; only the second got slower.
  Pair p = pair_of(20);
  for (Profile* x : {&p.a, &p.b}) x->layers[3].name = x->layers[2].name;
  const std::string name = analysis::display_name(p.b.layers[2]);
  ASSERT_EQ(analysis::display_name(p.b.layers[3]), name);
  set_samples(p.b.layers[3], p.b.layers[3].time_ms.median * 2, 20);
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  ASSERT_EQ(c.layers.size(), p.a.layers.size());
  EXPECT_TRUE(c.only_in_a.empty());
  EXPECT_TRUE(c.only_in_b.empty());
  EXPECT_EQ(c.layers[2].name, name);
  EXPECT_EQ(c.layers[2].verdict, analysis::Verdict::same);
  EXPECT_DOUBLE_EQ(c.layers[2].change, 0.0);
  EXPECT_EQ(c.layers[3].name, name + " #2");
  EXPECT_EQ(c.layers[3].verdict, analysis::Verdict::slower);
  EXPECT_NEAR(c.layers[3].change, 1.0, 0.01);
  // A third occurrence in B alone is listed as only in B, by its occurrence.
  p.b.layers[4].name = p.b.layers[2].name;
  const analysis::ProfileComparison three = analysis::compare_profiles(p.a, p.b);
  EXPECT_THAT(three.only_in_b, ::testing::Contains(name + " #3"));
}

TEST(CompareProfiles, SamplesInconsistentWithTheirMedianAreNotTested) {
  Pair p = pair_of(20);
  // All-zero samples against a median of several ms: no p-value, no verdict, no gate failure.
  for (double& v : p.a.layers[1].samples_ms) v = 0.0;
  // Kept times whose median is not the stated one (every sample within [min, max]).
  LayerProfile& shifted = p.b.layers[2];
  for (double& v : shifted.samples_ms) v = shifted.time_ms.max;
  const analysis::ProfileComparison c = analysis::compare_profiles(p.a, p.b);
  for (const std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    SCOPED_TRACE(i);
    EXPECT_EQ(c.layers[i].verdict, analysis::Verdict::inconsistent);
    EXPECT_FALSE(c.layers[i].p_value.has_value());
    EXPECT_FALSE(c.layers[i].p_adjusted.has_value());
  }
  EXPECT_THAT(c.layers[1].note, HasSubstr("samples inconsistent in A: a kept time of 0 ms lies outside the layer's min"));
  EXPECT_THAT(c.layers[2].note, HasSubstr("samples inconsistent in B: the kept times' median"));
  EXPECT_TRUE(analysis::regressions(c, 0.0).empty());
  const std::string table = report::comparison_table(c);
  EXPECT_THAT(table, HasSubstr("2 with samples inconsistent"));
  EXPECT_THAT(table, HasSubstr("WARNING: " + c.layers[1].name + ": samples inconsistent in A"));
  EXPECT_EQ(nlohmann::json::parse(report::comparison_json(c))["layers"][1]["verdict"], "samples inconsistent");
  // More kept times than calls.
  Pair more = pair_of(20);
  more.b.layers[0].time_ms.n = 10;
  EXPECT_EQ(analysis::compare_profiles(more.a, more.b).layers[0].verdict, analysis::Verdict::inconsistent);
}

}  // namespace
}  // namespace hwprof
