"""A map from live objects, by identity, whose entry goes when its object is collected."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class _Strong:
    """A strong reference with a weak reference's call: for an object that takes no weak
    reference, kept alive by its entry so that no other object can take its id meanwhile."""

    __slots__ = ("_target",)

    def __init__(self, target: object) -> None:
        self._target = target

    def __call__(self) -> object:
        return self._target


class WeakIdentityMap(Generic[V]):
    """Values by their key's identity, not by its `==` and `hash` (a module may define both, or
    be unhashable), kept no longer than the key lives: a weak reference's callback removes the
    entry when the key is collected, so that a new object given a freed object's id never finds
    the old value. A key that takes no weak reference is held strongly (`__slots__` without
    `__weakref__`): kept alive, its id cannot be reused.

    Runs with the GIL held. A weak reference's callback runs while its object is being freed,
    before its memory can be reused: no new object can take its id until the entry is gone."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Callable[[], object], V]] = {}

    def get(self, key: object) -> V | None:
        entry = self._entries.get(id(key))
        if entry is None or entry[0]() is not key:
            return None
        return entry[1]

    def set(self, key: object, value: V) -> None:
        ident = id(key)
        reference: Callable[[], object]
        try:
            reference = weakref.ref(key, lambda dead: self._forget(ident, dead))
        except TypeError:
            reference = _Strong(key)
        self._entries[ident] = (reference, value)

    def _forget(self, ident: int, dead: Callable[[], object]) -> None:
        entry = self._entries.get(ident)
        if entry is not None and entry[0] is dead:
            del self._entries[ident]

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
