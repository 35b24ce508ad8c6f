"""Every way a script under `python3 -m hwprof.torch` ends writes its reports, and then ends
as Python itself would have ended it (docs/torch.md, "How a script ends").

Python runs C at-exit handlers only after a normal exit: an uncaught KeyboardInterrupt ends
the interpreter by killing it with SIGINT after finalization, and SIGTERM's and SIGHUP's
default action kills it outright. So the reports are written from Python instead: by an
at-exit callback registered before the script runs (it runs after the script's own), and by
a handler of SIGTERM and SIGHUP where the script leaves them at their default, which writes
and then dies by the signal's default action. `hwprof_write_output()` (<hwprof/regions.h>)
writes what the library's at-exit handler would have written, and disarms it.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import NoReturn

# Signals whose default action ends the process without Python's finalization.
_FATAL = (signal.SIGTERM, signal.SIGHUP)
_NOTHING_TO_WRITE = 1  # hwprof_write_output's answers (<hwprof/regions.h>)


@dataclass
class _State:
    lib: ctypes.CDLL | None = None
    pid: int | None = None
    done: bool = False
    script: str = ""
    output: str = ""


_state = _State()


def arm(lib: ctypes.CDLL, script: str, output: str) -> None:
    """Before the script runs: the at-exit callback, and the handlers of the fatal signals the
    script's process leaves at their default action (an inherited SIG_IGN, as under nohup,
    stays). A script that installs its own handler later replaces ours."""
    _state.lib, _state.pid, _state.script, _state.output = lib, os.getpid(), script, output
    for name in ("hwprof_write_output", "hwprof_torch_observed_ops"):
        function = getattr(lib, name, None)  # absent from an older library: see _write
        if function is not None:
            function.argtypes = []
            function.restype = ctypes.c_int
    atexit.register(_at_exit)
    for signum in _FATAL:
        if signal.getsignal(signum) == signal.SIG_DFL:
            signal.signal(signum, _on_fatal_signal)


def _write() -> None:
    """Writes the reports once; says when the script ran no PyTorch op."""
    lib = _state.lib
    if _state.done or lib is None:
        return
    _state.done = True
    write = _holding_the_gil(lib, "hwprof_write_output")
    # Without it (a library older than the package), the library's at-exit handler writes
    # after a normal end and nothing is written after a signal.
    result = write() if write is not None else None
    # A signal that stopped the writing (result 128 + N) is not delivered: the ending goes on.
    ops = _observed_ops(lib)
    if ops == 0 or (ops is None and result == _NOTHING_TO_WRITE):
        written = "nothing was written to " + _state.output if result == _NOTHING_TO_WRITE else "its report has no op rows"
        print(f"hwprof.torch: {_state.script} ran no PyTorch op: {written}", file=sys.stderr)


def _holding_the_gil(lib: ctypes.CDLL, name: str) -> Callable[[], int] | None:
    """The library's `int name(void)`, called without releasing the GIL (ctypes' CDLL functions
    release it), or None where the library lacks it. The reports are written by a forked child:
    a Python thread that ran while the GIL was released could be inside malloc at the fork, and
    an allocator without fork handlers (AddressSanitizer's before LLVM 17) then leaves its lock
    held in the child, which waits on it until stopped. Holding the GIL keeps them out."""
    if getattr(lib, name, None) is None:
        return None
    return ctypes.PYFUNCTYPE(ctypes.c_int)((name, lib))


def _observed_ops(lib: ctypes.CDLL) -> int | None:
    """How many op calls the observer saw, or None where the library does not say."""
    count = getattr(lib, "hwprof_torch_observed_ops", None)
    return int(count()) if count is not None else None


def _at_exit() -> None:
    """Normal end, sys.exit, an uncaught exception or KeyboardInterrupt: Python finalizes,
    runs this after the script's own at-exit callbacks, then exits with the script's status
    (killing itself with SIGINT after a KeyboardInterrupt)."""
    _write()


def _on_fatal_signal(signum: int, frame: FrameType | None) -> None:
    # A forked child (a DataLoader worker, os.fork) ends as it would have without hwprof:
    # its parent's handler is not its own.
    if os.getpid() == _state.pid:
        _write()
    die_by(signum)


def die_by(signum: int) -> NoReturn:
    """Ends the process by `signum`'s default action, as without a handler. Python's buffered
    output not yet flushed is lost, as it would be."""
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    signal.raise_signal(signum)
    os._exit(128 + signum)  # not reached unless the signal could not end the process


def show_exception_as_python(launcher_files: set[str]) -> None:
    """Before an exception leaves the launcher: the traceback Python prints (through the hook
    in place, the script's own if it set one) starts at the script, as for `python3 script.py`,
    without the frames of runpy and of `launcher_files`."""
    original = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        tb = _from_script(tb, launcher_files)
        if isinstance(value, BaseException):
            value = value.with_traceback(tb)  # Python's own hook prints the exception's traceback
        original(kind, value, tb)

    sys.excepthook = hook


def _from_script(tb: TracebackType | None, launcher_files: set[str]) -> TracebackType | None:
    """The traceback from the script's first frame: the launcher's and runpy's frames above it
    dropped (all kept where the script has no frame in it: the launcher's own error)."""
    first = tb
    while first is not None:
        name = first.tb_frame.f_code.co_filename
        if name not in launcher_files and not name.startswith("<frozen runpy") and not name.endswith("runpy.py"):
            return first
        first = first.tb_next
    return tb
