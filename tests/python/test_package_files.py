"""The package's files agree with what builds and installs it: one version, every file listed."""

from __future__ import annotations

import os
import re
import tomllib

import hwprof

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
PYTHON = os.path.join(ROOT, "python")


def package_files() -> list[str]:
    files = []
    for folder, _, names in os.walk(os.path.join(PYTHON, "hwprof")):
        files += [os.path.relpath(os.path.join(folder, name), PYTHON) for name in names
                  if name.endswith((".py", ".pyi")) or name == "py.typed"]
    return sorted(files)


def test_the_version_is_the_projects() -> None:
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        match = re.search(r"project\(hwprof\s+VERSION\s+([0-9.]+)", f.read())
    assert match is not None
    assert hwprof.__version__ == match.group(1)


def test_pyproject_takes_the_packages_version_and_every_package() -> None:
    with open(os.path.join(PYTHON, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hwprof.__version__"}
    packages = sorted(os.path.dirname(path).replace(os.sep, ".") for path in package_files() if path.endswith("__init__.py"))
    assert sorted(project["tool"]["setuptools"]["packages"]) == packages
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["hwprof"]


def test_cmake_copies_and_installs_every_file() -> None:
    with open(os.path.join(PYTHON, "CMakeLists.txt")) as f:
        listed = set(re.findall(r"^\s+(hwprof/[^\s)]+)\)?$", f.read(), re.MULTILINE))
    assert listed == set(path.replace(os.sep, "/") for path in package_files())
