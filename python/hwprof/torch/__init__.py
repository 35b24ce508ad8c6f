"""Profile a PyTorch program with hwprof (docs/torch.md, "In Python").

Every module of the program becomes a region named by its path (`layer1.0.conv1`, as
`named_modules()` gives it) and every aten op run inside it a region nested in it, measured
by libhwprof-torch.so's op observer with its FLOPs and bytes from the op table of
`hwprof summary`. At exit (or at the end of a `profile` block) the reports are written like
`hwprof profile -o DIR`: profile.json, profile.txt, profile.csv, roofline.svg, trace.json and
report.html.

    python3 -m hwprof.torch -o out train.py --epochs 1      # an unmodified script

    import hwprof.torch
    with hwprof.torch.profile(output="out"):
        train()

The library is found through HWPROF_TORCH_LIBRARY, else where the build or the install put
it (hwprof/torch/_library.py, written by CMake).
"""

import ctypes
import os
import sys
import threading

__all__ = ["profile", "install", "library_path"]

_state = {"lib": None, "hooks": None, "names": {}}
# Per thread, the call frames (Module._call_impl's) of the modules open on it, innermost last.
_open = threading.local()


def _paths():
    try:
        from . import _library  # written by CMake into the build tree and the install
        return _library
    except ImportError:
        return None


def library_path():
    """Where libhwprof-torch.so is: HWPROF_TORCH_LIBRARY, else the path CMake wrote."""
    named = os.environ.get("HWPROF_TORCH_LIBRARY")
    if named:
        return named
    paths = _paths()
    if paths is None:
        raise RuntimeError("hwprof.torch: libhwprof-torch.so not found: set HWPROF_TORCH_LIBRARY to its path, or use the "
                           "package from hwprof's build tree (PYTHONPATH=BUILD/python) or install")
    return paths.path()


def _load():
    if _state["lib"] is not None:
        return _state["lib"]
    import torch  # noqa: F401  (libtorch first: the observer registers in the process's libtorch)
    path = library_path()
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise RuntimeError(f"hwprof.torch: cannot load {path}: {e}") from None
    lib.hwprof_torch_module_begin.argtypes = [ctypes.c_char_p]
    lib.hwprof_torch_module_begin.restype = None
    lib.hwprof_torch_module_end.argtypes = []
    lib.hwprof_torch_module_end.restype = None
    lib.hwprof_write.argtypes = [ctypes.c_char_p]
    lib.hwprof_write.restype = ctypes.c_int
    lib.hwprof_last_error.restype = ctypes.c_char_p
    lib.hwprof_torch_observing.restype = ctypes.c_int
    lib.hwprof_reset.argtypes = []
    lib.hwprof_reset.restype = None
    # From the build tree, the report module is the build's (installed, the library finds it
    # beside itself); HWPROF_REPORT_MODULE still wins.
    paths = _paths()
    module = paths.report_module() if paths is not None and hasattr(paths, "report_module") else None
    if module and not os.environ.get("HWPROF_REPORT_MODULE"):
        lib.hwprof_set_report_module.argtypes = [ctypes.c_char_p]
        lib.hwprof_set_report_module(module.encode())
    _state["lib"] = lib
    return lib


def _name_of(module):
    """The module's path in its model (`layer1.0.conv1`); the model itself by its class."""
    names = _state["names"]
    key = id(module)
    if key not in names:
        # A module not seen inside a known model is a model (or used on its own): name it and
        # everything under it, once.
        root = type(module).__name__
        for path, sub in module.named_modules():
            names.setdefault(id(sub), f"{root}.{path}" if path else root)
    return names[key]


def _open_frames():
    frames = getattr(_open, "frames", None)
    if frames is None:
        frames = _open.frames = []
    return frames


def _end_raised(frames, call):
    """Ends the open modules whose call is no longer running: their forward raised, and Python
    runs no forward hook after an exception. A module still running is an ancestor of `call`
    (the new module's call frame), a few frames up; only after a raise is the whole stack walked."""
    f = call.f_back
    while f is not None:
        if f is frames[-1]:
            return
        f = f.f_back
    running = set()
    f = call.f_back
    while f is not None:
        running.add(id(f))
        f = f.f_back
    while frames and id(frames[-1]) not in running:
        frames.pop()
        _state["lib"].hwprof_torch_module_end()


def _pre_hook(module, inputs):
    frames = _open_frames()
    call = sys._getframe(1)  # Module._call_impl of this module
    if frames:
        _end_raised(frames, call)
    frames.append(call)
    _state["lib"].hwprof_torch_module_begin(_name_of(module).encode("utf-8", "replace"))


def _post_hook(module, inputs, output):
    frames = _open_frames()
    call = sys._getframe(1)
    if frames and frames[-1] is not call and any(f is call for f in frames):
        # The modules above it raised inside it and were caught there: they end with it.
        while frames[-1] is not call:
            frames.pop()
            _state["lib"].hwprof_torch_module_end()
    if frames and frames[-1] is call:
        frames.pop()
    _state["lib"].hwprof_torch_module_end()


def install():
    """Loads the observer and hooks every module's forward (global hooks: no model is
    changed). Safe to call more than once. Returns False when the observer is not observing
    (no HWPROF_OUTPUT, HWPROF_BACKEND, HWPROF_EVENTS or HWPROF_GROUP, or HWPROF_DISABLE)."""
    lib = _load()
    if _state["hooks"] is None:
        from torch.nn.modules import module as torch_module
        _state["hooks"] = (torch_module.register_module_forward_pre_hook(_pre_hook),
                           torch_module.register_module_forward_hook(_post_hook))
    return bool(lib.hwprof_torch_observing())


class profile:
    """`with hwprof.torch.profile(output="DIR"):` — the block's modules and ops, written to DIR
    when the block ends (and nothing written at exit for them again).

    In a training loop, call `step()` at the end of each step (as torch.profiler's): the first
    `warmup` steps (default 1: the first step allocates, and PyTorch picks its kernels) are
    forgotten when they end, so that every row's statistics are over the steps after them."""

    def __init__(self, output="hwprof-torch", backend=None, events=None, group=None, warmup=1):
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError(f"hwprof.torch.profile: warmup must be a whole number of steps >= 0, not {warmup!r}")
        self.warmup = warmup
        self.steps = 0
        self.output = output
        self.settings = {"HWPROF_BACKEND": backend, "HWPROF_EVENTS": ",".join(events) if events else None,
                         "HWPROF_GROUP": group}

    def __enter__(self):
        for key, value in self.settings.items():
            if value is not None:
                os.environ[key] = value
        os.environ.setdefault("HWPROF_BACKEND", "auto")  # asks the observer to observe
        install()
        return self

    def step(self):
        """Ends a training step; the measurements of the warm-up steps are forgotten when the
        last of them ends. Call it outside every module's forward."""
        self.steps += 1
        if self.steps == self.warmup and _state["lib"] is not None:
            _state["lib"].hwprof_reset()

    def __exit__(self, *exc):
        lib = _state["lib"]
        if lib.hwprof_write(self.output.encode()) != 0:
            print(f"hwprof: {lib.hwprof_last_error().decode(errors='replace')}", file=sys.stderr)
        else:
            print(f"hwprof: wrote {self.output}/", file=sys.stderr)
        return False
