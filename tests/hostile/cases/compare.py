"""`hwprof compare A B` (and `hwprof report`) on profiles that disagree with themselves: layers
named alike (matched by occurrence), kept per-call times inconsistent with their own
statistics (never a confident p-value or a failed gate), and other files hwprof writes given
in place of a profile (named, with the command that reads them)."""

import json

from hostile_case import Case, Expect, fixture, mutated_json

NEEDS = {"machine", "profile"}
A, B = "a.json", "b.json"


def change(f):
    return mutated_json("profile", f)


def both(f):
    """A and B, each the fixture profile changed by f."""
    return {A: change(f), B: change(f)}


def layer(i, **fields):
    return lambda p: p["layers"][i].update(fields)


def rename(i, like):
    return lambda p: p["layers"][i].update(name=p["layers"][like]["name"], phase=p["layers"][like]["phase"])


def samples(i, make):
    """Layer i's kept times replaced by make(its time statistics, how many kept)."""
    return lambda p: p["layers"][i].update(samples_ms=make(p["layers"][i]["time_ms"], len(p["layers"][i]["samples_ms"])))


def total_samples(make):
    return lambda p: p["total"].update(samples_ms=make(p["total"]["time_ms"], len(p["total"]["samples_ms"])))


def seq(*fs):
    def f(p):
        for g in fs:
            g(p)

    return f


def gate(name, b_change, *patterns, fmt="table"):
    """`hwprof compare a b --fail-if-slower 0` with B changed: exits 0 (no evidence, no gate)."""
    args = ["compare", A, B, "--fail-if-slower", "0", "-f", fmt, "-o", "out.txt"]
    return Case(name, args, rc=0, files={A: fixture("profile"), B: change(b_change)}, needs=NEEDS,
                expect=[Expect("out.txt", kind="file", contains=list(patterns))], timeout=15)


def wrong_kind(name, command, content, *patterns):
    """A file of another kind given to `compare` (as A) or `report`: named, and nothing written."""
    args = ["compare", "x.json", B, "-o", "out.txt"] if command == "compare" else ["report", "x.json", "--html", "out.txt"]
    files = {"x.json": content}
    if command == "compare":
        files[B] = fixture("profile")
    return Case(name, args, rc=1, files=files, needs=NEEDS, stderr=[r"x\.json\b.*this is "] + list(patterns),
                stderr_not=[r'missing "created"', r'missing "machine"'],
                expect=[Expect("out.txt", kind="absent")], timeout=15)


MERGE = json.dumps({"kind": "hwprof-merge", "schema": 1, "made_by": "hwprof merge", "model": "m", "ranks": [],
                    "warnings": [], "regions": []}, indent=2) + "\n"
SUMMARY = json.dumps({"schema": "hwprof.summary/1", "model": "lenet5", "batch": 1, "layers": []}, indent=2) + "\n"
COMPARISON = json.dumps({"a": "a.json", "b": "b.json", "alpha": 0.05, "test": "Mann-Whitney U, two-sided",
                         "differences": [], "layers": []}, indent=2) + "\n"
FLEET = json.dumps([{"label": "A", "file": "m.json", "host": "h", "cpu": "c", "cores": 4, "contended": False}],
                   indent=2) + "\n"
STAT = json.dumps({"command": ["true"], "backend": "perf", "exit_code": 0, "wall_seconds": 0.01, "events": [],
                   "metrics": []}, indent=2) + "\n"



def ZEROS(_t, n):
    return [0.0] * n


def AT_MAX(t, n):
    return [t["max"]] * n


def NEGATIVE(_t, n):
    return [-1.0] * n


CASES = [
    # --- layers named alike: the k-th of A with the k-th of B ---
    Case("duplicate_names_matched_by_occurrence", ["compare", A, B, "--all"], files=both(rename(1, 0)), needs=NEEDS,
         stdout=[r"^Layers: (\d+) matched", r"^\S+ #2 "], stdout_not=[r"^Only in"]),
    Case("duplicate_names_json", ["compare", A, B, "-f", "json"], files=both(rename(2, 0)), needs=NEEDS,
         stdout=[r'"name": "\S+ #2"'], stdout_not=[r'"only_in_a": \[\s*"']),
    Case("a_third_occurrence_only_in_b", ["compare", A, B, "--all"],
         files={A: change(rename(1, 0)), B: change(seq(rename(1, 0), rename(2, 0)))}, needs=NEEDS,
         stdout=[r"^Only in B \(1\): \S+ #3$", r"^Only in A \(1\): "]),

    # --- kept times inconsistent with their own statistics: no p-value, no gate ---
    gate("all_zero_samples_in_b", samples(0, ZEROS), r"samples inconsistent in B: a kept time of 0 ms lies outside",
         r"nothing significantly slower"),
    gate("samples_all_at_the_max", samples(0, AT_MAX), r"samples inconsistent in B: the kept times' median"),
    gate("all_zero_total_samples", total_samples(ZEROS), r"(?m)^  samples inconsistent in B: a kept time of 0 ms"),
    gate("samples_json_verdict", samples(0, ZEROS), r'"verdict": "samples inconsistent"', r'"p_value": null', fmt="json"),
    gate("more_samples_than_calls", samples(0, lambda t, n: [t["median"]] * (t["n"] + 3)),
         r"samples inconsistent in B: \d+ per-call times kept of \d+ calls"),
    Case("negative_samples_refused", ["compare", A, B], rc=1, files={A: fixture("profile"), B: change(samples(0, NEGATIVE))},
         needs=NEEDS, stderr=[r"b\.json:\d+:\d+: /layers/0/samples_ms/0: expected a finite, non-negative time in ms"]),

    # --- other files hwprof writes, given to compare or report ---
    wrong_kind("merge_to_compare", "compare", MERGE, r"a merge of ranks", r"`hwprof merge x\.json` renders it",
               r"compare reads two profiles"),
    wrong_kind("merge_to_report", "report", MERGE, r"a merge of ranks", r"`hwprof merge x\.json` renders it", r"not a profile"),
    wrong_kind("machine_report_to_report", "report", fixture("machine"), r"a machine report \(`hwprof calibrate`\)"),
    wrong_kind("summary_to_compare", "compare", SUMMARY, r"a model summary \(`hwprof summary -f json`\)"),
    wrong_kind("comparison_to_report", "report", COMPARISON, r"a comparison of two profiles \(`hwprof compare -f json`\)"),
    wrong_kind("machines_compared_to_report", "report", FLEET, r"machines compared \(`hwprof compare -f json`"),
    wrong_kind("stat_output_to_compare", "compare", STAT, r"counter statistics of a command \(`hwprof stat -f json`\)"),
]
