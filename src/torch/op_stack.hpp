// One thread's stack of open op calls, as the observer (observer.cpp) keeps it: which call
// carries the FLOPs of a composite op, which phase a call is in, and which forward op a
// backward call belongs to. No libtorch, no allocation: tested on made-up chains.
//
// The rules (docs/torch.md, "Who counts what"):
// - a call carries its work (FLOPs and bytes) when it has a formula and no call around it
//   carries work: aten::conv2d counts, the convolution, _convolution and mkldnn_convolution
//   inside it do not; aten::cross_entropy_loss has no formula, so the log_softmax inside it
//   counts;
// - a call inside an autograd backward function is backward; a call made directly in a forward
//   recomputed during backward (activation checkpointing) is a recompute, and so is what it runs;
// - a call's root is the outermost op around it (the op a backward function is named after).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/stages.hpp"
#include "session/observer_hooks.hpp"
#include "torch/aten_cost.hpp"

namespace hwprof::pytorch {

struct OpFrame {
  int region = -1;              // -1: no region (a wrapper, or a call measured in a region around it)
  bool carries_work = false;    // this call's work is its region's
  bool covered = false;         // it or a call around it carries work: calls inside carry none
  bool backward = false;        // inside an autograd backward function
  bool recompute = false;       // in a forward recomputed during backward
  bool wrapper = false;         // autograd's engine wrapper around a backward function
  bool is_op = false;           // an aten op (not a user scope, a backward function or a wrapper)
  bool in_region = false;       // it or a call around it is a region
  bool outermost = false;       // a region with no region below it on this stack
  bool reads_counters = false;  // set by the observer: entered with a counter reading
  bool marks_step = false;      // set by the observer: its end is a training step's (the optimizer's step)
  int root = -1;                // the outermost op's region, or -1
  AtenCost work;
  std::uint64_t variant = 0;  // the call's variant (its shapes: observer::note_variant), 0: none
  // The outermost op's call (a number unique in the process, 0: none), its variant, and its
  // backward by the op table for this call's inputs (FLOPs, bytes; flops < 0: none), which the
  // backward of that call carries (observer.cpp).
  std::uint64_t root_call = 0;
  std::uint64_t root_variant = 0;
  double root_backward_flops = -1.0;
  double root_backward_bytes = 0.0;
  // An async call's RecordFunction handle (a collective's work, which may end on another
  // thread), else 0.
  std::uint64_t async_handle = 0;
  // The signature whose counter-read decision this call is timed for (its key and its slot in
  // the thread's table, set by the observer); 0: none.
  std::uint64_t probe_key = 0;
  std::uint32_t probe_slot = 0;
};

// What a call is, as it is pushed.
struct FramePush {
  int region = -1;
  const AtenCost* cost = nullptr;  // the call's work, nullptr when it has no formula
  bool is_op = false;              // an aten op (a user scope or a backward function is not, and is nobody's root)
  bool backward_function = false;  // an autograd node's call
  bool wrapper = false;            // the engine's wrapper around one
  bool recompute = false;          // made directly in a recomputed module's forward
  std::uint64_t variant = 0;
};

class OpStack {
 public:
  static constexpr std::size_t kMaxDepth = 128;

  // nullptr past kMaxDepth; its pop() still balances.
  OpFrame* push(const FramePush& p) noexcept {
    if (depth_ >= kMaxDepth) {
      ++overflow_;
      return nullptr;
    }
    const OpFrame* parent = top();
    OpFrame& f = frames_[depth_++];
    // A recomputed forward's calls are work of their own, even inside a backward function whose
    // op's backward is counted elsewhere.
    const bool parent_covered = parent != nullptr && parent->covered && !p.recompute;
    f.region = p.region;
    f.carries_work = p.cost != nullptr && !parent_covered;
    f.covered = parent_covered || p.cost != nullptr;
    f.backward = p.backward_function || (parent != nullptr && parent->backward && !p.recompute);
    f.recompute = !p.backward_function && (p.recompute || (parent != nullptr && parent->recompute));
    f.wrapper = p.wrapper;
    f.is_op = p.is_op;
    f.outermost = p.region >= 0 && (parent == nullptr || !parent->in_region);
    f.reads_counters = false;
    f.marks_step = false;
    f.in_region = p.region >= 0 || (parent != nullptr && parent->in_region);
    f.root = parent != nullptr && parent->root >= 0 ? parent->root : p.is_op ? p.region : -1;
    const bool inherits = parent != nullptr && parent->root >= 0;
    f.variant = p.variant;
    f.root_call = inherits ? parent->root_call : 0;
    f.root_variant = inherits ? parent->root_variant : p.is_op ? p.variant : 0;
    f.root_backward_flops = inherits ? parent->root_backward_flops : -1.0;
    f.root_backward_bytes = inherits ? parent->root_backward_bytes : 0.0;
    f.work = f.carries_work ? *p.cost : AtenCost{};
    f.async_handle = 0;
    f.probe_key = 0;
    return &f;
  }

  // The old form, for a call with no phase of its own: an op, a user scope or a backward function.
  OpFrame* push(int region, const AtenCost* cost, bool is_op, bool backward_function) noexcept {
    FramePush p;
    p.region = region;
    p.cost = cost;
    p.is_op = is_op;
    p.backward_function = backward_function;
    return push(p);
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
  const OpFrame& at(std::size_t i) const noexcept { return frames_[i]; }  // i < depth(): 0 is the outermost
  std::size_t depth() const noexcept { return depth_; }
  // Whether any open call is inside an autograd backward function.
  bool in_backward() const noexcept { return depth_ > 0 && frames_[depth_ - 1].backward; }

 private:
  OpFrame frames_[kMaxDepth];
  std::size_t depth_ = 0;
  std::size_t overflow_ = 0;
};

}  // namespace hwprof::pytorch
