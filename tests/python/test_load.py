"""Loading the library (`hwprof.torch._load`) with a fake in its place: torch first, the
functions' types, the build's report module, and one line naming the library that failed."""

from __future__ import annotations

import ctypes

import pytest

import hwprof.torch
from hwprof.torch._locate import Location

from fake_library import FakeLibrary


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the package imported and opened, in order; the library opened is a FakeLibrary."""
    events: list[str] = []
    monkeypatch.setattr(hwprof.torch, "_import_torch", lambda: events.append("import torch"))
    monkeypatch.setattr(hwprof.torch, "_locate", lambda: Location("/b/libhwprof-torch.so", "/b/libhwprof-report.so", "_library.py"))

    def open_library(path: str) -> FakeLibrary:
        events.append(f"open {path}")
        return FakeLibrary()

    monkeypatch.setattr(hwprof.torch, "_open", open_library)
    monkeypatch.delenv("HWPROF_REPORT_MODULE", raising=False)
    return events


def test_torch_first_then_the_library_once(opened: list[str]) -> None:
    lib = hwprof.torch._load()
    assert hwprof.torch._load() is lib
    assert opened == ["import torch", "open /b/libhwprof-torch.so"]


def test_the_functions_types_are_set(opened: list[str]) -> None:
    lib = hwprof.torch._load()
    region = lib.hwprof_torch_module_region
    assert (region.argtypes, region.restype) == ([ctypes.c_char_p, ctypes.c_longlong], ctypes.c_int)
    assert lib.hwprof_last_error.restype is ctypes.c_char_p
    assert lib.hwprof_torch_observing.argtypes == []


def test_the_builds_report_module_is_handed_to_the_library(opened: list[str]) -> None:
    lib = hwprof.torch._load()
    assert lib.called("hwprof_set_report_module") == [(b"/b/libhwprof-report.so",)]


def test_hwprof_report_module_wins(opened: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWPROF_REPORT_MODULE", "/mine/report.so")
    lib = hwprof.torch._load()
    assert lib.called("hwprof_set_report_module") == []  # the library reads HWPROF_REPORT_MODULE itself


def test_an_installed_library_finds_its_own_module(opened: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hwprof.torch, "_locate", lambda: Location("/usr/lib/libhwprof-torch.so.0", None, "_library.py"))
    assert hwprof.torch._load().called("hwprof_set_report_module") == []


def test_a_library_that_does_not_load_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hwprof.torch, "_import_torch", lambda: None)
    monkeypatch.setattr(hwprof.torch, "_locate", lambda: Location("/x/none.so", None, "HWPROF_TORCH_LIBRARY"))

    def cannot(path: str) -> FakeLibrary:
        raise OSError(f"{path}: cannot open shared object file: No such file or directory")

    monkeypatch.setattr(hwprof.torch, "_open", cannot)
    with pytest.raises(RuntimeError) as raised:
        hwprof.torch._load()
    assert str(raised.value) == ("hwprof.torch: cannot load /x/none.so (from HWPROF_TORCH_LIBRARY): "
                                 "/x/none.so: cannot open shared object file: No such file or directory")
    assert hwprof.torch._state.lib is None
