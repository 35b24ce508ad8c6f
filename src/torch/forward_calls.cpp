#include "torch/forward_calls.hpp"
#include "common/stages.hpp"

namespace hwprof::pytorch {

ForwardCalls::Key ForwardCalls::key_of(std::uint64_t thread, std::uint64_t sequence) noexcept {
  const std::uint64_t upper = ((sequence & 0xffffffffU) << 8) | (thread & 0xffU);
  // Spread the threads over the table: their sequences all start at 0.
  return {static_cast<std::size_t>((sequence + (thread & 0xffU) * 40503U) % kSlots), (upper << 24) | 1U};
}

void ForwardCalls::remember(std::uint64_t thread, std::int64_t sequence, const ForwardCall& call) noexcept {
  if (sequence < 0) return;
  const Key k = key_of(thread, static_cast<std::uint64_t>(sequence));
  Slot& s = slots_[k.slot];
  s.key.store(0, std::memory_order_relaxed);  // a reader meanwhile finds nothing rather than a mix
  s.root.store(call.root + 1, std::memory_order_relaxed);
  s.module.store(call.module + 1, std::memory_order_relaxed);
  s.module_call.store(call.module_call, std::memory_order_relaxed);
  s.root_call.store(call.root_call, std::memory_order_relaxed);
  s.variant.store(call.variant, std::memory_order_relaxed);
  s.backward_flops.store(call.backward_flops, std::memory_order_relaxed);
  s.backward_bytes.store(call.backward_bytes, std::memory_order_relaxed);
  s.key.store(k.key, std::memory_order_release);
}

void ForwardCalls::remember_if_absent(std::uint64_t thread, std::int64_t sequence, const ForwardCall& call) noexcept {
  if (sequence < 0) return;
  const Key k = key_of(thread, static_cast<std::uint64_t>(sequence));
  if (slots_[k.slot].key.load(std::memory_order_acquire) == k.key) return;
  remember(thread, sequence, call);
}

ForwardCall ForwardCalls::find(std::uint64_t thread, std::int64_t sequence) const noexcept {
  if (sequence < 0) return {};
  const Key k = key_of(thread, static_cast<std::uint64_t>(sequence));
  const Slot& s = slots_[k.slot];
  if (s.key.load(std::memory_order_acquire) != k.key) return {};
  ForwardCall c;
  c.root = s.root.load(std::memory_order_relaxed) - 1;
  c.module = s.module.load(std::memory_order_relaxed) - 1;
  c.module_call = s.module_call.load(std::memory_order_relaxed);
  c.root_call = s.root_call.load(std::memory_order_relaxed);
  c.variant = s.variant.load(std::memory_order_relaxed);
  c.backward_flops = s.backward_flops.load(std::memory_order_relaxed);
  c.backward_bytes = s.backward_bytes.load(std::memory_order_relaxed);
  // The key again: a writer that replaced the slot meanwhile cleared it first.
  if (s.key.load(std::memory_order_acquire) != k.key) return {};
  return c;
}

void ModuleCalls::remember(std::uint64_t call, int module, std::uint64_t parent_call) noexcept {
  if (call == 0) return;
  Slot& s = slots_[call % kSlots];
  s.call.store(0, std::memory_order_relaxed);
  s.module.store(module + 1, std::memory_order_relaxed);
  s.parent_call.store(parent_call, std::memory_order_relaxed);
  s.call.store(call, std::memory_order_release);
}

ModuleCalls::Entry ModuleCalls::find(std::uint64_t call) const noexcept {
  if (call == 0) return {};
  const Slot& s = slots_[call % kSlots];
  if (s.call.load(std::memory_order_acquire) != call) return {};
  Entry e{s.module.load(std::memory_order_relaxed) - 1, s.parent_call.load(std::memory_order_relaxed)};
  if (s.call.load(std::memory_order_acquire) != call) return {};
  return e;
}

}  // namespace hwprof::pytorch
