"""torch.nn.Module.__call__ wrapped in Python (where hwprof.torch._native is not built): each
module call is its region, entered and left around the original call however it ends."""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

import hwprof.torch

from fake_library import FakeLibrary
from test_module_names import Conv, FakeModule, Net


def original_call(self: FakeModule, *args: Any, **kwargs: Any) -> Any:
    if kwargs.get("fail"):
        raise ValueError("the forward's")
    return ("forward", args)


def test_a_call_is_its_modules_region() -> None:
    lib = FakeLibrary()
    call = hwprof.torch._python_call(lib, original_call)  # type: ignore[arg-type]
    model = Net({"conv": Conv(weights=(9, 3))}, weights=(1,))
    call(model)
    assert call(model.children["conv"], 1, 2) == ("forward", (1, 2))
    assert lib.calls[3:] == [("hwprof_torch_module_region", (b"Net.conv", 12)), ("hwprof_torch_module_enter", (1,)),
                             ("hwprof_torch_module_exit", ())]
    assert lib.called("hwprof_torch_module_region")[0] == (b"Net", 13)


def test_the_region_is_made_once_per_module() -> None:
    lib = FakeLibrary()
    call = hwprof.torch._python_call(lib, original_call)  # type: ignore[arg-type]
    model, other = Conv(), Conv()
    for module in (model, model, other):
        call(module)
    assert len(lib.called("hwprof_torch_module_region")) == 2
    assert lib.called("hwprof_torch_module_enter") == [(0,), (0,), (1,)]


def test_a_raising_forward_leaves_its_region() -> None:
    lib = FakeLibrary()
    call = hwprof.torch._python_call(lib, original_call)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the forward's"):
        call(Conv(), fail=True)
    assert lib.names()[-2:] == ["hwprof_torch_module_enter", "hwprof_torch_module_exit"]


def test_a_module_made_after_one_was_collected_gets_its_own_region() -> None:
    lib = FakeLibrary()
    call = hwprof.torch._python_call(lib, original_call)  # type: ignore[arg-type]
    model = Net({"conv": Conv()})
    call(model)
    del model
    gc.collect()
    fresh = [Net({"conv": Conv()}) for _ in range(20)]
    for module in fresh:
        call(module)
    assert len(lib.called("hwprof_torch_module_region")) == 21


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    """A `torch.nn.modules.module.Module` for install() to wrap."""

    class Module(FakeModule):
        def __call__(self, *args: Any) -> Any:
            return ("called", args)

    names = ("torch", "torch.nn", "torch.nn.modules", "torch.nn.modules.module")
    for name in names:
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["torch.nn.modules.module"].Module = Module  # type: ignore[attr-defined]
    monkeypatch.setattr(hwprof.torch, "_native_call", lambda lib, module_type, original: None)
    yield Module


def test_install_wraps_module_calls_once(fake_torch: type) -> None:
    lib = FakeLibrary()
    hwprof.torch._state.lib = lib  # type: ignore[assignment]
    assert hwprof.torch.install() is True
    wrapped = fake_torch.__call__
    assert hwprof.torch.install() is True
    assert fake_torch.__call__ is wrapped
    assert fake_torch()(5) == ("called", (5,))
    assert lib.called("hwprof_torch_modules_observed") == [()]
    assert lib.called("hwprof_torch_module_region") == [(b"Module", 0)]


def test_install_wraps_nothing_when_the_observer_is_off(fake_torch: type) -> None:
    lib = FakeLibrary(hwprof_torch_observing=0)
    hwprof.torch._state.lib = lib  # type: ignore[assignment]
    original = fake_torch.__call__
    assert hwprof.torch.install() is False
    assert fake_torch.__call__ is original
