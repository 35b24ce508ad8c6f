"""Where libhwprof-torch.so is (docs/torch.md, "Finding the library").

In order: HWPROF_TORCH_LIBRARY, the user's word; the `_library.py` CMake writes beside this
file (in the build tree it names the build's library and report module, in a CMake install
the installed library, from this folder); then the library by its file name in the lib
folders of the prefix the package is installed under, of LD_LIBRARY_PATH, of the Python
environment, and of /usr/local and /usr. Where none has it, the error names every place tried.
"""

from __future__ import annotations

import importlib
import os
import sys
import sysconfig
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol, cast

ENVIRONMENT_VARIABLE = "HWPROF_TORCH_LIBRARY"
FILE_NAME = "libhwprof-torch.so"


class GeneratedPaths(Protocol):
    """hwprof/torch/_library.py, written by CMake (python/CMakeLists.txt)."""

    def path(self) -> str: ...

    def report_module(self) -> str | None: ...


class LibraryNotFound(RuntimeError):
    """libhwprof-torch.so is nowhere the package looked; the message names each place."""


@dataclass(frozen=True)
class Location:
    """The library to load, and the report module to hand it where the build named one
    (installed, the library finds its module beside itself)."""

    library: str
    report_module: str | None
    source: str  # how it was found: "HWPROF_TORCH_LIBRARY", "_library.py" or "search"


def generated_paths() -> GeneratedPaths | None:
    """The `_library.py` CMake wrote beside this file, or None (the source tree, a pip install)."""
    try:
        module = importlib.import_module(f"{__package__}._library")
    except ModuleNotFoundError:
        return None
    return cast(GeneratedPaths, module)


def file_names(version: str) -> tuple[str, str]:
    """The library's file names, its soname first: `libhwprof-torch.so.0` for version 0.1.0."""
    major = version.split(".", 1)[0]
    return f"{FILE_NAME}.{major}", FILE_NAME


def installed_prefix(package_dir: str) -> str | None:
    """The prefix a package folder is installed under: `/opt/hw` for
    `/opt/hw/lib/python3.11/site-packages/hwprof/torch` (the nearest folder named lib or lib64
    above it, and that folder's parent), or None."""
    folder = os.path.abspath(package_dir)
    while True:
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        if os.path.basename(folder) in ("lib", "lib64"):
            return parent
        folder = parent


def _lib_folders(prefix: str, multiarch: str | None) -> Iterator[str]:
    if multiarch:
        yield os.path.join(prefix, "lib", multiarch)
    yield os.path.join(prefix, "lib64")
    yield os.path.join(prefix, "lib")


SYSTEM_PREFIXES = ("/usr/local", "/usr")


def search_folders(package_dir: str, environ: Mapping[str, str], python_prefixes: tuple[str, ...] = (),
                   multiarch: str | None = None, system_prefixes: tuple[str, ...] = SYSTEM_PREFIXES) -> list[str]:
    """The folders searched for the library, in order, each once: the package's own folder,
    the lib folders of the prefix it is installed under, LD_LIBRARY_PATH's folders, and the
    lib folders of the Python environment's prefixes and of the system's (/usr/local, /usr):
    lib/MULTIARCH (Debian's lib/x86_64-linux-gnu), lib64 and lib."""
    folders = [os.path.abspath(package_dir)]
    prefix = installed_prefix(package_dir)
    if prefix is not None:
        folders += _lib_folders(prefix, multiarch)
    folders += [folder for folder in environ.get("LD_LIBRARY_PATH", "").split(":") if folder]
    for prefix in (*python_prefixes, *system_prefixes):
        folders += _lib_folders(prefix, multiarch)
    return list(dict.fromkeys(os.path.normpath(folder) for folder in folders))


def locate(environ: Mapping[str, str], generated: GeneratedPaths | None, package_dir: str, version: str,
           python_prefixes: tuple[str, ...] = (), multiarch: str | None = None,
           system_prefixes: tuple[str, ...] = SYSTEM_PREFIXES) -> Location:
    """Where the library is (the module's docstring says in which order it looks).
    HWPROF_TORCH_LIBRARY is taken as it is: where it names no library, loading it says so.
    Raises LibraryNotFound naming each place tried."""
    report_module = generated.report_module() if generated is not None else None
    named = environ.get(ENVIRONMENT_VARIABLE)
    if named:
        return Location(named, report_module, ENVIRONMENT_VARIABLE)
    tried = [f"{ENVIRONMENT_VARIABLE} (not set)"]
    if generated is not None:
        path = generated.path()
        if os.path.isfile(path):
            return Location(path, report_module, "_library.py")
        tried.append(f"{path} (named by hwprof/torch/_library.py: no such file)")
    else:
        tried.append("hwprof/torch/_library.py (none: the package is not from hwprof's build tree or a CMake install)")
    names = file_names(version)
    folders = search_folders(package_dir, environ, python_prefixes, multiarch, system_prefixes)
    for folder in folders:
        for name in names:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate):
                return Location(candidate, report_module, "search")
    tried.append(f"{' or '.join(names)} in {', '.join(folders)}")
    raise LibraryNotFound(f"hwprof.torch: {FILE_NAME} not found; tried {'; '.join(tried)}. Set {ENVIRONMENT_VARIABLE} to "
                          "its path, or install hwprof's C++ part (cmake --install) under one of these prefixes")


def locate_here(version: str) -> Location:
    """`locate` for this process: its environment, the package's own folder and CMake's file."""
    multiarch = sysconfig.get_config_var("MULTIARCH")
    return locate(os.environ, generated_paths(), os.path.dirname(os.path.abspath(__file__)), version, (sys.prefix,),
                  multiarch if isinstance(multiarch, str) else None)
