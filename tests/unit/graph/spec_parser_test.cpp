// What a well-formed model spec means (docs/model-specs.md, "Model specs"): chaining, "$input",
// repeat expansion and its name resolution, tied weights, attribute forms and defaults, and
// re-inference with another input shape. Checked through names, input indices and shapes.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "graph_support.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Graph parse_ok(const std::string& text, const std::string& source = "spec.json") {
  auto graph = parse_model(text, source);
  EXPECT_TRUE(graph.ok()) << graph.error().message;
  return graph.ok() ? std::move(graph).value() : Graph{};
}

using ::hwprof::test::names_of;

// The node with this full name; fails the test when there is none.
const Node& node_named(const Graph& graph, const std::string& name) {
  static const Node missing;
  const int index = graph.find(name);
  EXPECT_GE(index, 0) << "no node named " << name;
  return index >= 0 ? graph.nodes[static_cast<std::size_t>(index)] : missing;
}

int index_of(const Graph& graph, const std::string& name) {
  return graph.find(name);
}

TEST(SpecParser, LayersWithoutInputsChainInOrder) {
  const Graph g = parse_ok(R"json({
  "name": "chain",
  "input": {"shape": [1, 28, 28]},
  "layers": [
    {"name": "flatten", "op": "flatten"},
    {"name": "fc1", "op": "linear", "out_features": 32},
    {"name": "act", "op": "relu"},
    {"name": "fc2", "op": "linear", "out_features": 10, "bias": false}
  ]
})json");
  EXPECT_EQ(g.name, "chain");
  EXPECT_THAT(g.input.shape, ElementsAre(1, 28, 28));
  EXPECT_EQ(g.input.dtype, DType::f32);
  ASSERT_THAT(names_of(g), ElementsAre("flatten", "fc1", "act", "fc2"));
  EXPECT_THAT(g.nodes[0].inputs, ElementsAre(kModelInput));
  EXPECT_THAT(g.nodes[1].inputs, ElementsAre(0));
  EXPECT_THAT(g.nodes[2].inputs, ElementsAre(1));
  EXPECT_THAT(g.nodes[3].inputs, ElementsAre(2));
  EXPECT_THAT(g.nodes[0].output_shape, ElementsAre(784));
  EXPECT_THAT(g.nodes[1].output_shape, ElementsAre(32));
  EXPECT_THAT(g.nodes[3].output_shape, ElementsAre(10));
  EXPECT_EQ(g.nodes[1].op, OpKind::linear);
  EXPECT_TRUE(g.nodes[1].attrs.bias);
  EXPECT_FALSE(g.nodes[3].attrs.bias);
  EXPECT_EQ(g.nodes[2].spec_pointer, "/layers/2");
}

TEST(SpecParser, ModelNameDefaultsToTheFileStem) {
  const std::string text = R"json({"input": {"shape": [4]}, "layers": [{"name": "a", "op": "relu"}]})json";
  EXPECT_EQ(parse_ok(text, "models/my_net.json").name, "my_net");
  EXPECT_EQ(parse_ok(text, "plain").name, "plain");
}

TEST(SpecParser, DollarInputAtTopLevelIsTheModelInput) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 8},
    {"name": "sum", "op": "add", "inputs": ["fc", "$input"]},
    {"name": "again", "op": "linear", "inputs": ["$input"], "out_features": 3}
  ]
})json");
  EXPECT_THAT(g.nodes[1].inputs, ElementsAre(0, kModelInput));
  EXPECT_THAT(g.nodes[1].output_shape, ElementsAre(8));
  EXPECT_THAT(g.nodes[2].inputs, ElementsAre(kModelInput));
  EXPECT_THAT(g.nodes[2].output_shape, ElementsAre(3));
}

// A residual block written once and repeated: "$input" is each copy's own input, and the
// first node of copy i takes copy i-1's output.
TEST(SpecParser, RepeatCopiesChainAndDollarInputIsTheCopysInput) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "stem", "op": "linear", "out_features": 16},
    {"repeat": 3, "name": "h", "layers": [
      {"name": "fc", "op": "linear", "out_features": 16},
      {"name": "act", "op": "gelu"},
      {"name": "add", "op": "add", "inputs": ["act", "$input"]}
    ]},
    {"name": "head", "op": "linear", "out_features": 2}
  ]
})json");
  ASSERT_THAT(names_of(g),
              ElementsAre("stem", "h.0.fc", "h.0.act", "h.0.add", "h.1.fc", "h.1.act", "h.1.add", "h.2.fc", "h.2.act", "h.2.add", "head"));
  EXPECT_THAT(node_named(g, "h.0.fc").inputs, ElementsAre(index_of(g, "stem")));
  EXPECT_THAT(node_named(g, "h.1.fc").inputs, ElementsAre(index_of(g, "h.0.add")));
  EXPECT_THAT(node_named(g, "h.2.fc").inputs, ElementsAre(index_of(g, "h.1.add")));
  EXPECT_THAT(node_named(g, "h.0.add").inputs, ElementsAre(index_of(g, "h.0.act"), index_of(g, "stem")));
  EXPECT_THAT(node_named(g, "h.1.add").inputs, ElementsAre(index_of(g, "h.1.act"), index_of(g, "h.0.add")));
  EXPECT_THAT(node_named(g, "h.2.add").inputs, ElementsAre(index_of(g, "h.2.act"), index_of(g, "h.1.add")));
  EXPECT_THAT(node_named(g, "head").inputs, ElementsAre(index_of(g, "h.2.add")));
  EXPECT_THAT(node_named(g, "head").output_shape, ElementsAre(2));
  // Every copy points back at the one spec object it came from.
  EXPECT_EQ(node_named(g, "h.2.add").spec_pointer, "/layers/1/layers/2");
}

TEST(SpecParser, RepeatAtTheStartTakesTheModelInput) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "name": "h", "layers": [
      {"name": "fc", "op": "linear", "out_features": 8},
      {"name": "add", "op": "add", "inputs": ["fc", "$input"]}
    ]}
  ]
})json");
  EXPECT_THAT(node_named(g, "h.0.fc").inputs, ElementsAre(kModelInput));
  EXPECT_THAT(node_named(g, "h.0.add").inputs, ElementsAre(index_of(g, "h.0.fc"), kModelInput));
  EXPECT_THAT(node_named(g, "h.1.add").inputs, ElementsAre(index_of(g, "h.1.fc"), index_of(g, "h.0.add")));
}

// Inside a copy a name means the same copy's node first, then nodes outside; a full name
// reaches any earlier node; only earlier nodes are visible.
TEST(SpecParser, NamesInsideACopyResolveToTheSameCopyFirst) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 8},
    {"name": "stem", "op": "relu"},
    {"repeat": 2, "name": "h", "layers": [
      {"name": "early", "op": "add", "inputs": ["fc", "stem"]},
      {"name": "fc", "op": "linear", "out_features": 8},
      {"name": "mine", "op": "add", "inputs": ["fc", "stem"]},
      {"name": "first", "op": "add", "inputs": ["fc", "h.0.fc"]}
    ]}
  ]
})json");
  // Before the copy's own "fc" exists, "fc" is the top-level one.
  EXPECT_THAT(node_named(g, "h.0.early").inputs, ElementsAre(index_of(g, "fc"), index_of(g, "stem")));
  EXPECT_THAT(node_named(g, "h.1.early").inputs, ElementsAre(index_of(g, "fc"), index_of(g, "stem")));
  // After it, "fc" is the copy's own; "stem" is found outside.
  EXPECT_THAT(node_named(g, "h.0.mine").inputs, ElementsAre(index_of(g, "h.0.fc"), index_of(g, "stem")));
  EXPECT_THAT(node_named(g, "h.1.mine").inputs, ElementsAre(index_of(g, "h.1.fc"), index_of(g, "stem")));
  // A full name reaches another copy's node.
  EXPECT_THAT(node_named(g, "h.1.first").inputs, ElementsAre(index_of(g, "h.1.fc"), index_of(g, "h.0.fc")));
}

TEST(SpecParser, StartNumbersTheCopies) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"repeat": 2, "name": "features", "start": 3, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 3, "kernel": 3, "padding": 1},
      {"name": "add", "op": "add", "inputs": ["conv", "$input"]}
    ]}
  ]
})json");
  ASSERT_THAT(names_of(g), ElementsAre("features.3.conv", "features.3.add", "features.4.conv", "features.4.add"));
  EXPECT_THAT(g.nodes[2].inputs, ElementsAre(1));
  EXPECT_THAT(g.nodes[3].inputs, ElementsAre(2, 1));
  EXPECT_THAT(g.nodes[3].output_shape, ElementsAre(3, 8, 8));
}

// Nested repeats: names compose (a.0.b.1.x); a name resolves in the inner copy, then the
// enclosing copy, then outside; "$input" is the innermost copy's input.
TEST(SpecParser, NestedRepeatsComposeNamesAndScopes) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "stem", "op": "linear", "out_features": 4},
    {"repeat": 2, "name": "a", "layers": [
      {"name": "x", "op": "linear", "out_features": 4},
      {"repeat": 2, "name": "b", "layers": [
        {"name": "y", "op": "add", "inputs": ["x", "$input"]},
        {"name": "z", "op": "add", "inputs": ["y", "stem"]}
      ]},
      {"name": "out", "op": "add", "inputs": ["x", "a.0.x"]}
    ]}
  ]
})json");
  ASSERT_THAT(names_of(g), ElementsAre("stem", "a.0.x", "a.0.b.0.y", "a.0.b.0.z", "a.0.b.1.y", "a.0.b.1.z", "a.0.out", "a.1.x", "a.1.b.0.y",
                                       "a.1.b.0.z", "a.1.b.1.y", "a.1.b.1.z", "a.1.out"));
  auto at = [&](const char* name) { return index_of(g, name); };
  EXPECT_THAT(node_named(g, "a.0.x").inputs, ElementsAre(at("stem")));
  EXPECT_THAT(node_named(g, "a.0.b.0.y").inputs, ElementsAre(at("a.0.x"), at("a.0.x")));
  EXPECT_THAT(node_named(g, "a.0.b.0.z").inputs, ElementsAre(at("a.0.b.0.y"), at("stem")));
  EXPECT_THAT(node_named(g, "a.0.b.1.y").inputs, ElementsAre(at("a.0.x"), at("a.0.b.0.z")));
  EXPECT_THAT(node_named(g, "a.0.out").inputs, ElementsAre(at("a.0.x"), at("a.0.x")));
  // The outer copy 1 starts from copy 0's last node and sees its own "x".
  EXPECT_THAT(node_named(g, "a.1.x").inputs, ElementsAre(at("a.0.out")));
  EXPECT_THAT(node_named(g, "a.1.b.0.y").inputs, ElementsAre(at("a.1.x"), at("a.1.x")));
  EXPECT_THAT(node_named(g, "a.1.b.1.y").inputs, ElementsAre(at("a.1.x"), at("a.1.b.0.z")));
  EXPECT_THAT(node_named(g, "a.1.out").inputs, ElementsAre(at("a.1.x"), at("a.0.x")));
}

TEST(SpecParser, InnerCopyNamesNeedFullNamesOutsideTheirRepeat) {
  auto graph = parse_model(R"json({
  "input": {"shape": [4]},
  "layers": [
    {"repeat": 2, "name": "a", "layers": [
      {"repeat": 2, "name": "b", "layers": [
        {"name": "y", "op": "relu"}
      ]},
      {"name": "out", "op": "add", "inputs": ["y", "b.0.y"]}
    ]}
  ]
})json",
                           "scope.json");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.error().message, StartsWith("scope.json:8:47: layer 'a.0.out' (add): no earlier layer is named 'y'"));
}

TEST(SpecParser, RepeatNodesAreReachedByFullNameFromOutside) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [6, 4]},
  "layers": [
    {"repeat": 3, "name": "h", "layers": [
      {"name": "ln", "op": "layernorm"},
      {"name": "fc", "op": "linear", "out_features": 4}
    ]},
    {"name": "cat", "op": "concat", "inputs": ["h.0.ln", "h.2.fc", "$input"], "axis": -1},
    {"name": "first", "op": "select", "inputs": ["h.1.ln"], "index": 0}
  ]
})json");
  const Node& cat = node_named(g, "cat");
  EXPECT_THAT(cat.inputs, ElementsAre(index_of(g, "h.0.ln"), index_of(g, "h.2.fc"), kModelInput));
  EXPECT_THAT(cat.output_shape, ElementsAre(6, 12));
  EXPECT_EQ(cat.attrs.axis, -1);
  EXPECT_THAT(node_named(g, "first").output_shape, ElementsAre(4));
}

// A weight tied to an earlier layer's counts once: the tied linear adds only its bias.
TEST(SpecParser, TiedToSharesTheWeightButCountsTheBias) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "wte", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "head", "op": "linear", "out_features": 100, "tied_to": "wte"},
    {"name": "head_nobias", "op": "linear", "inputs": ["wte"], "out_features": 100, "bias": false, "tied_to": "wte"}
  ]
})json");
  EXPECT_EQ(node_named(g, "head").attrs.tied_to, index_of(g, "wte"));
  EXPECT_EQ(node_named(g, "head_nobias").attrs.tied_to, index_of(g, "wte"));
  EXPECT_THAT(node_named(g, "head").output_shape, ElementsAre(16, 100));
  auto cost = analyze(g);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->layers[0].params, 800);
  EXPECT_EQ(cost->layers[1].params, 100);
  EXPECT_EQ(cost->layers[2].params, 0);
  EXPECT_EQ(cost->totals.params, 900);
  EXPECT_EQ(count_parameters(g).value(), 900);
}

TEST(SpecParser, TiedToALinearAndInsideACopy) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "name": "h", "layers": [
      {"name": "enc", "op": "linear", "out_features": 8},
      {"name": "dec", "op": "linear", "out_features": 8, "tied_to": "enc"}
    ]}
  ]
})json");
  EXPECT_EQ(node_named(g, "h.0.dec").attrs.tied_to, index_of(g, "h.0.enc"));
  EXPECT_EQ(node_named(g, "h.1.dec").attrs.tied_to, index_of(g, "h.1.enc"));
  EXPECT_EQ(node_named(g, "h.0.enc").attrs.tied_to, -1);
  auto params = count_parameters(g);
  ASSERT_TRUE(params.ok()) << params.error().message;
  EXPECT_EQ(params.value(), 2 * ((8 * 8 + 8) + 8));
}

TEST(SpecParser, PairsAcceptAScalarOrTwoValues) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [3, 16, 16]},
  "layers": [
    {"name": "square", "op": "conv2d", "out_channels": 4, "kernel": 3, "stride": 2, "padding": 1},
    {"name": "oblong", "op": "conv2d", "out_channels": 4, "kernel": [3, 1], "stride": [1, 2], "padding": [0, 1], "dilation": [2, 1]},
    {"name": "pool", "op": "maxpool2d", "kernel": [2, 1]},
    {"name": "gap", "op": "adaptive_avgpool2d", "output": [2, 1]}
  ]
})json");
  const Attributes& square = g.nodes[0].attrs;
  EXPECT_EQ(square.kernel.h, 3);
  EXPECT_EQ(square.kernel.w, 3);
  EXPECT_EQ(square.stride.h, 2);
  EXPECT_EQ(square.stride.w, 2);
  EXPECT_EQ(square.padding.h, 1);
  EXPECT_EQ(square.padding.w, 1);
  EXPECT_EQ(square.dilation.h, 1);
  EXPECT_THAT(g.nodes[0].output_shape, ElementsAre(4, 8, 8));
  const Attributes& oblong = g.nodes[1].attrs;
  EXPECT_EQ(oblong.kernel.h, 3);
  EXPECT_EQ(oblong.kernel.w, 1);
  EXPECT_EQ(oblong.stride.w, 2);
  EXPECT_EQ(oblong.padding.w, 1);
  EXPECT_EQ(oblong.dilation.h, 2);
  // h: 8 - 2*(3-1) = 4; w: (8 + 2 - 1) / 2 + 1 = 5
  EXPECT_THAT(g.nodes[1].output_shape, ElementsAre(4, 4, 5));
  // The pool's stride defaults to its kernel.
  EXPECT_EQ(g.nodes[2].attrs.stride.h, 2);
  EXPECT_EQ(g.nodes[2].attrs.stride.w, 1);
  EXPECT_THAT(g.nodes[2].output_shape, ElementsAre(4, 2, 5));
  EXPECT_THAT(g.nodes[3].output_shape, ElementsAre(4, 2, 1));
}

TEST(SpecParser, IntegralFloatsAreIntegers) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [3.0, 8, 8]},
  "layers": [
    {"name": "conv", "op": "conv2d", "out_channels": 4.0, "kernel": [3.0, 1e0]},
    {"name": "flat", "op": "flatten"},
    {"name": "fc", "op": "linear", "out_features": 1e3}
  ]
})json");
  EXPECT_THAT(g.input.shape, ElementsAre(3, 8, 8));
  EXPECT_EQ(g.nodes[0].attrs.out_channels, 4);
  EXPECT_EQ(g.nodes[0].attrs.kernel.h, 3);
  EXPECT_EQ(g.nodes[0].attrs.kernel.w, 1);
  EXPECT_EQ(g.nodes[2].attrs.out_features, 1000);
  EXPECT_THAT(g.nodes[2].output_shape, ElementsAre(1000));
}

TEST(SpecParser, CommentAndDescriptionKeysAreAccepted) {
  const Graph g = parse_ok(R"json({
  "name": "commented",
  "description": "a model with notes",
  "comment": "top level",
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu", "comment": "a layer"},
    {"repeat": 2, "name": "h", "comment": ["any", "json", 1], "layers": [
      {"name": "b", "op": "linear", "out_features": 4, "comment": {"why": "a copy"}}
    ]}
  ]
})json");
  EXPECT_THAT(names_of(g), ElementsAre("a", "h.0.b", "h.1.b"));
}

TEST(SpecParser, DefaultsFollowTheDesign) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [4, 8]},
  "layers": [
    {"name": "attn", "op": "attention", "heads": 2},
    {"name": "ln", "op": "layernorm"},
    {"name": "drop", "op": "dropout"},
    {"name": "act", "op": "gelu"},
    {"name": "sm", "op": "softmax"},
    {"name": "cat", "op": "concat", "inputs": ["sm", "act"]},
    {"name": "row", "op": "select", "index": -1}
  ]
})json");
  EXPECT_FALSE(g.nodes[0].attrs.causal);
  EXPECT_TRUE(g.nodes[0].attrs.bias);
  EXPECT_DOUBLE_EQ(g.nodes[1].attrs.eps, 1e-5);
  EXPECT_DOUBLE_EQ(g.nodes[2].attrs.p, 0.5);
  EXPECT_EQ(g.nodes[3].attrs.approximate, GeluApproximation::none);
  EXPECT_EQ(g.nodes[4].attrs.axis, -1);
  EXPECT_EQ(g.nodes[5].attrs.axis, 0);
  EXPECT_THAT(g.nodes[5].output_shape, ElementsAre(8, 8));
  EXPECT_EQ(g.nodes[6].attrs.axis, 0);
  EXPECT_EQ(g.nodes[6].attrs.index, -1);
  EXPECT_THAT(g.nodes[6].output_shape, ElementsAre(8));
}

TEST(SpecParser, LeakyReluAndEluCarryTheirNumber) {
  const Graph g = parse_ok(R"json({"input": {"shape": [8]}, "layers": [
    {"name": "a", "op": "leaky_relu"}, {"name": "b", "op": "leaky_relu", "negative_slope": 0.2},
    {"name": "c", "op": "elu"}, {"name": "d", "op": "elu", "alpha": 0.5},
    {"name": "e", "op": "hardshrink"}, {"name": "f", "op": "hardshrink", "lambd": 2}]})json");
  EXPECT_DOUBLE_EQ(g.nodes[4].attrs.parameter.value(), 0.5) << "PyTorch's default λ";
  EXPECT_DOUBLE_EQ(g.nodes[5].attrs.parameter.value(), 2.0);
  EXPECT_DOUBLE_EQ(g.nodes[0].attrs.parameter.value(), 0.01);
  EXPECT_DOUBLE_EQ(g.nodes[1].attrs.parameter.value(), 0.2);
  EXPECT_DOUBLE_EQ(g.nodes[2].attrs.parameter.value(), 1.0);
  EXPECT_DOUBLE_EQ(g.nodes[3].attrs.parameter.value(), 0.5);
  auto swapped = parse_model(R"json({"input": {"shape": [8]}, "layers": [{"name": "a", "op": "leaky_relu", "alpha": 0.2}]})json", "s.json");
  ASSERT_FALSE(swapped.ok());
  EXPECT_THAT(swapped.error().message, HasSubstr("alpha"));
  auto text = parse_model(R"json({"input": {"shape": [8]}, "layers": [{"name": "a", "op": "elu", "alpha": "one"}]})json", "s.json");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.error().message, HasSubstr("layer 'a' (elu): attribute 'alpha'"));
}

TEST(SpecParser, MatmulBroadcastsLeadingAxesAndRefusesAnotherK) {
  const Graph g = parse_ok(R"json({"input": {"shape": [2, 3, 4]}, "layers": [
    {"name": "w", "op": "linear", "out_features": 4},
    {"name": "w0", "op": "select", "axis": 0, "index": 0},
    {"name": "w0t", "op": "transpose", "perm": [1, 0]},
    {"name": "y", "op": "matmul", "inputs": ["$input", "w0t"]}]})json");
  EXPECT_THAT(g.nodes.back().output_shape, ElementsAre(2, 3, 3));  // [2, 3, 4]·[4, 3]
  auto k = parse_model(R"json({"input": {"shape": [3, 4]}, "layers": [
    {"name": "q", "op": "linear", "out_features": 6},
    {"name": "y", "op": "matmul", "inputs": ["$input", "q"]}]})json",
                       "s.json");
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(k.error().message, HasSubstr("layer 'y' (matmul): matmul takes [..., M, K] and [..., K, N] whose leading axes broadcast, got"));
  EXPECT_THAT(k.error().message, HasSubstr("(K differs)"));
}

TEST(SpecParser, TokenIdsKeepTheirDtypeUntilTheEmbedding) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [2, 16], "dtype": "int32"},
  "layers": [
    {"name": "ids", "op": "select", "index": 0},
    {"name": "segments", "op": "select", "inputs": ["$input"], "index": 1},
    {"name": "tok", "op": "embedding", "inputs": ["ids"], "num_embeddings": 100, "embedding_dim": 8},
    {"name": "seg", "op": "embedding", "inputs": ["segments"], "num_embeddings": 2, "embedding_dim": 8},
    {"name": "sum", "op": "add", "inputs": ["tok", "seg"]}
  ]
})json");
  EXPECT_EQ(g.input.dtype, DType::i32);
  EXPECT_EQ(g.nodes[0].output_dtype, DType::i32);
  EXPECT_THAT(g.nodes[0].output_shape, ElementsAre(16));
  EXPECT_EQ(g.nodes[1].output_dtype, DType::i32);
  EXPECT_EQ(g.nodes[2].output_dtype, DType::f32);
  EXPECT_THAT(g.nodes[2].output_shape, ElementsAre(16, 8));
  EXPECT_THAT(g.nodes[4].inputs, ElementsAre(2, 3));
}

const char* const kConvNet = R"json({
  "input": {"shape": [3, 32, 32]},
  "layers": [
    {"name": "conv", "op": "conv2d", "out_channels": 8, "kernel": 5, "padding": 2},
    {"name": "pool", "op": "maxpool2d", "kernel": 2},
    {"name": "gap", "op": "adaptive_avgpool2d"},
    {"name": "flat", "op": "flatten"},
    {"name": "fc", "op": "linear", "out_features": 10}
  ]
})json";

TEST(SpecParser, WithInputShapeInfersEveryShapeAgain) {
  const Graph g = parse_ok(kConvNet, "conv.json");
  auto small = with_input_shape(g, {3, 20, 24});
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_THAT(small->input.shape, ElementsAre(3, 20, 24));
  EXPECT_THAT(small->nodes[0].output_shape, ElementsAre(8, 20, 24));
  EXPECT_THAT(small->nodes[1].output_shape, ElementsAre(8, 10, 12));
  EXPECT_THAT(small->nodes[2].output_shape, ElementsAre(8, 1, 1));
  EXPECT_THAT(small->nodes[4].output_shape, ElementsAre(10));
  EXPECT_EQ(count_parameters(*small).value(), count_parameters(g).value());
  // The original is left as it was.
  EXPECT_THAT(g.nodes[1].output_shape, ElementsAre(8, 16, 16));
}

TEST(SpecParser, WithInputShapeFailsWhenTheShapeDoesNotFit) {
  const Graph g = parse_ok(kConvNet, "conv.json");
  auto tiny = with_input_shape(g, {3, 1, 1});
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message,
            "with input shape [3, 1, 1]: conv.json:5:51: layer 'pool' (maxpool2d): the kernel 2x2 is larger than the padded input 1x1");
  auto flat = with_input_shape(g, {96, 32});
  ASSERT_FALSE(flat.ok());
  EXPECT_THAT(flat.error().message, StartsWith("with input shape [96, 32]: conv.json:4:5: layer 'conv' (conv2d): expects a [C, H, W] input"));
  auto bad = with_input_shape(g, {3, 0, 32});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("input sizes must be positive, got [3, 0, 32]"));
}

// A linear after flatten was sized by the spec's input; another input would need other
// weights, which is another model.
TEST(SpecParser, WithInputShapeKeepsTheWeights) {
  const Graph mlp = parse_ok(R"json({
  "input": {"shape": [1, 28, 28]},
  "layers": [
    {"name": "flatten", "op": "flatten"},
    {"name": "dense", "op": "linear", "out_features": 512}
  ]
})json",
                             "mlp.json");
  auto wider = with_input_shape(mlp, {1, 32, 32});
  ASSERT_FALSE(wider.ok());
  EXPECT_EQ(wider.error().message,
            "with input shape [1, 32, 32]: mlp.json:5:5: layer 'dense' (linear): its weights take 784 input features (from the "
            "spec's input shape [1, 28, 28]) but this input gives it 1024; a new input shape may change sizes that no weight "
            "depends on");

  const Graph g = parse_ok(kConvNet, "conv.json");
  auto gray = with_input_shape(g, {1, 32, 32});
  ASSERT_FALSE(gray.ok());
  EXPECT_THAT(gray.error().message,
              StartsWith("with input shape [1, 32, 32]: conv.json:4:5: layer 'conv' (conv2d): its weights take 3 input channels"));

  // Sequence length is free in a transformer; the width is not.
  const Graph t = parse_ok(R"json({
  "input": {"shape": [16, 8]},
  "layers": [
    {"name": "pos", "op": "pos_embedding", "num_positions": 32},
    {"name": "attn", "op": "attention", "heads": 2}
  ]
})json",
                           "t.json");
  auto longer = with_input_shape(t, {32, 8});
  ASSERT_TRUE(longer.ok()) << longer.error().message;
  EXPECT_THAT(longer->nodes[1].output_shape, ElementsAre(32, 8));
  auto too_long = with_input_shape(t, {33, 8});
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.error().message, HasSubstr("layer 'pos' (pos_embedding): the sequence has 33 positions but num_positions is 32"));
  auto wider_model = with_input_shape(t, {16, 12});
  ASSERT_FALSE(wider_model.ok());
  EXPECT_THAT(wider_model.error().message, HasSubstr("layer 'pos' (pos_embedding): its weights take 8 model width D"));
  // The products read their width from their definitions: attention's projections are built
  // for D; a matmul of two activations has no weights, so any width that multiplies will do.
  const Graph a = parse_ok(R"json({"input": {"shape": [16, 8]}, "layers": [{"name": "attn", "op": "attention", "heads": 2}]})json", "a.json");
  auto wider_attention = with_input_shape(a, {16, 12});
  ASSERT_FALSE(wider_attention.ok());
  EXPECT_THAT(wider_attention.error().message, HasSubstr("layer 'attn' (attention): its weights take 8 model width D"));
  const Graph m = parse_ok(R"json({"input": {"shape": [16, 8]}, "layers": [
    {"name": "t", "op": "transpose", "perm": [1, 0]},
    {"name": "gram", "op": "matmul", "inputs": ["$input", "t"]}
  ]})json",
                           "m.json");
  auto wider_gram = with_input_shape(m, {4, 12});
  ASSERT_TRUE(wider_gram.ok()) << wider_gram.error().message;
  EXPECT_THAT(wider_gram->nodes[1].output_shape, ElementsAre(4, 4));
}

// Swin's relative position bias: its window is exactly [wh, ww], two positive integers.
TEST(SpecParser, RelPosBiasTakesAWindowPair) {
  const Graph g = parse_ok(R"json({
  "input": {"shape": [3, 2, 6, 6]},
  "layers": [{"name": "rpb", "op": "rel_pos_bias", "window": [2, 3]}]
})json");
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::rel_pos_bias);
  EXPECT_EQ(g.nodes[0].attrs.window.h, 2);
  EXPECT_EQ(g.nodes[0].attrs.window.w, 3);
  EXPECT_THAT(g.nodes[0].output_shape, ElementsAre(3, 2, 6, 6));
}

TEST(SpecParser, RelPosBiasRefusesAnyWindowButTwoPositiveIntegers) {
  // The layer with `window` written as given ("" leaves it out), over scores [2, 6, 6].
  const auto error_of = [](const std::string& window) {
    const std::string text = R"json({"input": {"shape": [2, 6, 6]}, "layers": [{"name": "rpb", "op": "rel_pos_bias")json" +
                             (window.empty() ? std::string() : ", \"window\": " + window) + "}]}";
    auto graph = parse_model(text, "rpb.json");
    EXPECT_FALSE(graph.ok()) << "window " << window << " was accepted";
    return graph.ok() ? std::string() : graph.error().message;
  };
  EXPECT_THAT(error_of(""), HasSubstr("layer 'rpb' (rel_pos_bias): missing attribute 'window' (the attention window [wh, ww])"));
  const std::string bad = "layer 'rpb' (rel_pos_bias): attribute 'window' must be a pair [wh, ww] of positive integers";
  for (const std::string window : {"[6]", "[1, 2, 3]", "[0, 6]", "[2, 0]", "[-2, -3]", "[2, -3]", "[2.5, 3]", "[2, \"3\"]", "6", "[]", "null"}) {
    SCOPED_TRACE("window " + window);
    const std::string message = error_of(window);
    EXPECT_THAT(message, HasSubstr(bad));
    EXPECT_THAT(message, StartsWith("rpb.json:1:"));  // where: the file and the position
  }
  // Integral floats are integers, as everywhere in a spec.
  EXPECT_TRUE(
      parse_model(R"json({"input": {"shape": [2, 6, 6]}, "layers": [{"name": "rpb", "op": "rel_pos_bias", "window": [2.0, 3]}]})json", "rpb.json")
          .ok());
}

}  // namespace
}  // namespace hwprof
