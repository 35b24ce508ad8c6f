// Malformed model specs: each must fail with a message that says where (file:line:col) and what
// is wrong, in words a user can act on. One table row per mistake. The expected location is
// that of the value the message is about, of the key when the key itself is wrong, and of
// the layer object when something is missing from it.
#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Where the mistake is caught: while parsing (parse_model), or only when counting (analyze),
// for sizes whose shapes fit in 64 bits but whose parameter or FLOP counts do not.
enum class Stage { parse, analyze };

struct MalformedCase {
  const char* label;
  Stage stage;
  const char* location;  // "line:col" in the spec text
  const char* text;
  std::vector<std::string> words;  // each must appear in the message
};

void PrintTo(const MalformedCase& c, std::ostream* os) {
  *os << c.label;
}

const std::vector<MalformedCase>& malformed_cases() {
  static const std::vector<MalformedCase> cases = {
      // invalid JSON
      {"TrailingComma",
       Stage::parse,
       "5:3",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu"},
  ]
}
)json",
       {"invalid JSON", "unexpected ']'"}},
      {"UnterminatedString",
       Stage::parse,
       "4:30",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu
  ]
}
)json",
       {"invalid JSON", "invalid string: control character U+000A (LF) must be escaped"}},
      {"EmptyFile", Stage::parse, "1:1", R"json()json", {"invalid JSON: the file is empty; expected a model spec object"}},
      {"OnlyWhiteSpace", Stage::parse, "1:1", "\n \t\r\n  ", {"invalid JSON: the file is empty"}},
      {"GarbageAfterTheObject",
       Stage::parse,
       "5:1",
       R"json({
  "input": {"shape": [4]},
  "layers": [{"name": "a", "op": "relu"}]
}
{}
)json",
       {"invalid JSON", "unexpected '{'; expected end of input"}},
      {"MissingColon",
       Stage::parse,
       "2:11",
       R"json({
  "input" {"shape": [4]},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"invalid JSON", "unexpected '{'; expected ':'"}},
      {"NumberTooLargeForADouble",
       Stage::parse,
       "4:52",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 1e400}
  ]
}
)json",
       {"invalid JSON: number overflow parsing '1e400'"}},
      {"TopLevelIsAnArray",
       Stage::parse,
       "1:1",
       R"json([
  {"name": "a", "op": "relu"}
]
)json",
       {"the model spec must be a JSON object", "got the array [{\"name\":\"a\",\"op\":\"relu\"}]"}},
      {"DuplicateKeyInALayer",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu", "op": "gelu"}
  ]
}
)json",
       {"duplicate key \"op\" in this object; each key may appear once"}},
      {"UnknownTopLevelKey",
       Stage::parse,
       "3:3",
       R"json({
  "input": {"shape": [4]},
  "layer": [{"name": "a", "op": "relu"}]
}
)json",
       {"unknown key \"layer\" in model spec (did you mean 'layers'?)", "expected one of: name, input, layers, description, comment"}},
      {"ModelNameNotAString",
       Stage::parse,
       "2:11",
       R"json({
  "name": 7,
  "input": {"shape": [4]},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"\"name\" must be a non-empty string, got 7"}},

      // the model input
      {"MissingInput",
       Stage::parse,
       "1:1",
       R"json({
  "name": "m",
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"missing \"input\": expected {\"shape\": [C, H, W]}"}},
      {"InputNotAnObject",
       Stage::parse,
       "2:12",
       R"json({
  "input": [3, 8, 8],
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"\"input\" must be an object", "got the array [3,8,8]"}},
      {"InputWithoutShape",
       Stage::parse,
       "2:12",
       R"json({
  "input": {"dtype": "float32"},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"\"input\" has no \"shape\""}},
      {"InputShapeIsAString",
       Stage::parse,
       "2:22",
       R"json({
  "input": {"shape": "3x8x8"},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"input shape must be a non-empty list of positive integers, got the string \"3x8x8\""}},
      {"InputShapeHasAZero",
       Stage::parse,
       "2:26",
       R"json({
  "input": {"shape": [3, 0, 8]},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"input shape: dimension 1 must be a positive integer, got 0"}},
      {"InputShapeOverflows",
       Stage::parse,
       "2:22",
       R"json({
  "input": {"shape": [4294967296, 4294967296]},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"the input [4294967296, 4294967296] is too large: its byte and batch counts would overflow 64-bit integers"}},
      {"BadDtype",
       Stage::parse,
       "2:37",
       R"json({
  "input": {"shape": [16], "dtype": "int64"},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"\"dtype\" must be \"float32\" or \"int32\", got the string \"int64\""}},
      {"MisspelledInputKey",
       Stage::parse,
       "2:28",
       R"json({
  "input": {"shape": [16], "dtpye": "int32"},
  "layers": [{"name": "a", "op": "relu"}]
}
)json",
       {"unknown key \"dtpye\" in \"input\" (did you mean 'dtype'?)"}},

      // layers
      {"MissingLayers",
       Stage::parse,
       "1:1",
       R"json({
  "input": {"shape": [4]}
}
)json",
       {"missing \"layers\": expected an array of layer objects"}},
      {"EmptyLayers",
       Stage::parse,
       "3:13",
       R"json({
  "input": {"shape": [4]},
  "layers": []
}
)json",
       {"\"layers\" must be a non-empty array of layer objects, got the array []"}},
      {"LayersIsAnObject",
       Stage::parse,
       "3:13",
       R"json({
  "input": {"shape": [4]},
  "layers": {"name": "a", "op": "relu"}
}
)json",
       {"\"layers\" must be a non-empty array of layer objects, got an object"}},
      {"LayerNotAnObject",
       Stage::parse,
       "5:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu"},
    "relu"
  ]
}
)json",
       {"each layer must be an object with \"name\" and \"op\", got the string \"relu\""}},
      {"MissingName",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"op": "relu"}
  ]
}
)json",
       {"layer has no \"name\" (a unique string)"}},
      {"NameNotAString",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": 42, "op": "relu"}
  ]
}
)json",
       {"layer has no \"name\" (a unique string), got 42"}},
      {"NameStartsWithDollar",
       Stage::parse,
       "4:14",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "$x", "op": "relu"}
  ]
}
)json",
       {"names must not start with '$'"}},
      {"MissingOp",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a"}
  ]
}
)json",
       {"layer 'a': missing \"op\": expected one of linear, attention, matmul, conv1d, conv_transpose1d, conv2d, conv_transpose2d, conv3d, "
        "conv_transpose3d, batchnorm1d, batchnorm2d, "
        "batchnorm3d, layernorm, "
        "relu, relu6, gelu, silu, sigmoid, tanh, "
        "hardswish, "
        "hardsigmoid, softplus, mish, leaky_relu, elu, hardshrink, softmax, maxpool1d, avgpool1d, adaptive_avgpool1d, maxpool2d, avgpool2d, "
        "adaptive_avgpool2d, maxpool3d, avgpool3d, "
        "adaptive_avgpool3d, add, mul, sub, div, flatten, dropout, concat, reshape, transpose, select, slice, pad, gather, expand, tile, where, "
        "embedding, pos_embedding, cls_token, rel_pos_bias, upsample, reduce, lstm, gru"}},
      {"UnknownOpWithSuggestion",
       Stage::parse,
       "4:25",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2", "out_channels": 4, "kernel": 3}
  ]
}
)json",
       {"layer 'c': unknown op 'conv2' (did you mean 'conv2d'?)",
        "valid ops: linear, attention, matmul, conv1d, conv_transpose1d, conv2d, conv_transpose2d, conv3d, conv_transpose3d, batchnorm1d, "
        "batchnorm2d, batchnorm3d, layernorm, relu, relu6, "
        "gelu, silu, "
        "sigmoid, tanh, hardswish, hardsigmoid, softplus, "
        "mish, "
        "leaky_relu, elu, hardshrink, softmax, maxpool1d, avgpool1d, adaptive_avgpool1d, maxpool2d, avgpool2d, "
        "adaptive_avgpool2d, maxpool3d, avgpool3d, adaptive_avgpool3d, add, mul, sub, div, flatten, dropout, concat, reshape, transpose, select, "
        "slice, pad, gather, expand, tile, where, embedding, pos_embedding, cls_token, rel_pos_bias, upsample, reduce, "
        "lstm, gru"}},
      {"UnknownAttributeWithSuggestion",
       Stage::parse,
       "4:54",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernal": 3}
  ]
}
)json",
       {"layer 'c' (conv2d): unknown attribute 'kernal' (did you mean 'kernel'?)",
        "conv2d takes attributes out_channels, kernel, stride, padding, dilation, groups, bias"}},
      {"AttributeOfAnotherOp",
       Stage::parse,
       "4:33",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "a", "op": "relu", "p": 0.5}
  ]
}
)json",
       {"layer 'a' (relu): unknown attribute 'p'", "relu takes no attributes"}},
      {"MissingRequiredAttribute",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4}
  ]
}
)json",
       {"layer 'c' (conv2d): missing attribute 'kernel' (a positive integer or a pair [h, w])"}},

      // attribute types and ranges
      {"StringForInteger",
       Stage::parse,
       "4:51",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": "4", "kernel": 3}
  ]
}
)json",
       {"layer 'c' (conv2d): attribute 'out_channels' must be a positive integer, got the string \"4\""}},
      {"FractionForInteger",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3.5}
  ]
}
)json",
       {"layer 'c' (conv2d): attribute 'kernel' must be a positive integer or a pair [h, w] of them, got 3.5"}},
      {"BooleanForInteger",
       Stage::parse,
       "4:52",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": true}
  ]
}
)json",
       {"layer 'fc' (linear): attribute 'out_features' must be a positive integer, got the boolean true"}},
      {"IntegerForBoolean",
       Stage::parse,
       "4:63",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 4, "bias": 1}
  ]
}
)json",
       {"layer 'fc' (linear): attribute 'bias' must be true or false, got 1"}},
      {"PairOfThree",
       Stage::parse,
       "4:77",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "stride": [1, 2, 3]}
  ]
}
)json",
       {"attribute 'stride' must be a positive integer or a pair [h, w] of them, got the array [1,2,3]"}},
      {"PairOfOne",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": [3]}
  ]
}
)json",
       {"attribute 'kernel' must be a positive integer or a pair [h, w] of them, got the array [3]"}},
      {"KernelZero",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 0}
  ]
}
)json",
       {"layer 'c' (conv2d): attribute 'kernel' must be a positive integer or a pair [h, w] of them, got 0"}},
      {"KernelPairWithZero",
       Stage::parse,
       "4:48",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "p", "op": "maxpool2d", "kernel": [2, 0]}
  ]
}
)json",
       {"layer 'p' (maxpool2d): attribute 'kernel' must be a positive integer or a pair [h, w] of them, got the array [2,0]"}},
      {"OutFeaturesNegative",
       Stage::parse,
       "4:52",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": -1}
  ]
}
)json",
       {"layer 'fc' (linear): attribute 'out_features' must be a positive integer, got -1"}},
      {"StrideZero",
       Stage::parse,
       "4:77",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "stride": 0}
  ]
}
)json",
       {"attribute 'stride' must be a positive integer or a pair [h, w] of them, got 0"}},
      {"NegativePadding",
       Stage::parse,
       "4:78",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "padding": -1}
  ]
}
)json",
       {"attribute 'padding' must be a non-negative integer or a pair [h, w] of them, got -1"}},
      {"NumberTooLargeForInt64",
       Stage::parse,
       "4:52",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 9223372036854775808}
  ]
}
)json",
       {"attribute 'out_features' must be a positive integer, got 9223372036854775808"}},
      {"HugeFloatForInteger",
       Stage::parse,
       "4:52",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 1e308}
  ]
}
)json",
       {"attribute 'out_features' must be a positive integer, got 1e+308"}},
      {"DropoutProbabilityOne",
       Stage::parse,
       "4:44",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "drop", "op": "dropout", "p": 1}
  ]
}
)json",
       {"layer 'drop' (dropout): attribute 'p' must be a probability in [0, 1), got 1"}},
      {"DropoutProbabilityNegative",
       Stage::parse,
       "4:44",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "drop", "op": "dropout", "p": -0.1}
  ]
}
)json",
       {"attribute 'p' must be a probability in [0, 1), got -0.1"}},
      {"EpsZero",
       Stage::parse,
       "4:46",
       R"json({
  "input": {"shape": [4, 8]},
  "layers": [
    {"name": "ln", "op": "layernorm", "eps": 0}
  ]
}
)json",
       {"layer 'ln' (layernorm): attribute 'eps' must be a number in (0, 1], got 0"}},
      {"GeluApproximation",
       Stage::parse,
       "4:50",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "act", "op": "gelu", "approximate": "fast"}
  ]
}
)json",
       {"attribute 'approximate' must be \"none\" (the erf form) or \"tanh\", got the string \"fast\""}},

      // inputs and names
      {"UnknownInputWithSuggestion",
       Stage::parse,
       "5:46",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "encoder", "op": "linear", "out_features": 8},
    {"name": "act", "op": "relu", "inputs": ["encodr"]}
  ]
}
)json",
       {"layer 'act' (relu): no earlier layer is named 'encodr' (did you mean 'encoder'?)", "or \"$input\""}},
      {"InputIsALaterLayer",
       Stage::parse,
       "4:44",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu", "inputs": ["b"]},
    {"name": "b", "op": "relu"}
  ]
}
)json",
       {"layer 'a' (relu): no earlier layer is named 'b'"}},
      {"InputsNotAList",
       Stage::parse,
       "5:43",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "b", "op": "relu", "inputs": "a"}
  ]
}
)json",
       {"layer 'b' (relu): \"inputs\" must be a non-empty list of layer names, got the string \"a\""}},
      {"InputNotAString",
       Stage::parse,
       "5:44",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "b", "op": "relu", "inputs": [0]}
  ]
}
)json",
       {"layer 'b' (relu): inputs are layer names (strings), got 0"}},
      {"DuplicateLayerName",
       Stage::parse,
       "5:14",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "a", "op": "gelu"}
  ]
}
)json",
       {"layer 'a' (gelu): duplicate name; first defined at bad.json:4:5"}},
      {"AddOfUnequalShapes",
       Stage::parse,
       "5:44",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "conv", "op": "conv2d", "out_channels": 4, "kernel": 3},
    {"name": "sum", "op": "add", "inputs": ["conv", "$input"]}
  ]
}
)json",
       {"layer 'sum' (add): add takes two tensors of one rank whose every axis is equal or 1 in one of them, got [4, 6, 6] and [3, 8, 8]"}},
      {"MulOfDifferentRanks",
       Stage::parse,
       "7:44",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "pool", "op": "adaptive_avgpool2d"},
    {"name": "prod", "op": "mul", "inputs": ["$input", "pool"]},
    {"name": "flat", "op": "flatten", "inputs": ["$input"]},
    {"name": "bad", "op": "div", "inputs": ["flat", "prod"]}
  ]
}
)json",
       {"layer 'bad' (div): div takes two tensors of one rank whose every axis is equal or 1 in one of them, got [192] and [3, 8, 8]"}},
      {"AddWithOneInput",
       Stage::parse,
       "5:44",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "sum", "op": "add", "inputs": ["a"]}
  ]
}
)json",
       {"layer 'sum' (add): takes 2 inputs, or 1 and an 'operand' (the per-sample shape of the tensor it is combined with), got 1"}},
      {"OperandThatWidensTheInput",
       Stage::parse,
       "4:43",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "s", "op": "mul", "operand": [2, 8], "trainable": true}
  ]
}
)json",
       {"layer 's' (mul): the operand [2, 8] does not broadcast to the input [8]"}},
      {"OperandWithTwoInputs",
       Stage::parse,
       "5:70",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "s", "op": "add", "inputs": ["a", "$input"], "operand": [8]}
  ]
}
)json",
       {"layer 's' (add): 'operand' and 'trainable' are for a layer of one input; this one has 2"}},
      {"AddWithoutInputs",
       Stage::parse,
       "5:5",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "a", "op": "relu"},
    {"name": "sum", "op": "add"}
  ]
}
)json",
       {"layer 'sum' (add): takes 2 inputs, or 1 and an 'operand' (the per-sample shape of the tensor it is combined with), got 1 (no \"inputs\" "
        "given: the previous layer's output)"}},
      {"ConcatMismatch",
       Stage::parse,
       "5:47",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "pool", "op": "maxpool2d", "kernel": 2},
    {"name": "cat", "op": "concat", "inputs": ["pool", "$input"]}
  ]
}
)json",
       {"layer 'cat' (concat): inputs must match in dtype and in every axis but 0: [3, 4, 4] and [3, 8, 8]"}},
      {"ConcatWithOneInput",
       Stage::parse,
       "4:47",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "cat", "op": "concat", "inputs": ["$input"]}
  ]
}
)json",
       {"layer 'cat' (concat): takes at least 2 inputs, got 1"}},

      // shape rules
      {"KernelLargerThanPaddedInput",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [3, 4, 4]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 7, "padding": 1}
  ]
}
)json",
       {"layer 'c' (conv2d): the kernel 7x7 (dilation 1x1) is larger than the padded input 6x6"}},
      {"DilatedKernelLargerThanInput",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "dilation": 4}
  ]
}
)json",
       {"layer 'c' (conv2d): the kernel 3x3 (dilation 4x4) is larger than the padded input 8x8"}},
      {"GroupsNotDividingChannels",
       Stage::parse,
       "4:77",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3, "groups": 2}
  ]
}
)json",
       {"layer 'c' (conv2d): groups = 2 must divide the input channels (3)"}},
      {"ConvOnAVector",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 3}
  ]
}
)json",
       {"layer 'c' (conv2d): expects a [C, H, W] input, got [8]"}},
      {"PoolPaddingOverHalfTheKernel",
       Stage::parse,
       "4:62",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "p", "op": "maxpool2d", "kernel": 3, "padding": 2}
  ]
}
)json",
       {"layer 'p' (maxpool2d): padding must be at most half the kernel (PyTorch's rule), got padding 2x2 for kernel 3x3"}},
      {"PoolKernelLargerThanInput",
       Stage::parse,
       "4:48",
       R"json({
  "input": {"shape": [3, 2, 2]},
  "layers": [
    {"name": "p", "op": "avgpool2d", "kernel": 3, "padding": 0}
  ]
}
)json",
       {"layer 'p' (avgpool2d): the kernel 3x3 is larger than the padded input 2x2"}},
      {"ReshapeElementCount",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "r", "op": "reshape", "shape": [10, 20]}
  ]
}
)json",
       {"layer 'r' (reshape): cannot reshape [3, 8, 8] (192 elements) to [10, 20] (200 elements)"}},
      {"ReshapeTwoMinusOnes",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "r", "op": "reshape", "shape": [-1, -1]}
  ]
}
)json",
       {"layer 'r' (reshape): at most one size may be -1"}},
      {"ReshapeNotDivisible",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "r", "op": "reshape", "shape": [-1, 5]}
  ]
}
)json",
       {"layer 'r' (reshape): cannot reshape [3, 8, 8] (192 elements) to [-1, 5]"}},
      {"ReshapeZero",
       Stage::parse,
       "4:46",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "r", "op": "reshape", "shape": [0, 192]}
  ]
}
)json",
       {"layer 'r' (reshape): attribute 'shape': dimension 0 must be a positive integer or -1, got 0"}},
      {"ReshapeToHugeSizes",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "r", "op": "reshape", "shape": [4294967296, 4294967296]}
  ]
}
)json",
       {"layer 'r' (reshape): the shape's element count overflows 64-bit integers"}},
      {"TransposeNotAPermutation",
       Stage::parse,
       "4:46",
       R"json({
  "input": {"shape": [4, 6]},
  "layers": [
    {"name": "t", "op": "transpose", "perm": [0, 0]}
  ]
}
)json",
       {"layer 't' (transpose): perm must be a permutation of 0..1, got [0, 0]"}},
      {"TransposeWrongRank",
       Stage::parse,
       "4:46",
       R"json({
  "input": {"shape": [4, 6]},
  "layers": [
    {"name": "t", "op": "transpose", "perm": [1, 0, 2]}
  ]
}
)json",
       {"layer 't' (transpose): perm has 3 axes but the per-sample input [4, 6] has 2"}},
      {"EmbeddingOnFloatInput",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [16]},
  "layers": [
    {"name": "emb", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8}
  ]
}
)json",
       {"layer 'emb' (embedding): expects int32 token ids of shape [T], got float32 [16]"}},
      {"LinearOnTokenIds",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 8}
  ]
}
)json",
       {"layer 'fc' (linear): expects float32 input, got int32 token ids; add an embedding first"}},
      {"AttentionHeadsNotDividingWidth",
       Stage::parse,
       "5:50",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "emb", "op": "embedding", "num_embeddings": 100, "embedding_dim": 30},
    {"name": "attn", "op": "attention", "heads": 4}
  ]
}
)json",
       {"layer 'attn' (attention): heads = 4 must divide the model width D = 30"}},
      {"AttentionOnImages",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [3, 8, 8]},
  "layers": [
    {"name": "attn", "op": "attention", "heads": 1}
  ]
}
)json",
       {"layer 'attn' (attention): expects a float32 [T, D] input, got float32 [3, 8, 8]"}},
      {"PosEmbeddingShorterThanSequence",
       Stage::parse,
       "5:61",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "emb", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "pos", "op": "pos_embedding", "num_positions": 8}
  ]
}
)json",
       {"layer 'pos' (pos_embedding): the sequence has 16 positions but num_positions is 8"}},
      {"SelectIndexOutOfRange",
       Stage::parse,
       "4:46",
       R"json({
  "input": {"shape": [2, 16], "dtype": "int32"},
  "layers": [
    {"name": "ids", "op": "select", "index": 2}
  ]
}
)json",
       {"layer 'ids' (select): index 2 is out of range for axis 0 of size 2"}},
      {"SelectNegativeIndexOutOfRange",
       Stage::parse,
       "4:57",
       R"json({
  "input": {"shape": [2, 16], "dtype": "int32"},
  "layers": [
    {"name": "ids", "op": "select", "axis": 1, "index": -17}
  ]
}
)json",
       {"layer 'ids' (select): index -17 is out of range for axis 1 of size 16"}},
      {"SelectAxisOutOfRange",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [2, 16], "dtype": "int32"},
  "layers": [
    {"name": "ids", "op": "select", "axis": 2, "index": 0}
  ]
}
)json",
       {"layer 'ids' (select): axis 2 is out of range for a per-sample input [2, 16]"}},
      {"SelectOfAVector",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4]},
  "layers": [
    {"name": "first", "op": "select", "index": 0},
    {"name": "fc", "op": "linear", "out_features": 3}
  ]
}
)json",
       {"layer 'first' (select): needs an input of at least 2 axes", "got [4]"}},
      {"SoftmaxAxisOutOfRange",
       Stage::parse,
       "4:45",
       R"json({
  "input": {"shape": [10]},
  "layers": [
    {"name": "sm", "op": "softmax", "axis": 1}
  ]
}
)json",
       {"layer 'sm' (softmax): axis 1 is out of range for a per-sample input [10] (valid: -1 to 0; the batch dimension is not counted)"}},
      {"TiedToUnknownLayer",
       Stage::parse,
       "5:70",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "wte", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "head", "op": "linear", "out_features": 100, "tied_to": "wte2"}
  ]
}
)json",
       {"layer 'head' (linear): 'tied_to': no earlier layer is named 'wte2' (did you mean 'wte'?)"}},
      {"TiedToARelu",
       Stage::parse,
       "6:70",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "wte", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "act", "op": "relu"},
    {"name": "head", "op": "linear", "out_features": 100, "tied_to": "act"}
  ]
}
)json",
       {"layer 'head' (linear): 'tied_to' must name an embedding or linear layer; 'act' is relu"}},
      {"TiedToTheModelInput",
       Stage::parse,
       "5:70",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "wte", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "head", "op": "linear", "out_features": 100, "tied_to": "$input"}
  ]
}
)json",
       {"layer 'head' (linear): 'tied_to' must name an earlier embedding or linear layer, not \"$input\""}},
      {"TiedToAMismatchedShape",
       Stage::parse,
       "5:69",
       R"json({
  "input": {"shape": [16], "dtype": "int32"},
  "layers": [
    {"name": "wte", "op": "embedding", "num_embeddings": 100, "embedding_dim": 8},
    {"name": "head", "op": "linear", "out_features": 50, "tied_to": "wte"}
  ]
}
)json",
       {"layer 'head' (linear): 'tied_to' wte has a weight of shape [100, 8] but this layer needs [out_features, in_features] = [50, 8]"}},
      {"TiedToNotAString",
       Stage::parse,
       "5:68",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 8},
    {"name": "head", "op": "linear", "out_features": 8, "tied_to": 1}
  ]
}
)json",
       {"layer 'head' (linear): attribute 'tied_to' must be the name of an earlier embedding or linear layer, got 1"}},

      // repeat
      {"RepeatZero",
       Stage::parse,
       "4:16",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 0, "name": "h", "layers": [
      {"name": "fc", "op": "linear", "out_features": 8}
    ]}
  ]
}
)json",
       {"\"repeat\" must be a positive integer, got 0"}},
      {"RepeatWithoutName",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "layers": [
      {"name": "fc", "op": "linear", "out_features": 8}
    ]}
  ]
}
)json",
       {"a repeat block needs a \"name\" (a string) that prefixes its copies"}},
      {"RepeatWithoutLayers",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "name": "h", "layers": []}
  ]
}
)json",
       {"repeat block 'h' needs \"layers\": a non-empty array of layers to repeat"}},
      {"RepeatMisspelledKey",
       Stage::parse,
       "4:32",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "name": "h", "layer": [
      {"name": "fc", "op": "linear", "out_features": 8}
    ]}
  ]
}
)json",
       {"unknown key \"layer\" in repeat block (did you mean 'layers'?)"}},
      {"RepeatNegativeStart",
       Stage::parse,
       "4:41",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 2, "name": "h", "start": -1, "layers": [
      {"name": "fc", "op": "linear", "out_features": 8}
    ]}
  ]
}
)json",
       {"\"start\" must be a non-negative integer, got -1"}},
      {"RepeatBeyondTheLayerLimit",
       Stage::parse,
       "3:13",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 1000000000, "name": "h", "layers": [
      {"name": "act", "op": "relu"}
    ]}
  ]
}
)json",
       {"the model expands to more than 1000000 layers; that is the limit"}},
      {"NestedRepeatsBeyondTheLayerLimit",
       Stage::parse,
       "3:13",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 1000, "name": "a", "layers": [
      {"repeat": 1000, "name": "b", "layers": [
        {"name": "act", "op": "relu"},
        {"name": "act2", "op": "relu"}
      ]}
    ]}
  ]
}
)json",
       {"the model expands to more than 1000000 layers"}},
      {"ErrorInsideARepeatCopyNamesTheCopy",
       Stage::parse,
       "6:53",
       R"json({
  "input": {"shape": [8]},
  "layers": [
    {"repeat": 3, "name": "h", "layers": [
      {"name": "fc", "op": "linear", "out_features": 8},
      {"name": "sum", "op": "add", "inputs": ["fc", "h.1.fc"]}
    ]}
  ]
}
)json",
       {"layer 'h.0.sum' (add): no earlier layer is named 'h.1.fc'"}},

      // overflow
      {"OutputTooLargeToCount",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [4096]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 4611686018427387904}
  ]
}
)json",
       {"layer 'fc' (linear): the output [4611686018427387904] is too large", "overflow 64-bit integers"}},
      {"HugePaddingOverflowsTheOutput",
       Stage::parse,
       "4:5",
       R"json({
  "input": {"shape": [1, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 1, "kernel": 1, "padding": 9223372036854775807}
  ]
}
)json",
       {"layer 'c' (conv2d): the output [1, 9223372036854775807, 9223372036854775807] has an element count that overflows 64-bit integers"}},
      {"HugeDilatedKernel",
       Stage::parse,
       "4:64",
       R"json({
  "input": {"shape": [1, 8, 8]},
  "layers": [
    {"name": "c", "op": "conv2d", "out_channels": 1, "kernel": 9223372036854775807, "dilation": 2, "padding": 4611686018427387904}
  ]
}
)json",
       {"layer 'c' (conv2d): the kernel 9223372036854775807x9223372036854775807 (dilation 2x2) is larger than the padded input "
        "(8+2*4611686018427387904)x(8+2*4611686018427387904)"}},
      {"HugePoolPadding",
       Stage::parse,
       "4:62",
       R"json({
  "input": {"shape": [1, 8, 8]},
  "layers": [
    {"name": "p", "op": "maxpool2d", "kernel": 3, "padding": 4611686018427387904}
  ]
}
)json",
       {"layer 'p' (maxpool2d): padding must be at most half the kernel"}},
      {"ParametersOverflowInAnalyze",
       Stage::analyze,
       "4:5",
       R"json({
  "input": {"shape": [4294967296]},
  "layers": [
    {"name": "fc", "op": "linear", "out_features": 4294967296}
  ]
}
)json",
       {"layer 'fc' (linear): its parameter count would overflow 64-bit integers", "64-bit integers"}},
      {"PoolFlopsOverflowInAnalyze",
       Stage::analyze,
       "4:5",
       R"json({
  "input": {"shape": [1, 8, 8]},
  "layers": [
    {"name": "p", "op": "maxpool2d", "kernel": 9223372036854775807, "padding": 4611686018427387903}
  ]
}
)json",
       {"layer 'p' (maxpool2d): its FLOPs would overflow 64-bit integers", "64-bit integers"}},
  };
  return cases;
}

std::string error_of(const MalformedCase& c) {
  auto graph = parse_model(c.text, "bad.json");
  if (c.stage == Stage::parse) {
    if (graph.ok()) return "<parse_model accepted the spec>";
    return graph.error().message;
  }
  if (!graph.ok()) return "<parse_model failed: " + graph.error().message + ">";
  auto cost = analyze(*graph);
  if (cost.ok()) return "<analyze accepted the spec>";
  return cost.error().message;
}

class MalformedSpec : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedSpec, FailsWithLocationAndReason) {
  const MalformedCase& c = GetParam();
  const std::string message = error_of(c);
  EXPECT_THAT(message, StartsWith("bad.json:" + std::string(c.location) + ": "));
  for (const std::string& word : c.words) EXPECT_THAT(message, HasSubstr(word));
}

INSTANTIATE_TEST_SUITE_P(Malformed, MalformedSpec, ::testing::ValuesIn(malformed_cases()),
                         [](const ::testing::TestParamInfo<MalformedCase>& row) { return std::string(row.param.label); });

TEST(MalformedSpecTable, HasOneRowPerLabel) {
  std::vector<std::string> labels;
  for (const auto& c : malformed_cases()) labels.emplace_back(c.label);
  std::sort(labels.begin(), labels.end());
  EXPECT_EQ(std::adjacent_find(labels.begin(), labels.end()), labels.end());
  EXPECT_GE(labels.size(), 35U);
}

// ---- specs too large or too deep to write inline ---------------------------------------------

// `depth` repeat blocks nested one per line, the innermost holding one relu.
std::string nested_repeats(int depth) {
  std::string text = "{\n  \"input\": {\"shape\": [8]},\n  \"layers\": [\n";
  for (int i = 0; i < depth; ++i) text += "    {\"repeat\": 1, \"name\": \"r" + std::to_string(i) + "\", \"layers\": [\n";
  text += "      {\"name\": \"act\", \"op\": \"relu\"}\n";
  for (int i = 0; i < depth; ++i) text += "    ]}\n";
  return text + "  ]\n}\n";
}

TEST(MalformedSpecLimits, RepeatsNestUpToTheLimit) {
  auto graph = parse_model(nested_repeats(kMaxRepeatNesting), "deep.json");
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_EQ(graph->nodes.size(), 1U);
  std::string name;
  for (int i = 0; i < kMaxRepeatNesting; ++i) name += "r" + std::to_string(i) + ".0.";
  EXPECT_EQ(graph->nodes[0].name, name + "act");
}

TEST(MalformedSpecLimits, RepeatsNestingDeeperThanTheLimitFail) {
  auto graph = parse_model(nested_repeats(kMaxRepeatNesting + 1), "deep.json");
  ASSERT_FALSE(graph.ok());
  // The innermost block (line 3 + 33) is the one too deep; the message points at its layers.
  const std::string line = std::to_string(3 + kMaxRepeatNesting + 1);
  const std::string column = std::to_string(std::string("    {\"repeat\": 1, \"name\": \"r32\", \"layers\": ").size() + 1);
  EXPECT_THAT(graph.error().message, StartsWith("deep.json:" + line + ":" + column + ": "));
  EXPECT_THAT(graph.error().message, HasSubstr("repeats nest more than 32 deep"));
}

TEST(MalformedSpecLimits, NestingDeeperThan256LevelsIsRefusedBeforeParsing) {
  // Parsed, 100,000 levels took seconds and hundreds of MB (a 64 MiB file of '[' 86 s and
  // 11.4 GB): the nesting is checked first, and the message points at the level too deep.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto top = parse_model(deep, "deep.json");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.error().message,
            "deep.json:1:257: JSON nesting deeper than 256 levels; no hwprof file nests so deep (damaged or not a hwprof file?)");

  const std::string head = "{\"input\": {\"shape\": [8]},\n \"layers\": [{\"name\": \"fc\", \"op\": \"linear\", \"out_features\": ";
  auto attribute = parse_model(head + deep + "}]}", "deep.json");
  ASSERT_FALSE(attribute.ok());
  // Three levels are open where the value starts (column 60 of line 2): level 257 is its 254th '['.
  EXPECT_THAT(attribute.error().message, StartsWith("deep.json:2:" + std::to_string(60 + 253) + ": JSON nesting deeper than 256"));

  auto unterminated = parse_model(std::string(100000, '['), "deep.json");
  ASSERT_FALSE(unterminated.ok());
  EXPECT_THAT(unterminated.error().message, StartsWith("deep.json:1:257: JSON nesting deeper than 256 levels"));

  // Within the limit, the spec's own checks speak, the value shown cut short.
  const std::string within = std::string(250, '[') + std::string(250, ']');
  auto shallow = parse_model(head + within + "}]}", "deep.json");
  ASSERT_FALSE(shallow.ok());
  EXPECT_THAT(shallow.error().message, StartsWith("deep.json:2:60: layer 'fc' (linear): attribute 'out_features' must be"));
  EXPECT_LT(shallow.error().message.size(), 300U);
  auto layer = parse_model("{\"input\": {\"shape\": [8]}, \"layers\": [" + within + "]}", "deep.json");
  ASSERT_FALSE(layer.ok());
  EXPECT_THAT(layer.error().message, StartsWith("deep.json:1:38: each layer must be an object"));
}

TEST(MalformedSpecLimits, SpecLargerThanTheLimitFails) {
  const std::string huge(static_cast<std::size_t>(kMaxSpecBytes) + 1, ' ');
  auto graph = parse_model(huge, "huge.json");
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.error().message, StartsWith("huge.json: the spec is 67108865 bytes; the limit is 67108864 bytes"));
}

TEST(MalformedSpecLimits, BytesOverflowingAtAHugeBatchFailInAnalyze) {
  auto graph = parse_model(R"json({
  "input": {"shape": [1048576]},
  "layers": [
    {"name": "act", "op": "relu"}
  ]
})json",
                           "batch.json");
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  EXPECT_TRUE(analyze(*graph, {.batch = 1024}).ok());
  auto cost = analyze(*graph, {.batch = std::int64_t{1} << 50});
  ASSERT_FALSE(cost.ok());
  EXPECT_THAT(cost.error().message, StartsWith("batch.json:4:5: layer 'act' (relu): "));
  EXPECT_THAT(cost.error().message, HasSubstr("overflow"));
}

}  // namespace
}  // namespace hwprof
