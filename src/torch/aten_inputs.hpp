// A libtorch op call's name and inputs as an AtenCall (torch/aten_cost.hpp): what the observer
// reads of every op it sees (a tensor's sizes, elements, element type and size, requires_grad;
// an int, bool or float list; a number's value). bench/torch_observer_floor.cpp times the same
// reader on its own (docs/torch.md, "Overhead").
#pragma once

#include <ATen/record_function.h>

#include "common/stages.hpp"
#include "torch/aten_cost.hpp"

namespace hwprof::pytorch {

// Fills `call` from the op `fn` is around (its inputs, up to kAtenMaxArgs). Says once on stderr
// that tensors live on a CUDA device, whose kernels hwprof does not time.
void copy_aten_call(AtenCall& call, const at::RecordFunction& fn);

}  // namespace hwprof::pytorch
