// The summary reports render a ModelCost faithfully: JSON fields of docs/cli.md, "JSON (`--format json`)", folding, CSV.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"
#include "hwprof/engine/report.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;

ModelCost cost_of(const char* spec, std::int64_t batch = 1) {
  auto graph = parse_model(spec, "t.json");
  EXPECT_TRUE(graph.ok()) << (graph.ok() ? "" : graph.error().message);
  auto cost = analyze(*graph, {batch, OptimizerKind::sgd});
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

// The graph's notes (what reading the model file found): a `Note:` line each under the header,
// `notes` in JSON; neither when there are none.
TEST(SummaryReports, TheGraphsNotesAreSaidInTheTableAndTheJson) {
  const ModelCost plain = cost_of(kBlocks);
  EXPECT_THAT(summary_table(plain), ::testing::Not(HasSubstr("Note:")));
  EXPECT_FALSE(nlohmann::json::parse(summary_json(plain)).contains("notes"));
  auto graph = parse_model(kBlocks, "t.json");
  ASSERT_TRUE(graph.ok());
  graph->notes = {"first finding.", "second finding."};
  const auto cost = analyze(*graph, {1, OptimizerKind::sgd});
  ASSERT_TRUE(cost.ok());
  const std::string table = summary_table(*cost);
  EXPECT_THAT(table, HasSubstr("per sample.\nNote: first finding.\nNote: second finding.\n\n"));
  EXPECT_EQ(nlohmann::json::parse(summary_json(*cost))["notes"], nlohmann::json::array({"first finding.", "second finding."}));
}

// A layer that is not counted (an ONNX op hwprof cannot map; here b.1.fc made one by hand):
// its figures are null/"not counted", a fold holding it gives lower bounds, the totals say so.
TEST(SummaryReports, ALayerThatIsNotCountedIsNeverAZero) {
  auto graph = parse_model(kBlocks, "t.json");
  ASSERT_TRUE(graph.ok());
  Node& fc = graph->nodes[static_cast<std::size_t>(graph->find("b.1.fc"))];
  fc.op = OpKind::unsupported;
  fc.attrs.shape = fc.output_shape;
  fc.attrs.source_op = "QLinearMatMul (opset 17)";
  fc.attrs.reason = "no mapping onto hwprof's layers";
  auto cost = analyze(*graph, {1, OptimizerKind::sgd});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->totals.not_counted_layers, 1);
  EXPECT_EQ(cost->totals.params, 144 + 2 * 272 + 34);

  const auto j = nlohmann::json::parse(summary_json(*cost));
  EXPECT_EQ(j["totals"]["complete"], false);
  EXPECT_THAT(j["totals"]["note"].get<std::string>(), HasSubstr("every total is a lower bound"));
  const auto& layer = j["layers"][3];
  EXPECT_EQ(layer["name"], "b.1.fc");
  EXPECT_EQ(layer["counted"], false);
  EXPECT_EQ(layer["source_op"], "QLinearMatMul");
  EXPECT_EQ(layer["not_counted"], "QLinearMatMul (opset 17): no mapping onto hwprof's layers");
  for (const char* key : {"params", "macs", "flops", "flops_share", "backward_flops", "weight_bytes", "bytes", "intensity"}) {
    EXPECT_TRUE(layer[key].is_null()) << key;
  }
  EXPECT_EQ(layer["output_bytes"], 16 * 4);

  SummaryOptions folded;
  folded.depth = 1;
  const auto f = nlohmann::json::parse(summary_json(*cost, folded));
  const auto& block = f["layers"][1];
  EXPECT_EQ(block["name"], "b");
  EXPECT_EQ(block["counted"], false);
  EXPECT_EQ(block["not_counted_layers"], 1);
  EXPECT_EQ(block["params"], 2 * 272);  // a lower bound: the counted part
  EXPECT_THAT(summary_table(*cost, folded), ::testing::ContainsRegex("b +6 layers +\\[16\\] +≥ 544"));

  const std::string table = summary_table(*cost);
  EXPECT_THAT(table, ::testing::ContainsRegex("b\\.1\\.fc +QLinearMatMul +\\[16\\] +not counted +not counted +not counted +-"));
  EXPECT_THAT(table, ::testing::ContainsRegex("Total params: +≥ 722"));
  EXPECT_THAT(table, HasSubstr("Incomplete: 1 layer is not counted"));
  EXPECT_THAT(summary_csv(*cost), HasSubstr("b.1.fc,unsupported,1,16,,,,,,,,64,64,,,,1\n"));
  EXPECT_THAT(summary_csv(*cost), HasSubstr("b.0.fc,linear,1,16,272,"));
}

}  // namespace
}  // namespace hwprof
