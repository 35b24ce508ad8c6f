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
import weakref

__all__ = ["profile", "install", "library_path"]

_state = {"lib": None, "installed": False, "names": {}}


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
    lib.hwprof_torch_module_region.argtypes = [ctypes.c_char_p, ctypes.c_longlong]
    lib.hwprof_torch_module_region.restype = ctypes.c_int
    lib.hwprof_torch_module_enter.argtypes = [ctypes.c_int]
    lib.hwprof_torch_module_enter.restype = None
    lib.hwprof_torch_module_exit.argtypes = []
    lib.hwprof_torch_module_exit.restype = None
    lib.hwprof_torch_step.argtypes = []
    lib.hwprof_torch_step.restype = None
    lib.hwprof_torch_modules_observed.argtypes = []
    lib.hwprof_torch_modules_observed.restype = None
    lib.hwprof_torch_setup_over.argtypes = []
    lib.hwprof_torch_setup_over.restype = None
    lib.hwprof_torch_observed_ops.argtypes = []
    lib.hwprof_torch_observed_ops.restype = ctypes.c_longlong
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
            names[id(sub)] = (f"{root}.{path}" if path else root, _reference(sub))
    name, known = names[key]
    if known() is not module:  # a module freed since, whose id a new one got: named afresh
        del names[key]
        return _name_of(module)
    return name


def _reference(module):
    """A weak reference to the module (a strong one where it takes none): the package keeps no
    module alive."""
    try:
        return weakref.ref(module)
    except TypeError:
        return lambda: module


def _describe(module):
    """(name, parameters) of a module at its first call: its path, and its parameters' elements,
    each shared parameter once (`parameters()` yields each tensor once)."""
    try:
        params = sum(p.numel() for p in module.parameters())
    except Exception:  # a module whose parameters() fails is still measured, its count unsaid
        params = -1
    return _name_of(module), params


def _python_call(lib, original):
    """Module.__call__ in Python, where the package's C part (_native) is not built: the same
    regions, at a higher cost per call."""
    regions = {}

    def __call__(self, *args, **kwargs):
        entry = regions.get(id(self))
        if entry is None or entry[1]() is not self:
            name, params = _describe(self)
            entry = regions[id(self)] = (lib.hwprof_torch_module_region(name.encode("utf-8", "replace"), params), _reference(self))
        lib.hwprof_torch_module_enter(entry[0])
        try:
            return original(self, *args, **kwargs)
        finally:
            lib.hwprof_torch_module_exit()

    return __call__


def install():
    """Loads the observer and wraps torch.nn.Module.__call__, so that every module call is a
    region around its hooks and forward (no model is changed). Safe to call more than once.
    Returns False when the observer is not observing (no HWPROF_OUTPUT, HWPROF_BACKEND,
    HWPROF_EVENTS or HWPROF_GROUP, or HWPROF_DISABLE)."""
    lib = _load()
    observing = bool(lib.hwprof_torch_observing())
    if observing and not _state["installed"]:
        from torch.nn.modules.module import Module
        original = Module.__call__
        try:
            from . import _native
            address = lambda f: ctypes.cast(f, ctypes.c_void_p).value  # noqa: E731
            wrapped = _native.wrap(Module, original, _describe, address(lib.hwprof_torch_module_region),
                                   address(lib.hwprof_torch_module_enter), address(lib.hwprof_torch_module_exit))
        except ImportError:
            wrapped = _python_call(lib, original)
        Module.__call__ = wrapped
        _state["installed"] = True
        lib.hwprof_torch_modules_observed()  # until the first module call: the program's setup
    return observing


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
        _state["lib"].hwprof_torch_setup_over()  # what ran before the block was setup
        return self

    def step(self):
        """Ends a training step; the measurements of the warm-up steps are forgotten when the
        last of them ends. Call it outside every module's forward."""
        self.steps += 1
        lib = _state["lib"]
        if lib is None:
            return
        lib.hwprof_torch_step()
        if self.steps == self.warmup:
            lib.hwprof_reset()

    def __exit__(self, *exc):
        lib = _state["lib"]
        if lib.hwprof_write(self.output.encode()) != 0:
            print(f"hwprof: {lib.hwprof_last_error().decode(errors='replace')}", file=sys.stderr)
        else:
            print(f"hwprof: wrote {self.output}/", file=sys.stderr)
        return False
