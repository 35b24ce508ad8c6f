// The memory model (src/cost/model_cost.cpp): model state per optimizer, the inference peak of
// live tensors (views aliasing their input, tensors alive until their last reader) and the
// training activations kept for backward. Every expected value is traced by hand in a comment.
#include <cstdint>
#include <string_view>

#include <gtest/gtest.h>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

MemoryEstimate memory_of(std::string_view spec, std::int64_t batch = 1, OptimizerKind optimizer = OptimizerKind::adam) {
  auto graph = parse_model(spec, "memory_test.json");
  if (!graph) {
    ADD_FAILURE() << graph.error().message;
    return {};
  }
  auto memory = estimate_memory(*graph, batch, optimizer);
  if (!memory) {
    ADD_FAILURE() << memory.error().message;
    return {};
  }
  return *memory;
}

// ---- model state --------------------------------------------------------------------------

// (999 + 1) x 125,000 = 125,000,000 parameters: a 999 -> 125,000 linear with bias.
constexpr std::string_view k125MParams = R"({"input": {"shape": [999]},
  "layers": [{"name": "fc", "op": "linear", "out_features": 125000}]})";

TEST(MemoryModelState, AdamOn125MillionParametersIsTwoGigabytes) {
  auto graph = parse_model(k125MParams, "big.json");
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_EQ(count_parameters(*graph).value(), 125'000'000);  // 999*125000 + 125000

  const MemoryEstimate m = memory_of(k125MParams, 1, OptimizerKind::adam);
  EXPECT_EQ(m.param_bytes, 500'000'000);  // 4 bytes each
  EXPECT_EQ(m.buffer_bytes, 0);
  EXPECT_EQ(m.gradient_bytes, 500'000'000);       // one fp32 gradient per parameter
  EXPECT_EQ(m.optimizer_bytes, 1'000'000'000);    // Adam: two moments
  EXPECT_EQ(m.model_state_bytes, 2'000'000'000);  // 16 bytes per parameter
  // Inference: input 999 floats + output 125,000 floats live while fc runs.
  EXPECT_EQ(m.inference_activation_bytes, 503'996);  // 3,996 + 500,000
  EXPECT_EQ(m.inference_peak_layer, "fc");
  EXPECT_EQ(m.inference_total_bytes, 500'503'996);  // params + peak (no buffers)
  // Training: fc keeps its input for the weight gradient.
  EXPECT_EQ(m.training_activation_bytes, 3'996);
  EXPECT_EQ(m.training_total_bytes, 2'000'003'996);
}

TEST(MemoryModelState, SgdAndMomentum) {
  const MemoryEstimate sgd = memory_of(k125MParams, 1, OptimizerKind::sgd);
  EXPECT_EQ(sgd.optimizer_bytes, 0);
  EXPECT_EQ(sgd.model_state_bytes, 1'000'000'000);  // params + gradients: 8 bytes per parameter
  EXPECT_EQ(sgd.optimizer, OptimizerKind::sgd);
  const MemoryEstimate momentum = memory_of(k125MParams, 1, OptimizerKind::momentum);
  EXPECT_EQ(momentum.optimizer_bytes, 500'000'000);      // one velocity per parameter
  EXPECT_EQ(momentum.model_state_bytes, 1'500'000'000);  // 12 bytes per parameter
}

TEST(MemoryModelState, StateDoesNotScaleWithBatchButActivationsDo) {
  const MemoryEstimate m = memory_of(k125MParams, 8);
  EXPECT_EQ(m.batch, 8);
  EXPECT_EQ(m.model_state_bytes, 2'000'000'000);
  EXPECT_EQ(m.inference_activation_bytes, 4'031'968);  // 8 x 503,996
  EXPECT_EQ(m.training_activation_bytes, 31'968);      // 8 x 3,996
}

TEST(MemoryModelState, BatchNormRunningStatisticsAreBuffers) {
  constexpr std::string_view spec = R"({"input": {"shape": [3, 4, 4]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1, "bias": false},
      {"name": "bn", "op": "batchnorm2d"},
      {"name": "relu", "op": "relu"}]})";
  const MemoryEstimate adam = memory_of(spec);
  EXPECT_EQ(adam.param_bytes, 928);         // conv 8*3*3*3 = 216 + bn gamma, beta 16 = 232 floats
  EXPECT_EQ(adam.buffer_bytes, 64);         // running mean and variance: 16 floats
  EXPECT_EQ(adam.gradient_bytes, 928);      // buffers get no gradient
  EXPECT_EQ(adam.optimizer_bytes, 1856);    // 2 x 928; buffers get no moments
  EXPECT_EQ(adam.model_state_bytes, 3776);  // 928 + 64 + 928 + 1856
  const MemoryEstimate sgd = memory_of(spec, 4, OptimizerKind::sgd);
  EXPECT_EQ(sgd.model_state_bytes, 1920);  // 928 + 64 + 928, whatever the batch
}

TEST(MemoryModelState, RejectsANonPositiveBatch) {
  auto graph = parse_model(k125MParams, "big.json");
  ASSERT_TRUE(graph.ok());
  EXPECT_FALSE(estimate_memory(*graph, 0).ok());
  EXPECT_FALSE(analyze(*graph, {-1, OptimizerKind::adam}).ok());
}

// ---- inference peak -----------------------------------------------------------------------

TEST(MemoryInference, PeakOfAChain) {
  // input [1,8,8] 256 B; conv -> [4,8,8] 1024 B; relu 1024 B; pool -> [4,4,4] 256 B;
  // flatten (view, nothing new); fc -> [10] 40 B. Live while each layer runs:
  //   conv    input 256 + conv 1024             = 1280
  //   relu    conv 1024 + relu 1024             = 2048   <- peak (input freed after conv)
  //   pool    relu 1024 + pool 256              = 1280
  //   flatten pool 256 (the view shares it)     =  256
  //   fc      pool 256 + fc 40                  =  296
  constexpr std::string_view spec = R"({"input": {"shape": [1, 8, 8]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 3, "padding": 1},
      {"name": "relu", "op": "relu"},
      {"name": "pool", "op": "maxpool2d", "kernel": 2},
      {"name": "flat", "op": "flatten"},
      {"name": "fc", "op": "linear", "out_features": 10}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.inference_activation_bytes, 2048);
  EXPECT_EQ(m.inference_peak_layer, "relu");
  // params: conv 4*9 + 4 = 40, fc 64*10 + 10 = 650: 690 floats = 2760 B
  EXPECT_EQ(m.param_bytes, 2760);
  EXPECT_EQ(m.inference_total_bytes, 4808);  // 2760 + 2048

  const MemoryEstimate m4 = memory_of(spec, 4);
  EXPECT_EQ(m4.inference_activation_bytes, 8192);  // every live tensor scales: 4 x 2048
  EXPECT_EQ(m4.inference_peak_layer, "relu");
  EXPECT_EQ(m4.inference_total_bytes, 10952);  // 2760 + 8192
}

TEST(MemoryInference, ASkipKeepsItsSourceAliveUntilTheLastReader) {
  // input [4] 16 B; up -> [64] 256 B; a -> [4] 16 B; b 16 B; c -> [64] 256 B; add 256 B.
  //   up   input 16 + up 256                  = 272
  //   a    up 256 + a 16                      = 272
  //   b    up 256 + a 16 + b 16               = 288   (up stays: add reads it)
  //   c    up 256 + b 16 + c 256              = 528
  //   add  up 256 + c 256 + add 256           = 768   <- peak
  constexpr std::string_view skip = R"({"input": {"shape": [4]}, "layers": [
      {"name": "up", "op": "linear", "out_features": 64},
      {"name": "a", "op": "linear", "out_features": 4},
      {"name": "b", "op": "relu"},
      {"name": "c", "op": "linear", "out_features": 64},
      {"name": "add", "op": "add", "inputs": ["c", "up"]}]})";
  const MemoryEstimate m = memory_of(skip);
  EXPECT_EQ(m.inference_activation_bytes, 768);
  EXPECT_EQ(m.inference_peak_layer, "add");

  // Without the skip up dies after a: up 272, a 272, b 32, c 272, add c 256 + add 256 = 512.
  constexpr std::string_view no_skip = R"({"input": {"shape": [4]}, "layers": [
      {"name": "up", "op": "linear", "out_features": 64},
      {"name": "a", "op": "linear", "out_features": 4},
      {"name": "b", "op": "relu"},
      {"name": "c", "op": "linear", "out_features": 64},
      {"name": "add", "op": "add", "inputs": ["c", "c"]}]})";
  const MemoryEstimate n = memory_of(no_skip);
  EXPECT_EQ(n.inference_activation_bytes, 512);
  EXPECT_EQ(n.inference_peak_layer, "add");
}

TEST(MemoryInference, ViewsShareTheirInputsStorage) {
  // input [1,4,4] 64 B; conv -> [8,4,4] 512 B; flatten, dropout, reshape: views of it;
  // fc -> [8,1] 32 B.
  //   conv     input 64 + conv 512            = 576   <- peak
  //   flatten  conv 512 (no new storage)      = 512
  //   dropout  512, reshape 512
  //   fc       conv storage 512 + fc 32       = 544   (alive through its views until fc)
  // Copies instead of views would give 1024 at flatten.
  constexpr std::string_view spec = R"({"input": {"shape": [1, 4, 4]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 8, "kernel": 1},
      {"name": "flat", "op": "flatten"},
      {"name": "drop", "op": "dropout"},
      {"name": "reshape", "op": "reshape", "shape": [8, 16]},
      {"name": "fc", "op": "linear", "out_features": 1}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.inference_activation_bytes, 576);
  EXPECT_EQ(m.inference_peak_layer, "conv");

  // A view of the model input keeps the input alive: flatten 64, fc 64 + 16 = 80.
  constexpr std::string_view of_input = R"({"input": {"shape": [2, 8]}, "layers": [
      {"name": "flat", "op": "flatten"},
      {"name": "fc", "op": "linear", "out_features": 4}]})";
  const MemoryEstimate v = memory_of(of_input);
  EXPECT_EQ(v.inference_activation_bytes, 80);
  EXPECT_EQ(v.inference_peak_layer, "fc");
}

TEST(MemoryInference, TransposeIsACopy) {
  // input [2,8] 64 B; transpose -> [8,2] 64 B (a new tensor, unlike flatten); fc -> [8,4] 128 B.
  //   t   64 + 64 = 128;   fc  64 + 128 = 192 <- peak
  constexpr std::string_view spec = R"({"input": {"shape": [2, 8]}, "layers": [
      {"name": "t", "op": "transpose", "perm": [1, 0]},
      {"name": "fc", "op": "linear", "out_features": 4}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.inference_activation_bytes, 192);
  EXPECT_EQ(m.inference_peak_layer, "fc");
}

// ---- training: kept for backward ----------------------------------------------------------

TEST(MemoryTraining, UnionOfKeptTensors) {
  // input [16] 64 B (kept by fc1), relu out [32] 128 B (kept by relu, and by fc2 as its
  // input: counted once); fc1's output is not kept (relu keeps its output, not its input).
  constexpr std::string_view spec = R"({"input": {"shape": [16]}, "layers": [
      {"name": "fc1", "op": "linear", "out_features": 32},
      {"name": "relu", "op": "relu"},
      {"name": "fc2", "op": "linear", "out_features": 8}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.training_activation_bytes, 192);  // 64 + 128
  const MemoryEstimate m4 = memory_of(spec, 4);
  EXPECT_EQ(m4.training_activation_bytes, 768);  // 4 x 192
  // params: fc1 16*32 + 32 = 544, fc2 32*8 + 8 = 264: 808 floats = 3232 B; Adam state 4 x 3232
  EXPECT_EQ(m4.model_state_bytes, 12928);
  EXPECT_EQ(m4.training_total_bytes, 13696);  // 12928 + 768
}

TEST(MemoryTraining, ATensorReadByTwoLayersIsKeptOnce) {
  constexpr std::string_view spec = R"({"input": {"shape": [16]}, "layers": [
      {"name": "fc_a", "op": "linear", "out_features": 4, "inputs": ["$input"]},
      {"name": "fc_b", "op": "linear", "out_features": 4, "inputs": ["$input"]},
      {"name": "sum", "op": "add", "inputs": ["fc_a", "fc_b"]}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 64);  // the [16] input once; add keeps nothing
}

TEST(MemoryTraining, AViewKeepsItsStorageOnce) {
  // conv keeps the input [1,4,4] 64 B; relu keeps its output [2,4,4] 128 B; fc keeps flatten's
  // output, a view of relu's: no new bytes.
  constexpr std::string_view spec = R"({"input": {"shape": [1, 4, 4]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
      {"name": "relu", "op": "relu"},
      {"name": "flat", "op": "flatten"},
      {"name": "fc", "op": "linear", "out_features": 3}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 192);  // 64 + 128
}

TEST(MemoryTraining, WhatEachActivationKeeps) {
  // [4] everywhere, 16 B per tensor. fc keeps the input; gelu keeps its input (fc's output);
  // sigmoid, tanh and softmax keep their outputs; silu keeps its input (softmax's output,
  // already kept); relu6 keeps its input (silu's output).
  // Kept: input, fc, sigmoid, tanh, softmax, silu = 6 x 16 (gelu's output is not kept).
  constexpr std::string_view spec = R"({"input": {"shape": [4]}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 4},
      {"name": "gelu", "op": "gelu"},
      {"name": "sigmoid", "op": "sigmoid"},
      {"name": "tanh", "op": "tanh"},
      {"name": "softmax", "op": "softmax"},
      {"name": "silu", "op": "silu"},
      {"name": "relu6", "op": "relu6"}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 96);
}

TEST(MemoryTraining, NothingIsKeptWhereNoBackwardRuns) {
  // relu on the model input needs no backward: it keeps nothing; fc keeps its input, relu's
  // output [16] 64 B.
  constexpr std::string_view spec = R"({"input": {"shape": [16]}, "layers": [
      {"name": "relu", "op": "relu"},
      {"name": "fc", "op": "linear", "out_features": 8}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 64);

  // No trainable layer at all: no relu output, maxpool indices nor dropout mask.
  constexpr std::string_view frozen = R"({"input": {"shape": [1, 4, 4]}, "layers": [
      {"name": "relu", "op": "relu"},
      {"name": "pool", "op": "maxpool2d", "kernel": 2},
      {"name": "drop", "op": "dropout"}]})";
  const MemoryEstimate m = memory_of(frozen);
  EXPECT_EQ(m.training_activation_bytes, 0);
  EXPECT_EQ(m.model_state_bytes, 0);
  EXPECT_EQ(m.training_total_bytes, 0);
}

TEST(MemoryTraining, MaxPoolKeepsInt32Indices) {
  // conv keeps the input 64 B; relu keeps its output [2,4,4] 128 B; pool keeps one int32
  // index per output [2,2,2]: 32 B.
  constexpr std::string_view spec = R"({"input": {"shape": [1, 4, 4]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 2, "kernel": 1},
      {"name": "relu", "op": "relu"},
      {"name": "pool", "op": "maxpool2d", "kernel": 2}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 224);     // 64 + 128 + 32
  EXPECT_EQ(memory_of(spec, 4).training_activation_bytes, 896);  // 4 x 224
}

TEST(MemoryTraining, DropoutKeepsAByteMaskAndIsNoViewInTraining) {
  // fc keeps the input [8] 32 B; relu keeps its output [16] 64 B; dropout keeps a 1-byte mask
  // per element: 16 B; in training its output is a new tensor [16] 64 B (not a view of relu's),
  // which fc2 keeps.
  constexpr std::string_view spec = R"({"input": {"shape": [8]}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 16},
      {"name": "relu", "op": "relu"},
      {"name": "drop", "op": "dropout", "p": 0.1},
      {"name": "fc2", "op": "linear", "out_features": 4}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 176);  // 32 + 64 + 16 + 64
  // In evaluation it is a view: relu 64 + fc2 16 while fc2 runs; the peak is at relu,
  // fc 64 + relu 64 = 128.
  EXPECT_EQ(memory_of(spec).inference_activation_bytes, 128);
}

TEST(MemoryTraining, LayerNormKeepsTwoFloatsPerRow) {
  // fc keeps the input [3,8] 96 B; ln keeps its input (fc's output) 96 B and mean, rstd for
  // 3 rows: 24 B.
  constexpr std::string_view spec = R"({"input": {"shape": [3, 8]}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 8},
      {"name": "ln", "op": "layernorm"}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 216);  // 96 + 96 + 24
}

TEST(MemoryTraining, BatchNormKeepsPerChannelStatisticsOncePerBatch) {
  // conv keeps the input [2,4,4] 128 B; bn keeps conv's output [3,4,4] 192 B and, once per
  // batch, mean and invstd of 3 channels: 24 B; relu keeps its output 192 B.
  constexpr std::string_view spec = R"({"input": {"shape": [2, 4, 4]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 3, "kernel": 1, "bias": false},
      {"name": "bn", "op": "batchnorm2d"},
      {"name": "relu", "op": "relu"}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 536);      // 512 + 24
  EXPECT_EQ(memory_of(spec, 4).training_activation_bytes, 2072);  // 4 x 512 + 24
}

TEST(MemoryTraining, AttentionKeepsQkvContextAndProbabilities) {
  // T = 4, D = 8, H = 2: the input [4,8] 128 B; Q, K, V and the context 4 x 32 floats = 512 B;
  // the probabilities H x T x T = 32 floats = 128 B.
  constexpr std::string_view spec = R"({"input": {"shape": [4, 8]}, "layers": [
      {"name": "attn", "op": "attention", "heads": 2, "causal": true}]})";
  EXPECT_EQ(memory_of(spec).training_activation_bytes, 768);      // 128 + 512 + 128
  EXPECT_EQ(memory_of(spec, 4).training_activation_bytes, 3072);  // 4 x 768
}

TEST(MemoryTraining, EmbeddingKeepsItsIds) {
  // emb keeps the int32 ids [5]: 20 B; the head keeps its input [5,6] 120 B.
  constexpr std::string_view spec = R"({"input": {"shape": [5], "dtype": "int32"}, "layers": [
      {"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 6},
      {"name": "head", "op": "linear", "out_features": 10, "tied_to": "emb"}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.training_activation_bytes, 140);  // 20 + 120
  EXPECT_EQ(m.param_bytes, 280);                // 60 table + 10 bias, the tied weight once
  EXPECT_EQ(m.gradient_bytes, 280);
}

}  // namespace
}  // namespace hwprof

namespace hwprof {
namespace {

TEST(MemoryInference, AttentionHoldsItsIntermediatesWhileItRuns) {
  // T = 4, D = 8, H = 2. During attn: input [4,8] 128 B + output 128 B + Q, K, V and the
  // context 4 x 32 floats 512 B + scores H x T x T 32 floats 128 B = 896 B. During the relu
  // after it only attn's output and the relu's output are alive: 256 B.
  constexpr std::string_view spec = R"({"input": {"shape": [4, 8]}, "layers": [
      {"name": "attn", "op": "attention", "heads": 2},
      {"name": "act", "op": "relu"}]})";
  const MemoryEstimate m = memory_of(spec);
  EXPECT_EQ(m.inference_activation_bytes, 896);
  EXPECT_EQ(m.inference_peak_layer, "attn");
  EXPECT_EQ(memory_of(spec, 3).inference_activation_bytes, 3 * 896);
}

}  // namespace
}  // namespace hwprof
