"""`hwprof.torch.profile`: the environment as it was after the block, however the block ends;
steps and warm-up; the reports written when it ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import hwprof.torch
from hwprof.torch import LibraryNotFound, profile
from hwprof.torch._environment import EnvironmentChange

from fake_library import FakeLibrary

VARIABLES = ("HWPROF_BACKEND", "HWPROF_EVENTS", "HWPROF_GROUP")


def snapshot() -> dict[str, str]:
    """The process's environment but pytest's own PYTEST_CURRENT_TEST, which names the phase."""
    return {key: value for key, value in os.environ.items() if key != "PYTEST_CURRENT_TEST"}


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The process's environment with HWPROF_GROUP set and the other two unset, as a copy to
    compare with afterwards."""
    for key in VARIABLES:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HWPROF_GROUP", "the user's")
    yield snapshot()


def test_the_block_sets_the_variables(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    with profile(output=tmp_path, backend="timer", events=["cycles", "instructions"], group="FLOPS_DP"):
        assert [os.environ[key] for key in VARIABLES] == ["timer", "cycles,instructions", "FLOPS_DP"]


def test_exit_restores_the_environment_exactly(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    with profile(output=tmp_path, backend="timer", events="cycles,instructions", group="FLOPS_DP"):
        pass
    assert snapshot() == environment  # the unset ones removed again, HWPROF_GROUP the user's


def test_the_environment_is_restored_when_the_body_raises(loaded: FakeLibrary, environment: dict[str, str],
                                                         tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="the body's"):
        with profile(output=tmp_path, backend="perf", group="other"):
            raise KeyError("the body's")
    assert snapshot() == environment
    assert loaded.called("hwprof_write") == [(os.fsencode(tmp_path),)]  # written all the same


def test_the_environment_is_restored_when_writing_fails(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    loaded.results["hwprof_write"] = 1
    with profile(output=tmp_path, backend="timer"):
        pass
    assert snapshot() == environment
    assert capsys.readouterr().err == "hwprof: the last error\n"


def test_the_environment_is_restored_when_the_block_cannot_start(environment: dict[str, str], tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise LibraryNotFound("hwprof.torch: libhwprof-torch.so not found; tried ...")

    monkeypatch.setattr(hwprof.torch, "_import_torch", lambda: None)
    monkeypatch.setattr(hwprof.torch, "_locate", missing)
    with pytest.raises(LibraryNotFound):
        with profile(output=tmp_path, backend="timer", events=["cycles"]):
            pytest.fail("the body ran")
    assert snapshot() == environment


def test_backend_auto_where_the_user_set_none(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    with profile(output=tmp_path):
        assert os.environ["HWPROF_BACKEND"] == "auto"  # asks the observer to observe
        assert "HWPROF_EVENTS" not in os.environ
    assert "HWPROF_BACKEND" not in os.environ


def test_the_users_backend_is_kept(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWPROF_BACKEND", "papi")
    with profile(output=tmp_path):
        assert os.environ["HWPROF_BACKEND"] == "papi"
    assert os.environ["HWPROF_BACKEND"] == "papi"


def test_a_profile_used_twice_restores_twice(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    block = profile(output=tmp_path, backend="timer")
    for _ in range(2):
        with block:
            assert os.environ["HWPROF_BACKEND"] == "timer"
        assert snapshot() == environment


def test_the_block_marks_the_setup_over_and_writes_its_folder(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with profile(output=str(tmp_path / "out")):
        assert loaded.names() == ["hwprof_torch_observing", "hwprof_torch_setup_over"]
    assert loaded.called("hwprof_write") == [(os.fsencode(tmp_path / "out"),)]
    assert capsys.readouterr().err == f"hwprof: wrote {tmp_path / 'out'}/\n"


def test_the_warm_up_is_forgotten_when_its_last_step_ends(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    with profile(output=tmp_path, warmup=2) as block:
        for _ in range(4):
            block.step()
    assert [name for name in loaded.names() if name in ("hwprof_torch_step", "hwprof_reset")] == [
        "hwprof_torch_step", "hwprof_torch_step", "hwprof_reset", "hwprof_torch_step", "hwprof_torch_step"]
    assert block.steps == 4


def test_no_warm_up(loaded: FakeLibrary, environment: dict[str, str], tmp_path: Path) -> None:
    with profile(output=tmp_path, warmup=0) as block:
        block.step()
    assert "hwprof_reset" not in loaded.names()


@pytest.mark.parametrize("warmup", [-1, 1.5, "2", True])
def test_warmup_must_be_a_whole_number(warmup: object) -> None:
    with pytest.raises(ValueError, match="warmup must be a whole number of steps >= 0"):
        profile(warmup=warmup)  # type: ignore[arg-type]


def test_an_environment_change_on_a_mapping() -> None:
    environ = {"KEPT": "1", "CHANGED": "old"}
    change = EnvironmentChange(environ)
    change.set({"CHANGED": "new", "ADDED": "x", "UNTOUCHED": None})
    change.set({"CHANGED": "newer"})  # the value before the first change is the one restored
    change.set_default("KEPT", "2")
    change.set_default("DEFAULTED", "d")
    assert environ == {"KEPT": "1", "CHANGED": "newer", "ADDED": "x", "DEFAULTED": "d"}
    environ["ADDED"] = "changed by the program meanwhile"
    change.restore()
    assert environ == {"KEPT": "1", "CHANGED": "old"}
