"""Finding libhwprof-torch.so (hwprof/torch/_locate.py): HWPROF_TORCH_LIBRARY, CMake's
_library.py, then a search of lib folders; an error that names each place tried."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hwprof.torch._locate import LibraryNotFound, file_names, installed_prefix, locate, search_folders

VERSION = "0.1.0"


class Generated:
    """A _library.py as CMake writes it."""

    def __init__(self, path: str, report_module: str | None = None) -> None:
        self._path = path
        self._report_module = report_module

    def path(self) -> str:
        return self._path

    def report_module(self) -> str | None:
        return self._report_module


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    return path


def package_under(prefix: Path) -> str:
    """The package's torch folder as `pip install --prefix` or a CMake install lays it out."""
    folder = prefix / "lib" / "python3.11" / "site-packages" / "hwprof" / "torch"
    folder.mkdir(parents=True)
    return str(folder)


def test_the_soname_comes_first() -> None:
    assert file_names("0.1.0") == ("libhwprof-torch.so.0", "libhwprof-torch.so")
    assert file_names("2.0.3") == ("libhwprof-torch.so.2", "libhwprof-torch.so")


def test_the_environment_variable_wins_and_is_taken_as_it_is(tmp_path: Path) -> None:
    built = touch(tmp_path / "build" / "libhwprof-torch.so")
    named = str(tmp_path / "none.so")  # no such file: loading it says so
    found = locate({"HWPROF_TORCH_LIBRARY": named}, Generated(str(built), "/build/report.so"), str(tmp_path), VERSION,
                   system_prefixes=())
    assert (found.library, found.source) == (named, "HWPROF_TORCH_LIBRARY")
    assert found.report_module == "/build/report.so"


def test_an_empty_environment_variable_is_not_set(tmp_path: Path) -> None:
    built = touch(tmp_path / "libhwprof-torch.so")
    found = locate({"HWPROF_TORCH_LIBRARY": ""}, Generated(str(built)), str(tmp_path), VERSION, system_prefixes=())
    assert found.source == "_library.py"


def test_the_build_tree_names_its_library_and_report_module(tmp_path: Path) -> None:
    built = touch(tmp_path / "build" / "lib" / "libhwprof-torch.so.0.1.0")
    found = locate({}, Generated(str(built), "/b/lib/hwprof/libhwprof-report.so"), str(tmp_path), VERSION, system_prefixes=())
    assert (found.library, found.source, found.report_module) == (str(built), "_library.py", "/b/lib/hwprof/libhwprof-report.so")


def test_the_prefix_of_an_installed_package() -> None:
    assert installed_prefix("/opt/hw/lib/python3.11/site-packages/hwprof/torch") == "/opt/hw"
    assert installed_prefix("/usr/lib/python3/dist-packages/hwprof/torch") == "/usr"
    assert installed_prefix("/v/lib64/python3.11/site-packages/hwprof/torch") == "/v"
    assert installed_prefix("/home/u/src/hwprof/python/hwprof/torch") is None
    assert installed_prefix("/home/library/python/hwprof/torch") is None  # a folder named lib*, not lib


def test_search_order(tmp_path: Path) -> None:
    package = package_under(tmp_path / "prefix")
    folders = search_folders(package, {"LD_LIBRARY_PATH": "/ld/one::/ld/two"}, ("/venv", "/usr"), "x86_64-linux-gnu",
                             ("/usr/local", "/usr"))
    prefix = str(tmp_path / "prefix")
    assert folders == [
        package,
        f"{prefix}/lib/x86_64-linux-gnu", f"{prefix}/lib64", f"{prefix}/lib",
        "/ld/one", "/ld/two",
        "/venv/lib/x86_64-linux-gnu", "/venv/lib64", "/venv/lib",
        "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",  # each folder once
        "/usr/local/lib/x86_64-linux-gnu", "/usr/local/lib64", "/usr/local/lib",
    ]


def test_a_pip_installed_package_finds_the_library_of_its_prefix(tmp_path: Path) -> None:
    package = package_under(tmp_path)
    library = touch(tmp_path / "lib" / "libhwprof-torch.so.0")
    found = locate({}, None, package, VERSION, system_prefixes=())
    assert (found.library, found.source, found.report_module) == (str(library), "search", None)


def test_multiarch_folders_are_searched(tmp_path: Path) -> None:
    package = package_under(tmp_path / "pkg")
    library = touch(tmp_path / "usr" / "lib" / "x86_64-linux-gnu" / "libhwprof-torch.so.0")
    found = locate({}, None, package, VERSION, multiarch="x86_64-linux-gnu", system_prefixes=(str(tmp_path / "usr"),))
    assert found.library == str(library)


def test_the_soname_is_taken_before_the_development_link(tmp_path: Path) -> None:
    package = package_under(tmp_path)
    touch(tmp_path / "lib" / "libhwprof-torch.so")
    soname = touch(tmp_path / "lib" / "libhwprof-torch.so.0")
    assert locate({}, None, package, VERSION, system_prefixes=()).library == str(soname)


def test_ld_library_path_is_searched(tmp_path: Path) -> None:
    library = touch(tmp_path / "elsewhere" / "libhwprof-torch.so")
    found = locate({"LD_LIBRARY_PATH": str(tmp_path / "elsewhere")}, None, str(tmp_path / "source"), VERSION, system_prefixes=())
    assert found.library == str(library)


def test_a_library_the_build_named_and_removed_falls_back_to_the_search(tmp_path: Path) -> None:
    package = package_under(tmp_path)
    library = touch(tmp_path / "lib" / "libhwprof-torch.so.0")
    found = locate({}, Generated(str(tmp_path / "gone" / "libhwprof-torch.so")), package, VERSION, system_prefixes=())
    assert (found.library, found.source) == (str(library), "search")


def test_not_found_names_every_place_tried(tmp_path: Path) -> None:
    package = package_under(tmp_path / "prefix")
    with pytest.raises(LibraryNotFound) as raised:
        locate({"LD_LIBRARY_PATH": "/ld"}, Generated(str(tmp_path / "gone.so")), package, VERSION,
               python_prefixes=("/venv",), system_prefixes=("/sys",))
    message = str(raised.value)
    assert message.startswith("hwprof.torch: libhwprof-torch.so not found; tried HWPROF_TORCH_LIBRARY (not set); ")
    assert f"{tmp_path / 'gone.so'} (named by hwprof/torch/_library.py: no such file)" in message
    assert "libhwprof-torch.so.0 or libhwprof-torch.so in " in message
    for folder in (package, str(tmp_path / "prefix" / "lib"), "/ld", "/venv/lib", "/venv/lib64", "/sys/lib"):
        assert folder + "," in message or folder + "." in message
    assert "Set HWPROF_TORCH_LIBRARY to its path" in message
    assert "\n" not in message  # one line: the launcher prints it as its one line


def test_not_found_without_cmake_says_so(tmp_path: Path) -> None:
    with pytest.raises(LibraryNotFound, match=r"_library.py \(none: the package is not from hwprof's build tree or a CMake install\)"):
        locate({}, None, str(tmp_path), VERSION, system_prefixes=())


def test_library_not_found_is_a_runtime_error() -> None:
    # The launcher and existing callers catch RuntimeError.
    assert issubclass(LibraryNotFound, RuntimeError)


def test_the_process_lookup_reads_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hwprof.torch import library_path
    named = os.path.join(tmp_path, "mine.so")
    monkeypatch.setenv("HWPROF_TORCH_LIBRARY", named)
    assert library_path() == named
