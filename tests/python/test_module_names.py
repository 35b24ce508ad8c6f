"""Modules' names (hwprof/torch/_module_names.py): by their path in the model, remembered by a
weak reference, so that a module made after another was collected never gets its name."""

from __future__ import annotations

import builtins
import gc
from collections.abc import Iterable, Iterator

import pytest

from hwprof.torch import _identity_map
from hwprof.torch._identity_map import WeakIdentityMap
from hwprof.torch._module_names import ModuleNames, parameter_count


class Tensor:
    def __init__(self, elements: int) -> None:
        self.elements = elements

    def numel(self) -> int:
        return self.elements


class FakeModule:
    """What the package asks of a torch.nn.Module: named_modules() as torch yields it, the
    module itself first under "", then its children's paths, depth first."""

    def __init__(self, children: dict[str, FakeModule] | None = None, weights: Iterable[int] = ()) -> None:
        self.children = children or {}
        self.weights = [Tensor(n) for n in weights]

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, FakeModule]]:
        yield prefix, self
        for name, child in self.children.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def parameters(self) -> Iterator[Tensor]:
        for _, module in self.named_modules():
            yield from module.weights


class Net(FakeModule):
    pass


class Block(FakeModule):
    pass


class Conv(FakeModule):
    pass


def net() -> Net:
    return Net({"conv1": Conv(), "layer1": Block({"0": Block({"conv": Conv()})})})


def test_the_model_by_its_class_the_rest_by_their_path() -> None:
    names = ModuleNames()
    model = net()
    assert names.name_of(model) == "Net"
    assert names.name_of(model.children["conv1"]) == "Net.conv1"
    assert names.name_of(model.children["layer1"].children["0"].children["conv"]) == "Net.layer1.0.conv"


def test_a_module_called_on_its_own_is_a_model() -> None:
    assert ModuleNames().name_of(Conv()) == "Conv"


def test_a_collected_models_names_go_with_it() -> None:
    names = ModuleNames()
    model = net()
    names.name_of(model)
    assert len(names) == 5
    del model
    gc.collect()
    assert len(names) == 0


def test_a_new_module_at_a_collected_modules_address_is_named_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    # The address a new object gets is CPython's choice: here each module says which it has.
    monkeypatch.setattr(_identity_map, "id", lambda obj: getattr(obj, "address", builtins.id(obj)), raising=False)
    names = ModuleNames()
    model = net()
    model.children["conv1"].address = 42  # type: ignore[attr-defined]
    names.name_of(model)
    assert names.name_of(model.children["conv1"]) == "Net.conv1"
    del model
    gc.collect()
    assert len(names) == 0
    rebuilt = Conv()
    rebuilt.address = 42  # type: ignore[attr-defined]
    assert names.name_of(rebuilt) == "Conv"


def test_new_modules_never_get_a_collected_modules_name() -> None:
    names = ModuleNames()
    model = net()
    names.name_of(model)
    del model
    gc.collect()
    # CPython often gives a freed object's memory to a new object of its size: some of these
    # may be where the old model's modules were, and each must be named afresh.
    fresh = [Conv() for _ in range(1000)]
    assert {names.name_of(module) for module in fresh} == {"Conv"}


def test_a_module_that_takes_no_weak_reference_is_kept_alive_by_its_name() -> None:
    class Slotted:
        __slots__ = ()

        def named_modules(self) -> Iterator[tuple[str, Slotted]]:
            yield "", self

        def parameters(self) -> Iterator[Tensor]:
            return iter(())

    names = ModuleNames()
    module = Slotted()
    assert names.name_of(module) == "Slotted"
    del module
    gc.collect()
    assert len(names) == 1  # held, so that its id cannot be given to another module meanwhile


def test_modules_are_known_by_identity_not_equality() -> None:
    class Equal(FakeModule):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]  # unhashable, as a module defining __eq__ is

    names = ModuleNames()
    first, second = Equal(), Equal()
    model = Net({"a": first, "b": second})
    names.name_of(model)
    assert (names.name_of(first), names.name_of(second)) == ("Net.a", "Net.b")


def test_the_identity_map_forgets_a_collected_key_only() -> None:
    live, dead = Conv(), Conv()
    regions: WeakIdentityMap[int] = WeakIdentityMap()
    regions.set(live, 1)
    regions.set(dead, 2)
    del dead
    gc.collect()
    assert (len(regions), regions.get(live)) == (1, 1)
    regions.set(live, 3)  # a key set again: its old reference's callback must not remove the new entry
    gc.collect()
    assert regions.get(live) == 3


def test_parameters_each_counted_once() -> None:
    assert parameter_count(Net({"fc": FakeModule(weights=(6, 2))}, weights=(3,))) == 11


def test_parameters_that_cannot_be_counted_are_minus_one() -> None:
    class Broken(FakeModule):
        def parameters(self) -> Iterator[Tensor]:
            raise RuntimeError("lazy module, not initialised")

    assert parameter_count(Broken()) == -1
