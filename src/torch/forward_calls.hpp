// What the forward pass left for the backward pass to find (observer.cpp): per autograd
// sequence number, the forward call that made the node (its outermost op, the innermost module
// it ran in and that module's call), and per module call, the module call around it. Written
// by the forward thread, read by whichever thread runs the backward function; fixed tables in
// zeroed memory, no allocation, no lock. No libtorch: tested on made-up calls.
//
// PyTorch numbers sequences per thread (each forward thread counts from 0), so a sequence
// number is looked up with its thread: the latest kForwardSlots (thread, sequence) pairs are
// kept, the thread's id taken modulo 256 (two forward threads 256 ids apart, both running at
// once, would share keys). Module calls are numbered across the process; the latest
// kModuleCallSlots are kept.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include "common/stages.hpp"

namespace hwprof::pytorch {

struct ForwardCall {
  int root = -1;                  // the outermost op's region, -1: none (a node no observed op made)
  int module = -1;                // the innermost module it ran in (the module's forward region), -1: none
  std::uint64_t module_call = 0;  // that module's call, 0: none
  std::uint64_t root_call = 0;    // the outermost op's call, 0: none
  std::uint64_t variant = 0;      // the outermost op's variant (its shapes), 0: none
  double backward_flops = -1.0;   // the outermost op's backward by the op table; < 0: none
  double backward_bytes = 0.0;
};

class ForwardCalls {
 public:
  static constexpr std::size_t kSlots = std::size_t{1} << 16;

  void remember(std::uint64_t thread, std::int64_t sequence, const ForwardCall& call) noexcept;
  // remember() where no call of this (thread, sequence) is kept: a module's calls fill the
  // sequence numbers no op of theirs took (a scripted graph's node, a custom Function's).
  void remember_if_absent(std::uint64_t thread, std::int64_t sequence, const ForwardCall& call) noexcept;
  // The call kept for (thread, sequence), or an empty one.
  ForwardCall find(std::uint64_t thread, std::int64_t sequence) const noexcept;

 private:
  // `key` (the sequence's low 32 bits, the thread's low 8, then 1 in the lowest 24 bits so that
  // a used slot is never 0) is written last, so that a reader that finds its key reads that
  // call's fields (all zero until then: the table stays in zeroed memory).
  struct Slot {
    std::atomic<std::uint64_t> key{0};
    std::atomic<int> root{0};    // root + 1
    std::atomic<int> module{0};  // module + 1
    std::atomic<std::uint64_t> module_call{0};
    std::atomic<std::uint64_t> root_call{0};
    std::atomic<std::uint64_t> variant{0};
    std::atomic<double> backward_flops{0.0};
    std::atomic<double> backward_bytes{0.0};
  };
  struct Key {
    std::size_t slot;
    std::uint64_t key;
  };
  static Key key_of(std::uint64_t thread, std::uint64_t sequence) noexcept;
  Slot slots_[kSlots];
};

// The module call around each module call (its parent in the call tree as it ran).
class ModuleCalls {
 public:
  static constexpr std::size_t kSlots = std::size_t{1} << 16;

  void remember(std::uint64_t call, int module, std::uint64_t parent_call) noexcept;
  struct Entry {
    int module = -1;                // -1: not kept (too old, or never made)
    std::uint64_t parent_call = 0;  // 0: none (a model's own call)
  };
  Entry find(std::uint64_t call) const noexcept;

 private:
  struct Slot {
    std::atomic<std::uint64_t> call{0};  // written last
    std::atomic<int> module{0};          // module + 1 (zero-initialised: the table is in .bss)
    std::atomic<std::uint64_t> parent_call{0};
  };
  Slot slots_[kSlots];
};

}  // namespace hwprof::pytorch
