"""`python3 -m hwprof.torch [-o DIR] [options] script.py [args ...]`: runs an unmodified
PyTorch script as `python3 script.py` would, with every module and op measured, and writes
DIR however the script ends (docs/torch.md, "The launcher" and "How a script ends")."""

from __future__ import annotations

import argparse
import builtins
import ctypes
import errno
import os
import sys
import tempfile
import types
import zipfile
from typing import TYPE_CHECKING, cast

from hwprof.torch import _endings

if TYPE_CHECKING:  # the script's process imports no more than it needs
    import importlib.abc

USAGE = ("python3 -m hwprof.torch [-h] [-o DIR] [--backend {auto,perf,papi,timer}] [-e EVENTS] [--group GROUP] "
         "[--warmup N] script.py [args ...]")

EPILOG = """\
The script runs as `python3 script.py [args ...]` would run it: its __file__, sys.argv
and sys.path[0] are Python's, its exit status is its own. The reports (profile.json,
profile.txt, profile.csv, roofline.svg, trace.json, report.html) are written into DIR
however it ends: normally, by sys.exit, by an exception, by Ctrl-C (KeyboardInterrupt),
SIGTERM or SIGHUP; a second Ctrl-C while they are being written stops the writing at once.
os._exit and SIGKILL end it with nothing written.

exit status: the script's own; 2 with one line on stderr when DIR cannot be written or
hwprof's library cannot be loaded, before the script starts.

example:
  python3 -m hwprof.torch -o out --warmup 2 train.py --epochs 1
docs/torch.md says how to read the reports."""


def _steps(text: str) -> int:
    try:
        steps = int(text)
    except ValueError:
        steps = -1
    if steps < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of steps >= 0, not {text!r}")
    return steps


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m hwprof.torch", usage=USAGE, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     description="Run a PyTorch script with its modules and ops measured by hwprof.")
    parser.add_argument("-o", "--output", metavar="DIR", default="hwprof-torch",
                        help="folder for the reports (default: hwprof-torch), checked before the script starts")
    parser.add_argument("--backend", choices=("auto", "perf", "papi", "timer"),
                        help="counter backend (default: auto: perf counters where they open, else time only)")
    parser.add_argument("-e", "--events", help="counter events, comma-separated (hwprof info lists them)")
    parser.add_argument("--group", help="a counter group (hwprof info lists them)")
    parser.add_argument("--warmup", metavar="N", type=_steps,
                        help="forget the first N training steps (default: the observer's; docs/torch.md)")
    # One positional for both, so that the usage and its errors call only the script required.
    parser.add_argument("command", metavar="script.py [args ...]", nargs=argparse.REMAINDER,
                        help="the script to run (or a folder or zip file with a __main__.py) and its arguments")
    return parser


def _program() -> str:
    """The interpreter's name as Python's own messages give it (`/usr/bin/python3`)."""
    return sys.orig_argv[0] if getattr(sys, "orig_argv", None) else sys.executable


def _as_python_sees(script: str) -> str:
    """The script's path as Python makes it for `__file__`: joined to the current folder, not
    normalised, symbolic links kept."""
    return script if os.path.isabs(script) else os.path.join(os.getcwd(), script)


def _is_pyc(path: str) -> bool:
    if path.endswith(".pyc"):
        return True
    from importlib.util import MAGIC_NUMBER
    with open(path, "rb") as f:
        return f.read(len(MAGIC_NUMBER)) == MAGIC_NUMBER


def _script_code(script: str) -> types.CodeType | None:
    """The script's code object, or None for a folder or zip file run by its __main__ module.
    A script Python could not run ends here as `python3 script.py` would end: the same one
    line and status 2 for a file it cannot open, the same traceback and status 1 for a syntax
    error; nothing of hwprof's has been done yet."""
    path = _as_python_sees(script)
    if os.path.isdir(path) or (os.path.isfile(path) and zipfile.is_zipfile(path)):
        if os.path.isdir(path):
            found = any(os.path.isfile(os.path.join(path, name)) for name in ("__main__.py", "__main__.pyc"))
        else:
            with zipfile.ZipFile(path) as archive:
                found = any(name in archive.namelist() for name in ("__main__.py", "__main__.pyc"))
        if not found:
            print(f"{_program()}: can't find '__main__' module in {path!r}", file=sys.stderr)
            sys.exit(1)
        return None
    try:
        if _is_pyc(path):
            import marshal
            with open(path, "rb") as f:
                return cast(types.CodeType, marshal.loads(f.read()[16:]))
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        print(f"{_program()}: can't open file {path!r}: [Errno {e.errno}] {e.strerror}", file=sys.stderr)
        sys.exit(2)
    try:
        return cast(types.CodeType, compile(source, path, "exec", dont_inherit=True))
    except (SyntaxError, ValueError) as e:  # ValueError: null bytes in the source
        sys.excepthook(type(e), e.with_traceback(None), None)  # no launcher frame: Python shows none
        sys.exit(1)


def _output_problem(path: str) -> str | None:
    """Why the reports could not be written into folder `path`, or None. The probe is a file
    (or, where DIR does not exist yet, a folder beside where DIR goes) of a unique name,
    removed again: ranks of one launch check the same DIR at once, and the library creates
    DIR when it first measures."""
    existing = path
    while not os.path.lexists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        which = "" if existing == path else existing + " "
        return which + ("is a regular file, not a folder" if os.path.isfile(existing) else "is not a folder")
    try:
        if existing == path:
            handle, probe = tempfile.mkstemp(prefix=".hwprof-probe-", dir=path)
            os.close(handle)
            os.unlink(probe)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".hwprof-probe-", dir=existing))
    except OSError as e:
        return f"cannot write in the folder: {_reason(e)}" if existing == path else f"cannot create the folder {path}: {_reason(e)}"
    return None


def _reason(error: OSError) -> str:
    """An OSError's reason; ENOENT in a folder that exists is a file system that takes no new
    files (/proc, /sys)."""
    if error.errno == errno.ENOENT:
        return f"{error.strerror} (a file system that takes no new files, as /proc)"
    return error.strerror


def _set_environment(options: argparse.Namespace, output: str) -> None:
    """The observer's settings, read by the library when it loads."""
    os.environ["HWPROF_OUTPUT"] = output
    for key, value in (("HWPROF_BACKEND", options.backend), ("HWPROF_EVENTS", options.events),
                       ("HWPROF_GROUP", options.group),
                       ("HWPROF_WARMUP_STEPS", None if options.warmup is None else str(options.warmup))):
        if value is not None:
            os.environ[key] = value


def _load_observer() -> tuple[ctypes.CDLL, bool]:
    """libhwprof-torch.so loaded and the modules hooked: the library, and whether it observes.
    Where it cannot be, one line and status 2: a profiler that silently profiles nothing is
    worse than none."""
    try:
        from hwprof import torch as hwprof_torch
        observing = hwprof_torch.install()
        return hwprof_torch._load(), observing
    except ImportError as e:
        problem = f"cannot import torch: {e}"
    except Exception as e:  # the library missing, of another version, or not a library
        problem = str(e).removeprefix("hwprof.torch: ")
    print(f"hwprof.torch: {problem}; the script was not run", file=sys.stderr)
    sys.exit(2)


def _as_main_module(path: str | None, loader: importlib.abc.Loader | None) -> types.ModuleType:
    """A fresh `__main__` module, in sys.modules, as Python makes it for a script: classes the
    script defines pickle by it (DataLoader workers, multiprocessing)."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__loader__=loader, __annotations__={}, __builtins__=builtins, __file__=path, __cached__=None)
    sys.modules["__main__"] = main
    return main


def _run(script: str, code: types.CodeType | None, args: list[str]) -> None:
    """Runs the script as `python3 script.py args` would."""
    path = _as_python_sees(script)
    sys.argv = [script] + args
    # -m put the current folder first; Python puts the script's (its real folder), or for a
    # folder or zip file the path itself. -P (safe_path) puts neither.
    if not sys.flags.safe_path:
        sys.path[0] = os.path.dirname(os.path.realpath(path)) if code is not None else path
    try:
        if code is None:
            import runpy
            _as_main_module(None, None)
            runpy._run_module_as_main("__main__", alter_argv=False)  # type: ignore[attr-defined]  # what `python3 DIR` runs
        else:
            from importlib.machinery import SourceFileLoader, SourcelessFileLoader
            loader = (SourcelessFileLoader if _is_pyc(path) else SourceFileLoader)("__main__", path)
            exec(code, _as_main_module(path, loader).__dict__)
    except SystemExit:
        raise  # Python says what sys.exit was given, and exits with it
    except BaseException:
        _endings.show_exception_as_python({__file__, _endings.__file__})  # a KeyboardInterrupt too: Python then dies by SIGINT
        raise


def main() -> None:
    parser = _parser()
    options = parser.parse_args()
    if not options.command:
        parser.error("the script to run is missing")
    options.script, options.args = options.command[0], options.command[1:]
    code = _script_code(options.script)
    output = os.path.abspath(options.output)
    problem = _output_problem(output)
    if problem is not None:
        print(f"hwprof.torch: -o {options.output}: {problem}; the script was not run", file=sys.stderr)
        sys.exit(2)
    _set_environment(options, output)
    lib, observing = _load_observer()
    if observing:
        _endings.arm(lib, options.script, options.output)
    elif os.environ.get("HWPROF_DISABLE", "0") not in ("", "0"):
        print(f"hwprof.torch: HWPROF_DISABLE is set: {options.script} runs unmeasured, nothing is written", file=sys.stderr)
    else:  # the observer said why on stderr
        print("hwprof.torch: the PyTorch observer did not start; the script was not run", file=sys.stderr)
        sys.exit(2)
    _run(options.script, code, options.args)


if __name__ == "__main__":
    main()
