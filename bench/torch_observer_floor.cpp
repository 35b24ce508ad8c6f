// Where the cost of observing a PyTorch op goes (docs/torch.md, "Overhead"): a loop of
// one-element in-place adds (`t.add_(one)`, one aten::add_ a call) timed in nanoseconds an op,
// the observer built up part by part:
//   none     no RecordFunction callback at all;
//   empty    a global callback that does nothing and asks for no inputs: libtorch's
//            RecordFunction around each op, the floor under any observer;
//   inputs   the same asking for inputs (needsInputs): libtorch then boxes every input of
//            every op into an IValue before the callback;
//   sizes    that, reading each input with hwprof's observer's own reader (src/torch/aten_inputs.cpp:
//            a tensor's sizes, elements, type and requires_grad; a list's items; a number's value);
//   session  that, entering and leaving one region of a time-only hwprof session per op;
//   counted  that, on a session of the default backend (auto: perf where it opens), whose
//            counters are read at enter and leave, as the observer does for an outermost op.
// Each callback is registered with the scopes hwprof's observer asks for, and removed after its
// loop; the modes run one after the other in each round, rounds repeated, all in this process.
//
// Started with hwprof's observer registered (HWPROF_BACKEND=timer: time only; HWPROF_OUTPUT=DIR
// alone: the default backend), the program times instead the same loop under hwprof's observer
// (`observer`), and a module region alone (`module`: hwprof_torch_module_begin/end pairs, what
// the Python package's hooks call for every module call). libhwprof-torch.so is this build's,
// or the one LD_LIBRARY_PATH names first. bench/torch_empty_observer.cpp is the `inputs`
// callback as a library a Python process loads.
//
//   hwprof_torch_observer_floor [--ops 200000] [--rounds 7] [--modes none,empty,...] [--json]
//
// --modes keeps the modes named (to profile one alone, e.g. under perf record).
// Prints, per mode, ns an op: the median over the rounds with the smallest and largest; --json
// prints the same as one JSON object (bench/torch_call_cost.py reads it).
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "hwprof/session.hpp"
#include "hwprof/torch.h"
#include "torch/aten_inputs.hpp"

namespace {

// ---- the callbacks, one per mode ----

// The observer's own reader of a call's inputs (src/torch/aten_inputs.cpp, built into this
// program), into a record of this thread's, as the observer's per-thread state holds one.
thread_local hwprof::pytorch::AtenCall call_read;
thread_local std::uint64_t callbacks = 0;  // counted by `sizes` and later modes only

void read_inputs(const at::RecordFunction& fn) {
  ++callbacks;
  hwprof::pytorch::copy_aten_call(call_read, fn);
}

std::unique_ptr<at::ObserverContext> start_nothing(const at::RecordFunction&) {
  return nullptr;
}
void end_nothing(const at::RecordFunction&, at::ObserverContext*) {}

std::unique_ptr<at::ObserverContext> start_sizes(const at::RecordFunction& fn) {
  read_inputs(fn);
  return nullptr;
}

// The session of the `session` or `counted` mode running now, and its one region.
hwprof::Session::State* session_state = nullptr;
int session_region = -1;

std::unique_ptr<at::ObserverContext> start_region(const at::RecordFunction& fn) {
  read_inputs(fn);
  hwprof::Session::enter(session_state, session_region);
  return nullptr;
}
void end_region(const at::RecordFunction&, at::ObserverContext*) {
  hwprof::Session::leave(session_state, session_region);
}

// ---- the loops ----

struct Options {
  std::size_t ops = 200000;
  std::size_t rounds = 7;
  std::string modes;  // comma-separated; empty: all
  bool json = false;
};

bool wanted(const Options& o, const char* mode) {
  if (o.modes.empty()) return true;
  const std::string list = "," + o.modes + ",";
  return list.find("," + std::string(mode) + ",") != std::string::npos;
}

// ns an op over one loop of `ops` adds.
double time_adds(at::Tensor& t, const at::Tensor& one, std::size_t ops) {
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < ops; ++i) t.add_(one);
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(ops);
}

// ns a pair over `pairs` hwprof_torch_module_begin/end pairs.
double time_module_regions(std::size_t pairs) {
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pairs; ++i) {
    hwprof_torch_module_begin("Identity");
    hwprof_torch_module_end();
  }
  const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
  return took.count() / static_cast<double>(pairs);
}

struct Mode {
  const char* name = nullptr;
  const char* what = nullptr;
  at::RecordFunctionCallback::StartCallback start = nullptr;  // nullptr: no callback
  at::RecordFunctionCallback::EndCallback end = nullptr;
  bool needs_inputs = false;
  hwprof::Session* session = nullptr;  // entered per op
  std::vector<double> ns;
  double callbacks_per_op = -1.0;  // < 0: not counted
};

Mode make_mode(const char* name, const char* what, at::RecordFunctionCallback::StartCallback start = nullptr,
               at::RecordFunctionCallback::EndCallback end = nullptr, bool needs_inputs = false, hwprof::Session* session = nullptr) {
  Mode m;
  m.name = name;
  m.what = what;
  m.start = start;
  m.end = end;
  m.needs_inputs = needs_inputs;
  m.session = session;
  return m;
}

at::RecordFunctionCallback callback_of(const Mode& m) {
  return at::RecordFunctionCallback(m.start, m.end)
      .needsInputs(m.needs_inputs)
      .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE});
}

void run_mode(Mode& m, at::Tensor& t, const at::Tensor& one, std::size_t ops) {
  if (m.session != nullptr) {
    session_state = m.session->state();
    session_region = m.session->region("aten::add_");
  }
  const at::CallbackHandle handle = m.start != nullptr ? at::addGlobalCallback(callback_of(m)) : 0;
  const std::uint64_t before = callbacks;
  m.ns.push_back(time_adds(t, one, ops));
  if (m.start == start_sizes || m.start == start_region) m.callbacks_per_op = static_cast<double>(callbacks - before) / static_cast<double>(ops);
  if (handle != 0) at::removeCallback(handle);
}

std::unique_ptr<hwprof::Session> open_session(hwprof::BackendKind backend, std::string& described) {
  hwprof::SessionOptions o;
  o.backend = backend;
  o.on_hint = [](const std::string&) {};
  auto opened = hwprof::Session::open(o);
  if (!opened) {
    described = "did not open";
    return nullptr;
  }
  std::unique_ptr<hwprof::Session> s = std::move(*opened);
  described = std::string(hwprof::backend_name(s->backend()));
  for (const hwprof::EventInfo& e : s->events()) {
    if (e.status == hwprof::CounterStatus::ok) described += (described.find(':') == std::string::npos ? ": " : ", ") + e.name;
  }
  return s;
}

// ---- output ----

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void print_text(const std::vector<Mode>& modes, const Options& o, const std::string& context) {
  std::printf("ns per one-element aten::add_ (t.add_(one)), %zu ops a loop; median over %zu rounds [smallest, largest]; %s\n", o.ops, o.rounds,
              context.c_str());
  for (const Mode& m : modes) {
    const auto [lo, hi] = std::minmax_element(m.ns.begin(), m.ns.end());
    std::printf("  %-9s %8.1f ns [%.1f, %.1f]", m.name, median(m.ns), *lo, *hi);
    if (m.callbacks_per_op >= 0.0) std::printf("  callbacks an op: %.2f", m.callbacks_per_op);
    std::printf("  %s\n", m.what);
  }
}

std::string json_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

void print_json(const std::vector<Mode>& modes, const Options& o, const std::string& context) {
  std::printf("{\"ops\": %zu, \"rounds\": %zu, \"context\": \"%s\", \"modes\": {", o.ops, o.rounds, json_escaped(context).c_str());
  for (std::size_t i = 0; i < modes.size(); ++i) {
    std::printf("%s\"%s\": {\"median_ns\": %.3f, \"ns\": [", i == 0 ? "" : ", ", modes[i].name, median(modes[i].ns));
    for (std::size_t r = 0; r < modes[i].ns.size(); ++r) std::printf("%s%.3f", r == 0 ? "" : ", ", modes[i].ns[r]);
    std::printf("], \"callbacks_per_op\": %.3f}", modes[i].callbacks_per_op);
  }
  std::printf("}}\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--ops") == 0 && has_value) {
      o.ops = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && has_value) {
      o.rounds = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--modes") == 0 && has_value) {
      o.modes = argv[++i];
    } else if (std::strcmp(argv[i], "--json") == 0) {
      o.json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--ops N] [--rounds N] [--modes A,B] [--json]\n", argv[0]);
      std::exit(2);
    }
  }
  if (o.ops == 0 || o.rounds == 0) {
    std::fprintf(stderr, "%s: --ops and --rounds must be at least 1\n", argv[0]);
    std::exit(2);
  }
  return o;
}

// The libhwprof-torch.so this process loaded: this build's, or LD_LIBRARY_PATH's.
std::string hwprof_library() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&hwprof_torch_observing), &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "(unknown)";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  at::Tensor t = at::zeros({1});
  const at::Tensor one = at::ones({1});
  std::vector<Mode> modes;
  std::string context = hwprof_library() + "; ";
  std::unique_ptr<hwprof::Session> timer;
  std::unique_ptr<hwprof::Session> counted;
  if (hwprof_torch_observing() != 0) {
    // hwprof's observer is registered (it stays): only what it does can be timed here.
    const char* backend = std::getenv("HWPROF_BACKEND");
    context += std::string("hwprof's observer registered, HWPROF_BACKEND=") + (backend != nullptr ? backend : "(unset: auto)");
    modes.push_back(make_mode("observer", "hwprof's observer (this process's backend)"));
    modes.push_back(make_mode("module", "a module region alone: hwprof_torch_module_begin + _end, ns a pair"));
  } else {
    std::string timer_said;
    std::string counted_said;
    timer = open_session(hwprof::BackendKind::timer, timer_said);
    counted = open_session(hwprof::BackendKind::automatic, counted_said);
    context += "hwprof's observer not registered; session: " + timer_said + "; counted: " + counted_said;
    modes.push_back(make_mode("none", "no callback"));
    modes.push_back(make_mode("empty", "a callback that does nothing, needsInputs(false)", start_nothing, end_nothing));
    modes.push_back(make_mode("inputs", "the same, needsInputs(true): inputs boxed", start_nothing, end_nothing, true));
    modes.push_back(make_mode("sizes", "that, reading each input (sizes, elements, type, requires_grad)", start_sizes, end_nothing, true));
    if (timer)
      modes.push_back(
          make_mode("session", "that, entering and leaving a region of a time-only session", start_region, end_region, true, timer.get()));
    if (counted) modes.push_back(make_mode("counted", "that, on a session of the default backend", start_region, end_region, true, counted.get()));
  }
  std::erase_if(modes, [&o](const Mode& m) { return !wanted(o, m.name); });
  time_adds(t, one, o.ops);  // warm-up: the first calls allocate, and register hwprof's regions
  for (std::size_t r = 0; r < o.rounds; ++r) {
    for (Mode& m : modes) {
      if (std::strcmp(m.name, "module") == 0) {
        m.ns.push_back(time_module_regions(o.ops));
      } else {
        run_mode(m, t, one, o.ops);
      }
    }
  }
  (o.json ? print_json : print_text)(modes, o, context);
  return 0;
}
