"""Output paths: -o of summary, info, bench, stat and calibrate, -o DIR of profile, and
--svg/--trace/--html of report. A regular file is replaced whole (never half-written) and
keeps its mode; a symlink stays a symlink and its target gets the content; a character
device or a FIFO with a reader is written in place; what cannot be written is refused with
the path and the reason, and leaves what was there unchanged.

Never aim these at the real /dev/null, /dev/full or /dev/stdout: the nodes used here are made
in the case's own directory."""

from hostile_case import FAST_RUN, Case, Dir, Expect, Fifo, File, Node, Symlink, fifo_got, fifo_reader, fixture

PROFILE_JSON = {"p.json": fixture("profile")}
MACHINE_AND_PROFILE = {"machine", "profile"}


class Writer:
    """A subcommand that writes one file: its command line for a path, and what the file holds."""

    def __init__(self, name, args, content, needs=frozenset(), files=None):
        self.name, self._args, self.content, self.needs, self.files = name, args, content, needs, files or {}

    def args(self, out):
        return [a if a != "OUT" else out for a in self._args]


SUMMARY = Writer("summary", ["summary", "lenet5", "-o", "OUT"], r"Total params:\s+61,706")
SUMMARY_JSON = Writer("summary_json", ["summary", "lenet5", "--format", "json", "-o", "OUT"],
                      r'"schema": "hwprof\.summary/1"')
INFO = Writer("info", ["info", "-o", "OUT"], r"perf_event_paranoid")
BENCH = Writer("bench", ["bench", "lenet5"] + FAST_RUN + ["-o", "OUT"], r"hwprof bench: lenet5")
STAT = Writer("stat", ["stat", "-e", "task-clock", "-o", "OUT", "--", "true"], r"task-clock")
SVG = Writer("report_svg", ["report", "p.json", "--svg", "OUT"], r"<svg", MACHINE_AND_PROFILE, PROFILE_JSON)
TRACE = Writer("report_trace", ["report", "p.json", "--trace", "OUT"], r'"displayTimeUnit"', MACHINE_AND_PROFILE,
               PROFILE_JSON)
HTML = Writer("report_html", ["report", "p.json", "--html", "OUT"], r"<!DOCTYPE html>", MACHINE_AND_PROFILE,
              PROFILE_JSON)
PROFILE_DIR = ["profile", "lenet5", "--calibration", "@{machine}"] + FAST_RUN + ["-o"]
CALIBRATE = ["calibrate", "--quick", "--allow-contended", "--threads", "1", "-o"]

OLD = "previous content\n"


def case(writer, what, out, files=None, needs=(), **kw):
    """One writer aimed at `out`, with `files` laid out first."""
    return Case(f"{writer.name}_{what}", writer.args(out), files={**writer.files, **(files or {})},
                needs=set(writer.needs) | set(needs), **kw)


def replaces_a_file(w, mode):
    return case(w, f"replaces_a_{oct(mode)[2:]}_file_keeping_its_mode", "out", files={"out": File(OLD, mode)},
                expect=[Expect("out", kind="file", mode=mode, contains=[w.content])], finding=1)


def new_file(w):
    return case(w, "new_file", "out", expect=[Expect("out", kind="file", contains=[w.content])])


def through_a_symlink(w):
    return case(w, "through_a_symlink", "link", files={"target": OLD, "link": Symlink("target")},
                expect=[Expect("link", kind="symlink", link_target="target"),
                        Expect("target", kind="file", contains=[w.content])], finding=1)


def through_a_dangling_symlink(w):
    return case(w, "through_a_dangling_symlink", "link", files={"sub": Dir(), "link": Symlink("sub/new")},
                expect=[Expect("link", kind="symlink", link_target="sub/new"),
                        Expect("sub/new", kind="file", contains=[w.content])], finding=1)


def onto_a_null_device(w):
    return case(w, "onto_a_null_device", "null", files={"null": Node("null")}, needs={"root"},
                expect=[Expect("null", kind="char")], finding=1)


def onto_a_full_device(w):
    return case(w, "onto_a_full_device", "full", files={"full": Node("full")}, needs={"root"}, rc=1,
                stderr=[r"full\b.*No space left on device"], expect=[Expect("full", kind="char")], finding=1)


def into_a_fifo_nobody_reads(w):
    return case(w, "into_a_fifo_nobody_reads", "fifo", files={"fifo": Fifo()}, rc=1, stderr=[r"fifo\b.*FIFO"],
                expect=[Expect("fifo", kind="fifo")], timeout=15, finding=1)


def into_a_fifo_with_a_reader(w):
    return case(w, "into_a_fifo_with_a_reader", "fifo", setup=fifo_reader("fifo"), check=fifo_got("fifo", w.content),
                expect=[Expect("fifo", kind="fifo")], timeout=15, finding=1)


def to_stdout_through_a_link(w):
    """A link to /proc/self/fd/1 stands for /dev/stdout; stdout is a pipe to this runner."""
    return case(w, "to_stdout_through_a_link", "stdout", files={"stdout": Symlink("/proc/self/fd/1")},
                stdout=[w.content], expect=[Expect("stdout", kind="symlink", link_target="/proc/self/fd/1")],
                finding=1)


def onto_a_directory(w):
    return case(w, "onto_a_directory", "d", files={"d": Dir()}, rc=1, stderr=[r"\bd\b.*(?i:is a directory)"],
                expect=[Expect("d", kind="dir")])


def into_a_missing_directory(w):
    return case(w, "into_a_missing_directory", "nodir/out", rc=1, stderr=[r"nodir/out\b"],
                expect=[Expect("nodir", kind="absent")])


def empty_path(w):
    return case(w, "empty_path", "", rc=2, stderr=[r"(?i)empty"], finding=8)


CASES = [
    # --- summary: every kind of destination ---
    new_file(SUMMARY),
    new_file(SUMMARY_JSON),
    replaces_a_file(SUMMARY, 0o600),
    replaces_a_file(SUMMARY, 0o640),
    through_a_symlink(SUMMARY),
    through_a_dangling_symlink(SUMMARY),
    case(SUMMARY, "through_a_chain_of_symlinks", "a", files={"target": OLD, "b": Symlink("target"), "a": Symlink("b")},
         expect=[Expect("a", kind="symlink", link_target="b"), Expect("b", kind="symlink", link_target="target"),
                 Expect("target", kind="file", contains=[SUMMARY.content])], finding=1),
    case(SUMMARY, "through_a_symlink_loop", "loop", files={"loop": Symlink("loop2"), "loop2": Symlink("loop")}, rc=1,
         stderr=[r"loop"], expect=[Expect("loop", kind="symlink", link_target="loop2")], finding=1),
    case(SUMMARY, "through_a_symlink_to_a_directory", "link", files={"d": Dir(), "link": Symlink("d")}, rc=1,
         stderr=[r"link\b.*(?i:is a directory)"], expect=[Expect("link", kind="symlink"), Expect("d", kind="dir")],
         finding=1),
    onto_a_null_device(SUMMARY),
    onto_a_full_device(SUMMARY),
    into_a_fifo_nobody_reads(SUMMARY),
    into_a_fifo_with_a_reader(SUMMARY),
    to_stdout_through_a_link(SUMMARY),
    onto_a_directory(SUMMARY),
    into_a_missing_directory(SUMMARY),
    empty_path(SUMMARY),
    case(SUMMARY, "file_name_too_long", "n" * 300, rc=1, stderr=[r"n{300}.*(?i:file name too long)"]),
    Case("summary_failed_run_leaves_the_file", ["summary", "nosuchmodel", "-o", "out"], rc=1,
         files={"out": File(OLD, 0o640)}, expect=[Expect("out", unchanged=True)]),
    Case("summary_refused_spec_leaves_the_file", ["summary", "net.json", "-o", "out"], rc=1,
         files={"out": OLD, "net.json": '{"input": {"shape": [4]}, "layers": []}'},
         expect=[Expect("out", unchanged=True)]),

    # --- info, bench, stat ---
    new_file(INFO),
    through_a_symlink(INFO),
    onto_a_null_device(INFO),
    into_a_fifo_with_a_reader(INFO),
    replaces_a_file(BENCH, 0o640),
    onto_a_full_device(BENCH),
    into_a_fifo_nobody_reads(BENCH),
    empty_path(BENCH),
    new_file(STAT),
    replaces_a_file(STAT, 0o640),
    through_a_dangling_symlink(STAT),
    onto_a_full_device(STAT),
    to_stdout_through_a_link(STAT),
    onto_a_directory(STAT),
    empty_path(STAT),
    Case("stat_failed_program_keeps_the_report_file_whole", ["stat", "-e", "task-clock", "-o", "out", "--",
                                                              "./nonexistent"], rc=(1, 127),
         files={"out": OLD}, stderr=[r"nonexistent"], expect=[Expect("out", kind="file")]),

    # --- report --svg, --trace, --html ---
    new_file(SVG),
    onto_a_null_device(SVG),
    onto_a_full_device(SVG),
    into_a_missing_directory(SVG),
    empty_path(SVG),
    through_a_symlink(TRACE),
    into_a_fifo_with_a_reader(TRACE),
    into_a_fifo_nobody_reads(TRACE),
    replaces_a_file(HTML, 0o640),
    onto_a_directory(HTML),
    to_stdout_through_a_link(HTML),
    Case("report_refused_profile_leaves_the_files", ["report", "bad.json", "--svg", "r.svg", "--html", "r.html"], rc=1,
         files={"bad.json": "{", "r.svg": OLD, "r.html": OLD},
         expect=[Expect("r.svg", unchanged=True), Expect("r.html", unchanged=True)]),

    # --- profile -o DIR ---
    Case("profile_dir_created_with_parents", PROFILE_DIR + ["a/b/out"], needs={"machine"},
         expect=[Expect(f"a/b/out/{f}", kind="file") for f in
                 ("profile.txt", "profile.json", "profile.csv", "roofline.svg", "trace.json", "report.html")]),
    Case("profile_dir_is_a_file", PROFILE_DIR + ["out"], rc=1, needs={"machine"}, files={"out": OLD},
         stderr=[r"\bout\b"], expect=[Expect("out", unchanged=True)]),
    Case("profile_dir_replaces_a_profile_keeping_its_mode", PROFILE_DIR + ["out"], needs={"machine"},
         files={"out/profile.json": File(OLD, 0o640)},
         expect=[Expect("out/profile.json", kind="file", mode=0o640, contains=[r'"schema": 2'])], finding=1),
    Case("profile_dir_profile_json_is_a_symlink", PROFILE_DIR + ["out"], needs={"machine"},
         files={"kept.json": OLD, "out/profile.json": Symlink("../kept.json")},
         expect=[Expect("out/profile.json", kind="symlink", link_target="../kept.json"),
                 Expect("kept.json", kind="file", contains=[r'"schema": 2'])], finding=1),
    Case("profile_dir_trace_is_a_fifo_nobody_reads", PROFILE_DIR + ["out"], rc=1, needs={"machine"},
         files={"out/trace.json": Fifo()}, stderr=[r"trace\.json\b.*FIFO"],
         expect=[Expect("out/trace.json", kind="fifo")], timeout=15, finding=1),
    Case("profile_dir_report_is_a_directory", PROFILE_DIR + ["out"], rc=1, needs={"machine"},
         files={"out/report.html": Dir()}, stderr=[r"report\.html\b.*(?i:is a directory)"],
         expect=[Expect("out/report.html", kind="dir")]),
    Case("profile_dir_empty_path", PROFILE_DIR + [""], rc=2, needs={"machine"}, stderr=[r"(?i)empty"], finding=8),

    # --- calibrate -o: the destination is checked before anything is measured ---
    Case("calibrate_into_a_missing_directory", ["calibrate", "-o", "/nonexistent-dir/x.json"], rc=1,
         stderr=[r"/nonexistent-dir/x\.json"], timeout=5, finding=8),
    Case("calibrate_onto_a_directory", CALIBRATE + ["d"], rc=1, files={"d": Dir()},
         stderr=[r"\bd\b.*(?i:is a directory)"], expect=[Expect("d", kind="dir")], timeout=5, finding=8),
    Case("calibrate_empty_path", CALIBRATE + [""], rc=2, stderr=[r"(?i)empty"], timeout=5, finding=8,
         expect=[Expect("hwprof", kind="absent")]),
]

# --- profile -o DIR launched as a rank whose variable cannot be used: said, and a folder of
# its own, so that ranks never write over each other ---


def one_pid_folder(ctx, _result):
    folders = [p.name for p in (ctx.dir / "out").iterdir()] if (ctx.dir / "out").is_dir() else []
    good = len(folders) == 1 and folders[0].startswith("pid-") and (ctx.dir / "out" / folders[0] / "profile.json").is_file()
    return [] if good else [f"out/ holds {folders}, expected one pid-N/ folder with profile.json"]


CASES += [
    Case(f"profile_dir_under_an_unusable_rank_{name}", ["profile", "lenet5", "--calibration", "@{machine}", "-o", "out"] + FAST_RUN, env=env,
         stderr=[message, r"writing into out/pid-\d+ instead"], needs={"machine"}, check=one_pid_folder, timeout=60)
    for name, env, message in [("slurm_word", {"SLURM_PROCID": "abc"}, r"SLURM_PROCID='abc' is not a rank"),
                               ("pmi_path", {"PMI_RANK": "../../etc"}, r"PMI_RANK='\.\./\.\./etc' is not a rank"),
                               ("ompi_past_size", {"OMPI_COMM_WORLD_RANK": "7", "OMPI_COMM_WORLD_SIZE": "2"}, r"is not below")]
]
