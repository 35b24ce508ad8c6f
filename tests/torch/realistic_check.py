#!/usr/bin/env python3
"""hwprof.torch on scripts written the way PyTorch users write them (tests/torch/realistic/):
every number it reports must be one a user can act on (docs/torch.md).

Each script runs twice: plain (`/usr/bin/python3 SCRIPT`, with REALISTIC_TRUTH set, so that
the script counts its own modules' calls, parameters and conv/linear/bmm FLOPs with a forward
hook: tests/torch/realistic/truth.py) and under `/usr/bin/python3 -m hwprof.torch -o DIR
SCRIPT` (no hook of ours in that run). The scripts are seeded; both runs make the same calls.
Checks, each failure one line naming the script, the check, the row and the numbers:
- status: the exit status under hwprof.torch is the plain run's (ctrl_c.py: killed by SIGINT,
  -2, as Python ends a program on an uncaught KeyboardInterrupt);
- reports: profile.json, profile.txt, profile.csv, roofline.svg, trace.json and report.html
  are written (ctrl_c.py too), and `hwprof report` renders profile.json again;
- fields: every row has `calls`, `impossible`, `threads` and `shapes`, a module row `params`,
  an impossible row its `impossible_reason`; the profile has `steps`, `torch_threads` (the
  script's torch.get_num_threads(), or its OpenBLAS's pool where that ran a product on more)
  and `batch` (none, or the script's batch);
- roof: no row of `layers` nor `total` is impossible, and none has an efficiency above 1.10;
- calls: a module's forward row has the script's forward calls, its backward row the calls
  whose backward ran (grad enabled, an output requiring grad), its `recompute` row the calls
  checkpointing recomputed; every module the script called has its rows; an op's backward row
  (the autograd function named after its forward op) has no more calls than its forward row;
- flops: each nn.Linear/Conv1d/Conv2d module's FLOPs per call x calls equal the script's count
  exactly, forward, recompute and backward (the backward without the gradient sums autograd's
  engine runs inside the module, found by their call paths: docs/torch.md "Who counts what");
  the ops the script calls directly (torch.bmm, torch.matmul, bilinear F.interpolate) likewise,
  forward only, over all rows of the op;
- params: a module row's `params` is sum(p.numel()) of the module (shared parameters once);
- bounds: transformer_lm.py's reports <= 10 MB; with --bounds (variable_lengths.py over 5,000
  lengths): peak RSS under hwprof.torch <= plain + 300 MB, reports <= 20 MB, every module row
  has FLOPs.
Fields today's reports lack fail once per script (with the number of rows), and the checks go
on with what there is (a row's calls from the call tree where it has no `calls`).

Usage: realistic_check.py BUILD_PYTHON_DIR HWPROF_CLI [--bounds] [--only a,b] [--keep DIR]
HWPROF_TORCH_LIBRARY, HWPROF_REPORT_MODULE and HWPROF_BACKEND are passed on to the runs.
Exit status: 0 every check holds, 1 one failed, 77 (skipped) where /usr/bin/python3 has no torch.
"""
import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from sanitized_env import unsanitized

if importlib.util.find_spec("torch") is None:  # not imported: the check stays small (see LAUNCHER)
    print(f"skipped: torch is not importable by {sys.executable} (apt-get install python3-torch)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "realistic")
PYTHON = "/usr/bin/python3"
REPORTS = ("profile.json", "profile.txt", "profile.csv", "roofline.svg", "trace.json", "report.html")
MAX_EFFICIENCY = 1.10
MB = 1000 * 1000

# (label, script, arguments, limit on the report folder in bytes or None)
CASES = [
    ("transformer_lm", "transformer_lm.py", ["--steps", "20"], 10 * MB),
    ("rnn_tagger", "rnn_tagger.py", ["--steps", "10"], None),
    ("unet", "unet.py", ["--steps", "4"], None),
    ("variable_lengths", "variable_lengths.py", ["--lengths", "300"], None),
    ("ctrl_c", "ctrl_c.py", ["--stop-after", "3"], None),
    ("tiny_mlp", "tiny_mlp.py", ["--steps", "3000"], None),
]
BOUNDS_CASE = ("variable_lengths_5000", "variable_lengths.py", ["--lengths", "5000"], 20 * MB)
RSS_MARGIN = 300 * MB


# Runs a command and writes "status max_rss_kb" to a file. Peak RSS is measured from this small
# process, not from the check: Linux starts a program's maxrss at the high-water mark of the
# process it was exec'd from (the check holds parsed reports), and wait4's rusage of a child
# covers it and the children it waited for (DataLoader workers).
LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


class Run:
    def __init__(self, status, wall_s, max_rss, stdout, stderr):
        self.status, self.wall_s, self.max_rss, self.stdout, self.stderr = status, wall_s, max_rss, stdout, stderr


def run(command, env, cwd, log, timeout):
    """Runs `command` and returns its Run: exit status as subprocess gives it (-N: killed by
    signal N), wall time and peak RSS in bytes. Past `timeout` seconds its process group is
    killed."""
    with open(log + ".out", "w") as out, open(log + ".err", "w") as err:
        start = time.monotonic()
        process = subprocess.Popen([PYTHON, "-S", "-c", LAUNCHER, log + ".rusage"] + command, env=env, cwd=cwd, stdout=out,
                                   stderr=err, start_new_session=True)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        wall = time.monotonic() - start
    with open(log + ".out") as out, open(log + ".err") as err:
        stdout, stderr = out.read(), err.read()
    try:
        with open(log + ".rusage") as f:
            status, max_rss_kb = (int(v) for v in f.read().split())
    except (OSError, ValueError):
        return Run(None, wall, 0, stdout, stderr + f"\n[killed after {timeout} s]")
    return Run(status, wall, max_rss_kb * 1024, stdout, stderr)


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


class Checker:
    """The checks of one script's report against its truth; failures collect in `failures`."""

    def __init__(self, label, prof, truth):
        self.label, self.prof, self.truth = label, prof, truth
        self.failures = []
        self.compared = {}  # per check, how many comparisons it made: a check that compared nothing proves nothing
        self.layers = prof.get("layers", [])
        self.rows = {(r["name"], r["phase"]): r for r in self.layers}
        self.path_calls = {}
        for p in prof.get("call_paths", []):
            last = p["path"].rsplit("/", 1)[-1]
            self.path_calls[last] = self.path_calls.get(last, 0) + p["calls"]

    def fail(self, check, text):
        self.failures.append(f"{self.label}: {check}: {text}")

    def count(self, check):
        self.compared[check] = self.compared.get(check, 0) + 1

    def calls(self, row):
        """The row's `calls`; where today's reports have none, its entries in the call tree
        (time_ms.n stops at 4096 samples)."""
        if "calls" in row:
            return row["calls"]
        step = row["name"] + (" (backward)" if row["phase"] == "backward" else "")
        return self.path_calls.get(step, row["time_ms"]["n"])

    def calls_text(self, row):
        return f"{self.calls(row)} calls" + ("" if "calls" in row else " (from call_paths: no `calls`)")

    def row_text(self, row):
        return f"'{row['name']}' ({row['phase']})"

    def check_fields(self):
        for key in ("steps", "torch_threads", "batch"):
            if key not in self.prof:
                self.fail("fields", f"profile.json has no top-level `{key}`")
        # Shapes are an op's breakdown (docs/torch.md, "Shapes"): a module's or a scope's row has none.
        wanted = [("calls", lambda r: True), ("impossible", lambda r: True), ("threads", lambda r: True),
                  ("shapes", lambda r: r["op"].startswith("aten::")), ("params", lambda r: r["op"] == "module")]
        for key, applies in wanted:
            lacking = [r for r in self.layers if applies(r) and key not in r]
            if lacking:
                self.fail("fields", f"{len(lacking)} of {sum(1 for r in self.layers if applies(r))} rows have no `{key}`, "
                                    f"e.g. {self.row_text(lacking[0])}")
        for row in self.layers + [self.prof.get("total", {})]:
            if row.get("impossible") and not row.get("impossible_reason"):
                self.fail("fields", f"{self.row_text(row)} is impossible without an `impossible_reason`")
        t = self.truth
        # PyTorch's intra-op threads, or more where its BLAS ran a large product on its own pool.
        threads = {t["torch_threads"], max(t["torch_threads"], t.get("blas_threads", 0))}
        if "torch_threads" in self.prof and self.prof["torch_threads"] not in threads:
            self.fail("fields", f"torch_threads {self.prof['torch_threads']}, the script's torch.get_num_threads() "
                                f"{t['torch_threads']}, its OpenBLAS's threads {t.get('blas_threads', 0)}")
        if self.prof.get("batch") is not None and self.prof["batch"] != t["batch"]:
            self.fail("fields", f"batch {self.prof['batch']}, the script's batch is {t['batch']}")
        roots = {m["calls"] for path, m in t["modules"].items() if "." not in path}
        if self.prof.get("steps") is not None and self.prof["steps"] not in {t["steps"]} | roots:
            self.fail("fields", f"steps {self.prof['steps']}, the script took {t['steps']} optimizer steps "
                                f"and called its top-level modules {sorted(roots)} times")

    def check_roof(self):
        total = self.prof.get("total")
        for row in self.layers + ([total] if total else []):
            self.count("roof")
            numbers = (f"median {row['time_ms']['median']:.6f} ms against a roof time of {row.get('roof_ms')} ms "
                       f"({row.get('bound')} bound), {row.get('gflops_per_s')} GFLOP/s (attainable "
                       f"{row.get('attainable_gflops_per_s')}), {row.get('gbytes_per_s')} GB/s, "
                       f"{row.get('flops')} FLOPs a call, {self.calls_text(row)}")
            if row.get("impossible"):
                self.fail("roof", f"{self.row_text(row)} is impossible ({row.get('impossible_reason')}): {numbers}")
            eff = row.get("efficiency")
            if isinstance(eff, (int, float)) and eff > MAX_EFFICIENCY and not row.get("impossible"):
                self.fail("roof", f"{self.row_text(row)} efficiency {eff:.3f} > {MAX_EFFICIENCY}: {numbers}")

    def backward_functions(self):
        """Names of the rows of autograd functions (a backward row named after its forward op):
        ops of the backward phase not nested in another op, by their call paths."""
        names = set()
        for p in self.prof.get("call_paths", []):
            steps = p["path"].split("/")
            last = steps[-1]
            if not last.endswith(" (backward)"):
                continue
            parent = steps[-2] if len(steps) > 1 else ""
            if not parent.startswith(("aten::", "torch::")):
                names.add(last[:-len(" (backward)")])
        return names

    def check_calls(self):
        for path, m in self.truth["modules"].items():
            if m["in_script"]:
                continue
            for phase, wanted in (("forward", m["calls"]), ("backward", m["grad_calls"]), ("recompute", m["recompute_calls"])):
                row = self.rows.get((path, phase))
                if row is None:
                    if wanted:
                        self.fail("calls", f"module {path}: no {phase} row; the script made {wanted} such calls")
                    continue
                if row["op"] != "module":
                    continue
                self.count("calls")
                if self.calls(row) != wanted:
                    what = {"forward": "forward calls", "backward": "calls whose backward ran",
                            "recompute": "recomputed calls"}[phase]
                    self.fail("calls", f"module {self.row_text(row)}: {self.calls_text(row)}, the script made {wanted} {what}")
        functions = self.backward_functions()
        paired = 0
        for row in self.layers:
            if row["phase"] != "backward" or not row["op"].startswith("aten::") or row["name"] not in functions:
                continue
            forward = self.rows.get((row["name"], "forward"))
            if forward is None:
                continue
            paired += 1
            self.count("calls")
            if self.calls(row) > self.calls(forward):
                self.fail("calls", f"op {self.row_text(row)}: {self.calls_text(row)} for {self.calls(forward)} forward calls")
        if self.truth["steps"] and not paired:
            self.fail("calls", "no op's backward row could be paired with its forward row (by name, the backward functions "
                               "found in call_paths): the op check compared nothing")

    def engine_sums(self, module):
        """FLOPs of the gradient sums autograd's engine ran inside `module`'s backward region
        (an aten::add whose parent is that region)."""
        total = 0.0
        for p in self.prof.get("call_paths", []):
            steps = p["path"].split("/")
            # Directly in the module's backward region, or in the backward of one of its ops there
            # (the engine sums a gradient after the function that made it, in the row still open).
            in_module = len(steps) >= 2 and (steps[-2] == f"{module} (backward)" or (
                len(steps) >= 3 and steps[-3] == f"{module} (backward)" and steps[-2].startswith("aten::")
                and steps[-2].endswith(" (backward)")))
            if in_module and steps[-1].startswith("aten::add") and "flops" in p:
                total += p["flops"]  # the path's own work, exactly (a row's per-call figure is its calls' mean)
                continue
            if in_module and steps[-1].startswith("aten::add"):
                # An op the backward pass ran is named so ("aten::add (in backward)": docs/torch.md, "Rows").
                row = self.rows.get((steps[-1], "backward")) or self.rows.get((steps[-1][:-len(" (backward)")], "backward"))
                total += (row or {}).get("flops", 0) * p["calls"]
        return total

    def check_flops(self):
        for path, m in self.truth["modules"].items():
            if "flops_forward" not in m:
                continue
            for phase, wanted in (("forward", m["flops_forward"]), ("recompute", m["flops_recompute"]),
                                  ("backward", m["flops_backward"])):
                row = self.rows.get((path, phase))
                if row is None:
                    continue  # said by check_calls where the script made such calls
                self.count("flops")
                measured = row["flops"] * self.calls(row)
                sums = self.engine_sums(path) if phase == "backward" else 0.0
                if round(measured - sums) != wanted:
                    extra = f" - {sums:.0f} of the engine's gradient sums" if sums else ""
                    self.fail("flops", f"{m['type']} {self.row_text(row)}: {row['flops']} FLOPs x {self.calls_text(row)}"
                                       f"{extra} = {measured - sums:.0f}, the script counts {wanted}")
        for key, t in self.truth["ops"].items():
            op, _, phase = key.partition(" ")
            phase = phase.strip("()") or "forward"
            rows = [r for r in self.layers if r["op"] == op and r["phase"] == phase]
            self.count("flops")
            measured = sum(r["flops"] * self.calls(r) for r in rows)
            if round(measured) != t["flops"]:
                detail = "; ".join(f"'{r['name']}' {r['flops']} x {self.calls(r)}" for r in rows[:4])
                self.fail("flops", f"op {op} ({phase}): its {len(rows)} rows hold {measured:.0f} FLOPs ({detail}), "
                                   f"the script's {t['calls']} direct calls {t['flops']}")

    def check_params(self):
        wrong = {}
        for row in self.layers:
            m = self.truth["modules"].get(row["name"])
            if row["op"] == "module" and "params" in row and m is not None:
                self.count("params")
            if row["op"] == "module" and "params" in row and m is not None and row["params"] != m["params"]:
                wrong.setdefault(row["name"], []).append(f"{row['phase']} {row['params']}")
        for name, phases in wrong.items():
            wanted = self.truth["modules"][name]["params"]
            self.fail("params", f"module '{name}': params {', '.join(phases)}; sum(p.numel()) {wanted}")

    def check_module_flops_kept(self):
        lacking = [r for r in self.layers if r["op"] == "module" and not r.get("flops")]
        for row in lacking[:10]:
            self.fail("bounds", f"module {self.row_text(row)} has no FLOPs: {row.get('work_note', '')!r}")
        if len(lacking) > 10:
            self.fail("bounds", f"{len(lacking) - 10} more module rows have no FLOPs")


def check_case(case, build_python, cli, workdir, bounds):
    label, script, args, folder_limit = case
    path = os.path.join(SCRIPTS, script)
    truth_file = os.path.join(workdir, label + ".truth.json")
    out = os.path.join(workdir, label)
    base_env = {k: v for k, v in os.environ.items() if k not in ("REALISTIC_TRUTH", "HWPROF_OUTPUT")}
    base_env["PYTHONDONTWRITEBYTECODE"] = "1"  # the scripts import truth.py from the source tree
    timeout = 1200 if bounds else 300
    plain = run([PYTHON, path] + args, unsanitized(dict(base_env, REALISTIC_TRUTH=truth_file)), workdir,
                os.path.join(workdir, label + ".plain"), timeout)
    env = dict(base_env, PYTHONPATH=os.pathsep.join(p for p in (build_python, os.environ.get("PYTHONPATH")) if p))
    observed = run([PYTHON, "-m", "hwprof.torch", "-o", out, path] + args, env, workdir,
                   os.path.join(workdir, label + ".hwprof"), timeout)
    size = folder_bytes(out) if os.path.isdir(out) else 0
    print(f"{label}: plain status {plain.status}, {plain.wall_s:.2f} s, peak RSS {plain.max_rss / MB:.0f} MB; "
          f"hwprof.torch status {observed.status}, {observed.wall_s:.2f} s, peak RSS {observed.max_rss / MB:.0f} MB, "
          f"reports {size / MB:.2f} MB ({', '.join(sorted(os.listdir(out))) if os.path.isdir(out) else 'no folder'})", flush=True)
    failures = []

    def fail(check, text):
        failures.append(f"{label}: {check}: {text}")

    expected = -signal.SIGINT if script == "ctrl_c.py" else 0
    if plain.status != expected:
        fail("status", f"plain {script} exited {plain.status}, not {expected}: {plain.stderr[-600:]}")
    if observed.status != plain.status:
        fail("status", f"under hwprof.torch exited {observed.status}, plain {plain.status}: {observed.stderr[-600:]}")
    if not os.path.exists(truth_file):
        fail("truth", f"the plain run wrote no {truth_file}")
        return failures
    with open(truth_file) as f:
        truth = json.load(f)
    missing = [name for name in REPORTS if not os.path.isfile(os.path.join(out, name))]
    if missing:
        listing = sorted(os.listdir(out)) if os.path.isdir(out) else "no folder"
        fail("reports", f"{', '.join(missing)} not written to {out} (it holds: {listing})")
    if "profile.json" in missing:
        return failures
    try:
        rendered = subprocess.run([cli, "report", os.path.join(out, "profile.json"), "-f", "json"], capture_output=True,
                                  text=True, timeout=300)
        if rendered.returncode != 0:
            fail("reports", f"hwprof report profile.json exited {rendered.returncode}: {rendered.stderr.strip()[-500:]}")
    except (OSError, subprocess.TimeoutExpired) as e:
        fail("reports", f"hwprof report profile.json did not run: {e}")
    if folder_limit is not None and size > folder_limit:
        fail("bounds", f"reports {size / MB:.2f} MB > {folder_limit / MB:.0f} MB")
    with open(os.path.join(out, "profile.json")) as f:
        prof = json.load(f)
    checker = Checker(label, prof, truth)
    checker.check_fields()
    checker.check_roof()
    checker.check_calls()
    checker.check_flops()
    checker.check_params()
    print(f"{label}: compared " + ", ".join(f"{check} {n}" for check, n in sorted(checker.compared.items())), flush=True)
    if bounds:
        if observed.max_rss > plain.max_rss + RSS_MARGIN:
            fail("bounds", f"peak RSS {observed.max_rss / MB:.0f} MB under hwprof.torch, plain {plain.max_rss / MB:.0f} MB "
                           f"+ {RSS_MARGIN / MB:.0f} MB allowed")
        checker.check_module_flops_kept()
    return failures + checker.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_python", help="BUILD/python, where CMake copied the hwprof package")
    parser.add_argument("cli", help="the hwprof CLI")
    parser.add_argument("--bounds", action="store_true",
                        help="variable_lengths.py over 5,000 lengths: RSS and size bounds (slow)")
    parser.add_argument("--only", help="comma-separated case labels")
    parser.add_argument("--keep", help="keep the runs' folders in this directory")
    options = parser.parse_args()
    if options.bounds and "libasan" in os.environ.get("LD_PRELOAD", ""):
        print("skipped: peak RSS under AddressSanitizer is its shadow memory and quarantine, not hwprof's (run the bounds "
              "on a release build)")
        return 77
    cases = [BOUNDS_CASE] if options.bounds else CASES
    if options.only:
        wanted = options.only.split(",")
        cases = [c for c in CASES + [BOUNDS_CASE] if c[0] in wanted]
    failures = []
    with tempfile.TemporaryDirectory(prefix="hwprof-realistic-") as tmp:
        workdir = options.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        for case in cases:
            failures += check_case(case, options.build_python, options.cli, workdir, options.bounds or case is BOUNDS_CASE)
    for line in failures:
        print(line)
    if failures:
        print(f"FAILED: {len(failures)} checks over {len(cases)} scripts")
        return 1
    print(f"ok: {len(cases)} scripts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
