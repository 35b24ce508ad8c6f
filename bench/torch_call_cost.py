#!/usr/bin/env python3
"""Where hwprof.torch's cost per observed op and per module call goes (docs/torch.md,
"Overhead"), part by part, so that what libtorch puts under any observer is told apart from
what is hwprof's own.

Per op, in C++ (bench/torch_observer_floor.cpp: one-element add_ ops, ns an op): no observer;
libtorch's RecordFunction with a callback that does nothing; the inputs boxed for it
(needsInputs); the inputs read as hwprof's observer reads them; a time-only session region
entered and left per op; the same on a session of the default backend (its counter reads); and
hwprof's observer itself, time only and with the default backend (processes of their own).

Per module call, in Python (an nn.Identity called over and over, ns a call): plain; with
empty global forward pre- and post-hooks (torch.nn.modules.module's); with torch.nn.Module's
__call__ replaced by a Python function that calls the original; with that function calling
hwprof_torch_module_begin/_end through ctypes around the call; the ctypes pair alone; and under
`python3 -m hwprof.torch` (its hooks), time only and with the default backend. The C side of
the pair is timed in C++ (the floor program's `module`).

Each child is a process; a round runs each once, rounds interleave; inside a process the
variants alternate within each of its own rounds. Figures: the median over the rounds of each
process's median, with the smallest and largest of those rounds.

  bench/torch_call_cost.py [--rounds 5] [--calls 200000] [--build build/release]
  HWPROF_TORCH_LIBRARY=/work/baseline/libhwprof-torch.so.0.1.0 \\
    HWPROF_REPORT_MODULE=/work/baseline/libhwprof-report.so bench/torch_call_cost.py

With HWPROF_TORCH_LIBRARY set, the C++ program loads that library (LD_LIBRARY_PATH is set to
its folder; the program prints the path it loaded). No figure is asserted.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import tempfile
import time

import torch_bench_common as common

FLOOR_PROGRAM = "hwprof_torch_observer_floor"

# The Python children: what each runs, and how it is started.
#   plain     no hwprof: the hook and wrapper variants
#   ctypes    libhwprof-torch.so loaded (the observer registered, no hooks): the ctypes variants
#   hooks     under python3 -m hwprof.torch: its hooks
MODULE_CHILDREN = (("plain", None), ("ctypes", "timer"), ("ctypes", "default"), ("hooks", "timer"), ("hooks", "default"))


# ---- the Python child: module-call variants, ns a call ----

def identity_loop(calls):
    import torch
    identity, tiny = torch.nn.Identity(), torch.zeros(1)

    def loop():
        start = time.perf_counter()
        for _ in range(calls):
            identity(tiny)
        return (time.perf_counter() - start) * 1e9 / calls
    return loop


class EmptyHooks:
    """Global forward pre- and post-hooks that do nothing: Module._call_impl's slow path."""

    def __enter__(self):
        from torch.nn.modules import module
        self.handles = (module.register_module_forward_pre_hook(lambda m, i: None),
                        module.register_module_forward_hook(lambda m, i, o: None))

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


class CallWrapper:
    """torch.nn.Module.__call__ replaced by a Python function that calls the original, with
    `around` (begin, end) called before and after it where given."""

    def __init__(self, around=None):
        self.around = around

    def __enter__(self):
        import torch
        self.original = original = torch.nn.Module.__call__
        if self.around is None:
            def call(module, *args, **kwargs):
                return original(module, *args, **kwargs)
        else:
            begin, end = self.around

            def call(module, *args, **kwargs):
                begin(b"Identity")
                try:
                    return original(module, *args, **kwargs)
                finally:
                    end()
        torch.nn.Module.__call__ = call

    def __exit__(self, *exc):
        import torch
        torch.nn.Module.__call__ = self.original


class Nothing:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


def hwprof_library():
    """libhwprof-torch.so loaded as the package loads it (after libtorch: the caller imported
    torch), its module pair declared."""
    import hwprof.torch
    lib = ctypes.CDLL(hwprof.torch.library_path(), mode=ctypes.RTLD_GLOBAL)
    lib.hwprof_torch_module_begin.argtypes = [ctypes.c_char_p]
    lib.hwprof_torch_module_begin.restype = None
    lib.hwprof_torch_module_end.argtypes = []
    lib.hwprof_torch_module_end.restype = None
    lib.hwprof_torch_observing.restype = ctypes.c_int
    return lib


def ctypes_pair_loop(lib, calls):
    begin, end = lib.hwprof_torch_module_begin, lib.hwprof_torch_module_end

    def loop():
        start = time.perf_counter()
        for _ in range(calls):
            begin(b"Identity")
            end()
        return (time.perf_counter() - start) * 1e9 / calls
    return loop


def child_variants(kind, calls):
    """{name: (context manager, loop)} for one kind of child."""
    identity = identity_loop(calls)  # imports torch: libtorch is loaded before hwprof's library
    if kind == "plain":
        return {"plain": (Nothing(), identity), "empty hooks": (EmptyHooks(), identity), "wrapper": (CallWrapper(), identity)}
    if kind == "ctypes":
        lib = hwprof_library()
        if not lib.hwprof_torch_observing():
            sys.exit("libhwprof-torch.so is not observing")
        around = (lib.hwprof_torch_module_begin, lib.hwprof_torch_module_end)
        return {"plain": (Nothing(), identity), "ctypes pair": (Nothing(), ctypes_pair_loop(lib, calls)),
                "wrapper+ctypes": (CallWrapper(around), identity)}
    import hwprof.torch
    if not hwprof.torch.install():  # already installed by the launcher: says whether it observes
        sys.exit("hwprof.torch is not observing")
    return {"hooks": (Nothing(), identity)}


def child(argv):
    kind, calls, rounds = argv[0], int(argv[1]), int(argv[2])
    variants = child_variants(kind, calls)
    for manager, loop in variants.values():  # warm-up: first calls, and hwprof's regions registered
        with manager:
            loop()
    ns = {name: [] for name in variants}
    for _ in range(rounds):
        for name, (manager, loop) in variants.items():
            with manager:
                ns[name].append(loop())
    print(json.dumps({"variants": {name: statistics.median(v) for name, v in ns.items()}}))


# ---- the driver ----

def floor_env(options, hwprof, backend, output):
    """The C++ program's environment: hwprof's observer registered only for `backend`
    ("timer", "default"; None: not registered), the library HWPROF_TORCH_LIBRARY names first."""
    env = common.child_env(options.keep_malloc)
    if hwprof.library:
        env["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(hwprof.library)) + (
            os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    if backend is not None:
        common.ask_observer(env, backend, output)
    return env


def run_floor(options, hwprof, backend, output):
    program = os.path.join(hwprof.build, "bin", FLOOR_PROGRAM)
    command = [program, "--ops", str(options.calls), "--rounds", str(options.inner_rounds), "--json"]
    result = common.run_child(command, floor_env(options, hwprof, backend, output), f"{FLOOR_PROGRAM}, observer {backend}")
    return {name: m["median_ns"] for name, m in result["modes"].items()}, result["context"]


def run_module_child(options, hwprof, kind, backend, output):
    script = os.path.abspath(__file__)
    args = ["--child", kind, str(options.calls), str(options.inner_rounds)]
    env = common.child_env(options.keep_malloc, hwprof)
    if kind == "hooks":
        command = common.under_hwprof(hwprof, output, "timer" if backend == "timer" else None, script, args)
    else:
        command = [common.PYTHON, script, *args]
        if kind == "ctypes":
            common.ask_observer(env, backend, output)
    return common.run_child(command, env, f"{kind}, {backend}")["variants"]


def run_rounds(options, hwprof):
    """ns[(child, variant)]: one figure a round; contexts: what each floor process loaded."""
    ns, contexts = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(options.rounds):
            for backend in (None, "timer", "default"):
                modes, contexts[backend] = run_floor(options, hwprof, backend, os.path.join(tmp, f"floor-{r}-{backend}"))
                for name, value in modes.items():
                    ns.setdefault((f"C++ {backend or 'no observer'}", name), []).append(value)
            for kind, backend in MODULE_CHILDREN:
                variants = run_module_child(options, hwprof, kind, backend, os.path.join(tmp, f"{kind}-{r}-{backend}"))
                for name, value in variants.items():
                    ns.setdefault((f"{kind} {backend or ''}".strip(), name), []).append(value)
            print(f"round {r + 1} of {options.rounds} done", file=sys.stderr)
    return ns, contexts


class Figures:
    """Medians over the rounds, with the smallest and largest round, in ns."""

    def __init__(self, ns):
        self.ns = ns

    def __call__(self, child, variant):
        return statistics.median(self.ns[(child, variant)])

    def cell(self, child, variant):
        v = self.ns[(child, variant)]
        return f"{self(child, variant):8.1f} ns [{min(v):.1f}, {max(v):.1f}]"


def print_op_split(f):
    none = ("C++ no observer", "none")

    def floor(mode):
        return f("C++ no observer", mode)
    rows = [
        ("plain op (no observer)", *none, None),
        ("+ libtorch RecordFunction, callback doing nothing", "C++ no observer", "empty", "none"),
        ("+ inputs boxed for it (needsInputs)", "C++ no observer", "inputs", "empty"),
        ("+ each input read (sizes, as copy_call)", "C++ no observer", "sizes", "inputs"),
        ("+ a time-only session region entered and left", "C++ no observer", "session", "sizes"),
        ("+ counters read at enter and leave (default backend)", "C++ no observer", "counted", "session"),
    ]
    print("per op, C++ (one-element add_), ns an op: median over the rounds [smallest, largest], and the step from the row above")
    for label, child, mode, before in rows:
        step = "" if before is None else f"  {floor(mode) - floor(before):+8.1f}"
        print(f"  {label:<58} {f.cell(child, mode)}{step}")
    timer, default = f("C++ timer", "observer"), f("C++ default", "observer")
    print(f"  {'hwprof observer, time only':<58} {f.cell('C++ timer', 'observer')}  {timer - f(*none):+8.1f} over plain; "
          f"{timer - floor('session'):+.1f} over the time-only floor above (hwprof's own work)")
    print(f"  {'hwprof observer, default backend':<58} {f.cell('C++ default', 'observer')}  {default - f(*none):+8.1f} over plain; "
          f"{default - timer:+.1f} over time only (its counter reads)")


def print_module_split(f):
    plain = f("plain", "plain")
    print("per module call, Python (nn.Identity), ns a call: median over the rounds [smallest, largest], and over plain")
    rows = [
        ("plain", "plain", "plain"),
        ("empty global forward pre/post hooks", "plain", "empty hooks"),
        ("Python wrapper of Module.__call__", "plain", "wrapper"),
        ("hwprof.torch's hooks, time only", "hooks timer", "hooks"),
        ("hwprof.torch's hooks, default backend", "hooks default", "hooks"),
        ("Python wrapper + ctypes module_begin/end, time only", "ctypes timer", "wrapper+ctypes"),
        ("Python wrapper + ctypes module_begin/end, default", "ctypes default", "wrapper+ctypes"),
    ]
    for label, child, variant in rows:
        print(f"  {label:<58} {f.cell(child, variant)}  {f(child, variant) - plain:+8.1f}")
    for backend, cpp in (("timer", "C++ timer"), ("default", "C++ default")):
        pair, c_pair = f(f"ctypes {backend}", "ctypes pair"), f(cpp, "module")
        hooks = f(f"hooks {backend}", "hooks") - plain
        hook_machinery = f("plain", "empty hooks") - plain
        print(f"  {backend}: module_begin/end pair from Python via ctypes {pair:.1f} ns = {c_pair:.1f} in C (the module region) + "
              f"{pair - c_pair:.1f} ctypes; hwprof's hooks +{hooks:.1f} = {hook_machinery:.1f} hook machinery + {pair:.1f} ctypes pair + "
              f"{hooks - hook_machinery - pair:.1f} the hooks' own Python")


def parse_options():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[1:]))
    parser.add_argument("--rounds", type=int, default=5, help="processes of each kind, interleaved")
    parser.add_argument("--inner-rounds", type=int, default=5, help="rounds of the variants inside each process")
    parser.add_argument("--calls", type=int, default=200000, help="calls a loop")
    parser.add_argument("--build", default="build/release", help="the build tree (its bin/ holds the C++ program, its python/ the package)")
    parser.add_argument("--keep-malloc", action="store_true", help="glibc's malloc settings as the environment has them")
    options = parser.parse_args()
    if min(options.rounds, options.inner_rounds, options.calls) < 1:
        parser.error("--rounds, --inner-rounds and --calls must be at least 1")
    return options


def main():
    options = parse_options()
    hwprof = common.Hwprof(options.build)
    if not os.path.exists(os.path.join(hwprof.build, "bin", FLOOR_PROGRAM)):
        sys.exit(f"{hwprof.build}/bin/{FLOOR_PROGRAM} not found: cmake --build --preset release --target {FLOOR_PROGRAM} "
                 "(built when libtorch is found and benchmarks are on)")
    ns, contexts = run_rounds(options, hwprof)
    print(hwprof.describe())
    for backend, context in contexts.items():
        print(f"C++ program, observer {backend or 'not registered'}: {context}")
    print(f"{options.rounds} rounds of one process each, {options.inner_rounds} rounds of {options.calls:,} calls inside each")
    f = Figures(ns)
    print_op_split(f)
    print_module_split(f)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    else:
        main()
