// hwprof merge: ranks' profiles merged (spread, imbalance, straggler, missing ranks), the
// merge's JSON read back and refused when malformed, and its HTML (per-rank view, roofline
// with the spread).
#include <sys/stat.h>

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/merge.hpp"
#include "report/rank_files.hpp"
#include "scratch_dir.hpp"
#include "synthetic_profile.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using json = nlohmann::json;

// Rank k of `size`, each layer `scale[k]` times as slow as the synthetic profile's.
analysis::RankProfile rank_profile(int k, int size, double scale) {
  Profile p = test::synthetic_profile();
  p.rank = k;
  p.rank_count = size;
  for (LayerProfile& l : p.layers) {
    l.time_ms.mean *= scale;
    l.time_ms.median *= scale;
  }
  p.total.time_ms.mean *= scale;
  return {"rank-" + std::to_string(k) + "/profile.json", std::move(p)};
}

session::MergedRanks three_ranks() {
  std::vector<analysis::RankProfile> ranks;
  // Given out of order: the merge sorts by rank.
  ranks.push_back(rank_profile(2, 3, 4.0));
  ranks.push_back(rank_profile(0, 3, 1.0));
  ranks.push_back(rank_profile(1, 3, 1.0));
  return analysis::merge_ranks(std::move(ranks));
}

TEST(Merge, SpreadImbalanceAndStragglerPerRegion) {
  const session::MergedRanks m = three_ranks();
  ASSERT_EQ(m.ranks.size(), 3u);
  EXPECT_EQ(m.ranks[0].rank, 0);
  EXPECT_EQ(m.ranks[2].rank, 2);
  EXPECT_TRUE(m.warnings.empty());
  // Times 1, 1, 4 (× a layer's): mean 2, so (4 − 2) / 4 = 0.5 in every layer and the total.
  for (const session::MergedRegion& r : m.regions) {
    EXPECT_EQ(r.straggler, 2) << r.name;
    EXPECT_NEAR(r.imbalance, 0.5, 1e-12) << r.name;
    EXPECT_NEAR(r.max_ms, 4 * r.min_ms, 1e-9 * r.max_ms) << r.name;
    EXPECT_DOUBLE_EQ(r.median_ms, r.min_ms) << r.name;
    EXPECT_EQ(r.missing, 0);
  }
  EXPECT_NEAR(m.total.imbalance, 0.5, 1e-12);
  // Largest first, and the analytic work carried for the roofline.
  for (std::size_t i = 1; i < m.regions.size(); ++i) EXPECT_GE(m.regions[i - 1].max_ms, m.regions[i].max_ms);
  EXPECT_EQ(m.regions.front().name, "layer1.0.conv1 (backward)");  // a training profile: the slowest layer
  ASSERT_TRUE(m.regions.front().flops_per_call.has_value());
  EXPECT_DOUBLE_EQ(*m.regions.front().flops_per_call, 600e6);
  EXPECT_FALSE(m.ceilings.compute_gflops.empty());
  EXPECT_THAT(m.ceilings.source, HasSubstr("rank 0's calibration"));
}

TEST(Merge, MissingRanksAndRegionsAreSaid) {
  std::vector<analysis::RankProfile> ranks;
  ranks.push_back(rank_profile(0, 4, 1.0));
  analysis::RankProfile three = rank_profile(3, 4, 2.0);
  three.profile.layers.erase(three.profile.layers.begin());  // rank 3 never ran conv1
  ranks.push_back(std::move(three));
  const session::MergedRanks m = analysis::merge_ranks(std::move(ranks));
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0], HasSubstr("2 of 4 ranks are here; missing: ranks 1-2 (2 ranks)"));
  bool seen = false;
  for (const session::MergedRegion& r : m.regions) {
    if (r.name != "conv1") continue;
    seen = true;
    EXPECT_EQ(r.missing, 1);
    EXPECT_TRUE(std::isnan(r.rank_ms[1]));
    EXPECT_EQ(r.straggler, 0);
    EXPECT_DOUBLE_EQ(r.imbalance, 0.0);  // one rank: nothing to wait for
  }
  EXPECT_TRUE(seen);
  EXPECT_THAT(report::merged_table(m), HasSubstr("1 rank"));
}

TEST(Merge, EqualRanksAreNoImbalanceEvenWhereTheirMeanRoundsAboveTheirMax) {
  // 0.1 + 0.1 + 0.1 = 0.30000000000000004, and that / 3 is one ulp above 0.1: a naive
  // (max − mean) / max is −1.4e−16, which the table printed as "-0.0%".
  session::MergedRanks m;
  for (int k = 0; k < 3; ++k) m.ranks.push_back({k, 3, "", "h", "c", "m", 1});
  m.total.name = "total";
  m.total.rank_ms = {0.1, 0.1, 0.1};
  m.total.rank_calls = {1, 1, 1};
  analysis::summarize_merged_region(m.total);
  EXPECT_EQ(m.total.imbalance, 0.0);
  EXPECT_EQ(m.total.straggler, 0);
  EXPECT_THAT(report::merged_table(m), HasSubstr("(rank 0): imbalance 0.0%\n"));
}

TEST(Merge, JsonRoundTripsAndRendersAgain) {
  const session::MergedRanks m = three_ranks();
  const std::string text = report::merged_json(m);
  EXPECT_TRUE(report::merged_if_merge(text, "merged.json").has_value());
  const auto back = report::merged_from_json(text, "merged.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->regions.size(), m.regions.size());
  for (std::size_t i = 0; i < m.regions.size(); ++i) {
    EXPECT_EQ(back->regions[i].name, m.regions[i].name);
    EXPECT_EQ(back->regions[i].straggler, m.regions[i].straggler);
    EXPECT_NEAR(back->regions[i].imbalance, m.regions[i].imbalance, 1e-12);
    EXPECT_EQ(back->regions[i].flops_per_call, m.regions[i].flops_per_call);
  }
  EXPECT_EQ(back->ceilings.compute_gflops.size(), m.ceilings.compute_gflops.size());
  EXPECT_EQ(report::merged_json(*back), text);
  EXPECT_EQ(report::merged_table(*back), report::merged_table(m));
}

// Each malformed merge is refused with the file, the line and column, and the field named.
TEST(Merge, MalformedJsonIsRefusedWithThePlace) {
  const json good = json::parse(report::merged_json(three_ranks()));
  struct Case {
    const char* what;
    std::function<void(json&)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"another kind", [](json& j) { j["kind"] = "hwprof-profile"; }, "/kind: not a merge of ranks"},
      {"newer schema", [](json& j) { j["schema"] = 99; }, "schema 99 is newer"},
      {"no ranks", [](json& j) { j["ranks"] = json::array(); }, "/ranks: expected at least one rank"},
      {"rank count", [](json& j) { j["regions"][1]["rank_ms"].erase(0); }, "/regions/1/rank_ms: expected an array of 3 numbers"},
      {"negative time", [](json& j) { j["regions"][0]["rank_ms"][2] = -1; },
       "/regions/0/rank_ms/2: expected a number from 0 to 1e+12, or null, got -1"},
      {"text time", [](json& j) { j["total"]["rank_calls"][0] = "x"; }, "/total/rank_calls/0: expected a number"},
      {"imbalance lies", [](json& j) { j["regions"][0]["imbalance"] = 0.01; }, "/regions/0/imbalance: 0.01 disagrees"},
      {"rank number", [](json& j) { j["ranks"][1]["rank"] = -5; }, "/ranks/1/rank: expected a whole number"},
      {"ceiling", [](json& j) { j["ceilings"]["memory_gbps"][0]["value"] = 0; }, "/ceilings/memory_gbps/0/value: expected a positive finite number"},
      {"missing name", [](json& j) { j["regions"][2].erase("name"); }, "/regions/2: missing \"name\""},
      {"time past any run", [](json& j) { j["total"]["rank_ms"][1] = 1e308; }, "/total/rank_ms/1: expected a number from 0 to 1e+12"},
  };
  for (const Case& c : cases) {
    json bad = good;
    c.change(bad);
    const auto r = report::merged_from_json(bad.dump(2), "m.json");
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_THAT(r.error().message, HasSubstr(c.message)) << c.what;
    EXPECT_THAT(r.error().message, MatchesRegex("m\\.json:[0-9]+:[0-9]+: .*")) << c.what;
  }
  // The line and column are those of the value at fault.
  json moved = good;
  moved["regions"][0]["rank_ms"][2] = -7.25;
  const std::string text = moved.dump(2);
  const auto at = report::merged_from_json(text, "m.json");
  ASSERT_FALSE(at.ok());
  const std::size_t line = static_cast<std::size_t>(std::stoul(at.error().message.substr(7)));
  std::size_t newlines = 0;
  for (std::size_t i = 0, end = text.find("-7.25"); i < end; ++i) newlines += text[i] == '\n';
  EXPECT_EQ(line, newlines + 1) << at.error().message;
  const auto truncated = report::merged_from_json("{\"kind\": ", "m.json");
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(truncated.error().message, HasSubstr("m.json:1:"));
  EXPECT_FALSE(report::merged_if_merge("[1, 2]", "m.json").has_value());
}

TEST(Merge, HtmlHasThePerRankViewAndTheSpreadOnTheRoofline) {
  const session::MergedRanks m = three_ranks();
  const std::string html = report::merged_html(m);
  EXPECT_THAT(html, HasSubstr("imbalance 50.0%"));
  EXPECT_THAT(html, HasSubstr("<th>rank 2</th>"));
  EXPECT_THAT(html, HasSubstr("class=\"straggler\""));
  // One spread line and one median dot per region with work; each rank a hollow point.
  EXPECT_THAT(html, HasSubstr("<title>layer1.0.conv1: 3 rank(s)"));
  EXPECT_THAT(html, HasSubstr("<title>rank 2: "));
  // The hostile names of the synthetic profile are escaped.
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  // A merge without work has no roofline, and says why.
  session::MergedRanks bare = m;
  for (session::MergedRegion& r : bare.regions) r.flops_per_call.reset();
  EXPECT_THAT(report::merged_html(bare), HasSubstr("No roofline"));
}

TEST(Merge, RooflineMedianOfAnEvenRankCountIsTheMeanOfTheMiddleTwo) {
  // Ranks 1× and 3× as slow: the median GFLOP/s lies between the two ranks' (the summaries'
  // definition, docs/merge.md), not on the faster one.
  std::vector<analysis::RankProfile> ranks;
  ranks.push_back(rank_profile(0, 2, 1.0));
  ranks.push_back(rank_profile(1, 2, 3.0));
  const std::string html = report::merged_html(analysis::merge_ranks(std::move(ranks)));
  const std::string start = "<title>layer1.0.conv1: 2 rank(s), ";
  const std::size_t at = html.find(start);
  ASSERT_NE(at, std::string::npos);
  const std::string title = html.substr(at + start.size(), html.find("</title>", at) - at - start.size());
  const std::size_t to = title.find(" to ");
  const std::size_t unit = title.find(" GFLOP/s (median ");
  ASSERT_NE(to, std::string::npos) << title;
  ASSERT_NE(unit, std::string::npos) << title;
  const double low = std::stod(title.substr(0, to));
  const double high = std::stod(title.substr(to + 4, unit - to - 4));
  const double median = std::stod(title.substr(unit + 17));
  EXPECT_LT(low, median) << title;
  EXPECT_LT(median, high) << title;
}

TEST(Merge, HtmlOfManyRanksKeepsTheSpreadAndLeavesTheColumnsToTheJson) {
  std::vector<analysis::RankProfile> ranks;
  for (int k = 0; k < 100; ++k) ranks.push_back(rank_profile(k, 100, k == 57 ? 3.0 : 1.0));
  const session::MergedRanks m = analysis::merge_ranks(std::move(ranks));
  EXPECT_EQ(m.total.straggler, 57);
  const std::string html = report::merged_html(m);
  EXPECT_THAT(html, HasSubstr("With 100 ranks, only the spread is shown"));
  EXPECT_THAT(html, Not(HasSubstr("<th>rank 0</th>")));
  EXPECT_THAT(html, HasSubstr("<td>57</td>"));  // the straggler column
  EXPECT_LT(html.size(), 400000u);
}

TEST(Merge, MissingRanksAreRangesHoweverLargeTheSize) {
  // One rank of 10^7 here: one line, no allocation per rank.
  std::vector<analysis::RankProfile> ranks;
  ranks.push_back(rank_profile(2, 10000000, 1.0));
  const session::MergedRanks m = analysis::merge_ranks(std::move(ranks));
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0],
            "1 of 10000000 ranks are here; missing: ranks 0-1, 3-9999999 (9999999 ranks) (did they crash before exit, or write "
            "elsewhere?)");
  // Every other rank of 50 here: 25 ranges, 20 shown.
  std::vector<analysis::RankProfile> even;
  for (int k = 0; k < 50; k += 2) even.push_back(rank_profile(k, 50, 1.0));
  const session::MergedRanks e = analysis::merge_ranks(std::move(even), {"run/rank-00049"});
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_THAT(e.warnings[0], HasSubstr("missing: ranks 1, 3, 5,"));
  EXPECT_THAT(e.warnings[0], HasSubstr("39 and 5 more ranges (25 ranks); a rank folder holds no profile.json: run/rank-00049"));
}

class MergeFiles : public test::ScratchDirTest {
 protected:
  void put_rank(int k, int size, const std::string& folder = "run", double total_mean_ms = 0) {
    analysis::RankProfile r = rank_profile(k, size, 1.0);
    if (total_mean_ms > 0) r.profile.total.time_ms.mean = total_mean_ms;
    put(fmt::format("{}/rank-{:05}/profile.json", folder, k), profile_to_json(r.profile));
  }
};

TEST_F(MergeFiles, AnUnreadableRankIsAProblemWithItsReasonNotAMissingRank) {
  put_rank(0, 3);
  put_rank(1, 3);
  std::filesystem::create_directories(dir_ / "run/rank-00002/profile.json");  // a folder where the profile should be
  const auto found = report::load_rank_profiles({path("run")});
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.error().message, HasSubstr("rank-00002/profile.json: "));
  EXPECT_THAT(found.error().message, HasSubstr("directory"));
  std::filesystem::remove_all(dir_ / "run/rank-00002");
  ASSERT_EQ(::mkfifo(path("run/rank-00002").c_str(), 0600), 0);  // an entry that is no folder
  const auto fifo = report::load_rank_profiles({path("run")});
  ASSERT_FALSE(fifo.ok());
  EXPECT_THAT(fifo.error().message, HasSubstr("rank-00002: a rank entry should be a folder holding profile.json; this is a FIFO"));
}

TEST_F(MergeFiles, AFolderWithoutItsProfileIsAMissingRankWithThatReason) {
  put_rank(0, 3);
  put_rank(2, 3);
  std::filesystem::create_directories(dir_ / "run/rank-00001");
  auto found = report::load_rank_profiles({path("run")});
  ASSERT_TRUE(found.ok()) << found.error().message;
  const session::MergedRanks m = analysis::merge_ranks(std::move(found->ranks), found->empty_folders);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_THAT(m.warnings[0], HasSubstr("2 of 3 ranks are here; missing: rank 1; a rank folder holds no profile.json: "));
  EXPECT_THAT(m.warnings[0], HasSubstr("run/rank-00001"));
}

TEST_F(MergeFiles, RanksOfOneRunOnly) {
  put_rank(0, 2);
  put_rank(1, 4);
  const auto sizes = report::load_rank_profiles({path("run")});
  ASSERT_FALSE(sizes.ok());
  EXPECT_THAT(sizes.error().message, HasSubstr("rank-00001/profile.json: /rank/size says 4 ranks, "));
  // An unranked profile beside rank 0 is not a second rank 0.
  Profile unranked = test::synthetic_profile();
  unranked.rank = -1;
  put("mixed/a/profile.json", profile_to_json(unranked));
  put_rank(0, 2, "mixed");
  const auto mixed = report::load_rank_profiles({path("mixed/a"), path("mixed")});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.error().message, HasSubstr("a/profile.json: /rank is null (not launched by mpirun, srun or torchrun) while "));
  EXPECT_THAT(mixed.error().message, HasSubstr("is rank 0 of 2"));
}

TEST_F(MergeFiles, ATimeNoRankCanSpendIsRefusedNotMadeMinusInfinity) {
  put_rank(0, 2);
  put_rank(1, 2, "run", 1e308);  // the mean × the calls overflows
  const auto found = report::load_rank_profiles({path("run")});
  ASSERT_FALSE(found.ok());
  EXPECT_THAT(found.error().message, HasSubstr("rank-00001/profile.json: /total (the total): "));
  EXPECT_THAT(found.error().message, HasSubstr("is not a time a rank can spend (at most 1e+12 ms)"));
}

TEST(Merge, AMergeReadAsAProfileSaysWhatItIsAndWhichCommandReadsIt) {
  const auto p = profile_from_json(report::merged_json(three_ranks()), "m.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message,
            "m.json:1:1: this is a merge of ranks (`hwprof merge -f json`, or the merged.json hwprof::mpi writes); `hwprof merge m.json` "
            "renders it; not a profile");
}

}  // namespace
}  // namespace hwprof
