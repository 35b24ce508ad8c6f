// Shape inference versus PyTorch's rules: conv2d and pooling output sizes (pooling including
// ceil_mode's dropped last window), the data-movement ops and their dtypes, and the token ops.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph/shape_inference.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

Graph parse_spec(std::string_view spec) {
  auto graph = parse_model(spec, "shape_test.json");
  if (!graph) {
    ADD_FAILURE() << graph.error().message;
    return {};
  }
  return std::move(*graph);
}

const Node& node(const Graph& g, std::string_view name) {
  static const Node missing;
  const int index = g.find(name);
  if (index < 0) {
    ADD_FAILURE() << "no node named '" << name << "'";
    return missing;
  }
  return g.nodes[static_cast<std::size_t>(index)];
}

// ---- conv2d -------------------------------------------------------------------------------

// Number of window positions o >= 0 whose dilated window [o*stride, o*stride + dilation*(kernel-1)]
// fits inside the zero-padded input [0, size + 2*padding): counted one by one, the definition
// behind PyTorch's floor((size + 2p - d(k-1) - 1)/s) + 1.
std::int64_t conv_positions(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t padding, std::int64_t dilation) {
  std::int64_t count = 0;
  for (std::int64_t o = 0; o * stride + dilation * (kernel - 1) <= size + 2 * padding - 1; ++o) ++count;
  return count;
}

TEST(ShapeInferenceConv2d, OutputSizesOverAGrid) {
  // W is fixed at size 9, kernel 2, stride 3, padding 1, dilation 2: windows start at 0, 3, 6
  // and end at +2 <= 10 → 3 positions; H sweeps the grid, so h and w must not be mixed up.
  int checked = 0;
  for (std::int64_t size = 1; size <= 12; ++size) {
    for (std::int64_t kernel = 1; kernel <= 4; ++kernel) {
      for (std::int64_t stride = 1; stride <= 3; ++stride) {
        for (std::int64_t padding = 0; padding <= 2; ++padding) {
          for (std::int64_t dilation = 1; dilation <= 3; ++dilation) {
            const std::int64_t expected = conv_positions(size, kernel, stride, padding, dilation);
            const nlohmann::json spec = {{"input", {{"shape", {2, size, 9}}}},
                                         {"layers",
                                          {{{"name", "conv"},
                                            {"op", "conv2d"},
                                            {"out_channels", 5},
                                            {"kernel", {kernel, 2}},
                                            {"stride", {stride, 3}},
                                            {"padding", {padding, 1}},
                                            {"dilation", {dilation, 2}}}}}};
            SCOPED_TRACE(spec.dump());
            auto graph = parse_model(spec.dump(), "grid.json");
            if (expected == 0) {
              EXPECT_FALSE(graph.ok()) << "PyTorch rejects a kernel larger than the padded input";
              continue;
            }
            ASSERT_TRUE(graph.ok()) << graph.error().message;
            EXPECT_EQ(graph->nodes[0].output_shape, (Shape{5, expected, 3}));
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 900);  // most of the 1296 combinations fit
}

TEST(ShapeInferenceConv2d, KnownNetworks) {
  const Graph g = parse_spec(R"({"input": {"shape": [3, 224, 224]}, "layers": [
      {"name": "resnet_stem", "op": "conv2d", "out_channels": 64, "kernel": 7, "stride": 2, "padding": 3},
      {"name": "vit_patches", "op": "conv2d", "out_channels": 768, "kernel": 16, "stride": 16, "inputs": ["$input"]},
      {"name": "alexnet", "op": "conv2d", "out_channels": 64, "kernel": 11, "stride": 4, "padding": 2, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "resnet_stem").output_shape, (Shape{64, 112, 112}));  // floor((224+6-6-1)/2)+1 = 112
  EXPECT_EQ(node(g, "vit_patches").output_shape, (Shape{768, 14, 14}));   // 224/16
  EXPECT_EQ(node(g, "alexnet").output_shape, (Shape{64, 55, 55}));        // floor((224+4-10-1)/4)+1 = 55
}

TEST(ShapeInferenceConv2d, RejectsBadGroupsAndOversizedKernels) {
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [3, 8, 8]},
      "layers": [{"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "groups": 2}]})",
                           "g.json")
                   .ok());  // 2 ∤ 3
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [4, 8, 8]},
      "layers": [{"name": "c", "op": "conv2d", "out_channels": 3, "kernel": 3, "groups": 2}]})",
                           "g.json")
                   .ok());  // 2 ∤ 3
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [1, 4, 4]},
      "layers": [{"name": "c", "op": "conv2d", "out_channels": 1, "kernel": 3, "dilation": 2}]})",
                           "g.json")
                   .ok());  // span 5 > 4
}

// ---- pooling ------------------------------------------------------------------------------

// PyTorch's pooling_output_shape (aten/src/ATen/native/Pool.h, pooling_output_shape_pad_lr):
//   out = div_rtn(size + 2*pad - dilation*(kernel-1) - 1 + (ceil_mode ? stride-1 : 0), stride) + 1
//   if ceil_mode and (out-1)*stride >= size + pad: out -= 1   // last window would start in the
//                                                            // right padding: dropped
// div_rtn rounds towards minus infinity. pool2d_shape_check then requires pad <= kernel/2 and
// out >= 1. hwprof's pools have dilation 1.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// A layer, and a piece of the message its refusal must carry.
struct Refusal {
  const char* layer;
  const char* message;
};

// Each layer alone over the per-sample `input` shape (JSON) is refused with its message.
void expect_refused(const char* input, std::span<const Refusal> cases) {
  for (const Refusal& c : cases) {
    const auto r = parse_model(std::string(R"({"input": {"shape": )") + input + R"(}, "layers": [)" + c.layer + "]}", "t.json");
    ASSERT_FALSE(r.ok()) << c.layer;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

std::int64_t pytorch_pool_out(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool ceil_mode) {
  std::int64_t out = floor_div(size + 2 * pad - (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;
  return out;
}

Shape pool_shape(std::string_view op, std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad, bool ceil_mode,
                 std::string* error = nullptr) {
  const nlohmann::json spec = {
      {"input", {{"shape", {3, size, size}}}},
      {"layers", {{{"name", "pool"}, {"op", op}, {"kernel", kernel}, {"stride", stride}, {"padding", pad}, {"ceil_mode", ceil_mode}}}}};
  auto graph = parse_model(spec.dump(), "pool.json");
  if (!graph) {
    if (error) *error = graph.error().message;
    return {};
  }
  return graph->nodes[0].output_shape;
}

TEST(ShapeInferencePool, HandWorkedCeilModeCases) {
  // size 6, kernel 2, stride 2, pad 1, ceil: div_rtn(6+2-1-1+1, 2)+1 = 3+1 = 4; the 4th window
  // starts at padded 6 = input index 5 < 6 + 1, so it is kept: 4 (floor mode also gives 4).
  EXPECT_EQ(pool_shape("maxpool2d", 6, 2, 2, 1, true), (Shape{3, 4, 4}));
  EXPECT_EQ(pool_shape("maxpool2d", 6, 2, 2, 1, false), (Shape{3, 4, 4}));
  // size 5, kernel 2, stride 2, pad 1, ceil: div_rtn(5+2-1-1+1, 2)+1 = 3+1 = 4, but the 4th
  // window would start at padded 6 >= 5 + 1, entirely in the right padding: dropped → 3.
  EXPECT_EQ(pool_shape("maxpool2d", 5, 2, 2, 1, true), (Shape{3, 3, 3}));
  EXPECT_EQ(pool_shape("avgpool2d", 5, 2, 2, 1, true), (Shape{3, 3, 3}));
  // size 3, kernel 2, stride 2, pad 1, ceil: div_rtn(3, 2)+1 = 2+1 = 3; (3-1)*2 = 4 >= 3+1: → 2.
  EXPECT_EQ(pool_shape("maxpool2d", 3, 2, 2, 1, true), (Shape{3, 2, 2}));
  // size 6, kernel 1, stride 2, no padding, ceil: div_rtn(6-1+1, 2)+1 = 4, but the 4th window
  // starts at 6 >= 6 + 0: dropped → 3 (older PyTorch applied the rule only with padding, pytorch/pytorch#45357).
  EXPECT_EQ(pool_shape("maxpool2d", 6, 1, 2, 0, true), (Shape{3, 3, 3}));
  // size 5, kernel 2, stride 2, no padding: floor 2, ceil 3 (the partial window at 4 is kept).
  EXPECT_EQ(pool_shape("avgpool2d", 5, 2, 2, 0, false), (Shape{3, 2, 2}));
  EXPECT_EQ(pool_shape("avgpool2d", 5, 2, 2, 0, true), (Shape{3, 3, 3}));
  // ResNet's stem pool 112 → 56; GoogLeNet's ceil-mode pool 112 → 56 (floor mode: 55).
  EXPECT_EQ(pool_shape("maxpool2d", 112, 3, 2, 1, false), (Shape{3, 56, 56}));
  EXPECT_EQ(pool_shape("maxpool2d", 112, 3, 2, 0, true), (Shape{3, 56, 56}));
  EXPECT_EQ(pool_shape("maxpool2d", 112, 3, 2, 0, false), (Shape{3, 55, 55}));
}

TEST(ShapeInferencePool, StrideDefaultsToTheKernelAndPairsAreIndependent) {
  const Graph g = parse_spec(R"({"input": {"shape": [2, 9, 10]}, "layers": [
      {"name": "square", "op": "maxpool2d", "kernel": 3},
      {"name": "rect", "op": "avgpool2d", "kernel": [3, 2], "stride": [2, 3], "padding": [1, 0], "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "square").output_shape, (Shape{2, 3, 3}));  // 9/3, floor(10/3)
  // H: floor((9+2-3)/2)+1 = 5; W: floor((10-2)/3)+1 = 3
  EXPECT_EQ(node(g, "rect").output_shape, (Shape{2, 5, 3}));
}

TEST(ShapeInferencePool, OutputSizesOverAGridMatchPyTorch) {
  int checked = 0;
  for (std::string_view op : {"maxpool2d", "avgpool2d"}) {
    for (std::int64_t size = 1; size <= 12; ++size) {
      for (std::int64_t kernel = 1; kernel <= 5; ++kernel) {
        for (std::int64_t stride = 1; stride <= 4; ++stride) {
          for (std::int64_t pad = 0; pad <= kernel / 2; ++pad) {
            for (bool ceil_mode : {false, true}) {
              SCOPED_TRACE(std::string(op) + " size " + std::to_string(size) + " kernel " + std::to_string(kernel) + " stride " +
                           std::to_string(stride) + " pad " + std::to_string(pad) + (ceil_mode ? " ceil" : " floor"));
              const std::int64_t expected = pytorch_pool_out(size, kernel, stride, pad, ceil_mode);
              std::string error;
              const Shape got = pool_shape(op, size, kernel, stride, pad, ceil_mode, &error);
              if (expected < 1) {
                EXPECT_TRUE(got.empty()) << "PyTorch rejects an empty output";  // "Output size is too small"
              } else {
                EXPECT_EQ(got, (Shape{3, expected, expected})) << error;
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST(ShapeInferencePool, RejectsPaddingOverHalfTheKernel) {
  std::string error;
  EXPECT_TRUE(pool_shape("maxpool2d", 8, 3, 2, 2, false, &error).empty());  // PyTorch: pad <= kernel/2
  EXPECT_NE(error.find("padding"), std::string::npos) << error;
  EXPECT_EQ(pool_shape("maxpool2d", 8, 2, 2, 1, false), (Shape{3, 5, 5}));  // 1 <= 2/2 is allowed
  // Each axis on its own: 2 > 3/2 in H only, then in W only.
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [1, 8, 8]},
      "layers": [{"name": "p", "op": "avgpool2d", "kernel": 3, "padding": [2, 0]}]})",
                           "p.json")
                   .ok());
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [1, 8, 8]},
      "layers": [{"name": "p", "op": "avgpool2d", "kernel": 3, "padding": [0, 2]}]})",
                           "p.json")
                   .ok());
}

// PyTorch has no "kernel fits the padded input" check for pooling; with ceil_mode a window
// larger than the input still gives an output: size 1, kernel 2, stride 2, ceil:
// div_rtn(1-1-1+1, 2)+1 = 1, and (1-1)*2 = 0 < 1 keeps it, so nn.MaxPool2d(2, ceil_mode=True)
// maps 1x1 to 1x1; hwprof follows.
TEST(ShapeInferencePool, KernelLargerThanThePaddedInputInCeilMode) {
  std::string error;
  EXPECT_EQ(pool_shape("maxpool2d", 1, 2, 2, 0, true, &error), (Shape{3, 1, 1})) << error;
  EXPECT_EQ(pool_shape("maxpool2d", 2, 3, 2, 0, true, &error), (Shape{3, 1, 1})) << error;  // div_rtn(1, 2)+1 = 1
  // size 1, kernel 5, stride 3: div_rtn(1-4-1+2, 3)+1 = -1+1 = 0, which PyTorch rejects too.
  EXPECT_TRUE(pool_shape("avgpool2d", 1, 5, 3, 0, true).empty());
}

// ---- adaptive pooling ---------------------------------------------------------------------

TEST(ShapeInferencePool, AdaptiveOutputIsTheRequestedSize) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 7, 5]}, "layers": [
      {"name": "gap", "op": "adaptive_avgpool2d"},
      {"name": "down", "op": "adaptive_avgpool2d", "output": [3, 2], "inputs": ["$input"]},
      {"name": "up", "op": "adaptive_avgpool2d", "output": 9, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "gap").output_shape, (Shape{4, 1, 1}));  // default output [1, 1]
  EXPECT_EQ(node(g, "down").output_shape, (Shape{4, 3, 2}));
  EXPECT_EQ(node(g, "up").output_shape, (Shape{4, 9, 9}));  // larger than the input is allowed
}

// ---- reductions ----------------------------------------------------------------------------

TEST(ShapeInferenceReduce, KeepdimsOrDropTheReducedAxes) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 7, 5]}, "layers": [
      {"name": "kept", "op": "reduce", "mode": "sum", "axes": [1, 2]},
      {"name": "dropped", "op": "reduce", "mode": "mean", "axes": [-3], "keepdims": false, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "kept").output_shape, (Shape{4, 1, 1}));  // keepdims defaults to true, as ONNX
  EXPECT_EQ(node(g, "dropped").output_shape, (Shape{7, 5}));
  EXPECT_EQ(node(g, "kept").attrs.reduce_mode, ReduceMode::sum);
  EXPECT_EQ(node(g, "dropped").attrs.reduce_mode, ReduceMode::mean);
}

TEST(ShapeInferenceReduce, RefusesTheBatchAxisRepeatsAndScalars) {
  const Refusal cases[] = {
      {R"({"name": "r", "op": "reduce", "axes": [1]})", "missing attribute 'mode'"},
      {R"({"name": "r", "op": "reduce", "mode": "max", "axes": [1]})", "attribute 'mode' must be \"sum\" or \"mean\""},
      {R"({"name": "r", "op": "reduce", "mode": "sum"})", "missing attribute 'axes'"},
      {R"({"name": "r", "op": "reduce", "mode": "sum", "axes": []})", "attribute 'axes' must be a non-empty list"},
      {R"({"name": "r", "op": "reduce", "mode": "sum", "axes": [3]})", "the batch dimension is not counted, and a layer cannot reduce over it"},
      {R"({"name": "r", "op": "reduce", "mode": "sum", "axes": [1, -2]})", "axis -2 is named twice"},
      {R"({"name": "r", "op": "reduce", "mode": "mean", "axes": [0, 1, 2], "keepdims": false})", "per-sample scalars are not supported"},
  };
  expect_refused("[2, 7, 5]", cases);
}

// ---- data movement between per-sample axes ---------------------------------------------------

TEST(ShapeInferenceDataMovement, SliceAsPythonPadGatherExpandAndTile) {
  const Graph g = parse_spec(R"({"input": {"shape": [6, 5, 4]}, "layers": [
      {"name": "half", "op": "slice", "axes": [0], "starts": [3], "ends": [9223372036854775807]},
      {"name": "steps", "op": "slice", "axes": [-2, 2], "starts": [-1, 0], "ends": [-100, 4], "steps": [-2, 3], "inputs": ["$input"]},
      {"name": "pad", "op": "pad", "pads": [0, 2, 1, 0, 1, -1], "mode": "edge", "inputs": ["$input"]},
      {"name": "pick", "op": "gather", "axis": -1, "indices": [3, -1, 0, 0, 2], "inputs": ["$input"]},
      {"name": "one", "op": "slice", "axes": [0], "starts": [0], "ends": [1], "inputs": ["$input"]},
      {"name": "wide", "op": "expand", "shape": [3, 1, 4]},
      {"name": "tiled", "op": "tile", "repeats": [2, 1, 3], "inputs": ["$input"]},
      {"name": "filled", "op": "where", "condition": [1, 5, 1], "operand": [1, 1, 1], "inputs": ["wide"]},
      {"name": "picked", "op": "where", "condition": [3, 1, 4], "inputs": ["one", "filled"]}]})");
  EXPECT_EQ(node(g, "half").output_shape, (Shape{3, 5, 4}));   // the exporter's "to the end" clamped
  EXPECT_EQ(node(g, "steps").output_shape, (Shape{6, 3, 2}));  // rows 4, 2, 0; columns 0, 3
  EXPECT_EQ(node(g, "pad").output_shape, (Shape{6, 8, 4}));    // H + 2 + 1, W + 1 − 1
  EXPECT_EQ(node(g, "pick").output_shape, (Shape{6, 5, 5}));
  EXPECT_EQ(node(g, "wide").output_shape, (Shape{3, 5, 4}));
  EXPECT_EQ(node(g, "tiled").output_shape, (Shape{12, 5, 12}));
  EXPECT_EQ(node(g, "filled").output_shape, (Shape{3, 5, 4}));
  EXPECT_EQ(node(g, "picked").output_shape, (Shape{3, 5, 4}));  // [1, 5, 4], [3, 5, 4] and [3, 1, 4] broadcast
  const std::vector<graph::SliceRange> r = graph::slice_ranges({6, 5, 4}, node(g, "steps").attrs);
  EXPECT_EQ(r[1].start, 4);
  EXPECT_EQ(r[1].step, -2);
  EXPECT_EQ(r[2].step, 3);
}

TEST(ShapeInferenceDataMovement, RefusesTheBatchAxisEmptyOutputsAndBadLists) {
  const Refusal cases[] = {
      {R"({"name": "s", "op": "slice", "axes": [3], "starts": [0], "ends": [1]})", "a layer cannot slice it"},
      {R"({"name": "s", "op": "slice", "axes": [0, -3], "starts": [0, 0], "ends": [1, 1]})", "axis -3 is named twice"},
      {R"({"name": "s", "op": "slice", "axes": [0], "starts": [2], "ends": [1]})", "leaves axis 0 of [2, 7, 5] empty"},
      {R"({"name": "s", "op": "slice", "axes": [0], "starts": [0], "ends": [1], "steps": [0]})", "attribute 'steps' must be a list of non-zero"},
      {R"({"name": "s", "op": "slice", "axes": [0], "starts": [0, 1], "ends": [1]})", "attribute 'starts' must be a list of integers, one per axis"},
      {R"({"name": "p", "op": "pad", "pads": [0, 1, 1, 0]})", "pads has 4 values for a per-sample input [2, 7, 5]; it needs 6"},
      {R"({"name": "p", "op": "pad", "pads": [0, 7, 0, 0, 0, 0], "mode": "reflect"})",
       "reflect padding of axis 1 by 7 must be smaller than its size 7"},
      {R"({"name": "p", "op": "pad", "pads": [0, 0, 0, 0, 0, 1], "mode": "wrap"})", "attribute 'mode' must be \"constant\", \"reflect\" or \"edge\""},
      {R"({"name": "p", "op": "pad", "pads": [0, 0, 0, 0, 0, 1], "mode": "edge", "value": 1})", "only mode \"constant\" pads with a value"},
      {R"({"name": "p", "op": "pad", "pads": [0, 0, -5, 0, 0, 0]})", "leaves axis 2 of [2, 7, 5] empty"},
      {R"({"name": "g", "op": "gather", "axis": 1, "indices": [7]})", "index 7 is out of range for axis 1 of size 7"},
      {R"({"name": "g", "op": "gather", "axis": 3, "indices": [0]})", "axis 3 is out of range"},
      {R"({"name": "e", "op": "expand", "shape": [2, 3, 5]})", "cannot expand [2, 7, 5] to [2, 3, 5]"},
      {R"({"name": "e", "op": "expand", "shape": [7, 5]})", "must have the per-sample input's rank"},
      {R"({"name": "t", "op": "tile", "repeats": [1, 0, 1]})", "attribute 'repeats' must be a list of positive copy counts"},
      {R"({"name": "t", "op": "tile", "repeats": [1, 2]})", "needs one count per axis"},
      {R"({"name": "w", "op": "where", "condition": [1, 1, 5]})", "takes 2 inputs, or 1 and an 'operand'"},
      {R"({"name": "w", "op": "where", "condition": [1, 3, 5], "operand": [1]})",
       "the condition [1, 3, 5] does not broadcast with the input [2, 7, 5]"},
      {R"({"name": "w", "op": "where", "condition": [1, 1, 5], "operand": [1]})", "the operand [1] does not have the rank of the input [2, 7, 5]"},
  };
  expect_refused("[2, 7, 5]", cases);
}

// ---- recurrent layers ----------------------------------------------------------------------

TEST(ShapeInferenceRecurrent, EveryStepsStatesSideBySide) {
  const Graph g = parse_spec(R"({"input": {"shape": [9, 5]}, "layers": [
      {"name": "lstm", "op": "lstm", "hidden_size": 6},
      {"name": "gru", "op": "gru", "hidden_size": 4, "bidirectional": true, "bias": false}]})");
  EXPECT_EQ(node(g, "lstm").output_shape, (Shape{9, 6}));
  EXPECT_EQ(node(g, "gru").output_shape, (Shape{9, 8}));
  EXPECT_TRUE(node(g, "lstm").attrs.bias);
  EXPECT_FALSE(node(g, "gru").attrs.bias);
}

TEST(ShapeInferenceRecurrent, RefusesOtherRanksAndAMissingWidth) {
  const struct {
    const char* input;
    const char* layer;
    const char* message;
  } cases[] = {
      {"[9, 5]", R"({"name": "r", "op": "lstm"})", "missing attribute 'hidden_size'"},
      {"[9, 5]", R"({"name": "r", "op": "gru", "hidden_size": 0})", "attribute 'hidden_size' must be a positive integer"},
      {"[9, 5]", R"({"name": "r", "op": "gru", "hidden_size": 2, "heads": 2})", "heads"},
      {"[2, 9, 5]", R"({"name": "r", "op": "lstm", "hidden_size": 2})", "expects a float32 [T, C] input (time steps, features)"},
  };
  for (const auto& c : cases) {
    const auto r = parse_model(std::string(R"({"input": {"shape": )") + c.input + R"(}, "layers": [)" + c.layer + "]}", "r.json");
    ASSERT_FALSE(r.ok()) << c.layer;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

// The initial states given as inputs: h0 (and c0 for lstm) [D, H] per sample.
TEST(ShapeInferenceRecurrent, InitialStatesAreDirectionsByHidden) {
  const Graph g = parse_spec(R"({"input": {"shape": [9, 5]}, "layers": [
      {"name": "first", "op": "select", "axis": 0, "index": 0},
      {"name": "fc", "op": "linear", "out_features": 12},
      {"name": "h0", "op": "reshape", "shape": [2, 6]},
      {"name": "lstm", "op": "lstm", "hidden_size": 6, "bidirectional": true, "inputs": ["$input", "h0", "h0"]},
      {"name": "g0", "op": "slice", "axes": [0], "starts": [1], "ends": [2], "inputs": ["h0"]},
      {"name": "gru", "op": "gru", "hidden_size": 6, "inputs": ["lstm", "g0"]}]})");
  EXPECT_EQ(node(g, "lstm").output_shape, (Shape{9, 12}));
  EXPECT_EQ(node(g, "gru").output_shape, (Shape{9, 6}));
}

TEST(ShapeInferenceRecurrent, RefusesInitialStatesOfAnotherShapeAndAThirdForGru) {
  const std::string head = R"({"input": {"shape": [9, 5]}, "layers": [
      {"name": "first", "op": "select", "axis": 0, "index": 0},
      {"name": "fc", "op": "linear", "out_features": 12},
      {"name": "s", "op": "reshape", "shape": [2, 6]},)";
  const Refusal cases[] = {
      {R"({"name": "r", "op": "lstm", "hidden_size": 6, "inputs": ["$input", "s"]})",
       "input 1, the initial state h0, must be a float32 [1, 6] (directions, hidden_size), got float32 [2, 6]"},
      {R"({"name": "r", "op": "lstm", "hidden_size": 3, "bidirectional": true, "inputs": ["$input", "fc"]})",
       "the initial state h0, must be a float32 [2, 3]"},
      {R"({"name": "r", "op": "lstm", "hidden_size": 6, "bidirectional": true, "inputs": ["$input", "s", "fc"]})",
       "input 2, the initial state c0, must be a float32 [2, 6]"},
      {R"({"name": "r", "op": "gru", "hidden_size": 6, "bidirectional": true, "inputs": ["$input", "s", "s"]})", "takes 1 to 2 inputs, got 3"},
  };
  for (const auto& c : cases) {
    const auto r = parse_model(head + c.layer + "]}", "r.json");
    ASSERT_FALSE(r.ok()) << c.layer;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

// ---- upsampling ---------------------------------------------------------------------------

TEST(ShapeInferenceUpsample, SizeOrFloorOfTheScale) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 7, 5]}, "layers": [
      {"name": "x2", "op": "upsample", "scale": 2},
      {"name": "frac", "op": "upsample", "mode": "bilinear", "scale": [1.5, 0.5], "inputs": ["$input"]},
      {"name": "sized", "op": "upsample", "mode": "bilinear", "size": [11, 13], "align_corners": true, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "x2").output_shape, (Shape{4, 14, 10}));
  EXPECT_EQ(node(g, "frac").output_shape, (Shape{4, 10, 2}));  // floor(7 × 1.5), floor(5 × 0.5)
  EXPECT_EQ(node(g, "sized").output_shape, (Shape{4, 11, 13}));
  EXPECT_EQ(node(g, "x2").attrs.mode, UpsampleMode::nearest);  // the default
  EXPECT_TRUE(node(g, "sized").attrs.align_corners);
}

TEST(ShapeInferenceUpsample, RefusesWhatPyTorchRefuses) {
  const Refusal cases[] = {
      {R"({"name": "u", "op": "upsample"})", "missing attribute 'size' ([oh, ow]) or 'scale' ([sh, sw])"},
      {R"({"name": "u", "op": "upsample", "size": 4, "scale": 2})", "give 'size' or 'scale', not both"},
      {R"({"name": "u", "op": "upsample", "scale": 2, "align_corners": true})", "'align_corners' is for mode \"bilinear\" only"},
      {R"({"name": "u", "op": "upsample", "mode": "bicubic", "scale": 2})", "attribute 'mode' must be \"nearest\" or \"bilinear\""},
      {R"({"name": "u", "op": "upsample", "scale": -1})", "attribute 'scale' must be a positive number or a pair [h, w] of them"},
      {R"({"name": "u", "op": "upsample", "size": [0, 2]})", "attribute 'size' must be a positive integer or a pair [h, w] of them"},
      {R"({"name": "u", "op": "upsample", "scale": 0.1})", "leaves an empty output (floor(in × scale) = 0x0)"},
  };
  expect_refused("[2, 7, 5]", cases);
  const auto flat = parse_model(R"({"input": {"shape": [8]}, "layers": [{"name": "u", "op": "upsample", "scale": 2}]})", "u.json");
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.error().message.find("expects a [C, H, W] input"), std::string::npos) << flat.error().message;
}

// ---- 3-D ops ------------------------------------------------------------------------------

// conv3d and the 3-D pools: the 2-D rules per axis, the depth first; a [d, h, w] triple or one
// integer for all three.
TEST(ShapeInference3d, EachAxisFollowsTheTwoDimensionalRule) {
  const Graph g = parse_spec(R"({"input": {"shape": [3, 8, 112, 112]}, "layers": [
      {"name": "stem", "op": "conv3d", "out_channels": 64, "kernel": [3, 7, 7], "stride": [1, 2, 2], "padding": [1, 3, 3], "bias": false},
      {"name": "bn", "op": "batchnorm3d"},
      {"name": "down", "op": "conv3d", "out_channels": 128, "kernel": 1, "stride": 2, "bias": false},
      {"name": "dilated", "op": "conv3d", "out_channels": 8, "kernel": 3, "dilation": [2, 1, 3], "groups": 2, "inputs": ["stem"]},
      {"name": "max", "op": "maxpool3d", "kernel": [2, 3, 3], "stride": [1, 2, 2], "padding": 1, "ceil_mode": true, "inputs": ["stem"]},
      {"name": "avg", "op": "avgpool3d", "kernel": 2, "inputs": ["stem"]},
      {"name": "gap", "op": "adaptive_avgpool3d", "inputs": ["stem"]},
      {"name": "ada", "op": "adaptive_avgpool3d", "output": [2, 3, 4], "inputs": ["stem"]}]})");
  EXPECT_EQ(node(g, "stem").output_shape, (Shape{64, 8, 56, 56}));  // r3d_18's stem
  EXPECT_EQ(node(g, "bn").output_shape, (Shape{64, 8, 56, 56}));
  EXPECT_EQ(node(g, "down").output_shape, (Shape{128, 4, 28, 28}));
  EXPECT_EQ(node(g, "dilated").output_shape, (Shape{8, 4, 54, 50}));  // 8-2·2, 56-2, 56-2·3
  EXPECT_EQ(node(g, "max").output_shape,
            (Shape{64, pytorch_pool_out(8, 2, 1, 1, true), pytorch_pool_out(56, 3, 2, 1, true), pytorch_pool_out(56, 3, 2, 1, true)}));
  EXPECT_EQ(node(g, "avg").output_shape, (Shape{64, 4, 28, 28}));  // the stride defaults to the kernel
  EXPECT_EQ(node(g, "gap").output_shape, (Shape{64, 1, 1, 1}));
  EXPECT_EQ(node(g, "ada").output_shape, (Shape{64, 2, 3, 4}));
  EXPECT_EQ(node(g, "stem").attrs.depth.kernel, 3);
  EXPECT_EQ(node(g, "stem").attrs.kernel.h, 7);
  EXPECT_EQ(node(g, "max").attrs.depth.stride, 1);
  EXPECT_EQ(node(g, "avg").attrs.depth.stride, 2);
}

TEST(ShapeInference3d, RefusesWhatPyTorchRefuses) {
  const Refusal cases[] = {
      {R"({"name": "c", "op": "conv3d", "out_channels": 4, "kernel": [3, 3]})",
       "attribute 'kernel' must be a positive integer or a triple [d, h, w] of them"},
      {R"({"name": "c", "op": "conv3d", "out_channels": 4, "kernel": 3, "stride": [1, 0, 1]})", "attribute 'stride' must be a positive"},
      {R"({"name": "c", "op": "conv3d", "out_channels": 4, "kernel": 3, "groups": 2})", "groups = 2 must divide the input channels (3)"},
      {R"({"name": "c", "op": "conv3d", "out_channels": 4, "kernel": [5, 1, 1]})",
       "the kernel 5x1x1 (dilation 1x1x1) is larger than the padded input 4x6x6"},
      {R"({"name": "p", "op": "maxpool3d", "kernel": [2, 2, 2], "padding": [2, 0, 0]})", "padding must be at most half the kernel"},
      {R"({"name": "p", "op": "avgpool3d", "kernel": [5, 2, 2]})", "the kernel 5x2x2 is larger than the padded input 4x6x6"},
      {R"({"name": "p", "op": "adaptive_avgpool3d", "output": [1, 0, 1]})", "attribute 'output' must be a positive integer or a triple"},
      {R"({"name": "p", "op": "avgpool3d", "kernel": 2, "dilation": 2})", "unknown attribute 'dilation'"},  // PyTorch's AvgPool has none
      {R"({"name": "p", "op": "maxpool3d", "kernel": 2, "dilation": [1, 0, 1]})", "attribute 'dilation' must be a positive"},
      {R"({"name": "p", "op": "maxpool3d", "kernel": 3, "dilation": 2})", "the kernel 3x3x3 (dilation 2x2x2) is larger than the padded input 4x6x6"},
  };
  expect_refused("[3, 4, 6, 6]", cases);
  // A 2-D input to a 3-D op, and a 3-D input to a 2-D one.
  const auto image = parse_model(R"({"input": {"shape": [3, 8, 8]}, "layers": [{"name": "bn", "op": "batchnorm3d"}]})", "v.json");
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find("expects a [C, D, H, W] input, got [3, 8, 8]"), std::string::npos) << image.error().message;
  const auto video =
      parse_model(R"({"input": {"shape": [3, 4, 8, 8]}, "layers": [{"name": "c", "op": "conv2d", "out_channels": 2, "kernel": 3}]})", "v.json");
  ASSERT_FALSE(video.ok());
  EXPECT_NE(video.error().message.find("expects a [C, H, W] input"), std::string::npos) << video.error().message;
}

// conv_transpose3d: PyTorch's ConvTranspose3d size per axis, (in - 1)·stride - 2·padding +
// dilation·(kernel - 1) + output_padding + 1, and its rule that output_padding be smaller than
// the stride or the dilation.
TEST(ShapeInference3d, TransposedConvolutionFollowsPyTorchPerAxis) {
  const Graph g = parse_spec(R"({"input": {"shape": [8, 4, 7, 7]}, "layers": [
      {"name": "up", "op": "conv_transpose3d", "out_channels": 4, "kernel": 3, "stride": 2, "padding": 1, "output_padding": [1, 0, 1]},
      {"name": "wide", "op": "conv_transpose3d", "out_channels": 6, "kernel": [1, 3, 5], "stride": [1, 3, 2], "padding": [0, 2, 1],
       "dilation": [1, 1, 2], "output_padding": [0, 2, 1], "groups": 2, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "up").output_shape, (Shape{4, 8, 13, 14}));    // 3·2-2+2+1+1, 6·2-2+2+1, 6·2-2+2+1+1
  EXPECT_EQ(node(g, "wide").output_shape, (Shape{6, 4, 19, 20}));  // 3+0+1, 6·3-4+2+2+1, 6·2-2+8+1+1
  EXPECT_EQ(node(g, "up").attrs.depth.output_padding, 1);
  EXPECT_EQ(node(g, "up").attrs.output_padding.h, 0);
  EXPECT_EQ(node(g, "wide").attrs.depth.dilation, 1);
  EXPECT_EQ(node(g, "wide").attrs.dilation.w, 2);
  const Refusal cases[] = {
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 4, "kernel": 3, "stride": 2, "output_padding": [2, 0, 0]})",
       "output_padding 2x0x0 must be smaller than the stride or the dilation along each axis"},
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 4, "kernel": 3, "output_padding": [0, 0, 1]})", "output_padding 0x0x1"},
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 4, "kernel": 3, "output_padding": [0, 1]})",
       "attribute 'output_padding' must be a non-negative integer or a triple [d, h, w] of them"},
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 4, "kernel": 1, "padding": [3, 0, 0]})", "the padding removes the whole output"},
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 5, "kernel": 3, "groups": 3})", "groups = 3 must divide the input channels"},
      {R"({"name": "u", "op": "conv_transpose3d", "out_channels": 4, "kernel": 3, "ceil_mode": true})", "ceil_mode"},
  };
  expect_refused("[4, 4, 6, 6]", cases);
}

// conv1d and conv_transpose1d over [C, L]: PyTorch's Conv1d and ConvTranspose1d sizes, the
// window one integer or a list [l] of one, the height the attributes keep a window of 1.
TEST(ShapeInference1d, ConvolutionsFollowPyTorchAlongTheLength) {
  const Graph g = parse_spec(R"({"input": {"shape": [3, 50]}, "layers": [
      {"name": "c", "op": "conv1d", "out_channels": 8, "kernel": 7, "stride": 3, "padding": 2, "dilation": 2},
      {"name": "l", "op": "conv1d", "out_channels": 8, "kernel": [3], "padding": [1], "groups": 8},
      {"name": "u", "op": "conv_transpose1d", "out_channels": 4, "kernel": 4, "stride": 2, "padding": 1, "output_padding": 1}]})");
  EXPECT_EQ(node(g, "c").output_shape, (Shape{8, 14}));  // floor((50 + 4 − 12 − 1) / 3) + 1
  EXPECT_EQ(node(g, "l").output_shape, (Shape{8, 14}));
  EXPECT_EQ(node(g, "u").output_shape, (Shape{4, 29}));  // 13·2 − 2 + 3 + 1 + 1
  EXPECT_EQ(node(g, "c").attrs.kernel.w, 7);
  EXPECT_EQ(node(g, "c").attrs.kernel.h, 1);
  EXPECT_EQ(node(g, "c").attrs.stride.h, 1);
  EXPECT_EQ(node(g, "c").attrs.padding.h, 0);
  EXPECT_EQ(node(g, "c").attrs.dilation.h, 1);
  EXPECT_EQ(node(g, "u").attrs.output_padding.h, 0);
  const Refusal cases[] = {
      {R"({"name": "c", "op": "conv1d", "out_channels": 4, "kernel": [3, 3]})", "attribute 'kernel' must be a positive integer or a list [l] of one"},
      {R"({"name": "c", "op": "conv1d", "out_channels": 4})", "missing attribute 'kernel' (a positive integer or a list [l])"},
      {R"({"name": "c", "op": "conv1d", "out_channels": 4, "kernel": 3, "stride": 0})",
       "attribute 'stride' must be a positive integer or a list [l]"},
      {R"({"name": "c", "op": "conv1d", "out_channels": 4, "kernel": 9})", "larger than the padded input"},
      {R"({"name": "u", "op": "conv_transpose1d", "out_channels": 4, "kernel": 3, "stride": 2, "output_padding": 2})",
       "must be smaller than the stride or the dilation"},
  };
  expect_refused("[3, 8]", cases);
  const auto image =
      parse_model(R"({"input": {"shape": [3, 8, 8]}, "layers": [{"name": "c", "op": "conv1d", "out_channels": 2, "kernel": 3}]})", "a.json");
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find("expects a [C, L] input, got [3, 8, 8]"), std::string::npos) << image.error().message;
}

// batchnorm1d takes [C] (an MLP's features, nn.BatchNorm1d over [N, C]) or [C, L], as PyTorch.
TEST(ShapeInference1d, BatchNormTakesChannelsAloneOrOverALength) {
  const Graph flat = parse_spec(R"({"input": {"shape": [12]}, "layers": [{"name": "bn", "op": "batchnorm1d", "eps": 0.001}]})");
  EXPECT_EQ(node(flat, "bn").output_shape, (Shape{12}));
  const Graph seq = parse_spec(R"({"input": {"shape": [4, 30]}, "layers": [{"name": "bn", "op": "batchnorm1d"}]})");
  EXPECT_EQ(node(seq, "bn").output_shape, (Shape{4, 30}));
  const auto image = parse_model(R"({"input": {"shape": [3, 8, 8]}, "layers": [{"name": "bn", "op": "batchnorm1d"}]})", "a.json");
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find("expects a [C] or [C, L] input, got [3, 8, 8]"), std::string::npos) << image.error().message;
}

// Dilated max pools: PyTorch's MaxPoolNd(dilation=...) output sizes (torch 1.13 gives these
// shapes), the window spanning dilation·(kernel − 1) + 1.
TEST(ShapeInferencePool, DilatedMaxPoolsFollowPyTorch) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 11, 13]}, "layers": [
      {"name": "p2", "op": "maxpool2d", "kernel": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": true}]})");
  EXPECT_EQ(node(g, "p2").output_shape, (Shape{4, 5, 6}));
  EXPECT_EQ(node(g, "p2").attrs.dilation.h, 2);
  const Graph one = parse_spec(R"({"input": {"shape": [4, 25]}, "layers": [
      {"name": "p1", "op": "maxpool1d", "kernel": 3, "stride": 2, "padding": 1, "dilation": 3}]})");
  EXPECT_EQ(node(one, "p1").output_shape, (Shape{4, 11}));
  const Graph three = parse_spec(R"({"input": {"shape": [2, 4, 9, 9]}, "layers": [
      {"name": "p3", "op": "maxpool3d", "kernel": [2, 3, 3], "stride": [1, 2, 2], "padding": 1, "dilation": [1, 2, 2], "ceil_mode": true}]})");
  EXPECT_EQ(node(three, "p3").output_shape, (Shape{2, 5, 4, 4}));
  EXPECT_EQ(node(three, "p3").attrs.depth.dilation, 1);
}

// maxpool1d, avgpool1d and adaptive_avgpool1d over [C, L]: PyTorch's pooling_output_shape along
// the length, the stride defaulting to the kernel.
TEST(ShapeInference1d, PoolingFollowsPyTorchAlongTheLength) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 25]}, "layers": [
      {"name": "max", "op": "maxpool1d", "kernel": 3, "stride": 2, "padding": 1, "ceil_mode": true},
      {"name": "avg", "op": "avgpool1d", "kernel": [4], "inputs": ["$input"]},
      {"name": "ada", "op": "adaptive_avgpool1d", "output": 5, "inputs": ["$input"]},
      {"name": "gap", "op": "adaptive_avgpool1d", "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "max").output_shape, (Shape{4, pytorch_pool_out(25, 3, 2, 1, true)}));
  EXPECT_EQ(node(g, "avg").output_shape, (Shape{4, 6}));
  EXPECT_EQ(node(g, "ada").output_shape, (Shape{4, 5}));
  EXPECT_EQ(node(g, "gap").output_shape, (Shape{4, 1}));
  EXPECT_EQ(node(g, "max").attrs.kernel.h, 1);
  EXPECT_EQ(node(g, "avg").attrs.stride.w, 4);
  EXPECT_EQ(node(g, "avg").attrs.stride.h, 1);
  const Refusal cases[] = {
      {R"({"name": "p", "op": "maxpool1d", "kernel": [2, 2]})", "attribute 'kernel' must be a positive integer or a list [l] of one"},
      {R"({"name": "p", "op": "maxpool1d", "kernel": 2, "padding": 2})", "padding must be at most half the kernel"},
      {R"({"name": "p", "op": "avgpool1d", "kernel": 30})", "the kernel 30 is larger than the padded input 25"},
      {R"({"name": "p", "op": "adaptive_avgpool1d", "output": 0})", "attribute 'output' must be a positive integer or a list [l]"},
  };
  expect_refused("[4, 25]", cases);
  const auto image = parse_model(R"({"input": {"shape": [3, 8, 8]}, "layers": [{"name": "p", "op": "maxpool1d", "kernel": 2}]})", "a.json");
  ASSERT_FALSE(image.ok());
  EXPECT_NE(image.error().message.find("expects a [C, L] input, got [3, 8, 8]"), std::string::npos) << image.error().message;
}

// ---- data movement ------------------------------------------------------------------------

TEST(ShapeInferenceMovement, FlattenReshapeTranspose) {
  const Graph g = parse_spec(R"({"input": {"shape": [2, 3, 4]}, "layers": [
      {"name": "flat", "op": "flatten"},
      {"name": "r1", "op": "reshape", "shape": [-1, 4], "inputs": ["$input"]},
      {"name": "r2", "op": "reshape", "shape": [4, -1], "inputs": ["$input"]},
      {"name": "r3", "op": "reshape", "shape": [3, 2, 2, 2], "inputs": ["$input"]},
      {"name": "r4", "op": "reshape", "shape": [-1], "inputs": ["$input"]},
      {"name": "t", "op": "transpose", "perm": [2, 0, 1], "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "flat").output_shape, (Shape{24}));  // the whole sample
  EXPECT_EQ(node(g, "r1").output_shape, (Shape{6, 4}));  // 24 / 4
  EXPECT_EQ(node(g, "r2").output_shape, (Shape{4, 6}));
  EXPECT_EQ(node(g, "r3").output_shape, (Shape{3, 2, 2, 2}));
  EXPECT_EQ(node(g, "r4").output_shape, (Shape{24}));
  EXPECT_EQ(node(g, "t").output_shape, (Shape{4, 2, 3}));  // out[i] = in[perm[i]]
}

TEST(ShapeInferenceMovement, ReshapeRejectsAMismatch) {
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [2, 3, 4]},
      "layers": [{"name": "r", "op": "reshape", "shape": [5, -1]}]})",
                           "r.json")
                   .ok());  // 24 % 5 != 0
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [2, 3, 4]},
      "layers": [{"name": "r", "op": "reshape", "shape": [5, 5]}]})",
                           "r.json")
                   .ok());
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [2, 3, 4]},
      "layers": [{"name": "r", "op": "reshape", "shape": [-1, -1]}]})",
                           "r.json")
                   .ok());
}

TEST(ShapeInferenceMovement, ConcatOnANegativeAxis) {
  const Graph g = parse_spec(R"({"input": {"shape": [2, 3]}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 5},
      {"name": "last", "op": "concat", "axis": -1, "inputs": ["$input", "fc", "$input"]},
      {"name": "first", "op": "concat", "axis": -2, "inputs": ["$input", "$input"]}]})");
  EXPECT_EQ(node(g, "last").output_shape, (Shape{2, 11}));  // 3 + 5 + 3 on axis 1
  EXPECT_EQ(node(g, "first").output_shape, (Shape{4, 3}));  // axis -2 is axis 0
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [2, 3]}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 5},
      {"name": "bad", "op": "concat", "axis": 0, "inputs": ["$input", "fc"]}]})",
                           "c.json")
                   .ok());  // 3 != 5 off-axis
}

TEST(ShapeInferenceMovement, SelectWithNegativeIndexAndAxis) {
  const Graph g = parse_spec(R"({"input": {"shape": [3, 4, 5]}, "layers": [
      {"name": "a", "op": "select", "axis": -1, "index": -2},
      {"name": "b", "op": "select", "axis": -3, "index": -1, "inputs": ["$input"]},
      {"name": "c", "op": "select", "index": 2, "inputs": ["$input"]}]})");
  EXPECT_EQ(node(g, "a").output_shape, (Shape{3, 4}));  // drops axis 2
  EXPECT_EQ(node(g, "b").output_shape, (Shape{4, 5}));  // drops axis 0
  EXPECT_EQ(node(g, "c").output_shape, (Shape{4, 5}));  // default axis 0
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [3, 4]},
      "layers": [{"name": "s", "op": "select", "axis": 1, "index": -5}]})",
                           "s.json")
                   .ok());  // -5 < -4
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [3, 4]},
      "layers": [{"name": "s", "op": "select", "axis": -3, "index": 0}]})",
                           "s.json")
                   .ok());  // rank 2
}

// ---- rel_pos_bias (Swin's relative position bias) ------------------------------------------

TEST(ShapeInferenceRelPosBias, ScoresOfAnyLeadingAxesKeepTheirShape) {
  const Graph g = parse_spec(R"({"input": {"shape": [4, 3, 6, 6]}, "layers": [
      {"name": "windows", "op": "rel_pos_bias", "window": [2, 3]},
      {"name": "one", "op": "select", "axis": 0, "index": 0},
      {"name": "heads", "op": "rel_pos_bias", "window": [3, 2]},
      {"name": "cells", "op": "reshape", "shape": [3, 36, 1, 1]},
      {"name": "single", "op": "rel_pos_bias", "window": [1, 1]}]})");
  EXPECT_EQ(node(g, "windows").output_shape, (Shape{4, 3, 6, 6}));  // [nW, heads, N, N]
  EXPECT_EQ(node(g, "heads").output_shape, (Shape{3, 6, 6}));       // [heads, N, N], another window of 6
  EXPECT_EQ(node(g, "single").output_shape, (Shape{3, 36, 1, 1}));  // a window of one position
}

TEST(ShapeInferenceRelPosBias, RefusesScoresThatAreNotOfTheWindow) {
  const auto error_of = [](const std::string& shape, const std::string& window, const std::string& dtype = "float32") {
    auto graph = parse_model(R"({"input": {"shape": )" + shape + R"(, "dtype": ")" + dtype + R"("}, "layers": [
        {"name": "rpb", "op": "rel_pos_bias", "window": )" +
                                 window + "}]}",
                             "rpb.json");
    EXPECT_FALSE(graph.ok()) << shape << " with window " << window << " was accepted";
    return graph.ok() ? std::string() : graph.error().message;
  };
  const std::string scores =
      "layer 'rpb' (rel_pos_bias): expects attention scores [..., heads, N, N] (at least 3 per-sample axes, the last two equal), got ";
  EXPECT_NE(error_of("[6, 6]", "[2, 3]").find(scores + "[6, 6]"), std::string::npos);        // rank 2: no heads axis
  EXPECT_NE(error_of("[36]", "[2, 3]").find(scores + "[36]"), std::string::npos);            // rank 1
  EXPECT_NE(error_of("[2, 6, 5]", "[2, 3]").find(scores + "[2, 6, 5]"), std::string::npos);  // N x M, not N x N
  EXPECT_NE(error_of("[2, 6, 6]", "[2, 2]")
                .find("layer 'rpb' (rel_pos_bias): the window [2, 2] has wh·ww = 4 positions but the scores [2, 6, 6] are over N = 6"),
            std::string::npos);
  EXPECT_NE(error_of("[2, 6, 6]", "[3, 3]").find("wh·ww = 9 positions"), std::string::npos);
  EXPECT_NE(error_of("[2, 4, 4]", "[4294967296, 4294967296]").find("wh·ww = more than 2^63 positions"), std::string::npos);
  EXPECT_NE(error_of("[2, 4, 4]", "[2, 2]", "int32").find("expects float32 input"), std::string::npos);
}

// ---- token ops and attention --------------------------------------------------------------

TEST(ShapeInferenceToken, EmbeddingClsTokenPosEmbeddingAttention) {
  const Graph g = parse_spec(R"({"input": {"shape": [7], "dtype": "int32"}, "layers": [
      {"name": "emb", "op": "embedding", "num_embeddings": 100, "embedding_dim": 16},
      {"name": "cls", "op": "cls_token"},
      {"name": "pos", "op": "pos_embedding", "num_positions": 8},
      {"name": "attn", "op": "attention", "heads": 4, "causal": true},
      {"name": "ln", "op": "layernorm"},
      {"name": "sm", "op": "softmax", "axis": 0}]})");
  EXPECT_EQ(node(g, "emb").output_shape, (Shape{7, 16}));  // [T] -> [T, D]
  EXPECT_EQ(node(g, "cls").output_shape, (Shape{8, 16}));  // [T+1, D]
  EXPECT_EQ(node(g, "pos").output_shape, (Shape{8, 16}));  // 8 positions fit num_positions 8
  EXPECT_EQ(node(g, "attn").output_shape, (Shape{8, 16}));
  EXPECT_EQ(node(g, "ln").output_shape, (Shape{8, 16}));
  EXPECT_EQ(node(g, "sm").output_shape, (Shape{8, 16}));
}

TEST(ShapeInferenceToken, Rejections) {
  // pos_embedding needs T <= num_positions: after cls_token T = 8 > 7.
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [7, 4]}, "layers": [
      {"name": "cls", "op": "cls_token"}, {"name": "pos", "op": "pos_embedding", "num_positions": 7}]})",
                           "t.json")
                   .ok());
  // attention needs heads | D.
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [7, 6]}, "layers": [
      {"name": "attn", "op": "attention", "heads": 4}]})",
                           "t.json")
                   .ok());
  // embedding needs int32 [T].
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [7]}, "layers": [
      {"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 4}]})",
                           "t.json")
                   .ok());
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [2, 7], "dtype": "int32"}, "layers": [
      {"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 4}]})",
                           "t.json")
                   .ok());
  // Float ops refuse int32 token ids.
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [7], "dtype": "int32"}, "layers": [
      {"name": "fc", "op": "linear", "out_features": 4}]})",
                           "t.json")
                   .ok());
}

// ---- dtypes -------------------------------------------------------------------------------

TEST(ShapeInferenceDtype, IdsStayInt32ThroughDataMovementAndEmbeddingGivesFloat) {
  const Graph g = parse_spec(R"({"input": {"shape": [2, 6], "dtype": "int32"}, "layers": [
      {"name": "tok", "op": "select", "axis": 0, "index": 0},
      {"name": "seg", "op": "select", "axis": -2, "index": -1, "inputs": ["$input"]},
      {"name": "t", "op": "transpose", "perm": [1, 0], "inputs": ["$input"]},
      {"name": "r", "op": "reshape", "shape": [3, 4], "inputs": ["$input"]},
      {"name": "flat", "op": "flatten", "inputs": ["r"]},
      {"name": "cat", "op": "concat", "inputs": ["tok", "seg"]},
      {"name": "emb", "op": "embedding", "num_embeddings": 30, "embedding_dim": 5, "inputs": ["cat"]}]})");
  for (const char* name : {"tok", "seg", "t", "r", "flat", "cat"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(node(g, name).output_dtype, DType::i32);
  }
  EXPECT_EQ(node(g, "t").output_shape, (Shape{6, 2}));
  EXPECT_EQ(node(g, "flat").output_shape, (Shape{12}));
  EXPECT_EQ(node(g, "cat").output_shape, (Shape{12}));  // 6 + 6
  EXPECT_EQ(node(g, "emb").output_dtype, DType::f32);
  EXPECT_EQ(node(g, "emb").output_shape, (Shape{12, 5}));
}

TEST(ShapeInferenceDtype, ConcatRefusesMixedDtypes) {
  EXPECT_FALSE(parse_model(R"({"input": {"shape": [4], "dtype": "int32"}, "layers": [
      {"name": "emb", "op": "embedding", "num_embeddings": 10, "embedding_dim": 1},
      {"name": "flat", "op": "flatten"},
      {"name": "cat", "op": "concat", "inputs": ["flat", "$input"]}]})",
                           "d.json")
                   .ok());
}

TEST(ShapeInferenceDtype, FloatOpsKeepFloat32) {
  const Graph g = parse_spec(R"({"input": {"shape": [3, 8, 8]}, "layers": [
      {"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 3, "padding": 1},
      {"name": "bn", "op": "batchnorm2d"},
      {"name": "relu", "op": "relu6"},
      {"name": "pool", "op": "avgpool2d", "kernel": 2},
      {"name": "drop", "op": "dropout", "p": 0.1},
      {"name": "flat", "op": "flatten"},
      {"name": "fc", "op": "linear", "out_features": 10}]})");
  for (const Node& n : g.nodes) {
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.output_dtype, DType::f32);
  }
  EXPECT_EQ(node(g, "pool").output_shape, (Shape{4, 4, 4}));
  EXPECT_EQ(node(g, "flat").output_shape, (Shape{64}));
  EXPECT_EQ(node(g, "fc").output_shape, (Shape{10}));
}

}  // namespace
}  // namespace hwprof
