"""Event-group files (counters/README.md), given with `stat -g FILE` or `profile --group FILE`:
syntax errors, unknown events, bad formulas, NUL bytes, files that are not files; and the
match files that say which CPUs a family fits (counters/<family>/cpus.match, found through
HWPROF_COUNTERS_PATH): each broken one makes the family unknown with its reason, never a
silent generic."""

from hostile_case import FAST_RUN, Case, Dir, Fifo, Sparse, Symlink, esc, group

GRP = "g.txt"
STAT = ["stat", "-g", "./" + GRP, "--", "true"]
HEADER = "TITLE hostile\nSCOPE software\nFAMILIES software\n"


def bad_group(name, text, line, *words, **kw):
    """`hwprof stat -g ./g.txt -- true` refuses the file: 'g.txt:LINE:' (or 'g.txt:' for a
    whole-file problem) and each of `words`."""
    where = r"g\.txt:%d: " % line if line else r"g\.txt: "
    return Case(name, STAT, rc=1, files={GRP: text}, stderr=[where] + [esc(w) for w in words], **kw)


def bad_file(name, content, *patterns, **kw):
    return Case(name, STAT, rc=1, files={GRP: content}, stderr=list(patterns), **kw)


CASES = [
    # --- what works ---
    Case("valid_group", STAT, files={GRP: group(["task task-clock"], ["CPU time [s] = 1e-9 * task"])},
         stderr=[r"task-clock", r"CPU time\s+s"]),
    Case("crlf_line_endings", STAT, files={GRP: group(["task task-clock"], ["CPU [s] = 1e-9 * task"]).replace(
        "\n", "\r\n")}, stderr=[r"task-clock", r"CPU\s+s"]),
    Case("unknown_event_reported_not_dropped", STAT, files={GRP: group(["x no_such_event_xyz", "task task-clock"])},
         stderr=[r"<unsupported>\s+no_such_event_xyz\s+.*unknown event", r"task-clock"]),
    Case("zero_denominator_gives_no_value", STAT,
         files={GRP: group(["task task-clock", "f major-faults"], ["ratio [1] = task / f"])},
         stderr=[r"ratio\s+unavailable: the denominator is zero"]),
    Case("raw_event_with_a_comma", STAT, files={GRP: group(["rd uncore_imc/event=0x04,umask=0x0f/"])},
         stderr=[esc("uncore_imc/event=0x04,umask=0x0f/")], stderr_not=[r"(^|[\s'])umask=0x0f/"]),
    Case("profile_with_a_group_file", ["profile", "lenet5", "--calibration", "@{machine}", "--group", "./" + GRP]
         + FAST_RUN, files={GRP: group(["task task-clock"], ["CPU [s] = 1e-9 * task"])}, needs={"machine"},
         stdout=[r"task-clock"]),

    # --- header and sections ---
    bad_group("empty_file", "", 0, "missing TITLE line"),
    bad_group("missing_families", "TITLE t\nSCOPE software\nEVENTS\ntask task-clock\n", 0, "missing FAMILIES line"),
    bad_group("missing_events", HEADER, 0, "missing EVENTS section"),
    bad_group("misspelled_header", "TITEL t\nSCOPE software\nFAMILIES software\nEVENTS\ntask task-clock\n", 1,
              "unexpected 'TITEL t' before the first section"),
    bad_group("unknown_scope", "TITLE t\nSCOPE galaxy\nFAMILIES software\nEVENTS\ntask task-clock\n", 2,
              "unknown scope 'galaxy'", "core, uncore, software"),
    bad_group("unknown_family", "TITLE t\nSCOPE software\nFAMILIES zen9\nEVENTS\ntask task-clock\n", 3,
              "unknown family 'zen9'"),
    bad_group("title_twice", HEADER + "TITLE again\nEVENTS\ntask task-clock\n", 4, "a second TITLE line"),
    bad_group("events_twice", group(["task task-clock"]) + "EVENTS\nf page-faults\n", 6, "a second EVENTS section"),

    # --- events ---
    bad_group("duplicate_event_id", group(["task task-clock", "task page-faults"]), 6, "duplicate event id 'task'",
              "first at line 5"),
    bad_group("same_event_twice", group(["a task-clock", "b task-clock"]), 6, "already listed as 'a'"),
    bad_group("event_id_time_reserved", group(["time task-clock"]), 5, "'time' is reserved"),
    bad_group("event_id_upper_case", group(["Task task-clock"]), 5, "event id 'Task' must start with a lower-case"),
    bad_group("event_without_name", group(["task"]), 5, "has one word"),
    bad_group("event_name_with_a_space", group(["task task-clock extra"]), 5, "unexpected 'extra'"),
    bad_group("sixty_five_events", group([f"e{i} cpu/event=0x{i:x}/" for i in range(65)]), 69, "more than 64 events"),
    Case("nul_byte_in_an_event", STAT, rc=1, files={GRP: group(["task task-clock\0junk"])},
         stderr=[r"g\.txt:5\b", r"NUL"], finding=8),
    Case("nul_byte_in_the_title", STAT, rc=1,
         files={GRP: "TITLE t\0x\n" + HEADER.split("\n", 1)[1] + "EVENTS\ntask task-clock\n"},
         stderr=[r"g\.txt:1\b", r"NUL"], finding=8),
    bad_group("binary_garbage", bytes(range(1, 256)) * 10, 1, "unexpected"),
    Case("line_of_a_megabyte", STAT, files={GRP: group(["task " + "x" * 1000000])}, rc=(0, 1),
         stderr=[r"(?s)g\.txt:5\b|<unsupported>"], timeout=15),

    # --- metrics ---
    bad_group("coefficient_after_the_id", group(["task task-clock"], ["x [s] = task * 2"]), 7,
              "write the coefficient first"),
    bad_group("unknown_id_in_a_formula", group(["task task-clock"], ["x [s] = 2 * nosuch"]), 7,
              "uses 'nosuch', which is not an event id"),
    bad_group("unknown_role", group(["task task-clock"], ["x [FLOP] ROLE flop = task"]), 7, "unknown role 'flop'",
              "did you mean 'flops'?"),
    bad_group("role_without_a_name", group(["task task-clock"], ["x [FLOP] ROLE = task"]), 7, "ROLE names no role"),
    bad_group("role_on_a_rate", group(["task task-clock"], ["x [FLOP] ROLE flops = task / time"]), 7,
              "has ROLE flops, but it has a denominator"),
    bad_group("role_of_another_unit", group(["task task-clock"], ["x [s] ROLE dram_bytes = task"]), 7,
              "its unit is [s]; expected [bytes]"),
    bad_group("role_twice", group(["task task-clock"], ["x [FLOP] ROLE flops = task", "y [FLOP] ROLE flops = 2 * task"]),
              8, "a second metric with ROLE flops", "'x' at line 7"),
    Case("metric_with_a_role", STAT, files={GRP: group(["task task-clock"], ["Work [FLOP] ROLE flops = task"])},
         stderr=[r"Work\s+FLOP"]),
    bad_group("metric_without_equals", group(["task task-clock"], ["x [s] 1e-9 * task"]), 7, "expected '='"),
    bad_group("metric_without_unit", group(["task task-clock"], ["x = 1e-9 * task"]), 7, "no '[unit]'"),
    bad_group("unclosed_parenthesis", group(["task task-clock"], ["x [s] = (1e-9 * task"]), 7, "expected ')'"),
    bad_group("ambiguous_division", group(["task task-clock", "f page-faults"], ["x [1] = task + f / time"]), 8,
              "put it in parentheses"),
    bad_group("malformed_coefficient", group(["task task-clock"], ["x [s] = 1e-9e3 * task"]), 7,
              "malformed coefficient '1e-9e3'"),
    bad_group("infinite_coefficient", group(["task task-clock"], ["x [s] = 1e999 * task"]), 7, "1e999"),
    bad_group("duplicate_metric", group(["task task-clock"], ["x [s] = task", "x [s] = task"]), 8,
              "duplicate metric 'x'"),
    Case("bad_formula_through_profile", ["profile", "lenet5", "--calibration", "@{machine}", "--group", "./" + GRP]
         + FAST_RUN, rc=1, files={GRP: group(["task task-clock"], ["x [s] = task * 2"])}, needs={"machine"},
         stderr=[r"g\.txt:7: .*write the coefficient first"]),

    # --- files that are not regular files (finding 4) ---
    Case("missing_file", ["stat", "-g", "./absent.txt", "--", "true"], rc=1, stderr=[r"absent\.txt\b.*No such file"]),
    bad_file("is_a_directory", Dir(), r"g\.txt: .*is a directory"),
    bad_file("link_to_dev_zero", Symlink("/dev/zero"), r"g\.txt: .*character device", timeout=15, max_rss_mb=300,
             max_rss_mb_asan=1024, finding=4),
    Case("dev_urandom", ["stat", "-g", "/dev/urandom", "--", "true"], rc=1, timeout=15, max_rss_mb=300,
         max_rss_mb_asan=1024, stderr=[r"/dev/urandom: .*character device"], finding=4),
    bad_file("fifo_without_writer", Fifo(), r"g\.txt: .*FIFO", timeout=15, finding=4),
    bad_file("sparse_3GiB", Sparse(3 * 1024**3), r"g\.txt: .*at most", timeout=10, max_rss_mb=300,
             max_rss_mb_asan=1024, finding=4),
    Case("sparse_3GiB_through_profile", ["profile", "lenet5", "--calibration", "@{machine}", "--group", "./" + GRP]
         + FAST_RUN, rc=1, files={GRP: Sparse(3 * 1024**3)}, needs={"machine"}, stderr=[r"g\.txt: .*at most"],
         timeout=10, max_rss_mb=300, max_rss_mb_asan=1024, finding=4),
]


# A counters folder (HWPROF_COUNTERS_PATH) whose zen5 family fits every AMD family 0x1A CPU
# (this machine's family, or none: the reason is what the case looks at) unless the case
# replaces its match file.
FAMILY_GROUP = "TITLE t\nSCOPE software\nFAMILIES zen5\nEVENTS\ntask task-clock\n"
MATCH = "counters/zen5/cpus.match"


def broken_family(name, match, *why, extra=None, **kw):
    """`hwprof info` says the family is unknown and why (the match file named), exit 0."""
    files = {"counters/zen5/ipc.txt": FAMILY_GROUP, MATCH: match}
    files.update(extra or {})
    return Case(name, ["info"], files=files, env={"HWPROF_COUNTERS_PATH": "counters"},
                stdout=[r"counter family\s+unknown", r"why: counters/zen5/cpus\.match"] + list(why), timeout=15, **kw)


CASES += [
    broken_family("family_match_without_0x", "vendor AuthenticAMD family 1A models 0x00-0x2F\n",
                  esc("cpus.match:1: family '1A' has no 0x"), esc("(0x1A if that was hexadecimal)")),
    broken_family("family_match_unknown_vendor", "vendor AuthenticAMDx family 0x1A models 0x00-0x2F\n",
                  esc("unknown vendor 'AuthenticAMDx' (did you mean 'AuthenticAMD'?)")),
    broken_family("family_match_model_above_0xff", "vendor AuthenticAMD family 0x1A models 0x00-0x100\n",
                  esc("model '0x100' is above 0xFF")),
    broken_family("family_match_range_backwards", "vendor AuthenticAMD family 0x1A models 0x2F-0x00\n",
                  esc("range '0x2F-0x00' ends below its start")),
    broken_family("family_match_nul_byte", b"vendor AuthenticAMD family 0x1A models 0x00\0-0x2F\n", esc("a NUL byte")),
    broken_family("family_match_too_large", "#" * 100000, esc("100000 bytes; a match file may have at most 65536 bytes")),
    broken_family("family_match_is_a_directory", Dir(), esc("is a directory, not a match file")),
    broken_family("family_match_fifo_nobody_writes", Fifo(), esc("the pipe or FIFO gave no data")),
    broken_family("family_match_two_families_one_cpu", "vendor AuthenticAMD family 0x1A models 0x00-0xFF\n",
                  r"counters/zen5/cpus\.match:1 and counters/zen9/cpus\.match:1 both name AuthenticAMD family 0x1A",
                  extra={"counters/zen9/cpus.match": "vendor AuthenticAMD family 0x1A models 0x80\n"}),
    Case("family_match_broken_stat_refuses_the_group", ["stat", "-g", "ipc", "--", "true"], rc=1,
         files={"counters/zen5/ipc.txt": FAMILY_GROUP, MATCH: "vendor AuthenticAMD family 1A models 0x00\n"},
         env={"HWPROF_COUNTERS_PATH": "counters"},
         stderr=[esc("event group 'ipc': this CPU's counter family is unknown: counters/zen5/cpus.match:1:")]),
]
