// The ONNX fixtures (tests/fixtures/onnx/, written by scripts/make_onnx_fixtures.py with
// Debian's PyTorch): each model's params and MACs equal PyTorch's sum(p.numel()) and an exact
// hook count, and hwprof's engine, running the file's own weights, gives PyTorch's output for
// the same input within 1e-4 of its largest magnitude. Attention (nn.MultiheadAttention,
// causal in tiny_gpt), LayerNorm, both GELU forms, the class token and position embeddings
// are all recognised here without PyTorch installed.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/npy.hpp"
#include "hwprof/cost.hpp"
#include "hwprof/executor.hpp"
#include "hwprof/graph.hpp"
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
  auto cost = analyze(*graph, {1, Optimizer::adam});
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  EXPECT_EQ(cost->totals.params, expected.at("params").get<std::int64_t>());
  EXPECT_EQ(cost->totals.macs, expected.at("macs").get<std::int64_t>());

  auto x = detail::parse_npy(test::read_file(dir + "/x.npy"), dir + "/x.npy");
  auto y = detail::parse_npy(test::read_file(dir + "/y.npy"), dir + "/y.npy");
  ASSERT_TRUE(x.ok() && y.ok());
  auto converted = detail::npy_to_tensor(*x, "x.npy");
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

INSTANTIATE_TEST_SUITE_P(Exported, OnnxFixture, ::testing::Values("lenet5", "tiny_vit", "tiny_gpt"),
                         [](const auto& param_info) { return std::string(param_info.param); });

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

}  // namespace
}  // namespace hwprof
