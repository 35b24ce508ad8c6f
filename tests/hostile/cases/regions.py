"""The regions library inside someone else's program (tests/hostile/regions_driver.cpp, which
links hwprof::regions only and exits with 7): whatever the environment, the work numbers, the
number of names, the calls, fork/exec/spawn or the memory left at exit, the program ends with
its own exit status, never hangs, says each problem in one line, and leaves no half-written or
mixed report folder."""

import json
import re
from pathlib import Path

from hostile_case import Case, Dir, Expect, File

EXIT = 7  # the driver's own exit status
OUT = {"HWPROF_OUTPUT": "out"}
PROFILE = Expect("out/profile.json", kind="file", contains=[r'"phase": "regions"'])


def regions(name, args, env=None, **kw):
    kw.setdefault("timeout", 30)
    return Case(name, args, rc=kw.pop("rc", EXIT), env=env if env is not None else dict(OUT), program="regions", **kw)


def profile_of(ctx, folder):
    try:
        return json.loads((ctx.dir / folder / "profile.json").read_text())
    except (OSError, ValueError) as error:
        return {"error": str(error)}


def layer_names(document):
    """The regions called at least once (a report lists every name its process registered)."""
    return {layer.get("name") for layer in document.get("layers", []) if (layer.get("time_ms") or {}).get("n", 0) > 0}


def pid_folders(ctx):
    out = ctx.dir / "out"
    return sorted(p for p in out.iterdir() if p.is_dir() and re.fullmatch(r"pid-\d+", p.name)) if out.is_dir() else []


def own_folders(count, parent_region, child_region):
    """A check: the parent's report in out/, each of `count` children's in its own out/pid-N/,
    and no report holding the other's regions."""

    def check(ctx, _result):
        failures = []
        parent = profile_of(ctx, "out")
        if "error" in parent:
            return [f"out/profile.json: {parent['error']}"]
        if parent_region not in layer_names(parent) or child_region in layer_names(parent):
            failures.append(f"out/profile.json has regions {sorted(layer_names(parent))}: not the parent's alone")
        folders = pid_folders(ctx)
        if len(folders) != count:
            failures.append(f"{len(folders)} pid- folders in out/, expected {count}")
        for folder in folders:
            child = profile_of(ctx, folder)
            names = layer_names(child)
            if "error" in child or child_region not in names or parent_region in names:
                failures.append(f"{folder.name}/profile.json: {child.get('error') or sorted(names)}: not the child's alone")
        leftovers = [p.name for p in (ctx.dir / "out").iterdir() if p.name == ".hwprof-owner"] if (ctx.dir / "out").is_dir() else []
        if leftovers:
            failures.append("the folder's claim (.hwprof-owner) was left behind")
        return failures

    return check


def said_once(pattern):
    def check(_ctx, result):
        found = len(re.findall(pattern, result.stderr))
        return [] if found == 1 else [f"/{pattern}/ is on stderr {found} times, expected once"]

    return check


def lines_at_most(count):
    def check(_ctx, result):
        lines = result.stderr.count("\n")
        return [] if lines <= count else [f"stderr has {lines} lines, expected at most {count}"]

    return check


def no_int64_extremes(_ctx, _result):
    """A figure from work the library refused must not appear as INT64_MIN or a negative rate."""
    path = _ctx.dir / "out" / "profile.json"
    text = path.read_text() if path.exists() else ""
    bad = [m for m in ("-9223372036854775808", "9223372036854775807") if m in text]
    return [f"profile.json holds {m}" for m in bad]


WORK_BAD = [("nan", "1"), ("1", "nan"), ("inf", "1"), ("1", "inf"), ("-inf", "1"), ("-1", "1"), ("1", "-1e3"), ("1e308", "1"),
            ("1", "1e308"), ("1e19", "1"), ("-0.5", "-0.5")]

ENV_BAD = [
    ("clock", {"HWPROF_CLOCK": "sundial"}, r"HWPROF_CLOCK=sundial: unknown clock"),
    ("clock_control_characters", {"HWPROF_CLOCK": "tsc\x1b[2J"}, r"HWPROF_CLOCK=tsc\?\[2J: unknown clock"),
    ("threads_word", {"HWPROF_THREADS": "abc"}, r"HWPROF_THREADS=abc is not a thread count"),
    ("threads_zero", {"HWPROF_THREADS": "0"}, r"HWPROF_THREADS=0 is not a thread count"),
    ("threads_huge", {"HWPROF_THREADS": "99999999999"}, r"HWPROF_THREADS=99999999999 is not a thread count"),
    ("backend", {"HWPROF_BACKEND": "quantum"}, r"HWPROF_BACKEND=quantum: unknown backend"),
    ("max_regions_negative", {"HWPROF_MAX_REGIONS": "-5"}, r"HWPROF_MAX_REGIONS=-5 is not a number of region names"),
    ("max_regions_word", {"HWPROF_MAX_REGIONS": "lots"}, r"HWPROF_MAX_REGIONS=lots is not a number of region names"),
    ("event_unknown", {"HWPROF_EVENTS": "no-such-event-anywhere"}, r"no-such-event-anywhere"),
    ("slurm_word", {"SLURM_PROCID": "abc"}, r"SLURM_PROCID='abc' is not a rank"),
    ("pmi_path", {"PMI_RANK": "../../etc"}, r"PMI_RANK='\.\./\.\./etc' is not a rank"),
    ("ompi_negative", {"OMPI_COMM_WORLD_RANK": "-1"}, r"OMPI_COMM_WORLD_RANK='-1' is not a rank"),
    ("ompi_past_size", {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "4"}, r"OMPI_COMM_WORLD_RANK='5' is not below"),
    ("pmix_size_zero", {"PMIX_RANK": "0", "PMIX_SIZE": "0"}, r"PMIX_SIZE='0' is not a number of ranks"),
    ("torchrun_word", {"RANK": "x", "WORLD_SIZE": "2"}, r"RANK='x' is not a rank"),
]

CASES = [
    # --- the program's exit status, memory and time at exit ---
    regions("many_calls_of_one_region", ["calls", "100000"], stderr=[r"hwprof: wrote .*profile\.json"], expect=[PROFILE],
            max_rss_mb=200),
    regions("many_calls_under_200MB_of_address_space", ["calls", "100000"], address_space=200_000_000, timeout=60),
    regions("many_calls_under_120MB_of_address_space", ["calls", "100000"], address_space=120_000_000, timeout=60),
    regions("many_names_under_200MB_of_address_space", ["names", "10000"], address_space=200_000_000, timeout=60),
    regions("threads_with_output", ["threads", "8"], stderr=[r"hwprof: wrote "], expect=[PROFILE]),
    regions("output_is_a_file", ["calls", "10"], files={"out": "not a folder\n"}, stderr=[r"hwprof: .*out"],
            expect=[Expect("out", kind="file", unchanged=True)], check=lines_at_most(4)),
    regions("output_under_a_file", ["calls", "10"], env={"HWPROF_OUTPUT": "f/sub"}, files={"f": "x\n"}, stderr=[r"hwprof: .*f/sub"],
            expect=[Expect("f", kind="file", unchanged=True)]),
    regions("report_module_missing", ["calls", "10"], env={**OUT, "HWPROF_REPORT_MODULE": "no-such-module.so"},
            stderr=[r"no-such-module\.so"], expect=[Expect("out/regions.txt", kind="file", contains=[r"step"])]),
    regions("report_module_not_a_library", ["calls", "10"], env={**OUT, "HWPROF_REPORT_MODULE": "fake.so"},
            files={"fake.so": "not an ELF file\n"}, stderr=[r"fake\.so"], expect=[Expect("out/regions.txt", kind="file")]),

    # --- names: small and bounded, the limit said once, names past it counted together ---
    regions("ten_thousand_names_without_any_variable", ["names", "10000"], env={}, stderr_not=[r"hwprof"],
            expect=[Expect("out", kind="absent")], max_rss_mb=100),
    regions("names_past_the_limit_are_counted_together", ["names", "3000"], env={**OUT, "HWPROF_MAX_REGIONS": "1000"},
            expect=[Expect("out/profile.json", kind="file", contains=[r"\[other names\]"])],
            check=said_once(r"more than 1000 region names")),
    regions("names_past_the_default_limit", ["names", "20000"], stderr=[r"more than 16384 region names"],
            expect=[Expect("out/profile.json", kind="file", contains=[r"\[other names\]"])], check=lines_at_most(6), timeout=60),
    regions("names_without_output_say_nothing", ["names", "20000"], env={}, stderr_not=[r"hwprof"]),

    # --- ends that do not match their begins: said, once per region ---
    regions("unmatched_ends_are_said", ["unmatched"], stderr=[r"not open on the thread.*'never-begun'", r"'other-name'"],
            expect=[PROFILE]),

    # --- fork, exec, spawn: each process its own report, never a mixed folder ---
    regions("fork_without_exec", ["fork"], stderr=[r"wrote .* to out/pid-\d+", r"wrote .* to out\n"],
            check=own_folders(1, "parent", "child")),
    regions("fork_then_exec", ["fork-exec"], stderr=[r"wrote .* to out/pid-\d+"], check=own_folders(1, "parent", "step")),
    regions("posix_spawn_four_children", ["spawn", "4"], check=own_folders(4, "parent", "step")),
    regions("six_children_exiting_together", ["children", "6"], check=own_folders(6, "parent", "child")),
    regions("a_stale_claim_is_taken_over", ["calls", "10"], files={"out/.hwprof-owner": "999999999 1\n"}, expect=[PROFILE],
            check=lambda ctx, r: [] if not pid_folders(ctx) else ["a claim of a process that has ended was honoured"]),
    regions("a_live_claim_is_respected", ["calls", "10"], files={"out/.hwprof-owner": "1 0\n"},
            expect=[Expect("out/profile.json", kind="absent"), Expect("out/.hwprof-owner", kind="file", unchanged=True)],
            check=lambda ctx, r: [] if len(pid_folders(ctx)) == 1 else ["the folder claimed by pid 1 was not left to it"]),
]

# --- set_work with numbers no roofline can place: ignored and said, never INT64_MIN ---
for flops, bytes_ in WORK_BAD:
    CASES.append(regions(f"work_{flops}_{bytes_}".replace("-", "minus").replace(".", "_"), ["work", flops, bytes_],
                         stderr=[r"set_work was given FLOPs or bytes that are not numbers.*'work'"], expect=[PROFILE],
                         check=no_int64_extremes))
CASES.append(regions("work_that_is_fine", ["work", "2e9", "4e8"], stderr_not=[r"set_work"],
                     expect=[Expect("out/profile.json", kind="file", contains=[r'"flops": 2000000000'])]))

# --- environment values: each named on stderr, the program runs on ---
CASES.append(regions("environment_disable_maybe", ["calls", "10"], env={**OUT, "HWPROF_DISABLE": "maybe"},
                     stderr=[r"HWPROF_DISABLE=maybe: expected"], expect=[Expect("out", kind="absent")]))
for name, env, message in ENV_BAD:
    CASES.append(regions(f"environment_{name}", ["calls", "10"], env={**OUT, **env}, stderr=[message],
                         check=lambda ctx, r: [] if (ctx.dir / "out").exists() else ["nothing was written into out/"]))
