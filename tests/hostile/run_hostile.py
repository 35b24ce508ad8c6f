#!/usr/bin/env python3
"""hwprof's hostile-input suite: every case lays out files in a fresh directory, runs hwprof
there (no shell; the real machine store is never read or written: XDG_DATA_HOME and HOME
point into the directory), and checks the exit code, the messages, the files left behind,
and bounds on time and memory.

  run_hostile.py --hwprof PATH [--asan] [--category NAME] [--case REGEX] [--list]
                 [--machine FILE] [--jobs N] [--keep] [--verbose]
  run_hostile.py --hwprof PATH --make-machine FILE

Time: each case has a timeout (default 30 s); hwprof is killed and the case fails past it.
Memory: without --asan hwprof runs under `prlimit --as=4294967296` (4 GiB of address space);
with --asan, whose shadow memory needs far more address space, ASan's own
hard_rss_limit_mb=2048 and the peak RSS from wait4() bound it instead. Either way a
regression fails rather than swaps.

Exit status: 0 when every case that ran passed, 77 when every selected case was skipped
(ctest's SKIP_RETURN_CODE), 1 otherwise. Cases that need root say why they were skipped.
"""

import argparse
import concurrent.futures
import importlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # ctest runs this from the source tree: leave no __pycache__ there

import hostile_case as hc  # noqa: E402

CATEGORIES = ("specs", "calibrations", "profiles", "groups", "events", "cli", "outputs", "stat", "onnx", "merge", "compare",
              "regions")
ADDRESS_SPACE_LIMIT = 4 * 1024**3
ASAN_RSS_LIMIT_MB = 2048
SOURCE_DIR = HERE.parent.parent


class SkipCase(Exception):
    pass


class Session:
    """What all cases of one run share: the binary, the scratch root, and the fixtures (a
    calibration of this machine, a saved profile), each made once, when first needed."""

    def __init__(self, hwprof, asan, machine, keep, regions_driver=None, report_module=None):
        self.prlimit = shutil.which("prlimit")
        if self.prlimit is None:
            raise SystemExit("run_hostile.py: prlimit (util-linux) is needed to bound hwprof's memory")
        self.hwprof = hwprof
        self.regions_driver = regions_driver
        self.report_module = report_module
        self.asan = asan
        self.keep = keep
        self.machine_arg = machine
        self.root = Path(tempfile.mkdtemp(prefix="hwprof-hostile-"))
        os.chmod(self.root, 0o755)  # a case run under another uid must reach its directory
        self._fixtures = {}
        self._fixture_errors = {}
        self._fixture_lock = threading.Lock()  # cases running at once make each fixture once

    def close(self):
        if not self.keep:
            remove_tree(self.root)
        else:
            print(f"kept {self.root}")

    # -- environment and limits ----------------------------------------------------------

    def environment(self, case_dir, overrides):
        env = {k: v for k, v in os.environ.items() if not k.startswith("HWPROF_")}
        env.update(XDG_DATA_HOME=str(case_dir), HOME=str(case_dir), LC_ALL="C.UTF-8", LANG="C.UTF-8")
        if self.asan:
            options = env.get("ASAN_OPTIONS", "")
            env["ASAN_OPTIONS"] = (options + ":" if options else "") + f"hard_rss_limit_mb={ASAN_RSS_LIMIT_MB}"
        for key, value in overrides.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def command(self, argv, address_space=None):
        """argv under the memory limit: `prlimit --as` without ASan (whose shadow memory needs
        far more address space; ASan's hard_rss_limit_mb and wait4's peak RSS bound it instead),
        and no core files either way. prlimit execs hwprof in its own process: the pid is hwprof's."""
        limits = ["--core=0"] if self.asan else [f"--as={address_space or ADDRESS_SPACE_LIMIT}", "--core=0"]
        return [self.prlimit] + limits + ["--"] + argv

    # -- fixtures ------------------------------------------------------------------------

    def fixture_path(self, which):
        with self._fixture_lock:
            if which in self._fixture_errors:
                raise RuntimeError(self._fixture_errors[which])
            if which not in self._fixtures:
                try:
                    self._fixtures[which] = self._make(which)
                except RuntimeError as error:
                    self._fixture_errors[which] = str(error)
                    raise
            return self._fixtures[which]

    def fixture_text(self, which):
        return self.fixture_path(which).read_text()

    def _make(self, which):  # called with the lock held; "profile" makes "machine" itself
        if which == "machine":
            if self.machine_arg and usable_machine(Path(self.machine_arg)):
                return Path(self.machine_arg).resolve()
            path = self.root / "fixture-machine.json"
            make_machine(self.hwprof, path, self.root / "fixture-store")
            return path
        if which == "profile":
            machine = self._fixtures.get("machine") or self._make("machine")
            self._fixtures["machine"] = machine
            out = self.root / "fixture-profile"
            command = [self.hwprof, "profile", "lenet5", "--threads", "1", "--iterations", "2", "--warmup", "0",
                       "--calibration", str(machine), "-o", str(out)]
            r = subprocess.run(command, capture_output=True, env=self.environment(self.root, {}), timeout=300,
                               cwd=self.root)
            if r.returncode != 0 or not (out / "profile.json").exists():
                raise RuntimeError("fixture: `hwprof profile lenet5 -o DIR` failed (exit %d): %s" %
                                   (r.returncode, r.stderr.decode(errors="replace")[-800:]))
            return out / "profile.json"
        raise KeyError(which)


def usable_machine(path):
    try:
        return "cpu" in json.loads(path.read_text())
    except (OSError, ValueError):
        return False


def make_machine(hwprof, path, store, attempts=3):
    """A quick calibration of this machine, one thread, kept even if neighbours disturb it;
    tried again when it comes out implausible (a busy machine)."""
    store.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HWPROF_")}
    env.update(XDG_DATA_HOME=str(store), HOME=str(store))
    last = ""
    for _ in range(attempts):
        temp = path.with_name(path.name + ".part")
        r = subprocess.run([hwprof, "calibrate", "--quick", "--allow-contended", "--threads", "1", "-o", str(temp),
                            "--svg", str(store / "machine.svg")], capture_output=True, env=env, timeout=600)
        if r.returncode == 0 and usable_machine(temp):
            os.replace(temp, path)
            return
        last = "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-800:])
    raise RuntimeError("fixture: `hwprof calibrate --quick` failed %d times; last %s" % (attempts, last))


def remove_tree(path):
    def on_error(func, name, _):
        try:
            os.chmod(os.path.dirname(name), 0o755)
            func(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=on_error)


# -- one case ----------------------------------------------------------------------------


class Context:
    """What a case's setup and checks see: its directory, variables for '@{...}', fixtures,
    and hooks into the run (descriptors to pass, threads to start beside hwprof)."""

    def __init__(self, session, case, directory):
        self.session = session
        self.case = case
        self.dir = directory
        self.source_dir = SOURCE_DIR
        self.vars = {"dir": str(directory), "hwprof": session.hwprof}
        self.pass_fds = []
        self.close_after_start = []
        self.during = []  # callables(pid), each in its own thread once hwprof runs
        self.results = {}  # what `during` threads leave for checks
        self.finished = threading.Event()  # set once hwprof has exited
        self.after_exit = []  # callables(), run once hwprof is reaped, before its session is killed

    def fixture_text(self, which):
        return self.session.fixture_text(which)

    def pipe_holding(self, data):
        """A pipe hwprof inherits, holding `data` (written by a thread, then closed)."""
        read_end, write_end = os.pipe()
        self.pass_fds.append(read_end)
        self.close_after_start.append(read_end)

        def feed():
            try:
                with os.fdopen(write_end, "wb") as w:
                    w.write(data)
            except OSError:
                pass

        thread = threading.Thread(target=feed, daemon=True)
        thread.start()
        return f"/dev/fd/{read_end}"

    def close_passed_descriptors(self):
        while self.close_after_start:
            os.close(self.close_after_start.pop())


def expand(value, ctx, regex=False):
    """'@{name}' replaced by the run's value (escaped when `value` is a regex)."""
    if callable(value):
        value = value(ctx)
    if not isinstance(value, str):
        return value
    quote = re.escape if regex else (lambda text: text)
    return re.sub(r"@\{(\w+)\}", lambda m: quote(ctx.vars[m.group(1)]), value)


def lay_out(ctx, files):
    for name, item in files.items():
        path = ctx.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(item) or isinstance(item, (str, bytes)):
            item = hc.File(item)
        if isinstance(item, hc.File):
            content = item.content(ctx) if callable(item.content) else item.content
            path.write_bytes(content.encode() if isinstance(content, str) else content)
            if item.mode is not None:
                os.chmod(path, item.mode)
        elif isinstance(item, hc.Dir):
            path.mkdir(parents=True, exist_ok=True)
        elif isinstance(item, hc.Symlink):
            os.symlink(expand(item.target, ctx), path)
        elif isinstance(item, hc.Fifo):
            os.mkfifo(path)
        elif isinstance(item, hc.Sparse):
            with open(path, "wb"):
                pass
            os.truncate(path, item.size)
        elif isinstance(item, hc.Node):
            numbers = {"null": (1, 3), "full": (1, 7)}[item.kind]
            try:
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*numbers))
            except PermissionError as error:
                raise SkipCase(f"cannot make the {item.kind} device node ({error.strerror})")
        else:
            raise TypeError(f"{name}: unknown file kind {item!r}")


def describe(path, with_content=True):
    """(kind, mode, content, link target) of a path, without following a last link for the
    kind, following it for the content (a regular file's, when asked)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ("absent", None, None, None)
    if stat.S_ISLNK(st.st_mode):
        kind, target = "symlink", os.readlink(path)
    else:
        kind, target = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFCHR: "char", stat.S_IFIFO: "fifo",
                        stat.S_IFBLK: "block", stat.S_IFSOCK: "socket"}.get(stat.S_IFMT(st.st_mode), "?"), None
    content = None
    try:
        if with_content and stat.S_ISREG(os.stat(path).st_mode):
            with open(path, "rb") as f:
                content = f.read(64 * 1024 * 1024)
    except OSError:
        pass
    return (kind, stat.S_IMODE(st.st_mode), content, target)


class Result:
    def __init__(self):
        self.rc = None
        self.signal = None
        self.timed_out = False
        self.seconds = 0.0
        self.max_rss_mb = 0.0
        self.stdout = ""
        self.stderr = ""


def spawn_and_wait(ctx, argv, env):
    case, session = ctx.case, ctx.session
    result = Result()
    kwargs = {}
    if case.run_as_uid is not None:
        kwargs.update(user=case.run_as_uid, group=case.run_as_uid, extra_groups=[])
    start = time.monotonic()
    proc = subprocess.Popen(session.command(argv, case.address_space), cwd=ctx.dir, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=ctx.pass_fds,
                            start_new_session=True, **kwargs)
    ctx.close_passed_descriptors()
    captured = {}

    def drain(name, stream):
        chunks = []
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
        captured[name] = b"".join(chunks)

    readers = [threading.Thread(target=drain, args=(n, s), daemon=True)
               for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))]
    helpers = [threading.Thread(target=hook, args=(proc.pid,), daemon=True) for hook in ctx.during]
    for t in readers + helpers:
        t.start()

    # Wait without reaping (WNOWAIT): while hwprof is a zombie its pid, and so its process
    # group's id, cannot be reused, so killing the group afterwards hits only what it left.
    deadline = start + case.timeout
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() > deadline:
            result.timed_out = True
            kill_group(proc.pid)
            break
        time.sleep(0.01)
    result.seconds = time.monotonic() - start
    ctx.finished.set()
    for hook in ctx.after_exit:
        hook()
    kill_group(proc.pid)  # whatever hwprof left running in its session (an orphaned program)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = -1  # reaped here (wait4, for its rusage): Popen must not wait again
    for t in helpers:
        t.join(timeout=5)
    for t in readers:
        t.join(timeout=5)
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    if os.WIFEXITED(status):
        result.rc = os.WEXITSTATUS(status)
    elif os.WIFSIGNALED(status):
        result.signal = os.WTERMSIG(status)
        result.rc = -result.signal
    result.max_rss_mb = usage.ru_maxrss / 1024.0 if usage else 0.0
    result.stdout = captured.get("stdout", b"").decode("utf-8", errors="replace")
    result.stderr = captured.get("stderr", b"").decode("utf-8", errors="replace")
    return result


def kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def leftover_temporaries(directory):
    found = []
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            if re.search(r"\.tmp\.", name):
                found.append(os.path.relpath(os.path.join(root, name), directory))
    return found


def check_result(ctx, result, before):
    case, session = ctx.case, ctx.session
    failures = []
    expected = case.rc if isinstance(case.rc, tuple) else (case.rc,)
    if result.timed_out:
        failures.append(f"did not finish within {case.timeout:g} s (killed)")
    elif result.signal is not None:
        failures.append(f"hwprof was killed by {signal.Signals(result.signal).name}; expected exit {case.rc}")
    elif result.rc not in expected:
        failures.append(f"exit code {result.rc}, expected {' or '.join(map(str, expected))}")

    def search(patterns, text, where, present):
        for p in patterns:
            pattern = expand(p, ctx, regex=True)
            if (re.search(pattern, text, re.MULTILINE) is not None) != present:
                failures.append(f"{where} {'lacks' if present else 'contains'} /{pattern}/")

    search(case.stderr, result.stderr, "stderr", True)
    search(tuple(case.stderr_not) + hc.FORBIDDEN_STDERR, result.stderr, "stderr", False)
    search(case.stdout, result.stdout, "stdout", True)
    search(case.stdout_not, result.stdout, "stdout", False)

    limit = case.max_rss_mb_asan if session.asan else case.max_rss_mb
    if session.asan:
        limit = min(limit or ASAN_RSS_LIMIT_MB, ASAN_RSS_LIMIT_MB)
    if limit is not None and result.max_rss_mb > limit:
        failures.append(f"peak RSS {result.max_rss_mb:.0f} MB exceeds {limit} MB")

    leftovers = leftover_temporaries(ctx.dir)
    if leftovers:
        failures.append("half-written files left: " + ", ".join(leftovers))

    for e in case.expect:
        path = ctx.dir / expand(e.path, ctx)
        kind, mode, content, target = describe(path, with_content=bool(e.contains or e.unchanged))
        if e.unchanged and (kind, mode, content, target) != before[e.path]:
            was = before[e.path]
            failures.append(f"{e.path} changed: was {was[0]} mode {oct(was[1] or 0)} ({len(was[2] or b'')} bytes), "
                            f"now {kind} mode {oct(mode or 0)} ({len(content or b'')} bytes)")
        if e.kind is not None and kind != e.kind:
            failures.append(f"{e.path} is {kind if kind != 'absent' else 'absent'}, expected {e.kind}")
        if e.mode is not None and mode != e.mode:
            failures.append(f"{e.path} has mode {oct(mode or 0)}, expected {oct(e.mode)}")
        if e.link_target is not None and target != expand(e.link_target, ctx):
            failures.append(f"{e.path} points at {target!r}, expected {expand(e.link_target, ctx)!r}")
        text = (content or b"").decode("utf-8", errors="replace")
        for p in e.contains:
            pattern = expand(p, ctx, regex=True)
            if re.search(pattern, text, re.MULTILINE) is None:
                failures.append(f"{e.path} lacks /{pattern}/ ({len(content or b'')} bytes)")
    if case.check is not None:
        failures.extend(case.check(ctx, result) or [])
    return failures


def run_case(session, case):
    """(status, seconds, max RSS MB, failures, result)"""
    if "root" in case.needs and not hc.is_root():
        why = ("to make device nodes (mknod)" if any(isinstance(f, hc.Node) for f in case.files.values())
               else "to run hwprof as a user without a home directory")
        return ("SKIP", 0.0, 0.0, [f"needs root {why}"], None)
    directory = Path(tempfile.mkdtemp(prefix=case.name.replace("/", "-") + "-", dir=session.root))
    ctx = Context(session, case, directory)
    try:
        for which in ("machine", "profile"):
            if which in case.needs:
                ctx.vars[which] = str(session.fixture_path(which))
        lay_out(ctx, case.files)
        if case.setup is not None:
            case.setup(ctx)
        if case.run_as_uid is not None:
            os.chmod(directory, 0o777)
        before = {e.path: describe(ctx.dir / expand(e.path, ctx)) for e in case.expect if e.unchanged}
        if case.address_space is not None and session.asan:
            raise SkipCase("an address-space limit cannot apply under ASan (its shadow memory needs far more)")
        env = dict(case.env)
        if case.program == "regions":
            if session.regions_driver is None:
                raise SkipCase("no regions driver was given (--regions-driver)")
            program = session.regions_driver
            if session.report_module is not None:
                env.setdefault("HWPROF_REPORT_MODULE", session.report_module)
        else:
            program = session.hwprof
        argv = [program] + [expand(a, ctx) for a in case.args]
        result = spawn_and_wait(ctx, argv, session.environment(directory, env))
        failures = check_result(ctx, result, before)
        return ("FAIL" if failures else "PASS", result.seconds, result.max_rss_mb, failures, result)
    except SkipCase as why:
        return ("SKIP", 0.0, 0.0, [str(why)], None)
    except RuntimeError as error:  # a fixture could not be made
        return ("FAIL", 0.0, 0.0, [str(error)], None)
    finally:
        ctx.close_passed_descriptors()
        if not session.keep:
            remove_tree(directory)


# -- the command line ------------------------------------------------------------------------


def load_cases():
    cases = []
    for category in CATEGORIES:
        module = importlib.import_module(f"cases.{category}")
        cases.extend(hc.in_category(category, module.CASES))
    return cases


def tail(text, lines=12, chars=2500):
    """The last lines of an output, control characters escaped (a log stays text)."""
    text = "\n".join(text.rstrip("\n").splitlines()[-lines:])[-chars:]
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", lambda m: "\\x%02x" % ord(m.group()), text)


def default_signal_dispositions():
    """A runner started with SIGINT, SIGTERM or SIGHUP ignored (a background job of a
    non-interactive shell) would pass that on to hwprof, and the signal cases would test
    nothing: restore the defaults (exec resets handled signals to default, not ignored ones)."""
    for number, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL),
                            (signal.SIGHUP, signal.SIG_DFL)):
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, default)


def report_case(case, outcome, counts, failed, verbose):
    status, seconds, rss, failures, result = outcome
    counts[status] += 1
    name = f"{case.category}/{case.name}"
    print(f"{status:4}  {name:58} {seconds:6.2f} s {rss:7.0f} MB")
    if status == "SKIP":
        print(f"      skipped: {failures[0]}")
    if status == "FAIL":
        failed.append(name + (f" (finding {case.finding}: {hc.FINDINGS[case.finding]})" if case.finding else ""))
        for f in failures:
            print(f"      - {f}")
    if result is not None and (status == "FAIL" or verbose):
        if result.stderr.strip():
            print("      stderr: " + tail(result.stderr).replace("\n", "\n              "))
        if status == "FAIL" and result.stdout.strip():
            print("      stdout: " + tail(result.stdout, 6, 800).replace("\n", "\n              "))
    sys.stdout.flush()


def main():
    default_signal_dispositions()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hwprof", required=True, help="the hwprof binary")
    parser.add_argument("--asan", action="store_true", help="the binary is built with AddressSanitizer")
    parser.add_argument("--category", action="append", default=[], help="run one category (repeatable)")
    parser.add_argument("--case", help="run the cases whose name matches this regex")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--machine", help="a calibration of this machine (default: made once, quickly)")
    parser.add_argument("--make-machine", metavar="FILE", help="make that calibration into FILE and exit")
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    parser.add_argument("--keep", action="store_true", help="keep the cases' directories")
    parser.add_argument("--verbose", action="store_true", help="print every case's stderr")
    parser.add_argument("--regions-driver", help="the regions category's program (hwprof_hostile_regions)")
    parser.add_argument("--report-module", help="the report module that program loads at exit (libhwprof-report.so)")
    args = parser.parse_args()

    hwprof = str(Path(args.hwprof).resolve())
    if args.make_machine:
        target = Path(args.make_machine).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        store = Path(tempfile.mkdtemp(prefix="hwprof-hostile-machine-"))
        try:
            make_machine(hwprof, target, store)
        except RuntimeError as error:
            print(error)
            return 1
        finally:
            remove_tree(store)
        print(f"wrote {target}")
        return 0

    cases = load_cases()
    unknown = [c for c in args.category if c not in CATEGORIES]
    if unknown:
        parser.error(f"unknown category {', '.join(unknown)}; categories: {', '.join(CATEGORIES)}")
    if args.category:
        cases = [c for c in cases if c.category in args.category]
    if args.case:
        cases = [c for c in cases if re.search(args.case, f"{c.category}/{c.name}")]
    if args.list:
        for c in cases:
            tag = f"  (finding {c.finding}: {hc.FINDINGS[c.finding]})" if c.finding else ""
            print(f"{c.category}/{c.name}{tag}")
        print(f"{len(cases)} cases")
        return 0
    if not os.access(hwprof, os.X_OK):
        print(f"run_hostile.py: {hwprof}: not an executable file")
        return 1

    session = Session(hwprof, args.asan, args.machine, args.keep,
                      regions_driver=str(Path(args.regions_driver).resolve()) if args.regions_driver else None,
                      report_module=str(Path(args.report_module).resolve()) if args.report_module else None)
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    failed = []
    started = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for case, outcome in zip(cases, pool.map(lambda c: run_case(session, c), cases)):
                report_case(case, outcome, counts, failed, args.verbose)
    finally:
        session.close()
    total = time.monotonic() - started
    print(f"\nhostile: {len(cases)} cases, {counts['PASS']} passed, {counts['FAIL']} failed, "
          f"{counts['SKIP']} skipped in {total:.1f} s ({'ASan' if args.asan else 'address space 4 GiB'})")
    for name in failed:
        print(f"  FAILED {name}")
    if counts["FAIL"]:
        return 1
    if cases and counts["SKIP"] == len(cases):
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
