"""Machine reports (calibrations): given with `profile --calibration FILE`, or found in the
store under $XDG_DATA_HOME/hwprof/machines/. Missing, wrong, NaN, negative and implausible
fields, another CPU's report, files that are not files, deep nesting, and no store at all."""

import json
from pathlib import Path

from hostile_case import (FAST_RUN, Case, Dir, Expect, Fifo, Sparse, Symlink, deep_nesting, esc, fixture, in_pipe,
                          model_text, mutated_json, replaced_json, store_name)

CAL = "m.json"
PROFILE = ["profile", "lenet5", "--calibration", CAL] + FAST_RUN
NO_HOME_UID = 54321  # no entry in /etc/passwd: hwprof cannot find a home from the password database


def bad_machine(name, content, *patterns, **kw):
    """`hwprof profile lenet5 --calibration m.json` refuses the report, naming it."""
    kw.setdefault("needs", {"machine"})
    return Case(name, PROFILE, rc=1, files={CAL: content}, stderr=[r"m\.json\b"] + list(patterns), **kw)


def machine_change(change):
    return mutated_json("machine", change)


def run0(m):
    return m["runs"][0]


def stored(kind):
    """A setup that puts this machine's report into the store ('valid', 'truncated',
    'foreign') or a directory where it belongs ('directory'); @{stored} is its path."""

    def setup(ctx):
        machine = json.loads(ctx.fixture_text("machine"))
        path = Path(ctx.dir) / "hwprof" / "machines" / store_name(machine)
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "directory":
            path.mkdir()
        elif kind == "valid":
            path.write_text(json.dumps(machine, indent=2))
        elif kind == "truncated":
            path.write_text(json.dumps(machine, indent=2)[:3000])
        elif kind == "foreign":
            machine["cpu"].update(vendor="GenuineIntel", family=6, model_number=143,
                                  model="Intel(R) Xeon(R) Platinum 8480+")
            path.write_text(json.dumps(machine, indent=2))
        ctx.vars["stored"] = str(path)

    return setup


def no_local_store(ctx, result):
    """With neither HOME nor XDG_DATA_HOME (and no home in the password database) hwprof must
    not invent a store in the cwd (the Expect on .local); if it refuses, it says which
    variable to set."""
    failures = []
    if result.rc == 1 and "HOME" not in result.stderr and "XDG_DATA_HOME" not in result.stderr:
        failures.append("refused without naming HOME or XDG_DATA_HOME")
    return failures


CASES = [
    Case("valid_report_accepted", PROFILE, files={CAL: fixture("machine")}, needs={"machine"},
         stdout=[r"ceilings measured by `hwprof calibrate` .* in m\.json"]),
    Case("unknown_field_accepted", PROFILE, files={CAL: machine_change(lambda m: m.update(from_the_future=1))},
         needs={"machine"}, stdout=[r"in m\.json"]),
    Case("contended_report_says_so_first", PROFILE, needs={"machine"},
         files={CAL: machine_change(lambda m: m.update(contended=True))},
         stdout=[r"WARNING: the calibration was measured while other processes ran"]),
    Case("no_run_for_these_threads", PROFILE, needs={"machine"},
         files={CAL: machine_change(lambda m: run0(m).update(threads=2))},
         stdout=[r"no calibration for 1 thread: no roofline"]),

    # --- missing and wrongly typed fields ---
    bad_machine("missing_schema", machine_change(lambda m: m.pop("schema")), r"m\.json:1:1: missing \"schema\""),
    bad_machine("schema_from_a_newer_hwprof", machine_change(lambda m: m.update(schema=2)), r"newer hwprof",
                r"upgrade"),
    bad_machine("schema_a_string", machine_change(lambda m: m.update(schema="1")), r"/schema: expected an integer"),
    bad_machine("missing_cpu", machine_change(lambda m: m.pop("cpu")), r'missing "cpu"'),
    bad_machine("missing_theoretical", machine_change(lambda m: m.pop("theoretical")), r'missing "theoretical"'),
    bad_machine("missing_runs", machine_change(lambda m: m.pop("runs")), r'missing "runs"'),
    bad_machine("runs_empty", machine_change(lambda m: m.update(runs=[])), r"/runs: expected a non-empty list"),
    bad_machine("runs_an_object", machine_change(lambda m: m.update(runs={})), r"/runs: expected a non-empty list"),
    bad_machine("run_without_compute", machine_change(lambda m: run0(m).pop("compute")), r'/runs/0: missing "compute"'),
    bad_machine("run_without_bandwidth", machine_change(lambda m: run0(m).pop("bandwidth")),
                r'/runs/0: missing "bandwidth"'),
    bad_machine("threads_negative", machine_change(lambda m: run0(m).update(threads=-1)),
                r"/runs/0/threads: expected an integer >= 1, got -1"),
    bad_machine("threads_a_string", machine_change(lambda m: run0(m).update(threads="one")),
                r"/runs/0/threads: expected an integer >= 1"),
    bad_machine("threads_1e30", machine_change(lambda m: run0(m).update(threads=10**30)), r"/runs/0/threads"),
    bad_machine("logical_cpus_zero", machine_change(lambda m: m["cpu"].update(logical_cpus=0)), r"/cpu/logical_cpus"),
    bad_machine("host_a_number", machine_change(lambda m: m.update(host=5)), r"/host: expected a string"),
    bad_machine("sweep_a_string", machine_change(lambda m: run0(m).update(sweep="x")), r"/runs/0/sweep"),
    bad_machine("bandwidth_a_string", machine_change(lambda m: run0(m)["bandwidth"]["l1"].update(triad_gbps="fast")),
                r"/runs/0/bandwidth/l1/triad_gbps: expected a number"),

    # --- values: NaN, infinite, negative, zero, implausible ---
    bad_machine("nan_literal", replaced_json("machine", '"schema": 1', '"schema": NaN'), r"not a valid machine report"),
    bad_machine("number_1e999", replaced_json("machine", '"schema": 1', '"schema": 1e999'), r"(?i)overflow"),
    bad_machine("negative_bandwidth", machine_change(lambda m: run0(m)["bandwidth"]["l1"].update(triad_gbps=-5)),
                r"/runs/0/bandwidth/l1/triad_gbps: expected a positive finite number, got -5"),
    bad_machine("zero_dram_bandwidth", machine_change(lambda m: run0(m)["bandwidth"]["dram"].update(triad_gbps=0)),
                r"/runs/0/bandwidth/dram/triad_gbps: expected a positive finite number, got 0"),
    bad_machine("fma_beyond_twice_the_peak", machine_change(lambda m: run0(m)["compute"].update(fma_sp_gflops=1e9)),
                r"implausible", r"more than twice the theoretical"),
    bad_machine("dp_faster_than_sp", machine_change(lambda m: run0(m)["compute"].update(
        fma_dp_gflops=run0(m)["compute"]["fma_sp_gflops"] * 1.5)), r"implausible", esc("DP <= SP")),
    bad_machine("l2_faster_than_l1", machine_change(lambda m: run0(m)["bandwidth"]["l2"].update(
        triad_gbps=run0(m)["bandwidth"]["l1"]["triad_gbps"] * 3)), r"implausible", esc("L1 >= L2")),

    # --- another machine's report, or not a report ---
    bad_machine("another_cpu", machine_change(lambda m: m["cpu"].update(
        vendor="GenuineIntel", family=6, model_number=143, model="Intel(R) Xeon(R) Platinum 8480+")),
        r"another CPU", r"Xeon"),
    bad_machine("another_cpu_count", machine_change(lambda m: m["cpu"].update(logical_cpus=512)),
                r"another CPU", r"512 CPUs"),
    bad_machine("a_profile_given_as_report", fixture("profile"), r"m\.json:1:1: this is a profile \(`hwprof profile`",
                needs={"machine", "profile"}),
    bad_machine("a_model_spec_given_as_report", model_text("lenet5"), r'missing "schema"'),
    bad_machine("array", "[]", r"a machine report is a JSON object"),
    bad_machine("truncated", fixture("machine", cut=3000), r"(?i)truncated"),
    bad_machine("empty", "", r"(?i)empty"),

    # --- files that are not regular files (finding 4) ---
    Case("report_missing", ["profile", "lenet5", "--calibration", "absent.json"] + FAST_RUN, rc=1,
         stderr=[r"absent\.json\b.*No such file"]),
    bad_machine("report_is_a_directory", Dir(), r"m\.json: .*is a directory", finding=4, timeout=15),
    bad_machine("report_dev_zero", Symlink("/dev/zero"), r"m\.json: .*character device", finding=4, timeout=15),
    Case("report_dev_zero_itself", ["profile", "lenet5", "--calibration", "/dev/zero"] + FAST_RUN, rc=1,
         stderr=[r"/dev/zero: .*character device"], finding=4, timeout=15, max_rss_mb=300, max_rss_mb_asan=1024),
    bad_machine("report_link_to_dev_urandom", Symlink("/dev/urandom"), r"m\.json: .*character device", finding=4,
                timeout=15, max_rss_mb=300, max_rss_mb_asan=1024),
    bad_machine("report_fifo_without_writer", Fifo(), r"m\.json: .*FIFO", finding=4, timeout=15),
    bad_machine("report_sparse_3GiB", Sparse(3 * 1024**3), r"m\.json: .*at most", finding=4, timeout=10,
                max_rss_mb=300, max_rss_mb_asan=1024),
    Case("report_through_a_pipe", ["profile", "lenet5", "--calibration", "@{pipe}"] + FAST_RUN, needs={"machine"},
         setup=in_pipe("pipe", fixture("machine")), stdout=[r"ceilings measured by `hwprof calibrate`"], finding=8),
    bad_machine("nesting_100k_brackets", deep_nesting("["), r"nesting", r"256", finding=5, timeout=10),
    bad_machine("nesting_100k_objects", deep_nesting('{"a":'), r"nesting", r"256", finding=5, timeout=10),

    # --- the store: $XDG_DATA_HOME/hwprof/machines/<host>--<cpu>.json ---
    Case("stored_report_found", ["profile", "lenet5"] + FAST_RUN, needs={"machine"}, setup=stored("valid"),
         stdout=[r"ceilings measured by `hwprof calibrate` .* in @{stored}"], stderr_not=[r"running a quick one"],
         timeout=20),
    Case("stored_report_truncated", ["profile", "lenet5"] + FAST_RUN, rc=1, needs={"machine"},
         setup=stored("truncated"), stderr=[r"@{stored}: .*(?i:truncated)"], timeout=20),
    Case("stored_report_of_another_cpu", ["profile", "lenet5"] + FAST_RUN, rc=1, needs={"machine"},
         setup=stored("foreign"), stderr=[r"@{stored}: not used", r"Xeon"], timeout=20),
    Case("stored_report_is_a_directory", ["profile", "lenet5"] + FAST_RUN, rc=1, needs={"machine"},
         setup=stored("directory"), stderr=[r"@{stored}: .*is a directory"], timeout=20, finding=8),
    # The store's lock and the store itself: neither may land in the cwd. (A profile without a
    # stored calibration would take the same path, through a quick calibration of its own.)
    Case("no_home_calibrate_makes_no_local_store", ["calibrate", "--quick", "--allow-contended", "--threads", "1",
                                                    "--precision", "sp", "-o", "out.json"], rc=(0, 1),
         env={"HOME": None, "XDG_DATA_HOME": None}, run_as_uid=NO_HOME_UID, needs={"root"},
         expect=[Expect(".local", kind="absent")], check=no_local_store, timeout=40, finding=8),
]
