// The summary reports render a ModelCost faithfully: JSON fields of DESIGN.md, folding, CSV.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/cost.hpp"
#include "hwprof/graph.hpp"
#include "hwprof/report.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

ModelCost cost_of(const char* spec, std::int64_t batch = 1) {
  auto graph = parse_model(spec, "t.json");
  EXPECT_TRUE(graph.ok()) << (graph.ok() ? "" : graph.error().message);
  auto cost = analyze(*graph, {batch, Optimizer::sgd});
  EXPECT_TRUE(cost.ok());
  return *cost;
}

const char* const kBlocks = R"({
  "name": "blocks",
  "input": {"shape": [8]},
  "layers": [
    {"name": "stem", "op": "linear", "out_features": 16},
    {"repeat": 3, "name": "b", "layers": [
      {"name": "fc", "op": "linear", "out_features": 16},
      {"name": "act", "op": "relu"}
    ]},
    {"name": "head, final", "op": "linear", "out_features": 2}
  ]
})";

TEST(SummaryJson, CarriesTheDesignFields) {
  const auto j = nlohmann::json::parse(summary_json(cost_of(kBlocks, 4)));
  EXPECT_EQ(j["model"], "blocks");
  EXPECT_EQ(j["batch"], 4);
  EXPECT_EQ(j["source"], "analytic");
  for (const char* key : {"params", "trainable_params", "macs", "flops", "backward_flops", "training_flops", "bytes"}) {
    EXPECT_TRUE(j["totals"].contains(key)) << key;
  }
  // stem 8·16+16, three blocks of 16·16+16, head 16·2+2.
  EXPECT_EQ(j["totals"]["params"], 144 + 3 * 272 + 34);
  EXPECT_EQ(j["totals"]["macs"], 128 + 3 * 256 + 32);
  EXPECT_EQ(j["totals"]["per_batch"]["macs"], 4 * (128 + 3 * 256 + 32));
  ASSERT_EQ(j["layers"].size(), 8u);
  for (const auto& layer : j["layers"]) {
    for (const char* key : {"name", "op", "output_shape", "params", "macs", "flops", "bytes", "intensity"}) {
      EXPECT_TRUE(layer.contains(key)) << key;
    }
  }
  EXPECT_EQ(j["layers"][1]["name"], "b.0.fc");
  EXPECT_EQ(j["layers"][1]["output_shape"], nlohmann::json::array({16}));
  EXPECT_EQ(j["memory"]["optimizer"], "sgd");
  EXPECT_EQ(j["memory"]["optimizer_bytes"], 0);
}

TEST(SummaryJson, DepthFoldsConsecutiveLayersByNamePrefix) {
  SummaryOptions options;
  options.depth = 1;
  const auto j = nlohmann::json::parse(summary_json(cost_of(kBlocks), options));
  ASSERT_EQ(j["layers"].size(), 3u);
  EXPECT_EQ(j["layers"][1]["name"], "b");
  EXPECT_EQ(j["layers"][1]["folded_layers"], 6);
  EXPECT_EQ(j["layers"][1]["params"], 3 * 272);
  EXPECT_EQ(j["layers"][1]["macs"], 3 * 256);
  options.depth = 2;
  const auto j2 = nlohmann::json::parse(summary_json(cost_of(kBlocks), options));
  ASSERT_EQ(j2["layers"].size(), 5u);
  EXPECT_EQ(j2["layers"][2]["name"], "b.1");
  EXPECT_EQ(j2["layers"][2]["folded_layers"], 2);
  // Folding never changes the totals.
  EXPECT_EQ(j2["totals"], nlohmann::json::parse(summary_json(cost_of(kBlocks)))["totals"]);
}

TEST(SummaryCsv, QuotesNamesAndHasOneRowPerLayer) {
  const std::string csv = summary_csv(cost_of(kBlocks));
  EXPECT_THAT(csv, HasSubstr("\"head, final\",linear,1,2,34,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // header + 8 layers
  EXPECT_EQ(csv.rfind("name,op,layers,output_shape,params,", 0), 0u);
}

TEST(SummaryTable, ShowsTotalsAndSaysTheFiguresAreAnalytic) {
  const std::string table = summary_table(cost_of(kBlocks, 2));
  EXPECT_THAT(table, HasSubstr("analytic"));
  EXPECT_THAT(table, HasSubstr("Total params:"));
  EXPECT_THAT(table, HasSubstr("994"));  // 144 + 816 + 34
  EXPECT_THAT(table, HasSubstr("b.2.act"));
  EXPECT_THAT(table, HasSubstr("Memory at batch 2"));
}

}  // namespace
}  // namespace hwprof
