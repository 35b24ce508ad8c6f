"""`hwprof merge`: the ranks' folders of a parallel run (DIR/rank-NNNNN/profile.json) with
entries that cannot be read, bad rank and size fields, sizes no launcher starts, times no rank
can spend; and merge JSON read back. Each refused input names the file and the reason, and
leaves no output half-written."""

import json

from hostile_case import Case, Dir, Expect, File, Fifo, Symlink, fixture, mutated_json

NEEDS = {"machine", "profile"}
NOBODY = 65534


def rank(k, size, change=None):
    """The fixture profile as rank k of `size`, optionally changed further."""

    def f(p):
        p["rank"] = {"rank": k, "size": size, "from": "OMPI_COMM_WORLD_RANK"}
        if change is not None:
            change(p)

    return mutated_json("profile", f)


def run(size=3, skip=(), **entries):
    """Files of a run folder `run/`: ranks 0..size-1 as rank-NNNNN/profile.json, except those in
    `skip`; `entries` adds or replaces paths under run/ (keys use __ for /)."""
    files = {f"run/rank-{k:05d}/profile.json": rank(k, size) for k in range(size) if k not in skip}
    for key, value in entries.items():
        files["run/" + key.replace("__", "/")] = value
    return files


def refused(name, files, *patterns, args=("merge", "run", "-o", "out.txt"), **kw):
    """`hwprof merge run -o out.txt` exits 1 with the patterns on stderr and writes nothing."""
    return Case(name, list(args), rc=1, files=files, stderr=list(patterns), needs=kw.pop("needs", NEEDS),
                expect=[Expect("out.txt", kind="absent")], timeout=kw.pop("timeout", 15), **kw)


def output_at_most(limit):
    def check(_ctx, result):
        return [f"stdout is {len(result.stdout)} bytes, more than {limit}"] if len(result.stdout) > limit else []

    return check


def merge_json(change=None):
    """A merge of two ranks as `hwprof merge -f json` writes it, optionally changed."""
    region = {"name": "step", "rank_ms": [1.0, 3.0], "rank_calls": [5, 5], "flops_per_call": None,
              "bytes_per_call": None, "min_ms": 1.0, "median_ms": 2.0, "mean_ms": 2.0, "max_ms": 3.0,
              "imbalance": 1 / 3, "straggler_rank": 1, "missing_ranks": 0}
    doc = {"kind": "hwprof-merge", "schema": 1, "made_by": "hwprof merge", "model": "m",
           "ranks": [{"rank": k, "size": 2, "file": f"rank-{k}/profile.json", "host": "h", "cpu": "c",
                      "model": "m", "threads": 1} for k in range(2)],
           "warnings": [], "total": dict(region, name="total", rank_ms=[1.0, 3.0], rank_calls=[5, 5]), "regions": [region],
           "ceilings": {"source": "", "compute_gflops": [], "memory_gbps": []}}
    if change is not None:
        change(doc)
    return json.dumps(doc, indent=2) + "\n"


def total_mean(value):
    return lambda p: p["total"]["time_ms"].update(mean=value)


def layer_mean(value):
    return lambda p: p["layers"][0]["time_ms"].update(mean=value)


CASES = [
    # --- what works ---
    Case("three_ranks", ["merge", "run"], files=run(3), needs=NEEDS,
         stdout=[r"^hwprof merge: 3 ranks of 'lenet5'", r"^Total per rank: .*imbalance \d+\.\d%$"],
         stdout_not=[r"WARNING", r"-?inf|nan"]),
    Case("a_rank_folder_without_its_profile", ["merge", "run"], files=run(3, skip=(1,), **{"rank-00001": Dir()}),
         needs=NEEDS, stdout=[r"WARNING: 2 of 3 ranks are here; missing: rank 1; a rank folder holds no profile\.json: "
                              r"run/rank-00001 \(did they crash"]),

    # --- rank entries that cannot be read: the reason, never a silent "missing rank" ---
    refused("profile_is_a_directory", run(3, **{"rank-00001__profile.json": Dir()}),
            r"run/rank-00001/profile\.json: .*is a directory"),
    refused("profile_is_a_fifo", run(3, **{"rank-00001__profile.json": Fifo()}),
            r"run/rank-00001/profile\.json: .*FIFO"),
    refused("profile_links_to_dev_zero", run(3, **{"rank-00002__profile.json": Symlink("/dev/zero")}),
            r"run/rank-00002/profile\.json: .*character device", max_rss_mb=300, max_rss_mb_asan=1024),
    refused("profile_link_loop", run(3, **{"rank-00001__profile.json": Symlink("profile.json")}),
            r"run/rank-00001/profile\.json: .*(?i:too many levels of symbolic links)"),
    refused("rank_folder_link_loop", run(3, skip=(2,), **{"rank-00002": Symlink("rank-00002")}),
            r"run/rank-00002: cannot be read \((?i:too many levels of symbolic links)\)"),
    refused("rank_entry_a_regular_file", run(3, skip=(0,), **{"rank-00000": "not a folder\n"}),
            r"run/rank-00000: a rank entry should be a folder holding profile\.json; this is a regular file"),
    refused("rank_entry_a_fifo", run(3, skip=(2,), **{"rank-00002": Fifo()}),
            r"run/rank-00002: a rank entry should be a folder holding profile\.json; this is a FIFO"),
    refused("profile_truncated", run(3, **{"rank-00001__profile.json": fixture("profile", cut=3000)}),
            r"run/rank-00001/profile\.json:\d+:\d+: .*(?i:truncated)"),
    refused("profile_empty", run(3, **{"rank-00000__profile.json": ""}),
            r"run/rank-00000/profile\.json: the profile is empty"),
    refused("profile_not_readable", run(3, **{"rank-00001__profile.json": File(rank(1, 3), mode=0o000)}),
            r"run/rank-00001/profile\.json: .*(?i:permission denied)", needs=NEEDS | {"root"}, run_as_uid=NOBODY),
    refused("two_entries_unreadable", run(4, **{"rank-00001__profile.json": Dir(), "rank-00003__profile.json": Fifo()}),
            r"^hwprof: error: 2 rank profiles cannot be merged:$", r"^  run/rank-00001/profile\.json: .*directory",
            r"^  run/rank-00003/profile\.json: .*FIFO"),

    # --- rank and size fields ---
    refused("rank_null_in_the_rank_object", run(3, **{"rank-00001__profile.json": rank(1, 3, lambda p: p["rank"].update(rank=None))}),
            r"run/rank-00001/profile\.json:\d+:\d+: /rank/rank: "),
    refused("rank_negative", run(3, **{"rank-00001__profile.json": rank(-1, 3)}),
            r"run/rank-00001/profile\.json:\d+:\d+: /rank/rank: expected an integer >= 0, got -1"),
    refused("rank_equal_to_size", run(3, **{"rank-00002__profile.json": rank(3, 3)}),
            r"run/rank-00002/profile\.json:\d+:\d+: /rank/rank: rank 3 of 3 ranks"),
    refused("size_negative", run(3, **{"rank-00001__profile.json": rank(1, -3)}),
            r"run/rank-00001/profile\.json:\d+:\d+: /rank/size: expected an integer >= 0, got -3"),
    refused("size_a_fraction", run(3, **{"rank-00001__profile.json": rank(1, 3.5)}),
            r"run/rank-00001/profile\.json:\d+:\d+: /rank/size: expected an integer"),
    refused("size_int_max", run(1, **{"rank-00000__profile.json": rank(0, 2147483647)}),
            r"run/rank-00000/profile\.json:\d+:\d+: /rank/size: 2147483647 ranks is more than any launcher starts "
            r"\(at most 16777216\)", max_rss_mb=300, max_rss_mb_asan=1024),
    refused("size_past_int", run(1, **{"rank-00000__profile.json": rank(0, 2**40)}),
            r"run/rank-00000/profile\.json:\d+:\d+: /rank/size: expected an integer below 2\^31"),
    refused("sizes_disagree", run(3, **{"rank-00002__profile.json": rank(2, 5)}),
            r"run/rank-00002/profile\.json: /rank/size says 5 ranks, run/rank-00001/profile\.json says 3: merge the "
            r"folders of one run only"),
    refused("unranked_beside_ranked", run(2, **{"rank-00001__profile.json": mutated_json("profile", lambda p: p.update(rank=None))}),
            r"run/rank-00001/profile\.json: /rank is null \(not launched by mpirun, srun or torchrun\) while "
            r"run/rank-00000/profile\.json is rank 0 of 2"),
    refused("one_rank_twice", run(3, **{"rank-00002__profile.json": rank(1, 3)}),
            r"run/rank-00001/profile\.json and run/rank-00002/profile\.json are both rank 1"),
    Case("size_ten_million_one_rank_here", ["merge", "run"], files=run(1, **{"rank-00000__profile.json": rank(3, 10**7)}),
         needs=NEEDS, stdout=[r"WARNING: 1 of 10000000 ranks are here; missing: ranks 0-2, 4-9999999 \(9999999 ranks\)"],
         check=output_at_most(20000), timeout=15, max_rss_mb=300, max_rss_mb_asan=1024),
    Case("size_16m_every_other_rank_missing", ["merge", "run"],
         files={f"run/rank-{k:05d}/profile.json": rank(k, 2**24) for k in (0, 2, 4)}, needs=NEEDS,
         stdout=[r"missing: ranks 1, 3, 5-16777215 \(16777213 ranks\)"], check=output_at_most(20000), timeout=15,
         max_rss_mb=300, max_rss_mb_asan=1024),

    # --- times no rank can spend: refused, never -inf% or nan ---
    refused("total_mean_1e308", run(3, **{"rank-00001__profile.json": rank(1, 3, total_mean(1e308))}),
            r"run/rank-00001/profile\.json: /total \(the total\): (inf|1e\+308) ms in all is not a time a rank can spend "
            r"\(at most 1e\+12 ms\)"),
    refused("layer_mean_1e308", run(3, **{"rank-00000__profile.json": rank(0, 3, layer_mean(1e308))}),
            r"run/rank-00000/profile\.json: /layers/0 \(\w+\): (inf|1e\+308) ms in all is not a time"),
    refused("total_mean_1e14", run(2, **{"rank-00001__profile.json": rank(1, 2, total_mean(1e14))}),
            r"run/rank-00001/profile\.json: /total \(the total\): \d\.?\d*e\+14 ms in all is not a time"),
    refused("merged_json_time_1e308", {"m.json": merge_json(lambda d: d["regions"][0]["rank_ms"].__setitem__(1, 1e308))},
            r"m\.json:\d+:\d+: /regions/0/rank_ms/1: expected a number from 0 to 1e\+12, or null", args=("merge", "m.json", "-o", "out.txt")),
    refused("merged_json_total_1e300", {"m.json": merge_json(lambda d: d["total"]["rank_ms"].__setitem__(0, 1e300))},
            r"m\.json:\d+:\d+: /total/rank_ms/0: expected a number from 0 to 1e\+12", args=("merge", "m.json", "-o", "out.txt")),
    Case("merged_json_renders", ["merge", "m.json"], files={"m.json": merge_json()},
         stdout=[r"^hwprof merge: 2 ranks of 'm'", r"imbalance 33\.3%"], stdout_not=[r"-?inf|nan"]),
]
