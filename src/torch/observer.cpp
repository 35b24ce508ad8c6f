// The PyTorch observer: every aten op, autograd backward function and user scope of the
// program becomes a region of the regions library's default session, with its analytic work
// (aten_cost.cpp) given per call. Registered once, when the library is loaded, and only when
// the run asks for output, a backend, counters or samples (HWPROF_OUTPUT, HWPROF_BACKEND, HWPROF_EVENTS,
// HWPROF_GROUP: docs/regions.md; HWPROF_SAMPLE: docs/sampling.md) or runs under hwprof record (HWPROF_RECORD_SPANS) and regions are not
// disabled; otherwise it registers nothing. The only file that includes libtorch: compiled with -DNDEBUG, since RecordFunction has a
// member that exists only without it (docs/torch.md, "Building").
//
// Rows (docs/torch.md, "Rows"): one region per op and phase (`aten::linear`, `aten::linear
// (backward)`, `aten::mm (in backward)`, `aten::linear (recompute)`), its calls by input shapes
// kept apart as the region's variants (bounded: observer::note_variant); one per module and phase
// (`Net.fc`, `Net.fc (backward)`, `Net.fc (recompute)`).
//
// Per call, allocation-free once a signature was seen on a thread: the call's inputs are
// copied into a thread's AtenCall, hashed, and looked up in the thread's table of signatures
// (its region, variant and cost); the region is entered (counters read only where a read costs
// little against calls of that signature: ReadDecision) and left at the call's end with the
// call's work. A
// signature seen for the first time works out its cost and label: that allocates, once.
//
// Backward (docs/torch.md, "Modules"): each forward op call leaves, under its autograd sequence
// number, its outermost op, the module it ran in and that module's call (forward_calls.hpp). The
// backward functions of one forward call run inside a chain of regions kept open on the thread
// while the next functions belong to it: the modules' backward regions, outermost first, and the
// op's backward region innermost, each keyed by the forward call it differentiates, so that a
// row has one call per forward call however many autograd functions ran; a piece of a call that
// comes back after another call's functions continues it (observer::enter_continuing).
#include <ATen/Parallel.h>
#include <ATen/SequenceNumber.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/engine.h>

#include <dlfcn.h>
#include <link.h>

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
#include <vector>

#include "common/stages.hpp"
#include "hwprof/regions.h"
#include "hwprof/regions.hpp"
#include "hwprof/session.hpp"
#include "hwprof/torch.h"
#include "session/observer_hooks.hpp"
#include "torch/aten_cost.hpp"
#include "torch/aten_inputs.hpp"
#include "torch/call_labels.hpp"
#include "torch/forward_calls.hpp"
#include "torch/op_stack.hpp"

namespace hwprof::pytorch {
namespace {

// The default session's state, opened at the first op (not while the library loads: a
// session opened from a static initializer, before libtorch's threads exist, counted nothing
// in them); nullptr while regions are disabled.
std::atomic<Session::State*> session_state{nullptr};

ForwardCalls forward_calls;
ModuleCalls module_calls;
std::atomic<std::uint64_t> next_root_call{1};
std::atomic<std::uint64_t> next_module_call{1};

// A call reads counters where a read pair costs at most this share of the time of calls of its
// signature (the op and its input shapes: an op's row holds all its shapes, whose times differ
// by orders of magnitude), judged by the fastest of kProbeCalls calls after the first
// (docs/torch.md, "Counters and their cost"). Until then its calls are timed only.
constexpr double kReadShare = 0.05;
constexpr int kProbeCalls = 4;

// Whether calls of one signature read counters: probed on its first calls, then decided.
struct ReadDecision {
  int timed = 0;  // calls timed so far (the first one is not probed: it allocates, warms caches)
  double fastest_ns = 0.0;
  signed char reads = -1;  // -1: not decided yet; 0: time only; 1: counters read
};

// ---- regions by id: what a region is for the observer ----

// Region ids below kRegionIds get these (a session registers at most SessionOptions::max_regions).
constexpr int kRegionIds = 1 << 16;
// A module's forward region: the module around it when it was first entered (+2; 1: none; 0:
// not a module), and its backward and recompute regions (+1; 0: not made yet).
std::atomic<int> module_parent[kRegionIds];
std::atomic<int> module_backward[kRegionIds];
std::atomic<int> module_recompute[kRegionIds];
// An op's forward (or recompute) region: its backward region (+1; 0: not made yet).
std::atomic<int> op_backward[kRegionIds];
// Op regions whose work runs on a GEMM, so that their backward is too.
std::atomic<bool> gemm_region[kRegionIds];
// A module's parameters (+1; 0: not said), for its backward and recompute rows too.
std::atomic<std::int64_t> module_params[kRegionIds];
// An op region without a formula: what its row says (1: counted in the op around it, seen only
// inside one; 2: not counted, seen outside one too).
std::atomic<int> op_note[kRegionIds];

bool in_ids(int region) noexcept {
  return region >= 0 && region < kRegionIds;
}
bool is_module(int region) noexcept {
  return in_ids(region) && module_parent[region].load(std::memory_order_relaxed) != 0;
}
int parent_module(int region) noexcept {
  return is_module(region) ? module_parent[region].load(std::memory_order_relaxed) - 2 : -1;
}

// The base names of the regions (a module's path, an op's name, without a phase), by id, for
// naming their backward and recompute regions (first sight only).
std::mutex names_mutex;
std::vector<std::string> base_names;

void remember_base_name(int region, std::string_view name) {
  if (region < 0) return;
  const std::lock_guard<std::mutex> lock(names_mutex);
  if (static_cast<std::size_t>(region) >= base_names.size()) base_names.resize(static_cast<std::size_t>(region) + 1);
  base_names[static_cast<std::size_t>(region)] = std::string(name);
}
std::string base_name_of(int region) {
  const std::lock_guard<std::mutex> lock(names_mutex);
  return region >= 0 && static_cast<std::size_t>(region) < base_names.size() ? base_names[static_cast<std::size_t>(region)] : std::string();
}

// A region made from another's base name with a suffix, once: "Net.fc (backward)".
int derived_region(Session::State* state, std::atomic<int>* table, int from, const char* suffix, RegionRole role) noexcept {
  if (!in_ids(from)) return -1;
  const int known = table[from].load(std::memory_order_relaxed) - 1;
  if (known >= 0) return known;
  int region = -1;
  try {
    const std::string base = base_name_of(from);
    if (base.empty()) return -1;
    region = Session::named_region(state, base + suffix);
    remember_base_name(region, base);
  } catch (...) {
    return -1;
  }
  observer::set_role(state, region, role);
  if (table == op_backward) observer::note_variant(state, region, 0, {});  // by its forward calls' shapes
  if (gemm_region[from].load(std::memory_order_relaxed)) {
    observer::set_compute_roof(state, region, ComputeRoof{ComputeRoof::Kind::gemm, {}, 0.0});
    if (in_ids(region)) gemm_region[region].store(true, std::memory_order_relaxed);
  }
  if (in_ids(region) && table == module_recompute) module_parent[region].store(module_parent[from].load(std::memory_order_relaxed));
  if (const std::int64_t params = module_params[from].load(std::memory_order_relaxed) - 1; params >= 0) observer::set_params(state, region, params);
  table[from].store(region + 1, std::memory_order_relaxed);
  return region;
}

// ---- the program's phases: setup, steps ----

// A Python program's ops before its first module call (constructing and initialising the model:
// `uniform_`, `normal_`, `fill_` per parameter) are one `setup` row, one call, not a row per op;
// only where the package observes modules (a libtorch program has no module calls to end it).
std::atomic<bool> modules_observed{false};
std::atomic<bool> setup_over{false};

// Steps: the optimizer's steps end them (Optimizer.step#...), unless the program marks its own
// (hwprof_torch_step). HWPROF_WARMUP_STEPS=N forgets what ran before the N-th step's end (or,
// in a program that runs no optimizer, before its outermost module's N+1-th call).
std::atomic<bool> explicit_steps{false};
std::atomic<std::uint64_t> optimizer_steps{0};
std::atomic<std::uint64_t> root_module_calls{0};
std::uint64_t warmup_steps = 0;
std::atomic<bool> warmup_done{false};

// ---- one thread's state ----

struct Signature {
  std::uint64_t key = 0;  // 0: empty
  int region = -1;
  int threads_noted = 0;  // the intra-op threads this thread last said its region ran on
  bool has_cost = false;
  bool marks_step = false;  // the optimizer's step
  AtenCost cost;
  std::uint64_t variant = 0;
  ReadDecision read;
  std::int64_t gemm_mnk = 0;  // an op whose product the BLAS runs: one GEMM's M·N·K (blas_threads)
};

struct ModuleFrame {
  int region = -1;  // the region entered (the module's forward or recompute region), -1: not measured
  int module = -1;  // the module (its forward region)
  std::uint64_t call = 0;
  bool recompute = false;
  std::size_t op_depth = 0;    // the op stack's depth when it was entered
  std::uint64_t sequence = 0;  // autograd's next sequence number when it was entered
};

// A region of the backward chain (see the top of this file). `base`: the op stack's depth below
// the backward function that opened it (0 for a backward pass run from the program; deeper for
// one run inside a backward function, such as a checkpoint's recomputation), so that a nested
// pass's levels close before the function around them ends.
struct ChainLevel {
  int region = -1;
  std::uint64_t key = 0;  // the forward call it differentiates (a module call, an op's root call); 0: unknown
  std::size_t base = 0;
  CallDetail detail;
};

struct ThreadState {
  static constexpr std::size_t kSignatures = 8192;  // per thread; past them, slots are reused
  static constexpr std::size_t kProbes = 8;
  static constexpr std::size_t kMaxModuleDepth = 128;
  static constexpr std::size_t kMaxChain = 24;
  static constexpr std::size_t kClosed = 64;
  OpStack stack;
  ModuleFrame modules[kMaxModuleDepth];
  std::size_t module_depth = 0;
  std::size_t module_overflow = 0;
  ChainLevel chain[kMaxChain];
  std::size_t chain_length = 0;
  std::uint64_t queued_bases = 0;  // bit b: a callback at the end of the graph task closes the levels at base b and above
  struct Closed {
    int region = -1;
    std::uint64_t key = 0;
  };
  Closed closed[kClosed];  // the chain levels closed last: one that comes back continues its call
  std::size_t closed_next = 0;
  AtenCall call;
  std::unique_ptr<Signature[]> signatures;  // made at the thread's first call
  std::uint64_t thread_id = 0;              // RecordFunction's id of this thread (0: not read yet)
};
thread_local ThreadState thread_state;

// ---- first sight of a signature: its region, variant and cost ----

// engine_sum: autograd's engine reducing a broadcast input's gradient to its shape after the
// function that made it (validate_outputs' sum_to: an aten::sum in the engine's wrapper, in no
// function). The op table counts that reduction in the op's backward (a linear's bias
// gradient, rows·out), which the backward of that op carries: the sum is timed, not counted again.
enum class CallKind { op, backward_function, user_scope, engine_sum };
enum class Phase { forward, backward, recompute, setup };

// PyTorch's optimizers record their step and zero_grad as user scopes named
// "Optimizer.step#SGD.step" and "Optimizer.zero_grad#SGD.zero_grad" (torch/optim/optimizer.py).
constexpr std::string_view kOptimizerScope = "Optimizer.";
constexpr std::string_view kOptimizerStep = "Optimizer.step#";

VariantLabels variant_labels;

constexpr const char* kCountedAround = "counted in the op around it (PyTorch ran it inside a composite op, whose row has the FLOPs)";

// "aten::mm (in backward)": an op the backward pass ran. The backward of a forward op is its own
// region ("aten::linear (backward)", made by derived_region), as is a recomputed forward op's.
const char* phase_suffix(Phase phase) noexcept {
  switch (phase) {
    case Phase::backward:
      return " (in backward)";
    case Phase::recompute:
      return " (recompute)";
    case Phase::setup:
      return " (setup)";
    case Phase::forward:
      break;
  }
  return "";
}

RegionRole role_of(CallKind kind, std::string_view name, Phase phase) {
  if (phase == Phase::setup) return RegionRole::setup;
  if (kind == CallKind::user_scope) return name.substr(0, kOptimizerScope.size()) == kOptimizerScope ? RegionRole::optimizer : RegionRole::scope;
  if (phase == Phase::recompute) return RegionRole::op_recompute;
  return phase == Phase::backward ? RegionRole::op_backward : RegionRole::op_forward;
}

// ---- the BLAS's own threads ----

using BlasThreads = int (*)();

// openblas_get_num_threads of the OpenBLAS loaded in the process (PyTorch links it as
// libblas.so.3, loaded local: not in the global scope), or nullptr where none is.
int find_blas(dl_phdr_info* info, std::size_t, void* out) {
  const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.find("blas") == std::string_view::npos) return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  void* symbol = dlsym(handle, "openblas_get_num_threads");
  dlclose(handle);  // RTLD_NOLOAD took a reference of a library that stays loaded
  if (symbol == nullptr) return 0;
  *static_cast<BlasThreads*>(out) = reinterpret_cast<BlasThreads>(symbol);
  return 1;
}

// The threads OpenBLAS runs a GEMM of M·N·K on (openblas_gemm_threads); 0 where the BLAS is
// not OpenBLAS (its threads unknown).
int blas_threads(std::int64_t mnk) noexcept {
  static const BlasThreads get = [] {
    BlasThreads f = nullptr;
    dl_iterate_phdr(find_blas, &f);
    return f;
  }();
  return get != nullptr ? openblas_gemm_threads(mnk, get()) : 0;
}

Signature first_sight(CallKind kind, const AtenCall& call, Phase phase) {
  Signature s;
  s.gemm_mnk = kind == CallKind::op ? blas_gemm_mnk(call) : 0;
  std::string base(call.op);
  std::string name;
  if (kind == CallKind::user_scope) {
    // One begun before the first module call (a DataLoader's first batch, its workers' start)
    // is the setup's, as its ops are.
    name = base + (phase == Phase::setup ? phase_suffix(phase) : "");
    s.marks_step = phase != Phase::setup && name.starts_with(kOptimizerStep);
  } else if (kind == CallKind::backward_function) {
    name = base + " (backward)";  // a node no forward op of the program made (AccumulateGrad, ...)
  } else if (kind == CallKind::engine_sum) {
    name = base + " (autograd engine)";
    s.variant = aten_signature(call) | 1U;
  } else {
    if (const auto cost = aten_cost(call)) {
      s.has_cost = true;
      s.cost = *cost;
    }
    name = base + phase_suffix(phase);  // "aten::uniform_ (setup)": a row of the setup phase
    s.variant = aten_signature(call) | 1U;
  }
  Session::State* const state = session_state.load(std::memory_order_relaxed);
  s.region = Session::named_region(state, name);
  remember_base_name(s.region, base);
  observer::set_role(state, s.region, role_of(kind, name, phase));
  if (s.variant != 0) observer::note_variant(state, s.region, s.variant, variant_labels.label(call, s.has_cost ? &s.cost : nullptr));
  // Its compute roof, from its op's definition: the GEMM ceiling for a convolution or a matrix
  // product (their backward regions inherit it), a function's rate for an activation.
  if (kind == CallKind::op && s.has_cost && s.cost.roof.kind != ComputeRoof::Kind::fma) {
    observer::set_compute_roof(state, s.region, s.cost.roof);
    if (s.cost.roof.kind == ComputeRoof::Kind::gemm && in_ids(s.region)) gemm_region[s.region].store(true, std::memory_order_relaxed);
  }
  // What its row says where it carries no work (docs/torch.md, "Who counts what").
  if (kind == CallKind::backward_function) {
    observer::set_work_note(state, s.region,
                            "counted in the ops it runs: no forward op of the program made it (their rows, and its module's backward row)");
  } else if (kind == CallKind::engine_sum) {
    observer::set_work_note(
        state, s.region,
        "counted in the backward of the op before it: the op table's gradient of a broadcast input (docs/torch.md, \"Who counts what\")");
  } else if (kind == CallKind::op && s.has_cost) {
    observer::set_work_note(state, s.region, kCountedAround);
  }
  return s;
}

// An op without a formula says, once, whether it ran only inside ops that count it (note_op_call).
void note_uncounted_call(Session::State* state, int region, bool covered) noexcept {
  if (!in_ids(region)) return;
  const int want = covered ? 1 : 2;
  if (op_note[region].load(std::memory_order_relaxed) >= want) return;
  op_note[region].store(want, std::memory_order_relaxed);
  observer::set_work_note(
      state, region, covered ? kCountedAround : "not counted: hwprof has no formula for this op (docs/torch.md, \"Which aten ops have a formula\")");
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  return (h ^ (v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdULL;
}

// The thread's signature for this call: looked up, or worked out on first sight (a full
// neighbourhood gives up its first slot: a program of ever new shapes keeps bounded memory).
Signature& signature(ThreadState& ts, CallKind kind, Phase phase) {
  // An op's name is its operator schema's, for the life of the process: taken by its address.
  // A user scope's or a backward function's is the call's own string: taken by its text.
  const bool op = kind == CallKind::op || kind == CallKind::engine_sum;
  std::uint64_t key =
      mix(op ? aten_call_key(ts.call) : aten_signature(ts.call), static_cast<std::uint64_t>(kind) * 4 + static_cast<std::uint64_t>(phase));
  key |= 1;
  if (!ts.signatures) ts.signatures = std::make_unique<Signature[]>(ThreadState::kSignatures);
  for (std::size_t p = 0; p < ThreadState::kProbes; ++p) {
    Signature& slot = ts.signatures[(key + p) % ThreadState::kSignatures];
    if (slot.key == key) return slot;
    if (slot.key == 0) {
      slot = first_sight(kind, ts.call, phase);
      slot.key = key;
      return slot;
    }
  }
  Signature& slot = ts.signatures[key % ThreadState::kSignatures];
  slot = first_sight(kind, ts.call, phase);
  slot.key = key;
  return slot;
}

constexpr std::string_view kEngineWrapper = "autograd::engine::evaluate_function: ";

// The session, once regions are enabled; the first call names the observer in it.
Session::State* observing_state() noexcept {
  Session::State* const state = detail::default_state();
  if (state != nullptr && session_state.load(std::memory_order_relaxed) != state &&
      session_state.exchange(state, std::memory_order_relaxed) != state) {
    observer::set_observer(state, "torch");
  }
  return state;
}

// Whether a call of a module or of a backward chain's level reads counters: where a read pair
// is small against the region's calls so far (a module's calls are alike; a level's are its
// forward calls', of any shapes). A module's first call is timed only.
bool worth_reading_region(Session::State* state, int region) noexcept {
  const double pair = observer::counted_pair_ns(state);
  return pair > 0.0 && observer::mean_ns(state, region) * kReadShare >= pair;
}

// Whether this call reads counters: where its signature's calls are long against a read pair.
// An undecided signature's call is timed only, and probed (OpFrame::probe_key: note_call_time).
bool worth_reading(Session::State* state, ThreadState& ts, Signature& s, OpFrame& f) noexcept {
  if (!f.outermost || observer::counted_pair_ns(state) <= 0.0) return false;
  if (s.read.reads >= 0) return s.read.reads == 1;
  f.probe_key = s.key;
  f.probe_slot = static_cast<std::uint32_t>(&s - ts.signatures.get());
  return false;
}

// A probed call's time, for its signature's decision (worth_reading): the slot may have been
// given to another signature since, then it is dropped.
void note_call_time(Session::State* state, ThreadState& ts, const OpFrame& f, double ns) noexcept {
  if (f.probe_key == 0 || ns < 0.0 || !ts.signatures || f.probe_slot >= ThreadState::kSignatures) return;
  Signature& s = ts.signatures[f.probe_slot];
  if (s.key != f.probe_key || s.read.reads >= 0) return;
  if (s.read.timed++ == 0) return;
  s.read.fastest_ns = s.read.timed == 2 ? ns : std::min(s.read.fastest_ns, ns);
  if (s.read.timed <= kProbeCalls) return;
  s.read.reads = s.read.fastest_ns * kReadShare >= observer::counted_pair_ns(state) ? 1 : 0;
}

std::uint64_t this_thread_id(ThreadState& ts) noexcept {
  if (ts.thread_id == 0) ts.thread_id = at::RecordFunction::currentThreadId();
  return ts.thread_id;
}

// ---- the backward chain ----

void close_levels(Session::State* state, ThreadState& ts, std::size_t keep) noexcept {
  while (ts.chain_length > keep) {
    const ChainLevel& level = ts.chain[--ts.chain_length];
    observer::leave(state, level.region, level.detail);
    ts.closed[ts.closed_next++ % ThreadState::kClosed] = {level.region, level.key};
  }
}

// Closes the levels at `base` and deeper.
void close_from_base(ThreadState& ts, std::size_t base) noexcept {
  std::size_t keep = ts.chain_length;
  while (keep > 0 && ts.chain[keep - 1].base >= base) --keep;
  close_levels(session_state.load(std::memory_order_relaxed), ts, keep);
  ts.queued_bases &= base < 64 ? ~((~std::uint64_t{0}) << base) : ~std::uint64_t{0};
}

bool recently_closed(const ThreadState& ts, int region, std::uint64_t key) noexcept {
  if (key == 0) return false;
  for (const ThreadState::Closed& c : ts.closed) {
    if (c.region == region && c.key == key) return true;
  }
  return false;
}

// A callback queued on the graph task closes the levels of its base when the backward pass
// ends, on the thread that ran it (a CPU pass); on another thread the chain is closed by its
// own thread's next call outside the backward pass instead.
void queue_close(ThreadState& ts, std::size_t base) noexcept {
  const std::uint64_t bit = base < 64 ? std::uint64_t{1} << base : 0;
  if (bit == 0 || (ts.queued_bases & bit) != 0) return;
  try {
    // Two words: std::function keeps them in place (no allocation per backward pass). The
    // thread is known by its state's address.
    ThreadState* const owner = &ts;
    torch::autograd::Engine::get_default_engine().queue_callback([owner, base] {
      if (&thread_state == owner) close_from_base(*owner, base);
    });
    ts.queued_bases |= bit;
  } catch (...) {
    // Not inside a graph task: the thread's next call outside the backward pass closes it.
  }
}

struct WantedLevel {
  int region = -1;
  std::uint64_t key = 0;
  CallDetail detail;
};

void open_chain(Session::State* state, ThreadState& ts, const WantedLevel* wanted, std::size_t n, std::size_t base) noexcept {
  // Levels of a deeper segment are a nested pass's that ended without its callback: closed.
  std::size_t start = 0;
  while (start < ts.chain_length && ts.chain[start].base < base) ++start;
  std::size_t deeper = start;
  while (deeper < ts.chain_length && ts.chain[deeper].base == base) ++deeper;
  close_levels(state, ts, deeper);
  std::size_t shared = 0;
  while (shared < n && start + shared < ts.chain_length && ts.chain[start + shared].region == wanted[shared].region &&
         ts.chain[start + shared].key == wanted[shared].key) {
    ++shared;
  }
  close_levels(state, ts, start + shared);
  for (std::size_t i = shared; i < n && ts.chain_length < ThreadState::kMaxChain; ++i) {
    const WantedLevel& w = wanted[i];
    if (w.region < 0) break;
    const bool counted = worth_reading_region(state, w.region);
    ChainLevel level{w.region, w.key, base, w.detail};
    if (recently_closed(ts, w.region, w.key)) {
      observer::enter_continuing(state, w.region, counted);
      level.detail.flops = -1.0;  // its work came with the call it continues
    } else if (counted) {
      Session::enter(state, w.region);
    } else {
      observer::enter_time_only(state, w.region);
    }
    observer::note_threads(state, w.region, at::get_num_threads());
    ts.chain[ts.chain_length++] = level;
  }
  queue_close(ts, base);
}

// The chain a backward function of forward call `fc` wants: its modules' backward regions
// (from the module calls as they ran, else the modules' first parents), then its op's.
std::size_t wanted_chain(Session::State* state, const ForwardCall& fc, WantedLevel* out) noexcept {
  WantedLevel modules[ThreadState::kMaxChain];
  std::size_t n = 0;
  int m = fc.module;
  std::uint64_t call = fc.module_call;
  while (m >= 0 && n + 1 < ThreadState::kMaxChain) {
    modules[n++] = {derived_region(state, module_backward, m, " (backward)", RegionRole::module_backward), call, CallDetail{}};
    const ModuleCalls::Entry e = call != 0 ? module_calls.find(call) : ModuleCalls::Entry{};
    if (e.module >= 0 && e.parent_call != 0) {
      const int parent = module_calls.find(e.parent_call).module;
      call = parent >= 0 ? e.parent_call : 0;
      m = parent >= 0 ? parent : parent_module(m);
    } else if (e.module >= 0) {
      m = -1;  // a model's own call
    } else {
      m = parent_module(m);
      call = 0;
    }
  }
  std::size_t k = 0;
  for (std::size_t i = n; i > 0; --i) out[k++] = modules[i - 1];
  if (fc.root >= 0) {
    CallDetail d;
    d.flops = fc.backward_flops;  // < 0: its forward op has no backward formula
    d.bytes = fc.backward_flops >= 0 ? fc.backward_bytes : 0.0;
    d.variant = fc.variant;
    out[k++] = {derived_region(state, op_backward, fc.root, " (backward)", RegionRole::op_backward), fc.root_call, d};
  }
  return k;
}

// ---- calls ----

// A frame with no region, so that the call's end still finds one (an async call's, by its handle).
void push_placeholder(OpStack& stack, const at::RecordFunction& fn, const FramePush& p = {}) noexcept {
  OpFrame* f = stack.push(p);
  if (f != nullptr && fn.isAsync()) f->async_handle = fn.handle();
}

// Zero work that covers the calls inside (a backward function whose op's backward its chain
// level carries): they are counted there, not again.
const AtenCost kCarriedElsewhere{0.0, 0.0, std::nullopt, {}};

// The phase of a call made now: a module recomputed during backward makes the calls directly
// inside it recomputes; otherwise the call inherits its parent's.
bool directly_in_recompute(const ThreadState& ts) noexcept {
  if (ts.module_depth == 0) return false;
  const ModuleFrame& m = ts.modules[ts.module_depth - 1];
  return m.recompute && m.op_depth == ts.stack.depth();
}

// Whether a backward can follow this forward call: a tensor input wants a gradient, or the call
// is inside one that had one (a composite op's parts see its inputs, or their own).
bool needs_grad(const AtenCall& call, const OpFrame* parent) noexcept {
  if (parent != nullptr && parent->root_call != 0) return true;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    if ((a.kind == AtenArgKind::tensor || a.kind == AtenArgKind::tensors) && a.requires_grad) return true;
  }
  return false;
}

void set_root_backward(OpFrame& f, const AtenCall& call, const Signature& s) noexcept {
  f.root_call = next_root_call.fetch_add(1, std::memory_order_relaxed);
  if (!s.has_cost || !s.cost.backward) return;
  bool input = false;
  bool weights = false;
  for (std::size_t i = 0; i < call.arg_count; ++i) {
    const AtenArg& a = call.args[i];
    if (a.kind != AtenArgKind::tensor && a.kind != AtenArgKind::tensors) continue;
    (i == 0 ? input : weights) |= a.requires_grad;
  }
  if (!input && !weights) return;  // nothing upstream or inside is trained: no backward
  const AtenCost::Backward& b = *s.cost.backward;
  f.root_backward_flops = b.base_flops + (weights ? b.weight_flops : 0.0) + (input ? b.input_flops : 0.0);
  f.root_backward_bytes = b.bytes;
}

// Setup: before the first module call, each op is a row of the setup phase ("aten::uniform_
// (setup)"), counted as any op. The profile makes them one setup row where a module was called
// after them, and ordinary op rows in a program that never called one (region_profile.cpp).
bool in_setup() noexcept {
  return modules_observed.load(std::memory_order_relaxed) && !setup_over.load(std::memory_order_relaxed);
}

// A backward function: its chain, and its frame (a region of its own only where no forward op
// of the program made it).
void start_backward_function(Session::State* state, ThreadState& ts, const at::RecordFunction& fn) {
  const ForwardCall fc = forward_calls.find(fn.forwardThreadId(), fn.seqNr());
  const OpFrame* parent = ts.stack.top();
  const std::size_t base = ts.stack.depth() - (parent != nullptr && parent->wrapper ? 1 : 0);
  // A backward pass run inside a module's forward (a gradient penalty) is not given to modules.
  const bool chained = ts.module_depth == 0 && (fc.module >= 0 || fc.root >= 0);
  if (chained) {
    WantedLevel wanted[ThreadState::kMaxChain];
    const std::size_t n = wanted_chain(state, fc, wanted);
    open_chain(state, ts, wanted, n, base);
  }
  FramePush p;
  p.backward_function = true;
  if (chained && fc.root >= 0) {
    // Its op's backward region (the chain's innermost level) is the row: the function is a frame
    // only, covering the ops inside where that level carries the op's backward FLOPs.
    p.cost = fc.backward_flops >= 0 ? &kCarriedElsewhere : nullptr;
    push_placeholder(ts.stack, fn, p);
    return;
  }
  ts.call.op = fn.name();
  ts.call.arg_count = 0;
  Signature& s = signature(ts, CallKind::backward_function, Phase::backward);
  p.region = s.region;
  OpFrame* f = ts.stack.push(p);
  if (f == nullptr || s.region < 0) return;
  if (fn.isAsync()) f->async_handle = fn.handle();
  f->reads_counters = worth_reading(state, ts, s, *f);
  if (f->reads_counters) {
    Session::enter(state, s.region);
  } else {
    observer::enter_time_only(state, s.region);
  }
  observer::note_threads(state, s.region, at::get_num_threads());
}

// What a forward call (or an op of a backward pass, a recompute, the setup) leaves for the
// backward pass: its outermost op, its module's call, and that op's backward by the op table.
void remember_forward(ThreadState& ts, const at::RecordFunction& fn, OpFrame& f, const OpFrame* parent, const Signature& s) noexcept {
  if (f.root == s.region && (parent == nullptr || parent->root < 0)) set_root_backward(f, ts.call, s);
  const ModuleFrame* m = ts.module_depth > 0 ? &ts.modules[ts.module_depth - 1] : nullptr;
  ForwardCall fc;
  fc.root = f.root;
  fc.module = m != nullptr ? m->module : -1;
  fc.module_call = m != nullptr ? m->call : 0;
  fc.root_call = f.root_call;
  fc.variant = f.root_variant;
  fc.backward_flops = f.root_backward_flops;
  fc.backward_bytes = f.root_backward_bytes;
  forward_calls.remember(fn.threadId(), fn.seqNr(), fc);
}

// A product run by the BLAS ran on the BLAS's threads where they were more than PyTorch's: so did
// every region open around it on this thread (ops, modules, the backward chain), whose rows are
// then placed under the calibration of that many threads (docs/torch.md, "Threads").
void note_blas_threads(Session::State* state, const ThreadState& ts, std::int64_t mnk) noexcept {
  const int threads = blas_threads(mnk);
  if (threads <= at::get_num_threads()) return;
  for (std::size_t i = 0; i < ts.stack.depth(); ++i) {
    if (const int region = ts.stack.at(i).region; region >= 0) observer::note_threads(state, region, threads);
  }
  for (std::size_t i = 0; i < ts.module_depth; ++i) {
    if (ts.modules[i].region >= 0) observer::note_threads(state, ts.modules[i].region, threads);
  }
  for (std::size_t i = 0; i < ts.chain_length; ++i) {
    if (ts.chain[i].region >= 0) observer::note_threads(state, ts.chain[i].region, threads);
  }
}

// An op or a user scope: its signature, its frame, and its region entered (reading counters
// where that costs little against it).
void start_call(Session::State* state, ThreadState& ts, const at::RecordFunction& fn, at::RecordScope scope, const char* name) {
  const bool setup = in_setup();
  const OpFrame* parent = ts.stack.top();
  const bool in_engine = parent != nullptr && parent->wrapper;  // the engine's wrapper, no function
  const CallKind kind = scope == at::RecordScope::USER_SCOPE               ? CallKind::user_scope
                        : in_engine && std::strcmp(name, "aten::sum") == 0 ? CallKind::engine_sum
                                                                           : CallKind::op;
  const bool recompute = directly_in_recompute(ts);
  const Phase phase = setup                                                                        ? Phase::setup
                      : recompute || (parent != nullptr && parent->recompute && !parent->backward) ? Phase::recompute
                      : parent != nullptr && parent->backward                                      ? Phase::backward
                                                                                                   : Phase::forward;
  if (kind == CallKind::user_scope) {
    ts.call.op = name;
    ts.call.arg_count = 0;
  } else {
    copy_aten_call(ts.call, fn);
  }
  Signature& s = signature(ts, kind, phase);
  FramePush p;
  // An op that runs itself again inside (an overload calling another: upsample_bilinear2d.vec
  // calls upsample_bilinear2d) is one call of one row.
  p.region = parent != nullptr && parent->region == s.region ? -1 : s.region;
  p.cost = s.has_cost ? &s.cost : nullptr;
  p.is_op = kind == CallKind::op || kind == CallKind::engine_sum;
  p.recompute = recompute;
  p.variant = s.variant;
  OpFrame* f = ts.stack.push(p);
  if (f == nullptr) return;
  if (fn.isAsync()) f->async_handle = fn.handle();
  if (p.region < 0) return;
  f->marks_step = s.marks_step;
  if (kind == CallKind::op && !s.has_cost) note_uncounted_call(state, s.region, f->covered);
  if (kind == CallKind::op && phase != Phase::backward && fn.seqNr() >= 0 && needs_grad(ts.call, parent)) remember_forward(ts, fn, *f, parent, s);
  f->reads_counters = worth_reading(state, ts, s, *f);
  if (f->reads_counters) {
    Session::enter(state, s.region);
  } else {
    observer::enter_time_only(state, s.region);
  }
  if (const int threads = at::get_num_threads(); threads != s.threads_noted) {
    observer::note_threads(state, s.region, threads);
    s.threads_noted = threads;
  }
  if (s.gemm_mnk > 0) note_blas_threads(state, ts, s.gemm_mnk);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  ThreadState& ts = thread_state;
  Session::State* const state = observing_state();
  if (state == nullptr) {
    push_placeholder(ts.stack, fn);
    return nullptr;
  }
  try {
    const at::RecordScope scope = fn.scope();
    const char* name = fn.name();
    const bool engine_wrapper = scope == at::RecordScope::FUNCTION && std::strncmp(name, kEngineWrapper.data(), kEngineWrapper.size()) == 0;
    // The thread's first call outside a backward pass closes the backward chain left open.
    if (ts.chain_length > 0 && ts.stack.depth() == 0 && !engine_wrapper && scope != at::RecordScope::BACKWARD_FUNCTION) close_from_base(ts, 0);
    if (engine_wrapper) {
      // The engine's wrapper around a backward function: no region; what runs in it is
      // backward (the function, and the gradient sums of a tensor used twice, aten::add).
      FramePush p;
      p.wrapper = true;
      p.backward_function = true;
      push_placeholder(ts.stack, fn, p);
    } else if (scope == at::RecordScope::BACKWARD_FUNCTION) {
      start_backward_function(state, ts, fn);
    } else {
      start_call(state, ts, fn, scope, name);
    }
  } catch (...) {
    // A call that cannot be read is not measured; its end still finds a frame.
    push_placeholder(ts.stack, fn);
  }
  return nullptr;
}

void mark_step_end() noexcept;

void leave_frame(Session::State* state, ThreadState& ts, const OpFrame* f, bool with_work) noexcept {
  if (f == nullptr) return;
  // A nested backward pass's chain (run inside this call) ends before it does.
  if (ts.chain_length > 0 && ts.chain[ts.chain_length - 1].base > ts.stack.depth()) close_from_base(ts, ts.stack.depth() + 1);
  if (f->region < 0) return;
  CallDetail detail;
  if (f->carries_work && with_work) {
    detail.flops = f->work.flops;
    detail.bytes = f->work.bytes;
  } else if (f->covered && f->is_op && with_work) {
    // Counted in the op around it: a call of its row with no work of its own, so that the row's
    // work per call is its work over all its calls, as its time is.
    detail.flops = 0.0;
  }
  detail.variant = f->variant;
  note_call_time(state, ts, *f, observer::leave(state, f->region, detail));
  if (f->marks_step) mark_step_end();
}

// An async call (a collective's work: RecordFunction::_setAsync) may end on another thread than
// it started on: its end is taken only on its own thread with its frame on top; an async frame
// left on top by such a call is closed when the call around it ends.
void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadState& ts = thread_state;
  OpStack& stack = ts.stack;
  Session::State* const state = session_state.load(std::memory_order_relaxed);
  const OpFrame* top = stack.top();
  if (fn.isAsync()) {
    if (top == nullptr || top->async_handle != fn.handle()) return;
  } else {
    while (top != nullptr && top->async_handle != 0) {
      leave_frame(state, ts, stack.pop(), false);
      top = stack.top();
    }
  }
  leave_frame(state, ts, stack.pop(), true);
}

// ---- steps ----

void forget_warmup() noexcept {
  if (warmup_done.exchange(true)) return;
  hwprof_reset();
}

void mark_step_end() noexcept {
  if (explicit_steps.load(std::memory_order_relaxed)) return;
  observer::mark_step(session_state.load(std::memory_order_relaxed));
  const std::uint64_t steps = optimizer_steps.fetch_add(1, std::memory_order_relaxed) + 1;
  if (warmup_steps > 0 && steps == warmup_steps) forget_warmup();
}

constexpr std::size_t kCallPathsPerThread = 8192;
constexpr std::size_t kTimelineCalls = 20000;

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
      if (const char* warmup = std::getenv("HWPROF_WARMUP_STEPS"); warmup != nullptr && *warmup != '\0') {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(warmup, &end, 10);
        if (end != nullptr && *end == '\0' && warmup[0] != '-' && n <= 1000000000ULL) {
          warmup_steps = n;
        } else {
          std::fprintf(stderr, "hwprof: HWPROF_WARMUP_STEPS=%.32s is not a number of steps (0 to 1e9): no warm-up is forgotten\n", warmup);
        }
      }
      // A model's modules and ops make thousands of distinct call paths per thread (resnet18's
      // training step about 700, mobilenet_v2's 2,100), and a module's row needs them all.
      detail::want_call_paths(kCallPathsPerThread);
      // A timeline of whole steps, the first and the last (trace.json), sized for a report of a
      // few megabytes (docs/torch.md, "Reports").
      detail::want_step_timeline(kTimelineCalls);
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

// ---- modules ----

// Ends the setup where the first module is called, and forgets the warm-up of a program that
// runs no optimizer at its outermost module's N+1-th call.
void before_module_call(Session::State* state, const ThreadState& ts) noexcept {
  if (!setup_over.load(std::memory_order_relaxed) && !setup_over.exchange(true)) observer::mark_step_start(state);
  if (ts.module_depth > 0 || ts.stack.depth() > 0) return;
  const std::uint64_t calls = root_module_calls.fetch_add(1, std::memory_order_relaxed) + 1;
  if (warmup_steps > 0 && calls == warmup_steps + 1 && optimizer_steps.load(std::memory_order_relaxed) == 0 &&
      !explicit_steps.load(std::memory_order_relaxed)) {
    forget_warmup();
  }
}

// The sequence numbers a module call took that no op of it recorded (a scripted graph's node, a
// custom autograd Function's) are the module's: their backward belongs to it.
void claim_sequence_numbers(ThreadState& ts, const ModuleFrame& m) noexcept {
  const std::uint64_t end = at::sequence_number::peek();
  const std::uint64_t begin = end - m.sequence > ForwardCalls::kSlots ? end - ForwardCalls::kSlots : m.sequence;
  ForwardCall fc;
  fc.module = m.module;
  fc.module_call = m.call;
  const std::uint64_t thread = this_thread_id(ts);
  for (std::uint64_t s = begin; s < end; ++s) forward_calls.remember_if_absent(thread, static_cast<std::int64_t>(s), fc);
}

}  // namespace
}  // namespace hwprof::pytorch

// The session's observer hooks, for the C entry points below.
namespace observer = hwprof::observer;

extern "C" int hwprof_torch_observing(void) {
  return hwprof::pytorch::registration.active ? 1 : 0;
}

extern "C" int hwprof_torch_module_region(const char* name, long long params) {
  using namespace hwprof::pytorch;
  using hwprof::Session;
  if (!registration.active || name == nullptr) return -1;
  Session::State* const state = observing_state();
  if (state == nullptr) return -1;
  modules_observed.store(true, std::memory_order_relaxed);
  const int region = Session::named_region(state, name);
  if (region < 0) return -1;
  observer::set_role(state, region, hwprof::RegionRole::module_forward);
  if (params >= 0) observer::set_params(state, region, params);
  if (params >= 0 && in_ids(region)) module_params[region].store(params + 1, std::memory_order_relaxed);
  try {
    remember_base_name(region, name);
  } catch (...) {
  }
  return region;
}

extern "C" void hwprof_torch_module_enter(int module) {
  using namespace hwprof::pytorch;
  using hwprof::Session;
  ThreadState& ts = thread_state;
  if (ts.module_depth >= ThreadState::kMaxModuleDepth) {
    ++ts.module_overflow;  // balanced by its exit; not measured
    return;
  }
  Session::State* const state = registration.active && module >= 0 ? session_state.load(std::memory_order_relaxed) : nullptr;
  ModuleFrame m;
  m.module = state != nullptr ? module : -1;
  // Called inside a backward function: a forward recomputed for the backward pass (activation
  // checkpointing), its own phase; the backward chain stays open around it.
  m.recompute = ts.stack.in_backward();
  if (!m.recompute && ts.chain_length > 0 && ts.stack.depth() == 0) close_from_base(ts, 0);
  if (state != nullptr) {
    before_module_call(state, ts);
    m.region = m.recompute ? derived_region(state, module_recompute, module, " (recompute)", hwprof::RegionRole::module_recompute) : module;
    if (in_ids(module) && module_parent[module].load(std::memory_order_relaxed) == 0) {
      // First entry: a module, under the module open around it.
      const int around = ts.module_depth > 0 ? ts.modules[ts.module_depth - 1].module : -1;
      module_parent[module].store(around + 2, std::memory_order_relaxed);
    }
    m.call = next_module_call.fetch_add(1, std::memory_order_relaxed);
    module_calls.remember(m.call, module, ts.module_depth > 0 ? ts.modules[ts.module_depth - 1].call : 0);
    m.op_depth = ts.stack.depth();
    m.sequence = at::sequence_number::peek();
  }
  ts.modules[ts.module_depth++] = m;  // region -1: not measured, still balanced
  if (m.region >= 0) {
    if (worth_reading_region(state, m.region)) {
      Session::enter(state, m.region);
    } else {
      observer::enter_time_only(state, m.region);
    }
    observer::note_threads(state, m.region, at::get_num_threads());
  }
}

extern "C" void hwprof_torch_module_exit(void) {
  using namespace hwprof::pytorch;
  using hwprof::Session;
  ThreadState& ts = thread_state;
  if (ts.module_overflow > 0) {
    --ts.module_overflow;
    return;
  }
  if (ts.module_depth == 0) return;
  const ModuleFrame m = ts.modules[--ts.module_depth];
  if (m.region < 0) return;
  claim_sequence_numbers(ts, m);
  Session::leave(session_state.load(std::memory_order_relaxed), m.region);
}

// The forms before modules had ids: the region looked up by name at each call.
extern "C" void hwprof_torch_module_begin(const char* name) {
  hwprof_torch_module_enter(hwprof_torch_module_region(name, -1));
}
extern "C" void hwprof_torch_module_end(void) {
  hwprof_torch_module_exit();
}

extern "C" void hwprof_torch_step(void) {
  using namespace hwprof::pytorch;
  if (!registration.active) return;
  explicit_steps.store(true, std::memory_order_relaxed);
  hwprof::observer::mark_step(session_state.load(std::memory_order_relaxed));
}

extern "C" void hwprof_torch_modules_observed(void) {
  using namespace hwprof::pytorch;
  if (registration.active) modules_observed.store(true, std::memory_order_relaxed);
}

extern "C" void hwprof_torch_setup_over(void) {
  using namespace hwprof::pytorch;
  if (!registration.active) return;
  if (!setup_over.exchange(true)) hwprof::observer::mark_step_start(session_state.load(std::memory_order_relaxed));
}

extern "C" long long hwprof_torch_observed_ops(void) {
  using namespace hwprof::pytorch;
  if (!registration.active || session_state.load(std::memory_order_relaxed) == nullptr) return 0;
  try {
    long long calls = 0;
    for (const hwprof::RegionReport& r : hwprof::default_session().report()) {
      const bool op = r.role == hwprof::RegionRole::op_forward || r.role == hwprof::RegionRole::op_backward ||
                      r.role == hwprof::RegionRole::op_recompute || r.role == hwprof::RegionRole::setup;
      calls += op ? static_cast<long long>(r.calls + r.continued) : 0;
    }
    return calls;
  } catch (...) {
    return -1;
  }
}
