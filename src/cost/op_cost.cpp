// The cost table: one entry per op of the op table (src/ops/ops.cpp). This comment is the
// reference for every count hwprof calls analytic; docs/cost.md, "Counting convention" repeats it.
//
// Notation (per sample): n = output elements, n_in = input elements, rows = n / (size of the
// reduced axis). MACs: conv2d (conv3d, conv_transpose2d, conv_transpose3d), linear and attention's matmuls only, biases
// excluded (torchvision's "GFLOPS", the ResNet paper and fvcore count the same).
// FLOPs = 2·MACs + the element-wise work below. A transcendental (exp, erf, tanh, sqrt) or a
// division counts as 1 FLOP, as in fvcore and most analytic counters; hardware counters count
// the instructions that implement it, which is one known source of measured/analytic gaps.
//
// op            forward FLOPs (eval)              training fwd   backward: weights | input
// linear        2·MACs + rows·out (bias)          same           2·MACs + rows·out | 2·MACs
// conv2d        2·MACs + n (bias)                 same           2·MACs + n        | 2·MACs
// conv_transpose2d  as conv2d, MACs = n_in·(out/groups)·kh·kw (each input element scattered)
// conv3d        as conv2d, MACs = n·(in/groups)·kd·kh·kw
// conv_transpose3d as conv_transpose2d, MACs = n_in·(out/groups)·kd·kh·kw
// batchnorm2d   2n (scale, shift folded)          7n (stats)     5n                | 5n
//   batchnorm3d the same, its channels' statistics over D·H·W and the batch
// layernorm     7n + 5·rows                       same           5n                | 8n + 2·rows
// relu          1n                                same           -                 | 1n
// relu6         2n                                same           -                 | 2n
// gelu (erf)    5n   x·½·(1+erf(x/√2))            same           -                 | 11n
// gelu (tanh)   9n   x·½·(1+tanh(√(2/π)(x+.044715x³)))            -                 | 18n
// silu          5n   x·σ(x)                       same           -                 | 9n
// sigmoid       4n   1/(1+exp(-x))                same           -                 | 3n
// tanh          1n                                same           -                 | 3n
// softmax       5n + rows (max, sub, exp, sum, ×1/sum)            -                 | 4n
// maxpool2d     n·(kh·kw − 1) comparisons         same           -                 | 1n
// avgpool2d     n·kh·kw (adds and the divide)     same           -                 | n·(kh·kw + 1)
// adaptive avg  Σ over outputs of window size     same           -                 | Σ(window + 1)
//   maxpool3d, avgpool3d, adaptive_avgpool3d: the same with the window kd·kh·kw (3 axes' windows)
// upsample      nearest 0 (gather)                same           -                 | 1n (scatter-add)
//               bilinear 7n (4 products, 3 adds)  same           -                 | 8n (4 products, 4 adds)
//               (the weights depend on the row or the column alone: computed per row and column, not counted)
// reduce        sum: n_in − n adds (each group's first element starts it); mean: n_in (+ n divides)
//                                                 same           -                 | sum 0 (dy broadcast), mean n_in (dy/k per input)
// hardsigmoid   4n   relu6(x+3)/6                 same           -                 | 2n
// hardswish     5n   x·relu6(x+3)/6               same           -                 | 4n
// softplus      4n   x>20 ? x : log(1+exp(x))     same           -                 | 5n (x>20 ? dy : dy·z/(z+1), z = exp(x))
// mish          5n   x·tanh(log(1+exp(x)))        same           -                 | 14n (dy·(t + x·σ(x)·(1−t²)))
// leaky_relu    2n   x>0 ? x : slope·x            same           -                 | 2n (dy·(x>0 ? 1 : slope))
// elu           4n   x>0 ? x : α·(exp(x)−1)       same           -                 | 4n (x>0 ? dy : dy·α·exp(x))
// add, sub      1n                                same           -                 | 0, 1n (+n broadcast)
// mul, div      1n                                same           -                 | 2n, 4n (+n broadcast)
// matmul        2·MACs, MACs = n·K ([..,M,K]·[..,K,N] of two activations)  -  | 4·MACs (dA = dY·Bᵀ, dB = Aᵀ·dY)
//   with one input and an operand tensor: input gradient 0 (add, sub) or n (mul, div); a
//   learned operand's gradient n (add, sub), 2n (mul), 4n (div), its sum over the batch and
//   the broadcast axes included
// dropout       0 (identity)                      1n (mask)      -                 | 1n
// embedding     0 (gather)                        same           n (scatter-add)   | — (int ids)
// pos_embedding 1n                                same           n                 | 0
// rel_pos_bias  1n                                same           n                 | 0 (dy passed on)
//   Swin's relative position bias over scores [..., heads, N, N]: one add per score; the
//   table's gradient sums each score's dy into its row
// cls_token     0                                 same           D                 | 0
// flatten, reshape, transpose, concat, select: 0 (data movement only)
// where         0 (each element copied from one side); the condition and a constant operand are
//               buffers. Input gradient: dy where the condition picks that input, 0 elsewhere (a
//               masked copy), summed over its broadcast axes (n − n_in adds each)
// slice, pad, gather, expand, tile: 0 forward (copies; docs/onnx.md, "How ops map"); the input
//   bytes are the elements read: a slice reads only what it keeps, a gather its distinct rows, a
//   pad the part of the input that is not cropped. Input gradient: each input element sums the
//   output gradients of the positions copied from it, n − (elements read) adds: 0 for a slice
//   and a constant pad (a scatter), the broadcast axes of expand and tile, the mirrored or
//   repeated borders of reflect and edge padding, a gather's repeated indices.
// unsupported   not counted: an imported op hwprof cannot map; totals become lower bounds
// lstm, gru     per direction, T steps, G gates (lstm 4: i f g o; gru 3: r z n), input C, state H:
//               MACs = T·G·H·(C + H) (W_ih·x and W_hh·h every step: the products of ptflops'
//               rnn_flops, sovrasov/flops-counter.pytorch ptflops/pytorch_ops.py);
//               FLOPs = 2·MACs + 2·T·G·H (b_ih, b_hh) + T·H·(lstm 22, gru 17) gate arithmetic
//               (lstm: 4 adds of the two products, 3 sigmoids 12, tanh(g) 1, c = f·c + i·g 3, o·tanh(c) 2;
//                gru: 2 adds, 2 sigmoids 8, x_n + r·(W_hn·h + b_hn) 2, tanh 1, (1−z)·n + z·h 4)
//               backward: through time 2·T·G·H·H (dh = dgates·W_hh) + T·H·(lstm 24, gru 18) always;
//               weights 2·MACs + 2·T·G·H (bias); input 2·T·G·H·C. The same with initial states
//               given (inputs h0, c0): the first step's W_hh·h0 and its gradient are among the T
//               steps counted (with zero states they are products of zeros, counted as ptflops
//               does); h0's and c0's bytes are among the inputs'.
// attention     2·MACs + 4·T·D (bias) + H·T² (scale) + 5·H·T² + H·T (softmax)
//               MACs = 4·T·D² (Q, K, V, output projections) + 2·T²·D (Q·Kᵀ, A·V);
//               causal attention counts the full T×T products.
//               backward: always 2·T·D² + 8·T²·D + 5·H·T² (through the output projection,
//               both matmuls, softmax and scale); weights 8·T·D² + 4·T·D (bias);
//               input 6·T·D² + 2·T·D (three projections and their sum).
//
// Backward is derived per op, not assumed to be 2× forward: a layer that does not need an
// input gradient (its input is the model input, or nothing upstream trains) skips it, and a
// layer with no trainable parameter upstream or inside has no backward at all.
//
// Minimum bytes (fp32 activations, int32 ids): batch·(distinct inputs + output) + parameters
// and buffers read once per batch. Views (flatten, reshape, evaluation dropout) move nothing.
// embedding reads min(num_embeddings, batch·T) rows (all tokens assumed distinct, an upper
// bound), pos_embedding reads T rows, rel_pos_bias its whole table.
//
// Inference memory: every output lives from its layer to its last reader; attention also
// holds Q, K, V, the context and its H·T² scores (4·T·D + H·T² floats) while it runs.
//
// Kept for backward (training memory): linear, the convolutions, embedding, batchnorm2d, batchnorm3d, layernorm,
// relu6, gelu, silu, hardswish, hardsigmoid, softplus, mish, leaky_relu, elu, hardshrink and attention keep their input, mul, div and matmul both
// (the second as an extra); relu, sigmoid, tanh and softmax keep their output; the max pools keep
// int32 indices of their output; dropout a 1-byte mask;
// layernorm 2 floats per row; batchnorm2d and batchnorm3d 2 floats per channel per batch; attention Q, K, V,
// the context (4·T·D floats) and its H·T² probabilities; lstm and gru their input, their output (the
// states) and per direction T·(G + 1)·H floats (the gates, and the cell state or W_hn·h + b_hn), which
// they also hold while they run in inference, and the initial states given (D·H floats each). A tensor kept by two layers counts once.
#include "cost/op_cost.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include "common/stages.hpp"
#include "ops/ops.hpp"

namespace hwprof::cost {
namespace {

constexpr std::int64_t kFloatBytes = 4;

Count n_of(const Shape& s) {
  return numel(s);
}

// Sum of PyTorch's adaptive-pooling window lengths along one axis, where window i spans
// [floor(i·in/out), ceil((i+1)·in/out)). Summing floors and ceilings in closed form gives
// in + out − gcd(in, out) (tests/unit check it against the direct sum).
Count adaptive_window_sum(std::int64_t in, std::int64_t out) {
  return Count(in) + out - std::gcd(in, out);
}

// An element-wise binary op (the table above), from its definition's backward FLOPs: both
// gradients of two activations (add passes dy on, sub negates it for b, mul multiplies it by the
// other input, div needs dy/b and dy·a/b²), an input that was broadcast summing its gradient over
// the broadcast axes (n adds); mul and div keep both inputs for backward. With one input and an
// operand: a constant is a buffer; a learned one a parameter whose gradient is summed over the
// batch and the broadcast axes.
void binary_cost(const ops::BinaryDefinition& binary, const Graph& g, const Node& node, Count n, OpCost& c) {
  const Attributes& a = node.attrs;
  c.flops = n;
  if (node.inputs.size() == 1) {
    const Count elements = n_of(a.operand);
    (a.operand_trainable ? c.params : c.buffers) = elements;
    c.weight_bytes = elements * kFloatBytes;
    c.has_weights = a.operand_trainable;
    c.input_grad_flops = n * binary.input_grad_flops;
    c.weight_grad_flops = a.operand_trainable ? n * binary.operand_grad_flops : Count(0);
    c.saves_input = a.operand_trainable && binary.keeps_inputs;
    return;
  }
  const bool broadcast = g.shape_of(node.inputs[0]) != g.shape_of(node.inputs[1]);
  c.internal_grad_flops = n * binary.grad_flops + (broadcast ? n : Count(0));
  if (binary.keeps_inputs) {
    c.saves_input = true;
    c.saved_bytes_per_sample = n_of(g.shape_of(node.inputs[1])) * kFloatBytes;
  }
}

// A normalization (the table above). A batch norm: its scale and shift folded with the running
// statistics into one multiply-add per element in evaluation (2n); in training the batch's
// statistics first (7n); backward 5n for the input and 5n for scale and shift; it keeps its
// input and the batch's mean and inverse deviation per channel. A layer norm: its statistics
// per row every time (7n + 5 per row), backward 8n + 2 per row for the input and 5n for its
// scale and shift; it keeps its input and each row's mean and inverse deviation.
void norm_cost(const ops::NormalizationDefinition& norm, const Shape& in, Count n, OpCost& c) {
  const std::int64_t width = ops::normalized_width(norm, in).size;
  c.params = Count(2) * width;
  c.has_weights = true;
  c.saves_input = true;
  c.weight_grad_flops = n * 5;
  switch (norm.statistics) {
    case ops::NormStatistics::per_channel:
      c.buffers = Count(2) * width;
      c.flops = n * 2;
      c.train_forward_flops = n * 7;
      c.input_grad_flops = n * 5;
      c.weight_bytes = (c.params + c.buffers) * kFloatBytes;
      c.saved_bytes_fixed = Count(2) * width * kFloatBytes;
      return;
    case ops::NormStatistics::per_row: {
      const Count rows = n.value() / width;
      c.flops = n * 7 + rows * 5;
      c.train_forward_flops = c.flops;
      c.input_grad_flops = n * 8 + rows * 2;
      c.weight_bytes = c.params * kFloatBytes;
      c.saved_bytes_per_sample = rows * 2 * kFloatBytes;
      return;
    }
  }
}

// A pooling op over its definition's axes (the table above): a maximum of a window of k
// elements is k − 1 comparisons and its backward one add per output (dy into the argmax, which
// it keeps as int32); a mean is k adds and the divide, its backward k + 1 per output; adaptive
// windows have the sizes adaptive_window_sum gives along each axis.
void pool_cost(const ops::PoolingDefinition& pool, const Attributes& a, const Shape& in, Count n, OpCost& c) {
  const ops::PoolAxes axes = pool_axes(pool, a);
  if (pool.reduction == ops::PoolReduction::adaptive_average) {
    Count windows = 1;
    Count outputs = 1;
    std::size_t d = 1;
    for (const ops::PoolAxis& x : axes.view()) {
      windows = windows * adaptive_window_sum(in[d++], x.output);
      outputs = outputs * x.output;
    }
    c.flops = windows * in[0];
    c.input_grad_flops = (windows + outputs) * in[0];
    return;
  }
  Count window = 1;
  for (const ops::PoolAxis& x : axes.view()) window = window * x.kernel;
  if (pool.reduction == ops::PoolReduction::max) {
    c.flops = n * (window - 1);
    c.input_grad_flops = n;
    c.saved_bytes_per_sample = n * 4;  // int32 argmax indices
    return;
  }
  c.flops = n * window;
  c.input_grad_flops = n * (window + 1);
}

// A convolution (ops/convolution.cpp): every output element gathers in/groups·kernel products
// (the kernel's positions over every spatial axis). A transposed one: every input element is
// scattered through out/groups·kernel weights (fvcore's count for transposed convolutions: input
// positions × weight elements per input channel).
void conv_cost(const ops::ConvolutionDefinition& conv, const Attributes& a, const Shape& in, Count n, Count n_in, OpCost& c) {
  const bool transposed = conv.transposed;
  Count per_element = Count((transposed ? a.out_channels : in[0]) / a.groups);
  const ops::ConvAxes axes = ops::conv_axes(conv, a);
  for (const ops::ConvAxis& x : axes.view()) per_element = per_element * x.kernel;
  const Count bias = a.bias ? Count(a.out_channels) : Count(0);
  const Count bias_flops = a.bias ? n : Count(0);
  const Count weights = per_element * (transposed ? in[0] : a.out_channels) + bias;
  c.params = a.tied_to >= 0 ? Count(0) : weights;  // shared: counted at the layer that owns them
  c.macs = (transposed ? n_in : n) * per_element;
  c.flops = c.macs * 2 + bias_flops;
  c.weight_grad_flops = c.macs * 2 + bias_flops;
  c.input_grad_flops = c.macs * 2;
  c.weight_bytes = weights * kFloatBytes;  // read by every layer that uses them
  c.has_weights = true;
  c.saves_input = true;
}

// A recurrent op (docs/cost.md, "Counting convention", recurrent layers): the products as
// ptflops' rnn_flops counts them (W_ih and W_hh times the input and the state, every step),
// biases and the gate arithmetic (its definition's, per state element and step) counted apart,
// as written in PyTorch's formulas.
void recurrent_cost(const ops::RecurrentDefinition& def, const Node& node, const Shape& in, OpCost& c) {
  const Attributes& a = node.attrs;
  const Count dirs = a.bidirectional ? 2 : 1;
  const std::int64_t t = in[0], x = in[1], h = a.hidden_size;
  const Count gh = Count(def.gates) * h;                   // one direction's gate rows
  const Count units = dirs * Count(t) * h;                 // state elements computed per sample
  const Count steps = dirs * Count(t) * gh;                // gate elements per sample
  const Count bias_flops = a.bias ? steps * 2 : Count(0);  // b_ih and b_hh
  c.params = dirs * (gh * x + gh * h + (a.bias ? gh * 2 : Count(0)));
  c.macs = steps * (Count(x) + h);
  c.flops = c.macs * 2 + bias_flops + units * def.gate_flops;
  c.internal_grad_flops = steps * h * 2 + units * def.gate_grad_flops;
  c.weight_grad_flops = c.macs * 2 + bias_flops;
  c.input_grad_flops = steps * x * 2;
  c.weight_bytes = c.params * kFloatBytes;
  c.has_weights = true;
  c.saves_input = true;
  c.saves_output = true;  // each step's state, read back as the previous state
  // The gates after their activations and the cell state (LSTM) or W_hn·h + b_hn (GRU).
  c.saved_bytes_per_sample = (steps + units) * kFloatBytes;
  c.workspace_bytes_per_sample = c.saved_bytes_per_sample;
  // The initial states given, read again by backward: the first step's previous state.
  c.saved_bytes_per_sample = c.saved_bytes_per_sample + Count(static_cast<std::int64_t>(node.inputs.size()) - 1) * dirs * h * kFloatBytes;
}

// The input elements a data-movement op copies from, each counted once: a slice's kept
// positions (its output), a gather's distinct rows, a pad's uncropped input; expand and tile
// read all of their input.
Count elements_read(const Node& node, const Shape& in) {
  const Attributes& a = node.attrs;
  if (node.op == OpKind::slice) return n_of(node.output_shape);
  if (node.op == OpKind::gather) {
    const auto axis = static_cast<std::size_t>(normalized_axis(a.axis, static_cast<std::int64_t>(in.size())));
    std::set<std::int64_t> rows;
    for (std::int64_t i : a.indices) rows.insert(normalized_axis(i, in[axis]));
    return Count(numel(in) / in[axis]) * static_cast<std::int64_t>(rows.size());
  }
  if (node.op == OpKind::pad) {
    Count read = 1;
    for (std::size_t d = 0; d < in.size(); ++d)
      read = read * (in[d] + std::min<std::int64_t>(a.pads[d], 0) + std::min<std::int64_t>(a.pads[d + in.size()], 0));
    return read;
  }
  return n_of(in);
}

}  // namespace

// nn.Linear over the rows of every leading axis; a tied weight is counted at its owner.
void linear_cost(const Attributes& a, const Shape& in, Count n_in, OpCost& c) {
  const std::int64_t in_f = in.back();
  const Count rows = n_in.value() / in_f;
  const Count weight = Count(in_f) * a.out_features;
  const Count bias = a.bias ? Count(a.out_features) : Count(0);
  const Count bias_flops = a.bias ? rows * a.out_features : Count(0);
  c.params = (a.tied_to >= 0 ? Count(0) : weight) + bias;
  c.macs = rows * in_f * a.out_features;
  c.flops = c.macs * 2 + bias_flops;
  c.weight_grad_flops = c.macs * 2 + bias_flops;
  c.input_grad_flops = c.macs * 2;
  c.weight_bytes = (weight + bias) * kFloatBytes;
  c.has_weights = true;
  c.saves_input = true;
}

// Its FLOPs per element and row are its definition's (ops/softmax.cpp); backward reads the output.
void softmax_cost(const ops::SoftmaxDefinition& def, const Attributes& a, const Shape& in, Count n, OpCost& c) {
  const std::int64_t axis = normalized_axis(a.axis, static_cast<std::int64_t>(in.size()));
  const Count rows = n.value() / in[static_cast<std::size_t>(axis)];
  c.flops = n * def.flops + rows * def.row_flops;
  c.input_grad_flops = n * def.grad_flops;
  c.saves_output = true;
}

// Per output element, its mode's FLOPs (ops/upsample.cpp); nothing is kept for backward.
void upsample_cost(const Attributes& a, Count n, OpCost& c) {
  const ops::UpsampleModeDefinition& mode = ops::upsample_mode(a.mode);
  c.flops = n * mode.flops;
  c.input_grad_flops = n * mode.grad_flops;
}

void reduce_cost(const Attributes& a, Count n, Count n_in, OpCost& c) {
  // Each output sums its group of k = n_in / n inputs: k − 1 adds, n_in − n in all; a
  // reduction that divides (a mean, ops/reduce.cpp) divides each sum by k (n more). Backward: a
  // sum's input gradient is dy broadcast over the group (a copy, 0 FLOPs); a mean's is dy / k,
  // one division per input element (as PyTorch's mean backward, dy.expand(...) / k, and the
  // engine's kernel compute it). Neither keeps a tensor for backward.
  const bool divides = ops::reduce_mode(a.reduce_mode).divides;
  c.flops = divides ? n_in : n_in - n;
  c.input_grad_flops = divides ? n_in : Count(0);
}

void matmul_cost(const Graph& g, const Node& node, const Shape& in, Count n, OpCost& c) {
  // Each output element is a K-long dot product: MACs = n·K (fvcore counts torch.matmul
  // and bmm so). Backward: dA = dY·Bᵀ and dB = Aᵀ·dY, 2·MACs each, plus the sum over the
  // outputs that shared a broadcast operand (counted in those GEMMs' accumulation). Both
  // operands are activations: they are kept, the second as an extra.
  const Count k = Count(in.back());
  c.macs = n * k;
  c.flops = c.macs * 2;
  c.internal_grad_flops = c.macs * 4;
  c.saves_input = true;
  c.saved_bytes_per_sample = n_of(g.shape_of(node.inputs[1])) * kFloatBytes;
}

// Self-attention over [T, D] with H heads (the table in this file's header).
void attention_cost(const Attributes& a, const Shape& in, OpCost& c) {
  const std::int64_t t = in[0];
  const std::int64_t d = in[1];
  const std::int64_t h = a.heads;
  const Count td = Count(t) * d;
  const Count tdd = td * d;
  const Count ttd = Count(t) * t * d;
  const Count htt = Count(h) * t * t;
  const Count bias_flops = a.bias ? td * 4 : Count(0);
  c.params = Count(4) * d * d + (a.bias ? Count(4) * d : Count(0));
  c.macs = tdd * 4 + ttd * 2;
  c.flops = c.macs * 2 + bias_flops + htt + htt * 5 + Count(h) * t;
  c.internal_grad_flops = tdd * 2 + ttd * 8 + htt * 5;
  c.weight_grad_flops = tdd * 8 + bias_flops;
  c.input_grad_flops = tdd * 6 + td * 2;
  c.weight_bytes = c.params * kFloatBytes;
  c.has_weights = true;
  c.saves_input = true;
  c.saved_bytes_per_sample = (td * 4 + htt) * kFloatBytes;
  // Unfused attention materialises Q, K, V, the context and the H·T² scores while it
  // runs; at long contexts the scores dominate the inference peak.
  c.workspace_bytes_per_sample = c.saved_bytes_per_sample;
}

// Long: one case per op of the other families (the element-wise ones come from the op table), each
// the formulas of the table in this file's header, side by side to be checked against it.
OpCost op_cost(const Graph& g, const Node& node, std::int64_t batch) {
  OpCost c;
  const Attributes& a = node.attrs;
  const Shape& in = g.shape_of(node.inputs[0]);
  const Count n = n_of(node.output_shape);
  const Count n_in = n_of(in);

  std::set<int> distinct(node.inputs.begin(), node.inputs.end());
  for (int input : distinct) c.input_bytes += n_of(g.shape_of(input)) * kFloatBytes;
  c.output_bytes = n * kFloatBytes;

  // Element-wise unary ops: their cost per element is in the op table (ops/ops.cpp).
  if (const auto u = unary_traits(node)) {
    c.flops = n * u->flops;
    c.input_grad_flops = n * u->grad_flops;
    (u->backward_reads_output ? c.saves_output : c.saves_input) = true;
    c.train_forward_flops = c.flops;
    return c;
  }
  if (const ops::BinaryDefinition* binary = binary_definition(node.op)) {
    binary_cost(*binary, g, node, n, c);
    c.train_forward_flops = c.flops;
    return c;
  }
  if (const ops::NormalizationDefinition* norm = normalization_definition(node.op)) {
    norm_cost(*norm, in, n, c);
    return c;
  }
  if (const ops::PoolingDefinition* pool = pooling_definition(node.op)) {
    pool_cost(*pool, a, in, n, c);
    c.train_forward_flops = c.flops;
    return c;
  }
  if (const ops::ConvolutionDefinition* conv = convolution_definition(node.op)) {
    conv_cost(*conv, a, in, n, n_in, c);
    c.train_forward_flops = c.flops;
    return c;
  }
  if (const ops::RecurrentDefinition* recurrent = recurrent_definition(node.op)) {
    recurrent_cost(*recurrent, node, in, c);
    c.train_forward_flops = c.flops;
    return c;
  }
  if (const ops::SoftmaxDefinition* softmax = softmax_definition(node.op)) {
    softmax_cost(*softmax, a, in, n, c);
    c.train_forward_flops = c.flops;
    return c;
  }
  // A data-movement op whose output is its input's storage moves no bytes (its definition).
  if (const ops::DataMovementDefinition* move = data_movement_definition(node.op)) c.is_view = move->view;
  switch (node.op) {
    case OpKind::linear:
      linear_cost(a, in, n_in, c);
      break;
    case OpKind::upsample:
      upsample_cost(a, n, c);
      break;
    case OpKind::reduce:
      reduce_cost(a, n, n_in, c);
      break;
    case OpKind::matmul:
      matmul_cost(g, node, in, n, c);
      break;
    case OpKind::attention:
      attention_cost(a, in, c);
      break;
    case OpKind::dropout:
      c.train_forward_flops = n;
      c.input_grad_flops = n;
      c.saved_bytes_per_sample = n;  // 1-byte keep mask
      break;
    case OpKind::flatten:
    case OpKind::reshape:
    case OpKind::transpose:
    case OpKind::concat:
    case OpKind::select:
      break;
    case OpKind::where: {
      Count sums = 0;
      for (int input : node.inputs) sums = sums + (n - n_of(g.shape_of(input)));
      (node.inputs.size() == 1 ? c.input_grad_flops : c.internal_grad_flops) = sums;
      c.buffers = n_of(a.condition) + (node.inputs.size() == 1 ? n_of(a.operand) : Count(0));
      c.weight_bytes = c.buffers * kFloatBytes;
      c.saved_bytes_per_sample = 0;
      break;
    }
    case OpKind::slice:
    case OpKind::pad:
    case OpKind::gather:
    case OpKind::expand:
    case OpKind::tile: {
      const Count read = elements_read(node, in);
      c.input_bytes = read * kFloatBytes;
      c.input_grad_flops = n - read;
      break;
    }
    case OpKind::embedding: {
      const std::int64_t tokens = in[0];
      c.params = Count(a.num_embeddings) * a.embedding_dim;
      c.weight_grad_flops = n;
      const Count lookups = Count(batch) * tokens;
      const std::int64_t rows_read = lookups.overflowed() ? a.num_embeddings : std::min(a.num_embeddings, lookups.value());
      c.weight_bytes = Count(rows_read) * a.embedding_dim * kFloatBytes;
      c.has_weights = true;
      c.saves_input = true;
      break;
    }
    case OpKind::pos_embedding:
      c.params = Count(a.num_positions) * in[1];
      c.flops = n;
      c.weight_grad_flops = n;
      c.weight_bytes = n * kFloatBytes;  // the T rows in use
      c.has_weights = true;
      break;
    case OpKind::rel_pos_bias: {
      // Swin's relative position bias: the whole [(2·wh − 1)·(2·ww − 1), heads] table is read
      // (every offset occurs in a window), one add per score. Backward: dx = dy passed on (a
      // copy, 0) and the table's gradient one add per score (the sum over the batch and the
      // leading axes, then the scatter into the table).
      const Count rows = (Count(2) * a.window.h - 1) * (Count(2) * a.window.w - 1);
      c.params = rows * in[in.size() - 3];
      c.flops = n;
      c.weight_grad_flops = n;
      c.weight_bytes = c.params * kFloatBytes;
      c.has_weights = true;
      break;
    }
    case OpKind::cls_token:
      c.params = in[1];
      c.weight_grad_flops = in[1];
      c.weight_bytes = Count(in[1]) * kFloatBytes;
      c.has_weights = true;
      break;
    case OpKind::unsupported:
      // Nothing is known of its work or weights (analyze() marks it not counted); its
      // activations' sizes, set above, are.
      break;
      HWPROF_ELEMENTWISE_UNARY_CASES
      HWPROF_POOLING_CASES
      HWPROF_NORMALIZATION_CASES
      HWPROF_ELEMENTWISE_BINARY_CASES
      HWPROF_RECURRENT_CASES
      HWPROF_CONVOLUTION_CASES
      HWPROF_SOFTMAX_CASES
      break;  // above, from their definitions
  }
  // Training mode differs from evaluation only for batch norms (their definitions' cost, above)
  // and dropout, set above.
  if (node.op != OpKind::dropout) c.train_forward_flops = c.flops;
  return c;
}

}  // namespace hwprof::cost
