// The ONNX fixtures (tests/fixtures/onnx/, written by scripts/make_onnx_fixtures.py with
// Debian's PyTorch): each model's params and MACs equal PyTorch's sum(p.numel()) and an exact
// hook count, and hwprof's engine, running the file's own weights, gives PyTorch's output for
// the same input within 1e-4 of its largest magnitude. Attention (nn.MultiheadAttention,
// causal in tiny_gpt), LayerNorm (decomposed at opsets 11 and 14 too), both GELU forms, the
// class token and position embeddings, a tied output projection, hard activations, broadcast
// element-wise ops, transposed convolutions, F.interpolate's Resize, ReduceSum/ReduceMean and
// data movement between per-sample axes (Slice, Split, Pad, Gather, Expand, Tile) , LSTM/GRU
// nodes (batch_first, a bidirectional GRU, h_n read) and a video network's 3-D convolutions, batch
// norms and pools are all recognised here without PyTorch.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/executor.hpp"
#include "hwprof/engine/graph.hpp"
#include "nn/npy.hpp"
#include "text_support.hpp"

namespace hwprof {
namespace {

class OnnxFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxFixture, CountsMatchPyTorchExactlyAndTheOutputWithinOneInTenThousand) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const std::string dir = std::string(HWPROF_ONNX_FIXTURES) + "/" + GetParam();
  auto graph = load_model(dir + "/model.onnx");
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  const auto expected = nlohmann::json::parse(test::read_file(dir + "/expected.json"));
  auto cost = analyze(*graph, {1, OptimizerKind::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->totals.params, expected.at("params").get<std::int64_t>());
  EXPECT_EQ(cost->totals.macs, expected.at("macs").get<std::int64_t>());

  auto x = nn::parse_npy(test::read_file(dir + "/x.npy"), dir + "/x.npy");
  auto y = nn::parse_npy(test::read_file(dir + "/y.npy"), dir + "/y.npy");
  ASSERT_TRUE(x.ok() && y.ok());
  auto converted = nn::npy_to_tensor(*x, "x.npy");
  ASSERT_TRUE(converted.ok()) << converted.error().message;
  const Tensor& input = *converted;
  ExecutorOptions options;
  options.batch = input.dim(0);
  options.threads = 1;
  auto executor = Executor::build(*graph, options);
  ASSERT_TRUE(executor.ok()) << executor.error().message;
  auto out = executor->forward(input);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->shape(), y->shape);
  const auto* want = reinterpret_cast<const float*>(y->data.data());
  EXPECT_LE(test::max_relative_difference(out->f32(), want, static_cast<std::size_t>(out->numel())), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Exported, OnnxFixture,
                         ::testing::Values("lenet5", "tiny_vit", "tiny_gpt", "tiny_decoder", "tiny_vit_opset14", "tiny_gpt_opset11", "hf_gpt",
                                           "untrained_bn", "tiny_upsample", "tiny_reduce", "tiny_shuffle", "tiny_rnn", "tiny_seg", "tiny_video",
                                           "tiny_rnn_state", "tiny_video_decoder", "tiny_swin"),
                         [](const auto& param_info) { return std::string(param_info.param); });

// The graph's nodes of one op, in order.
std::vector<const Node*> nodes_of(const Graph& g, OpKind op) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes) {
    if (n.op == op) out.push_back(&n);
  }
  return out;
}

// x.sum(dim=1, keepdim=True) (ReduceSum, its axes a constant input) and x.mean(dim=-1)
// (ReduceMean, axes an attribute, keepdims 0) of a [2, 4, 6, 5] convolution.
TEST(OnnxFixtureStructure, ReduceSumAndReduceMeanAreReduce) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_reduce/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> reductions = nodes_of(*g, OpKind::reduce);
  ASSERT_EQ(reductions.size(), 2u);
  EXPECT_EQ(reductions[0]->attrs.reduce_mode, ReduceMode::sum);
  EXPECT_EQ(reductions[0]->output_shape, (Shape{1, 6, 5}));
  EXPECT_EQ(reductions[1]->attrs.reduce_mode, ReduceMode::mean);
  EXPECT_EQ(reductions[1]->output_shape, (Shape{4, 6}));
  auto cost = analyze(*g, {1, OptimizerKind::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  const auto flops_of = [&](const Node* n) {
    for (const LayerCost& l : cost->layers) {
      if (l.name == n->name) return l.flops;
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(flops_of(reductions[0]), 120 - 30);  // n_in − n_out adds
  EXPECT_EQ(flops_of(reductions[1]), 120);       // 96 adds + 24 divisions
}

// ShuffleNet v2's unit and the other data movement PyTorch 1.13 exports at opset 14:
// x.chunk(2, dim=1) as two Slices whose bounds are computed from Shape(x), torch.split as a
// Split (one slice layer per output), F.pad as Pads whose pads are computed (reversed and
// transposed pairs), x[:, [0, 2, 2, 5]] as a Gather, expand, a stepped and a reversed slice,
// torch.roll as Slice + Concat and repeat as Tile; each a copy, 0 FLOPs.
TEST(OnnxFixtureStructure, ChannelSplitShuffleAndTheOtherDataMovementAreLayers) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_shuffle/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> slices = nodes_of(*g, OpKind::slice);
  ASSERT_EQ(slices.size(), 9u);  // chunk 2, split 3, [1:-1:2], flip, roll 2
  EXPECT_EQ(slices[0]->output_shape, (Shape{4, 6, 5}));
  EXPECT_EQ(slices[1]->attrs.starts, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(slices[4]->output_shape, (Shape{2, 6, 5}));  // the split's third output
  EXPECT_EQ(slices[5]->attrs.steps, (std::vector<std::int64_t>{2}));
  EXPECT_EQ(slices[6]->attrs.steps, (std::vector<std::int64_t>{-1}));
  const std::vector<const Node*> pads = nodes_of(*g, OpKind::pad);
  ASSERT_EQ(pads.size(), 2u);
  EXPECT_EQ(pads[0]->attrs.pad_mode, PadMode::reflect);
  EXPECT_EQ(pads[0]->attrs.pads, (std::vector<std::int64_t>{0, 0, 1, 0, 1, 2}));  // F.pad's (1, 2, 0, 1): W last
  EXPECT_EQ(pads[1]->attrs.pad_mode, PadMode::constant);
  EXPECT_EQ(pads[1]->attrs.pad_value, 0.5);
  EXPECT_EQ(pads[1]->output_shape, (Shape{8, 9, 9}));
  const std::vector<const Node*> gathers = nodes_of(*g, OpKind::gather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->attrs.indices, (std::vector<std::int64_t>{0, 2, 2, 5}));
  ASSERT_EQ(nodes_of(*g, OpKind::expand).size(), 1u);
  EXPECT_EQ(nodes_of(*g, OpKind::expand)[0]->output_shape, (Shape{4, 9, 9}));
  const std::vector<const Node*> wheres = nodes_of(*g, OpKind::where);
  ASSERT_EQ(wheres.size(), 2u);  // masked_fill (the constant first) and torch.where of two activations
  EXPECT_TRUE(wheres[0]->attrs.constant_first);
  EXPECT_EQ(wheres[0]->attrs.condition, (Shape{4, 1, 18}));
  EXPECT_EQ(wheres[1]->inputs.size(), 2u);
  ASSERT_EQ(nodes_of(*g, OpKind::tile).size(), 1u);
  EXPECT_EQ(nodes_of(*g, OpKind::tile)[0]->output_shape, (Shape{4, 4, 18}));
  auto cost = analyze(*g, {1, OptimizerKind::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  for (const LayerCost& l : cost->layers) {
    const OpKind op = g->nodes[static_cast<std::size_t>(g->find(l.name))].op;
    if (op == OpKind::slice || op == OpKind::pad || op == OpKind::gather || op == OpKind::expand || op == OpKind::tile || op == OpKind::where) {
      EXPECT_EQ(l.flops, 0) << l.name;
    }
  }
}

// F.interpolate as PyTorch 1.13 exports it: Resize asymmetric/floor with constant scales
// (nearest ×2), and Resize linear/half_pixel with sizes from Shape, Slice and Concat (bilinear
// to 11×13).
// nn.LSTM(6, 8, num_layers=2, batch_first=True), then a bidirectional nn.GRU(8, 5) whose last
// step and h_n[-1] (the reverse direction's final state: its output at step 0) feed a linear.
TEST(OnnxFixtureStructure, LstmAndGruNodesAreOneLayerEachWithTheBatchFirst) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_rnn/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> grus = nodes_of(*g, OpKind::gru);
  ASSERT_EQ(grus.size(), 1u);
  const std::vector<const Node*> lstms = nodes_of(*g, OpKind::lstm);
  ASSERT_EQ(lstms.size(), 2u);
  EXPECT_EQ(lstms[0]->inputs, std::vector<int>{kModelInput});
  EXPECT_EQ(lstms[0]->name, "lstm.l0") << "named after PyTorch's weight_ih_l0";
  EXPECT_EQ(lstms[1]->name, "lstm.l1");
  EXPECT_EQ(grus[0]->name, "gru") << "a single layer keeps its module's name";
  EXPECT_EQ(lstms[0]->output_shape, (Shape{7, 8}));
  EXPECT_EQ(lstms[1]->output_shape, (Shape{7, 8}));
  EXPECT_FALSE(lstms[1]->attrs.bidirectional);
  EXPECT_TRUE(grus[0]->attrs.bidirectional);
  EXPECT_EQ(grus[0]->attrs.hidden_size, 5);
  EXPECT_EQ(grus[0]->output_shape, (Shape{7, 10}));
  EXPECT_TRUE(nodes_of(*g, OpKind::transpose).empty()) << "the batch_first Transposes are folded into the layers";
  // z[:, -1] and h_n[-1]: the reverse direction's state after its last step is step 0's.
  const std::vector<const Node*> selects = nodes_of(*g, OpKind::select);
  ASSERT_EQ(selects.size(), 3u);
  std::vector<std::int64_t> indices;
  for (const Node* s : selects) indices.push_back(s->attrs.index);
  EXPECT_NE(std::find(indices.begin(), indices.end(), 0), indices.end());
}

// A 2-layer GRU given h0 and a bidirectional LSTM given h0 and c0, computed from x[:, 0]:
// each layer's states are its inputs 1 (and 2), [D, H] per sample, sliced out of the
// batch-first [L·D, H] tensor where PyTorch slices one layer's.
TEST(OnnxFixtureStructure, InitialStatesComputedInTheModelAreTheLayersInputs) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_rnn_state/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> grus = nodes_of(*g, OpKind::gru);
  ASSERT_EQ(grus.size(), 2u);
  const std::vector<const Node*> lstms = nodes_of(*g, OpKind::lstm);
  ASSERT_EQ(lstms.size(), 1u);
  const auto shape_of = [&](int input) { return input == kModelInput ? Shape{7, 6} : g->nodes[static_cast<std::size_t>(input)].output_shape; };
  for (std::size_t l = 0; l < 2; ++l) {
    ASSERT_EQ(grus[l]->inputs.size(), 2u) << grus[l]->name;
    const Node& h0 = g->nodes[static_cast<std::size_t>(grus[l]->inputs[1])];
    EXPECT_EQ(h0.op, OpKind::slice) << "h0[" << l << ":" << l + 1 << "]";
    EXPECT_EQ(h0.attrs.starts, std::vector<std::int64_t>{static_cast<std::int64_t>(l)});
    EXPECT_EQ(h0.output_shape, (Shape{1, 8}));
    EXPECT_EQ(h0.name, grus[l]->name + ".h0");
  }
  ASSERT_EQ(lstms[0]->inputs.size(), 3u);
  EXPECT_EQ(shape_of(lstms[0]->inputs[1]), (Shape{2, 5}));
  EXPECT_EQ(shape_of(lstms[0]->inputs[2]), (Shape{2, 5}));
  EXPECT_NE(lstms[0]->inputs[1], lstms[0]->inputs[2]);
}

TEST(OnnxFixtureStructure, ResizeIsUpsampleWithPyTorchsCoordinates) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_upsample/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> ups = nodes_of(*g, OpKind::upsample);
  ASSERT_EQ(ups.size(), 2u);
  EXPECT_EQ(ups[0]->attrs.mode, UpsampleMode::nearest);
  EXPECT_EQ(ups[0]->attrs.scale.h, 2.0);
  EXPECT_EQ(ups[0]->attrs.scale.w, 2.0);
  EXPECT_EQ(ups[0]->output_shape, (Shape{4, 12, 10}));
  EXPECT_EQ(ups[1]->attrs.mode, UpsampleMode::bilinear);
  EXPECT_FALSE(ups[1]->attrs.align_corners);
  EXPECT_EQ(ups[1]->attrs.size.h, 11);
  EXPECT_EQ(ups[1]->attrs.size.w, 13);
  EXPECT_EQ(ups[1]->output_shape, (Shape{4, 11, 13}));
  auto cost = analyze(*g, {1, OptimizerKind::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  const auto flops_of = [&](const Node* n) {
    for (const LayerCost& l : cost->layers) {
      if (l.name == n->name) return l.flops;
    }
    return std::int64_t{-1};
  };
  EXPECT_EQ(flops_of(ups[0]), 0);                // a gather
  EXPECT_EQ(flops_of(ups[1]), 7 * 4 * 11 * 13);  // 4 products and 3 adds per output
}

// A segmentation head: dilated convolutions whose output size ONNX computes, image pooling
// upsampled from 1x1, a sigmoid gate broadcast into the features, logits resized to the input.
TEST(OnnxFixtureStructure, ASegmentationHeadsDilatedConvolutionsGateAndResizes) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_seg/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<std::int64_t> dilations;
  for (const Node* conv : nodes_of(*g, OpKind::conv2d)) dilations.push_back(conv->attrs.dilation.h);
  EXPECT_EQ(std::count(dilations.begin(), dilations.end(), 2), 1);
  EXPECT_EQ(std::count(dilations.begin(), dilations.end(), 3), 1);
  const std::vector<const Node*> ups = nodes_of(*g, OpKind::upsample);
  ASSERT_EQ(ups.size(), 2u);
  EXPECT_EQ(ups[0]->output_shape, (Shape{12, 5, 6}));   // the pooled 1x1 map back to the features' size
  EXPECT_EQ(ups[1]->output_shape, (Shape{4, 10, 12}));  // the logits to the input's
  for (const Node* up : ups) EXPECT_EQ(up->attrs.mode, UpsampleMode::bilinear);
  const std::vector<const Node*> gates = nodes_of(*g, OpKind::mul);
  ASSERT_EQ(gates.size(), 1u);
  EXPECT_EQ(g->shape_of(gates[0]->inputs[1]), (Shape{12, 1, 1}));  // the gate, broadcast
}

// torchvision's video layers as PyTorch 1.13 exports them at opset 14: Conv, BatchNormalization,
// MaxPool and AveragePool on [N, C, D, H, W] (avg_pool3d's padding as a Pad before it), and
// AdaptiveAvgPool3d(1) as GlobalAveragePool.
TEST(OnnxFixtureStructure, VideoLayersAreTheThreeDimensionalOps) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_video/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<std::string> ops;
  for (const Node& n : g->nodes) ops.emplace_back(op_name(n.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"conv3d", "batchnorm3d", "relu", "maxpool3d", "conv3d", "batchnorm3d", "relu", "conv3d", "batchnorm3d",
                                           "relu", "conv3d", "relu", "avgpool3d", "adaptive_avgpool3d", "flatten", "linear"}));
  const auto find = [&](std::string_view op, int nth) -> const Node& {
    for (const Node& n : g->nodes) {
      if (op_name(n.op) == op && nth-- == 0) return n;
    }
    ADD_FAILURE() << op;
    return g->nodes.front();
  };
  const Node& temporal = find("conv3d", 2);  // the (3, 1, 1) half of the (2+1)-D block
  EXPECT_EQ(temporal.attrs.depth.kernel, 3);
  EXPECT_EQ(temporal.attrs.kernel.h, 1);
  EXPECT_EQ(temporal.attrs.depth.padding, 1);
  const Node& grouped = find("conv3d", 3);
  EXPECT_EQ(grouped.attrs.groups, 2);
  EXPECT_EQ(grouped.attrs.depth.stride, 2);
  EXPECT_EQ(grouped.attrs.dilation.w, 2);
  EXPECT_TRUE(find("maxpool3d", 0).attrs.ceil_mode);
  EXPECT_EQ(find("avgpool3d", 0).attrs.depth.padding, 1);  // the Pad folded in
  EXPECT_EQ(find("adaptive_avgpool3d", 0).output_shape, (Shape{8, 1, 1, 1}));
}

// torchvision's SwinTransformer in miniature (tiny_swin): per sample, the windows are the first
// axis of everything between the partition and its reverse ([9 windows, 16 tokens, 16] in the
// first stage, 12x12 tokens in 4x4 windows); q, k and v are selects of the qkv projection; each
// block's relative position bias is a rel_pos_bias layer whose table holds Swin's
// (2·4 − 1)² rows per head; the shifted blocks add the mask the graph computes (0 or −100) as
// a constant; the second stage pads 6x6 to 8x8 and slices the padding off again.
TEST(OnnxFixtureStructure, SwinWindowsAreAPerSampleAxisWithItsBiasAndMask) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_swin/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const std::vector<const Node*> biases = nodes_of(*g, OpKind::rel_pos_bias);
  ASSERT_EQ(biases.size(), 4u);
  EXPECT_EQ(biases[0]->name, "features.1.0.attn.relative_position_bias");
  EXPECT_EQ(biases[0]->attrs.window.h, 4);
  EXPECT_EQ(biases[0]->attrs.window.w, 4);
  EXPECT_EQ(biases[0]->output_shape, (Shape{9, 2, 16, 16}));
  ASSERT_EQ(biases[0]->initial_values.size(), 1u);
  EXPECT_EQ(biases[0]->initial_values[0].shape, (Shape{49, 2}));
  EXPECT_EQ(biases[3]->output_shape, (Shape{4, 4, 16, 16}));  // 8x8 padded tokens: 4 windows, 4 heads
  EXPECT_EQ(nodes_of(*g, OpKind::select).size(), 12u);        // q, k and v of 4 blocks
  const std::vector<const Node*> products = nodes_of(*g, OpKind::matmul);
  ASSERT_EQ(products.size(), 8u);
  EXPECT_EQ(products[0]->output_shape, (Shape{9, 2, 16, 16}));  // Q·Kᵀ per window and head
  EXPECT_EQ(products[1]->output_shape, (Shape{9, 2, 16, 8}));   // A·V
  // The shifted blocks' masks: constant operands [windows, 1, 16, 16] of 0 and −100.
  int masks = 0;
  for (const Node* add : nodes_of(*g, OpKind::add)) {
    if (add->attrs.operand.size() != 4) continue;
    ++masks;
    EXPECT_FALSE(add->attrs.operand_trainable);
    ASSERT_EQ(add->initial_values.size(), 1u);
    for (float v : *add->initial_values[0].data) EXPECT_TRUE(v == 0.0f || v == -100.0f) << v;
  }
  EXPECT_EQ(masks, 2);
  EXPECT_EQ(nodes_of(*g, OpKind::pad).size(), 2u);  // the second stage's two blocks
}

// nn.ConvTranspose3d as PyTorch 1.13 exports it at opset 14: ConvTranspose on [N, C, D, H, W]
// with its strides, pads, output_padding, dilations and group, weight [C_in, C_out/g, kd, kh, kw].
TEST(OnnxFixtureStructure, VideoDecoderTransposedConvolutionsAreConvTranspose3d) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_video_decoder/model.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<std::string> ops;
  for (const Node& n : g->nodes) ops.emplace_back(op_name(n.op));
  EXPECT_EQ(ops, (std::vector<std::string>{"conv3d", "batchnorm3d", "relu", "conv_transpose3d", "relu", "conv_transpose3d", "relu",
                                           "conv_transpose3d", "conv3d"}));
  const std::vector<const Node*> up = nodes_of(*g, OpKind::conv_transpose3d);
  ASSERT_EQ(up.size(), 3u);
  EXPECT_EQ(up[0]->attrs.depth.stride, 2);
  EXPECT_EQ(up[0]->attrs.depth.output_padding, 0);
  EXPECT_EQ(up[0]->attrs.output_padding.h, 1);
  EXPECT_EQ(up[0]->output_shape, (Shape{4, 5, 8, 6}));
  EXPECT_EQ(up[1]->attrs.groups, 2);
  EXPECT_EQ(up[1]->attrs.dilation.h, 2);
  EXPECT_EQ(up[1]->output_shape, (Shape{6, 6, 8, 6}));
  EXPECT_EQ(up[2]->attrs.groups, 6);
  EXPECT_FALSE(up[2]->attrs.bias);
  EXPECT_EQ(up[2]->output_shape, (Shape{6, 6, 16, 12}));
  ASSERT_FALSE(up[1]->initial_values.empty());
  EXPECT_EQ(up[1]->initial_values[0].shape, (Shape{4, 3, 2, 3, 3}));
}

TEST(OnnxFixtureStructure, AttentionGeluAndEmbeddingsAreRecognisedAndNamedAfterTheModules) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto vit = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_vit/model.onnx");
  ASSERT_TRUE(vit.ok()) << vit.error().message;
  auto op_of = [](const Graph& g, const std::string& name) {
    const int i = g.find(name);
    return i >= 0 ? std::string(op_name(g.nodes[static_cast<std::size_t>(i)].op)) : std::string("missing");
  };
  EXPECT_EQ(op_of(*vit, "blocks.0.attn"), "attention");
  EXPECT_EQ(op_of(*vit, "blocks.1.mlp.1"), "gelu");
  EXPECT_EQ(op_of(*vit, "blocks.0.ln_1"), "layernorm");
  EXPECT_EQ(op_of(*vit, "class_token"), "cls_token");
  EXPECT_EQ(op_of(*vit, "pos_embedding"), "pos_embedding");
  EXPECT_EQ(op_of(*vit, "head"), "linear");
  const Node& attn = vit->nodes[static_cast<std::size_t>(vit->find("blocks.0.attn"))];
  EXPECT_EQ(attn.attrs.heads, 2);
  EXPECT_FALSE(attn.attrs.causal);

  auto gpt = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_gpt/model.onnx");
  ASSERT_TRUE(gpt.ok()) << gpt.error().message;
  EXPECT_EQ(gpt->input.dtype, DType::i32);
  EXPECT_EQ(op_of(*gpt, "wte"), "embedding");
  const Node& causal = gpt->nodes[static_cast<std::size_t>(gpt->find("h.1.attn"))];
  EXPECT_TRUE(causal.attrs.causal);
  EXPECT_EQ(gpt->nodes[static_cast<std::size_t>(gpt->find("h.0.mlp.1"))].attrs.approximate, GeluApproximation::tanh);
  // lm_head shares wte's weight: the exporter writes it again, transposed; it is tied, counted once.
  const Node& head = gpt->nodes[static_cast<std::size_t>(gpt->find("lm_head"))];
  ASSERT_GE(head.attrs.tied_to, 0);
  EXPECT_EQ(gpt->nodes[static_cast<std::size_t>(head.attrs.tied_to)].name, "wte");
  EXPECT_TRUE(head.initial_values.empty());

  // Exported at opset 14, LayerNorm is ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add: one layernorm.
  auto vit14 = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_vit_opset14/model.onnx");
  ASSERT_TRUE(vit14.ok()) << vit14.error().message;
  EXPECT_EQ(op_of(*vit14, "blocks.0.ln_1"), "layernorm");
  EXPECT_EQ(op_of(*vit14, "ln"), "layernorm");
  EXPECT_NEAR(vit14->nodes[static_cast<std::size_t>(vit14->find("ln"))].attrs.eps, 1e-5, 1e-9);
  EXPECT_EQ(vit14->nodes.size(), vit->nodes.size());

  // GPT-2 as Hugging Face writes it: c_attn split three ways, a torch.where causal mask from a
  // sliced boolean buffer, wpe looked up by arange(T), gelu_new written out.
  auto hf = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/hf_gpt/model.onnx");
  ASSERT_TRUE(hf.ok()) << hf.error().message;
  EXPECT_EQ(op_of(*hf, "h.0.attn"), "attention");
  EXPECT_TRUE(hf->nodes[static_cast<std::size_t>(hf->find("h.1.attn"))].attrs.causal);
  EXPECT_EQ(op_of(*hf, "wpe"), "pos_embedding");
  EXPECT_EQ(op_of(*hf, "h.0.gelu"), "gelu");

  auto decoder = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_decoder/model.onnx");
  ASSERT_TRUE(decoder.ok()) << decoder.error().message;
  EXPECT_EQ(op_of(*decoder, "act"), "hardswish");
  EXPECT_EQ(op_of(*decoder, "gate"), "hardsigmoid");
  EXPECT_EQ(op_of(*decoder, "mul"), "mul");
  EXPECT_EQ(op_of(*decoder, "sub"), "sub");
  EXPECT_EQ(op_of(*decoder, "div"), "div");
  EXPECT_EQ(op_of(*decoder, "up"), "conv_transpose2d");
  EXPECT_EQ(op_of(*decoder, "reducemean"), "adaptive_avgpool2d");  // u.mean([2, 3], keepdim=True)
  // (x - 0.5) * 2: constants (buffers); h * self.gamma: a learned parameter, named after it.
  const Node& halve = decoder->nodes[static_cast<std::size_t>(decoder->find("mul"))];
  EXPECT_FALSE(halve.attrs.operand_trainable);
  EXPECT_EQ(halve.attrs.operand, (Shape{1, 1, 1}));
  const Node& gamma = decoder->nodes[static_cast<std::size_t>(decoder->find("gamma"))];
  EXPECT_EQ(gamma.op, OpKind::mul);
  EXPECT_TRUE(gamma.attrs.operand_trainable);
  EXPECT_EQ(gamma.attrs.operand, (Shape{8, 1, 1}));
  const Node& up2 = decoder->nodes[static_cast<std::size_t>(decoder->find("up2"))];
  EXPECT_EQ(up2.attrs.groups, 2);
  EXPECT_EQ(up2.attrs.dilation.h, 2);
  EXPECT_EQ(decoder->nodes[static_cast<std::size_t>(decoder->find("up"))].attrs.output_padding.w, 1);
}

TEST(OnnxFixtureStructure, AWeightThatDoesNotFitItsLayerIsRefusedBeforeAnythingRuns) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto graph = load_model(std::string(HWPROF_ONNX_FIXTURES) + "/tiny_vit/model.onnx");
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  Node& head = graph->nodes[static_cast<std::size_t>(graph->find("head"))];
  ASSERT_FALSE(head.initial_values.empty());
  head.initial_values[0].shape = {10, 15};  // the layer's weight is [10, 16]
  auto executor = Executor::build(*graph, ExecutorOptions{});
  ASSERT_FALSE(executor.ok());
  EXPECT_NE(executor.error().message.find("layer 'head'"), std::string::npos) << executor.error().message;
  EXPECT_NE(executor.error().message.find("has shape [10, 15]; the layer's is [10, 16]"), std::string::npos) << executor.error().message;
  head.initial_values[0].shape = {10, 16};
  head.initial_values[0].name = "gamma";
  auto unknown = Executor::build(*graph, ExecutorOptions{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("no parameter or buffer of that name"), std::string::npos) << unknown.error().message;
}

// partial: InstanceNorm2d and LogSoftmax have no hwprof layer. Loaded as bench/run load it,
// the import lists both; loaded for counting, they are kept as layers that are not counted, the
// rest is counted exactly, the totals say they are incomplete, and nothing can run it.
TEST(OnnxPartialModel, CountsAroundWhatItCannotMapAndSaysTheTotalsAreIncomplete) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const std::string dir = std::string(HWPROF_ONNX_FIXTURES) + "/partial";
  const auto expected = nlohmann::json::parse(test::read_file(dir + "/expected.json"));
  auto strict = load_model(dir + "/model.onnx");
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message.find("2 nodes cannot be mapped"), std::string::npos) << strict.error().message;
  EXPECT_NE(strict.error().message.find("InstanceNormalization '/norm/InstanceNormalization' (opset 17)"), std::string::npos);
  EXPECT_NE(strict.error().message.find("LogSoftmax '/LogSoftmax' (opset 17)"), std::string::npos);

  auto graph = load_model(dir + "/model.onnx", LoadOptions{.keep_unsupported = true});
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  EXPECT_EQ(graph->unsupported_layers(), 2);
  const Node& norm = graph->nodes[static_cast<std::size_t>(graph->find("norm"))];
  EXPECT_EQ(norm.op, OpKind::unsupported);
  EXPECT_EQ(norm.attrs.source_op, "InstanceNormalization (opset 17)");
  EXPECT_EQ(norm.output_shape, (Shape{4, 6, 6}));
  EXPECT_EQ(graph->nodes.back().op, OpKind::unsupported);  // LogSoftmax ends the model
  EXPECT_EQ(graph->nodes.back().output_shape, (Shape{10}));

  auto cost = analyze(*graph, {2, OptimizerKind::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_FALSE(cost->totals.complete());
  EXPECT_EQ(cost->totals.not_counted_layers, 2);
  EXPECT_EQ(cost->totals.params, expected.at("counted_params").get<std::int64_t>());
  EXPECT_EQ(cost->totals.macs, expected.at("macs").get<std::int64_t>());  // neither unmapped op has MACs
  std::vector<std::string> not_counted;
  for (const LayerCost& l : cost->layers) {
    if (!l.counted) not_counted.push_back(l.source_op);
  }
  std::sort(not_counted.begin(), not_counted.end());
  EXPECT_EQ(nlohmann::json(not_counted), expected.at("not_counted"));

  // A partial sum is not the model's: the single-figure API refuses it.
  auto params = count_parameters(*graph);
  ASSERT_FALSE(params.ok());
  EXPECT_NE(params.error().message.find("2 layer(s) cannot be counted, the first 'norm'"), std::string::npos) << params.error().message;
  EXPECT_FALSE(count_macs(*graph).ok());
  EXPECT_FALSE(estimate_memory(*graph, 1).ok());
  // Its shapes are the file's: another input shape cannot be inferred through it.
  auto reshaped = with_input_shape(*graph, {1, 10, 10});
  ASSERT_FALSE(reshaped.ok());
  EXPECT_NE(reshaped.error().message.find("layer 'norm' is InstanceNormalization (opset 17), which hwprof cannot map"), std::string::npos)
      << reshaped.error().message;
  auto executor = Executor::build(*graph, ExecutorOptions{});
  ASSERT_FALSE(executor.ok());
  EXPECT_NE(executor.error().message.find("2 layers cannot run"), std::string::npos) << executor.error().message;
}

// A spec cannot name the op that only an import makes.
TEST(OnnxPartialModel, ASpecCannotUseTheUnsupportedOp) {
  auto graph = parse_model(R"({"name": "m", "input": {"shape": [4]}, "layers": [{"name": "x", "op": "unsupported"}]})", "m.json");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.error().message.find("unknown op 'unsupported'"), std::string::npos) << graph.error().message;
  for (std::string_view name : op_names()) EXPECT_NE(name, "unsupported");
}

}  // namespace
}  // namespace hwprof
