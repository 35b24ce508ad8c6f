"""The vocabulary of the hostile-input suite: what a case is, and how it says what must hold.

A case is data: the files to lay out in a fresh directory, the command line, and what must
be true afterwards (exit code, messages, files). `run_hostile.py` runs them; the modules in
`cases/` list them, one module per category.
"""

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

# Never in hwprof's stderr, whatever the input: a crash, an escaped exception or a sanitizer
# report. "terminate" is matched as a word ("terminate called after throwing ..."), so a
# report that says a program was "terminated" by a signal is not mistaken for one.
FORBIDDEN_STDERR = (r"internal error", r"std::", r"\bterminate\b", r"Sanitizer", r"runtime error")

# The classes of problem the suite was first written against, by the number a case's
# `finding` gives: `--list` and a failure name the class.
FINDINGS = {
    1: "outputs: -o replaces a regular file only, keeping its mode; links, devices and FIFOs kept",
    2: "programs and lists: stat hands everything after -- to its program (streams, exit code, signal); "
       "one -e list per option",
    3: "models too large for memory refused before they run",
    4: "input files checked for type and size before reading (directories, devices, FIFOs, 3 GiB)",
    5: "JSON nesting limited in every reader",
    6: "-e splits only outside a raw event's terms",
    7: "stat forwards SIGTERM, SIGHUP and SIGINT to its program",
    8: "the rest: pipes as inputs, the machine store, NUL bytes, uncounted events, unknown "
       "subcommands, values out of range, empty and missing output paths",
}

# The quickest runs that still execute a model on the engine.
FAST_RUN = ["--threads", "1", "--iterations", "1", "--warmup", "0"]

# --- what lies in the case's directory before the run -----------------------------------


@dataclass
class File:
    """A regular file with this content (str is UTF-8) and, optionally, this mode."""
    content: Union[str, bytes, Callable[["Any"], Union[str, bytes]]] = ""
    mode: Optional[int] = None


@dataclass
class Dir:
    """A directory (its parents are created too)."""


@dataclass
class Symlink:
    """A symbolic link; the target is written as given (relative to the link's folder)."""
    target: str


@dataclass
class Fifo:
    """A named pipe (nobody reads or writes it unless the case's setup starts a thread)."""


@dataclass
class Node:
    """A character device made with mknod (root only): 'null' (1, 3) or 'full' (1, 7)."""
    kind: str


@dataclass
class Sparse:
    """A sparse file of this many bytes (os.truncate: no disk space used)."""
    size: int


# --- what must hold afterwards -------------------------------------------------------------


@dataclass
class Expect:
    """A path in the case's directory after the run.

    kind: 'file', 'dir', 'symlink', 'char', 'fifo', 'absent' (lstat: a link is a link).
    contains: regexes the content must match (read through a link).
    unchanged: same type, content and mode as before the run.
    mode: the permission bits (e.g. 0o640).
    link_target: for a symlink, what it still points at.
    """
    path: str
    kind: Optional[str] = None
    contains: Sequence[str] = ()
    unchanged: bool = False
    mode: Optional[int] = None
    link_target: Optional[str] = None


@dataclass
class Case:
    """One hostile input and what hwprof must do with it.

    args: hwprof's arguments (no shell). '@{name}' is replaced by a value of the run: dir (the
      case's directory), machine (this machine's calibration report), or one the setup added.
    rc: the exit code expected (an int, or a tuple of acceptable ones).
    stderr / stdout: regexes (re.search, multiline) that must match; *_not: must not match.
    files: name -> str/bytes/callable(ctx) (a regular file) or File/Dir/Symlink/Fifo/Node/Sparse.
    setup: callable(ctx) run after the files exist (threads, pipes, extra variables).
    check: callable(ctx, result) -> list of failure strings, for what the rest cannot say.
    env: variables to set (None: unset) on top of the suite's own.
    timeout: seconds before hwprof is killed and the case fails.
    max_rss_mb: bound on hwprof's peak RSS without ASan; max_rss_mb_asan with it.
    needs: 'root', 'machine' (a calibration of this machine), 'profile' (a saved profile.json).
    finding: the class of problem (a key of FINDINGS) the case was written for, if any.
    run_as_uid: run hwprof as this user (root only), e.g. one with no home directory.
    program: 'hwprof', or 'regions': the suite's user program linked with hwprof::regions
      (tests/hostile/regions_driver.cpp), with HWPROF_REPORT_MODULE set to the build's module.
    address_space: a tighter `prlimit --as` in bytes (skipped under ASan, whose shadow memory
      needs far more address space).
    category: set from the module that lists the case.
    """
    name: str
    args: Sequence[Any]
    rc: Union[int, tuple] = 0
    stderr: Sequence[str] = ()
    stderr_not: Sequence[str] = ()
    stdout: Sequence[str] = ()
    stdout_not: Sequence[str] = ()
    files: dict = field(default_factory=dict)
    expect: Sequence[Expect] = ()
    setup: Optional[Callable] = None
    check: Optional[Callable] = None
    env: dict = field(default_factory=dict)
    timeout: float = 30.0
    max_rss_mb: Optional[int] = None
    max_rss_mb_asan: Optional[int] = None
    needs: frozenset = frozenset()
    finding: Optional[int] = None
    run_as_uid: Optional[int] = None
    program: str = "hwprof"
    address_space: Optional[int] = None
    category: str = ""


# --- helpers for case modules ----------------------------------------------------------------


def esc(text: str) -> str:
    """A literal piece of a regex."""
    return re.escape(text)


def spec(*layers, shape=(4,), dtype=None, **top) -> str:
    """A model spec as indented JSON (so that messages have meaningful line numbers)."""
    model = {"name": "hostile", "input": {"shape": list(shape)}, "layers": list(layers)}
    if dtype is not None:
        model["input"]["dtype"] = dtype
    model.update(top)
    return json.dumps(model, indent=2) + "\n"


def group(events: Sequence[str], metrics: Sequence[str] = (), header: Optional[str] = None) -> str:
    """An event-group file: three header lines, EVENTS at line 4 (its events from line 5),
    then METRICS and its lines, with no blank lines, so that line numbers are easy to predict."""
    text = header if header is not None else "TITLE hostile\nSCOPE software\nFAMILIES software\n"
    text += "EVENTS\n" + "".join(e + "\n" for e in events)
    if metrics:
        text += "METRICS\n" + "".join(m + "\n" for m in metrics)
    return text


def mutated_json(which: str, change: Callable[[dict], None]) -> Callable:
    """File content: the run's machine report ('machine') or saved profile ('profile'), changed."""

    def make(ctx):
        document = json.loads(ctx.fixture_text(which))
        change(document)
        return json.dumps(document, indent=2) + "\n"

    return make


def replaced_json(which: str, old: str, new: str) -> Callable:
    """File content: a fixture's indented JSON text with one literal replacement (for what
    json cannot write, such as NaN in a place, or a duplicate key)."""

    def make(ctx):
        text = json.dumps(json.loads(ctx.fixture_text(which)), indent=2) + "\n"
        if old not in text:
            raise AssertionError(f"fixture {which} has no {old!r} to replace")
        return text.replace(old, new, 1)

    return make


def fixture(which: str, cut: Optional[int] = None) -> Callable:
    """File content: a fixture's text, whole or cut after `cut` bytes."""

    def make(ctx):
        text = ctx.fixture_text(which)
        return text if cut is None else text[:cut]

    return make


def model_text(name: str) -> Callable:
    """File content: a built-in model spec from the source tree's models/."""

    def make(ctx):
        return (ctx.source_dir / "models" / f"{name}.json").read_text()

    return make


def deep_nesting(opener: str, count: int = 100000) -> bytes:
    return (opener * count).encode()


def in_pipe(name_var: str, content: Callable) -> Callable:
    """A setup: a pipe whose read end hwprof inherits, holding `content`, as /dev/fd/N in
    @{name_var}."""

    def setup(ctx):
        data = content(ctx)
        ctx.vars[name_var] = ctx.pipe_holding(data.encode() if isinstance(data, str) else data)

    return setup


def in_category(category: str, cases: Sequence[Case]) -> list:
    for c in cases:
        c.category = category
    names = [c.name for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise AssertionError(f"{category}: duplicate case names {sorted(duplicates)}")
    unknown = sorted({c.name for c in cases if c.finding is not None and c.finding not in FINDINGS})
    if unknown:
        raise AssertionError(f"{category}: cases {unknown} give a finding that FINDINGS does not name")
    return list(cases)


def store_name(machine: dict) -> str:
    """The file name hwprof gives this machine's report in the store (machine_store_path in
    src/machine/machine_probe.cpp): host--brand-fFAMILYmMODEL-Ncpu.json, each of host and
    brand reduced to letters, digits, '.', '_' and single '-'."""

    def clean(text: str) -> str:
        out = ""
        for ch in text:
            if (ch.isascii() and ch.isalnum()) or ch in "._":
                out += ch
            elif out and not out.endswith("-"):
                out += "-"
        out = out.rstrip("-")
        return out or "unknown"

    cpu = machine["cpu"]
    return (f"{clean(machine['host'])}--{clean(cpu['model'])}-f{cpu['family']}m{cpu['model_number']}-"
            f"{cpu['logical_cpus']}cpu.json")


def is_root() -> bool:
    return os.geteuid() == 0


# --- setups that run beside hwprof ----------------------------------------------------------


def fifo_reader(name: str) -> Callable:
    """A setup: a FIFO `name` with a reader that is already there when hwprof starts and reads
    until hwprof has exited; what it read is ctx.results[name] (bytes)."""
    import select
    import time

    def setup(ctx):
        path = ctx.dir / name
        if not path.exists():
            os.mkfifo(path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        chunks = []

        def read(_pid):
            try:
                while True:
                    ready, _, _ = select.select([fd], [], [], 0.05)
                    data = os.read(fd, 65536) if ready else b""
                    if data:
                        chunks.append(data)
                        continue
                    if ctx.finished.is_set():
                        break
                    if ready:  # end of file while no writer is connected yet
                        time.sleep(0.01)
            finally:
                os.close(fd)
                ctx.results[name] = b"".join(chunks)

        ctx.during.append(read)

    return setup


def fifo_got(name: str, *patterns: str) -> Callable:
    """A check: the FIFO's reader received text matching each pattern."""

    def check(ctx, _result):
        text = ctx.results.get(name, b"").decode("utf-8", errors="replace")
        return [f"the reader of {name} got {len(text)} bytes, lacking /{p}/" for p in patterns
                if re.search(p, text, re.MULTILINE) is None]

    return check


def children_of(pid: int) -> list:
    """The processes whose parent is `pid` (from /proc/*/stat)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def running(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def comm(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return ""


def send_signal(number: int, program: str, settle: float = 0.3, wait: float = 3.0) -> Callable:
    """A setup: once hwprof runs `program` (its child has exec'd it; at most `wait` seconds),
    and `settle` seconds later, send hwprof (not the program) signal `number`. The program's
    pids go to ctx.results['children']; those still running once hwprof has exited go to
    ctx.results['orphans']."""
    import time

    def setup(ctx):
        ctx.results["children"] = []

        def send(pid):
            deadline = time.monotonic() + wait
            while not ctx.finished.is_set() and time.monotonic() < deadline:
                children = [c for c in children_of(pid) if comm(c) == program]
                if children:
                    ctx.results["children"] = children
                    break
                time.sleep(0.02)
            if not ctx.finished.wait(settle):
                try:
                    os.kill(pid, number)
                except ProcessLookupError:
                    pass

        def look():
            ctx.results["orphans"] = [p for p in ctx.results.get("children", []) if running(p)]

        ctx.during.append(send)
        ctx.after_exit.append(look)

    return setup


def no_orphan(ctx, _result):
    orphans = ctx.results.get("orphans")
    if not ctx.results.get("children"):
        return ["hwprof had not started the program within 3 s"]
    return [f"the program (pid {', '.join(map(str, orphans))}) still ran after hwprof exited: the signal was not "
            "forwarded"] if orphans else []
