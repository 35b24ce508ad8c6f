"""pytest units of the hwprof Python package's own logic (python/hwprof): no libtorch, no
libhwprof-torch.so. The library is a fake that records its calls (fake_library.py); ctest runs
them on the source tree (tests/CMakeLists.txt, python.unit), and so does
`/usr/bin/python3 -m pytest tests/python` from the repository's root."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python")
if os.path.normpath(SOURCE) not in (os.path.normpath(p) for p in sys.path):
    sys.path.insert(0, os.path.normpath(SOURCE))

import hwprof.torch  # noqa: E402  (from the source tree, above)

from fake_library import FakeLibrary  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_package() -> Iterator[None]:
    """Each test starts with the package as just imported: no library, no names."""
    hwprof.torch._state.lib = None
    hwprof.torch._state.installed = False
    hwprof.torch._names.clear()
    yield
    hwprof.torch._state.lib = None
    hwprof.torch._state.installed = False
    hwprof.torch._names.clear()


@pytest.fixture
def loaded() -> FakeLibrary:
    """The package with a fake library loaded and Module.__call__ taken as wrapped."""
    lib = FakeLibrary()
    hwprof.torch._state.lib = lib  # type: ignore[assignment]
    hwprof.torch._state.installed = True
    return lib
