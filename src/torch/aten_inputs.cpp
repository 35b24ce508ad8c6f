// A libtorch op call's inputs as an AtenCall (torch/aten_inputs.hpp).
#include "torch/aten_inputs.hpp"

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include "common/stages.hpp"

namespace hwprof::pytorch {
namespace {

std::atomic<bool> cuda_told{false};

void tell_cuda_once() noexcept {
  if (!cuda_told.exchange(true, std::memory_order_relaxed)) {
    std::fprintf(stderr,
                 "hwprof: tensors on a CUDA device: hwprof measures the CPU side only, so a GPU op's row is the time to launch "
                 "its kernel, not the kernel's (docs/torch.md, \"Reading a torch profile\")\n");
  }
}

AtenElement element_of(const at::Tensor& t) {
  const c10::ScalarType type = t.scalar_type();
  if (c10::isFloatingType(type)) return AtenElement::floating;
  if (c10::isIntegralType(type, true)) return AtenElement::integer;
  return AtenElement::other;
}

void copy_tensor(AtenArg& a, const at::Tensor& t) {
  if (!t.defined()) {
    a.kind = AtenArgKind::none;
    return;
  }
  const c10::IntArrayRef sizes = t.sizes();
  if (sizes.size() > kAtenMaxRank) return;
  a.kind = AtenArgKind::tensor;
  a.rank = static_cast<std::uint8_t>(sizes.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) a.dims[d] = sizes[d];
  a.elements = t.numel();
  a.element = element_of(t);
  a.element_bytes = static_cast<std::uint8_t>(t.element_size());
  a.requires_grad = t.requires_grad();
  if (t.is_cuda()) tell_cuda_once();
}

// An int or bool list, read in place (toListRef: no reference count touched).
void copy_list(AtenArg& a, const c10::IValue& v) {
  const c10::ArrayRef<c10::IValue> list = v.toListRef();
  a.kind = AtenArgKind::ints;
  a.rank = static_cast<std::uint8_t>(list.size() < kAtenMaxRank ? list.size() : kAtenMaxRank);
  for (std::size_t i = 0; i < a.rank; ++i) a.dims[i] = list[i].isBool() ? (list[i].toBool() ? 1 : 0) : list[i].toInt();
}

void copy_input(AtenArg& a, const c10::IValue& v) {
  // The fields every kind reads or the signature hashes, not the whole record (a 136-byte
  // clear per input was a third of the observer's time per op); `dims` and `reals` are read up
  // to `rank` only.
  a.kind = AtenArgKind::other;
  a.element = AtenElement::other;
  a.element_bytes = 0;
  a.rank = 0;
  a.elements = 0;
  a.count = 0;
  a.integer = 0;
  a.real = 0.0;
  a.requires_grad = false;
  if (v.isTensor()) {
    copy_tensor(a, v.toTensor());
  } else if (v.isTensorList()) {
    const c10::ArrayRef<c10::IValue> list = v.toListRef();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const at::Tensor& t = list[i].toTensor();
      if (i == 0) copy_tensor(a, t);
      a.elements += i == 0 ? 0 : t.numel();
      a.requires_grad = a.requires_grad || (i > 0 && t.defined() && t.requires_grad());
    }
    a.kind = AtenArgKind::tensors;
    a.count = static_cast<std::int64_t>(list.size());
  } else if (v.isIntList() || v.isBoolList()) {
    copy_list(a, v);
  } else if (v.isDoubleList()) {
    const c10::ArrayRef<c10::IValue> list = v.toListRef();
    a.kind = AtenArgKind::reals;
    a.rank = static_cast<std::uint8_t>(list.size() < kAtenMaxReals ? list.size() : kAtenMaxReals);
    for (std::size_t i = 0; i < a.rank; ++i) a.reals[i] = list[i].toDouble();
  } else if (v.isInt()) {
    a.kind = AtenArgKind::integer;
    a.integer = v.toInt();
  } else if (v.isDouble()) {
    a.kind = AtenArgKind::real;
    a.real = v.toDouble();
  } else if (v.isBool()) {
    a.kind = AtenArgKind::boolean;
    a.integer = v.toBool() ? 1 : 0;
  } else if (v.isNone()) {
    a.kind = AtenArgKind::none;
  } else if (v.isString()) {
    a.kind = AtenArgKind::text;
    a.integer = v.toStringRef() == "tanh" ? 1 : 0;
  }
}

}  // namespace

void copy_aten_call(AtenCall& call, const at::RecordFunction& fn) {
  call.op = fn.name();
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  call.arg_count = inputs.size() < kAtenMaxArgs ? inputs.size() : kAtenMaxArgs;
  for (std::size_t i = 0; i < call.arg_count; ++i) copy_input(call.args[i], inputs[i]);
}

}  // namespace hwprof::pytorch
