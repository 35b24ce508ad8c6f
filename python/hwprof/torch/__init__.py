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
it (hwprof/torch/_library.py, written by CMake), else by its name in the lib folders of the
package's prefix and the system's (hwprof/torch/_locate.py).
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from .. import __version__
from ._environment import EnvironmentChange
from ._identity_map import WeakIdentityMap
from ._locate import LibraryNotFound, Location, locate_here
from ._module_names import Module, ModuleNames, parameter_count

__all__ = ["profile", "install", "library_path", "LibraryNotFound"]

# The library's functions the package calls: name -> (argument types, result type).
_SIGNATURES: dict[str, tuple[list[Any], Any]] = {
    "hwprof_torch_module_region": ([ctypes.c_char_p, ctypes.c_longlong], ctypes.c_int),
    "hwprof_torch_module_enter": ([ctypes.c_int], None),
    "hwprof_torch_module_exit": ([], None),
    "hwprof_torch_step": ([], None),
    "hwprof_torch_modules_observed": ([], None),
    "hwprof_torch_setup_over": ([], None),
    "hwprof_torch_observed_ops": ([], ctypes.c_longlong),
    "hwprof_torch_observing": ([], ctypes.c_int),
    "hwprof_write": ([ctypes.c_char_p], ctypes.c_int),
    "hwprof_last_error": ([], ctypes.c_char_p),
    "hwprof_reset": ([], None),
}


@dataclass
class _State:
    lib: ctypes.CDLL | None = None
    installed: bool = False


_state = _State()
_names = ModuleNames()


def _locate() -> Location:
    return locate_here(__version__)


def library_path() -> str:
    """Where libhwprof-torch.so is: HWPROF_TORCH_LIBRARY, else the path CMake wrote, else the
    first lib folder that has it. Raises LibraryNotFound naming the places tried."""
    return _locate().library


def _import_torch() -> None:
    import torch  # noqa: F401  (libtorch first: the observer registers in the process's libtorch)


def _open(path: str) -> ctypes.CDLL:
    return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


def _load() -> ctypes.CDLL:
    """The library, loaded once (after torch) with its functions' types set."""
    if _state.lib is not None:
        return _state.lib
    _import_torch()
    location = _locate()
    try:
        lib = _open(location.library)
    except OSError as e:
        raise RuntimeError(f"hwprof.torch: cannot load {location.library} (from {location.source}): {e}") from None
    for name, (arguments, result) in _SIGNATURES.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = result
    # From the build tree, the report module is the build's (installed, the library finds it
    # beside itself); HWPROF_REPORT_MODULE still wins.
    if location.report_module and not os.environ.get("HWPROF_REPORT_MODULE"):
        lib.hwprof_set_report_module.argtypes = [ctypes.c_char_p]
        lib.hwprof_set_report_module.restype = None
        lib.hwprof_set_report_module(os.fsencode(location.report_module))
    _state.lib = lib
    return lib


def _name_of(module: Module) -> str:
    """The module's path in its model (`layer1.0.conv1`); the model itself by its class."""
    return _names.name_of(module)


def _describe(module: Module) -> tuple[str, int]:
    """(name, parameters) of a module at its first call: its path, and its parameters' elements,
    each shared parameter once (-1 where they cannot be counted). hwprof.torch._native calls it."""
    return _name_of(module), parameter_count(module)


def _python_call(lib: ctypes.CDLL, original: Callable[..., Any]) -> Callable[..., Any]:
    """Module.__call__ in Python, where the package's C part (_native) is not built: the same
    regions, at a higher cost per call. A module's region is remembered while it lives."""
    regions: WeakIdentityMap[int] = WeakIdentityMap()

    def __call__(self: Module, *args: Any, **kwargs: Any) -> Any:
        region = regions.get(self)
        if region is None:
            name, params = _describe(self)
            region = lib.hwprof_torch_module_region(name.encode("utf-8", "replace"), params)
            regions.set(self, region)
        lib.hwprof_torch_module_enter(region)
        try:
            return original(self, *args, **kwargs)
        finally:
            lib.hwprof_torch_module_exit()

    return __call__


def _native_call(lib: ctypes.CDLL, module_type: type, original: Callable[..., Any]) -> Callable[..., Any] | None:
    """Module.__call__ in C (hwprof.torch._native, src/torch/python_calls.cpp), or None where
    it is not built."""
    try:
        from . import _native
    except ImportError:
        return None

    def address(function: Any) -> int:
        return ctypes.cast(function, ctypes.c_void_p).value or 0

    return _native.wrap(module_type, original, _describe, address(lib.hwprof_torch_module_region),
                        address(lib.hwprof_torch_module_enter), address(lib.hwprof_torch_module_exit))


def install() -> bool:
    """Loads the observer and wraps torch.nn.Module.__call__, so that every module call is a
    region around its hooks and forward (no model is changed). Safe to call more than once.
    Returns False when the observer is not observing (no HWPROF_OUTPUT, HWPROF_BACKEND,
    HWPROF_EVENTS or HWPROF_GROUP, or HWPROF_DISABLE)."""
    lib = _load()
    observing = bool(lib.hwprof_torch_observing())
    if observing and not _state.installed:
        from torch.nn.modules.module import Module as TorchModule
        original = TorchModule.__call__
        wrapped = _native_call(lib, TorchModule, original) or _python_call(lib, original)
        TorchModule.__call__ = wrapped
        _state.installed = True
        lib.hwprof_torch_modules_observed()  # until the first module call: the program's setup
    return observing


class profile:
    """`with hwprof.torch.profile(output="DIR"):` — the block's modules and ops, written to DIR
    when the block ends (and nothing written at exit for them again).

    In a training loop, call `step()` at the end of each step (as torch.profiler's): the first
    `warmup` steps (default 1: the first step allocates, and PyTorch picks its kernels) are
    forgotten when they end, so that every row's statistics are over the steps after them.

    The block sets HWPROF_BACKEND (`backend`, else "auto" where unset: it asks the observer to
    observe), HWPROF_EVENTS (`events`: a list, or one comma-separated string) and HWPROF_GROUP
    (`group`) for the library, which reads them when it loads; when the block ends, however it
    ends, the environment is as it was before."""

    def __init__(self, output: str | os.PathLike[str] = "hwprof-torch", backend: str | None = None,
                 events: str | Sequence[str] | None = None, group: str | None = None, warmup: int = 1) -> None:
        if not isinstance(warmup, int) or isinstance(warmup, bool) or warmup < 0:
            raise ValueError(f"hwprof.torch.profile: warmup must be a whole number of steps >= 0, not {warmup!r}")
        self.warmup = warmup
        self.steps = 0
        self.output = os.fspath(output)
        joined = events if isinstance(events, str) or events is None else ",".join(events)
        self.settings: dict[str, str | None] = {"HWPROF_BACKEND": backend, "HWPROF_EVENTS": joined or None,
                                                "HWPROF_GROUP": group}
        self._environment = EnvironmentChange()

    def __enter__(self) -> Self:
        self._environment.set(self.settings)
        self._environment.set_default("HWPROF_BACKEND", "auto")  # asks the observer to observe
        try:
            install()
            _loaded().hwprof_torch_setup_over()  # what ran before the block was setup
        except BaseException:
            self._environment.restore()  # no __exit__ follows a failed __enter__
            raise
        return self

    def step(self) -> None:
        """Ends a training step; the measurements of the warm-up steps are forgotten when the
        last of them ends. Call it outside every module's forward."""
        self.steps += 1
        lib = _state.lib
        if lib is None:
            return
        lib.hwprof_torch_step()
        if self.steps == self.warmup:
            lib.hwprof_reset()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None) -> None:
        try:
            lib = _loaded()
            if lib.hwprof_write(os.fsencode(self.output)) != 0:
                print(f"hwprof: {(lib.hwprof_last_error() or b'').decode(errors='replace')}", file=sys.stderr)
            else:
                print(f"hwprof: wrote {self.output}/", file=sys.stderr)
        finally:
            self._environment.restore()


def _loaded() -> ctypes.CDLL:
    lib = _state.lib
    if lib is None:
        raise RuntimeError("hwprof.torch: the library is not loaded (install() was not called)")
    return lib
