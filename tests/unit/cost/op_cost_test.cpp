// The per-op cost table (src/cost/op_cost.cpp's header comment, docs/cost.md, "Counting
// convention") checked against numbers derived by hand for tiny specs. Every expected value is
// a literal with its derivation beside it; none is computed with the code's own expressions.
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

ModelCost analyze_spec(std::string_view spec, std::int64_t batch = 1) {
  auto graph = parse_model(spec, "op_cost_test.json");
  if (!graph) {
    ADD_FAILURE() << graph.error().message;
    return {};
  }
  auto cost = analyze(*graph, {batch, OptimizerKind::adam});
  if (!cost) {
    ADD_FAILURE() << cost.error().message;
    return {};
  }
  return std::move(*cost);
}

LayerCost layer(const ModelCost& model, std::string_view name) {
  for (const LayerCost& l : model.layers) {
    if (l.name == name) return l;
  }
  ADD_FAILURE() << "no layer named '" << name << "'";
  return {};
}

// What one layer should cost. A field left out of the initializer is expected to be 0.
struct Expected {
  std::int64_t params = 0;
  std::int64_t buffers = 0;
  std::int64_t macs = 0;
  std::int64_t flops = 0;
  std::int64_t train_forward_flops = 0;
  std::int64_t backward_flops = 0;
  std::int64_t input_bytes = 0;
  std::int64_t output_bytes = 0;
  std::int64_t weight_bytes = 0;
  std::int64_t bytes = 0;
};

void expect_cost(const LayerCost& got, const Expected& want) {
  SCOPED_TRACE("layer '" + got.name + "'");
  EXPECT_EQ(got.params, want.params) << "params";
  EXPECT_EQ(got.buffers, want.buffers) << "buffers";
  EXPECT_EQ(got.macs, want.macs) << "macs";
  EXPECT_EQ(got.flops, want.flops) << "flops";
  EXPECT_EQ(got.train_forward_flops, want.train_forward_flops) << "train_forward_flops";
  EXPECT_EQ(got.backward_flops, want.backward_flops) << "backward_flops";
  EXPECT_EQ(got.input_bytes, want.input_bytes) << "input_bytes";
  EXPECT_EQ(got.output_bytes, want.output_bytes) << "output_bytes";
  EXPECT_EQ(got.weight_bytes, want.weight_bytes) << "weight_bytes";
  EXPECT_EQ(got.bytes, want.bytes) << "bytes";
}

// ---- linear -------------------------------------------------------------------------------

TEST(OpCostLinear, WithBiasOnTheModelInput) {
  constexpr std::string_view spec = R"({"input": {"shape": [8]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 4}]})";
  const LayerCost fc = layer(analyze_spec(spec), "fc");
  expect_cost(fc, {
                      .params = 36,               // 8x4 weight + 4 bias
                      .macs = 32,                 // 8 inputs x 4 outputs
                      .flops = 68,                // 2*32 + 4 bias adds
                      .train_forward_flops = 68,  // no training-only work
                      .backward_flops = 68,       // weight grad 2*32 + bias grad 4; no input grad (model input)
                      .input_bytes = 32,          // 8 floats
                      .output_bytes = 16,         // 4 floats
                      .weight_bytes = 144,        // 36 floats
                      .bytes = 192,               // 32 + 16 + 144
                  });
  EXPECT_TRUE(fc.requires_grad);

  const LayerCost fc4 = layer(analyze_spec(spec, 4), "fc");
  EXPECT_EQ(fc4.macs, 32);           // per sample, whatever the batch
  EXPECT_EQ(fc4.weight_bytes, 144);  // the weights are read once per batch
  EXPECT_EQ(fc4.bytes, 336);         // 4*(32 + 16) + 144
}

TEST(OpCostLinear, WithoutBiasAfterATrainableLayer) {
  constexpr std::string_view spec = R"({"input": {"shape": [8]},
    "layers": [{"name": "fc1", "op": "linear", "out_features": 6},
               {"name": "fc2", "op": "linear", "out_features": 3, "bias": false}]})";
  expect_cost(layer(analyze_spec(spec), "fc2"), {
                                                    .params = 18,  // 6x3 weight, no bias
                                                    .macs = 18,    // 6 x 3
                                                    .flops = 36,   // 2*18, no bias adds
                                                    .train_forward_flops = 36,
                                                    .backward_flops = 72,  // weight grad 2*18 + input grad 2*18 (fc1 trains)
                                                    .input_bytes = 24,     // 6 floats
                                                    .output_bytes = 12,    // 3 floats
                                                    .weight_bytes = 72,    // 18 floats
                                                    .bytes = 108,          // 24 + 12 + 72
                                                });
  EXPECT_EQ(layer(analyze_spec(spec, 4), "fc2").bytes, 216);  // 4*(24 + 12) + 72
}

TEST(OpCostLinear, RankTwoInputAppliesToEveryRow) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 8]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 4}]})";
  expect_cost(layer(analyze_spec(spec), "fc"), {
                                                   .params = 36,  // 8x4 + 4, independent of the 3 rows
                                                   .macs = 96,    // 3 rows x 8 x 4
                                                   .flops = 204,  // 2*96 + 3 rows x 4 bias adds
                                                   .train_forward_flops = 204,
                                                   .backward_flops = 204,  // weight grad 2*96 + bias grad 12; no input grad
                                                   .input_bytes = 96,      // 24 floats
                                                   .output_bytes = 48,     // 12 floats
                                                   .weight_bytes = 144,    // 36 floats
                                                   .bytes = 288,           // 96 + 48 + 144
                                               });
}

TEST(OpCostLinear, TiedToAnEmbeddingCountsOnlyItsBias) {
  constexpr std::string_view spec = R"({"input": {"shape": [5], "dtype": "int32"},
    "layers": [{"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 6},
               {"name": "head", "op": "linear", "out_features": 10, "tied_to": "emb"}]})";
  const ModelCost model = analyze_spec(spec);
  expect_cost(layer(model, "head"), {
                                        .params = 10,  // the 10x6 weight is emb's; only the 10 biases are new
                                        .macs = 300,   // 5 rows x 6 x 10
                                        .flops = 650,  // 2*300 + 5x10 bias adds
                                        .train_forward_flops = 650,
                                        .backward_flops = 1250,  // weight grad 2*300 + 50 (the shared weight still gets a
                                                                 // gradient) + input grad 2*300 (emb trains)
                                        .input_bytes = 120,      // 5x6 floats
                                        .output_bytes = 200,     // 5x10 floats
                                        .weight_bytes = 280,     // the shared 60 floats are still read, + 10 bias floats
                                        .bytes = 600,            // 120 + 200 + 280
                                    });
  EXPECT_EQ(model.totals.params, 70);                           // 10x6 table counted once + 10 bias
  EXPECT_EQ(layer(analyze_spec(spec, 4), "head").bytes, 1560);  // 4*(120 + 200) + 280
}

TEST(OpCostLinear, TiedToALinear) {
  // dec shares enc's [4, 6] weight; both read the model input [6].
  constexpr std::string_view spec = R"({"input": {"shape": [6]},
    "layers": [{"name": "enc", "op": "linear", "out_features": 4},
               {"name": "dec", "op": "linear", "out_features": 4, "tied_to": "enc", "inputs": ["$input"]}]})";
  const ModelCost model = analyze_spec(spec);
  EXPECT_EQ(layer(model, "enc").params, 28);  // 4x6 + 4
  EXPECT_EQ(layer(model, "dec").params, 4);   // bias only
  EXPECT_EQ(model.totals.params, 32);         // 28 + 4
  EXPECT_EQ(layer(model, "dec").macs, 24);    // 6 x 4
}

// ---- conv2d -------------------------------------------------------------------------------

TEST(OpCostConv2d, PlainWithBias) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 5, 5]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 3}]})";
  expect_cost(layer(analyze_spec(spec), "conv"), {
                                                     .params = 76,   // 4 x 2 x 3x3 weights + 4 bias
                                                     .macs = 648,    // output [4,3,3] = 36 outputs x (2*3*3 = 18) MACs each
                                                     .flops = 1332,  // 2*648 + 36 bias adds
                                                     .train_forward_flops = 1332,
                                                     .backward_flops = 1332,  // weight grad 2*648 + bias grad 36; no input grad
                                                     .input_bytes = 200,      // 2*5*5 floats
                                                     .output_bytes = 144,     // 36 floats
                                                     .weight_bytes = 304,     // 76 floats
                                                     .bytes = 648,            // 200 + 144 + 304
                                                 });
  EXPECT_EQ(layer(analyze_spec(spec, 4), "conv").bytes, 1680);  // 4*(200 + 144) + 304
}

TEST(OpCostConv2d, StridePaddingDilationWithoutBiasAfterATrainableLayer) {
  constexpr std::string_view spec = R"({"input": {"shape": [1, 7, 7]},
    "layers": [{"name": "c0", "op": "conv2d", "out_channels": 1, "kernel": 1, "bias": false},
               {"name": "c1", "op": "conv2d", "out_channels": 2, "kernel": 3, "stride": 2,
                "padding": 1, "dilation": 2, "bias": false}]})";
  expect_cost(layer(analyze_spec(spec), "c1"), {
                                                   .params = 18,  // 2 x 1 x 3x3, no bias
                                                   .macs = 162,   // out size floor((7+2-2*2-1)/2)+1 = 3: [2,3,3] = 18 x 9 MACs
                                                   .flops = 324,  // 2*162
                                                   .train_forward_flops = 324,
                                                   .backward_flops = 648,  // weight grad 2*162 + input grad 2*162 (c0 trains)
                                                   .input_bytes = 196,     // 49 floats
                                                   .output_bytes = 72,     // 18 floats
                                                   .weight_bytes = 72,     // 18 floats
                                                   .bytes = 340,           // 196 + 72 + 72
                                               });
}

TEST(OpCostConv2d, Groups) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 6, 6]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 6, "kernel": 3, "padding": 1, "groups": 2}]})";
  expect_cost(layer(analyze_spec(spec), "conv"), {
                                                     .params = 114,  // 6 x (4/2) x 3x3 = 108 + 6 bias
                                                     .macs = 3888,   // [6,6,6] = 216 outputs x (2*3*3 = 18)
                                                     .flops = 7992,  // 2*3888 + 216 bias adds
                                                     .train_forward_flops = 7992,
                                                     .backward_flops = 7992,  // weight grad only
                                                     .input_bytes = 576,      // 144 floats
                                                     .output_bytes = 864,     // 216 floats
                                                     .weight_bytes = 456,     // 114 floats
                                                     .bytes = 1896,           // 576 + 864 + 456
                                                 });
}

TEST(OpCostConv2d, DepthwiseWithoutBias) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4, 4]},
    "layers": [{"name": "dw", "op": "conv2d", "out_channels": 3, "kernel": 3, "padding": 1,
                "groups": 3, "bias": false}]})";
  expect_cost(layer(analyze_spec(spec), "dw"), {
                                                   .params = 27,  // 3 x 1 x 3x3
                                                   .macs = 432,   // [3,4,4] = 48 outputs x 9
                                                   .flops = 864,  // 2*432
                                                   .train_forward_flops = 864,
                                                   .backward_flops = 864,  // weight grad 2*432
                                                   .input_bytes = 192,     // 48 floats
                                                   .output_bytes = 192,
                                                   .weight_bytes = 108,  // 27 floats
                                                   .bytes = 492,         // 192 + 192 + 108
                                               });
}

TEST(OpCostConv2d, RectangularKernelStrideAndPadding) {
  constexpr std::string_view spec = R"({"input": {"shape": [1, 5, 6]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": [2, 3],
                "stride": [1, 2], "padding": [1, 0]}]})";
  expect_cost(layer(analyze_spec(spec), "conv"), {
                                                     .params = 14,  // 2 x 1 x 2x3 + 2 bias
                                                     .macs = 144,   // H (5+2-2)/1+1 = 6, W floor((6-3)/2)+1 = 2: 24 outputs x 6
                                                     .flops = 312,  // 2*144 + 24 bias adds
                                                     .train_forward_flops = 312,
                                                     .backward_flops = 312,  // weight grad 2*144 + 24
                                                     .input_bytes = 120,     // 30 floats
                                                     .output_bytes = 96,     // 24 floats
                                                     .weight_bytes = 56,     // 14 floats
                                                     .bytes = 272,           // 120 + 96 + 56
                                                 });
}

// ---- normalisation ------------------------------------------------------------------------

// conv1d and conv_transpose1d: every figure the 2-D op's over a height of 1 (the count PyTorch's
// 1-D calls had before they had ops of their own), and a conv1d's by hand.
TEST(OpCostConv1d, EqualsTheTwoDimensionalOpOverAHeightOfOne) {
  const ModelCost one = analyze_spec(R"({"input": {"shape": [4, 20]}, "layers": [
    {"name": "c0", "op": "conv1d", "out_channels": 6, "kernel": 5, "stride": 2, "padding": 1, "dilation": 2, "groups": 2},
    {"name": "up", "op": "conv_transpose1d", "out_channels": 4, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1}]})");
  const ModelCost two = analyze_spec(R"({"input": {"shape": [4, 1, 20]}, "layers": [
    {"name": "c0", "op": "conv2d", "out_channels": 6, "kernel": [1, 5], "stride": [1, 2], "padding": [0, 1], "dilation": [1, 2], "groups": 2},
    {"name": "up", "op": "conv_transpose2d", "out_channels": 4, "kernel": [1, 3], "stride": [1, 2], "padding": [0, 1], "output_padding": [0, 1]}]})");
  for (const char* name : {"c0", "up"}) {
    SCOPED_TRACE(name);
    const LayerCost& a = layer(one, name);
    const LayerCost& b = layer(two, name);
    EXPECT_EQ(a.output_shape.size(), 2u);
    EXPECT_EQ(a.output_shape[0], b.output_shape[0]);
    EXPECT_EQ(a.output_shape[1], b.output_shape[2]);
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.macs, b.macs);
    EXPECT_EQ(a.flops, b.flops);
    EXPECT_EQ(a.backward_flops, b.backward_flops);
    EXPECT_EQ(a.bytes, b.bytes);
  }
  // The pools and the batch norm too, over [C, 1, L].
  const ModelCost pools1 = analyze_spec(R"({"input": {"shape": [4, 20]}, "layers": [
    {"name": "bn", "op": "batchnorm1d"}, {"name": "max", "op": "maxpool1d", "kernel": 3, "stride": 2, "padding": 1},
    {"name": "avg", "op": "avgpool1d", "kernel": 2}, {"name": "ada", "op": "adaptive_avgpool1d", "output": 3}]})");
  const ModelCost pools2 = analyze_spec(R"({"input": {"shape": [4, 1, 20]}, "layers": [
    {"name": "bn", "op": "batchnorm2d"}, {"name": "max", "op": "maxpool2d", "kernel": [1, 3], "stride": [1, 2], "padding": [0, 1]},
    {"name": "avg", "op": "avgpool2d", "kernel": [1, 2]}, {"name": "ada", "op": "adaptive_avgpool2d", "output": [1, 3]}]})");
  for (const char* name : {"bn", "max", "avg", "ada"}) {
    SCOPED_TRACE(name);
    const LayerCost& a = layer(pools1, name);
    const LayerCost& b = layer(pools2, name);
    EXPECT_EQ(a.params, b.params);
    EXPECT_EQ(a.flops, b.flops);
    EXPECT_EQ(a.train_forward_flops, b.train_forward_flops);
    EXPECT_EQ(a.backward_flops, b.backward_flops);
    EXPECT_EQ(a.bytes, b.bytes);
  }
  const LayerCost& c0 = layer(one, "c0");
  EXPECT_EQ(c0.output_shape, (Shape{6, 7}));  // floor((20 + 2 − 2·4 − 1) / 2) + 1
  EXPECT_EQ(c0.params, 66);                   // 6 x 4/2 x 5 weights + 6 bias
  EXPECT_EQ(c0.macs, 420);                    // 42 outputs x 2·5
}

// conv3d: conv2d's count with the kernel's depth: every output element, in/groups·kd·kh·kw MACs.
TEST(OpCostConv3d, PlainWithBias) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 4, 5, 5]},
    "layers": [{"name": "conv", "op": "conv3d", "out_channels": 4, "kernel": 3, "padding": [1, 0, 0]}]})";
  expect_cost(layer(analyze_spec(spec), "conv"), {
                                                     .params = 220,   // 4 x 2 x 3x3x3 weights + 4 bias
                                                     .macs = 7776,    // output [4,4,3,3] = 144 outputs x (2*27 = 54)
                                                     .flops = 15696,  // 2*7776 + 144 bias adds
                                                     .train_forward_flops = 15696,
                                                     .backward_flops = 15696,  // weight grad 2*7776 + bias grad 144; no input grad
                                                     .input_bytes = 800,       // 2*4*5*5 floats
                                                     .output_bytes = 576,      // 144 floats
                                                     .weight_bytes = 880,      // 220 floats
                                                     .bytes = 2256,            // 800 + 576 + 880
                                                 });
}

TEST(OpCostConv3d, GroupsStrideDilationWithoutBiasAfterATrainableLayer) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 4, 5, 5]},
    "layers": [{"name": "c0", "op": "conv3d", "out_channels": 4, "kernel": 1, "bias": false},
               {"name": "c1", "op": "conv3d", "out_channels": 6, "kernel": [2, 3, 3], "stride": [2, 1, 1],
                "padding": [0, 2, 2], "dilation": [1, 2, 2], "groups": 2, "bias": false}]})";
  const LayerCost& c1 = layer(analyze_spec(spec), "c1");
  EXPECT_EQ(c1.output_shape, (Shape{6, 2, 5, 5}));  // d: (4-1-1)/2+1; h, w: (5+4-2*2-1)/1+1
  EXPECT_EQ(c1.params, 216);                        // 6 x 4/2 x 2x3x3
  EXPECT_EQ(c1.macs, 10800);                        // 300 outputs x 36
  EXPECT_EQ(c1.flops, 21600);
  EXPECT_EQ(c1.backward_flops, 43200);  // weight grad 2*10800 + input grad 2*10800 (c0 trains)
}

// conv_transpose3d: conv_transpose2d's count with the kernel's depth: every input element is
// scattered through out/groups·kd·kh·kw weights (fvcore's count).
TEST(OpCostConv3d, TransposedCountsEveryInputElement) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 2, 3, 3]},
    "layers": [{"name": "up", "op": "conv_transpose3d", "out_channels": 6, "kernel": 3, "stride": 2, "padding": 1,
                "output_padding": 1, "groups": 2}]})";
  const LayerCost& up = layer(analyze_spec(spec), "up");
  EXPECT_EQ(up.output_shape, (Shape{6, 4, 6, 6}));  // d: 1·2-2+2+1+1, h, w: 2·2-2+2+1+1
  expect_cost(up, {
                      .params = 330,   // weight [4, 6/2, 3, 3, 3] = 324 + 6 bias
                      .macs = 5832,    // 72 input elements x 3·27
                      .flops = 12528,  // 2*5832 + 864 bias adds
                      .train_forward_flops = 12528,
                      .backward_flops = 12528,  // weight grad 2*5832 + bias grad 864; no input grad
                      .input_bytes = 288,       // 72 floats
                      .output_bytes = 3456,     // 864 floats
                      .weight_bytes = 1320,     // 330 floats
                      .bytes = 5064,            // 288 + 3456 + 1320
                  });
}

TEST(OpCostConv3d, TransposedDepthwiseDilatedAfterATrainableLayer) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 2, 3, 3]},
    "layers": [{"name": "c0", "op": "conv3d", "out_channels": 4, "kernel": 1, "bias": false},
               {"name": "up", "op": "conv_transpose3d", "out_channels": 4, "kernel": [2, 3, 3], "stride": [1, 2, 2],
                "padding": [0, 1, 1], "dilation": [2, 1, 1], "groups": 4, "bias": false}]})";
  const LayerCost& up = layer(analyze_spec(spec), "up");
  EXPECT_EQ(up.output_shape, (Shape{4, 4, 5, 5}));  // d: 1+2·1+1, h, w: 2·2-2+2+1
  EXPECT_EQ(up.params, 72);                         // 4 x 4/4 x 2x3x3
  EXPECT_EQ(up.macs, 1296);                         // 72 input elements x 18
  EXPECT_EQ(up.flops, 2592);
  EXPECT_EQ(up.backward_flops, 5184);  // weight grad 2*1296 + input grad 2*1296 (c0 trains)
}

// batchnorm3d: batchnorm2d's count over every element of [C, D, H, W].
TEST(OpCostNorm, BatchNorm3dCountsEveryElement) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 2, 4, 4]},
    "layers": [{"name": "conv", "op": "conv3d", "out_channels": 3, "kernel": 1},
               {"name": "bn", "op": "batchnorm3d"}]})";
  expect_cost(layer(analyze_spec(spec), "bn"), {
                                                   .params = 6,                 // gamma, beta: 2 x 3 channels
                                                   .buffers = 6,                // running mean and variance
                                                   .flops = 192,                // 2 x 96 elements
                                                   .train_forward_flops = 672,  // 7 x 96
                                                   .backward_flops = 960,       // weights 5 x 96 + input 5 x 96
                                                   .input_bytes = 384,          // 96 floats
                                                   .output_bytes = 384,
                                                   .weight_bytes = 48,
                                                   .bytes = 816,
                                               });
}

TEST(OpCostPool, ThreeDimensionalWindows) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 4, 7, 7]},
    "layers": [{"name": "conv", "op": "conv3d", "out_channels": 2, "kernel": 1},
               {"name": "max", "op": "maxpool3d", "kernel": [2, 3, 3], "stride": [1, 2, 2]},
               {"name": "avg", "op": "avgpool3d", "kernel": 2, "inputs": ["conv"]},
               {"name": "global", "op": "adaptive_avgpool3d", "inputs": ["conv"]},
               {"name": "uneven", "op": "adaptive_avgpool3d", "output": [2, 3, 1], "inputs": ["conv"]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "max"), {
                                   .flops = 918,  // [2,3,3,3] = 54 outputs x (2*3*3 - 1) comparisons
                                   .train_forward_flops = 918,
                                   .backward_flops = 54,  // 1 per output (route to the argmax)
                                   .input_bytes = 1568,   // 392 floats
                                   .output_bytes = 216,   // 54 floats
                                   .bytes = 1784,
                               });
  EXPECT_EQ(layer(m, "max").output_shape, (Shape{2, 3, 3, 3}));
  EXPECT_EQ(layer(m, "avg").output_shape, (Shape{2, 2, 3, 3}));
  EXPECT_EQ(layer(m, "avg").flops, 288);           // 36 outputs x 8
  EXPECT_EQ(layer(m, "avg").backward_flops, 324);  // 36 x (8 + 1)
  EXPECT_EQ(layer(m, "global").output_shape, (Shape{2, 1, 1, 1}));
  EXPECT_EQ(layer(m, "global").flops, 392);           // every input once
  EXPECT_EQ(layer(m, "global").backward_flops, 394);  // 392 + 2 outputs
  // Window sums per axis (in + out − gcd): depth 4+2−2 = 4, height 7+3−1 = 9, width 7: 252 per channel.
  EXPECT_EQ(layer(m, "uneven").flops, 504);
}

TEST(OpCostNorm, BatchNormOnTheModelInput) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4, 4]},
    "layers": [{"name": "bn", "op": "batchnorm2d"}]})";
  expect_cost(layer(analyze_spec(spec), "bn"), {
                                                   .params = 6,                 // gamma, beta: 2 x 3 channels
                                                   .buffers = 6,                // running mean and variance: 2 x 3
                                                   .flops = 96,                 // 2 per element (folded scale, shift) x 48
                                                   .train_forward_flops = 336,  // 7 x 48 (batch statistics)
                                                   .backward_flops = 240,       // weight grad 5 x 48; no input grad
                                                   .input_bytes = 192,          // 48 floats
                                                   .output_bytes = 192,
                                                   .weight_bytes = 48,  // 6 params + 6 buffers, floats
                                                   .bytes = 432,        // 192 + 192 + 48
                                               });
  EXPECT_EQ(layer(analyze_spec(spec, 4), "bn").bytes, 1584);  // 4*(192 + 192) + 48
}

TEST(OpCostNorm, BatchNormAfterAConvAddsItsInputGradient) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4, 4]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 3, "kernel": 1},
               {"name": "bn", "op": "batchnorm2d"}]})";
  EXPECT_EQ(layer(analyze_spec(spec), "bn").backward_flops, 480);  // weights 5x48 + input 5x48
}

TEST(OpCostNorm, LayerNorm) {
  constexpr std::string_view on_input = R"({"input": {"shape": [3, 8]},
    "layers": [{"name": "ln", "op": "layernorm"}]})";
  expect_cost(layer(analyze_spec(on_input), "ln"), {
                                                       .params = 16,  // gamma, beta over the last dimension: 2 x 8
                                                       .flops = 183,  // 7 x 24 elements + 5 x 3 rows
                                                       .train_forward_flops = 183,
                                                       .backward_flops = 120,  // weight grad 5 x 24; no input grad
                                                       .input_bytes = 96,      // 24 floats
                                                       .output_bytes = 96,
                                                       .weight_bytes = 64,  // 16 floats
                                                       .bytes = 256,        // 96 + 96 + 64
                                                   });
  constexpr std::string_view after_linear = R"({"input": {"shape": [3, 8]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 8},
               {"name": "ln", "op": "layernorm"}]})";
  EXPECT_EQ(layer(analyze_spec(after_linear), "ln").backward_flops, 318);  // 5x24 + (8x24 + 2x3)
}

// ---- element-wise activations -------------------------------------------------------------

struct ActivationCase {
  const char* op_json;    // the layer's op and attributes
  std::int64_t flops;     // forward, on 4 elements
  std::int64_t backward;  // input gradient, on 4 elements
};

TEST(OpCostActivation, EachOpsForwardAndInputGradient) {
  const ActivationCase cases[] = {
      {R"("op": "relu")", 4, 4},                               // 1n | 1n
      {R"("op": "relu6")", 8, 8},                              // 2n | 2n
      {R"("op": "gelu")", 20, 44},                             // erf form: 5n | 11n
      {R"("op": "gelu", "approximate": "none")", 20, 44},      // the same, written out
      {R"("op": "gelu", "approximate": "tanh")", 36, 72},      // 9n | 18n
      {R"("op": "silu")", 20, 36},                             // 5n | 9n
      {R"("op": "sigmoid")", 16, 12},                          // 4n | 3n
      {R"("op": "tanh")", 4, 12},                              // 1n | 3n
      {R"("op": "softplus")", 16, 20},                         // 4n | 5n
      {R"("op": "mish")", 20, 56},                             // 5n | 14n
      {R"("op": "leaky_relu", "negative_slope": 0.2)", 8, 8},  // 2n | 2n
      {R"("op": "elu")", 16, 16},                              // 4n | 4n
      {R"("op": "hardshrink", "lambd": 0.25)", 8, 8},          // 2n | 2n: two comparisons, a select
  };
  for (const ActivationCase& c : cases) {
    SCOPED_TRACE(c.op_json);
    // After a trainable linear [6] -> [4]: the input gradient is counted.
    const std::string after = std::string(R"({"input": {"shape": [6]}, "layers": [
        {"name": "fc", "op": "linear", "out_features": 4}, {"name": "act", )") +
                              c.op_json + "}]}";
    const LayerCost act = layer(analyze_spec(after), "act");
    expect_cost(act, {
                         .flops = c.flops,
                         .train_forward_flops = c.flops,  // no training-only work
                         .backward_flops = c.backward,
                         .input_bytes = 16,  // 4 floats
                         .output_bytes = 16,
                         .bytes = 32,  // 16 + 16, no weights
                     });
    EXPECT_TRUE(act.requires_grad);

    // Directly on the model input [4]: nothing upstream trains, so no backward at all.
    const std::string on_input = std::string(R"({"input": {"shape": [4]}, "layers": [{"name": "act", )") + c.op_json + "}]}";
    const LayerCost first = layer(analyze_spec(on_input), "act");
    EXPECT_EQ(first.flops, c.flops);
    EXPECT_EQ(first.backward_flops, 0);
    EXPECT_FALSE(first.requires_grad);
  }
}

TEST(OpCostActivation, SoftmaxRowsFollowTheAxis) {
  // [3, 4] after a linear [3, 5] -> [3, 4]: 12 elements.
  constexpr std::string_view axis0 = R"({"input": {"shape": [3, 5]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 4},
               {"name": "sm", "op": "softmax", "axis": 0}]})";
  expect_cost(layer(analyze_spec(axis0), "sm"), {
                                                    .flops = 64,  // 5 x 12 + 4 rows (softmax over axis 0: one per column)
                                                    .train_forward_flops = 64,
                                                    .backward_flops = 48,  // 4 x 12
                                                    .input_bytes = 48,
                                                    .output_bytes = 48,
                                                    .bytes = 96,
                                                });
  constexpr std::string_view last = R"({"input": {"shape": [3, 5]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 4}, {"name": "sm", "op": "softmax"}]})";
  EXPECT_EQ(layer(analyze_spec(last), "sm").flops, 63);  // 5 x 12 + 3 rows (default axis -1)

  constexpr std::string_view middle = R"({"input": {"shape": [2, 3, 4]},
    "layers": [{"name": "a", "op": "softmax", "axis": 1}, {"name": "b", "op": "softmax", "axis": -2}]})";
  const ModelCost m = analyze_spec(middle);
  EXPECT_EQ(layer(m, "a").flops, 128);         // 5 x 24 + 24/3 = 8 rows
  EXPECT_EQ(layer(m, "b").flops, 128);         // axis -2 is axis 1
  EXPECT_EQ(layer(m, "a").backward_flops, 0);  // on the model input
}

// ---- pooling ------------------------------------------------------------------------------

TEST(OpCostPool, MaxPoolAfterAConv) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 4, 4]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
               {"name": "pool", "op": "maxpool2d", "kernel": 2}]})";
  expect_cost(layer(analyze_spec(spec), "pool"), {
                                                     .flops = 24,  // [2,2,2] = 8 outputs x (2*2 - 1) comparisons
                                                     .train_forward_flops = 24,
                                                     .backward_flops = 8,  // 1 per output (route to the argmax)
                                                     .input_bytes = 128,   // 32 floats
                                                     .output_bytes = 32,   // 8 floats
                                                     .bytes = 160,
                                                 });
}

TEST(OpCostPool, MaxPoolCeilModeAndPadding) {
  constexpr std::string_view spec = R"({"input": {"shape": [1, 5, 5]},
    "layers": [{"name": "ceil", "op": "maxpool2d", "kernel": 2, "ceil_mode": true},
               {"name": "floor", "op": "maxpool2d", "kernel": 2, "inputs": ["$input"]},
               {"name": "padded", "op": "maxpool2d", "kernel": 3, "stride": 2, "padding": 1, "inputs": ["$input"]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "ceil"), {
                                    .flops = 27,  // ceil((5-2)/2)+1 = 3: [1,3,3] = 9 outputs x 3 comparisons
                                    .train_forward_flops = 27,
                                    .backward_flops = 0,  // on the model input
                                    .input_bytes = 100,   // 25 floats
                                    .output_bytes = 36,   // 9 floats
                                    .bytes = 136,
                                });
  EXPECT_EQ(layer(m, "floor").flops, 12);   // floor((5-2)/2)+1 = 2: 4 outputs x 3
  EXPECT_EQ(layer(m, "padded").flops, 72);  // floor((5+2-3)/2)+1 = 3: 9 outputs x 8
}

TEST(OpCostPool, AvgPool) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 4, 4]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
               {"name": "pool", "op": "avgpool2d", "kernel": 2},
               {"name": "ceil", "op": "avgpool2d", "kernel": [2, 3], "stride": 2, "ceil_mode": true, "inputs": ["conv"]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "pool"), {
                                    .flops = 32,  // 8 outputs x 4 (3 adds + 1 divide)
                                    .train_forward_flops = 32,
                                    .backward_flops = 40,  // 8 x (4 + 1)
                                    .input_bytes = 128,
                                    .output_bytes = 32,
                                    .bytes = 160,
                                });
  // H ceil((4-2)/2)+1 = 2, W ceil((4-3)/2)+1 = 2 (start 2 < 4, kept): [2,2,2] = 8 outputs
  EXPECT_EQ(layer(m, "ceil").flops, 48);           // 8 x 2*3
  EXPECT_EQ(layer(m, "ceil").backward_flops, 56);  // 8 x (6 + 1)
}

TEST(OpCostPool, AdaptiveAvgPoolWithUnevenWindows) {
  // H 7 -> 3: windows [0,3) [2,5) [4,7): 3+3+3 = 9.  W 5 -> 3: [0,2) [1,4) [3,5): 2+3+2 = 7.
  // The sum over output cells of window areas is 9 x 7 = 63 per channel.
  constexpr std::string_view spec = R"({"input": {"shape": [2, 7, 5]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
               {"name": "pool", "op": "adaptive_avgpool2d", "output": 3}]})";
  expect_cost(layer(analyze_spec(spec), "pool"), {
                                                     .flops = 126,  // 2 channels x 63
                                                     .train_forward_flops = 126,
                                                     .backward_flops = 144,  // 2 x (63 + 9 outputs)
                                                     .input_bytes = 280,     // 70 floats
                                                     .output_bytes = 72,     // 18 floats
                                                     .bytes = 352,
                                                 });
}

TEST(OpCostPool, AdaptiveAvgPoolLargerOutputAndGlobal) {
  // 2 -> 3: windows [0,1) [0,2) [1,2): 1+2+1 = 4 per axis, 16 per channel.
  constexpr std::string_view up = R"({"input": {"shape": [1, 2, 2]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 1, "kernel": 1},
               {"name": "pool", "op": "adaptive_avgpool2d", "output": [3, 3]}]})";
  const LayerCost pool = layer(analyze_spec(up), "pool");
  EXPECT_EQ(pool.output_shape, (Shape{1, 3, 3}));
  EXPECT_EQ(pool.flops, 16);
  EXPECT_EQ(pool.backward_flops, 25);  // 16 + 9 outputs

  constexpr std::string_view global = R"({"input": {"shape": [4, 3, 3]},
    "layers": [{"name": "gap", "op": "adaptive_avgpool2d"}]})";
  EXPECT_EQ(layer(analyze_spec(global), "gap").flops, 36);  // 4 channels x one 3x3 window
}

TEST(OpCostDataMovement, CopiesCountNoFlopsReadWhatTheyCopyAndSumRepeatedGradients) {
  // conv → [4, 6, 5] (120 elements). The channel half [2, 6, 5] reads its 60; the gather of
  // channels [3, 1, 1] reads 2 distinct channels (60) and its input gradient adds the repeated
  // one (90 − 60); expand [1, 6, 5] → [4, 6, 5] sums 4 copies (120 − 30); reflect padding of H
  // by 1 on each side [4, 8, 5] sums 40 mirrored elements; constant padding that crops W by 1
  // reads 96 of 120 and scatters.
  constexpr std::string_view spec = R"({"input": {"shape": [4, 6, 5]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 1},
               {"name": "half", "op": "slice", "axes": [0], "starts": [2], "ends": [4]},
               {"name": "pick", "op": "gather", "axis": 0, "indices": [3, 1, 1], "inputs": ["conv"]},
               {"name": "one", "op": "slice", "axes": [0], "starts": [0], "ends": [1], "inputs": ["conv"]},
               {"name": "wide", "op": "expand", "shape": [4, 6, 5]},
               {"name": "mirror", "op": "pad", "pads": [0, 1, 0, 0, 1, 0], "mode": "reflect", "inputs": ["conv"]},
               {"name": "crop", "op": "pad", "pads": [0, 0, 0, 0, 0, -1], "inputs": ["conv"]},
               {"name": "twice", "op": "tile", "repeats": [1, 1, 2], "inputs": ["conv"]}]})";
  const auto m = analyze_spec(spec);
  const auto expect = [&](const char* name, std::int64_t read, std::int64_t out, std::int64_t grad) {
    SCOPED_TRACE(name);
    const LayerCost& l = layer(m, name);
    EXPECT_EQ(l.flops, 0);
    EXPECT_EQ(l.input_bytes, read * 4);
    EXPECT_EQ(l.output_bytes, out * 4);
    EXPECT_EQ(l.backward_flops, grad);
    EXPECT_EQ(l.params, 0);
  };
  expect("half", 60, 60, 0);
  expect("pick", 60, 90, 30);
  expect("wide", 30, 120, 90);
  expect("mirror", 120, 160, 40);
  expect("crop", 96, 96, 0);
  expect("twice", 120, 240, 120);
  EXPECT_EQ(layer(m, "pick").output_shape, (Shape{3, 6, 5}));
  EXPECT_EQ(layer(m, "mirror").output_shape, (Shape{4, 8, 5}));
  EXPECT_EQ(layer(m, "crop").output_shape, (Shape{4, 6, 4}));
}

TEST(OpCostDataMovement, WhereCopiesTheConditionAndConstantAreBuffers) {
  // masked_fill of conv's [4, 6, 5] by a [1, 6, 5] condition with a [1, 1, 1] constant: 0
  // FLOPs, 30 + 1 buffer elements; where of conv and its channel mean [1, 6, 5]: the mean's
  // gradient sums over the 4 channels it is broadcast to (120 − 30 adds), a step's own work.
  constexpr std::string_view spec = R"({"input": {"shape": [4, 6, 5]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 1},
               {"name": "fill", "op": "where", "condition": [1, 6, 5], "operand": [1, 1, 1], "constant_first": true},
               {"name": "mean", "op": "reduce", "mode": "mean", "axes": [0], "inputs": ["conv"]},
               {"name": "pick", "op": "where", "condition": [4, 1, 1], "inputs": ["conv", "mean"]}]})";
  const auto m = analyze_spec(spec);
  const LayerCost& fill = layer(m, "fill");
  EXPECT_EQ(fill.flops, 0);
  EXPECT_EQ(fill.buffers, 31);
  EXPECT_EQ(fill.backward_flops, 0);  // dy or 0, a masked copy
  EXPECT_EQ(fill.output_shape, (Shape{4, 6, 5}));
  const LayerCost& pick = layer(m, "pick");
  EXPECT_EQ(pick.flops, 0);
  EXPECT_EQ(pick.buffers, 4);
  EXPECT_EQ(pick.backward_flops, 90);
}

TEST(OpCostReduce, SumAddsAllButTheFirstOfEachGroupMeanDividesToo) {
  // [4, 6, 5] (n_in = 120): the sum over [1, 2] keeps [4, 1, 1] (n = 4, groups of 30):
  // 116 adds; the mean over channels [0] (n = 30, groups of 4) 90 adds and 30 divisions.
  constexpr std::string_view spec = R"({"input": {"shape": [4, 6, 5]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 1},
               {"name": "sum", "op": "reduce", "mode": "sum", "axes": [1, -1]},
               {"name": "mean", "op": "reduce", "mode": "mean", "axes": [0], "keepdims": false, "inputs": ["conv"]}]})";
  const auto m = analyze_spec(spec);
  expect_cost(layer(m, "sum"), {
                                   .flops = 116,
                                   .train_forward_flops = 116,
                                   .backward_flops = 0,  // dy broadcast: a copy
                                   .input_bytes = 480,
                                   .output_bytes = 16,
                                   .bytes = 496,
                               });
  expect_cost(layer(m, "mean"), {
                                    .flops = 120,  // 90 adds + 30 divisions
                                    .train_forward_flops = 120,
                                    .backward_flops = 120,  // dy / k at every input
                                    .input_bytes = 480,
                                    .output_bytes = 120,
                                    .bytes = 600,
                                });
  EXPECT_EQ(layer(m, "sum").output_shape, (Shape{4, 1, 1}));
  EXPECT_EQ(layer(m, "mean").output_shape, (Shape{6, 5}));
  EXPECT_EQ(layer(m, "mean").params, 0);
}

TEST(OpCostUpsample, NearestIsAGatherBilinearSevenFlopsPerOutput) {
  // [4, 16, 16]: nearest ×2 → [4, 32, 32] (n = 4096), bilinear to [24, 20] (n = 1920), and
  // bilinear by a scale 1.5 → floor(16 × 1.5) = 24 per axis (n = 2304).
  constexpr std::string_view spec = R"({"input": {"shape": [4, 16, 16]},
    "layers": [{"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 1},
               {"name": "nearest", "op": "upsample", "scale": 2},
               {"name": "bilinear", "op": "upsample", "mode": "bilinear", "size": [24, 20], "inputs": ["conv"]},
               {"name": "corners", "op": "upsample", "mode": "bilinear", "scale": 1.5, "align_corners": true, "inputs": ["conv"]}]})";
  const auto m = analyze_spec(spec);
  expect_cost(layer(m, "nearest"), {
                                       .flops = 0,
                                       .train_forward_flops = 0,
                                       .backward_flops = 4096,  // n scatter-adds
                                       .input_bytes = 4096,     // 1024 floats
                                       .output_bytes = 16384,   // 4096 floats
                                       .bytes = 20480,
                                   });
  expect_cost(layer(m, "bilinear"), {
                                        .flops = 13440,  // 7 x 1920
                                        .train_forward_flops = 13440,
                                        .backward_flops = 15360,  // 8 x 1920
                                        .input_bytes = 4096,
                                        .output_bytes = 7680,
                                        .bytes = 11776,
                                    });
  EXPECT_EQ(layer(m, "corners").output_shape, (Shape{4, 24, 24}));
  EXPECT_EQ(layer(m, "corners").flops, 7 * 2304);
  EXPECT_EQ(layer(m, "nearest").params, 0);
}

// docs/cost.md, "Counting convention", recurrent layers, worked by hand: per direction T steps of
// G gates over input C and state H.
TEST(OpCostRecurrent, ProductsGatesAndBackpropagationThroughTime) {
  constexpr std::string_view spec = R"({"input": {"shape": [5, 3]},
    "layers": [{"name": "lstm", "op": "lstm", "hidden_size": 4},
               {"name": "gru", "op": "gru", "hidden_size": 2, "bidirectional": true}]})";
  const auto m = analyze_spec(spec);
  // LSTM, T 5, C 3, H 4, G 4 (16 gate rows): params 16·3 + 16·4 + 2·16 = 144; MACs 5·16·(3 + 4) = 560;
  // FLOPs 2·560 + 2·80 (biases) + 22·20 (gates) = 1720. Its input is the model's: backward is
  // through time (2·80·4 + 24·20 = 1120) and the weights' (1120 + 160), no input gradient.
  expect_cost(layer(m, "lstm"), {
                                    .params = 144,
                                    .macs = 560,
                                    .flops = 1720,
                                    .train_forward_flops = 1720,
                                    .backward_flops = 2400,
                                    .input_bytes = 60,
                                    .output_bytes = 80,
                                    .weight_bytes = 576,
                                    .bytes = 716,
                                });
  // Bidirectional GRU, T 5, C 4, H 2, G 3 (6 rows a direction): params 2·(6·4 + 6·2 + 2·6) = 96;
  // MACs 2·5·6·(4 + 2) = 360; FLOPs 720 + 120 + 17·20 = 1180; backward 2·60·2 + 18·20 = 600
  // through time, 720 + 120 weights, 2·60·4 = 480 input.
  expect_cost(layer(m, "gru"), {
                                   .params = 96,
                                   .macs = 360,
                                   .flops = 1180,
                                   .train_forward_flops = 1180,
                                   .backward_flops = 1920,
                                   .input_bytes = 80,
                                   .output_bytes = 80,
                                   .weight_bytes = 384,
                                   .bytes = 544,
                               });
  EXPECT_EQ(layer(m, "gru").output_shape, (Shape{5, 4}));
}

// The same GRU given h0 (computed from the input's first step): the same products (the first
// step's W_hh·h0 is one of the T steps counted), h0's 2·2 floats among the bytes read.
TEST(OpCostRecurrent, InitialStatesGivenAddTheirBytesNotTheirProducts) {
  constexpr std::string_view spec = R"({"input": {"shape": [5, 4]},
    "layers": [{"name": "first", "op": "select", "axis": 0, "index": 0},
               {"name": "fc", "op": "linear", "out_features": 4},
               {"name": "h0", "op": "reshape", "shape": [2, 2]},
               {"name": "gru", "op": "gru", "hidden_size": 2, "bidirectional": true, "inputs": ["$input", "h0"]}]})";
  const auto m = analyze_spec(spec);
  const LayerCost g = layer(m, "gru");
  EXPECT_EQ(g.params, 96);
  EXPECT_EQ(g.macs, 360);
  EXPECT_EQ(g.flops, 1180);
  EXPECT_EQ(g.input_bytes, 80 + 16);
  EXPECT_EQ(g.bytes, 80 + 16 + 80 + 384);
}

// Sum of PyTorch's adaptive windows along one axis: window i is [floor(i*in/out), ceil((i+1)*in/out)).
std::int64_t brute_force_window_sum(std::int64_t in, std::int64_t out) {
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < out; ++i) {
    const std::int64_t start = (i * in) / out;                // floor, non-negative operands
    const std::int64_t end = ((i + 1) * in + out - 1) / out;  // ceil
    sum += end - start;
  }
  return sum;
}

TEST(OpCostPool, AdaptiveWindowSumMatchesBruteForce) {
  for (std::int64_t in = 1; in <= 40; ++in) {
    for (std::int64_t out = 1; out <= 40; ++out) {
      SCOPED_TRACE("in " + std::to_string(in) + " out " + std::to_string(out));
      const std::int64_t expected = brute_force_window_sum(in, out);
      EXPECT_EQ(expected, in + out - std::gcd(in, out));  // the closed form the code documents
      // Input [1, in, 1] -> output [out, 1]: the W axis contributes a factor 1, so the
      // forward FLOPs are exactly the H window sum.
      nlohmann::json spec = {{"input", {{"shape", {1, in, 1}}}},
                             {"layers", {{{"name", "pool"}, {"op", "adaptive_avgpool2d"}, {"output", {out, 1}}}}}};
      EXPECT_EQ(layer(analyze_spec(spec.dump()), "pool").flops, expected);
    }
  }
}

// ---- views, data movement and add ---------------------------------------------------------

TEST(OpCostMovement, FlattenReshapeAndDropoutAreViews) {
  constexpr std::string_view spec = R"({"input": {"shape": [6]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 12},
               {"name": "drop", "op": "dropout"},
               {"name": "reshape", "op": "reshape", "shape": [3, 4]},
               {"name": "flat", "op": "flatten"}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "drop"), {
                                    .train_forward_flops = 12,  // draw and apply the mask: 1 per element
                                    .backward_flops = 12,       // apply the mask to the gradient
                                    .input_bytes = 48,          // 12 floats
                                    .output_bytes = 48,
                                    .bytes = 0,  // identity in evaluation: moves nothing
                                });
  expect_cost(layer(m, "reshape"), {.input_bytes = 48, .output_bytes = 48, .bytes = 0});
  expect_cost(layer(m, "flat"), {.input_bytes = 48, .output_bytes = 48, .bytes = 0});
  EXPECT_TRUE(layer(m, "flat").requires_grad);  // downstream of fc, yet no work of its own
  EXPECT_EQ(layer(analyze_spec(spec, 4), "reshape").bytes, 0);
}

TEST(OpCostMovement, TransposeConcatAndSelectCopy) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 3]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 3},
               {"name": "cat", "op": "concat", "inputs": ["fc", "$input"]},
               {"name": "t", "op": "transpose", "perm": [1, 0]},
               {"name": "sel", "op": "select", "axis": 1, "index": -1}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "cat"), {
                                   .input_bytes = 48,   // two distinct [2,3] inputs, 6 floats each
                                   .output_bytes = 48,  // [4,3]
                                   .bytes = 96,
                               });
  expect_cost(layer(m, "t"), {.input_bytes = 48, .output_bytes = 48, .bytes = 96});    // [3,4]
  expect_cost(layer(m, "sel"), {.input_bytes = 48, .output_bytes = 12, .bytes = 60});  // [3]
  EXPECT_EQ(layer(analyze_spec(spec, 4), "t").bytes, 384);                             // 4*(48 + 48)
}

TEST(OpCostMovement, Add) {
  constexpr std::string_view spec = R"({"input": {"shape": [4]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 4},
               {"name": "skip", "op": "add", "inputs": ["fc", "$input"]},
               {"name": "twice", "op": "add", "inputs": ["fc", "fc"]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "skip"), {
                                    .flops = 4,  // 1 per element
                                    .train_forward_flops = 4,
                                    .backward_flops = 0,  // the gradient passes through unchanged
                                    .input_bytes = 32,    // two distinct [4] inputs
                                    .output_bytes = 16,
                                    .bytes = 48,
                                });
  EXPECT_TRUE(layer(m, "skip").requires_grad);
  EXPECT_EQ(layer(m, "twice").input_bytes, 16);  // the same tensor twice is read once
  EXPECT_EQ(layer(m, "twice").bytes, 32);
  EXPECT_EQ(layer(analyze_spec(spec, 4), "skip").bytes, 192);  // 4 x 48
}

// ---- matmul of two activations --------------------------------------------------------------

TEST(OpCostMatmul, ScoresOfQueriesAndKeys) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4]},
    "layers": [{"name": "q", "op": "linear", "out_features": 6},
               {"name": "k", "op": "linear", "out_features": 6, "inputs": ["$input"]},
               {"name": "kt", "op": "transpose", "perm": [1, 0]},
               {"name": "scores", "op": "matmul", "inputs": ["q", "kt"]}]})";
  const ModelCost m = analyze_spec(spec);
  // [3, 6]·[6, 3]: 9 outputs, each a 6-long dot product.
  expect_cost(layer(m, "scores"), {
                                      .macs = 54,
                                      .flops = 108,
                                      .train_forward_flops = 108,
                                      .backward_flops = 216,  // dA = dY·Bᵀ and dB = Aᵀ·dY, 2·MACs each
                                      .input_bytes = 144,     // q [3, 6] and kt [6, 3]
                                      .output_bytes = 36,     // [3, 3]
                                      .bytes = 180,
                                  });
  EXPECT_TRUE(layer(m, "scores").requires_grad);
}

// ---- token ops ----------------------------------------------------------------------------

TEST(OpCostToken, EmbeddingReadsAtMostTheWholeTable) {
  constexpr std::string_view spec = R"({"input": {"shape": [5], "dtype": "int32"},
    "layers": [{"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 6}]})";
  expect_cost(layer(analyze_spec(spec), "emb"), {
                                                    .params = 60,  // 10 x 6
                                                    .flops = 0,    // a gather
                                                    .train_forward_flops = 0,
                                                    .backward_flops = 30,  // scatter-add of the [5,6] output gradient; ids need none
                                                    .input_bytes = 20,     // 5 int32 ids
                                                    .output_bytes = 120,   // 5x6 floats
                                                    .weight_bytes = 120,   // min(10, 1*5) = 5 rows x 6 floats
                                                    .bytes = 260,          // 20 + 120 + 120
                                                });
  const LayerCost at4 = layer(analyze_spec(spec, 4), "emb");
  EXPECT_EQ(at4.weight_bytes, 240);  // min(10, 4*5) = 10 rows x 6 floats
  EXPECT_EQ(at4.bytes, 800);         // 4*(20 + 120) + 240
}

TEST(OpCostToken, PosEmbeddingAndClsToken) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4]},
    "layers": [{"name": "pos", "op": "pos_embedding", "num_positions": 8},
               {"name": "cls", "op": "cls_token"}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "pos"), {
                                   .params = 32,  // 8 positions x 4
                                   .flops = 12,   // one add per element of [3,4]
                                   .train_forward_flops = 12,
                                   .backward_flops = 12,  // weight grad: 1 per element; no input grad (model input)
                                   .input_bytes = 48,
                                   .output_bytes = 48,
                                   .weight_bytes = 48,  // only the 3 rows in use: 3x4 floats
                                   .bytes = 144,        // 48 + 48 + 48
                               });
  expect_cost(layer(m, "cls"), {
                                   .params = 4,          // one row of D = 4
                                   .backward_flops = 4,  // weight grad D; input grad 0 (a copy)
                                   .input_bytes = 48,    // [3,4]
                                   .output_bytes = 64,   // [4,4]
                                   .weight_bytes = 16,   // 4 floats
                                   .bytes = 128,
                               });
  const ModelCost m4 = analyze_spec(spec, 4);
  EXPECT_EQ(layer(m4, "pos").bytes, 432);  // 4*(48 + 48) + 48, the rows read once per batch
  EXPECT_EQ(layer(m4, "cls").bytes, 464);  // 4*(48 + 64) + 16
}

// Swin's relative position bias over window [2, 3] (N = 6), 2 heads, 3 windows: scores [3, 2, 6, 6].
TEST(OpCostToken, RelPosBiasReadsItsWholeTableAndAddsOncePerScore) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 2, 6, 6]},
    "layers": [{"name": "rpb", "op": "rel_pos_bias", "window": [2, 3]},
               {"name": "fc", "op": "linear", "out_features": 6},
               {"name": "rpb2", "op": "rel_pos_bias", "window": [3, 2]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "rpb"), {
                                   .params = 30,  // (2*2-1)*(2*3-1) = 15 offsets x 2 heads
                                   .flops = 216,  // one add per score: 3*2*6*6
                                   .train_forward_flops = 216,
                                   .backward_flops = 216,  // the table's gradient, 1 per score; no input grad (model input)
                                   .input_bytes = 864,     // 216 floats
                                   .output_bytes = 864,
                                   .weight_bytes = 120,  // the whole table: 30 floats
                                   .bytes = 1848,        // 864 + 864 + 120
                               });
  // After a trained layer its input gradient is dy passed on: 0 FLOPs more.
  expect_cost(layer(m, "rpb2"), {
                                    .params = 30,  // (2*3-1)*(2*2-1) = 15 offsets x 2 heads
                                    .flops = 216,
                                    .train_forward_flops = 216,
                                    .backward_flops = 216,  // 216 (table) + 0 (input)
                                    .input_bytes = 864,
                                    .output_bytes = 864,
                                    .weight_bytes = 120,
                                    .bytes = 1848,
                                });
  EXPECT_TRUE(layer(m, "rpb2").requires_grad);
  EXPECT_EQ(layer(analyze_spec(spec, 4), "rpb").bytes, 7032);  // 4*(864 + 864) + 120, the table read once per batch
}

TEST(OpCostToken, SelectOfIdsFeedsAnEmbedding) {
  constexpr std::string_view spec = R"({"input": {"shape": [2, 5], "dtype": "int32"},
    "layers": [{"name": "tok", "op": "select", "index": 0},
               {"name": "seg", "op": "select", "index": -1, "inputs": ["$input"]},
               {"name": "emb", "op": "embedding", "num_embeddings": 7, "embedding_dim": 3, "inputs": ["tok"]}]})";
  const ModelCost m = analyze_spec(spec);
  expect_cost(layer(m, "seg"), {.input_bytes = 40, .output_bytes = 20, .bytes = 60});  // [2,5] -> [5] int32
  EXPECT_FALSE(layer(m, "seg").requires_grad);
  expect_cost(layer(m, "emb"), {
                                   .params = 21,          // 7 x 3
                                   .backward_flops = 15,  // scatter-add of [5,3]
                                   .input_bytes = 20,     // 5 ids
                                   .output_bytes = 60,    // 15 floats
                                   .weight_bytes = 60,    // min(7, 5) = 5 rows x 3 floats
                                   .bytes = 140,
                               });
  EXPECT_EQ(layer(analyze_spec(spec, 4), "emb").weight_bytes, 84);  // min(7, 20) = 7 rows x 3
}

// ---- attention ----------------------------------------------------------------------------
// T = 4 tokens, D = 8, H = 2 heads.
//   MACs: 4 projections 4*T*D*D = 1024, Q.K^T and A.V 2*T*T*D = 256: 1280.
//   forward FLOPs: 2*1280 + bias 4*T*D = 128 + scale H*T*T = 32 + softmax 5*H*T*T + H*T = 168.
//   backward: always 2*T*D*D + 8*T*T*D + 5*H*T*T = 512 + 1024 + 160 = 1696;
//             weights 8*T*D*D = 2048 (+ 4*T*D = 128 bias); input 6*T*D*D + 2*T*D = 1600.

TEST(OpCostAttention, WithBiasOnTheModelInput) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 8]},
    "layers": [{"name": "attn", "op": "attention", "heads": 2}]})";
  expect_cost(layer(analyze_spec(spec), "attn"), {
                                                     .params = 288,  // 4 x 8x8 + 4 x 8 bias
                                                     .macs = 1280,
                                                     .flops = 2888,  // 2560 + 128 + 32 + 168
                                                     .train_forward_flops = 2888,
                                                     .backward_flops = 3872,  // 1696 + 2176 weights; no input grad (model input)
                                                     .input_bytes = 128,      // 32 floats
                                                     .output_bytes = 128,
                                                     .weight_bytes = 1152,  // 288 floats
                                                     .bytes = 1408,         // 128 + 128 + 1152
                                                 });
  EXPECT_EQ(layer(analyze_spec(spec, 4), "attn").bytes, 2176);  // 4*(128 + 128) + 1152
}

TEST(OpCostAttention, WithoutBias) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 8]},
    "layers": [{"name": "attn", "op": "attention", "heads": 2, "bias": false}]})";
  expect_cost(layer(analyze_spec(spec), "attn"), {
                                                     .params = 256,  // 4 x 8x8
                                                     .macs = 1280,
                                                     .flops = 2760,  // 2560 + 32 + 168, no bias adds
                                                     .train_forward_flops = 2760,
                                                     .backward_flops = 3744,  // 1696 + 2048
                                                     .input_bytes = 128,
                                                     .output_bytes = 128,
                                                     .weight_bytes = 1024,  // 256 floats
                                                     .bytes = 1280,
                                                 });
}

TEST(OpCostAttention, CausalCountsTheFullProducts) {
  constexpr std::string_view plain = R"({"input": {"shape": [4, 8]},
    "layers": [{"name": "attn", "op": "attention", "heads": 2}]})";
  constexpr std::string_view causal = R"({"input": {"shape": [4, 8]},
    "layers": [{"name": "attn", "op": "attention", "heads": 2, "causal": true}]})";
  const LayerCost a = layer(analyze_spec(plain), "attn");
  const LayerCost c = layer(analyze_spec(causal), "attn");
  EXPECT_EQ(c.macs, 1280);  // docs/cost.md, "Counting convention": the mask does not change MACs
  EXPECT_EQ(c.flops, a.flops);
  EXPECT_EQ(c.backward_flops, a.backward_flops);
  EXPECT_EQ(c.bytes, a.bytes);
}

TEST(OpCostAttention, AfterALinearCountsTheInputGradient) {
  constexpr std::string_view spec = R"({"input": {"shape": [4, 8]},
    "layers": [{"name": "fc", "op": "linear", "out_features": 8},
               {"name": "attn", "op": "attention", "heads": 2, "causal": true}]})";
  EXPECT_EQ(layer(analyze_spec(spec), "attn").backward_flops, 5472);  // 1696 + 2176 + 1600
}

// ---- requires_grad propagation ------------------------------------------------------------

TEST(OpCostRequiresGrad, NothingTrainableUpstreamMeansNoBackward) {
  constexpr std::string_view spec = R"({"input": {"shape": [1, 4, 4]},
    "layers": [{"name": "pool", "op": "maxpool2d", "kernel": 2},
               {"name": "relu", "op": "relu"},
               {"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
               {"name": "act", "op": "sigmoid"}]})";
  const ModelCost m = analyze_spec(spec);
  EXPECT_EQ(layer(m, "pool").backward_flops, 0);
  EXPECT_FALSE(layer(m, "pool").requires_grad);
  EXPECT_EQ(layer(m, "relu").backward_flops, 0);
  EXPECT_FALSE(layer(m, "relu").requires_grad);
  // conv's input (relu's output) needs no gradient: weight grad only, 2x[2,2,2]=8 outputs x 1 MAC.
  EXPECT_EQ(layer(m, "conv").backward_flops, 24);  // 2*8 + 8 bias
  EXPECT_TRUE(layer(m, "conv").requires_grad);
  EXPECT_EQ(layer(m, "act").backward_flops, 24);  // sigmoid 3n on n = 8
  EXPECT_EQ(m.totals.backward_flops, 48);         // 24 + 24
  // training = training forward + backward: pool 4x3, relu 4, conv 2*8+8, sigmoid 4x8 = 72; + 48
  EXPECT_EQ(m.totals.train_forward_flops, 72);
  EXPECT_EQ(m.totals.training_flops, 120);
}

TEST(OpCostRequiresGrad, AnAddOfUntrainedTensorsHasNoBackward) {
  constexpr std::string_view spec = R"({"input": {"shape": [4]},
    "layers": [{"name": "relu", "op": "relu"},
               {"name": "sum", "op": "add", "inputs": ["relu", "$input"]},
               {"name": "fc", "op": "linear", "out_features": 2},
               {"name": "sum2", "op": "add", "inputs": ["fc", "fc"]}]})";
  const ModelCost m = analyze_spec(spec);
  EXPECT_FALSE(layer(m, "sum").requires_grad);
  EXPECT_EQ(layer(m, "fc").backward_flops, 18);  // weight grad 2*8 + 2 bias; its input needs none
  EXPECT_TRUE(layer(m, "sum2").requires_grad);
}

}  // namespace
}  // namespace hwprof
