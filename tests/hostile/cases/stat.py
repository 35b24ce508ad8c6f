"""`hwprof stat` and the program it runs: everything after `--` belongs to the program; hwprof
exits with the program's code (128 + the signal when it was killed); a program that cannot
start is named; signals sent to hwprof reach the program, and the report still comes."""

import signal

from hostile_case import Case, Dir, Expect, File, no_orphan, send_signal

STAT = ["stat", "-e", "task-clock"]
REPORT = r"task-clock"


def forwarded(number):
    """SIGnumber sent to hwprof while it counts `sleep 30`: the program ends by it, hwprof
    reports and exits 128 + number, quickly, leaving no program behind."""
    name = signal.Signals(number).name.lower()
    return Case(f"{name}_is_forwarded_to_the_program", STAT + ["--", "sleep", "30"], rc=128 + number,
                stderr=[REPORT], setup=send_signal(number, "sleep"), check=no_orphan, timeout=5, finding=7)


CASES = [
    # --- everything after -- is the program's (finding 2) ---
    Case("program_options_after_dashdash", STAT + ["--", "sort", "-o", "sorted.txt", "f.txt"],
         files={"f.txt": "cherry\napple\nbanana\n"}, stderr=[REPORT],
         expect=[Expect("sorted.txt", kind="file", contains=[r"\Aapple\nbanana\ncherry\n\Z"])], finding=2),
    Case("ls_la_after_dashdash", STAT + ["--", "ls", "-la"], files={"marker.txt": "x"},
         stdout=[r"marker\.txt", r"^total \d+"], stderr=[REPORT], finding=2),
    Case("ls_la_without_dashdash", STAT + ["ls", "-la"], files={"marker.txt": "x"},
         stdout=[r"marker\.txt", r"^total \d+"], stderr=[REPORT], finding=2),
    Case("hwprof_options_after_dashdash_are_the_programs", STAT + ["--", "printf", "%s|", "--help", "-e", "-o", "x",
                                                                   "--", "-g"],
         stdout=[r"\A--help\|-e\|-o\|x\|--\|-g\|\Z"], stderr=[REPORT], expect=[Expect("x", kind="absent")], finding=2),
    Case("arguments_with_spaces_and_newlines", STAT + ["--", "printf", "[%s]", "a b", "c\nd", ""],
         stdout=[r"\A\[a b\]\[c\nd\]\[\]\Z"], stderr=[REPORT], finding=2),
    Case("report_to_a_file_program_keeps_its_streams",
         STAT + ["-o", "r.txt", "--", "sh", "-c", "echo out; echo err >&2"],
         stdout=[r"\Aout\n\Z"], stderr=[r"\Aerr\n\Z"], expect=[Expect("r.txt", kind="file", contains=[REPORT])],
         finding=2),
    Case("a_program_writing_5MB", STAT + ["--", "head", "-c", "5000000", "/dev/zero"], stderr=[REPORT], finding=2,
         check=lambda ctx, r: [] if len(r.stdout) == 5000000 else [f"stdout has {len(r.stdout)} bytes, not 5000000"]),
    Case("event_group_around_a_program", ["stat", "-g", "software", "--", "true"],
         stderr=[r"task-clock", r"CPUs utilised"]),

    # --- the exit code is the program's ---
    Case("exit_code_0", STAT + ["--", "true"], stderr=[r"exit code 0"]),
    Case("exit_code_1", STAT + ["--", "false"], rc=1, stderr=[REPORT, r"exit code 1"]),
    Case("exit_code_3", STAT + ["--", "sh", "-c", "exit 3"], rc=3, stderr=[REPORT], finding=2),
    Case("exit_code_255", STAT + ["--", "sh", "-c", "exit 255"], rc=255, stderr=[REPORT], finding=2),
    Case("exit_code_in_the_json_report", STAT + ["--format", "json", "-o", "r.json", "--", "sh", "-c", "exit 5"], rc=5,
         expect=[Expect("r.json", kind="file", contains=[r'"exit_code": 5'])], finding=2),
    Case("killed_by_sigkill", STAT + ["--", "sh", "-c", "kill -KILL $$"], rc=137, stderr=[REPORT], finding=2),
    Case("killed_by_sigterm", STAT + ["--", "sh", "-c", "kill -TERM $$"], rc=143, stderr=[REPORT], finding=2),
    Case("killed_by_sigsegv", STAT + ["--", "sh", "-c", "kill -SEGV $$"], rc=139, stderr=[REPORT], finding=2),
    Case("background_grandchild_does_not_hold_hwprof", STAT + ["--", "sh", "-c", "sleep 30 & exit 0"],
         stderr=[REPORT], timeout=10, finding=2),

    # --- programs that cannot start ---
    Case("missing_program", STAT + ["--", "./nonexistent"], rc=(127, 1), stderr=[r"nonexistent"]),
    Case("missing_program_on_the_path", STAT + ["--", "no-such-program-xyz"], rc=(127, 1),
         stderr=[r"no-such-program-xyz"]),
    Case("program_not_executable", STAT + ["--", "./noexec"], rc=(126, 127, 1), files={"noexec": File("x", 0o644)},
         stderr=[r"noexec"]),
    Case("program_is_a_directory", STAT + ["--", "./d"], rc=(126, 127, 1), files={"d": Dir()}, stderr=[r"\./d\b"]),
    Case("no_program", STAT, rc=2, stderr=[r"(?i)command|program"]),
    Case("nothing_after_dashdash", STAT + ["--"], rc=2, stderr=[r"(?i)command|program"]),

    # --- signals sent to hwprof reach the program (finding 7) ---
    forwarded(signal.SIGTERM),
    forwarded(signal.SIGHUP),
    forwarded(signal.SIGINT),
]
