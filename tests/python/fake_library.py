"""A stand-in for libhwprof-torch.so as ctypes gives it: each `hwprof_*` function records its
calls and answers from `results` (a value, or a function of the arguments)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any


class FakeFunction:
    def __init__(self, library: FakeLibrary, name: str) -> None:
        self.library = library
        self.name = name
        self.argtypes: Any = None
        self.restype: Any = None

    def __call__(self, *args: Any) -> Any:
        self.library.calls.append((self.name, args))
        result = self.library.results.get(self.name)
        return result(*args) if callable(result) else result


class FakeLibrary:
    def __init__(self, **results: Any) -> None:
        regions = itertools.count()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.results: dict[str, Any | Callable[..., Any]] = {
            "hwprof_torch_observing": 1,
            "hwprof_write": 0,
            "hwprof_last_error": b"the last error",
            "hwprof_torch_observed_ops": 0,
            "hwprof_torch_module_region": lambda name, params: next(regions),
            **results,
        }
        self.functions: dict[str, FakeFunction] = {}

    def __getattr__(self, name: str) -> FakeFunction:
        if not name.startswith("hwprof_"):
            raise AttributeError(name)
        if name not in self.functions:
            self.functions[name] = FakeFunction(self, name)
        return self.functions[name]

    def called(self, name: str) -> list[tuple[Any, ...]]:
        """The arguments of each call of `name`, in order."""
        return [args for called, args in self.calls if called == name]

    def names(self) -> list[str]:
        """The functions called, in order."""
        return [name for name, _ in self.calls]
