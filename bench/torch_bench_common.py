"""What bench/torch_overhead.py and bench/torch_call_cost.py share: which hwprof.torch they run
(a build's, or the library HWPROF_TORCH_LIBRARY names), the environment of their child
processes, running one child and reading its result, the machine they ran on, and the verdict
of a figure against its goal given the noise of the plain runs."""
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"

# glibc's malloc moves a step by tens of percent with each allocation pattern (page faults as
# freed memory is given back and taken again), with or without a profiler: every child runs
# with these thresholds set high, as docs/torch.md advises, unless the caller keeps them.
HIGH_MALLOC_THRESHOLDS = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824"}

# The variables that choose hwprof.torch's library and report module, kept for the children.
LIBRARY_VARIABLES = ("HWPROF_TORCH_LIBRARY", "HWPROF_REPORT_MODULE")


class Hwprof:
    """The hwprof.torch a benchmark runs: its Python package and its library. The package is
    the build's (BUILD/python) where the build has one, else the source tree's (python/); the
    library is HWPROF_TORCH_LIBRARY's where that is set, else the build's."""

    def __init__(self, build):
        build_python = os.path.abspath(os.path.join(build, "python"))
        self.library = os.environ.get("HWPROF_TORCH_LIBRARY")
        if os.path.isdir(os.path.join(build_python, "hwprof")):
            self.python = build_python
        elif self.library:
            self.python = os.path.join(REPO, "python")
        else:
            sys.exit(f"{build_python}/hwprof not found: build hwprof (with libtorch-dev) first, or set HWPROF_TORCH_LIBRARY "
                     "(and HWPROF_REPORT_MODULE) to a built library")
        self.report_module = os.environ.get("HWPROF_REPORT_MODULE")
        self.build = os.path.abspath(build)

    def describe(self):
        library = f"{self.library} (HWPROF_TORCH_LIBRARY)" if self.library else f"the build's ({self.build})"
        module = f", report module {self.report_module} (HWPROF_REPORT_MODULE)" if self.report_module else ""
        return f"hwprof.torch: package {self.python}, library {library}{module}"


def child_env(keep_malloc, hwprof=None):
    """The environment of a child: no HWPROF_* variable but those naming the library (so that
    hwprof's observer registers only where the child asks for it), hwprof's package on the path
    where given, glibc's malloc thresholds high unless kept."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HWPROF_") or k in LIBRARY_VARIABLES}
    if not keep_malloc:
        env.update(HIGH_MALLOC_THRESHOLDS)
    if hwprof is not None:
        env["PYTHONPATH"] = hwprof.python + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def ask_observer(env, backend, output):
    """Asks hwprof's observer to register in a child started with `env` and to write `output`
    at its exit, as `python3 -m hwprof.torch -o output` does: time only for backend "timer",
    the default backend (auto) otherwise."""
    env["HWPROF_OUTPUT"] = output
    if backend == "timer":
        env["HWPROF_BACKEND"] = "timer"


def run_child(command, env, what):
    """Runs one child; its result is the JSON object on the last line of its stdout."""
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {what}: exit {run.returncode}: {run.stderr[-3000:]}")
    return json.loads(lines[-1])


def under_hwprof(hwprof, output, backend, script, args):
    """The command that runs `script args` under `python3 -m hwprof.torch`, as a user would:
    time only (backend "timer") or the default backend (None: no --backend, "auto")."""
    command = [PYTHON, "-m", "hwprof.torch", "-o", output]
    if backend is not None:
        command += ["--backend", backend]
    return command + [script, *args]


def blas_in_process():
    """The OpenBLAS this process loaded (torch's matrix products): its version and the kernel
    it chose, with OPENBLAS_CORETYPE where set; None when no OpenBLAS is loaded."""
    import ctypes
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "openblas" in line and line.split()[-1].startswith("/")})
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_corename.restype = ctypes.c_char_p
            lib.openblas_get_config.restype = ctypes.c_char_p
            config = lib.openblas_get_config().decode().split()
            core = lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
        forced = os.environ.get("OPENBLAS_CORETYPE")
        return f"{config[0]} {config[1]}, kernel {core}" + (f" (OPENBLAS_CORETYPE={forced})" if forced else " (chosen at run time)")
    return None


def machine_in_process():
    """Torch's version and threads, the cores, and the BLAS of this process."""
    import torch
    blas = blas_in_process()
    return (f"torch {torch.__version__}, {torch.get_num_threads()} intra-op thread(s), {os.cpu_count()} cores; "
            f"BLAS: {blas if blas else 'no OpenBLAS loaded'}")


def noise_of(values):
    """The noise of a configuration's rounds, relative to their median: half their range, without
    the fastest and the slowest where there are 5 rounds or more (on a shared machine one round
    in five can run at a third of the speed, and would otherwise hide every difference)."""
    middle = statistics.median(values)
    kept = sorted(values)[1:-1] if len(values) >= 5 else values
    return (max(kept) - min(kept)) / 2 / middle if middle else 0.0


def verdict(value, goal, noise):
    """`value` against an upper `goal`, given the noise of the runs it was measured in: "meets"
    only where value + noise is within the goal, "MISSES" only where value - noise is above it,
    else "inside the noise"."""
    if value + noise <= goal:
        return "meets"
    if value - noise > goal:
        return "MISSES"
    return "inside the noise"
