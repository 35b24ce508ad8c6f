// The PyTorch observer: every aten op, autograd backward function and user scope of the
// program becomes a region of the regions library's default session, with its analytic work
// (aten_cost.cpp) added per call. Registered once, when the library is loaded, and only when
// the run asks for output, a backend, counters or samples (HWPROF_OUTPUT, HWPROF_BACKEND, HWPROF_EVENTS,
// HWPROF_GROUP: docs/regions.md; HWPROF_SAMPLE: docs/sampling.md) or runs under hwprof record (HWPROF_RECORD_SPANS) and regions are not
// disabled; otherwise it registers nothing. The only file that includes libtorch: compiled with -DNDEBUG, since RecordFunction has a
// member that exists only without it (docs/torch.md, "Building").
//
// Per call, allocation-free once a signature was seen on a thread: the call's inputs are
// copied into a thread's AtenCall, hashed, and looked up in the thread's table of signatures
// (its region, and its cost or none); the region is entered (counters read only for the
// outermost region of the thread's op stack: op_stack.hpp) and left at the call's end, where
// the call's work is added to it. A signature seen for the first time registers its region
// and works out its cost: that allocates, once.
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/engine.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "hwprof/regions.hpp"
#include "hwprof/session.hpp"
#include "hwprof/torch.h"
#include "torch/aten_cost.hpp"
#include "torch/op_stack.hpp"

namespace hwprof::detail {
namespace {

// The default session's state, opened at the first op (not while the library loads: a
// session opened from a static initializer, before libtorch's threads exist, counted nothing
// in them); nullptr while regions are disabled.
std::atomic<Session::State*> session_state{nullptr};

// ---- the forward op each autograd sequence number belongs to ----

// A backward function's (forward thread, sequence number) names the forward call that made
// it; the outermost op around that call is what its region is named after. PyTorch numbers
// sequences per thread (each forward thread counts from 0), so the key is both: the latest
// 65536 calls, with the thread's RecordFunction id taken modulo 256 (two forward threads 256
// ids apart, both running at once, would share keys).
constexpr std::size_t kSequenceSlots = std::size_t{1} << 16;

// What a forward call left for the backward functions of its sequence number.
struct ForwardCall {
  int root = -1;    // the outermost op's region
  int module = -1;  // the innermost module it ran in (a forward module region)
  std::uint64_t root_call = 0;
  double backward_flops = -1.0;  // the outermost op's backward by the op table; < 0: none
  double backward_bytes = 0.0;
};

// One sequence number's slot; `key` (the sequence's low 32 bits, the thread's low 8, root + 1
// in 24) is written last, so that a reader that finds its sequence there reads the rest of
// that call (all zero until then: the table stays in zeroed memory).
struct SequenceSlot {
  std::atomic<std::uint64_t> key{0};
  std::atomic<int> module{0};
  std::atomic<std::uint64_t> root_call{0};
  std::atomic<double> backward_flops{0.0};
  std::atomic<double> backward_bytes{0.0};
};
SequenceSlot sequence_slots[kSequenceSlots];

// The slot and the key's upper 40 bits of one (thread, sequence).
struct SequenceKey {
  std::size_t slot;
  std::uint64_t upper;
};
SequenceKey sequence_key(std::uint64_t thread, std::uint64_t seq) noexcept {
  const std::uint64_t upper = ((seq & 0xffffffffU) << 8) | (thread & 0xffU);
  // Spread the threads over the table: their sequences all start at 0.
  return {static_cast<std::size_t>((seq + (thread & 0xffU) * 40503U) % kSequenceSlots), upper};
}

void remember_forward(std::uint64_t thread, std::int64_t sequence, const OpFrame& f, int module) noexcept {
  if (sequence < 0 || f.root < 0 || f.root >= (1 << 24)) return;
  const SequenceKey k = sequence_key(thread, static_cast<std::uint64_t>(sequence));
  SequenceSlot& slot = sequence_slots[k.slot];
  slot.module.store(module, std::memory_order_relaxed);
  slot.root_call.store(f.root_call, std::memory_order_relaxed);
  slot.backward_flops.store(f.root_backward_flops, std::memory_order_relaxed);
  slot.backward_bytes.store(f.root_backward_bytes, std::memory_order_relaxed);
  slot.key.store((k.upper << 24) | static_cast<std::uint64_t>(f.root + 1), std::memory_order_release);
}

ForwardCall forward_call(std::uint64_t thread, std::int64_t sequence) noexcept {
  if (sequence < 0) return {};
  const SequenceKey k = sequence_key(thread, static_cast<std::uint64_t>(sequence));
  const SequenceSlot& slot = sequence_slots[k.slot];
  const std::uint64_t key = slot.key.load(std::memory_order_acquire);
  if ((key >> 24) != k.upper) return {};
  return {static_cast<int>(key & 0xffffffU) - 1, slot.module.load(std::memory_order_relaxed), slot.root_call.load(std::memory_order_relaxed),
          slot.backward_flops.load(std::memory_order_relaxed), slot.backward_bytes.load(std::memory_order_relaxed)};
}

// Root op calls, numbered across the process.
std::atomic<std::uint64_t> next_root_call{1};

// An outermost op call's backward by the op table, for these inputs: its parameters' gradients
// where a parameter (a tensor input after the first) wants one, its input's where the first
// input does (the rule of backward_flops_of, cost/op_cost.hpp, on the call's own flags).
void set_root_backward(OpFrame& f, const AtenCall& call, const AtenCost& cost) noexcept {
  f.root_call = next_root_call.fetch_add(1, std::memory_order_relaxed);
  if (!cost.backward) return;
  bool input = false;
  bool weights = false;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    if (a.kind != AtenArgKind::tensor && a.kind != AtenArgKind::tensors) continue;
    (i == 0 ? input : weights) |= a.requires_grad;
  }
  if (!input && !weights) return;  // nothing upstream or inside is trained: no backward
  const AtenCost::Backward& b = *cost.backward;
  f.root_backward_flops = b.base_flops + (weights ? b.weight_flops : 0.0) + (input ? b.input_flops : 0.0);
  f.root_backward_bytes = b.bytes;
}

// ---- modules: regions the Python package enters around each module's forward ----

// Per forward module region (ids below kModuleRegions): the module around it when it was
// first entered (+2; 1: none; 0: not a module), and its backward region (+1; 0: not made yet).
constexpr int kModuleRegions = 1 << 16;
std::atomic<int> module_parent[kModuleRegions];
std::atomic<int> module_backward[kModuleRegions];

// Op regions whose work runs on a GEMM, so that the backward function named after one is too.
std::atomic<bool> gemm_region[kModuleRegions];

bool is_module(int region) noexcept {
  return region >= 0 && region < kModuleRegions && module_parent[region].load(std::memory_order_relaxed) != 0;
}
int parent_module(int region) noexcept {
  return is_module(region) ? module_parent[region].load(std::memory_order_relaxed) - 2 : -1;
}

// Region names by id, for naming backward regions after their forward op (first sight only).
std::mutex names_mutex;
std::vector<std::string> region_names;

void remember_name(int region, const std::string& name) {
  const std::lock_guard<std::mutex> lock(names_mutex);
  if (region < 0) return;
  if (static_cast<std::size_t>(region) >= region_names.size()) region_names.resize(static_cast<std::size_t>(region) + 1);
  region_names[static_cast<std::size_t>(region)] = name;
}
std::string name_of(int region) {
  const std::lock_guard<std::mutex> lock(names_mutex);
  return region >= 0 && static_cast<std::size_t>(region) < region_names.size() ? region_names[static_cast<std::size_t>(region)] : std::string();
}

// ---- one thread's state ----

struct Signature {
  std::uint64_t key = 0;  // 0: empty
  int region = -1;
  bool has_cost = false;
  AtenCost cost;
};

struct ThreadState {
  static constexpr std::size_t kSignatures = 8192;  // per thread; past them, first-sight work per call
  static constexpr std::size_t kProbes = 16;
  static constexpr std::size_t kMaxModuleDepth = 128;
  OpStack stack;
  int modules[kMaxModuleDepth] = {};  // the forward module regions open on this thread (-1: not measured)
  static constexpr std::size_t kMaxChain = 16;
  int chain[kMaxChain] = {};  // the module backward regions open on this thread, outermost first
  std::size_t chain_length = 0;
  bool close_queued = false;  // a callback at the backward pass's end will close the chain
  static constexpr std::size_t kCarried = 64;
  std::uint64_t carried[kCarried] = {};  // root calls whose backward a function carried, the latest
  std::size_t carried_next = 0;
  std::size_t module_depth = 0;
  std::size_t module_overflow = 0;
  AtenCall call;
  std::unique_ptr<Signature[]> signatures;  // made at the thread's first call
};
thread_local ThreadState thread_state;

// ---- a call's inputs as an AtenCall ----

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
}

// An int or bool list, read in place (toListRef: no reference count touched).
void copy_list(AtenArg& a, const c10::IValue& v) {
  const c10::ArrayRef<c10::IValue> list = v.toListRef();
  a.kind = AtenArgKind::ints;
  a.rank = static_cast<std::uint8_t>(list.size() < kAtenMaxRank ? list.size() : kAtenMaxRank);
  for (std::size_t i = 0; i < a.rank; ++i) a.dims[i] = list[i].isBool() ? (list[i].toBool() ? 1 : 0) : list[i].toInt();
}

void copy_input(AtenArg& a, const c10::IValue& v) {
  a = AtenArg{};
  if (v.isTensor()) {
    copy_tensor(a, v.toTensor());
  } else if (v.isTensorList()) {
    const c10::ArrayRef<c10::IValue> list = v.toListRef();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const at::Tensor& t = list[i].toTensor();
      if (i == 0) copy_tensor(a, t);
      a.elements += i == 0 ? 0 : t.numel();
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

void copy_call(AtenCall& call, const at::RecordFunction& fn) {
  call.op = fn.name();
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  call.arg_count = inputs.size() < kAtenMaxArgs ? inputs.size() : kAtenMaxArgs;
  for (std::size_t i = 0; i < call.arg_count; ++i) copy_input(call.args[i], inputs[i]);
}

// ---- first sight of a signature: its region and its cost ----

std::string shapes_of(const AtenCall& call) {
  std::string out;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    if (a.kind != AtenArgKind::tensor && a.kind != AtenArgKind::tensors) continue;
    out += out.empty() ? "" : ", ";
    if (a.kind == AtenArgKind::tensors) out += std::to_string(a.count) + " tensors: ";
    for (std::size_t d = 0; d < a.rank; ++d) out += (d > 0 ? "x" : "") + std::to_string(a.dims[d]);
    if (a.rank == 0) out += "()";
  }
  return out;
}

// The call's other inputs (ints, int lists, numbers, flags), for telling apart two calls on the
// same shapes that cost differently: "{(2, 2), (1, 1), (1, 1), 144}".
std::string scalars_of(const AtenCall& call) {
  std::string out;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    std::string item;
    switch (a.kind) {
      case AtenArgKind::integer:
        item = std::to_string(a.integer);
        break;
      case AtenArgKind::boolean:
        item = a.integer != 0 ? "True" : "False";
        break;
      case AtenArgKind::real:
        item = fmt::format("{:g}", a.real);
        break;
      case AtenArgKind::ints:
        item = "(";
        for (std::size_t d = 0; d < a.rank; ++d) item += (d > 0 ? ", " : "") + std::to_string(a.dims[d]);
        item += ")";
        break;
      default:
        continue;
    }
    out += (out.empty() ? "" : ", ") + item;
  }
  return "{" + out + "}";
}

// Each op row's name stands for one cost: a second signature of the same name (the same op on
// the same shapes) that costs otherwise (another stride) gets its scalars in its name, so that
// a row's FLOPs per call are those of every call in it, and a module's are exact.
std::mutex costs_mutex;
std::unordered_map<std::string, AtenCost> cost_of_name;

std::string name_for_cost(std::string name, const AtenCall& call, const AtenCost* cost) {
  const std::lock_guard<std::mutex> lock(costs_mutex);
  const AtenCost none{-1.0, -1.0, std::nullopt};
  const AtenCost& mine = cost != nullptr ? *cost : none;
  const auto [it, fresh] = cost_of_name.emplace(name, mine);
  if (fresh || (it->second.flops == mine.flops && it->second.bytes == mine.bytes)) return name;
  name += " " + scalars_of(call);
  cost_of_name.emplace(name, mine);
  return name;
}

// engine_sum: autograd's engine reducing a broadcast input's gradient to its shape after the
// function that made it (validate_outputs' sum_to: an aten::sum in the engine's wrapper, in no
// function). The op table counts that reduction in the op's backward (a linear's bias
// gradient, rows·out), which the function carries: the sum is timed, not counted again.
enum class CallKind { op, backward_function, user_scope, engine_sum };

// PyTorch's optimizers record their step and zero_grad as user scopes named
// "Optimizer.step#SGD.step" and "Optimizer.zero_grad#SGD.zero_grad" (torch/optim/optimizer.py).
constexpr std::string_view kOptimizerScope = "Optimizer.";

RegionRole role_of(CallKind kind, const AtenCall& call, bool backward) {
  if (kind == CallKind::user_scope) {
    return std::string_view(call.op).substr(0, kOptimizerScope.size()) == kOptimizerScope ? RegionRole::optimizer : RegionRole::scope;
  }
  return backward ? RegionRole::op_backward : RegionRole::op_forward;
}

Signature first_sight(CallKind kind, const AtenCall& call, bool backward, int forward) {
  Signature s;
  std::string name;
  if (kind == CallKind::backward_function) {
    const std::string forward_name = name_of(forward);
    name = forward_name.empty() ? std::string(call.op) : forward_name + " (backward)";
  } else if (kind == CallKind::user_scope) {
    name = std::string(call.op);
  } else {
    const std::string shapes = shapes_of(call);
    if (const auto cost = kind == CallKind::op ? aten_cost(call) : std::nullopt) {
      s.has_cost = true;
      s.cost = *cost;
    }
    name = name_for_cost(std::string(call.op) + (shapes.empty() ? "" : " [" + shapes + "]"), call, s.has_cost ? &s.cost : nullptr) +
           (backward ? " (backward)" : "");
  }
  Session::State* const state = session_state.load(std::memory_order_relaxed);
  s.region = Session::named_region(state, name);
  Session::set_role(state, s.region, role_of(kind, call, backward));
  // Its compute roof: the GEMM ceiling for a convolution or a matrix product, and for the
  // backward function of one.
  const bool gemm = kind == CallKind::op ? s.has_cost && aten_gemm_backed(call)
                                         : kind == CallKind::backward_function && forward >= 0 && forward < kModuleRegions &&
                                               gemm_region[forward].load(std::memory_order_relaxed);
  if (gemm) {
    Session::set_gemm_backed(state, s.region);
    if (s.region >= 0 && s.region < kModuleRegions) gemm_region[s.region].store(true, std::memory_order_relaxed);
  }
  // What its row says where it carries no work (docs/torch.md, "Who counts what").
  if (kind == CallKind::backward_function) {
    Session::set_work_note(state, s.region, "counted in the ops it runs: its forward op has no formula (their rows, and its module's backward row)");
  } else if (kind == CallKind::engine_sum) {
    Session::set_work_note(
        state, s.region,
        "counted in the backward function before it: the op table's gradient of a broadcast input (docs/torch.md, \"Who counts what\")");
  } else if (kind == CallKind::op) {
    Session::set_work_note(state, s.region,
                           s.has_cost ? "counted in the op around it (PyTorch ran it inside a composite op, whose row has the FLOPs)"
                                      : "not counted: hwprof has no formula for this op (docs/torch.md, \"Which aten ops have a formula\")");
  }
  remember_name(s.region, name);
  return s;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  return (h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdULL;
}

// The thread's signature for this call: looked up, or worked out on first sight.
Signature signature(ThreadState& ts, CallKind kind, bool backward, int forward) {
  std::uint64_t key = mix(aten_signature(ts.call), static_cast<std::uint64_t>(kind) + (backward ? 16 : 0));
  if (kind == CallKind::backward_function) key = mix(key, static_cast<std::uint64_t>(forward + 1));
  key |= 1;
  if (!ts.signatures) ts.signatures = std::make_unique<Signature[]>(ThreadState::kSignatures);
  for (std::size_t p = 0; p < ThreadState::kProbes; ++p) {
    Signature& slot = ts.signatures[(key + p) % ThreadState::kSignatures];
    if (slot.key == key) return slot;
    if (slot.key == 0) {
      slot = first_sight(kind, ts.call, backward, forward);
      slot.key = key;
      return slot;
    }
  }
  return first_sight(kind, ts.call, backward, forward);
}

constexpr std::string_view kEngineWrapper = "autograd::engine::evaluate_function: ";

// The session, once regions are enabled; the first call names the observer in it.
Session::State* observing_state() noexcept {
  Session::State* const state = default_state();
  if (state != nullptr && session_state.exchange(state, std::memory_order_relaxed) != state) Session::set_observer(state, "torch");
  return state;
}

// The backward region of a forward module region: "<module> (backward)", made on first use;
// -1 where it cannot be.
int backward_region(Session::State* state, int module) noexcept {
  const int known = module_backward[module].load(std::memory_order_relaxed) - 1;
  if (known >= 0) return known;
  int region = -1;
  try {
    region = Session::named_region(state, name_of(module) + " (backward)");
  } catch (...) {
    return -1;
  }
  Session::set_role(state, region, RegionRole::module_backward);
  module_backward[module].store(region + 1, std::memory_order_relaxed);
  return region;
}

// ---- the backward of modules: a chain of backward regions kept open across functions ----

// Entering the module backward regions: the chain of the module a backward function's forward
// op ran in and of the modules around it (outermost first, at most kMaxChain of the innermost)
// is kept open on the thread while the next functions belong to it, so that a module's
// backward row has one call per run of its functions, not one per function (docs/torch.md,
// "Modules"). A function of another module closes the modules it does not share and opens its
// own; a function of no module (AccumulateGrad, a gradient sum) runs inside the open chain (the
// gradients of the module just differentiated). The chain is closed at the end of the backward
// pass (a callback queued on autograd's graph task), or before the thread's next call outside
// the backward pass, or a module's forward.
void close_backward_chain(ThreadState& ts, std::size_t keep) noexcept {
  Session::State* const state = session_state.load(std::memory_order_relaxed);
  while (ts.chain_length > keep) Session::leave(state, ts.chain[--ts.chain_length]);
  if (keep == 0) ts.close_queued = false;  // a later pass queues its own close
}

void queue_chain_close(ThreadState& ts) noexcept {
  if (ts.close_queued) return;
  try {
    ThreadState* const owner = &ts;
    const std::thread::id thread = std::this_thread::get_id();
    torch::autograd::Engine::get_default_engine().queue_callback([owner, thread] {
      // Run where the graph task ends: the thread that ran it, for a CPU backward pass. On
      // another thread the chain is closed by its own thread's next call instead.
      if (std::this_thread::get_id() == thread) close_backward_chain(*owner, 0);
    });
    ts.close_queued = true;
  } catch (...) {
    // Not inside a graph task: the thread's next call outside the backward pass closes it.
  }
}

void open_backward_chain(Session::State* state, ThreadState& ts, int module) noexcept {
  int wanted[ThreadState::kMaxChain];
  std::size_t n = 0;
  for (int m = module; m >= 0 && n < ThreadState::kMaxChain; m = parent_module(m)) wanted[n++] = m;
  std::reverse(wanted, wanted + n);  // outermost first
  for (std::size_t i = 0; i < n; ++i) wanted[i] = backward_region(state, wanted[i]);
  std::size_t shared = 0;
  while (shared < n && shared < ts.chain_length && ts.chain[shared] == wanted[shared]) ++shared;
  close_backward_chain(ts, shared);
  for (std::size_t i = shared; i < n && wanted[i] >= 0; ++i) {
    Session::enter(state, wanted[i]);
    ts.chain[ts.chain_length++] = wanted[i];
  }
  queue_chain_close(ts);
}

// A frame with no region, so that the call's end still finds one (an async call's, by its handle).
void push_placeholder(OpStack& stack, const at::RecordFunction& fn, bool backward) noexcept {
  OpFrame* f = stack.push(-1, nullptr, false, backward);
  if (f != nullptr && fn.isAsync()) f->async_handle = fn.handle();
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState& ts = thread_state;
  Session::State* const state = observing_state();
  if (state == nullptr) {
    push_placeholder(ts.stack, fn, false);
    return nullptr;
  }
  try {
    const at::RecordScope scope = fn.scope();
    const char* name = fn.name();
    const bool engine_wrapper = scope == at::RecordScope::FUNCTION && std::strncmp(name, kEngineWrapper.data(), kEngineWrapper.size()) == 0;
    // The thread's first call outside a backward pass closes the backward chain left open.
    if (ts.chain_length > 0 && ts.stack.depth() == 0 && !engine_wrapper && scope != at::RecordScope::BACKWARD_FUNCTION) close_backward_chain(ts, 0);
    if (engine_wrapper) {
      // The engine's wrapper around a backward function: no region; what runs in it is
      // backward (the function, and the gradient sums of a tensor used twice, aten::add).
      push_placeholder(ts.stack, fn, true);
      return nullptr;
    }
    const OpFrame* parent = ts.stack.top();
    const bool in_engine = parent != nullptr && parent->region < 0 && parent->backward;  // the engine's wrapper, no function
    const CallKind kind = scope == at::RecordScope::BACKWARD_FUNCTION        ? CallKind::backward_function
                          : scope == at::RecordScope::USER_SCOPE             ? CallKind::user_scope
                          : in_engine && std::strcmp(name, "aten::sum") == 0 ? CallKind::engine_sum
                                                                             : CallKind::op;
    const bool backward = kind == CallKind::backward_function || (parent != nullptr && parent->backward);
    ForwardCall forward;
    if (kind == CallKind::op || kind == CallKind::engine_sum) {
      copy_call(ts.call, fn);
    } else {
      ts.call.op = name;
      ts.call.arg_count = 0;
      if (kind == CallKind::backward_function) forward = forward_call(fn.forwardThreadId(), fn.seqNr());
    }
    const Signature s = signature(ts, kind, backward, forward.root);
    // A backward function of a module's op, with no region open around it on this thread (not
    // a backward pass run inside a module's forward): its modules' backward regions.
    if (kind == CallKind::backward_function && forward.module >= 0 && is_module(forward.module) && ts.module_depth == 0 &&
        (parent == nullptr || !parent->in_region)) {
      open_backward_chain(state, ts, forward.module);
    }
    // A backward function carries its forward op's backward by the op table, once per forward
    // call (a linear's AddmmBackward0; its TBackward0 carries none), so that the ops inside it
    // are not counted again (docs/torch.md, "Who counts what").
    AtenCost carried;
    const AtenCost* cost = s.has_cost ? &s.cost : nullptr;
    if (kind == CallKind::backward_function && forward.root_call != 0 && forward.backward_flops >= 0.0) {
      if (std::find(ts.carried, ts.carried + ThreadState::kCarried, forward.root_call) == ts.carried + ThreadState::kCarried) {
        carried = AtenCost{forward.backward_flops, forward.backward_bytes, std::nullopt};
        ts.carried[ts.carried_next++ % ThreadState::kCarried] = forward.root_call;
      }
      cost = &carried;
    }
    OpFrame* f = ts.stack.push(s.region, cost, kind == CallKind::op || kind == CallKind::engine_sum, kind == CallKind::backward_function);
    if (f != nullptr && fn.isAsync()) f->async_handle = fn.handle();
    if (f == nullptr || s.region < 0) return nullptr;
    if (kind == CallKind::op && !backward) {
      if (f->root == s.region && (parent == nullptr || parent->root < 0) && s.has_cost) set_root_backward(*f, ts.call, s.cost);
      remember_forward(fn.threadId(), fn.seqNr(), *f, ts.module_depth > 0 ? ts.modules[ts.module_depth - 1] : -1);
    }

    if (f->reads_counters) {
      Session::enter(state, s.region);
    } else {
      Session::enter_time_only(state, s.region);
    }
  } catch (...) {
    // A call that cannot be read is not measured; its end still finds a frame.
    push_placeholder(ts.stack, fn, false);
  }
  return nullptr;
}

void leave_frame(Session::State* state, const OpFrame* f, bool with_work) noexcept {
  if (f == nullptr || f->region < 0) return;
  Session::leave(state, f->region);
  if (f->carries_work && with_work) Session::add_work(state, f->region, f->work.flops, f->work.bytes);
}

// An async call (a collective's work: RecordFunction::_setAsync) may end on another thread than
// it started on: its end is taken only on its own thread with its frame on top; an async frame
// left on top by such a call is closed when the call around it ends.
void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  OpStack& stack = thread_state.stack;
  Session::State* const state = session_state.load(std::memory_order_relaxed);
  const OpFrame* top = stack.top();
  if (fn.isAsync()) {
    if (top == nullptr || top->async_handle != fn.handle()) return;
  } else {
    while (top != nullptr && top->async_handle != 0) {
      leave_frame(state, stack.pop(), false);
      top = stack.top();
    }
  }
  leave_frame(state, stack.pop(), true);
}

constexpr std::size_t kCallPathsPerThread = 8192;

// Registered when the library is loaded: a C++ program that links it, or Python's import.
struct Registration {
  bool active = false;
  Registration() noexcept {
    try {
      // The regions library measures by default; its ops are worth observing only where the
      // run asks for something of them: output, a backend, counters or samples (docs/torch.md;
      // HWPROF_SAMPLE asks even when empty: docs/sampling.md), or runs under hwprof record.
      bool asked = std::getenv("HWPROF_SAMPLE") != nullptr;
      for (const char* name : {"HWPROF_OUTPUT", "HWPROF_BACKEND", "HWPROF_EVENTS", "HWPROF_GROUP", "HWPROF_RECORD_SPANS"}) {
        const char* value = std::getenv(name);
        asked = asked || (value != nullptr && *value != '\0');
      }
      const char* disable = std::getenv("HWPROF_DISABLE");
      if (!asked || (disable != nullptr && *disable != '\0' && std::strcmp(disable, "0") != 0)) return;
      // A model's modules and ops make thousands of distinct call paths per thread (resnet18's
      // training step about 700, mobilenet_v2's 2,100), and a module's row needs them all.
      want_call_paths(kCallPathsPerThread);
      at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end)
                                .needsInputs(true)
                                .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
      active = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hwprof: the PyTorch observer could not start, PyTorch ops are not measured: %s\n", e.what());
    } catch (...) {
      std::fprintf(stderr, "hwprof: the PyTorch observer could not start, PyTorch ops are not measured\n");
    }
  }
};
const Registration registration;

}  // namespace
}  // namespace hwprof::detail

extern "C" int hwprof_torch_observing(void) {
  return hwprof::detail::registration.active ? 1 : 0;
}

extern "C" void hwprof_torch_module_begin(const char* name) {
  using namespace hwprof::detail;
  using hwprof::Session;
  ThreadState& ts = thread_state;
  if (ts.chain_length > 0) close_backward_chain(ts, 0);
  if (ts.module_depth >= ThreadState::kMaxModuleDepth) {
    ++ts.module_overflow;  // balanced by its end; not measured
    return;
  }
  Session::State* const state = registration.active && name != nullptr ? observing_state() : nullptr;
  const int region = state != nullptr ? Session::named_region(state, name) : -1;
  if (region >= 0) Session::set_role(state, region, hwprof::RegionRole::module_forward);
  if (region >= 0 && region < kModuleRegions && module_parent[region].load(std::memory_order_relaxed) == 0) {
    // First entry: a module, under the module open around it (its path's parent).
    try {
      remember_name(region, name);
    } catch (...) {
    }
    const int around = ts.module_depth > 0 ? ts.modules[ts.module_depth - 1] : -1;
    module_parent[region].store(around + 2, std::memory_order_relaxed);
  }
  ts.modules[ts.module_depth++] = region;  // -1: not measured, still balanced
  if (region >= 0) Session::enter(state, region);
}

extern "C" void hwprof_torch_module_end(void) {
  using namespace hwprof::detail;
  using hwprof::Session;
  ThreadState& ts = thread_state;
  if (ts.module_overflow > 0) {
    --ts.module_overflow;
    return;
  }
  if (ts.module_depth == 0) return;
  const int region = ts.modules[--ts.module_depth];
  if (region >= 0) Session::leave(session_state.load(std::memory_order_relaxed), region);
}
