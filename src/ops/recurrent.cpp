#include "ops/recurrent.hpp"

#include "ops/definitions.hpp"

namespace hwprof::ops {
namespace {

constexpr std::string_view kLstmStates[] = {"h0", "c0"};
constexpr std::string_view kGruStates[] = {"h0"};
// ONNX's gate orders (onnx.ai, operators LSTM and GRU): i o f c and z r h; PyTorch's: i f g o
// and r z n (torch.nn.LSTM's and torch.nn.GRU's weight_ih_l[k]).
constexpr int kLstmFromOnnx[] = {0, 2, 3, 1};
constexpr int kGruFromOnnx[] = {1, 0, 2};
constexpr std::string_view kLstmActivations[] = {"Sigmoid", "Tanh", "Tanh"};
constexpr std::string_view kGruActivations[] = {"Sigmoid", "Tanh"};

// Gate arithmetic per state element and step, PyTorch's formulas with the cost table's sigmoid
// (4 FLOPs) and tanh (1). LSTM forward 22: the four gates' sums of the two products (4), three
// sigmoids (12), tanh(g) (1), c = f·c + i·g (3), h = o·tanh(c) (2); backward 24. GRU forward 17:
// the sums for r and z (2), two sigmoids (8), x_n + r·(W_hn·h + b_hn) (2), tanh (1),
// h = (1 − z)·n + z·h (4); backward 18 (docs/cost.md, "Counting convention").
constexpr RecurrentDefinition kRecurrents[] = {
    {OpKind::lstm, RecurrentCell::lstm, 4, kLstmStates, 22, 24, "nn.LSTM", "LSTM", kLstmFromOnnx, kLstmActivations, "lstm"},
    {OpKind::gru, RecurrentCell::gru, 3, kGruStates, 17, 18, "nn.GRU", "GRU", kGruFromOnnx, kGruActivations, "gru"},
};

}  // namespace

std::span<const RecurrentDefinition> recurrent_definitions() {
  return kRecurrents;
}

const RecurrentDefinition* recurrent_definition(OpKind kind) noexcept {
  return first_definition(kRecurrents, [&](const RecurrentDefinition& d) { return d.kind == kind; });
}

const RecurrentDefinition* recurrent_for_onnx(std::string_view type) noexcept {
  return first_definition(kRecurrents, [&](const RecurrentDefinition& d) { return d.onnx_type == type; });
}

const RecurrentDefinition* recurrent_for_aten(std::string_view name) noexcept {
  return first_definition(kRecurrents, [&](const RecurrentDefinition& d) { return d.aten_name == name; });
}

}  // namespace hwprof::ops
