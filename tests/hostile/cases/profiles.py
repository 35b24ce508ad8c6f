"""Saved profiles read by `hwprof report FILE`: truncated, old and newer versions, wrong types,
other kinds of JSON, files that are not files, deep nesting."""

from hostile_case import (Case, Dir, Fifo, Sparse, Symlink, deep_nesting, fixture, in_pipe, model_text, mutated_json,
                          replaced_json)

PROF = "p.json"
NEEDS = {"machine", "profile"}


def bad_profile(name, content, *patterns, **kw):
    """`hwprof report p.json` refuses the profile, naming it."""
    return Case(name, ["report", PROF], rc=1, files={PROF: content}, stderr=[r"p\.json\b"] + list(patterns),
                needs=NEEDS, **kw)


def change(f):
    return mutated_json("profile", f)


def layer0(p):
    return p["layers"][0]


CASES = [
    # --- what works ---
    Case("table", ["report", PROF], files={PROF: fixture("profile")}, needs=NEEDS,
         stdout=[r"hwprof profile: lenet5", r"model total"]),
    Case("json_round_trip", ["report", PROF, "--format", "json"], files={PROF: fixture("profile")}, needs=NEEDS,
         stdout=[r'"schema": 2', r'"kind": "model"', r'"model": "lenet5"']),
    Case("csv", ["report", PROF, "--format", "csv", "--sort", "flops"], files={PROF: fixture("profile")}, needs=NEEDS,
         stdout=[r"^index,name,op,", r"^\d+,conv1,conv2d,"]),
    Case("top_two", ["report", PROF, "--top", "2"], files={PROF: fixture("profile")}, needs=NEEDS,
         stdout=[r"Top 2 of \d+ layers", r"\.\.\. \d+ more layers hold"]),
    Case("unknown_field_accepted", ["report", PROF], files={PROF: change(lambda p: p.update(from_the_future=[1]))},
         needs=NEEDS, stdout=[r"model total"]),
    Case("through_a_pipe", ["report", "@{pipe}"], needs=NEEDS, setup=in_pipe("pipe", fixture("profile")),
         stdout=[r"hwprof profile: lenet5"], finding=8),

    # --- versions and truncation ---
    bad_profile("schema_from_a_newer_hwprof", change(lambda p: p.update(schema=3)), r"newer hwprof", r"upgrade"),
    Case("schema_1_migrated", ["report", PROF, "--format", "json"], files={PROF: change(lambda p: (p.update(schema=1), p.pop("kind")))},
         needs=NEEDS, stdout=[r'"schema": 2', r'"kind": "model"']),
    bad_profile("kind_missing", change(lambda p: p.pop("kind")), r'p\.json:1:1: missing "kind"'),
    bad_profile("kind_unknown", change(lambda p: p.update(kind="tensorflow")), r'/kind: unknown value "tensorflow"'),
    bad_profile("kind_regions_with_a_model_phase", change(lambda p: p.update(kind="regions")), r'/phase: "forward"; a regions profile'),
    bad_profile("schema_zero", change(lambda p: p.update(schema=0)), r"p\.json:2:\d+: /schema"),
    bad_profile("missing_schema", change(lambda p: p.pop("schema")), r'p\.json:1:1: missing "schema"'),
    bad_profile("truncated_in_the_middle", fixture("profile", cut=4000), r"p\.json:\d+:\d+: ", r"(?i)truncated"),
    bad_profile("truncated_to_one_byte", fixture("profile", cut=1), r"(?i)truncated|unexpected end"),
    bad_profile("empty", "", r"(?i)empty"),
    bad_profile("only_white_space", "\n\n   \n", r"(?i)empty|unexpected end"),

    # --- wrong types and values ---
    bad_profile("missing_layers", change(lambda p: p.pop("layers")), r'missing "layers"'),
    bad_profile("layers_an_object", change(lambda p: p.update(layers={})), r"/layers: expected a list"),
    bad_profile("missing_machine", change(lambda p: p.pop("machine")), r'missing "machine"'),
    bad_profile("missing_total", change(lambda p: p.pop("total")), r'missing "total"'),
    bad_profile("batch_negative", change(lambda p: p.update(batch=-3)), r"/batch: expected an integer >= 1, got -3"),
    bad_profile("batch_a_string", change(lambda p: p.update(batch="8")), r"/batch: expected an integer"),
    bad_profile("iterations_negative", change(lambda p: p.update(iterations=-1)), r"/iterations"),
    bad_profile("created_a_number", change(lambda p: p.update(created=5)),
                r"p\.json:4:\d+: /created: expected a string"),
    bad_profile("layer_name_a_number", change(lambda p: layer0(p).update(name=5)),
                r"/layers/0/name: expected a string"),
    bad_profile("nan_literal", replaced_json("profile", '"batch": 1', '"batch": NaN'), r"not a valid profile"),
    bad_profile("number_1e999", replaced_json("profile", '"batch": 1', '"batch": 1e999'), r"(?i)overflow"),
    bad_profile("array", "[1, 2]", r"a profile is a JSON object"),
    bad_profile("a_model_spec", model_text("lenet5"), r'missing "schema"'),
    bad_profile("a_machine_report", fixture("machine"), r"p\.json:1:1: this is a machine report \(`hwprof calibrate`\)"),
    bad_profile("binary_garbage", bytes(range(256)) * 4, r"(?i)not a valid profile|invalid"),

    # --- files that are not regular files (finding 4) ---
    Case("missing", ["report", "absent.json"], rc=1, stderr=[r"absent\.json\b.*No such file"]),
    bad_profile("is_a_directory", Dir(), r"p\.json: .*is a directory", finding=4),
    Case("dev_zero", ["report", "/dev/zero"], rc=1, stderr=[r"/dev/zero: .*character device"], timeout=15,
         max_rss_mb=300, max_rss_mb_asan=1024, finding=4),
    bad_profile("link_to_dev_urandom", Symlink("/dev/urandom"), r"p\.json: .*character device", timeout=15,
                max_rss_mb=300, max_rss_mb_asan=1024, finding=4),
    bad_profile("fifo_without_writer", Fifo(), r"p\.json: .*FIFO", timeout=15, finding=4),
    bad_profile("sparse_3GiB", Sparse(3 * 1024**3), r"p\.json: .*at most", timeout=10, max_rss_mb=300,
                max_rss_mb_asan=1024, finding=4),

    # --- JSON nesting (finding 5) ---
    bad_profile("nesting_100k_brackets", deep_nesting("["), r"nesting", r"256", timeout=10, finding=5),
    bad_profile("nesting_100k_objects", deep_nesting('{"a":'), r"nesting", r"256", timeout=10, finding=5),
]
