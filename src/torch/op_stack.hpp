// One thread's stack of open op calls, as the observer (observer.cpp) keeps it: which call
// carries the FLOPs of a composite op, which one reads counters, and which forward op a
// backward call belongs to. No libtorch, no allocation: tested on made-up chains.
//
// The rules (docs/torch.md, "Who counts what"):
// - a call carries its work (FLOPs and bytes) when it has a formula and no call around it
//   carries work: aten::conv2d counts, the convolution, _convolution and mkldnn_convolution
//   inside it do not; aten::cross_entropy_loss has no formula, so the log_softmax inside it
//   counts;
// - a call reads counters when no region is open below it on this thread's op stack (the
//   outermost op, or the outermost user scope): the calls inside it are timed only;
// - a call inside an autograd backward function is backward;
// - a call's root is the outermost op around it (the op a backward function is named after).
#pragma once

#include <cstddef>
#include <cstdint>

#include "torch/aten_cost.hpp"

namespace hwprof::detail {

struct OpFrame {
  int region = -1;              // -1: no region (a wrapper the observer passes through)
  bool carries_work = false;    // this call's work is its region's
  bool covered = false;         // it or a call around it carries work: calls inside carry none
  bool backward = false;        // inside an autograd backward function
  bool reads_counters = false;  // the outermost region of the thread's op stack
  bool in_region = false;       // it or a call around it is a region
  int root = -1;                // the outermost op's region, or -1
  AtenCost work;
  // The outermost op's call (a number unique in the process, 0: none) and its backward by the
  // op table for this call's inputs (FLOPs, bytes; flops < 0: none), which the first backward
  // function of that call carries (observer.cpp).
  std::uint64_t root_call = 0;
  double root_backward_flops = -1.0;
  double root_backward_bytes = 0.0;
  // An async call's RecordFunction handle (a collective's work, which may end on another
  // thread), else 0.
  std::uint64_t async_handle = 0;
};

class OpStack {
 public:
  static constexpr std::size_t kMaxDepth = 128;

  // `cost`: the call's work, nullptr when it has no formula. `is_op`: an aten op (a user scope
  // or a backward function is not, and is nobody's root). `backward_function`: an autograd
  // node's call. nullptr past kMaxDepth; its pop() still balances.
  OpFrame* push(int region, const AtenCost* cost, bool is_op, bool backward_function) noexcept {
    if (depth_ >= kMaxDepth) {
      ++overflow_;
      return nullptr;
    }
    const OpFrame* parent = top();
    OpFrame& f = frames_[depth_++];
    const bool parent_covered = parent != nullptr && parent->covered;
    f.region = region;
    f.carries_work = cost != nullptr && !parent_covered;
    f.covered = parent_covered || cost != nullptr;
    f.backward = backward_function || (parent != nullptr && parent->backward);
    f.reads_counters = region >= 0 && (parent == nullptr || !parent->in_region);
    f.in_region = region >= 0 || (parent != nullptr && parent->in_region);
    f.root = parent != nullptr && parent->root >= 0 ? parent->root : is_op ? region : -1;
    const bool inherits = parent != nullptr && parent->root >= 0;
    f.root_call = inherits ? parent->root_call : 0;
    f.root_backward_flops = inherits ? parent->root_backward_flops : -1.0;
    f.root_backward_bytes = inherits ? parent->root_backward_bytes : 0.0;
    f.work = f.carries_work ? *cost : AtenCost{};
    f.async_handle = 0;
    return &f;
  }

  // The frame closed (valid until the next push), or nullptr for one past kMaxDepth or an
  // end without its start.
  const OpFrame* pop() noexcept {
    if (overflow_ > 0) {
      --overflow_;
      return nullptr;
    }
    if (depth_ == 0) return nullptr;
    return &frames_[--depth_];
  }

  const OpFrame* top() const noexcept { return depth_ > 0 ? &frames_[depth_ - 1] : nullptr; }
  std::size_t depth() const noexcept { return depth_; }

 private:
  OpFrame frames_[kMaxDepth];
  std::size_t depth_ = 0;
  std::size_t overflow_ = 0;
};

}  // namespace hwprof::detail
