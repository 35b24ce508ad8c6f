"""Event lists given with -e (stat and profile): empty names, ',,', unknown names, huge names,
raw events whose terms hold commas, and events a backend cannot count. An event that cannot
be counted is reported with its reason (never dropped, never 0); the program still runs."""

from hostile_case import FAST_RUN, Case, esc


def stat(events, *more):
    return ["stat", "-e", events, *more, "--", "true"]


UNSUPPORTED = r"<unsupported>\s+"
NO_EVENT = r"^hwprof: error: -e: no event named; give e\.g\. -e task-clock,page-faults$"
UNCORE_RAW = "uncore_imc/event=0x04,umask=0x0f/"
CORE_RAW = "cpu/event=0x3c,umask=0x00/"

CASES = [
    Case("one_event", stat("task-clock"), stderr=[r"\S+ ms\s+task-clock", r"exit code 0"]),
    Case("libpfm4_spelling", stat("perf::TASK-CLOCK"), stderr=[r"ms\s+perf::TASK-CLOCK"]),
    # A list that names no event is a bad command line (exit 2), said as such.
    Case("empty_name", stat(""), rc=2, stderr=[NO_EVENT], stderr_not=[r"Counter stats"]),
    Case("double_comma", stat("task-clock,,page-faults"), stderr=[r"ms\s+task-clock", r"\d\s+page-faults"]),
    Case("trailing_comma", stat("task-clock,"), stderr=[r"ms\s+task-clock"]),
    Case("only_a_comma_swallows_nothing", ["stat", "-e", ",", "--", "true"], rc=2, stderr=[NO_EVENT],
         stderr_not=[r"unknown event '--'", r"<unsupported>\s+--\s"], finding=2),
    Case("unknown_name", stat("no_such_event"),
         stderr=[UNSUPPORTED + r"no_such_event\s+.*unknown event 'no_such_event'"]),
    Case("unknown_name_beside_a_known_one", stat("no_such_event,task-clock"),
         stderr=[r"unknown event 'no_such_event'", r"ms\s+task-clock"]),
    Case("name_of_10kB", stat("x" * 10240), stderr=[r"unknown event 'x{10240}'"], timeout=15),
    Case("format_characters", stat("%s%n%x%p"), stderr=[esc("unknown event '%s%n%x%p'")]),
    Case("newline_in_a_name", stat("task-clock\npage-faults"), stderr=[UNSUPPORTED]),
    Case("unicode_name", stat("t\u00e2sk-clock"), stderr=[r"unknown event 't\u00e2sk-clock'"]),
    Case("two_hundred_events", stat(",".join(["task-clock"] * 200)), stderr=[r"ms\s+task-clock"], timeout=15),
    Case("unknown_umask", stat("FP_ARITH_INST_RETIRED:NO_SUCH"),
         stderr=[UNSUPPORTED + r"FP_ARITH_INST_RETIRED:NO_SUCH"]),
    Case("raw_event_of_an_unknown_pmu", stat("nosuchpmu/event=0x1/"),
         stderr=[UNSUPPORTED + r"nosuchpmu/event=0x1/\s+.*'nosuchpmu'"]),
    # Counted (a whole number, perhaps multiplexed) where the machine has a PMU, else its status
    # and the reason: one of these exact lines, and the program's exit code.
    Case("hardware_event_reported_with_its_status", stat("cycles"),
         stderr=[r"^ +(?:\d+  cycles +(?:\(multiplexed: counted \d+\.\d% of the time, scaled\))?"
                 r"|<(?:unsupported|no-permission|not-counted)>  cycles +\S.*)$", r"exit code 0$"]),

    # --- raw events: split only outside /.../ (finding 6) ---
    Case("raw_event_with_two_terms_is_one_event", stat(UNCORE_RAW), stderr=[esc(UNCORE_RAW)],
         stderr_not=[r"(^|[\s'])umask=0x0f/", r"'uncore_imc/event=0x04'"], finding=6),
    Case("raw_event_then_a_named_one", stat(CORE_RAW + ",task-clock"), stderr=[esc(CORE_RAW), r"ms\s+task-clock"],
         stderr_not=[r"(^|[\s'])umask=0x00/", r"'cpu/event=0x3c'"], finding=6),
    Case("named_then_two_raw_events", stat("task-clock," + CORE_RAW + "," + UNCORE_RAW),
         stderr=[esc(CORE_RAW), esc(UNCORE_RAW), r"ms\s+task-clock"],
         stderr_not=[r"(^|[\s'])umask=0x0[0f]/"], finding=6),
    Case("raw_event_in_json", ["stat", "-e", UNCORE_RAW, "--format", "json", "-o", "r.json", "--", "true"],
         check=lambda ctx, r: json_event_names(ctx, [UNCORE_RAW]), finding=6),

    # --- backends ---
    Case("timer_backend_reports_cycles_not_counted", ["stat", "--backend", "timer", "-e", "cycles", "--", "true"],
         stderr=[r"^.*\bcycles\b.*timer.*$"], finding=8),
    Case("timer_backend_reports_each_event", ["stat", "--backend", "timer", "-e", "cycles,instructions", "--", "true"],
         stderr=[r"^.*\bcycles\b.*timer.*$", r"^.*\binstructions\b.*timer.*$"], finding=8),
    Case("papi_backend_says_why", ["stat", "--backend", "papi", "-e", "task-clock", "--", "true"],
         stderr=[r"task-clock\s+.*PAPI"]),
    Case("group_and_events_exclude_each_other", ["stat", "-g", "software", "-e", "task-clock", "--", "true"], rc=2,
         stderr=[r"--group excludes --events"]),

    # --- profile -e: the model is never taken for an event (finding 2) ---
    Case("profile_events_then_the_model", ["profile", "-e", "task-clock", "lenet5", "--calibration", "@{machine}"]
         + FAST_RUN, needs={"machine"}, stdout=[r"hwprof profile: lenet5", r"task-clock"],
         stderr_not=[r"lenet5.*unknown event", r"model is required"], finding=2),
    Case("profile_events_then_options", ["profile", "-e", "task-clock,page-faults", "--calibration", "@{machine}",
                                         "lenet5"] + FAST_RUN, needs={"machine"},
         stdout=[r"hwprof profile: lenet5", r"page-faults"]),
    Case("profile_unknown_event_refused", ["profile", "lenet5", "-e", "no_such_event", "--calibration", "@{machine}"]
         + FAST_RUN, rc=1, needs={"machine"}, stderr=[r"event 'no_such_event'.*unknown event"]),
    # Counted where the uncore exists, refused with the reason where not: the name stays whole.
    Case("profile_raw_event_with_two_terms", ["profile", "lenet5", "--calibration", "@{machine}", "-e", UNCORE_RAW]
         + FAST_RUN, rc=(0, 1), needs={"machine"}, check=lambda ctx, r: whole_event(r, UNCORE_RAW), finding=6),
]


def whole_event(result, name):
    import re

    both = result.stdout + result.stderr
    failures = []
    if name not in both:
        failures.append(f"neither stdout nor stderr names the event {name!r} whole")
    first_term = name.split(",")[0]
    if re.search(r"'%s'|(^|[\s'])%s/" % (re.escape(first_term), re.escape(name.split(",")[1][:-1])), both, re.M):
        failures.append(f"the event was split at its comma ('{first_term}' ...)")
    return failures


def json_event_names(ctx, names):
    import json

    try:
        report = json.loads((ctx.dir / "r.json").read_text())
    except (OSError, ValueError) as error:
        return [f"r.json: {error}"]
    got = [e.get("name") for e in report.get("events", [])]
    return [] if got == names else [f"r.json lists events {got}, expected {names}"]
