// The recurrent kernels (src/nn/recurrent.cpp) against a double-precision loop written from
// PyTorch's nn.LSTM and nn.GRU formulas, one step and one sample at a time; their backward
// through time against finite differences of every input and parameter; one thread against two.
// Each from zero states and from initial states given (h0, and c0 for LSTM).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <omp.h>

#include "nn/kernels.hpp"
#include "nn_test_support.hpp"

// Its own namespace: the unity build puts this file beside nn_kernels_test.cpp.
namespace hwprof::nn::recurrent_test {
namespace {

using testing::all_close;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;

std::size_t size_of(i64 n) {
  return static_cast<std::size_t>(n);
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

struct Weights {
  std::vector<float> w_ih, w_hh, b_ih, b_hh;  // biases empty: none
  std::vector<float> h0, c0;                  // [N, D, H]; empty: zeros
};

RecurrentStates states_of(const Weights& w) {
  return {w.h0.empty() ? nullptr : w.h0.data(), w.c0.empty() ? nullptr : w.c0.data()};
}

// Random initial states, h0 (and c0 for LSTM) [N, D, H].
void give_states(const RecurrentGeometry& g, Weights& w, std::uint64_t seed) {
  const i64 n = g.batch * g.directions * g.hidden;
  w.h0 = random_vector(size_of(n), seed, -0.9f, 0.9f);
  if (g.lstm) w.c0 = random_vector(size_of(n), seed + 1, -1.5f, 1.5f);
}

Weights random_weights(const RecurrentGeometry& g, bool bias, std::uint64_t seed) {
  const i64 gh = g.directions * g.gates() * g.hidden;
  Weights w;
  w.w_ih = random_vector(size_of(gh * g.input), seed, -0.6f, 0.6f);
  w.w_hh = random_vector(size_of(gh * g.hidden), seed + 1, -0.6f, 0.6f);
  if (bias) {
    w.b_ih = random_vector(size_of(gh), seed + 2, -0.5f, 0.5f);
    w.b_hh = random_vector(size_of(gh), seed + 3, -0.5f, 0.5f);
  }
  return w;
}

// PyTorch's formulas (torch.nn.LSTM, torch.nn.GRU docs), gate rows in its order.
std::vector<double> reference(const RecurrentGeometry& g, const std::vector<float>& x, const Weights& w) {
  const i64 h = g.hidden, gh = g.gates() * h, dh = g.directions * h;
  std::vector<double> y(size_of(g.batch * g.steps * dh));
  for (i64 n = 0; n < g.batch; ++n) {
    for (i64 d = 0; d < g.directions; ++d) {
      std::vector<double> state(size_of(h), 0.0), cell(size_of(h), 0.0);
      for (i64 j = 0; j < h; ++j) {
        if (!w.h0.empty()) state[size_of(j)] = w.h0[size_of((n * g.directions + d) * h + j)];
        if (!w.c0.empty()) cell[size_of(j)] = w.c0[size_of((n * g.directions + d) * h + j)];
      }
      for (i64 s = 0; s < g.steps; ++s) {
        const i64 t = d == 0 ? s : g.steps - 1 - s;
        // pre_x[k] = W_ih[k]·x_t + b_ih[k]; pre_h[k] = W_hh[k]·h + b_hh[k]
        std::vector<double> pre_x(size_of(gh)), pre_h(size_of(gh));
        for (i64 k = 0; k < gh; ++k) {
          const i64 row = d * gh + k;
          double sx = w.b_ih.empty() ? 0.0 : w.b_ih[size_of(row)];
          double sh = w.b_hh.empty() ? 0.0 : w.b_hh[size_of(row)];
          for (i64 c = 0; c < g.input; ++c) sx += double{w.w_ih[size_of(row * g.input + c)]} * x[size_of((n * g.steps + t) * g.input + c)];
          for (i64 j = 0; j < h; ++j) sh += double{w.w_hh[size_of(row * h + j)]} * state[size_of(j)];
          pre_x[size_of(k)] = sx;
          pre_h[size_of(k)] = sh;
        }
        for (i64 j = 0; j < h; ++j) {
          const auto at = [&](const std::vector<double>& v, i64 gate) { return v[size_of(gate * h + j)]; };
          if (g.lstm) {
            const double i = sigmoid(at(pre_x, 0) + at(pre_h, 0)), f = sigmoid(at(pre_x, 1) + at(pre_h, 1));
            const double c_in = std::tanh(at(pre_x, 2) + at(pre_h, 2)), o = sigmoid(at(pre_x, 3) + at(pre_h, 3));
            cell[size_of(j)] = f * cell[size_of(j)] + i * c_in;
            y[size_of((n * g.steps + t) * dh + d * h + j)] = o * std::tanh(cell[size_of(j)]);
          } else {
            const double r = sigmoid(at(pre_x, 0) + at(pre_h, 0)), z = sigmoid(at(pre_x, 1) + at(pre_h, 1));
            const double cand = std::tanh(at(pre_x, 2) + r * at(pre_h, 2));
            y[size_of((n * g.steps + t) * dh + d * h + j)] = (1.0 - z) * cand + z * state[size_of(j)];
          }
        }
        for (i64 j = 0; j < h; ++j) state[size_of(j)] = y[size_of((n * g.steps + t) * dh + d * h + j)];
      }
    }
  }
  return y;
}

struct Outputs {
  std::vector<float> y, gates, cells;
};

Outputs forward(const RecurrentGeometry& g, const std::vector<float>& x, const Weights& w) {
  Outputs r;
  r.y.assign(size_of(g.batch * g.steps * g.directions * g.hidden), std::nanf(""));
  r.gates.assign(size_of(g.batch * g.steps * g.directions * g.gates() * g.hidden), std::nanf(""));
  r.cells.assign(r.y.size(), std::nanf(""));
  const float* b_ih = w.b_ih.empty() ? nullptr : w.b_ih.data();
  const float* b_hh = w.b_hh.empty() ? nullptr : w.b_hh.data();
  recurrent_forward(g, x.data(), w.w_ih.data(), w.w_hh.data(), b_ih, b_hh, r.y.data(), {r.gates.data(), r.cells.data()}, states_of(w));
  return r;
}

double dot(const std::vector<float>& y, const std::vector<float>& w) {
  double s = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) s += double{y[i]} * w[i];
  return s;
}

struct Case {
  bool lstm, bidirectional, bias;
  i64 batch, steps, input, hidden;
};

std::string describe(const Case& c) {
  return std::string(c.lstm ? "lstm" : "gru") + (c.bidirectional ? " bidirectional" : "") + (c.bias ? "" : " no bias") + " N" +
         std::to_string(c.batch) + " T" + std::to_string(c.steps) + " C" + std::to_string(c.input) + " H" + std::to_string(c.hidden);
}

RecurrentGeometry geometry(const Case& c) {
  RecurrentGeometry g;
  g.batch = c.batch;
  g.steps = c.steps;
  g.input = c.input;
  g.hidden = c.hidden;
  g.directions = c.bidirectional ? 2 : 1;
  g.lstm = c.lstm;
  return g;
}

const Case kCases[] = {
    {true, false, true, 2, 5, 3, 4},     {true, true, true, 3, 4, 2, 3},     {true, false, false, 1, 6, 4, 5},   {false, false, true, 2, 5, 3, 4},
    {false, true, true, 2, 3, 4, 2},     {false, true, false, 1, 4, 3, 3},   {true, true, true, 2, 1, 3, 2},     {false, false, true, 3, 1, 2, 3},
    {true, false, true, 2, 3, 5, 70},    {false, true, true, 2, 3, 4, 70},   {true, false, true, 16, 2, 4, 256},  // the batch split among threads
    {false, false, true, 16, 2, 3, 300}, {true, false, true, 1, 2, 4, 1024},  // one sample's steps large enough to split its units
    {false, false, true, 1, 2, 3, 1200},
};

TEST(Recurrent, ForwardMatchesPyTorchsFormulasInDouble) {
  std::uint64_t seed = 300;
  for (const bool given : {false, true}) {
    for (const Case& c : kCases) {
      const RecurrentGeometry g = geometry(c);
      const std::vector<float> x = random_vector(size_of(g.batch * g.steps * g.input), ++seed);
      Weights w = random_weights(g, c.bias, seed += 4);
      if (given) give_states(g, w, seed += 2);
      const Outputs r = forward(g, x, w);
      const std::vector<double> want = reference(g, x, w);
      // From given states the first step's states are as large as h0 (zero states make them
      // small), and their float rounding (the activations' approximations, about 1e-7) reaches
      // the next step through a W_hh row of H terms up to 0.6: about √H·1e-7, a few 1e-6 for
      // the wide cases (hundreds of units, there to split the work among threads).
      const double atol = given && c.hidden > 100 ? 5e-6 : 1e-6;
      EXPECT_TRUE(all_close(r.y, {want.begin(), want.end()}, 1e-5, atol)) << describe(c) << (given ? " from h0, c0" : "");
    }
  }
}

// The initial states are the layer's: another h0 (or c0) changes every step (each step reads
// the one before), and the same states as zeros given are the zero states'.
TEST(Recurrent, InitialStatesReachEveryStep) {
  for (const bool lstm : {true, false}) {
    const Case c{lstm, true, true, 2, 4, 3, 5};
    const RecurrentGeometry g = geometry(c);
    const std::vector<float> x = random_vector(size_of(g.batch * g.steps * g.input), 61);
    Weights w = random_weights(g, true, 62);
    const Outputs none = forward(g, x, w);
    w.h0.assign(size_of(g.batch * g.directions * g.hidden), 0.0f);
    if (lstm) w.c0 = w.h0;
    EXPECT_EQ(forward(g, x, w).y, none.y) << describe(c);
    give_states(g, w, 63);
    const Outputs given = forward(g, x, w);
    for (std::size_t i = 0; i < none.y.size(); ++i) EXPECT_NE(given.y[i], none.y[i]) << describe(c) << " " << i;
  }
}

// d(Σ wts·y)/d(every input and parameter) by central differences, against the backward's.
TEST(Recurrent, BackwardThroughTimeMatchesFiniteDifferences) {
  std::uint64_t seed = 500;
  for (const bool given : {false, true}) {
    for (const Case& c : kCases) {
      if (c.hidden > 8) continue;  // the small cases cover every element; the wide ones only split the forward's units
      const RecurrentGeometry g = geometry(c);
      std::vector<float> x = random_vector(size_of(g.batch * g.steps * g.input), ++seed);
      Weights w = random_weights(g, c.bias, seed += 4);
      if (given) give_states(g, w, seed += 2);
      std::vector<float> dh0(w.h0.size(), std::nanf("")), dc0(w.c0.size(), std::nanf(""));
      const Outputs r = forward(g, x, w);
      const std::vector<float> wts = random_vector(r.y.size(), ++seed);
      std::vector<float> dx(x.size(), std::nanf("")), dw_ih(w.w_ih.size(), 0.0f), dw_hh(w.w_hh.size(), 0.0f);
      std::vector<float> db_ih(w.b_ih.size(), 0.0f), db_hh(w.b_hh.size(), 0.0f);
      recurrent_backward(g, x.data(), r.y.data(), w.w_ih.data(), w.w_hh.data(),
                         {const_cast<float*>(r.gates.data()), const_cast<float*>(r.cells.data())}, wts.data(), dx.data(), dw_ih.data(), dw_hh.data(),
                         c.bias ? db_ih.data() : nullptr, c.bias ? db_hh.data() : nullptr, states_of(w),
                         {given ? dh0.data() : nullptr, given && c.lstm ? dc0.data() : nullptr});
      const auto loss = [&] { return dot(forward(g, x, w).y, wts); };
      if (given) {
        EXPECT_TRUE(gradient_matches(dh0, numeric_gradient(w.h0, loss, 48, 1e-2))) << describe(c) << ": dh0";
        if (c.lstm) {
          EXPECT_TRUE(gradient_matches(dc0, numeric_gradient(w.c0, loss, 48, 1e-2))) << describe(c) << ": dc0";
        }
      }
      EXPECT_TRUE(gradient_matches(dx, numeric_gradient(x, loss, 48, 1e-2))) << describe(c) << ": dx";
      EXPECT_TRUE(gradient_matches(dw_ih, numeric_gradient(w.w_ih, loss, 48, 1e-2))) << describe(c) << ": dW_ih";
      EXPECT_TRUE(gradient_matches(dw_hh, numeric_gradient(w.w_hh, loss, 48, 1e-2))) << describe(c) << ": dW_hh";
      if (c.bias) {
        EXPECT_TRUE(gradient_matches(db_ih, numeric_gradient(w.b_ih, loss, 48, 1e-2))) << describe(c) << ": db_ih";
        EXPECT_TRUE(gradient_matches(db_hh, numeric_gradient(w.b_hh, loss, 48, 1e-2))) << describe(c) << ": db_hh";
      }
    }
  }
}

// Parameter gradients accumulate (+=), as every kernel's (kernels.hpp); a null dx is skipped.
TEST(Recurrent, ParameterGradientsAccumulateAndNullDxIsSkipped) {
  const Case c{false, true, true, 2, 3, 2, 3};
  const RecurrentGeometry g = geometry(c);
  const std::vector<float> x = random_vector(size_of(g.batch * g.steps * g.input), 41);
  const Weights w = random_weights(g, true, 42);
  Outputs r = forward(g, x, w);
  const std::vector<float> dy = random_vector(r.y.size(), 43);
  std::vector<float> once(w.w_hh.size(), 0.0f), twice(w.w_hh.size(), 0.0f);
  recurrent_backward(g, x.data(), r.y.data(), w.w_ih.data(), w.w_hh.data(), {r.gates.data(), r.cells.data()}, dy.data(), nullptr, nullptr,
                     once.data(), nullptr, nullptr);
  for (int k = 0; k < 2; ++k) {
    recurrent_backward(g, x.data(), r.y.data(), w.w_ih.data(), w.w_hh.data(), {r.gates.data(), r.cells.data()}, dy.data(), nullptr, nullptr,
                       twice.data(), nullptr, nullptr);
  }
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_FLOAT_EQ(twice[i], 2.0f * once[i]) << i;
}

// Two threads run a bidirectional layer's directions side by side, or each its share of the
// batch, or split the hidden units of one sample's large steps (each its own rows of the state's
// GEMM and its own gates, one barrier a step): the same states as one thread.
TEST(Recurrent, OneAndTwoThreadsAgree) {
  const Case cases[] = {{true, true, true, 4, 6, 24, 96},  {false, true, true, 4, 6, 24, 96},  {true, false, true, 16, 3, 8, 256},
                        {false, false, true, 5, 3, 8, 64}, {true, false, true, 1, 3, 8, 1024}, {false, false, true, 1, 3, 8, 1200}};
  for (const Case& c : cases) {
    const RecurrentGeometry g = geometry(c);
    const std::vector<float> x = random_vector(size_of(g.batch * g.steps * g.input), 71);
    Weights w = random_weights(g, true, 72);
    give_states(g, w, 73);  // and from given states, whose rows each thread reads for its samples
    std::vector<float> results[2];
    for (int threads = 1; threads <= 2; ++threads) {
      const int saved = kernel_threads();
      set_kernel_threads(threads);
      Outputs r = forward(g, x, w);
      std::vector<float> dx(x.size()), dw(w.w_hh.size(), 0.0f), dh0(w.h0.size());
      recurrent_backward(g, x.data(), r.y.data(), w.w_ih.data(), w.w_hh.data(), {r.gates.data(), r.cells.data()}, r.y.data(), dx.data(), nullptr,
                         dw.data(), nullptr, nullptr, states_of(w), {dh0.data(), nullptr});
      set_kernel_threads(saved);
      results[threads - 1] = r.y;
      results[threads - 1].insert(results[threads - 1].end(), dx.begin(), dx.end());
      results[threads - 1].insert(results[threads - 1].end(), dw.begin(), dw.end());
      results[threads - 1].insert(results[threads - 1].end(), dh0.begin(), dh0.end());
    }
    // Not bit for bit: the GEMMs are split into panels by thread (blas.hpp), and OpenBLAS's
    // edge kernels accumulate a narrower panel in another order (the weight gradient's sums over
    // every step most: a few 1e-5 here). A unit left out or computed twice would be off by O(1).
    EXPECT_TRUE(all_close(results[1], results[0], 1e-4, 1e-5)) << describe(c);
  }
}

}  // namespace
}  // namespace hwprof::nn::recurrent_test
