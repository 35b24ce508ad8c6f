// The engine's kernels, forward and backward, on raw row-major float32 buffers (NCHW for
// images, [rows, features] for sequences). Internal to hwprof (src/nn); the executor calls
// them, tests compare them with straightforward reference loops.
//
// Conventions, for every kernel:
// - Output buffers are overwritten, never read (except where "+=" is written below).
// - Input gradients (dx) are overwritten; a null dx means "not needed" (the model input, or
//   an integer input) and is skipped.
// - Parameter gradients (dw, db, dgamma, ...) are ACCUMULATED (+=): a weight tied between two
//   layers sums both contributions; the optimizer zeroes them once per step. A null one is
//   skipped.
// - Parallelism: OpenMP only, with the thread count set by set_kernel_threads(). The dense
//   kernels split their GEMMs into panels, samples or heads, one per OpenMP thread, each a
//   single-threaded OpenBLAS call (src/nn/blas.hpp): with both OpenMP's and OpenBLAS's pools
//   active, libgomp's spinning workers took a core from OpenBLAS's (a 2-thread sgemm right
//   after an OpenMP loop ran at 125 instead of 207 GFLOP/s here). Kernels are not re-entrant
//   across threads of the caller (one model runs on one calling thread).
// - Temporary workspaces (im2col columns, attention scores) are Tensors, so the tracking
//   allocator counts them.
// - Weights follow PyTorch's layouts, so numbers can be compared with it.
#pragma once

#include <cstdint>
#include <vector>

#include "common/stages.hpp"
#include "ops/elementwise_binary.hpp"
#include "ops/elementwise_unary.hpp"
#include "ops/pooling.hpp"

// An AVX2 clone and a baseline one of a hot loop, picked at load time (an ifunc). Not under
// ThreadSanitizer: the ifunc resolver is instrumented but runs before TSan has started, and the
// program dies while it loads (scripts/tsan.sh).
#if defined(__SANITIZE_THREAD__)
#define HWPROF_AVX2_CLONES
#else
#define HWPROF_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

namespace hwprof::nn {

using i64 = std::int64_t;

// Threads for OpenMP loops and OpenBLAS (0: one per online CPU). Returns the count in effect.
int set_kernel_threads(int threads);
int kernel_threads() noexcept;

// ---- linear: y[M,N] = x[M,K] · w[N,K]ᵀ + b[N] (b may be null) --------------------------------
void linear_forward(const float* x, const float* w, const float* b, float* y, i64 m, i64 k, i64 n);
// dx[M,K] = dy · w; dw[N,K] += dyᵀ · x; db[N] += Σ_rows dy.
void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db, i64 m, i64 k, i64 n);

// ---- conv2d: x[N,C,H,W], w[K, C/groups, R, S], b[K] → y[N,K,P,Q] ------------------------------
// ---- and conv3d: x[N,C,D,H,W], w[K, C/groups, T, R, S], b[K] → y[N,K,O,P,Q] (depth fields) -----
struct Conv2dGeometry {
  i64 batch = 1, in_channels = 1, in_h = 1, in_w = 1;
  i64 out_channels = 1, kernel_h = 1, kernel_w = 1;
  i64 stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  i64 groups = 1;
  i64 out_h = 1, out_w = 1;  // as shape inference computed them
  // conv3d's depth axis (x[N, C, D, H, W], weights [K, C/groups, kd, kh, kw]); a 2-D
  // convolution is the depth-1 case these defaults give.
  i64 in_d = 1, out_d = 1, kernel_d = 1, stride_d = 1, pad_d = 0, dilation_d = 1;
};
void conv2d_forward(const Conv2dGeometry& g, const float* x, const float* w, const float* b, float* y);
void conv2d_backward(const Conv2dGeometry& g, const float* x, const float* w, const float* dy, float* dx, float* dw, float* db);

// ---- attention: self-attention over x[B,T,D] with PyTorch nn.MultiheadAttention's parameters:
// in_proj_weight [3D, D] (rows: Q, K, V), in_proj_bias [3D], out_proj weight [D, D], bias [D]
// (biases may be null). Scores scaled by 1/sqrt(D/heads); causal masks key j > query i;
// softmax computed stably (max subtracted).
struct AttentionGeometry {
  i64 batch = 1, tokens = 1, dim = 1, heads = 1;
  bool causal = false;
};
// What backward needs, kept by the forward pass (buffers owned by the caller):
//   qkv [B, T, 3D] (the projections, biases added), probs [B, H, T, T] (softmax output),
//   context [B, T, D] (heads concatenated, before the output projection).
struct AttentionSaved {
  float* qkv = nullptr;
  float* probs = nullptr;
  float* context = nullptr;
};
i64 attention_saved_floats(const AttentionGeometry& g);  // qkv + probs + context
// `saved` null: inference, the kernel uses temporary workspaces of its own.
void attention_forward(const AttentionGeometry& g, const float* x, const float* w_in, const float* b_in, const float* w_out, const float* b_out,
                       float* y, const AttentionSaved* saved);
void attention_backward(const AttentionGeometry& g, const float* x, const float* w_in, const float* w_out, const AttentionSaved& saved,
                        const float* dy, float* dx, float* dw_in, float* db_in, float* dw_out, float* db_out);

// ---- batchnorm2d over x[N,C,HW] per channel -----------------------------------------------
// Evaluation: running statistics.
void batchnorm2d_forward_eval(const float* x, const float* gamma, const float* beta, const float* running_mean, const float* running_var, double eps,
                              float* y, i64 n, i64 c, i64 hw);
// Training: batch statistics (biased variance to normalise); running statistics updated as
// PyTorch does (momentum 0.1, unbiased variance); save_mean/save_invstd [C] kept for backward.
void batchnorm2d_forward_train(const float* x, const float* gamma, const float* beta, float* running_mean, float* running_var, double eps,
                               double momentum, float* y, float* save_mean, float* save_invstd, i64 n, i64 c, i64 hw);
void batchnorm2d_backward(const float* x, const float* gamma, const float* save_mean, const float* save_invstd, const float* dy, float* dx,
                          float* dgamma, float* dbeta, i64 n, i64 c, i64 hw);

// ---- layernorm over the last axis: x[rows, D] ---------------------------------------------
// save_mean/save_invstd [rows] may be null (inference).
void layernorm_forward(const float* x, const float* gamma, const float* beta, double eps, float* y, float* save_mean, float* save_invstd, i64 rows,
                       i64 d);
void layernorm_backward(const float* x, const float* gamma, const float* save_mean, const float* save_invstd, const float* dy, float* dx,
                        float* dgamma, float* dbeta, i64 rows, i64 d);

// ---- element-wise unary ops (activations) -------------------------------------------------
// A definition's kernels (ops/elementwise_unary.hpp) over a whole tensor, split among the
// kernel threads. `kept` is the tensor the form's traits say its backward reads (x or y);
// `parameter` the op's one number (unary_parameter).
void unary_forward(const hwprof::ops::UnaryForm& form, const float* x, float* y, i64 n, float parameter);
void unary_backward(const hwprof::ops::UnaryForm& form, const float* kept, const float* dy, float* dx, i64 n, float parameter);

// ---- softmax along one axis, the tensor seen as [outer, dim, inner] -------------------------
void softmax_forward(const float* x, float* y, i64 outer, i64 dim, i64 inner);
void softmax_backward(const float* y, const float* dy, float* dx, i64 outer, i64 dim, i64 inner);

// ---- pooling over x[N, C, H, W] -----------------------------------------------------------
struct Pool2dGeometry {
  i64 batch = 1, channels = 1, in_h = 1, in_w = 1;
  i64 kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  i64 out_h = 1, out_w = 1;  // as shape inference computed them (ceil_mode included)
};
// argmax [N,C,P,Q]: flat index into the sample-channel plane of the chosen input, kept for
// backward; may be null in inference.
void maxpool2d_forward(const Pool2dGeometry& g, const float* x, float* y, std::int32_t* argmax);
void maxpool2d_backward(const Pool2dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx);
// PyTorch's avg_pool2d with count_include_pad=true: the divisor counts padding inside the
// padded input but not a ceil_mode window's part beyond it.
void avgpool2d_forward(const Pool2dGeometry& g, const float* x, float* y);
void avgpool2d_backward(const Pool2dGeometry& g, const float* dy, float* dx);
// PyTorch's adaptive_avg_pool2d windows: [floor(i·H/P), ceil((i+1)·H/P)).
void adaptive_avgpool2d_forward(const float* x, float* y, i64 n, i64 c, i64 h, i64 w, i64 out_h, i64 out_w);
void adaptive_avgpool2d_backward(const float* dy, float* dx, i64 n, i64 c, i64 h, i64 w, i64 out_h, i64 out_w);

// ---- pooling over x[N, C, D, H, W]: the 2-D rules above with a depth axis -------------------
struct Pool3dGeometry {
  i64 batch = 1, channels = 1, in_d = 1, in_h = 1, in_w = 1;
  i64 kernel_d = 1, kernel_h = 1, kernel_w = 1, stride_d = 1, stride_h = 1, stride_w = 1, pad_d = 0, pad_h = 0, pad_w = 0;
  i64 out_d = 1, out_h = 1, out_w = 1;                 // as shape inference computed them (ceil_mode included)
  i64 dilation_d = 1, dilation_h = 1, dilation_w = 1;  // max pooling's step between a window's elements
};
// argmax [N,C,O,P,Q]: flat index into the sample-channel volume of the chosen input (PyTorch's
// max_pool3d: the first maximum, or the last NaN); may be null in inference.
void maxpool3d_forward(const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax);
void maxpool3d_backward(const Pool3dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx);
// PyTorch's dilated max_pool1d/2d/3d (MaxPoolNd's dilation): window element t of an axis at
// start + t·dilation, those in the padding skipped; the first maximum, or the last NaN, as the
// other max kernels. Its backward is maxpool3d_backward's (argmax).
void maxpool_dilated_forward(const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax);
void avgpool3d_forward(const Pool3dGeometry& g, const float* x, float* y);
void avgpool3d_backward(const Pool3dGeometry& g, const float* dy, float* dx);
// Adaptive average pooling of [D, H, W] volumes to [out_d, out_h, out_w] (g's kernel, stride and
// padding unused), with adaptive_avgpool2d's windows along each axis.
void adaptive_avgpool3d_forward(const Pool3dGeometry& g, const float* x, float* y);
void adaptive_avgpool3d_backward(const Pool3dGeometry& g, const float* dy, float* dx);

// ---- a pooling definition's kernels (ops/pooling.hpp) ---------------------------------------
// The kernels above of one reduction over its axes, on one geometry: a 2-D op's has a depth of
// 1 (in_d, kernel_d, stride_d and out_d 1, pad_d 0). `argmax` is max pooling's (null in
// inference, and for the other reductions).
struct PoolKernels {
  void (*forward)(const Pool3dGeometry& g, const float* x, float* y, std::int32_t* argmax) = nullptr;
  void (*backward)(const Pool3dGeometry& g, const std::int32_t* argmax, const float* dy, float* dx) = nullptr;
};
// The kernels of a pooling definition's reduction and axes; nullptr where the engine has none.
const PoolKernels* pool_kernels(const hwprof::ops::PoolingDefinition& def) noexcept;
// The geometry of a node's window over the per-sample input `in` (its output as shape
// inference computed it); the batch is set per call.
Pool3dGeometry pool_geometry(const hwprof::ops::PoolingDefinition& def, const Node& node, const Shape& in);

// ---- upsampling over x[N, C, H, W] (PyTorch's F.interpolate, nearest or bilinear) ---------
struct UpsampleGeometry {
  i64 batch = 1, channels = 1, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  // The factor the output was given by (F.interpolate's scale_factor), per axis: the source
  // coordinate is then dst / scale; 0: the output was given by its size (dst × in / out).
  double scale_h = 0.0, scale_w = 0.0;
  bool bilinear = false;
  bool align_corners = false;  // bilinear only
};
void upsample_forward(const UpsampleGeometry& g, const float* x, float* y);
void upsample_backward(const UpsampleGeometry& g, const float* dy, float* dx);

// ---- sum / mean over axes of a row-major tensor (the reduce op) -------------------------------
struct ReduceGeometry {
  std::vector<i64> shape;     // the whole input's, batch axis first
  std::vector<char> reduced;  // per axis of shape: 1 where it is summed over (never the batch's)
  bool mean = false;          // divide each sum by its group's size
};
// y has shape's size with every reduced axis 1 (keepdims or not: the same elements in order).
void reduce_forward(const ReduceGeometry& g, const float* x, float* y);
// dx: dy broadcast over each group (sum) or dy / k (mean).
void reduce_backward(const ReduceGeometry& g, const float* dy, float* dx);

// ---- recurrent layers: one layer of nn.LSTM / nn.GRU (batch_first), x[N,T,C] → y[N,T,D·H] ---
// Parameters in PyTorch's layout and gate order, both directions stacked: w_ih [D, G·H, C],
// w_hh [D, G·H, H], b_ih and b_hh [D, G·H] (may be null); G = 4 (LSTM: i, f, g, o) or 3 (GRU:
// r, z, n, with n = tanh(W_in·x + b_in + r·(W_hn·h + b_hn)), PyTorch's form). The states start
// at the initial states given (h0, and c0 for LSTM, each [N, D, H]) or, where null, at zero.
// y holds every step's state; direction 1 runs from the last step to the first.
struct RecurrentGeometry {
  i64 batch = 1, steps = 1, input = 1, hidden = 1;
  i64 directions = 1;
  bool lstm = true;  // else GRU
  i64 gates() const noexcept { return lstm ? 4 : 3; }
};
// The per-step tensors backward reads, written by every forward (they are its workspace too):
// gates [N, T, D·G·H] after their activations; cells [N, T, D·H], the cell state (LSTM) or
// W_hn·h + b_hn (GRU).
struct RecurrentSaved {
  float* gates = nullptr;
  float* cells = nullptr;
};
// The states before the first step, [N, D, H] each; null: zeros.
struct RecurrentStates {
  const float* h0 = nullptr;
  const float* c0 = nullptr;  // LSTM
};
// Their gradients, [N, D, H] each, written (not accumulated); null: not wanted.
struct RecurrentStateGrads {
  float* dh0 = nullptr;
  float* dc0 = nullptr;  // LSTM
};
void recurrent_forward(const RecurrentGeometry& g, const float* x, const float* w_ih, const float* w_hh, const float* b_ih, const float* b_hh,
                       float* y, const RecurrentSaved& saved, const RecurrentStates& initial = {});
void recurrent_backward(const RecurrentGeometry& g, const float* x, const float* y, const float* w_ih, const float* w_hh, const RecurrentSaved& saved,
                        const float* dy, float* dx, float* dw_ih, float* dw_hh, float* db_ih, float* db_hh, const RecurrentStates& initial = {},
                        const RecurrentStateGrads& initial_grads = {});

// ---- element-wise add and data movement ----------------------------------------------------
void add_forward(const float* a, const float* b, float* y, i64 n);
// Sums a gradient into an accumulated one: acc[i] += g[i] (for tensors with several consumers).
void accumulate(float* acc, const float* g, i64 n);
// Data movement works on 4-byte elements of either dtype (float32 or int32).
// concat along an axis, tensors seen as [outer, axis_i, inner]: y = [outer, Σ axis_i, inner].
void concat_forward(const std::vector<const void*>& xs, const std::vector<i64>& axis_sizes, void* y, i64 outer, i64 inner);
void concat_backward(const float* dy, const std::vector<float*>& dxs, const std::vector<i64>& axis_sizes, i64 outer, i64 inner);
// y = x permuted: shape and perm include the batch axis (perm[0] == 0 for graph transposes).
// Backward is the same call with the inverse permutation on the permuted shape.
void permute(const void* x, void* y, const std::vector<i64>& shape, const std::vector<i64>& perm);
// select: x seen as [outer, dim, inner] → y[outer, inner] = x[:, index, :].
void select_forward(const void* x, void* y, i64 outer, i64 dim, i64 inner, i64 index);
void select_backward(const float* dy, float* dx, i64 outer, i64 dim, i64 inner, i64 index);

// gather: x seen as [outer, dim, inner] → y[outer, indices.size(), inner], y[:, j, :] =
// x[:, indices[j], :] (indices non-negative, below dim). Backward sums dy into the rows it
// copied from (an index may repeat) and zeroes the rest.
void gather_forward(const void* x, void* y, i64 outer, i64 dim, i64 inner, const std::vector<i64>& indices);
void gather_backward(const float* dy, float* dx, i64 outer, i64 dim, i64 inner, const std::vector<i64>& indices);

// ---- strided views copied: slice, expand, tile (strided_copy.cpp) ----------------------------
// y[i] = x[offset + Σ_k i_k·stride_k] over y's row-major positions i of `size`, the batch axis
// first; a stride may be 0 (a broadcast axis) or negative (a reversed slice).
struct StridedView {
  std::vector<i64> size;    // per output axis
  std::vector<i64> stride;  // per output axis, in input elements
  i64 offset = 0;
};
void strided_copy(const void* x, void* y, const StridedView& view);
// dx (dx_numel elements): each input element the sum of dy over the positions copied from it, 0
// where none was. The axes of nonzero stride must reach distinct elements (true of a slice, an
// expand and a tile, whose broadcast axes are those of stride 0).
void strided_copy_backward(const float* dy, float* dx, i64 dx_numel, const StridedView& view);

// ---- pad (pad.cpp) ---------------------------------------------------------------------------
// Every axis of `in` (the batch's first, never padded) grows by before[k] at its start and
// to out[k] in all (negative paddings crop); the new positions hold `value` (constant), the
// input mirrored about its edge element (reflect) or the edge element (edge).
enum class PadFill { constant, reflect, edge };
struct PadGeometry {
  std::vector<i64> in, out, before;
  PadFill fill = PadFill::constant;
  float value = 0.0f;
};
void pad_forward(const PadGeometry& g, const float* x, float* y);
// dx: the sum of dy over the positions that copied each input element.
void pad_backward(const PadGeometry& g, const float* dy, float* dx);

// ---- where (where.cpp) -----------------------------------------------------------------------
// y = c ? a : b over the full output shape `out` (batch first); each operand read through its
// strides per output axis (0 where it is broadcast: the condition's and a constant's batch axis).
struct WhereGeometry {
  std::vector<i64> out;
  std::vector<i64> c_stride, a_stride, b_stride;
};
// The strides of a row-major tensor of `shape` (the rank of `out`) broadcast to `out`.
std::vector<i64> broadcast_strides(const std::vector<i64>& shape, const std::vector<i64>& out);
void where_forward(const WhereGeometry& g, const float* c, const float* a, const float* b, float* y);
// da, db (either may be null; a_numel, b_numel their sizes): dy where the condition picks that
// side, 0 elsewhere, summed over the side's broadcast axes.
void where_backward(const WhereGeometry& g, const float* c, const float* dy, float* da, i64 a_numel, float* db, i64 b_numel);

// ---- element-wise binary ops with broadcasting: add, sub, mul, div --------------------------
// The arithmetic of a definition (ops/elementwise_binary.hpp) the kernels compute.
using BinaryOp = hwprof::ops::BinaryArithmetic;
// Two full (batched) shapes of one rank whose every axis is equal or 1 in one of them (NumPy's
// rule with ranks equal); the batch axis is never broadcast.
struct Broadcast {
  std::vector<i64> out;                 // the output's full shape
  std::vector<i64> a_stride, b_stride;  // per output axis; 0 where that input is broadcast
  i64 numel() const noexcept;
};
Broadcast make_broadcast(const std::vector<i64>& a, const std::vector<i64>& b);
void binary_forward(BinaryOp op, const float* a, const float* b, float* y, const Broadcast& p);
// da and db (either may be null) are overwritten with the input gradients, summed over the
// axes each input was broadcast along.
void binary_backward(BinaryOp op, const float* a, const float* b, const float* dy, float* da, float* db, const Broadcast& p);

// ---- matmul of two activations: y[o] = a[a_index[o]]·b[b_index[o]], [m,k]·[k,n] each -------
struct MatmulPlan {
  i64 m = 0, k = 0, n = 0;
  std::vector<i64> out;                     // the output's full shape
  std::vector<i64> a_index, b_index;        // per output matrix, the operands' matrices it multiplies
  bool a_shared = false, b_shared = false;  // some matrix of a (of b) serves several outputs
  i64 matrices() const noexcept { return static_cast<i64>(a_index.size()); }
};
// From the operands' full shapes (rank >= 2 each; the axes before the last two broadcast,
// right-aligned). The caller has checked that the inner sizes agree.
MatmulPlan make_matmul_plan(const std::vector<i64>& a, const std::vector<i64>& b);
void matmul_forward(const MatmulPlan& p, const float* a, const float* b, float* y);
// da and db (either may be null) are overwritten, each summed over the outputs it served.
void matmul_backward(const MatmulPlan& p, const float* a, const float* b, const float* dy, float* da, float* db);

// ---- embeddings --------------------------------------------------------------------------
// y[rows, D] = weight[ids[r], :]. Returns the first position whose id lies outside
// [0, num_embeddings), or -1 when all are valid (then y is complete).
i64 embedding_forward(const std::int32_t* ids, const float* weight, float* y, i64 rows, i64 num_embeddings, i64 d);
void embedding_backward(const std::int32_t* ids, const float* dy, float* dweight, i64 rows, i64 d);
// y[b, t, :] = x[b, t, :] + pos[t, :] for t < tokens (tokens <= num_positions).
void pos_embedding_forward(const float* x, const float* pos, float* y, i64 batch, i64 tokens, i64 d);
void pos_embedding_backward(const float* dy, float* dx, float* dpos, i64 batch, i64 tokens, i64 d);
// y[b, 0, :] = cls, y[b, 1 + t, :] = x[b, t, :].
void cls_token_forward(const float* x, const float* cls, float* y, i64 batch, i64 tokens, i64 d);
void cls_token_backward(const float* dy, float* dx, float* dcls, i64 batch, i64 tokens, i64 d);
// Swin's relative position bias over a wh × ww window of N = wh·ww positions; r(i, j) is
// rel_pos_row (ops/ops.hpp), the row of the table its op's importer and kernels share.
// bias[h, i, j] = table[r(i, j), h] (table [(2·wh − 1)·(2·ww − 1), heads], bias [heads, N, N]).
void rel_pos_bias_gather(const float* table, float* bias, i64 heads, i64 wh, i64 ww);
// y[o, k] = x[o, k] + bias[k] for k < slab (heads·N·N) and o < outer (the batch times the leading axes).
void rel_pos_bias_forward(const float* x, const float* bias, float* y, i64 outer, i64 slab);
// dbias[h, i, j] = Σ_o dy[o, h, i, j] (a workspace, overwritten), then dtable[r(i, j), h] +=
// dbias[h, i, j]. dx = dy is the caller's.
void rel_pos_bias_backward(const float* dy, float* dbias, float* dtable, i64 outer, i64 heads, i64 wh, i64 ww);

// ---- dropout (training only; evaluation is the identity and never calls these) ---------------
// mask[i] = 1 when kept; y = x · mask / (1 - p). Deterministic for a seed.
void dropout_forward(const float* x, float* y, std::uint8_t* mask, double p, std::uint64_t seed, i64 n);
void dropout_backward(const std::uint8_t* mask, const float* dy, float* dx, double p, i64 n);

// ---- cross-entropy over logits[rows, classes] with int32 labels[rows] -------------------------
// Returns the mean loss; fills dlogits (may be null) with (softmax - onehot) / rows. A label
// outside [0, classes) makes it return NaN (the executor checks labels first).
double cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits, i64 rows, i64 classes);

}  // namespace hwprof::nn
