// A small CNN trained with libtorch (torch::nn, torch::optim::SGD) on random data, observed
// by hwprof::torch: linking the library is all it takes for every aten op to be measured; the
// HWPROF_SCOPEs only name the steps the ops run under. Run it with HWPROF_OUTPUT=DIR to get
// profile.json, profile.txt, roofline.svg, report.html and trace.json in DIR at exit
// (docs/torch.md):
//
//   HWPROF_OUTPUT=out HWPROF_BACKEND=timer build/release/bin/hwprof_example_torch_train 5
//
// Its last line gives the mean time of a step after the first, for comparing runs with and
// without hwprof.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <torch/torch.h>
#include <hwprof/regions.hpp>  // hwprof

namespace {

constexpr int kBatch = 8;

// conv(1→8, 5x5, padding 2) · batch norm · ReLU · 2x2 max pool, the same (8→16), a linear
// layer from 16·7·7 to 10 classes: for 28x28 inputs.
struct SmallCnn : torch::nn::Module {
  SmallCnn()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 5).padding(2)))),
        bn1(register_module("bn1", torch::nn::BatchNorm2d(8))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 5).padding(2)))),
        bn2(register_module("bn2", torch::nn::BatchNorm2d(16))),
        fc(register_module("fc", torch::nn::Linear(16 * 7 * 7, 10))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(bn1(conv1(x))), 2);
    x = torch::max_pool2d(torch::relu(bn2(conv2(x))), 2);
    return fc(x.flatten(1));
  }

  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Linear fc;
};

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  if (steps <= 0) {
    std::fprintf(stderr, "usage: %s [steps > 0]\n", argv[0]);
    return 2;
  }
  torch::manual_seed(0);
  SmallCnn model;
  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  const torch::Tensor images = torch::randn({kBatch, 1, 28, 28});
  const torch::Tensor labels = torch::randint(0, 10, {kBatch}, torch::kLong);

  double later_steps_ms = 0.0;
  for (int step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    {
      HWPROF_SCOPE("train_step");  // hwprof
      optimizer.zero_grad();
      torch::Tensor loss;
      {
        HWPROF_SCOPE("forward");  // hwprof
        loss = torch::nn::functional::cross_entropy(model.forward(images), labels);
      }
      {
        HWPROF_SCOPE("backward");  // hwprof
        loss.backward();
      }
      {
        HWPROF_SCOPE("optimizer");  // hwprof
        optimizer.step();
      }
      if (step == steps - 1) std::printf("step %d: loss %.4f\n", step, loss.item<float>());
    }
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (step > 0) later_steps_ms += took.count();
  }
  if (steps > 1) std::printf("mean step after the first: %.3f ms\n", later_steps_ms / (steps - 1));
  return 0;
}
