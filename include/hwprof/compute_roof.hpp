// What bounds an op's arithmetic on the roofline: its compute roof. The op's definition says
// which (src/ops/, docs/adding-an-op.md) and it travels with the op's work, through a model's
// layers and through an observer's regions, to the roofline placement.
#pragma once

#include <string>

namespace hwprof {

struct ComputeRoof {
  enum class Kind {
    fma,             // the FMA peak: arithmetic of any kind
    gemm,            // the calibrated GEMM ceiling: the op runs as BLAS GEMMs (linear, convolutions, attention)
    transcendental,  // a function's calibrated rate (exp_sp, tanh_sp, erf_sp) × its FLOPs per evaluation
  };
  Kind kind = Kind::fma;
  std::string function;               // transcendental: "exp", "tanh" or "erf"
  double flops_per_evaluation = 0.0;  // transcendental: the op's FLOPs per evaluation of it
};

}  // namespace hwprof
