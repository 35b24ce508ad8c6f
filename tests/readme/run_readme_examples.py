#!/usr/bin/env python3
"""Runs the examples of the README and of docs/, so that every command they show as an example works as shown.

  run_readme_examples.py --readme README.md [--docs DIR] --bin BUILD/bin [--source DIR]
                         [--at-least N] [--timeout S] [--data-home DIR] [--only [PAGE:]LINE]
                         [--list] [--keep] [--verbose]

Which pages. --readme names a page (it may be given more than once); --docs DIR adds every
`*.md` directly in DIR, in the order of their names, after the pages --readme names. A page
that marks no block is fine; all of them together marking none is an error. --at-least N
fails the run when fewer than N blocks ran, so that moving examples between pages cannot
lose one unnoticed (ctest passes the number the pages had when it was last raised).

Which blocks run. A block runs when the line directly before its opening fence (blank lines
between are not allowed) is the marker

    <!-- example -->               a ```sh (or ```bash) block: run as a bash script
    <!-- example: output -->       a plain ``` block in the form of a terminal transcript:
                                   each line "$ CMD" is run and what it prints must match
                                   the lines after it, up to the next "$ " line or the end
    <!-- example: file NAME -->    any block: its text is written to NAME in the scratch
                                   directory, for the blocks after it (nothing runs)

and an optional "timeout=S" inside the marker (e.g. `<!-- example timeout=20 -->`) gives that
block its own limit; "leaks=unchecked" runs a block without LeakSanitizer's exit-time check in
a sanitized build (for blocks that run a third-party runtime that keeps its allocations until
exit, such as Open MPI under mpirun; AddressSanitizer's other checks stay on). Unmarked blocks (setup that installs packages, long calibrations,
programs the reader writes themselves) are never run. In a transcript, a line that is only
"..." matches any number of lines, "..." inside a line matches any text, and trailing spaces
are ignored; so a README can leave out what varies or what is long.

How they run. The blocks run in page order, and in each page from the top, like a reader
going down the pages, in one scratch directory: it holds a symlink to each top-level entry of the source tree (models/,
counters/, examples/, ...), so a command written for the repository root finds its files,
while what the examples write stays in the scratch directory. Each sh block runs as
`bash -e -o pipefail` with PATH starting with --bin (so `hwprof` is the build's),
HWPROF_SOURCE_DIR set to the source tree, and XDG_DATA_HOME pointing at a machine store of
the run's own (never the user's). Before the first block the store gets one quick
calibration of this machine (`hwprof calibrate --quick --allow-contended`), so that profiles
neither calibrate nor depend on what the user has stored; --data-home DIR keeps and reuses
that store between runs.

Exit status: 0 when every block passed, 1 when one failed (each failure is printed with its
page and line, the command, its exit status and its output, or when fewer than --at-least
blocks ran), 2 for a bad command line or pages without any marked block.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MARKER = re.compile(r"^<!--\s*example(?:\s*:\s*(?P<kind>output|file)(?:\s+(?P<name>[^\s>]+))?)?(?P<opts>(?:\s+\w+=\S+)*)\s*-->\s*$")
FENCE = re.compile(r"^(?P<ticks>```+)\s*(?P<lang>[\w+-]*)\s*$")
SHELLS = {"sh", "bash", "shell"}
DEFAULT_TIMEOUT = 60.0
CALIBRATION_TIMEOUT = 120.0
CALIBRATION_ATTEMPTS = 3


@dataclass
class Block:
    page: str                 # the page, as shown: its path relative to the source tree
    line: int                 # 1-based line of the opening fence in that page
    kind: str                 # "sh", "output" or "file"
    text: str
    name: str = ""            # kind "file": where to write it
    timeout: float = DEFAULT_TIMEOUT
    options: dict = field(default_factory=dict)


class ReadmeError(Exception):
    pass


def parse_blocks(readme: Path, default_timeout: float, shown: str = "") -> list:
    lines = readme.read_text(encoding="utf-8").splitlines()
    shown = shown or readme.name
    blocks = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        marker_line = i + 1
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            raise ReadmeError(f"{readme}:{marker_line}: an example marker must be directly followed by a ``` fence")
        fence = FENCE.match(lines[i + 1])
        ticks, lang = fence.group("ticks"), fence.group("lang")
        body = []
        j = i + 2
        while j < len(lines) and lines[j].rstrip() != ticks:
            body.append(lines[j])
            j += 1
        if j >= len(lines):
            raise ReadmeError(f"{readme}:{i + 2}: the example's fence is never closed")
        options = dict(o.split("=", 1) for o in m.group("opts").split())
        unknown = set(options) - {"timeout", "leaks"}
        if unknown:
            raise ReadmeError(f"{readme}:{marker_line}: unknown marker option(s) {', '.join(sorted(unknown))}; "
                              "known: timeout=S, leaks=unchecked")
        if options.get("leaks", "unchecked") != "unchecked":
            raise ReadmeError(f"{readme}:{marker_line}: leaks={options['leaks']}: the only value is leaks=unchecked")
        kind = m.group("kind") or "sh"
        if kind == "sh" and lang not in SHELLS:
            raise ReadmeError(f"{readme}:{marker_line}: <!-- example --> marks a ```sh block, not ```{lang or '(plain)'}; "
                              "use <!-- example: output --> for a transcript")
        if kind == "file" and not m.group("name"):
            raise ReadmeError(f"{readme}:{marker_line}: <!-- example: file NAME --> needs the file's NAME")
        block = Block(page=shown, line=i + 2, kind=kind, text="\n".join(body) + "\n", name=m.group("name") or "",
                      timeout=float(options.get("timeout", default_timeout)), options=options)
        if kind == "output" and not any(l.startswith("$ ") for l in body):
            raise ReadmeError(f"{readme}:{marker_line}: a transcript example needs at least one \"$ COMMAND\" line")
        blocks.append(block)
        i = j + 1
    return blocks


def transcript_steps(text: str, first_line: int) -> list:
    """[(command, [(README line, expected line)])] of a transcript block whose first line is
    README line `first_line`."""
    steps = []
    for number, line in enumerate(text.splitlines(), start=first_line):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append((number, line))
    return steps


def line_pattern(expected: str):
    parts = expected.rstrip().split("...")
    return re.compile("^" + ".*".join(re.escape(p) for p in parts) + r"\s*$")


def compare(expected: list, actual: list):
    """Expected (README line, text) pairs against the actual lines; a line "..." matches any
    number of lines. None when they match, else (the first expected pair that no alignment
    got past, the actual line index it was tried at)."""
    expected = [(n, e.rstrip()) for n, e in expected]
    while expected and expected[-1][1] == "":
        expected.pop()
    actual = [a.rstrip() for a in actual]
    while actual and actual[-1] == "":
        actual.pop()
    patterns = [None if e.strip() == "..." else line_pattern(e) for _, e in expected]
    furthest = [0, 0]  # the deepest (pattern, line) reached: where the README and the output part

    # Backtracking match, memoised on (pattern index, line index): README transcripts are short.
    memo = {}

    def match(p, a):
        key = (p, a)
        if key in memo:
            return memo[key]
        if (p, a) > tuple(furthest):
            furthest[:] = [p, a]
        if p == len(patterns):
            result = a == len(actual)
        elif patterns[p] is None:
            result = any(match(p + 1, k) for k in range(a, len(actual) + 1))
        else:
            result = a < len(actual) and bool(patterns[p].match(actual[a])) and match(p + 1, a + 1)
        memo[key] = result
        return result

    if match(0, 0):
        return None
    p, a = furthest
    return (expected[p] if p < len(expected) else (None, "(the end of the README's output)")), a


def difference(page: str, mismatch, actual: list) -> str:
    (number, text), a = mismatch
    where = f"{page}:{number}" if number else page
    near = actual[max(0, a - 2):a + 3]
    got = [f"  {'>' if i == min(2, a) else ' '} {line}" for i, line in enumerate(near)] or ["    (no more output)"]
    return "\n".join([f"  {where} expects: {text}", "  the output there:"] + got)


def make_scratch(root: Path, source: Path) -> Path:
    work = root / "work"
    work.mkdir()
    for entry in sorted(source.iterdir()):
        if entry.name.startswith(".") or entry.name == "build":
            continue
        (work / entry.name).symlink_to(entry)
    return work


def environment(bin_dir: Path, source: Path, data_home: Path, home: Path) -> dict:
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["HWPROF_SOURCE_DIR"] = str(source)
    env["XDG_DATA_HOME"] = str(data_home)
    env["HOME"] = str(home)
    # What the README's reader would not have set, and what would change hwprof's output.
    for name in ("HWPROF_OUTPUT", "HWPROF_BACKEND", "HWPROF_EVENTS", "HWPROF_GROUP", "HWPROF_DISABLE", "HWPROF_MODEL_PATH"):
        env.pop(name, None)
    env["LC_ALL"] = "C.UTF-8"
    return env


def run(command, cwd, env, timeout, shell_script=None):
    """(exit status or None on timeout, combined output, seconds)."""
    start = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=cwd, env=env, input=shell_script, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, start_new_session=True)
        return proc.returncode, proc.stdout, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.monotonic() - start


def calibrate(bin_dir: Path, work: Path, env: dict, data_home: Path, verbose: bool) -> None:
    store = data_home / "hwprof" / "machines"
    if store.is_dir() and any(store.glob("*.json")):
        if verbose:
            print(f"calibration: reusing the store in {store}")
        return
    # A busy machine, or a sanitized build whose instrumented loads make L1 no faster than L2,
    # can give a calibration hwprof rightly refuses as implausible; like the hostile suite's
    # fixture, try it again before giving up.
    status, out, seconds = None, "", 0.0
    for _ in range(CALIBRATION_ATTEMPTS):
        status, out, seconds = run([str(bin_dir / "hwprof"), "calibrate", "--quick", "--allow-contended"], work, env,
                                   CALIBRATION_TIMEOUT)
        if status == 0:
            break
    if status != 0:
        raise SystemExit(f"run_readme_examples.py: the quick calibration the examples need failed {CALIBRATION_ATTEMPTS} times "
                         f"(last: {'timed out' if status is None else f'exit status {status}'}):\n{out}")
    print(f"calibration: quick, {seconds:.1f} s, stored in {store}")


def tail(text: str, lines: int = 60) -> str:
    rows = text.rstrip("\n").splitlines()
    if len(rows) > lines:
        rows = [f"... ({len(rows) - lines} lines before)"] + rows[-lines:]
    return "\n".join("    " + r for r in rows)


def page_list(readmes: list, docs: list) -> list:
    """The pages in the order their blocks run: each --readme, then each --docs folder's *.md by name."""
    pages = [r.resolve() for r in readmes]
    for folder in docs:
        if not folder.is_dir():
            raise ReadmeError(f"--docs {folder}: not a folder")
        pages += sorted(p.resolve() for p in folder.glob("*.md") if p.resolve() not in pages)
    return pages


def shown_name(page: Path, source: Path) -> str:
    try:
        return str(page.relative_to(source))
    except ValueError:
        return page.name


def chosen(block: Block, only: list) -> bool:
    """--only LINE picks that line of any page; --only PAGE:LINE that line of that page."""
    for item in only:
        page, _, line = item.rpartition(":")
        if line.isdigit() and int(line) == block.line and (not page or page == block.page):
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", required=True, type=Path, action="append", help="a page (README.md); may be repeated")
    parser.add_argument("--docs", type=Path, action="append", default=[], help="a folder whose every *.md is a page")
    parser.add_argument("--bin", required=True, type=Path, help="the folder holding the built hwprof")
    parser.add_argument("--source", type=Path, help="the source tree (default: the first README's folder)")
    parser.add_argument("--at-least", type=int, default=0, help="fail when fewer than N blocks ran")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per block unless its marker says")
    parser.add_argument("--data-home", type=Path, help="XDG_DATA_HOME to keep the calibration in between runs")
    parser.add_argument("--only", action="append", help="run only the block whose fence is on this line ([PAGE:]LINE)")
    parser.add_argument("--list", action="store_true", help="list the marked blocks and exit")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()

    source = (args.source or args.readme[0].resolve().parent).resolve()
    bin_dir = args.bin.resolve()
    try:
        pages = page_list(args.readme, args.docs)
        blocks = [b for page in pages for b in parse_blocks(page, args.timeout, shown_name(page, source))]
    except (OSError, ReadmeError) as e:
        print(f"run_readme_examples.py: {e}", file=sys.stderr)
        return 2
    if not blocks:
        print(f"run_readme_examples.py: {', '.join(shown_name(p, source) for p in pages)} mark no example "
              "(<!-- example --> before a ```sh fence)", file=sys.stderr)
        return 2
    if args.list:
        for b in blocks:
            first = next((l for l in b.text.splitlines() if l.strip()), "")
            print(f"{b.page}:{b.line}  {b.kind:6}  {b.name or first}")
        print(f"{sum(1 for b in blocks if b.kind != 'file')} example(s) that run, in {len(pages)} page(s)")
        return 0
    if not (bin_dir / "hwprof").is_file():
        print(f"run_readme_examples.py: no hwprof in {bin_dir}", file=sys.stderr)
        return 2
    selected = [b for b in blocks if not args.only or chosen(b, args.only) or b.kind == "file"]

    root = Path(tempfile.mkdtemp(prefix="hwprof-readme-"))
    started = time.monotonic()
    failures = 0
    try:
        work = make_scratch(root, source)
        data_home = args.data_home.resolve() if args.data_home else root / "data"
        home = root / "home"
        data_home.mkdir(parents=True, exist_ok=True)
        home.mkdir()
        env = environment(bin_dir, source, data_home, home)
        if any(b.kind in ("sh", "output") for b in selected):
            calibrate(bin_dir, work, env, data_home, args.verbose)
        for b in selected:
            where = f"{b.page}:{b.line}"
            if b.kind == "file":
                target = work / b.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(b.text, encoding="utf-8")
                if args.verbose:
                    print(f"ok    {where}  wrote {b.name}")
                continue
            if b.kind == "sh":
                block_env = env
                if b.options.get("leaks") == "unchecked":
                    block_env = dict(env)
                    asan = block_env.get("ASAN_OPTIONS", "")
                    block_env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "detect_leaks=0"
                status, out, seconds = run(["bash", "-e", "-o", "pipefail", "-s"], work, block_env, b.timeout, b.text)
                ok = status == 0
                why = "" if ok else ("timed out after %.0f s" % b.timeout if status is None else f"exit status {status}")
                print(f"{'ok  ' if ok else 'FAIL'}  {where}  sh  {seconds:.1f} s")
                if not ok:
                    failures += 1
                    print(f"  the block:\n{tail(b.text, 40)}\n  {why}; its output:\n{tail(out)}")
                elif args.verbose:
                    print(tail(out, 20))
                continue
            # A transcript: each "$ " command, its output against the lines after it.
            total = 0.0
            for command, expected in transcript_steps(b.text, b.line + 1):
                status, out, seconds = run(["bash", "-e", "-o", "pipefail", "-c", command], work, env, b.timeout)
                total += seconds
                actual = out.splitlines()
                if status != 0:
                    failures += 1
                    why = "timed out after %.0f s" % b.timeout if status is None else f"exit status {status}"
                    print(f"FAIL  {where}  $ {command}\n  {why}; its output:\n{tail(out)}")
                    break
                mismatch = compare(expected, actual)
                if mismatch is not None:
                    failures += 1
                    print(f"FAIL  {where}  $ {command}\n  the output differs from the README's:\n"
                          f"{difference(b.page, mismatch, actual)}\n  the whole output:\n{tail(out)}")
                    break
            else:
                print(f"ok    {where}  output  {total:.1f} s")
    finally:
        if args.keep:
            print(f"scratch directory kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    ran = sum(1 for b in selected if b.kind != "file")
    per_page = {}
    for b in selected:
        if b.kind != "file":
            per_page[b.page] = per_page.get(b.page, 0) + 1
    print("by page: " + ", ".join(f"{page} {n}" for page, n in per_page.items()))
    print(f"{ran - failures} of {ran} example(s) passed in {time.monotonic() - started:.1f} s")
    if not args.only and ran < args.at_least:
        print(f"FAIL  {ran} example(s) ran, fewer than the {args.at_least} expected (--at-least): "
              "an example was unmarked or its page is no longer read")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
