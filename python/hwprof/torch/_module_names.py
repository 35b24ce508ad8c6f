"""Modules' names and parameter counts, as their regions are made at their first call
(docs/torch.md, "In Python"): the model by its class, the rest by their path in it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from ._identity_map import WeakIdentityMap


class Parameter(Protocol):
    def numel(self) -> int: ...


class Module(Protocol):
    """What the package asks of a torch.nn.Module."""

    def named_modules(self) -> Iterator[tuple[str, Module]]: ...

    def parameters(self) -> Iterable[Parameter]: ...


class ModuleNames:
    """Each module's path in its model (`ResNet.layer1.0.conv1`), remembered while the module
    lives: a model rebuilt in the same memory is named afresh, never by the old one's names."""

    def __init__(self) -> None:
        self._names: WeakIdentityMap[str] = WeakIdentityMap()

    def name_of(self, module: Module) -> str:
        name = self._names.get(module)
        if name is not None:
            return name
        # A module not seen inside a known model is a model (or used on its own): it and
        # everything under it are named now, once.
        root = type(module).__name__
        for path, sub in module.named_modules():
            self._names.set(sub, f"{root}.{path}" if path else root)
        return self._names.get(module) or root

    def __len__(self) -> int:
        return len(self._names)

    def clear(self) -> None:
        self._names.clear()


def parameter_count(module: Module) -> int:
    """The module's parameters' elements, each shared parameter once (`parameters()` yields
    each tensor once), or -1 where `parameters()` fails: the module is still measured."""
    try:
        return sum(p.numel() for p in module.parameters())
    except Exception:
        return -1
