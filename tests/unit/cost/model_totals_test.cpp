// Exact totals of the shipped models against published figures (models/README.md cites them).
#include <string>

#include <gtest/gtest.h>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

Graph load(const std::string& name) {
  auto graph = load_model(std::string(HWPROF_MODELS_DIR) + "/" + name + ".json");
  EXPECT_TRUE(graph.ok()) << (graph.ok() ? "" : graph.error().message);
  return graph.ok() ? *graph : Graph{};
}

struct Published {
  const char* model;
  std::int64_t params;
  std::int64_t macs;  // -1: no published figure to hold it to
  std::size_t layers;
};

class ModelTotals : public ::testing::TestWithParam<Published> {};

TEST_P(ModelTotals, MatchPublishedCounts) {
  const Published& p = GetParam();
  const Graph graph = load(p.model);
  auto cost = analyze(graph);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->totals.params, p.params);
  EXPECT_EQ(cost->totals.trainable_params, p.params);
  if (p.macs >= 0) {
    EXPECT_EQ(cost->totals.macs, p.macs);
  }
  EXPECT_EQ(cost->layers.size(), p.layers);
  EXPECT_EQ(count_parameters(graph).value(), p.params);
  EXPECT_EQ(count_flops(graph).value(), cost->totals.flops);
  // FLOPs are at least 2·MACs, and backward work exists for every trainable model.
  EXPECT_GE(cost->totals.flops, 2 * cost->totals.macs);
  EXPECT_GT(cost->totals.backward_flops, 0);
}

// torchvision's model docs (ResNet18_Weights: 11,689,512 params, 1.81 GFLOPS = MACs;
// MobileNet_V2_Weights: 3,504,872 params, 0.30 GFLOPS); GPT-2 small 124M (HF gpt2);
// LeNet-5 and the Keras mnist_mlp example for the two small ones.
INSTANTIATE_TEST_SUITE_P(Shipped, ModelTotals,
                         ::testing::Values(Published{"resnet18", 11'689'512, 1'814'073'344, 69},
                                           Published{"mobilenet_v2", 3'504'872, 300'774'272, 153},
                                           Published{"gpt2_small", 124'439'808, 145'824'153'600, 113}, Published{"lenet5", 61'706, 416'520, 12},
                                           Published{"mlp_mnist", 669'706, 668'672, 9}, Published{"tiny_transformer", 21'258, 315'840, 23},
                                           // torchvision: AlexNet 61,100,840 / 0.71 G; VGG-16
                                           // 138,357,544 / 15.47 G; ViT-B/16 86,567,656 / 17.56 G;
                                           // HF bert-base-uncased (with pooler) 109,482,240.
                                           Published{"alexnet", 61'100'840, 714'188'480, 22}, Published{"vgg16", 138'357'544, 15'470'264'320, 40},
                                           Published{"vit_b_16", 86'567'656, 17'563'828'224, 141},
                                           Published{"bert_base", 109'482'240, 11'174'215'680, 131}),
                         [](const auto& param_info) { return std::string(param_info.param.model); });

// The two transformers' MACs, by hand (no published figure counts them our way): per block
// 4·T·D² (Q, K, V, out projections) + 2·T²·D (Q·Kᵀ, A·V) + 2·T·D·F (the MLP, F its width),
// then the head on one token. Embeddings, norms and activations are no MACs.
//   bert_base, T = 128, D = 768, F = 3072, 12 blocks, pooler 768×768:
//     12 · (4·128·768² + 2·128²·768 + 2·128·768·3072) + 768·768
//     = 12 · (301,989,888 + 25,165,824 + 603,979,776) + 589,824 = 11,174,215,680
//   tiny_transformer, T = 16 tokens + the class token = 17, D = 32, F = 64, 2 blocks, head 32×10:
//     2 · (4·17·32² + 2·17²·32 + 2·17·32·64) + 32·10 = 2 · (69,632 + 18,496 + 69,632) + 320 = 315,840
//   Its parameters: embedding 100·32 + class token 32 + positions 17·32 + 2 blocks · (2 norms
//   2·64 + attention 4·(32·32 + 32) + fc1 32·64 + 64 + fc2 64·32 + 32) + norm 64 + head 32·10 + 10
//     = 3,200 + 32 + 544 + 2 · 8,544 + 64 + 330 = 21,258
TEST(ModelTotals, TransformerMacsFollowByHand) {
  const auto bert = [](std::int64_t t) {
    const std::int64_t d = 768;
    return 12 * (4 * t * d * d + 2 * t * t * d + 2 * t * d * 3072) + d * d;
  };
  EXPECT_EQ(bert(128), 11'174'215'680);
  EXPECT_EQ(count_macs(load("bert_base")).value(), bert(128));
  const Graph tiny = load("tiny_transformer");
  EXPECT_EQ(count_macs(tiny).value(), 315'840);
  EXPECT_EQ(count_parameters(tiny).value(), 21'258);
}

TEST(ModelTotals, PerSampleCountsDoNotDependOnBatch) {
  const Graph graph = load("resnet18");
  auto one = analyze(graph, {1, OptimizerKind::adam});
  auto eight = analyze(graph, {8, OptimizerKind::adam});
  ASSERT_TRUE(one.ok() && eight.ok());
  EXPECT_EQ(one->totals.macs, eight->totals.macs);
  EXPECT_EQ(one->totals.flops, eight->totals.flops);
  EXPECT_EQ(one->totals.params, eight->totals.params);
  EXPECT_GT(eight->totals.bytes, one->totals.bytes);
  EXPECT_EQ(eight->memory.inference_activation_bytes, 8 * one->memory.inference_activation_bytes);
}

TEST(ModelTotals, Gpt2MacsFollowTheContextLength) {
  const Graph graph = load("gpt2_small");
  // Per block: 4·T·D² (Q, K, V, out projections) + 2·T²·D (Q·Kᵀ, A·V) + 2·T·D·4D (MLP);
  // plus the tied lm_head T·D·V. D = 768, V = 50257, 12 blocks.
  const auto expected = [](std::int64_t t) {
    const std::int64_t d = 768;
    return 12 * (4 * t * d * d + 2 * t * t * d + 2 * t * d * 4 * d) + t * d * 50257;
  };
  EXPECT_EQ(count_macs(graph).value(), expected(1024));
  EXPECT_EQ(count_macs(graph, {256}).value(), expected(256));
  EXPECT_EQ(count_macs(graph, {1}).value(), expected(1));
  // The spec's positional table covers 1024 positions: longer contexts are refused.
  auto too_long = count_macs(graph, {1025});
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("num_positions"), std::string::npos) << too_long.error().message;
}

TEST(ModelTotals, ResNetAcceptsOtherImageSizes) {
  const Graph graph = load("resnet18");
  auto small = with_input_shape(graph, {3, 160, 160});
  ASSERT_TRUE(small.ok()) << small.error().message;
  EXPECT_EQ(small->nodes.front().output_shape, (Shape{64, 80, 80}));
  EXPECT_EQ(small->nodes.back().output_shape, (Shape{1000}));
  // Params do not depend on the image size; MACs shrink with it.
  EXPECT_EQ(count_parameters(*small).value(), 11'689'512);
  EXPECT_LT(count_macs(*small).value(), 1'814'073'344);
}

TEST(ModelTotals, AdamStateOfGpt2IsFourTimesTheParameters) {
  auto memory = estimate_memory(load("gpt2_small"), 1, OptimizerKind::adam);
  ASSERT_TRUE(memory.ok());
  const std::int64_t params = 124'439'808;
  EXPECT_EQ(memory->param_bytes, 4 * params);
  EXPECT_EQ(memory->gradient_bytes, 4 * params);
  EXPECT_EQ(memory->optimizer_bytes, 8 * params);
  EXPECT_EQ(memory->model_state_bytes, 16 * params);
}

}  // namespace
}  // namespace hwprof
