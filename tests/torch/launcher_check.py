#!/usr/bin/env python3
"""`python3 -m hwprof.torch` as Python's own launcher, and every way a script ends
(docs/torch.md, "The launcher" and "How a script ends").

Each script runs twice, as `python3 script.py` and under `python3 -m hwprof.torch -o DIR`;
the exit status (a negative one: killed by that signal) must be the same, and DIR must hold a
profile.json that parses and has the script's ops:
  normal end 0, sys.exit(3), an uncaught exception 1 (the same traceback), SIGINT sent by the
  script itself (KeyboardInterrupt: killed by SIGINT, the same traceback), SIGTERM and SIGHUP
  sent from outside while the script loops, a script's own SIGTERM handler (kept: it exits
  7), SIGHUP ignored by the parent as under nohup (stays ignored; SIGTERM ends it).
A signal while the reports are being written stops the writing at once, deterministically:
the report module is a FIFO, so the writer blocks loading it until the check sends the
signal; a second Ctrl-C (SIGINT to the process group, the writer too) after a
KeyboardInterrupt ends the program by SIGINT, a SIGTERM after a normal end leaves its status
0; nothing half-written is left.
The launcher's own errors: -o naming a regular file, a path under one, a place that takes no
folders (/proc), and a library that cannot be loaded end with status 2 and one line before the
script runs; a missing script and a syntax error end as plain python's (same status, same
message); a script that runs no op says so. __file__, sys.argv, sys.path[0], __name__, __spec__ and the __main__ module are
plain python's (a script run through a relative symbolic link), a class the script defines
pickles, a DataLoader's fork workers and a spawn Pool behind an `if __name__` guard work.

Usage: launcher_check.py BUILD_PYTHON_DIR   (BUILD/python, where CMake copied the package)
Exit 77 (skipped) where PyTorch is not importable.
"""
import concurrent.futures
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

from sanitized_env import unsanitized

PYTHON = "/usr/bin/python3"
WORK = """import torch
x = torch.ones(4)
for _ in range(3):
    x = x * 1.5 + 1
"""
LOOP = WORK + """import time
print("ready", flush=True)
while True:
    x = x * 1.0
    time.sleep(0.005)
"""
SCRIPTS = {
    "normal": WORK,
    "exit3": WORK + "import sys\nsys.exit(3)\n",
    "exception": WORK + "def fails():\n    raise ValueError('raised by the script')\nfails()\n",
    "sigint": WORK + "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(60)\n",
    "loop": LOOP,
    "own_handler": WORK + "import signal, sys\nsignal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))\n" + LOOP[len(WORK):],
    "noop": "print('no torch here')\n",
    "syntax": "def (\n",
    "ident": """import json, multiprocessing, os, pickle, sys


class Squares:  # a map-style dataset; torch is imported behind the guard, so spawned children skip it
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return float(i * i)


def square(v):
    return v * v


if __name__ == "__main__":
    import torch
    loader = torch.utils.data.DataLoader(Squares(), batch_size=2, num_workers=2, multiprocessing_context="fork")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        spawned = pool.map(square, [3])
    print(json.dumps({"file": __file__, "argv": sys.argv, "path0": sys.path[0], "name": __name__, "spec": repr(__spec__),
                      "loader": type(__loader__).__name__, "cached": __cached__, "package": __package__,
                      "main_module": sys.modules["__main__"].__dict__ is globals(),
                      "pickled": type(pickle.loads(pickle.dumps(Squares()))).__qualname__,
                      "loaded": float(sum(b.sum() for b in loader)), "spawned": spawned}))
""",
}

failures = []
failures_lock = threading.Lock()


def fail(message):
    with failures_lock:
        failures.append(message)


def start(argv, env, cwd, ignore_sighup=False, own_group=False):
    preexec = (lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)) if ignore_sighup else None
    return subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec,
                            start_new_session=own_group)


def kill_group(process, signum):
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass  # everything in it has ended


def finish(process, what, timeout=120):
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        fail(f"{what}: still running after {timeout} s; stderr: {err[-1500:]}")
    return process.returncode, out, err


def run(argv, env, cwd, what, signals=(), ignore_sighup=False):
    """Runs argv; with `signals`, sends each once the script printed `ready`."""
    process = start(argv, env, cwd, ignore_sighup)
    out = ""
    if signals:
        line = process.stdout.readline()
        if line.strip() != "ready":
            code, rest, err = finish(process, what)
            fail(f"{what}: the script ended before it was ready (exit status {code}): {err[-1500:]}")
            return code, line + rest, err
        for s in signals:
            time.sleep(0.05)
            process.send_signal(s)
    code, rest, err = finish(process, what)
    return code, out + rest, err


def ours(err):
    """stderr without hwprof's own lines: what plain python printed, if all is well."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith(("hwprof:", "hwprof.torch:")))


def check_profile(out, what, op="aten::mul"):
    path = os.path.join(out, "profile.json")
    try:
        with open(path) as f:
            layers = json.load(f)["layers"]
    except (OSError, ValueError, KeyError) as e:
        fail(f"{what}: no profile.json that parses in {out}: {e}; the folder holds {sorted(os.listdir(out)) if os.path.isdir(out) else 'nothing'}")
        return
    if not any(op in (layer.get("op") or layer.get("name", "")) for layer in layers):
        fail(f"{what}: profile.json has no {op} row: {[layer.get('name') for layer in layers][:20]}")


def ending(env, tmp, name, script, expected, signals=(), ignore_sighup=False, same_stderr=False):
    """The script's status under python and under the launcher, both `expected`; the report written."""
    path = os.path.join(tmp, script + ".py")
    out = os.path.join(tmp, "out-" + "".join(c if c.isalnum() else "-" for c in name))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        plain = pool.submit(run, [PYTHON, path], unsanitized(env), tmp, f"{name}, plain python", signals, ignore_sighup)
        profiled = pool.submit(run, [PYTHON, "-m", "hwprof.torch", "-o", out, path], env, tmp, f"{name}, hwprof.torch", signals, ignore_sighup)
        (plain_code, _, plain_err), (code, _, err) = plain.result(), profiled.result()
    if plain_code != expected or code != expected:
        fail(f"{name}: exit status {code} under hwprof.torch, {plain_code} under plain python; expected {expected}; stderr: {err[-1500:]}")
    if same_stderr and ours(err) != plain_err:
        fail(f"{name}: stderr differs from plain python's:\n--- python\n{plain_err}--- hwprof.torch\n{err}")
    check_profile(out, name)


def stopped_while_writing(env, tmp, name, script, expected, second, to_group):
    """A signal sent while the writer is loading the report module (a FIFO: it blocks there);
    `to_group`: to the whole process group, writer included, as a terminal's Ctrl-C is."""
    folder = "".join(c if c.isalnum() else "-" for c in name)
    fifo = os.path.join(tmp, f"module-{folder}.so")
    os.mkfifo(fifo)
    out = os.path.join(tmp, "out-" + folder)
    # Its own process group, so that what it leaves behind can be stopped when the check fails.
    process = start([PYTHON, "-m", "hwprof.torch", "-o", out, os.path.join(tmp, script + ".py")], dict(env, HWPROF_REPORT_MODULE=fifo), tmp,
                    own_group=True)
    # A writer can open a FIFO without blocking only once a reader has it open: the report writer.
    writer, deadline = None, time.monotonic() + 60
    while writer is None and process.poll() is None and time.monotonic() < deadline:
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO:
                raise
            time.sleep(0.02)
    if writer is None:
        kill_group(process, signal.SIGKILL)
        code, _, err = finish(process, name)
        fail(f"{name}: the report writer never opened the report module (exit status {code}): {err[-1500:]}")
        return
    if to_group:
        kill_group(process, second)
    else:
        process.send_signal(second)
    try:
        process.wait(timeout=30)  # the writer blocks until the FIFO is closed: only the signal ends it
    except subprocess.TimeoutExpired:
        fail(f"{name}: {second.name} did not stop the writing within 30 s")
        kill_group(process, signal.SIGKILL)
    os.close(writer)
    code, _, err = finish(process, name)
    if code != expected:
        fail(f"{name}: exit status {code}, expected {expected}; stderr: {err[-1500:]}")
    if f"stopped by {second.name}" not in err:
        fail(f"{name}: stderr does not say the writing was stopped by {second.name}: {err[-1500:]}")
    left = [f for f in os.listdir(out) if ".tmp." in f or f == ".hwprof-owner"] if os.path.isdir(out) else []
    if left:
        fail(f"{name}: left in {out}: {left}")


def launcher_errors(env, tmp):
    """-o problems: status 2, one line, the script not run. A missing script and a syntax error:
    plain python's status and message."""
    marker = os.path.join(tmp, "ran")
    script = os.path.join(tmp, "marks.py")
    with open(script, "w") as f:
        f.write(f"open({marker!r}, 'w').close()\n")
    regular = os.path.join(tmp, "normal.py")
    for output, reason in ((regular, "is a regular file"), (os.path.join(regular, "out"), "is a regular file"),
                           ("/proc/hwprof-launcher-check/out", "cannot create the folder")):
        code, _, err = run([PYTHON, "-m", "hwprof.torch", "-o", output, script], env, tmp, f"-o {output}")
        lines = err.splitlines()
        if code != 2 or len(lines) != 1 or reason not in lines[0] or os.path.exists(marker):
            fail(f"-o {output}: exit status {code}, stderr {err!r}, script run: {os.path.exists(marker)}; "
                 f"expected 2 and one line saying it {reason}, before the script")
    code, _, err = run([PYTHON, "-m", "hwprof.torch", "-o", "out-errors", script], dict(env, HWPROF_TORCH_LIBRARY=os.path.join(tmp, "none.so")),
                       tmp, "no library")
    if code != 2 or len(err.splitlines()) != 1 or "cannot load" not in err or os.path.exists(marker):
        fail(f"a library that cannot be loaded: exit status {code}, stderr {err!r}, script run: {os.path.exists(marker)}; "
             "expected 2 and one line, before the script")
    for name, script in (("a missing script", "missing.py"), ("a syntax error", "syntax.py")):
        plain = run([PYTHON, script], unsanitized(env), tmp, f"{name}, plain python")
        profiled = run([PYTHON, "-m", "hwprof.torch", "-o", "out-errors", script], env, tmp, f"{name}, hwprof.torch")
        if plain[0] != profiled[0] or plain[2] != profiled[2] or plain[0] == 0:
            fail(f"{name}: hwprof.torch exits {profiled[0]} saying {profiled[2]!r}; plain python {plain[0]} saying {plain[2]!r}")
    if os.path.exists(os.path.join(tmp, "out-errors")):
        fail("a script that could not run left its -o folder")
    code, _, err = run([PYTHON, "-m", "hwprof.torch", "-o", "out-noop", "noop.py"], env, tmp, "a script without ops")
    if code != 0 or "ran no PyTorch op" not in err:
        fail(f"a script that runs no op: exit status {code}, stderr {err!r}; expected 0 and a line saying so")


def identity(env, tmp):
    """What the script sees of itself, run through a relative symbolic link with arguments."""
    os.makedirs(os.path.join(tmp, "sub"))
    os.rename(os.path.join(tmp, "ident.py"), os.path.join(tmp, "sub", "ident.py"))
    os.symlink(os.path.join("sub", "ident.py"), os.path.join(tmp, "link.py"))
    out = os.path.join(tmp, "out-ident")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        plain = pool.submit(run, [PYTHON, "link.py", "a", "--b"], unsanitized(env), tmp, "identity, plain python")
        profiled = pool.submit(run, [PYTHON, "-m", "hwprof.torch", "-o", out, "link.py", "a", "--b"], env, tmp, "identity, hwprof.torch")
        plain, profiled = plain.result(), profiled.result()
    try:
        seen, expected = json.loads(profiled[1].splitlines()[-1]), json.loads(plain[1].splitlines()[-1])
    except (ValueError, IndexError):
        fail(f"identity: no answer: python {plain}, hwprof.torch {profiled}")
        return
    if seen != expected or profiled[0] != 0:
        fail(f"identity: hwprof.torch's script saw {seen}, plain python's {expected} (exit status {profiled[0]}: {profiled[2][-1500:]})")
    check_profile(out, "identity", "aten::sum")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    probe = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"skipped: PyTorch is not importable by {PYTHON}: {probe.stderr.strip()[-300:]}")
        return 77
    env = dict(os.environ, PYTHONPATH=os.path.abspath(sys.argv[1]), HWPROF_BACKEND="timer")
    for key in ("HWPROF_OUTPUT", "HWPROF_DISABLE", "HWPROF_SAMPLE", "HWPROF_REPORT_MODULE"):
        env.pop(key, None)
    with tempfile.TemporaryDirectory(prefix="hwprof-launcher-") as tmp:
        for name, text in SCRIPTS.items():
            with open(os.path.join(tmp, name + ".py"), "w") as f:
                f.write(text)
        checks = [
            (ending, "normal", "normal", 0),
            (ending, "sys.exit(3)", "exit3", 3),
            (ending, "exception", "exception", 1, (), False, True),
            (ending, "KeyboardInterrupt", "sigint", -signal.SIGINT, (), False, True),
            (ending, "SIGTERM", "loop", -signal.SIGTERM, (signal.SIGTERM,)),
            (ending, "SIGHUP", "loop", -signal.SIGHUP, (signal.SIGHUP,)),
            (ending, "own SIGTERM handler", "own_handler", 7, (signal.SIGTERM,)),
            (ending, "SIGHUP ignored", "loop", -signal.SIGTERM, (signal.SIGHUP, signal.SIGTERM), True),
            (stopped_while_writing, "second Ctrl-C", "sigint", -signal.SIGINT, signal.SIGINT, True),
            (stopped_while_writing, "SIGTERM after the end", "normal", 0, signal.SIGTERM, False),
            (launcher_errors,),
            (identity,),
        ]
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            for done in [pool.submit(check[0], env, tmp, *check[1:]) for check in checks]:
                done.result()
    for message in failures:
        print("FAIL:", message)
    if failures:
        return 1
    print(f"ok: {len(checks)} checks: every ending writes its report and keeps python's status; the launcher's errors are python's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
