// ONNX import (src/graph/onnx_import.cpp) on models built here with the ONNX protobuf types:
// names from PyTorch's module paths, exact params, per-sample shapes, the initializers as the
// layers' initial values, and a clear error for what cannot be mapped.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/shape_inference.hpp"
#include "graph_support.hpp"
#include "hwprof/engine/cost.hpp"
#include "hwprof/engine/graph.hpp"
#include "scratch_dir.hpp"

namespace hwprof {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A small builder for ModelProtos written the way torch.onnx.export writes them.
class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13, std::vector<std::int64_t> input = {1, 28, 28}) {
    model_.set_ir_version(8);
    auto* op = model_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    auto* g = model_.mutable_graph();
    g->set_name("main_graph");
    auto* in = g->add_input();
    in->set_name("input");
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    t->mutable_shape()->add_dim()->set_dim_param("batch");
    for (std::int64_t d : input) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // An initializer whose values are 0.001·(index+1), so that every weight is distinct.
  void init(const std::string& name, std::vector<std::int64_t> dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    std::int64_t n = 1;
    for (std::int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (std::int64_t i = 0; i < n; ++i) t->add_float_data(0.001f * static_cast<float>(i + 1));
  }
  onnx::NodeProto& node(const std::string& op, const std::string& name, std::vector<std::string> inputs, std::string output) {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(output);
    last_ = output;
    return *n;
  }
  static void ints(onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void real(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(v);
  }
  static void integer(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  // The output as exporters declare it: its rank, every dimension named (shape inference
  // fills in the sizes).
  std::string bytes(int output_rank = 2) {
    auto* out = model_.mutable_graph()->add_output();
    out->set_name(last_);
    auto* t = out->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    auto* shape = t->mutable_shape();
    for (int i = 0; i < output_rank; ++i) shape->add_dim()->set_dim_param(i == 0 ? "batch" : "d" + std::to_string(i));
    return model_.SerializeAsString();
  }
  onnx::ModelProto& model() { return model_; }

 private:
  onnx::ModelProto model_;
  std::string last_;
};

std::string lenet5() {
  ModelBuilder b;
  b.init("conv1.weight", {6, 1, 5, 5});
  b.init("conv1.bias", {6});
  b.init("conv2.weight", {16, 6, 5, 5});
  b.init("conv2.bias", {16});
  b.init("fc1.weight", {120, 400});
  b.init("fc1.bias", {120});
  b.init("fc2.weight", {120, 84});  // a MatMul's B is [in, out]
  b.init("fc2.bias", {84});
  b.init("fc3.weight", {10, 84});
  b.init("fc3.bias", {10});
  auto& c1 = b.node("Conv", "/conv1/Conv", {"input", "conv1.weight", "conv1.bias"}, "c1");
  ModelBuilder::ints(c1, "kernel_shape", {5, 5});
  ModelBuilder::ints(c1, "pads", {2, 2, 2, 2});
  b.node("Relu", "/relu/Relu", {"c1"}, "r1");
  auto& p1 = b.node("MaxPool", "/pool/MaxPool", {"r1"}, "p1");
  ModelBuilder::ints(p1, "kernel_shape", {2, 2});
  ModelBuilder::ints(p1, "strides", {2, 2});
  auto& c2 = b.node("Conv", "/conv2/Conv", {"p1", "conv2.weight", "conv2.bias"}, "c2");
  ModelBuilder::ints(c2, "kernel_shape", {5, 5});
  b.node("Relu", "/relu_1/Relu", {"c2"}, "r2");
  auto& p2 = b.node("MaxPool", "/pool_1/MaxPool", {"r2"}, "p2");
  ModelBuilder::ints(p2, "kernel_shape", {2, 2});
  ModelBuilder::ints(p2, "strides", {2, 2});
  b.node("Flatten", "/Flatten", {"p2"}, "f");
  auto& g1 = b.node("Gemm", "/fc1/Gemm", {"f", "fc1.weight", "fc1.bias"}, "g1");
  ModelBuilder::integer(g1, "transB", 1);
  b.node("Relu", "/relu_2/Relu", {"g1"}, "r3");
  b.node("MatMul", "/fc2/MatMul", {"r3", "fc2.weight"}, "m2");
  b.node("Add", "/fc2/Add", {"m2", "fc2.bias"}, "a2");
  b.node("Relu", "/relu_3/Relu", {"a2"}, "r4");
  auto& g3 = b.node("Gemm", "/fc3/Gemm", {"r4", "fc3.weight", "fc3.bias"}, "output");
  ModelBuilder::integer(g3, "transB", 1);
  return b.bytes();
}

using ::hwprof::test::names_of;

TEST(OnnxImport, LeNetFiveGetsModuleNamesExactParamsAndPerSampleShapes) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = import_onnx(lenet5(), "models/lenet5.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->name, "lenet5");
  EXPECT_THAT(names_of(*g),
              ::testing::ElementsAre("conv1", "relu", "pool", "conv2", "relu_1", "pool_1", "flatten", "fc1", "relu_2", "fc2", "relu_3", "fc3"));
  EXPECT_EQ(g->input.shape, (Shape{1, 28, 28}));
  EXPECT_EQ(g->nodes.back().output_shape, (Shape{10}));
  // conv1 6·25+6, conv2 16·150+16, fc1 400·120+120, fc2 120·84+84, fc3 84·10+10.
  EXPECT_EQ(count_parameters(*g).value(), 156 + 2416 + 48120 + 10164 + 850);
  EXPECT_EQ(count_macs(*g).value(), 117600 + 240000 + 48000 + 10080 + 840);
}

TEST(OnnxImport, InitializersBecomeInitialValuesInTheEnginesLayout) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = import_onnx(lenet5(), "lenet5.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  const Node& fc2 = g->nodes[static_cast<std::size_t>(g->find("fc2"))];
  EXPECT_TRUE(fc2.attrs.bias) << "the Add after the MatMul is the linear layer's bias";
  ASSERT_EQ(fc2.initial_values.size(), 2u);
  const InitialValue& w = fc2.initial_values[0];
  EXPECT_EQ(w.name, "weight");
  EXPECT_EQ(w.shape, (Shape{84, 120}));
  // The MatMul's B is [120, 84] with B[i][j] = 0.001·(84·i + j + 1); the weight is its transpose.
  EXPECT_FLOAT_EQ((*w.data)[1 * 120 + 2], 0.001f * (84 * 2 + 1 + 1));
  EXPECT_EQ(fc2.initial_values[1].name, "bias");
  const Node& conv1 = g->nodes[0];
  ASSERT_EQ(conv1.initial_values.size(), 2u);
  EXPECT_EQ(conv1.initial_values[0].shape, (Shape{6, 1, 5, 5}));
  EXPECT_EQ(conv1.attrs.padding.h, 2);
}

TEST(OnnxImport, EveryUnsupportedNodeIsListedAtOnce) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {8});
  b.node("Erf", "/a/Erf", {"input"}, "e");
  b.node("Relu", "/b/Relu", {"e"}, "r");
  b.node("Acosh", "/c/Acosh", {"r"}, "output");
  auto g = import_onnx(b.bytes(), "two.onnx");
  ASSERT_FALSE(g.ok());
  // The Relu between them would map; the Acosh after it is named too, not skipped.
  EXPECT_THAT(g.error().message, HasSubstr("two.onnx: 2 nodes cannot be mapped"));
  EXPECT_THAT(g.error().message, HasSubstr("Erf '/a/Erf' (opset 13)"));
  EXPECT_THAT(g.error().message, HasSubstr("Acosh '/c/Acosh' (opset 13)"));
  EXPECT_THAT(g.error().message, Not(HasSubstr("Relu")));
}

TEST(OnnxImport, BadFilesAreClearErrors) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const std::string good = lenet5();
  EXPECT_THAT(import_onnx(good.substr(0, 500), "t.onnx").error().message, HasSubstr("t.onnx: not a valid ONNX model"));
  EXPECT_THAT(import_onnx("", "e.onnx").error().message, HasSubstr("e.onnx: the file is empty"));
  ModelBuilder old(9);
  old.node("Relu", "/r/Relu", {"input"}, "output");
  EXPECT_THAT(import_onnx(old.bytes(), "old.onnx").error().message, HasSubstr("opset 9; hwprof reads opsets 11 to 17"));
}

class OnnxExternalData : public test::ScratchDirTest {};

TEST_F(OnnxExternalData, ALocationOutsideTheModelsFolderIsRefused) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {4});
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto_DataType_FLOAT);
  t->add_dims(4);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value("../../etc/passwd");
  b.node("MatMul", "/fc/MatMul", {"input", "w"}, "output");
  const std::string path = put("m/model.onnx", b.bytes());
  auto g = load_model(path);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("outside the model's folder"));
}

TEST_F(OnnxExternalData, AFileWithoutTheOnnxNameIsRecognisedByItsContent) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const std::string path = put("lenet5.bin", lenet5());
  auto g = load_model(path);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->nodes.size(), 12u);
}

// --- attributes a formula divides by, sizes with or counts with (src/graph/onnx_attributes.cpp) ---

// A model of one Conv (or ConvTranspose) of [3, 8, 8] with a 3x3 kernel and `attribute` set.
std::string conv_with(const std::string& op, const std::string& attribute, std::vector<std::int64_t> values, bool scalar = false) {
  ModelBuilder b(13, {3, 8, 8});
  b.init("w", op == "Conv" ? std::vector<std::int64_t>{4, 3, 3, 3} : std::vector<std::int64_t>{3, 4, 3, 3});
  auto& n = b.node(op, "conv1", {"input", "w"}, "output");
  if (scalar) {
    ModelBuilder::integer(n, attribute, values.at(0));
  } else {
    ModelBuilder::ints(n, attribute, values);
  }
  return b.bytes(4);
}

struct BadAttribute {
  std::string op, attribute;
  std::vector<std::int64_t> values;
  bool scalar;
  std::string message;
};

class OnnxBadAttribute : public ::testing::TestWithParam<BadAttribute> {};

TEST_P(OnnxBadAttribute, IsRefusedNamingTheFileTheNodeAndTheAttribute) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const BadAttribute& p = GetParam();
  auto g = import_onnx(conv_with(p.op, p.attribute, p.values, p.scalar), "m.onnx");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("m.onnx: node 'conv1' (" + p.op + "): " + p.message));
}

constexpr std::int64_t kHuge = std::int64_t{1} << 62;

INSTANTIATE_TEST_SUITE_P(
    ConvAndConvTranspose, OnnxBadAttribute,
    ::testing::Values(BadAttribute{"Conv", "strides", {0, 0}, false, "attribute strides has 0 at position 0; strides must be >= 1"},
                      BadAttribute{"Conv", "strides", {1, -2}, false, "attribute strides has -2 at position 1"},
                      BadAttribute{
                          "Conv", "strides", {kHuge, 1}, false, "attribute strides has 4611686018427387904 at position 0; strides must be at most"},
                      BadAttribute{"Conv", "dilations", {0, 0}, false, "attribute dilations has 0"},
                      BadAttribute{"Conv", "kernel_shape", {0, 0}, false, "attribute kernel_shape has 0"},
                      BadAttribute{"Conv", "group", {0}, true, "attribute group is 0; group must be >= 1"},
                      BadAttribute{"Conv", "group", {-1}, true, "attribute group is -1"},
                      BadAttribute{"Conv", "pads", {-1, -1, -1, -1}, false, "attribute pads has -1 at position 0; pads must be >= 0"},
                      BadAttribute{"Conv", "pads", {kHuge, 0, kHuge, 0}, false, "attribute pads has 4611686018427387904"},
                      BadAttribute{"Conv", "pads", {1, 1, 1}, false, "attribute pads has 3 values"},
                      BadAttribute{"ConvTranspose", "strides", {0, 0}, false, "attribute strides has 0"},
                      BadAttribute{"ConvTranspose", "group", {0}, true, "attribute group is 0"},
                      BadAttribute{"ConvTranspose", "output_padding", {-1, 0}, false, "attribute output_padding has -1"}));

TEST(OnnxImport, APoolWithAZeroKernelOrStrideIsRefused) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  for (const char* op : {"MaxPool", "AveragePool"}) {
    ModelBuilder zero_kernel(13, {3, 8, 8});
    ModelBuilder::ints(zero_kernel.node(op, "pool1", {"input"}, "output"), "kernel_shape", {0, 0});
    EXPECT_THAT(import_onnx(zero_kernel.bytes(4), "p.onnx").error().message,
                HasSubstr("p.onnx: node 'pool1' (" + std::string(op) + "): attribute kernel_shape has 0 at position 0"));
    ModelBuilder zero_stride(13, {3, 8, 8});
    auto& n = zero_stride.node(op, "pool1", {"input"}, "output");
    ModelBuilder::ints(n, "kernel_shape", {2, 2});
    ModelBuilder::ints(n, "strides", {2, 0});
    EXPECT_THAT(import_onnx(zero_stride.bytes(4), "p.onnx").error().message, HasSubstr("attribute strides has 0 at position 1"));
  }
}

TEST(OnnxImport, OtherCountsAndSizesAreChecked) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder d2s(13, {4, 2, 2});
  ModelBuilder::integer(d2s.node("DepthToSpace", "d2s", {"input"}, "output"), "blocksize", 0);
  EXPECT_THAT(import_onnx(d2s.bytes(4), "d.onnx").error().message, HasSubstr("node 'd2s' (DepthToSpace): attribute blocksize is 0"));
  ModelBuilder softmax(13, {4});
  ModelBuilder::integer(softmax.node("Softmax", "sm", {"input"}, "output"), "axis", 1000);
  EXPECT_THAT(import_onnx(softmax.bytes(), "s.onnx").error().message, HasSubstr("node 'sm' (Softmax): attribute axis is 1000"));
  ModelBuilder bn(13, {3, 4, 4});
  for (const char* t : {"s", "b", "m", "v"}) bn.init(t, {3});
  auto& n = bn.node("BatchNormalization", "bn", {"input", "s", "b", "m", "v"}, "output");
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  eps->set_f(std::numeric_limits<float>::quiet_NaN());
  EXPECT_THAT(import_onnx(bn.bytes(4), "b.onnx").error().message, HasSubstr("node 'bn' (BatchNormalization): attribute epsilon is nan"));
}

TEST(OnnxImport, ANodeInsideASubgraphIsCheckedToo) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {3, 8, 8});
  auto& branch = b.node("If", "if", {"input"}, "output");
  auto* g = branch.add_attribute();
  g->set_name("then_branch");
  g->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  auto* pool = g->mutable_g()->add_node();
  pool->set_op_type("MaxPool");
  pool->set_name("inner");
  auto* k = pool->add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto_AttributeType_INTS);
  k->add_ints(0);
  k->add_ints(0);
  EXPECT_THAT(import_onnx(b.bytes(4), "i.onnx").error().message, HasSubstr("node 'inner' (MaxPool): attribute kernel_shape has 0"));
}

// --- Resize and Upsample: F.interpolate as PyTorch's exporter writes it ------------------------

void text_attribute(onnx::NodeProto& n, const std::string& name, const std::string& value) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s(value);
}

void tensor_initializer(ModelBuilder& b, const std::string& name, std::vector<float> floats, std::vector<std::int64_t> ints = {}) {
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(ints.empty() ? onnx::TensorProto_DataType_FLOAT : onnx::TensorProto_DataType_INT64);
  t->add_dims(static_cast<std::int64_t>(ints.empty() ? floats.size() : ints.size()));
  for (float f : floats) t->add_float_data(f);
  for (std::int64_t i : ints) t->add_int64_data(i);
}

// One Resize of a [N, 2, 6, 5] input by scales [1, 1, 2, 3] (or to constant sizes
// [1, 2, 9, 4]), with the given string attributes.
Result<Graph> resize(const std::string& op, int opset, std::vector<std::pair<std::string, std::string>> attributes, bool sizes = false) {
  ModelBuilder b(opset, {2, 6, 5});
  tensor_initializer(b, "scales", {1.0f, 1.0f, 2.0f, 3.0f});
  tensor_initializer(b, "roi", {});
  tensor_initializer(b, "sizes", {}, {1, 2, 9, 4});
  std::vector<std::string> inputs = {"input", "scales"};
  if (op == "Resize" && opset >= 11)
    inputs = sizes ? std::vector<std::string>{"input", "roi", "", "sizes"} : std::vector<std::string>{"input", "roi", "scales"};
  auto& n = b.node(op, "/up/" + op, inputs, "output");
  for (const auto& [name, value] : attributes) text_attribute(n, name, value);
  return import_onnx(b.bytes(4), "resize.onnx");
}

TEST(OnnxImport, ResizeAsPyTorchExportsInterpolateIsUpsample) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto nearest = resize("Resize", 13, {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}});
  ASSERT_TRUE(nearest.ok()) << nearest.error().message;
  const Node& n = nearest->nodes.back();
  EXPECT_EQ(n.op, OpKind::upsample);
  EXPECT_EQ(n.attrs.mode, UpsampleMode::nearest);
  EXPECT_EQ(n.attrs.scale.h, 2.0);
  EXPECT_EQ(n.attrs.scale.w, 3.0);
  EXPECT_EQ(n.output_shape, (Shape{2, 12, 15}));

  for (const char* coordinates : {"half_pixel", "pytorch_half_pixel", "align_corners"}) {
    auto linear = resize("Resize", 17, {{"mode", "linear"}, {"coordinate_transformation_mode", coordinates}}, true);
    ASSERT_TRUE(linear.ok()) << coordinates << ": " << linear.error().message;
    const Node& l = linear->nodes.back();
    EXPECT_EQ(l.attrs.mode, UpsampleMode::bilinear);
    EXPECT_EQ(l.attrs.align_corners, std::string(coordinates) == "align_corners");
    EXPECT_EQ(l.attrs.size.h, 9);
    EXPECT_EQ(l.attrs.size.w, 4);
    EXPECT_EQ(l.output_shape, (Shape{2, 9, 4}));
  }
}

TEST(OnnxImport, ResizeWithOtherCoordinatesIsRefusedNamingTheNodeAndTheAttribute) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const struct {
    const char* op;
    int opset;
    std::vector<std::pair<std::string, std::string>> attributes;
    const char* message;
  } cases[] = {
      {"Resize",
       13,
       {{"mode", "nearest"}},
       "Resize '/up/Resize' (opset 13): attributes coordinate_transformation_mode 'half_pixel' and nearest_mode 'round_prefer_floor'"},
      {"Resize", 13, {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}}, "nearest_mode 'round_prefer_floor'"},
      {"Resize", 13, {{"mode", "linear"}, {"coordinate_transformation_mode", "asymmetric"}}, "attribute coordinate_transformation_mode 'asymmetric'"},
      {"Resize",
       13,
       {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}},
       "coordinate_transformation_mode 'tf_crop_and_resize'"},
      {"Resize", 13, {{"mode", "cubic"}}, "attribute mode 'cubic': only nearest and linear (bilinear) are mapped"},
  };
  for (const auto& c : cases) {
    auto g = resize(c.op, c.opset, c.attributes);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_THAT(g.error().message, HasSubstr(c.message));
  }
}

// --- LSTM and GRU: nn.LSTM / nn.GRU with batch_first as PyTorch's exporter writes them ----------

struct RecurrentOptions {
  std::string op = "LSTM";
  bool transpose = true;  // batch_first's Transpose before the node (else X is the model's input)
  std::vector<std::pair<std::string, std::int64_t>> ints;
  std::vector<std::pair<std::string, std::string>> texts;
  std::string initial_h;    // an initializer of this value (all equal), or none
  bool read_cells = false;  // the output reads LSTM's Y_c instead of Y
  float clip = 0.0f;        // > 0: the attribute clip
  bool read_state = false;  // the output is h_n[0] (Gather of Y_h) instead of Y
  // Initial states computed in the model, as PyTorch writes them: "sliced" (a batch-first
  // [N, 2, 2] tensor, its Transpose [1, 0, 2] and h0 = its Slice [1:2] on axis 0, and for LSTM c0
  // = its Slice [0:1]), "direct" (a [N, 1, 2] tensor's Transpose as h0: one layer, one
  // direction), "c_only" (LSTM: c0 sliced, h0 not given), "batch_first" (the [N, 1, 2] tensor
  // itself, no Transpose), "step2" (the Slice with step 2), "model_input" (a second graph input),
  // "constant" (a non-zero constant, reshaped), "h_only" (LSTM: h0 sliced, c0 not given), "both"
  // (h0 = the Slice [0:2], two states for a layer of one direction).
  std::string states;
};

// The defaults with some changed. (Not designated initializers: GCC 12 warns about the members
// they leave out, defaults or not, and the ci preset makes that an error.)
RecurrentOptions changed(const std::function<void(RecurrentOptions&)>& change) {
  RecurrentOptions o;
  change(o);
  return o;
}

// The states of RecurrentOptions::states, from the input [N, 5, 3]: MatMul by [3, 2] → [N, 5, 2],
// its first rows (Slice on axis 1) → [N, 2, 2] or [N, 1, 2], then as PyTorch writes h0 (and c0).
void add_initial_states(ModelBuilder& b, const RecurrentOptions& o, std::vector<std::string>& inputs) {
  const auto slice = [&](const std::string& name, const std::string& from, std::int64_t axis, std::int64_t start, std::int64_t end, std::int64_t step,
                         const std::string& to) {
    tensor_initializer(b, name + ".starts", {}, {start});
    tensor_initializer(b, name + ".ends", {}, {end});
    tensor_initializer(b, name + ".axes", {}, {axis});
    tensor_initializer(b, name + ".steps", {}, {step});
    b.node("Slice", name, {from, name + ".starts", name + ".ends", name + ".axes", name + ".steps"}, to);
  };
  b.init("Ws", {3, 2});
  b.node("MatMul", "/h/MatMul", {"input", "Ws"}, "m");
  if (o.states == "model_input") {
    auto* in = b.model().mutable_graph()->add_input();
    in->set_name("h0");
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (const std::int64_t d : {1, 4, 2}) t->mutable_shape()->add_dim()->set_dim_value(d);
  } else if (o.states == "constant") {
    tensor_initializer(b, "h0", {0.5f, -0.25f});  // [2]: ONNX's [1, N, 2] broadcast by hand below
    b.node("Reshape", "/h/Reshape", {"h0", "h0.shape"}, "h0r");
    tensor_initializer(b, "h0.shape", {}, {1, 1, 2});
  } else if (o.states == "direct" || o.states == "batch_first") {
    slice("/h/Slice", "m", 1, 0, 1, 1, o.states == "direct" ? "m1" : "h0");
    if (o.states == "direct") ModelBuilder::ints(b.node("Transpose", "/h/Transpose", {"m1"}, "h0"), "perm", {1, 0, 2});
  } else {
    slice("/h/Slice", "m", 1, 0, 2, 1, "m2");
    ModelBuilder::ints(b.node("Transpose", "/h/Transpose", {"m2"}, "ht"), "perm", {1, 0, 2});
    slice("/rnn/Slice", "ht", 0, o.states == "both" ? 0 : 1, 2, o.states == "step2" ? 2 : 1, "h0");
    if (o.op == "LSTM") slice("/rnn/Slice_1", "ht", 0, 0, 1, 1, "c0");
  }
  inputs.push_back(o.states == "c_only" ? "" : o.states == "constant" ? "h0r" : "h0");
  if (o.op == "LSTM" && (o.states == "sliced" || o.states == "c_only")) inputs.push_back("c0");
  if (o.op == "LSTM" && o.states == "h_only") inputs.push_back("");
}

// [N, 5, 3] → Transpose [1, 0, 2] → LSTM/GRU (hidden 2; W, R, B initializers) → Squeeze(1) →
// Transpose back, at opset 11.
Result<Graph> recurrent(const RecurrentOptions& o) {
  constexpr std::int64_t kHidden = 2;
  const std::int64_t gates = o.op == "LSTM" ? 4 : 3;
  ModelBuilder b(11, {5, 3});
  b.init("W", {1, gates * kHidden, 3});
  b.init("R", {1, gates * kHidden, kHidden});
  b.init("B", {1, 2 * gates * kHidden});
  std::vector<std::string> inputs = {o.transpose ? "t" : "input", "W", "R", "B", ""};
  if (o.transpose) ModelBuilder::ints(b.node("Transpose", "/rnn/Transpose", {"input"}, "t"), "perm", {1, 0, 2});
  if (!o.states.empty()) add_initial_states(b, o, inputs);
  if (!o.initial_h.empty()) {
    auto* h0 = b.model().mutable_graph()->add_initializer();
    h0->set_name("h0");
    h0->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : {1, 1, 2}) h0->add_dims(d);
    for (int i = 0; i < 2; ++i) h0->add_float_data(std::stof(o.initial_h));
    inputs.push_back("h0");
  }
  auto& n = b.node(o.op, "/rnn/" + o.op, inputs, "y");
  n.add_output("y_h");
  if (o.op == "LSTM") n.add_output("y_c");
  ModelBuilder::integer(n, "hidden_size", kHidden);
  for (const auto& [name, value] : o.ints) ModelBuilder::integer(n, name, value);
  for (const auto& [name, value] : o.texts) text_attribute(n, name, value);
  if (o.clip > 0.0f) {
    auto* a = n.add_attribute();
    a->set_name("clip");
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(o.clip);
  }
  if (o.read_cells) {
    ModelBuilder::ints(b.node("Transpose", "/Transpose", {"y_c"}, "out"), "perm", {1, 0, 2});
    return import_onnx(b.bytes(3), "rnn.onnx");
  }
  if (o.read_state) {
    auto* index = b.model().mutable_graph()->add_initializer();
    index->set_name("zero");
    index->set_data_type(onnx::TensorProto_DataType_INT64);
    index->add_int64_data(0);
    b.node("Gather", "/Gather", {"y_h", "zero"}, "out");
    return import_onnx(b.bytes(2), "rnn.onnx");
  }
  ModelBuilder::ints(b.node("Squeeze", "/rnn/Squeeze", {"y"}, "s"), "axes", {1});
  ModelBuilder::ints(b.node("Transpose", "/rnn/Transpose_1", {"s"}, "out"), "perm", {1, 0, 2});
  return import_onnx(b.bytes(3), "rnn.onnx");
}

TEST(OnnxImport, LstmAndGruWithBatchFirstAreOneLayerWithPyTorchsGateOrder) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto lstm = recurrent(RecurrentOptions());
  ASSERT_TRUE(lstm.ok()) << lstm.error().message;
  ASSERT_EQ(lstm->nodes.size(), 1u);
  const Node& l = lstm->nodes[0];
  EXPECT_EQ(l.op, OpKind::lstm);
  EXPECT_EQ(l.inputs, std::vector<int>{kModelInput});
  EXPECT_EQ(l.output_shape, (Shape{5, 2}));
  ASSERT_EQ(l.initial_values.size(), 4u);
  // W holds 0.001·(k + 1) at flat index k, gates i o f c of 2 rows × 3 inputs each: PyTorch's
  // second gate (f) is ONNX's third, its fourth (o) ONNX's second.
  const std::vector<float>& w = *l.initial_values[0].data;
  EXPECT_EQ(l.initial_values[0].name, "weight_ih");
  EXPECT_EQ(l.initial_values[0].shape, (Shape{1, 8, 3}));
  EXPECT_FLOAT_EQ(w[0], 0.001f);
  EXPECT_FLOAT_EQ(w[6], 0.001f * 13);   // f ← ONNX block 2 (index 12)
  EXPECT_FLOAT_EQ(w[12], 0.001f * 19);  // g ← ONNX block 3 (c, index 18)
  EXPECT_FLOAT_EQ(w[18], 0.001f * 7);   // o ← ONNX block 1 (index 6)
  // B is [W's biases, R's biases]: bias_hh starts at ONNX index 8, then reordered alike.
  EXPECT_EQ(l.initial_values[3].name, "bias_hh");
  EXPECT_FLOAT_EQ((*l.initial_values[3].data)[2], 0.001f * 13);  // f ← R's block 2 (index 8 + 4)

  // h_n[0]: the state after the last step, whichever T the model is given later.
  auto state = recurrent(changed([](RecurrentOptions& o) { o.read_state = true; }));
  ASSERT_TRUE(state.ok()) << state.error().message;
  ASSERT_EQ(state->nodes.size(), 2u);
  EXPECT_EQ(state->nodes[1].op, OpKind::select);
  EXPECT_EQ(state->nodes[1].attrs.index, -1);
  EXPECT_EQ(state->nodes[1].output_shape, (Shape{2}));

  auto gru = recurrent(changed([](RecurrentOptions& o) {
    o.op = "GRU";
    o.ints = {{"linear_before_reset", 1}};
    o.initial_h = "0";
  }));
  ASSERT_TRUE(gru.ok()) << gru.error().message;
  const Node& g = gru->nodes[0];
  EXPECT_EQ(g.op, OpKind::gru);
  const std::vector<float>& r = *g.initial_values[1].data;  // R: z r h → r z n
  EXPECT_FLOAT_EQ(r[0], 0.001f * 5);                        // r ← ONNX block 1 (index 4)
  EXPECT_FLOAT_EQ(r[4], 0.001f * 1);                        // z ← ONNX block 0
  EXPECT_FLOAT_EQ(r[8], 0.001f * 9);                        // n ← ONNX block 2
}

// h0 (and c0) computed in the model: PyTorch's Transpose [1, 0, 2] of a batch-first [N, L·D, H]
// tensor and its Slice per layer become a slice layer of the batch-first tensor, the layer's
// inputs 1 and 2.
TEST(OnnxImport, InitialStatesComputedInTheModelAreTheLayersInputs) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto lstm = recurrent(changed([](RecurrentOptions& o) { o.states = "sliced"; }));
  ASSERT_TRUE(lstm.ok()) << lstm.error().message;
  // MatMul, its Slice (axis 1: per-sample 0), h0's slice and c0's, the lstm.
  ASSERT_EQ(lstm->nodes.size(), 5u);
  const Node& h0 = lstm->nodes[2];
  const Node& c0 = lstm->nodes[3];
  const Node& l = lstm->nodes[4];
  EXPECT_EQ(h0.op, OpKind::slice);
  EXPECT_EQ(h0.inputs, std::vector<int>{1});
  EXPECT_EQ(h0.attrs.axes, std::vector<std::int64_t>{0});
  EXPECT_EQ(h0.attrs.starts, std::vector<std::int64_t>{1});
  EXPECT_EQ(h0.attrs.ends, std::vector<std::int64_t>{2});
  EXPECT_EQ(h0.output_shape, (Shape{1, 2}));
  EXPECT_EQ(c0.attrs.starts, std::vector<std::int64_t>{0});
  EXPECT_EQ(h0.name, "rnn.h0") << "named after the layer it feeds";
  EXPECT_EQ(c0.name, "rnn.c0");
  EXPECT_EQ(l.op, OpKind::lstm);
  EXPECT_EQ(l.inputs, (std::vector<int>{kModelInput, 2, 3}));
  EXPECT_EQ(l.output_shape, (Shape{5, 2}));

  // One layer, one direction: PyTorch writes no Slice, the Transpose is the state.
  auto gru = recurrent(changed([](RecurrentOptions& o) {
    o.op = "GRU";
    o.ints = {{"linear_before_reset", 1}};
    o.states = "direct";
  }));
  ASSERT_TRUE(gru.ok()) << gru.error().message;
  ASSERT_EQ(gru->nodes.size(), 3u);
  EXPECT_EQ(gru->nodes[2].op, OpKind::gru);
  EXPECT_EQ(gru->nodes[2].inputs, (std::vector<int>{kModelInput, 1}));
  EXPECT_EQ(gru->nodes[1].output_shape, (Shape{1, 2}));

  // LSTM given h0 alone: c0 starts at zero, as PyTorch's does when given zeros.
  auto h_only = recurrent(changed([](RecurrentOptions& o) { o.states = "h_only"; }));
  ASSERT_TRUE(h_only.ok()) << h_only.error().message;
  EXPECT_EQ(h_only->nodes.back().op, OpKind::lstm);
  EXPECT_EQ(h_only->nodes.back().inputs.size(), 2u);
}

TEST(OnnxImport, InitialStatesNotMappedAreRefusedNamingTheNodeAndTheInput) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const struct {
    const char* states;
    const char* message;
  } cases[] = {
      // A second model input: refused as a model, before any node.
      {"model_input", "the graph has 2 inputs ('input', 'h0'); hwprof runs models with one input tensor"},
      {"constant", "LSTM '/rnn/LSTM' (opset 11): input initial_h ('h0r') is not zeros and not computed from the model's input"},
      {"c_only", "LSTM '/rnn/LSTM' (opset 11): input initial_c ('c0') is given and initial_h is zeros"},
      {"batch_first", "LSTM '/rnn/LSTM' (opset 11): input initial_h ('h0') is computed in the model but is not a batch-first"},
      {"step2", "Slice '/rnn/Slice' (opset 11): it slices 'ht', a tensor in ONNX's sequence-first layout"},
      {"both", "LSTM '/rnn/LSTM' (opset 11): input initial_h ('h0') is [2, N, 2], not [1, N, 2] (directions, batch, hidden_size)"},
  };
  for (const auto& c : cases) {
    auto g = recurrent(changed([&](RecurrentOptions& o) { o.states = c.states; }));
    ASSERT_FALSE(g.ok()) << c.states;
    EXPECT_THAT(g.error().message, HasSubstr(c.message)) << c.states;
  }
}

TEST(OnnxImport, RecurrentNodesPyTorchDoesNotWriteAreRefusedNamingTheNodeAndTheAttribute) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  using O = RecurrentOptions&;
  const struct {
    void (*change)(RecurrentOptions&);
    const char* message;
  } cases[] = {
      {[](O o) { o.op = "GRU"; }, "GRU '/rnn/GRU' (opset 11): attribute linear_before_reset 0 is not mapped"},
      {[](O o) {
         o.ints = {{"input_forget", 1}};
       },
       "attribute input_forget 1"},
      {[](O o) {
         o.texts = {{"direction", "reverse"}};
       },
       "attribute direction 'reverse'"},
      {[](O o) { o.initial_h = "0.5"; }, "input initial_h ('h0') is not zeros"},
      {[](O o) { o.transpose = false; },
       "LSTM '/rnn/LSTM' (opset 11): input X ('input') is in ONNX's layout [T, N, C], the batch on axis 1 of the model's input"},
      {[](O o) { o.read_cells = true; }, "the final cell state Y_c"},
      {[](O o) { o.clip = 3.0f; }, "attribute clip"},
  };
  for (const auto& c : cases) {
    auto g = recurrent(changed(c.change));
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_THAT(g.error().message, HasSubstr(c.message));
  }
}

// One ReduceSum (axes as its second input, opset 13) or ReduceMean (axes an attribute, opset
// 13) of a [N, 3, 6, 5] input.
Result<Graph> reduction(const std::string& op, std::vector<std::int64_t> axes, int keepdims, int output_rank = 4) {
  ModelBuilder b(13, {3, 6, 5});
  std::vector<std::string> inputs = {"input"};
  if (op == "ReduceSum" && !axes.empty()) {
    tensor_initializer(b, "axes", {}, axes);
    inputs.push_back("axes");
  }
  auto& n = b.node(op, "/r/" + op, inputs, "output");
  if (op == "ReduceMean" && !axes.empty()) ModelBuilder::ints(n, "axes", axes);
  ModelBuilder::integer(n, "keepdims", keepdims);
  return import_onnx(b.bytes(output_rank), "reduce.onnx");
}

TEST(OnnxImport, ReduceSumAndReduceMeanAreReduce) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto sum = reduction("ReduceSum", {1}, 1);
  ASSERT_TRUE(sum.ok()) << sum.error().message;
  const Node& s = sum->nodes.back();
  EXPECT_EQ(s.op, OpKind::reduce);
  EXPECT_EQ(s.attrs.reduce_mode, ReduceMode::sum);
  EXPECT_EQ(s.attrs.axes, (std::vector<std::int64_t>{0}));  // per-sample
  EXPECT_EQ(s.output_shape, (Shape{1, 6, 5}));

  auto mean = reduction("ReduceMean", {-1}, 0, 3);
  ASSERT_TRUE(mean.ok()) << mean.error().message;
  const Node& m = mean->nodes.back();
  EXPECT_EQ(m.op, OpKind::reduce);
  EXPECT_EQ(m.attrs.reduce_mode, ReduceMode::mean);
  EXPECT_FALSE(m.attrs.keepdims);
  EXPECT_EQ(m.output_shape, (Shape{3, 6}));

  auto global = reduction("ReduceMean", {2, 3}, 1);  // global average pooling, as before
  ASSERT_TRUE(global.ok()) << global.error().message;
  EXPECT_EQ(global->nodes.back().op, OpKind::adaptive_avgpool2d);
  auto spatial_sum = reduction("ReduceSum", {2, 3}, 1);
  ASSERT_TRUE(spatial_sum.ok()) << spatial_sum.error().message;
  EXPECT_EQ(spatial_sum->nodes.back().op, OpKind::reduce);
  EXPECT_EQ(spatial_sum->nodes.back().output_shape, (Shape{3, 1, 1}));
}

TEST(OnnxImport, SoftplusIsSoftplusAndMishAsExportedIsItsThreeNodes) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(17, {4, 5});
  b.node("Softplus", "/act/Softplus", {"input"}, "s");
  b.node("Tanh", "/act/Tanh", {"s"}, "t");
  b.node("Mul", "/act/Mul", {"input", "t"}, "output");  // nn.Mish as PyTorch exports it
  auto g = import_onnx(b.bytes(3), "mish.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].op, OpKind::softplus);
  EXPECT_EQ(g->nodes[0].output_shape, (Shape{4, 5}));
  EXPECT_EQ(g->nodes[1].op, OpKind::tanh);
  EXPECT_EQ(g->nodes[2].op, OpKind::mul);
  EXPECT_EQ(g->nodes[2].output_shape, (Shape{4, 5}));
}

TEST(OnnxImport, LeakyReluAndEluKeepTheirAlphaAndANonFiniteOneIsRefused) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {4, 5});
  ModelBuilder::real(b.node("LeakyRelu", "/a/LeakyRelu", {"input"}, "l"), "alpha", 0.2f);
  b.node("Elu", "/b/Elu", {"l"}, "e");  // ONNX's default alpha 1.0, PyTorch's too
  ModelBuilder::real(b.node("Elu", "/c/Elu", {"e"}, "output"), "alpha", 0.5f);
  auto g = import_onnx(b.bytes(3), "act.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].op, OpKind::leaky_relu);
  EXPECT_FLOAT_EQ(static_cast<float>(g->nodes[0].attrs.parameter.value()), 0.2f);
  EXPECT_EQ(g->nodes[1].op, OpKind::elu);
  EXPECT_DOUBLE_EQ(g->nodes[1].attrs.parameter.value(), 1.0);
  EXPECT_DOUBLE_EQ(g->nodes[2].attrs.parameter.value(), 0.5);

  ModelBuilder bad(14, {4, 5});
  ModelBuilder::real(bad.node("LeakyRelu", "/a/LeakyRelu", {"input"}, "output"), "alpha", std::numeric_limits<float>::infinity());
  auto refused = import_onnx(bad.bytes(3), "act.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("node '/a/LeakyRelu' (LeakyRelu): attribute alpha is inf; alpha must be a finite number"));
}

// Shrink with bias 0 is hardshrink (its definition's ONNX mapping); with a bias it is softshrink's
// form, refused by name; a non-finite lambd is refused before anything reads it.
TEST(OnnxImport, ShrinkWithoutABiasIsHardshrink) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {4, 5});
  ModelBuilder::real(b.node("Shrink", "/a/Shrink", {"input"}, "s"), "lambd", 0.25f);
  b.node("Shrink", "/b/Shrink", {"s"}, "output");  // ONNX's default lambd 0.5, PyTorch's too
  auto g = import_onnx(b.bytes(3), "shrink.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0].op, OpKind::hardshrink);
  EXPECT_DOUBLE_EQ(g->nodes[0].attrs.parameter.value(), 0.25);
  EXPECT_DOUBLE_EQ(g->nodes[1].attrs.parameter.value(), 0.5);

  ModelBuilder soft(14, {4, 5});
  onnx::NodeProto& shrink = soft.node("Shrink", "/a/Shrink", {"input"}, "output");
  ModelBuilder::real(shrink, "bias", 0.5f);
  auto refused = import_onnx(soft.bytes(3), "shrink.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("/a/Shrink"));
  EXPECT_THAT(refused.error().message, HasSubstr("softshrink"));

  ModelBuilder bad(14, {4, 5});
  ModelBuilder::real(bad.node("Shrink", "/a/Shrink", {"input"}, "output"), "lambd", std::numeric_limits<float>::quiet_NaN());
  auto nan = import_onnx(bad.bytes(3), "shrink.onnx");
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(nan.error().message, HasSubstr("lambd must be a finite number"));
}

TEST(OnnxImport, AMatMulOfTwoActivationsIsAMatmulOfOneRankOnly) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {3, 4, 5});
  auto& t = b.node("Transpose", "/t/Transpose", {"input"}, "xt");
  ModelBuilder::ints(t, "perm", {0, 1, 3, 2});
  b.node("MatMul", "/m/MatMul", {"input", "xt"}, "output");  // x·xᵀ per sample and head
  auto g = import_onnx(b.bytes(4), "mm.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[1].op, OpKind::matmul);
  EXPECT_EQ(g->nodes[1].inputs, (std::vector<int>{kModelInput, 0}));
  EXPECT_EQ(g->nodes[1].output_shape, (Shape{3, 4, 4}));

  // [N, 1, 4, 5]·[N, 5, 4]: ONNX aligns the second N with the 1 (an [N, N, 4, 4] product of
  // every pair of samples); hwprof does not run that.
  ModelBuilder ranks(14, {1, 4, 5});
  auto& r = ranks.node("ReduceMean", "/r/ReduceMean", {"input"}, "s");
  ModelBuilder::ints(r, "axes", {1});
  ModelBuilder::integer(r, "keepdims", 0);
  auto& rt = ranks.node("Transpose", "/t/Transpose", {"s"}, "st");
  ModelBuilder::ints(rt, "perm", {0, 2, 1});
  ranks.node("MatMul", "/m/MatMul", {"input", "st"}, "output");
  auto refused = import_onnx(ranks.bytes(4), "mm.onnx");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message,
              HasSubstr("MatMul '/m/MatMul' (opset 14): a product of two activations of per-sample shapes [1, 4, 5] and [5, 4]"))
      << refused.error().message;
}

TEST(OnnxImport, AReductionOverTheBatchOrEveryAxisIsRefusedNamingTheNode) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const struct {
    const char* op;
    std::vector<std::int64_t> axes;
    int keepdims;
    int output_rank;
    const char* message;
  } cases[] = {
      {"ReduceSum", {0, 1}, 1, 4, "ReduceSum '/r/ReduceSum' (opset 13): input axes [0, 1] includes the batch axis 0"},
      {"ReduceMean", {-4}, 1, 4, "ReduceMean '/r/ReduceMean' (opset 13): attribute axes [-4] includes the batch axis 0"},
      {"ReduceSum", {}, 1, 4, "no axes: it reduces every axis, the batch's included"},
      {"ReduceSum", {1, 2, 3}, 0, 1, "input axes [1, 2, 3] with keepdims 0 leaves a per-sample scalar"},
  };
  for (const auto& c : cases) {
    auto g = reduction(c.op, c.axes, c.keepdims, c.output_rank);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_THAT(g.error().message, HasSubstr(c.message));
  }
}

// --- data movement on activations ---------------------------------------------------------

// One Slice, Pad, Tile or Split of a [N, 4, 6, 5] input (opset 13), its integer inputs
// initializers, with a mode attribute where one is given.
Result<Graph> moved(const std::string& op, std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints, const std::string& mode = "") {
  ModelBuilder b(13, {4, 6, 5});
  std::vector<std::string> inputs = {"input"};
  for (const auto& [name, values] : ints) {
    tensor_initializer(b, name, {}, values);
    inputs.push_back(name);
  }
  auto& n = b.node(op, "/m/" + op, inputs, "output");
  if (!mode.empty()) text_attribute(n, "mode", mode);
  return import_onnx(b.bytes(4), "moved.onnx");
}

TEST(OnnxImport, SlicePadAndTileOfAnActivationAreLayersOfPerSampleAxes) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto channels = moved("Slice", {{"starts", {1}}, {"ends", {3}}, {"axes", {1}}});
  ASSERT_TRUE(channels.ok()) << channels.error().message;
  EXPECT_EQ(channels->nodes.back().op, OpKind::slice);
  EXPECT_EQ(channels->nodes.back().attrs.axes, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(channels->nodes.back().output_shape, (Shape{2, 6, 5}));
  // [:, :, 1:4:2, ::-1]: the batch kept whole is not an axis of the layer; the exporter's
  // "to the end" (2^63 - 1) and reversed ends (-2^63) are clamped.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  auto stepped = moved("Slice", {{"starts", {0, 1, -1}}, {"ends", {kMax, 4, kMin}}, {"axes", {0, 2, 3}}, {"steps", {1, 2, -1}}});
  ASSERT_TRUE(stepped.ok()) << stepped.error().message;
  EXPECT_EQ(stepped->nodes.back().attrs.axes, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(stepped->nodes.back().output_shape, (Shape{4, 2, 5}));
  auto padded = moved("Pad", {{"pads", {0, 0, 1, 2, 0, 0, 0, 1}}}, "reflect");
  ASSERT_TRUE(padded.ok()) << padded.error().message;
  EXPECT_EQ(padded->nodes.back().op, OpKind::pad);
  EXPECT_EQ(padded->nodes.back().attrs.pad_mode, PadMode::reflect);
  EXPECT_EQ(padded->nodes.back().attrs.pads, (std::vector<std::int64_t>{0, 1, 2, 0, 0, 1}));
  EXPECT_EQ(padded->nodes.back().output_shape, (Shape{4, 7, 8}));
  auto tiled = moved("Tile", {{"repeats", {1, 2, 1, 3}}});
  ASSERT_TRUE(tiled.ok()) << tiled.error().message;
  EXPECT_EQ(tiled->nodes.back().op, OpKind::tile);
  EXPECT_EQ(tiled->nodes.back().output_shape, (Shape{8, 6, 15}));
}

// x.masked_fill(mask, -1) as PyTorch exports it: Where(mask, -1, x), the mask a constant
// boolean initializer [1, 6, 1] (raw bytes), the value a scalar; and Where of two activations.
TEST(OnnxImport, WhereWithAConstantConditionIsWhere) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto model = [](bool two_activations) {
    ModelBuilder b(13, {4, 6, 5});
    auto* mask = b.model().mutable_graph()->add_initializer();
    mask->set_name("mask");
    mask->set_data_type(onnx::TensorProto_DataType_BOOL);
    for (std::int64_t d : {1, 6, 1}) mask->add_dims(d);
    mask->set_raw_data(std::string("\x01\x00\x00\x01\x01\x00", 6));
    auto* value = b.model().mutable_graph()->add_initializer();
    value->set_name("value");
    value->set_data_type(onnx::TensorProto_DataType_FLOAT);
    value->add_float_data(-1.0f);
    b.node("Relu", "/relu/Relu", {"input"}, "r");
    b.node("Where", "/fill/Where", {"mask", two_activations ? "r" : "value", "input"}, "output");
    return import_onnx(b.bytes(4), "where.onnx");
  };
  auto fill = model(false);
  ASSERT_TRUE(fill.ok()) << fill.error().message;
  const Node& w = fill->nodes.back();
  EXPECT_EQ(w.op, OpKind::where);
  EXPECT_TRUE(w.attrs.constant_first);
  EXPECT_EQ(w.attrs.condition, (Shape{1, 6, 1}));
  EXPECT_EQ(w.attrs.operand, (Shape{1, 1, 1}));
  ASSERT_EQ(w.initial_values.size(), 2u);
  EXPECT_EQ(*w.initial_values[0].data, (std::vector<float>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(*w.initial_values[1].data, (std::vector<float>{-1.0f}));
  auto picked = model(true);
  ASSERT_TRUE(picked.ok()) << picked.error().message;
  EXPECT_EQ(picked->nodes.back().inputs.size(), 2u);
  EXPECT_EQ(picked->nodes.back().output_shape, (Shape{4, 6, 5}));
}

TEST(OnnxImport, DataMovementOverTheBatchOrWithUnmappedModesIsRefusedNamingTheNode) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const struct {
    Result<Graph> graph;
    const char* message;
  } cases[] = {
      {moved("Slice", {{"starts", {0}}, {"ends", {1}}, {"axes", {0}}}),
       "Slice '/m/Slice' (opset 13): input axes [0]: it slices the batch axis 0; a layer keeps every sample"},
      {moved("Pad", {{"pads", {1, 0, 0, 0, 0, 0, 0, 0}}}), "Pad '/m/Pad' (opset 13): input pads [1, 0, 0, 0, 0, 0, 0, 0] pads the batch axis 0"},
      {moved("Pad", {{"pads", {0, 0, 6, 0, 0, 0, 0, 0}}}, "reflect"), "reflect padding of axis 2 must be smaller than its size 6"},
      {moved("Pad", {{"pads", {0, 0, 1, 0, 0, 0, 0, 0}}}, "wrap"), "Pad '/m/Pad' (opset 13): attribute mode 'wrap' is not mapped"},
      {moved("Tile", {{"repeats", {2, 1, 1, 1}}}), "Tile '/m/Tile' (opset 13): input repeats [2, 1, 1, 1] repeats the batch axis 0"},
  };
  for (const auto& c : cases) {
    ASSERT_FALSE(c.graph.ok()) << c.message;
    EXPECT_THAT(c.graph.error().message, HasSubstr(c.message));
  }
}

// --- 3-D (video) layers --------------------------------------------------------------------

// A video network's layers as torchvision's r3d_18 is exported, small, over [N, 3, 4, 9, 9]:
// Conv [4, 3, 3, 5, 5] (strides [1, 2, 2], pads [1, 2, 2, 1, 2, 2]), BatchNormalization, Relu,
// a padded ceil_mode MaxPool, a 5-D zero Pad before an AveragePool (avg_pool3d with
// count_include_pad) and GlobalAveragePool. `change` edits a node before the export.
Result<Graph> video(const std::function<void(ModelBuilder&, std::vector<onnx::NodeProto*>&)>& change = {}) {
  ModelBuilder b(14, {3, 4, 9, 9});
  b.init("w", {4, 3, 3, 5, 5});
  b.init("b", {4});
  for (const char* part : {"scale", "shift", "mean", "var"}) b.init(std::string("bn.") + part, {4});
  std::vector<onnx::NodeProto*> nodes;
  nodes.push_back(&b.node("Conv", "/stem/Conv", {"input", "w", "b"}, "c"));
  ModelBuilder::ints(*nodes.back(), "kernel_shape", {3, 5, 5});
  ModelBuilder::ints(*nodes.back(), "strides", {1, 2, 2});
  ModelBuilder::ints(*nodes.back(), "pads", {1, 2, 2, 1, 2, 2});
  nodes.push_back(&b.node("BatchNormalization", "/bn/BatchNormalization", {"c", "bn.scale", "bn.shift", "bn.mean", "bn.var"}, "n"));
  nodes.push_back(&b.node("Relu", "/relu/Relu", {"n"}, "r"));
  nodes.push_back(&b.node("MaxPool", "/pool/MaxPool", {"r"}, "m"));
  ModelBuilder::ints(*nodes.back(), "kernel_shape", {2, 3, 3});
  ModelBuilder::ints(*nodes.back(), "strides", {1, 2, 2});
  ModelBuilder::ints(*nodes.back(), "pads", {1, 1, 1, 1, 1, 1});
  ModelBuilder::integer(*nodes.back(), "ceil_mode", 1);
  tensor_initializer(b, "pads", {}, {0, 0, 1, 1, 1, 0, 0, 1, 1, 1});
  nodes.push_back(&b.node("Pad", "/avg/Pad", {"m", "pads"}, "p"));
  nodes.push_back(&b.node("AveragePool", "/avg/AveragePool", {"p"}, "a"));
  ModelBuilder::ints(*nodes.back(), "kernel_shape", {2, 2, 2});
  ModelBuilder::ints(*nodes.back(), "strides", {1, 1, 1});
  nodes.push_back(&b.node("GlobalAveragePool", "/head/GlobalAveragePool", {"a"}, "output"));
  if (change) change(b, nodes);
  return import_onnx(b.bytes(5), "video.onnx");
}

TEST(OnnxImport, ThreeDimensionalConvPoolsAndBatchNormAreTheThreeDimensionalLayers) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = video();
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<OpKind> ops;
  for (const Node& n : g->nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<OpKind>{OpKind::conv3d, OpKind::batchnorm3d, OpKind::relu, OpKind::maxpool3d, OpKind::avgpool3d,
                                      OpKind::adaptive_avgpool3d}));
  const Node& conv = g->nodes[0];
  EXPECT_EQ(conv.attrs.depth.kernel, 3);
  EXPECT_EQ(conv.attrs.kernel.h, 5);
  EXPECT_EQ(conv.attrs.depth.stride, 1);
  EXPECT_EQ(conv.attrs.stride.w, 2);
  EXPECT_EQ(conv.attrs.depth.padding, 1);
  EXPECT_EQ(conv.attrs.padding.h, 2);
  EXPECT_EQ(conv.output_shape, (Shape{4, 4, 5, 5}));
  ASSERT_FALSE(conv.initial_values.empty());
  EXPECT_EQ(conv.initial_values[0].shape, (Shape{4, 3, 3, 5, 5}));
  EXPECT_EQ(g->nodes[3].output_shape, (Shape{4, 5, 3, 3}));  // ceil_mode
  // The Pad's zeros are the average pool's padding, counted in the divisor as PyTorch does.
  EXPECT_EQ(g->nodes[4].attrs.depth.padding, 1);
  EXPECT_EQ(g->nodes[4].attrs.padding.w, 1);
  EXPECT_EQ(g->nodes[4].output_shape, (Shape{4, 6, 4, 4}));
  EXPECT_EQ(g->nodes[5].output_shape, (Shape{4, 1, 1, 1}));
}

TEST(OnnxImport, AMeanOverAVolumesAxesIsAdaptiveAveragePooling) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = video([](ModelBuilder&, std::vector<onnx::NodeProto*>& nodes) {
    onnx::NodeProto& head = *nodes.back();
    head.set_op_type("ReduceMean");
    ModelBuilder::ints(head, "axes", {2, 3, 4});
    ModelBuilder::integer(head, "keepdims", 1);
  });
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->nodes.back().op, OpKind::adaptive_avgpool3d);
  EXPECT_EQ(g->nodes.back().output_shape, (Shape{4, 1, 1, 1}));
}

TEST(OnnxImport, ThreeDimensionalWindowsHwprofCannotRunAreRefusedNamingTheNode) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto set_ints = [](onnx::NodeProto& n, const std::string& name, std::vector<std::int64_t> v) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.name() == name) {
        a.clear_ints();
        for (auto x : v) a.add_ints(x);
        return;
      }
    }
    ModelBuilder::ints(n, name, v);
  };
  auto uneven = video([&](ModelBuilder&, std::vector<onnx::NodeProto*>& nodes) { set_ints(*nodes[0], "pads", {1, 2, 2, 0, 2, 2}); });
  ASSERT_FALSE(uneven.ok());
  EXPECT_THAT(uneven.error().message, HasSubstr("Conv '/stem/Conv' (opset 14): uneven padding [1, 2, 2, 0, 2, 2]"));
  // A dilated MaxPool is PyTorch's MaxPool3d(dilation=...); an AveragePool's dilations (opset
  // 19) have no PyTorch counterpart: refused, by ONNX's checker before opset 19 (this file's 14)
  // and by the importer from it.
  auto dilated = video([&](ModelBuilder&, std::vector<onnx::NodeProto*>& nodes) { set_ints(*nodes[3], "dilations", {1, 2, 1}); });
  ASSERT_TRUE(dilated.ok()) << dilated.error().message;
  const Node& pool = dilated->nodes[static_cast<std::size_t>(dilated->find("pool"))];
  EXPECT_EQ(pool.op, OpKind::maxpool3d);
  EXPECT_EQ(pool.attrs.dilation.h, 2);
  EXPECT_EQ(pool.attrs.depth.dilation, 1);
  auto dilated_average = video([&](ModelBuilder&, std::vector<onnx::NodeProto*>& nodes) { set_ints(*nodes[5], "dilations", {1, 2, 1}); });
  ASSERT_FALSE(dilated_average.ok());
  EXPECT_THAT(dilated_average.error().message, HasSubstr("/avg/AveragePool"));
  auto uncounted = video([&](ModelBuilder&, std::vector<onnx::NodeProto*>& nodes) { ModelBuilder::integer(*nodes[5], "count_include_pad", 0); });
  ASSERT_TRUE(uncounted.ok()) << "an unpadded AveragePool after a zero Pad averages the zeros in";
  // A convolution over four spatial axes has no hwprof layer.
  ModelBuilder b(14, {3, 4, 4, 4, 4});
  b.init("w", {4, 3, 3, 3, 3, 3});
  auto& c = b.node("Conv", "/conv4d/Conv", {"input", "w"}, "output");
  ModelBuilder::ints(c, "kernel_shape", {3, 3, 3, 3});
  auto four_d = import_onnx(b.bytes(6), "conv4d.onnx");
  ASSERT_FALSE(four_d.ok());
  EXPECT_THAT(four_d.error().message, HasSubstr("only convolutions of [N, C, L] or [N, C, H, W] or [N, C, D, H, W] inputs are mapped"));
}

// An audio front end as PyTorch exports nn.Conv1d(3, 4, 5, stride=2, padding=2, dilation=1)
// then nn.ConvTranspose1d(4, 2, 4, stride=2, padding=1, output_padding=1, groups=2) over
// [N, 3, 16]: conv1d and conv_transpose1d, their windows along the length, weights as PyTorch
// keeps them.
TEST(OnnxImport, OneDimensionalConvolutionsMapOntoTheirOwnLayers) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {3, 16});
  b.init("w", {4, 3, 5});
  b.init("b", {4});
  b.init("wt", {4, 1, 4});
  auto& c = b.node("Conv", "/conv/Conv", {"input", "w", "b"}, "h");
  ModelBuilder::ints(c, "kernel_shape", {5});
  ModelBuilder::ints(c, "strides", {2});
  ModelBuilder::ints(c, "pads", {2, 2});
  auto& t = b.node("ConvTranspose", "/up/ConvTranspose", {"h", "wt"}, "output");
  ModelBuilder::ints(t, "kernel_shape", {4});
  ModelBuilder::ints(t, "strides", {2});
  ModelBuilder::ints(t, "pads", {1, 1});
  ModelBuilder::ints(t, "output_padding", {1});
  ModelBuilder::integer(t, "group", 2);
  auto g = import_onnx(b.bytes(3), "audio.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 2u);
  const Node& conv = g->nodes[0];
  EXPECT_EQ(conv.op, OpKind::conv1d);
  EXPECT_EQ(conv.output_shape, (Shape{4, 8}));  // floor((16 + 4 − 5) / 2) + 1
  EXPECT_EQ(conv.attrs.kernel.w, 5);
  EXPECT_EQ(conv.attrs.kernel.h, 1) << "the height a 1-D window leaves as it is";
  EXPECT_EQ(conv.attrs.padding.h, 0);
  EXPECT_TRUE(conv.attrs.bias);
  const Node& up = g->nodes[1];
  EXPECT_EQ(up.op, OpKind::conv_transpose1d);
  EXPECT_EQ(up.output_shape, (Shape{2, 17}));  // (8 − 1)·2 − 2 + 3 + 1 + 1
  EXPECT_EQ(up.attrs.groups, 2);
  EXPECT_EQ(up.attrs.output_padding.w, 1);
  EXPECT_FALSE(up.attrs.bias);
}

// BatchNormalization over [N, C] (an MLP's nn.BatchNorm1d) and over [N, C, L] (an audio
// model's): batchnorm1d with its four vectors.
TEST(OnnxImport, BatchNormalizationOfFeaturesOrSequencesIsBatchnorm1d) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  for (const std::vector<std::int64_t>& input : {std::vector<std::int64_t>{6}, std::vector<std::int64_t>{6, 10}}) {
    ModelBuilder b(14, input);
    for (const char* name : {"scale", "bias", "mean", "var"}) b.init(name, {6});
    b.node("BatchNormalization", "/bn/BatchNormalization", {"input", "scale", "bias", "mean", "var"}, "output");
    auto g = import_onnx(b.bytes(static_cast<int>(input.size()) + 1), "bn.onnx");
    ASSERT_TRUE(g.ok()) << g.error().message;
    ASSERT_EQ(g->nodes.size(), 1u);
    EXPECT_EQ(g->nodes[0].op, OpKind::batchnorm1d);
    EXPECT_EQ(g->nodes[0].output_shape, Shape(input.begin(), input.end()));
    EXPECT_EQ(g->nodes[0].initial_values.size(), 4u);
  }
}

// A module called again (PyTorch unrolls RAFT's refinement loop into one Conv per call, every
// one reading the module's initializers): the later Conv shares the first's weight and bias and
// its parameters are counted once; one that reads the weight with another bias is its own.
TEST(OnnxImport, AConvolutionCalledAgainSharesItsParameters) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {4, 8, 8});
  b.init("block.weight", {4, 4, 3, 3});
  b.init("block.bias", {4});
  b.init("other.bias", {4});
  const auto conv = [&](const char* name, const std::string& in, const char* bias, const std::string& out) {
    auto& c = b.node("Conv", name, {in, "block.weight", bias}, out);
    ModelBuilder::ints(c, "kernel_shape", {3, 3});
    ModelBuilder::ints(c, "pads", {1, 1, 1, 1});
  };
  conv("/block/Conv", "input", "block.bias", "h1");
  b.node("Relu", "/relu/Relu", {"h1"}, "r");
  conv("/block_1/Conv", "r", "block.bias", "h2");
  conv("/other/Conv", "h2", "other.bias", "output");
  auto g = import_onnx(b.bytes(4), "loop.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 4u);
  EXPECT_EQ(g->nodes[2].attrs.tied_to, 0);
  EXPECT_TRUE(g->nodes[2].initial_values.empty());
  EXPECT_EQ(g->nodes[3].attrs.tied_to, -1) << "another bias: its own parameters";
  auto cost = analyze(*g);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->totals.params, 2 * (4 * 4 * 9 + 4));
}

// torch.onnx.export's default (training=EVAL) folds a BatchNorm into the convolution before it:
// a bias, and a weight the exporter computed ("onnx::Conv_<n>"). The import notes it; a
// convolution whose weight is a module's parameter (VGG's, with its own bias), or a file with a
// batch norm of its own, is not taken for a folded one.
TEST(OnnxImport, ABatchNormFoldedIntoTheConvolutionsIsNoted) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto conv = [](const std::string& weight, bool batch_norm) {
    ModelBuilder b(14, {3, 8, 8});
    b.init(weight, {4, 3, 3, 3});
    b.init("onnx::Conv_2", {4});
    auto& c = b.node("Conv", "/conv/Conv", {"input", weight, "onnx::Conv_2"}, "h");
    ModelBuilder::ints(c, "kernel_shape", {3, 3});
    if (batch_norm) {
      for (const char* name : {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}) b.init(name, {4});
      b.node("BatchNormalization", "/bn/BatchNormalization", {"h", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, "output");
    } else {
      b.node("Relu", "/relu/Relu", {"h"}, "output");
    }
    auto g = import_onnx(b.bytes(4), "m.onnx");
    EXPECT_TRUE(g.ok()) << g.error().message;
    return g.ok() ? g->notes : std::vector<std::string>{"import failed"};
  };
  const std::vector<std::string> folded = conv("onnx::Conv_1", false);
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_THAT(folded[0], HasSubstr("1 convolution has a bias and a weight the exporter computed"));
  EXPECT_THAT(folded[0], HasSubstr("training=torch.onnx.TrainingMode.PRESERVE"));
  EXPECT_TRUE(conv("features.0.weight", false).empty()) << "a module's own weight and bias (VGG)";
  EXPECT_TRUE(conv("onnx::Conv_1", true).empty()) << "the file has its batch norm";
}

// nn.MaxPool1d(3, 2, padding=1), nn.AvgPool1d(2) and nn.AdaptiveAvgPool1d(1) as PyTorch exports
// them over [N, 4, 20]: MaxPool, AveragePool and GlobalAveragePool of one spatial axis.
TEST(OnnxImport, OneDimensionalPoolingMapsOntoItsOwnLayers) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(14, {4, 20});
  auto& m = b.node("MaxPool", "/pool/MaxPool", {"input"}, "m");
  ModelBuilder::ints(m, "kernel_shape", {3});
  ModelBuilder::ints(m, "strides", {2});
  ModelBuilder::ints(m, "pads", {1, 1});
  auto& a = b.node("AveragePool", "/avg/AveragePool", {"m"}, "a");
  ModelBuilder::ints(a, "kernel_shape", {2});
  ModelBuilder::ints(a, "strides", {2});
  b.node("GlobalAveragePool", "/gap/GlobalAveragePool", {"a"}, "output");
  auto g = import_onnx(b.bytes(3), "pools.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 3u);
  EXPECT_EQ(g->nodes[0].op, OpKind::maxpool1d);
  EXPECT_EQ(g->nodes[0].output_shape, (Shape{4, 10}));  // floor((20 + 2 − 3) / 2) + 1
  EXPECT_EQ(g->nodes[0].attrs.kernel.w, 3);
  EXPECT_EQ(g->nodes[0].attrs.padding.w, 1);
  EXPECT_EQ(g->nodes[0].attrs.kernel.h, 1);
  EXPECT_EQ(g->nodes[1].op, OpKind::avgpool1d);
  EXPECT_EQ(g->nodes[1].output_shape, (Shape{4, 5}));
  EXPECT_EQ(g->nodes[2].op, OpKind::adaptive_avgpool1d);
  EXPECT_EQ(g->nodes[2].output_shape, (Shape{4, 1}));
}

// ConvTranspose on [N, 4, 3, 5, 5] as PyTorch exports nn.ConvTranspose3d(4, 6, (2, 3, 3),
// stride=(1, 2, 2), padding=(0, 1, 1), output_padding=(0, 1, 1), dilation=(2, 1, 1), groups=2):
// weight [4, 3, 2, 3, 3]. `change` edits the node before the export.
Result<Graph> transposed_video(const std::function<void(onnx::NodeProto&)>& change = {}) {
  ModelBuilder b(14, {4, 3, 5, 5});
  b.init("w", {4, 3, 2, 3, 3});
  b.init("b", {6});
  auto& n = b.node("ConvTranspose", "/up/ConvTranspose", {"input", "w", "b"}, "output");
  ModelBuilder::ints(n, "kernel_shape", {2, 3, 3});
  ModelBuilder::ints(n, "strides", {1, 2, 2});
  ModelBuilder::ints(n, "pads", {0, 1, 1, 0, 1, 1});
  ModelBuilder::ints(n, "output_padding", {0, 1, 1});
  ModelBuilder::ints(n, "dilations", {2, 1, 1});
  ModelBuilder::integer(n, "group", 2);
  if (change) change(n);
  return import_onnx(b.bytes(5), "up.onnx");
}

TEST(OnnxImport, ThreeDimensionalConvTransposeIsConvTranspose3d) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  auto g = transposed_video();
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& up = g->nodes[0];
  EXPECT_EQ(up.op, OpKind::conv_transpose3d);
  EXPECT_EQ(up.attrs.out_channels, 6);
  EXPECT_EQ(up.attrs.groups, 2);
  EXPECT_EQ(up.attrs.depth.kernel, 2);
  EXPECT_EQ(up.attrs.depth.dilation, 2);
  EXPECT_EQ(up.attrs.dilation.h, 1);
  EXPECT_EQ(up.attrs.depth.stride, 1);
  EXPECT_EQ(up.attrs.stride.w, 2);
  EXPECT_EQ(up.attrs.depth.padding, 0);
  EXPECT_EQ(up.attrs.padding.h, 1);
  EXPECT_EQ(up.attrs.depth.output_padding, 0);
  EXPECT_EQ(up.attrs.output_padding.w, 1);
  // d: 2·1 + 2·1 + 1 = 5; h, w: 4·2 - 2 + 2 + 1 + 1 = 10 (torch.nn.ConvTranspose3d's output).
  EXPECT_EQ(up.output_shape, (Shape{6, 5, 10, 10}));
  ASSERT_EQ(up.initial_values.size(), 2u);
  EXPECT_EQ(up.initial_values[0].shape, (Shape{4, 3, 2, 3, 3}));
}

TEST(OnnxImport, ThreeDimensionalConvTransposeHwprofCannotRunIsRefusedNamingTheNode) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const struct {
    std::function<void(onnx::NodeProto&)> change;
    std::string message;
  } cases[] = {
      {[](onnx::NodeProto& n) {
         ModelBuilder::ints(n, "output_shape", {5, 10, 10});
       },
       "ConvTranspose '/up/ConvTranspose' (opset 14): output_shape is not mapped"},
      {[](onnx::NodeProto& n) {
         for (auto& a : *n.mutable_attribute()) {
           if (a.name() != "pads") continue;  // ONNX refuses pads beside auto_pad
           a.set_name("auto_pad");
           a.set_type(onnx::AttributeProto_AttributeType_STRING);
           a.clear_ints();
           a.set_s("SAME_UPPER");
         }
       },
       "ConvTranspose '/up/ConvTranspose' (opset 14): auto_pad 'SAME_UPPER' is not mapped for ConvTranspose"},
      {[](onnx::NodeProto& n) {
         for (auto& a : *n.mutable_attribute()) {
           if (a.name() == "pads") a.set_ints(3, 1);
         }
       },
       "ConvTranspose '/up/ConvTranspose' (opset 14): uneven padding [0, 1, 1, 1, 1, 1]"},
  };
  for (const auto& c : cases) {
    auto g = transposed_video(c.change);
    ASSERT_FALSE(g.ok()) << c.message;
    EXPECT_THAT(g.error().message, HasSubstr(c.message));
  }
}

// --- shape arithmetic the importer folds, checked for overflow ---------------------------------

void int_constant(ModelBuilder& b, const std::string& name, std::vector<std::int64_t> values) {
  auto& n = b.node("Constant", "c_" + name, {}, name);
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto_DataType_INT64);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (std::int64_t v : values) t->add_int64_data(v);
}

std::string folded(const std::string& op, std::vector<std::int64_t> a, std::vector<std::int64_t> b) {
  ModelBuilder m(13, {4});
  int_constant(m, "a", std::move(a));
  int_constant(m, "b", std::move(b));
  m.node(op, "fold", {"a", "b"}, "c");
  m.node("Relu", "relu", {"input"}, "output");
  return m.bytes();
}

TEST(OnnxImport, FoldedShapeArithmeticThatOverflowsIsAnError) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_THAT(import_onnx(folded("Div", {kMin}, {-1}), "f.onnx").error().message,
              HasSubstr("f.onnx: node 'fold' (Div): the shape arithmetic -9223372036854775808 / -1 overflows 64-bit integers"));
  EXPECT_THAT(import_onnx(folded("Mul", {3}, {kHuge}), "f.onnx").error().message, HasSubstr("3 * 4611686018427387904 overflows"));
  EXPECT_THAT(import_onnx(folded("Add", {kMax, 1}, {1}), "f.onnx").error().message, HasSubstr("(Add): the shape arithmetic"));
  EXPECT_THAT(import_onnx(folded("Sub", {kMin}, {1}), "f.onnx").error().message, HasSubstr("(Sub): the shape arithmetic"));
  // In range, it folds and the model imports.
  auto fine = import_onnx(folded("Mul", {3, 4}, {5}), "f.onnx");
  EXPECT_TRUE(fine.ok()) << fine.error().message;
  // A Shape (known: [2, 4]) times 2^62.
  ModelBuilder shape(13, {4});
  shape.model().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(2);
  shape.node("Shape", "shape", {"input"}, "s");
  int_constant(shape, "k", {kHuge});
  shape.node("Mul", "scale", {"s", "k"}, "c");
  shape.node("Relu", "relu", {"input"}, "output");
  EXPECT_THAT(import_onnx(shape.bytes(), "s.onnx").error().message, HasSubstr("node 'scale' (Mul): the shape arithmetic"));
}

// A Slice whose end is shape arithmetic the importer evaluates, Mod among it (Swin pads to
// whole windows with (ws - W % ws) % ws): ONNX's Mod with fmod 0 takes the divisor's sign, as
// Python's %, so -5 mod 4 is 3 (C++'s % gives -1, which would keep 5 of the 6 rows).
TEST(OnnxImport, SliceBoundsFromFoldedModAreKept) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {4, 6, 5});
  int_constant(b, "a", {-5});
  int_constant(b, "k", {4});
  b.node("Mod", "mod", {"a", "k"}, "end");
  int_constant(b, "start", {0});
  int_constant(b, "axis", {2});
  b.node("Slice", "/rows/Slice", {"input", "start", "end", "axis"}, "output");
  auto g = import_onnx(b.bytes(4), "mod.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->nodes.back().op, OpKind::slice);
  EXPECT_EQ(g->nodes.back().output_shape, (Shape{4, 3, 5}));
}

// --- a shape input longer than a tensor's rank --------------------------------------------------

// ONNX 1.12 makes one dimension per element of a shape input it knows only the length of; a
// length of 10^12 would hold the import for minutes and exhaust memory. Each case below took
// that path: the length inferred for the output of an op before it (ConstantOfShape of
// [10^12]), or declared in the model's value_info for an output whose length inference leaves
// open (Unique's).
constexpr std::int64_t kLongShape = 1000000000000;

// "z": an int64 tensor of kLongShape ones, its length inferred from a Constant.
void long_shape_from_constant(ModelBuilder& b) {
  int_constant(b, "n", {kLongShape});
  auto& fill = b.node("ConstantOfShape", "fill", {"n"}, "z");
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
}

// "z": Unique's output, declared [length] in value_info.
void long_shape_declared(ModelBuilder& b, std::int64_t length) {
  int_constant(b, "k", {2, 4});
  b.node("Unique", "unique", {"k"}, "z");
  auto* info = b.model().mutable_graph()->add_value_info();
  info->set_name("z");
  auto* t = info->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_INT64);
  t->mutable_shape()->add_dim()->set_dim_value(length);
}

TEST(OnnxImport, AShapeInputLongerThanARankIsRefusedNotExpanded) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  for (const char* op : {"Reshape", "Expand"}) {
    ModelBuilder b(13, {4});
    long_shape_from_constant(b);
    b.node(op, "shaped", {"input", "z"}, "output");
    EXPECT_THAT(import_onnx(b.bytes(), "r.onnx").error().message,
                HasSubstr(std::string(op) + "'s input 1 is a shape of 1000000000000 values; a tensor has at most 16 axes"));
  }
  ModelBuilder resize(13, {3, 8, 8});
  long_shape_from_constant(resize);
  resize.node("Resize", "resize", {"input", "", "", "z"}, "output");
  EXPECT_THAT(import_onnx(resize.bytes(4), "r.onnx").error().message, HasSubstr("Resize's input 3 is a shape of 1000000000000 values"));
  ModelBuilder declared(13, {4});
  long_shape_declared(declared, kLongShape);
  declared.node("Reshape", "reshape", {"input", "z"}, "output");
  EXPECT_THAT(import_onnx(declared.bytes(), "r.onnx").error().message, HasSubstr("Reshape's input 1 is a shape of 1000000000000 values"));
  // Declared as long as a rank can be, inference goes on (and the import fails later, or not,
  // for its own reasons).
  ModelBuilder fine(13, {4});
  long_shape_declared(fine, 2);
  fine.node("Reshape", "reshape", {"input", "z"}, "output");
  auto imported = import_onnx(fine.bytes(), "r.onnx");
  if (!imported.ok()) {
    EXPECT_THAT(imported.error().message, Not(HasSubstr("is a shape of")));
  }
}

// --- names: control characters escaped, never raw in a layer's name or a message --------------

TEST(OnnxImport, ControlCharactersInNamesAreEscaped) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {4});
  b.node("Relu", std::string("/a\x1b[31m\r/Relu"), {"input"}, "r");
  b.node("Relu", std::string("/x\0y/Relu", 9), {"r"}, "r2");
  b.node("Relu", "/x/Relu", {"r2"}, "output");
  auto g = import_onnx(b.bytes(), "n.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_THAT(names_of(*g), ::testing::ElementsAre("a\\x1b[31m\\x0d", "x\\x00y", "x"));
  ModelBuilder bad(13, {3, 8, 8});
  bad.init("w", {4, 3, 3, 3});
  ModelBuilder::ints(bad.node("Conv", "c\x07\x1b", {"input", "w"}, "output"), "strides", {0, 0});
  const std::string message = import_onnx(bad.bytes(4), "n.onnx").error().message;
  EXPECT_THAT(message, HasSubstr("node 'c\\x07\\x1b' (Conv)"));
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

// --- constants the graph computes, and the batch folded into windows ------------------------

// A Constant node holding a tensor of `dims`: float32 values, or int64 where `ints` is given.
void constant_tensor(ModelBuilder& b, const std::string& name, std::vector<std::int64_t> dims, std::vector<float> floats,
                     std::vector<std::int64_t> ints = {}) {
  auto& n = b.node("Constant", "c_" + name, {}, name);
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(ints.empty() ? onnx::TensorProto_DataType_FLOAT : onnx::TensorProto_DataType_INT64);
  for (std::int64_t d : dims) t->add_dims(d);
  for (float f : floats) t->add_float_data(f);
  for (std::int64_t i : ints) t->add_int64_data(i);
}

// Swin's shifted-window mask is built in the graph from constants and the feature map's size
// (ConstantOfShape, Range, ScatterND, Equal, Not, Where, Cast): evaluated at import, it is the
// operand of the Add that reads it. Here: mask[i][j] = scattered (5 at [0, 0], 7 at [3, 3],
// else 0) where i + j is even, -100 where it is odd; the 4 is the input's axis 1, read by Shape.
TEST(OnnxImport, ConstantsComputedInTheGraphAreEvaluatedAndTakenAsOperands) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  ModelBuilder b(13, {4, 4});
  b.node("Shape", "/m/Shape", {"input"}, "shape");
  constant_tensor(b, "one", {}, {}, {1});
  b.node("Gather", "/m/Gather", {"shape", "one"}, "n");  // 4
  constant_tensor(b, "first", {1}, {}, {0});
  b.node("Unsqueeze", "/m/Unsqueeze", {"n", "first"}, "n1");
  ModelBuilder::integer(b.node("Concat", "/m/Concat", {"n1", "n1"}, "hw"), "axis", 0);  // [4, 4]
  b.node("ConstantOfShape", "/m/ConstantOfShape", {"hw"}, "zeros");
  constant_tensor(b, "where", {2, 2}, {}, {0, 0, 3, 3});
  constant_tensor(b, "values", {2}, {5.0f, 7.0f});
  b.node("ScatterND", "/m/ScatterND", {"zeros", "where", "values"}, "scattered");
  constant_tensor(b, "zero", {}, {}, {0});
  constant_tensor(b, "step", {}, {}, {1});
  b.node("Range", "/m/Range", {"zero", "n", "step"}, "r");
  constant_tensor(b, "last", {1}, {}, {1});
  b.node("Unsqueeze", "/m/Unsqueeze_1", {"r", "last"}, "column");
  b.node("Add", "/m/Add", {"column", "r"}, "sum");  // i + j
  constant_tensor(b, "two", {}, {}, {2});
  b.node("Mod", "/m/Mod", {"sum", "two"}, "parity");
  b.node("Equal", "/m/Equal", {"parity", "zero"}, "even");
  b.node("Not", "/m/Not", {"even"}, "odd");
  auto& cast = b.node("Cast", "/m/Cast", {"odd"}, "odd_float");
  ModelBuilder::integer(cast, "to", onnx::TensorProto_DataType_FLOAT);
  constant_tensor(b, "minus", {}, {-100.0f});
  b.node("Mul", "/m/Mul", {"odd_float", "minus"}, "penalty");
  b.node("Where", "/m/Where", {"even", "scattered", "penalty"}, "mask");
  b.node("Add", "/attn/Add", {"input", "mask"}, "output");
  auto g = import_onnx(b.bytes(3), "mask.onnx");
  ASSERT_TRUE(g.ok()) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 1u);
  const Node& add = g->nodes[0];
  EXPECT_EQ(add.op, OpKind::add);
  EXPECT_EQ(add.attrs.operand, (Shape{4, 4}));
  EXPECT_FALSE(add.attrs.operand_trainable);  // computed, not learned
  ASSERT_EQ(add.initial_values.size(), 1u);
  const std::vector<float> want = {5, -100, 0, -100, -100, 0, -100, 0, 0, -100, 0, -100, -100, 0, -100, 7};
  EXPECT_EQ(*add.initial_values[0].data, want);
}

// A constant too large to evaluate (or one whose indices are out of range) is left as it is:
// the node reading it is refused, naming it, in no time and without the memory.
TEST(OnnxImport, AConstantTooLargeOrMalformedIsNotEvaluatedAndItsReaderIsRefused) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto model = [](bool huge) {
    ModelBuilder b(13, {4, 4});
    if (huge) {
      constant_tensor(b, "shape", {1}, {}, {std::int64_t{1} << 40});
      b.node("ConstantOfShape", "/m/ConstantOfShape", {"shape"}, "big");
      constant_tensor(b, "starts", {1}, {}, {0});
      constant_tensor(b, "ends", {1}, {}, {4});
      b.node("Slice", "/m/Slice", {"big", "starts", "ends"}, "mask");
    } else {
      constant_tensor(b, "zeros", {4}, {0, 0, 0, 0});
      constant_tensor(b, "where", {1, 1}, {}, {9});  // past the end of [4]
      constant_tensor(b, "values", {1}, {1.0f});
      b.node("ScatterND", "/m/ScatterND", {"zeros", "where", "values"}, "mask");
    }
    b.node("Add", "/attn/Add", {"input", "mask"}, "output");
    return import_onnx(b.bytes(3), "mask.onnx");
  };
  for (const bool huge : {true, false}) {
    auto g = model(huge);
    ASSERT_FALSE(g.ok()) << huge;
    EXPECT_THAT(g.error().message, HasSubstr("Add '/attn/Add' (opset 13): the other operand is neither a layer's output nor a float32 constant"));
  }
}

// Windowed attention as torchvision's Swin writes it: the batch folded into the windows axis
// (Reshape to [batch·windows, tokens, C]), a linear, qkv.reshape(..).permute(2, 0, 3, 1, 4)
// read by three Gathers, Q·Kᵀ, softmax, A·V, and the windows unfolded again. Per sample the
// windows are the first axis: [4 windows, 4 tokens, 8].
TEST(OnnxImport, TheBatchFoldedIntoWindowsIsTheWindowsAxisPerSample) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto model = [](bool gathered) {
    ModelBuilder b(13, {4, 4, 8});
    constant_tensor(b, "windows", {3}, {}, {-1, 4, 8});
    b.node("Reshape", "/attn/Reshape", {"input", "windows"}, "x");
    b.init("w", {8, 24});
    b.node("MatMul", "/attn/MatMul", {"x", "w"}, "qkv");
    constant_tensor(b, "heads", {5}, {}, {-1, 4, 3, 2, 4});
    b.node("Reshape", "/attn/Reshape_1", {"qkv", "heads"}, "r");
    ModelBuilder::ints(b.node("Transpose", "/attn/Transpose", {"r"}, "t"), "perm", {2, 0, 3, 1, 4});
    if (!gathered) {
      b.node("Relu", "/attn/Relu", {"t"}, "output");
      return import_onnx(b.bytes(5), "swin.onnx");
    }
    for (int i = 0; i < 3; ++i) {
      constant_tensor(b, "i" + std::to_string(i), {}, {}, {i});
      b.node("Gather", "/attn/Gather_" + std::to_string(i), {"t", "i" + std::to_string(i)}, std::string(1, "qkv"[i]));
    }
    ModelBuilder::ints(b.node("Transpose", "/attn/Transpose_1", {"k"}, "kt"), "perm", {0, 1, 3, 2});
    b.node("MatMul", "/attn/MatMul_1", {"q", "kt"}, "scores");
    ModelBuilder::integer(b.node("Softmax", "/attn/Softmax", {"scores"}, "a"), "axis", -1);
    b.node("MatMul", "/attn/MatMul_2", {"a", "v"}, "o");
    ModelBuilder::ints(b.node("Transpose", "/attn/Transpose_2", {"o"}, "ot"), "perm", {0, 2, 1, 3});
    constant_tensor(b, "back", {4}, {}, {-1, 4, 4, 8});
    b.node("Reshape", "/attn/Reshape_2", {"ot", "back"}, "output");
    return import_onnx(b.bytes(4), "swin.onnx");
  };
  auto g = model(true);
  ASSERT_TRUE(g.ok()) << g.error().message;
  std::vector<std::string> ops;
  for (const Node& n : g->nodes) ops.emplace_back(op_name(n.op));
  // The first Reshape, [batch, 4, 4, 8] to [batch·4, 4, 8], is per sample [4, 4, 8] both
  // sides: the same memory, no layer.
  EXPECT_EQ(ops, (std::vector<std::string>{"linear", "reshape", "select", "transpose", "select", "transpose", "select", "transpose", "transpose",
                                           "matmul", "softmax", "matmul", "transpose", "reshape"}));
  EXPECT_EQ(g->nodes[0].output_shape, (Shape{4, 4, 24}));  // [batch·4, 4, 24]: 4 windows per sample
  EXPECT_EQ(g->nodes[1].output_shape, (Shape{4, 4, 3, 2, 4}));
  EXPECT_EQ(g->nodes[2].attrs.axis, 2);  // qkv[i]: the axis of 3
  EXPECT_EQ(g->nodes[4].attrs.index, 1);
  EXPECT_EQ(g->nodes[3].attrs.perm, (std::vector<std::int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(g->nodes[3].output_shape, (Shape{4, 2, 4, 4}));
  EXPECT_EQ(g->nodes[8].attrs.perm, (std::vector<std::int64_t>{0, 1, 3, 2}));  // the windows axis stays first
  EXPECT_EQ(g->nodes[10].attrs.axis, 3);
  EXPECT_EQ(g->nodes[13].output_shape, (Shape{4, 4, 8}));
  // The Transpose that moves the batch, read by anything but such Gathers, is refused.
  auto moved = model(false);
  ASSERT_FALSE(moved.ok());
  EXPECT_THAT(moved.error().message, HasSubstr("Transpose '/attn/Transpose' (opset 13): perm [2, 0, 3, 1, 4] moves the batch axis"));
}

// The relative position bias as PyTorch's exporter folds it (a constant [1, heads, N, N] added
// to the scores) is a rel_pos_bias layer with the table recovered from it; a bias that depends
// on i − j alone (ALiBi's, which fits every window) or has no window's structure stays a
// constant operand.
TEST(OnnxImport, AConstantWithTheRelativePositionStructureIsRelPosBiasWithItsTable) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto model = [](const std::function<float(std::int64_t, std::int64_t, std::int64_t)>& value) {
    ModelBuilder b(13, {3, 2, 4, 4});  // 3 windows, 2 heads, 2x2 windows of N = 4 positions
    std::vector<float> bias;
    for (std::int64_t h = 0; h < 2; ++h) {
      for (std::int64_t i = 0; i < 4; ++i) {
        for (std::int64_t j = 0; j < 4; ++j) bias.push_back(value(h, i, j));
      }
    }
    constant_tensor(b, "onnx::Add_7", {1, 2, 4, 4}, bias);
    b.node("Add", "/features/features.1/attn/Add", {"input", "onnx::Add_7"}, "output");
    return import_onnx(b.bytes(5), "bias.onnx");
  };
  // table[r, h] = 10·r + h, r Swin's index for a 2x2 window: (Δrow + 1)·3 + (Δcolumn + 1).
  auto swin = model(
      [](std::int64_t h, std::int64_t i, std::int64_t j) { return static_cast<float>(10 * ((i / 2 - j / 2 + 1) * 3 + (i % 2 - j % 2 + 1)) + h); });
  ASSERT_TRUE(swin.ok()) << swin.error().message;
  const Node& layer = swin->nodes.back();
  EXPECT_EQ(layer.op, OpKind::rel_pos_bias);
  EXPECT_EQ(layer.attrs.window.h, 2);
  EXPECT_EQ(layer.attrs.window.w, 2);
  ASSERT_EQ(layer.initial_values.size(), 1u);
  EXPECT_EQ(layer.initial_values[0].name, "table");
  EXPECT_EQ(layer.initial_values[0].shape, (Shape{9, 2}));
  std::vector<float> table;
  for (int r = 0; r < 9; ++r) {
    for (int h = 0; h < 2; ++h) table.push_back(static_cast<float>(10 * r + h));
  }
  EXPECT_EQ(*layer.initial_values[0].data, table);
  auto counted = count_parameters(*swin);
  ASSERT_TRUE(counted.ok());
  EXPECT_EQ(*counted, 18);
  auto alibi = model([](std::int64_t h, std::int64_t i, std::int64_t j) { return -0.5f * static_cast<float>(h + 1) * static_cast<float>(i - j); });
  auto arbitrary = model([](std::int64_t h, std::int64_t i, std::int64_t j) { return static_cast<float>(h * 16 + i * 4 + j); });
  for (auto* g : {&alibi, &arbitrary}) {
    ASSERT_TRUE(g->ok()) << g->error().message;
    EXPECT_EQ((*g)->nodes.back().op, OpKind::add);
    EXPECT_FALSE((*g)->nodes.back().attrs.operand_trainable);
  }
}

// torch.roll by 0 (Swin's shift along an axis its window covers) is Concat(x[:, 0:], x[:, :0]):
// the empty slice adds nothing to the Concat, which is then the input itself; anything else
// reading an empty slice is refused, naming it.
TEST(OnnxImport, AnEmptySliceIsNothingInAConcatAndRefusedElsewhere) {
  if (!onnx_supported()) GTEST_SKIP() << "built without libonnx-dev";
  const auto model = [](bool concatenated) {
    ModelBuilder b(13, {4, 6});
    constant_tensor(b, "zero", {1}, {}, {0});
    constant_tensor(b, "axis", {1}, {}, {1});
    constant_tensor(b, "end", {1}, {}, {std::numeric_limits<std::int64_t>::max()});
    b.node("Slice", "/attn/Slice", {"input", "zero", "end", "axis"}, "all");
    b.node("Slice", "/attn/Slice_1", {"input", "zero", "zero", "axis"}, "none");
    if (concatenated) {
      ModelBuilder::integer(b.node("Concat", "/attn/Concat", {"all", "none"}, "rolled"), "axis", 1);
      b.node("Relu", "/relu/Relu", {"rolled"}, "output");
    } else {
      b.node("Relu", "/relu/Relu", {"none"}, "output");
    }
    return import_onnx(b.bytes(3), "roll.onnx");
  };
  auto rolled = model(true);
  ASSERT_TRUE(rolled.ok()) << rolled.error().message;
  ASSERT_EQ(rolled->nodes.size(), 1u);
  EXPECT_EQ(rolled->nodes[0].op, OpKind::relu);
  EXPECT_EQ(rolled->nodes[0].output_shape, (Shape{4, 6}));
  auto read = model(false);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error().message, HasSubstr("Relu '/relu/Relu' (opset 13): it reads 'none', an empty slice, which only a Concat may read"));
}

// --- the engine never sees a window that divides by zero ----------------------------------------

TEST(OnnxImport, ShapeInferenceRefusesZeroWindowsInAGraphMadeInCode) {
  Graph g;
  g.name = "made";
  g.input.shape = {3, 8, 8};
  for (const OpKind op : {OpKind::maxpool2d, OpKind::conv_transpose2d, OpKind::conv2d}) {
    Node n;
    n.name = "w";
    n.op = op;
    n.inputs = {kModelInput};
    n.attrs.kernel = {2, 2};
    n.attrs.stride = {0, 0};
    n.attrs.out_channels = 3;
    g.nodes = {n};
    auto error = graph::infer_shapes(g);
    ASSERT_TRUE(error.has_value()) << op_name(op);
    EXPECT_THAT(error->message, HasSubstr("stride is 0x0; it must be at least 1"));
    g.nodes[0].attrs.stride = {1, 1};
    g.nodes[0].attrs.kernel = {0, 0};
    error = graph::infer_shapes(g);
    ASSERT_TRUE(error.has_value()) << op_name(op);
    EXPECT_THAT(error->message, HasSubstr("kernel is 0x0"));
  }
}

}  // namespace
}  // namespace hwprof
