"""Environment variables set for a while and put back as they were (`hwprof.torch.profile`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping


class EnvironmentChange:
    """Sets variables and remembers what they were, so that `restore()` leaves the environment
    exactly as it found it: a variable that was unset is removed again, a changed one gets its
    old value back. A variable the program changed meanwhile is put back all the same."""

    def __init__(self, environ: MutableMapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self._before: dict[str, str | None] = {}

    def set(self, values: Mapping[str, str | None]) -> None:
        """Sets each variable whose value is not None."""
        for key, value in values.items():
            if value is not None:
                self._remember(key)
                self._environ[key] = value

    def set_default(self, key: str, value: str) -> None:
        """Sets the variable where it is not set."""
        if key not in self._environ:
            self._remember(key)
            self._environ[key] = value

    def _remember(self, key: str) -> None:
        if key not in self._before:
            self._before[key] = self._environ.get(key)

    def restore(self) -> None:
        for key, value in self._before.items():
            if value is None:
                self._environ.pop(key, None)
            else:
                self._environ[key] = value
        self._before.clear()
