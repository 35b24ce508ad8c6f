// One layer of nn.LSTM or nn.GRU (batch_first), forward and backward through time, with
// PyTorch's gate order and formulas (torch.nn.LSTM and torch.nn.GRU documentation):
//   LSTM  i, f, g, o = σ, σ, tanh, σ of W_i·x + b_i + W_h·h + b_h (each gate's rows);
//         c' = f·c + i·g;  h' = o·tanh(c')
//   GRU   r, z = σ(W_ir·x + b_ir + W_hr·h + b_hr), σ(W_iz·x + b_iz + W_hz·h + b_hz);
//         n = tanh(W_in·x + b_in + r·(W_hn·h + b_hn));  h' = (1 − z)·n + z·h
// The input's product for every step and both directions is one GEMM, [N·T, C] × [C, D·G·H],
// bias b_ih included; each step then adds the state's product W_hh·h, a GEMM of the batch's
// rows read straight out of y (the previous step's state), and applies the gates.
//
// Parallel work, forward: the input's GEMM on every thread. The steps: each thread takes one
// direction's steps for its share of the batch (a sample's steps depend on no other sample's),
// with no synchronisation; for a single sample, a step large enough (kRecurrenceParallelWork)
// has its hidden units split among the threads, each running the state's GEMM for its own
// units' rows of every gate and then those units' gates, which need no other thread's: a
// barrier a step. The GEMMs run on single-threaded OpenBLAS, as the other dense kernels'
// (src/nn/blas.hpp). Backward through time is split among threads as the forward's steps are
// (each thread a direction's steps for its share of the batch: its gate derivatives and its rows
// of the state's GEMM); the weights' gradients are one GEMM each over every step.
#include <algorithm>
#include <cstring>
#include <optional>

#include <omp.h>

#include "common/stages.hpp"
#include "hwprof/engine/tensor.hpp"
#include "nn/blas.hpp"
#include "nn/kernels.hpp"
#include "ops/vector_math.hpp"

namespace hwprof::nn {
namespace {

using ops::sigmoid_approx;
using ops::tanh_approx;

// Layout of one call: strides of the per-sample rows in each buffer.
struct Strides {
  i64 gh;     // one direction's gate rows, G·H
  i64 dgh;    // both directions', the gates buffer's row (one step)
  i64 dh;     // y's and the cells buffer's row (one step)
  i64 gates;  // one sample of the gates buffer, T·D·G·H
  i64 state;  // one sample of y, T·D·H
};

Strides strides_of(const RecurrentGeometry& g) {
  const i64 gh = g.gates() * g.hidden;
  return {gh, g.directions * gh, g.directions * g.hidden, g.steps * g.directions * gh, g.steps * g.directions * g.hidden};
}

// The step a direction takes s-th, and the one before it (-1: none, the initial state).
i64 step_at(const RecurrentGeometry& g, i64 d, i64 s) {
  return d == 0 ? s : g.steps - 1 - s;
}
i64 previous_step(const RecurrentGeometry& g, i64 d, i64 s) {
  if (s == 0) return -1;
  return d == 0 ? s - 1 : g.steps - s;
}

// The rows of the state before step tp + 1 (or before the first, tp -1) of direction d, from
// sample n0 on: a step of `steps` (y, or LSTM's cells buffer), or the initial state given
// ([N, D, H]); null where the state is zero.
struct Rows {
  const float* at;
  i64 ld;
};
Rows before_rows(const RecurrentGeometry& g, const Strides& st, i64 d, i64 n0, i64 tp, const float* steps, const float* initial) {
  if (tp >= 0) return {steps + n0 * st.state + tp * st.dh + d * g.hidden, st.state};
  if (initial != nullptr) return {initial + n0 * st.dh + d * g.hidden, st.dh};
  return {nullptr, 0};
}

// The part of one direction's steps a thread computes: samples [n0, n1), hidden units [j0, j1).
struct Block {
  i64 d, n0, n1, j0, j1;
};

// One step's state product for a block: into the gates buffer (added, beta 1), except GRU's n
// rows, which go to the cells buffer (W_hn·h stays apart: r multiplies it).
void state_product(const RecurrentGeometry& g, const Strides& st, const Block& b, i64 t, i64 tp, const float* w_hh, const float* y, const float* h0,
                   const RecurrentSaved& saved) {
  const i64 h = g.hidden;
  const Rows prev = before_rows(g, st, b.d, b.n0, tp, y, h0);
  // A block of every unit reads the gates' rows of W_hh that go to the gates buffer as one
  // matrix (all of LSTM's, GRU's r and z): one GEMM instead of one per gate.
  const bool whole = b.j0 == 0 && b.j1 == h && prev.at != nullptr;
  if (whole) {
    const i64 rows = g.lstm ? st.gh : 2 * h;
    detail::sgemm(false, true, b.n1 - b.n0, rows, h, 1.0f, prev.at, prev.ld, w_hh + b.d * st.gh * h, h, 1.0f,
                  saved.gates + t * st.dgh + b.d * st.gh + b.n0 * st.gates, st.gates);
  }
  for (i64 q = whole ? (g.lstm ? g.gates() : 2) : 0; q < g.gates(); ++q) {
    const float* w = w_hh + (b.d * st.gh + q * h + b.j0) * h;
    const bool apart = !g.lstm && q == 2;
    const i64 ldc = apart ? st.state : st.gates;
    float* out = (apart ? saved.cells + t * st.dh + b.d * h : saved.gates + t * st.dgh + b.d * st.gh + q * h) + b.n0 * ldc + b.j0;
    if (prev.at == nullptr) {
      if (apart) {
        for (i64 n = 0; n < b.n1 - b.n0; ++n) std::fill(out + n * ldc, out + n * ldc + (b.j1 - b.j0), 0.0f);
      }
      continue;
    }
    detail::sgemm(false, true, b.n1 - b.n0, b.j1 - b.j0, h, 1.0f, prev.at, prev.ld, w, h, apart ? 0.0f : 1.0f, out, ldc);
  }
}

// One step's gates for a block: activations stored over their pre-activations, the cell (or
// W_hn·h + b_hn) and the new state written. `zeros`: G·H zeros, the state (or cell) before the
// first step where none is given, and the bias where there is none.
void step_gates(const RecurrentGeometry& g, const Strides& st, const Block& b, i64 t, i64 tp, const float* b_hh, const float* zeros, float* y,
                const RecurrentSaved& saved, const RecurrentStates& initial) {
  const i64 h = g.hidden, d = b.d, j0 = b.j0, j1 = b.j1;
  for (i64 n = b.n0; n < b.n1; ++n) {
    float* gate = saved.gates + n * st.gates + t * st.dgh + d * st.gh;
    float* cell = saved.cells + n * st.state + t * st.dh + d * h;
    float* out = y + n * st.state + t * st.dh + d * h;
    const float* before = before_rows(g, st, d, n, tp, g.lstm ? saved.cells : y, g.lstm ? initial.c0 : initial.h0).at;
    const float* prev = before != nullptr ? before : zeros;
    const float* bias = b_hh != nullptr ? b_hh + d * st.gh : zeros;
    if (g.lstm) {
#pragma omp simd
      for (i64 j = j0; j < j1; ++j) {
        const float i = sigmoid_approx(gate[j] + bias[j]), f = sigmoid_approx(gate[h + j] + bias[h + j]);
        const float c_in = tanh_approx(gate[2 * h + j] + bias[2 * h + j]), o = sigmoid_approx(gate[3 * h + j] + bias[3 * h + j]);
        const float c = f * prev[j] + i * c_in;
        gate[j] = i;
        gate[h + j] = f;
        gate[2 * h + j] = c_in;
        gate[3 * h + j] = o;
        cell[j] = c;
        out[j] = o * tanh_approx(c);
      }
    } else {
#pragma omp simd
      for (i64 j = j0; j < j1; ++j) {
        const float r = sigmoid_approx(gate[j] + bias[j]), z = sigmoid_approx(gate[h + j] + bias[h + j]);
        const float hn = cell[j] + bias[2 * h + j];
        const float cand = tanh_approx(gate[2 * h + j] + r * hn);
        gate[j] = r;
        gate[h + j] = z;
        gate[2 * h + j] = cand;
        cell[j] = hn;
        out[j] = (1.0f - z) * cand + z * prev[j];
      }
    }
  }
}

// The state's product of one step (N·G·H·H multiply-adds) below which the step's units are not
// split among threads. A barrier a step is cheap on an idle machine and ruinous on a busy one:
// whenever one of the team's threads is not scheduled, the others wait for it at every step.
// Measured with bench/recurrent_peer.py's model (2-layer LSTM, H 256, batch 8: 2M
// multiply-adds, about 40 µs a step on one core of this 2-core machine shared with other
// builds, 2 threads): split by units, its medians ran 48 to 170 ms from one run to the next
// (24 ms at the quietest); with its steps on one thread, 44 to 46 ms (36 ms). Split by samples
// (no barrier), the batch's steps need no such limit.
constexpr i64 kRecurrenceParallelWork = i64{1} << 22;

// Threads that split each step: each takes at least 16 hidden units.
int recurrence_threads(const RecurrentGeometry& g) {
  const i64 work = g.batch * g.gates() * g.hidden * g.hidden;
  if (work < kRecurrenceParallelWork) return 1;
  return static_cast<int>(std::clamp<i64>(g.hidden / 16, 1, std::max(kernel_threads(), 1)));
}

// Direction d's steps for samples [n0, n1) on `threads` threads, which split the hidden units
// (OpenBLAS held to one thread by the caller).
void run_direction(const RecurrentGeometry& g, const Strides& st, i64 d, i64 n0, i64 n1, int threads, const float* w_hh, const float* b_hh,
                   const float* zeros, float* y, const RecurrentSaved& saved, const RecurrentStates& initial) {
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int parts = omp_get_num_threads(), me = omp_get_thread_num();
    // Unit boundaries on multiples of 16 (whole cache lines of a row), the last part the rest.
    const auto bound = [&](int p) { return p == parts ? g.hidden : g.hidden * p / parts / 16 * 16; };
    const Block b{d, n0, n1, bound(me), bound(me + 1)};
    for (i64 s = 0; s < g.steps; ++s) {
      const i64 t = step_at(g, d, s), tp = previous_step(g, d, s);
      if (b.j1 > b.j0) {
        state_product(g, st, b, t, tp, w_hh, y, initial.h0, saved);
        step_gates(g, st, b, t, tp, b_hh, zeros, y, saved, initial);
      }
#pragma omp barrier
    }
  }
}

// Σ over rows of a [rows, cols] block (row stride ld) into sums (+=), in double per column.
void add_strided_column_sums(const float* a, i64 rows, i64 cols, i64 ld, float* sums) {
  for (i64 j0 = 0; j0 < cols; j0 += 256) {
    const i64 width = std::min<i64>(256, cols - j0);
    double partial[256] = {};
    for (i64 r = 0; r < rows; ++r) {
      const float* row = a + r * ld + j0;
      for (i64 j = 0; j < width; ++j) partial[j] += row[j];
    }
    for (i64 j = 0; j < width; ++j) sums[j0 + j] += static_cast<float>(partial[j]);
  }
}

// One step's gate derivatives for direction d (every unit): from dh = dy + the carried state
// gradient, the pre-activations' gradients dgx (and for GRU the state product's, dgh, whose
// n rows are scaled by r); carry becomes the part of the previous state's gradient that does
// not go through W_hh (GRU: dh·z; LSTM: none), cell_carry the cell's (LSTM).
struct StepGrads {
  float* dgx;
  float* dgh;
  float* carry;       // [N, H]
  float* cell_carry;  // [N, H], LSTM
};

// Samples [n0, n1); carry and cell_carry hold [D, N, H].
void step_backward(const RecurrentGeometry& g, const Strides& st, const Block& b, i64 t, i64 tp, const float* y, const RecurrentSaved& saved,
                   const RecurrentStates& initial, const float* dy, const StepGrads& s) {
  const i64 h = g.hidden, d = b.d;
  for (i64 n = b.n0; n < b.n1; ++n) {
    const float* gate = saved.gates + n * st.gates + t * st.dgh + d * st.gh;
    const float* cell = saved.cells + n * st.state + t * st.dh + d * h;
    const float* before = before_rows(g, st, d, n, tp, g.lstm ? saved.cells : y, g.lstm ? initial.c0 : initial.h0).at;
    const float* gy = dy + n * st.state + t * st.dh + d * h;
    float* dgx = s.dgx + n * st.gates + t * st.dgh + d * st.gh;
    float* dgh = s.dgh + n * st.gates + t * st.dgh + d * st.gh;
    float* carry = s.carry + (d * g.batch + n) * h;
    if (g.lstm) {
      float* cc = s.cell_carry + (d * g.batch + n) * h;
#pragma omp simd
      for (i64 j = 0; j < h; ++j) {
        const float i = gate[j], f = gate[h + j], c_in = gate[2 * h + j], o = gate[3 * h + j];
        const float dh = gy[j] + carry[j];
        const float tc = tanh_approx(cell[j]);
        const float dc = cc[j] + dh * o * (1.0f - tc * tc);
        const float c_prev = before != nullptr ? before[j] : 0.0f;
        dgx[j] = dc * c_in * i * (1.0f - i);
        dgx[h + j] = dc * c_prev * f * (1.0f - f);
        dgx[2 * h + j] = dc * i * (1.0f - c_in * c_in);
        dgx[3 * h + j] = dh * tc * o * (1.0f - o);
        cc[j] = dc * f;
      }
    } else {
#pragma omp simd
      for (i64 j = 0; j < h; ++j) {
        const float r = gate[j], z = gate[h + j], cand = gate[2 * h + j], hn = cell[j];
        const float h_prev = before != nullptr ? before[j] : 0.0f;
        const float dh = gy[j] + carry[j];
        const float dn = dh * (1.0f - z) * (1.0f - cand * cand);
        const float dr = dn * hn * r * (1.0f - r);
        const float dz = dh * (h_prev - cand) * z * (1.0f - z);
        dgx[j] = dr;
        dgx[h + j] = dz;
        dgx[2 * h + j] = dn;
        dgh[j] = dr;
        dgh[h + j] = dz;
        dgh[2 * h + j] = dn * r;
        carry[j] = dh * z;
      }
    }
  }
}

}  // namespace

void recurrent_forward(const RecurrentGeometry& g, const float* x, const float* w_ih, const float* w_hh, const float* b_ih, const float* b_hh,
                       float* y, const RecurrentSaved& saved, const RecurrentStates& initial) {
  const Strides st = strides_of(g);
  linear_forward(x, w_ih, b_ih, saved.gates, g.batch * g.steps, g.input, st.dgh);
  Tensor zeros = Tensor::empty({st.gh});
  std::fill(zeros.f32(), zeros.f32() + st.gh, 0.0f);
  detail::SingleThreadedBlas single;
  // Work that needs no synchronisation: each direction, and within it each sample's steps. A
  // thread takes one direction's steps for a share of the batch.
  const i64 parts = std::clamp<i64>(kernel_threads() / g.directions, 1, g.batch);
  const i64 tasks = g.directions * parts;
  if (tasks > 1 && g.batch * g.gates() * g.hidden * g.hidden * g.directions >= detail::kParallelWork) {
#pragma omp parallel for num_threads(static_cast <int>(tasks)) schedule(static, 1)
    for (i64 k = 0; k < tasks; ++k) {
      const i64 d = k / parts, p = k % parts;
      run_direction(g, st, d, g.batch * p / parts, g.batch * (p + 1) / parts, 1, w_hh, b_hh, zeros.f32(), y, saved, initial);
    }
    return;
  }
  // One sample (or one thread): its units split among the threads where a step is large.
  for (i64 d = 0; d < g.directions; ++d) run_direction(g, st, d, 0, g.batch, recurrence_threads(g), w_hh, b_hh, zeros.f32(), y, saved, initial);
}

// Long: the steps of backpropagation through time in order (each direction's steps, then the
// GEMMs over every step); its parts share the buffers it allocates.
void recurrent_backward(const RecurrentGeometry& g, const float* x, const float* y, const float* w_ih, const float* w_hh, const RecurrentSaved& saved,
                        const float* dy, float* dx, float* dw_ih, float* dw_hh, float* db_ih, float* db_hh, const RecurrentStates& initial,
                        const RecurrentStateGrads& initial_grads) {
  const Strides st = strides_of(g);
  const i64 h = g.hidden, rows = g.batch * g.steps;
  const int threads = kernel_threads(), step_threads = recurrence_threads(g);
  Tensor dgx_t = Tensor::empty({rows, st.dgh});
  Tensor dgh_t = g.lstm ? Tensor() : Tensor::empty({rows, st.dgh});
  Tensor carry_t = Tensor::empty({g.directions, g.batch, h});
  Tensor cell_t = Tensor::empty({g.directions, g.batch, h});
  StepGrads s{dgx_t.f32(), g.lstm ? dgx_t.f32() : dgh_t.f32(), carry_t.f32(), cell_t.f32()};
  std::fill(s.carry, s.carry + g.directions * g.batch * h, 0.0f);
  std::fill(s.cell_carry, s.cell_carry + g.directions * g.batch * h, 0.0f);
  // Back through one direction's steps for samples [n0, n1); the step's GEMM on `gemm_threads`.
  const auto back_through_time = [&](i64 d, i64 n0, i64 n1, int gemm_threads) {
    const Block b{d, n0, n1, 0, h};
    for (i64 k = g.steps - 1; k >= 0; --k) {
      const i64 t = step_at(g, d, k), tp = previous_step(g, d, k);
      step_backward(g, st, b, t, tp, y, saved, initial, dy, s);
      if (tp < 0 && initial_grads.dh0 == nullptr) continue;
      // The previous state's gradient through W_hh: carry (+)= dgh_t · W_hh (before the first
      // step: h0's gradient).
      detail::parallel_sgemm(false, false, n1 - n0, h, st.gh, 1.0f, s.dgh + n0 * st.gates + t * st.dgh + d * st.gh, st.gates, w_hh + d * st.gh * h, h,
                             g.lstm ? 0.0f : 1.0f, s.carry + (d * g.batch + n0) * h, h, gemm_threads);
    }
  };
  // Split as the forward's steps are: directions and shares of the batch, no synchronisation; a
  // single sample's GEMM split where a step is large. A step's GEMM on one thread is OpenBLAS's
  // own call on one thread, not its pool's.
  std::optional<detail::SingleThreadedBlas> single(std::in_place);
  const i64 parts = std::clamp<i64>(threads / g.directions, 1, g.batch), tasks = g.directions * parts;
  if (tasks > 1 && g.batch * g.gates() * h * h * g.directions >= detail::kParallelWork) {
#pragma omp parallel for num_threads(static_cast <int>(tasks)) schedule(static, 1)
    for (i64 k = 0; k < tasks; ++k) back_through_time(k / parts, g.batch * (k % parts) / parts, g.batch * (k % parts + 1) / parts, 1);
  } else {
    for (i64 d = 0; d < g.directions; ++d) back_through_time(d, 0, g.batch, step_threads);
  }
  single.reset();
  // The carried gradients after the first step are the initial states': [D, N, H] to [N, D, H].
  for (i64 n = 0; n < g.batch; ++n) {
    for (i64 d = 0; d < g.directions; ++d) {
      if (initial_grads.dh0 != nullptr) std::copy_n(s.carry + (d * g.batch + n) * h, h, initial_grads.dh0 + (n * g.directions + d) * h);
      if (g.lstm && initial_grads.dc0 != nullptr)
        std::copy_n(s.cell_carry + (d * g.batch + n) * h, h, initial_grads.dc0 + (n * g.directions + d) * h);
    }
  }
  if (dw_hh != nullptr) {
    // Each step's previous state (h0 or zero before the first), beside the gradients of the same step.
    Tensor prev_t = Tensor::empty({rows, st.dh});
    float* prev = prev_t.f32();
    for (i64 n = 0; n < g.batch; ++n) {
      for (i64 d = 0; d < g.directions; ++d) {
        for (i64 k = 0; k < g.steps; ++k) {
          const i64 t = step_at(g, d, k), tp = previous_step(g, d, k);
          float* out = prev + n * st.state + t * st.dh + d * h;
          if (tp < 0 && initial.h0 != nullptr) {
            std::copy_n(initial.h0 + (n * g.directions + d) * h, h, out);
          } else if (tp < 0) {
            std::fill(out, out + h, 0.0f);
          } else {
            std::copy_n(y + n * st.state + tp * st.dh + d * h, h, out);
          }
        }
      }
    }
    for (i64 d = 0; d < g.directions; ++d) {
      detail::parallel_sgemm(true, false, st.gh, h, rows, 1.0f, s.dgh + d * st.gh, st.dgh, prev + d * h, st.dh, 1.0f, dw_hh + d * st.gh * h, h,
                             threads);
    }
  }
  if (dw_ih != nullptr) detail::parallel_sgemm(true, false, st.dgh, g.input, rows, 1.0f, s.dgx, st.dgh, x, g.input, 1.0f, dw_ih, g.input, threads);
  if (db_ih != nullptr) add_strided_column_sums(s.dgx, rows, st.dgh, st.dgh, db_ih);
  if (db_hh != nullptr) add_strided_column_sums(s.dgh, rows, st.dgh, st.dgh, db_hh);
  if (dx != nullptr) detail::parallel_sgemm(false, false, rows, g.input, st.dgh, 1.0f, s.dgx, st.dgh, w_ih, g.input, 0.0f, dx, g.input, threads);
}

}  // namespace hwprof::nn
