"""Bad command lines: unknown subcommands and options, missing arguments, and values out of
range or of the wrong kind. A bad command line exits 2 and names the option."""

from hostile_case import FAST_RUN, Case

PROFILE = ["profile", "lenet5", "--calibration", "@{machine}"] + FAST_RUN
M = {"machine"}


def bad_line(name, args, *patterns, rc=2, **kw):
    return Case(name, args, rc=rc, stderr=list(patterns), **kw)


CASES = [
    # --- what works ---
    Case("version", ["--version"], stdout=[r"\d+\.\d+\.\d+"]),
    Case("help", ["--help"], stdout=[r"Subcommands:", r"summary", r"stat"]),
    Case("subcommand_help", ["stat", "--help"], stdout=[r"--events", r"command"]),

    # --- subcommands and positionals ---
    bad_line("no_arguments", [], r"(?i)subcommand"),
    bad_line("unknown_subcommand", ["frobnicate"], r"frobnicate", finding=8),
    bad_line("unknown_subcommand_with_arguments", ["frobnicate", "lenet5", "--batch", "2"], r"frobnicate", finding=8),
    bad_line("subcommand_in_capitals", ["SUMMARY", "lenet5"], r"SUMMARY", finding=8),
    bad_line("unknown_option_before_the_subcommand", ["--frobnicate"], r"(?i)frobnicate|subcommand"),
    bad_line("summary_without_model", ["summary"], r"model is required"),
    bad_line("bench_without_model", ["bench"], r"model is required"),
    bad_line("report_without_profile", ["report"], r"profile is required"),
    bad_line("unknown_option", ["summary", "lenet5", "--frob"], r"--frob"),
    bad_line("extra_positional", ["summary", "lenet5", "extra"], r"extra"),
    bad_line("option_given_twice", ["summary", "lenet5", "--batch", "1", "--batch", "2"], r"--batch"),
    bad_line("option_without_its_value", ["summary", "lenet5", "--batch"], r"--batch"),
    Case("unknown_model", ["summary", "nosuchmodel"], rc=1,
         stderr=[r"'nosuchmodel' is neither a spec file nor a built-in model", r"lenet5"]),
    Case("misspelled_model", ["summary", "resnet"], rc=1, stderr=[r"did you mean 'resnet18'"]),
    Case("model_name_of_100kB", ["summary", "m" * 100000], rc=1, stderr=[r"neither a spec file"], timeout=15),
    Case("model_name_not_utf8", ["summary", b"\xff\xfe".decode("utf-8", "surrogateescape")], rc=1,
         stderr=[r"neither a spec file"]),

    # --- integers ---
    bad_line("batch_letters", ["summary", "lenet5", "--batch", "abc"], r"--batch", r"abc"),
    bad_line("batch_negative", ["summary", "lenet5", "--batch", "-5"], r"--batch"),
    bad_line("batch_zero", ["summary", "lenet5", "--batch", "0"], r"--batch"),
    bad_line("batch_beyond_64_bits", ["summary", "lenet5", "--batch", "99999999999999999999"], r"--batch"),
    bad_line("bench_batch_fractional", ["bench", "lenet5", "--batch", "1.5"] + FAST_RUN, r"--batch"),
    bad_line("threads_negative", ["bench", "lenet5", "--threads", "-1"], r"--threads"),
    bad_line("threads_5000", ["bench", "lenet5", "--threads", "5000"], r"--threads"),
    bad_line("iterations_zero", ["bench", "lenet5", "--iterations", "0"], r"--iterations"),
    bad_line("iterations_letters", ["bench", "lenet5", "--iterations", "abc"], r"--iterations"),
    bad_line("iterations_above_the_limit", ["bench", "lenet5", "--iterations", "1000001"], r"--iterations"),
    bad_line("warmup_negative", ["bench", "lenet5", "--warmup", "-1"], r"--warmup"),
    bad_line("profile_iterations_zero", PROFILE + ["--iterations", "0"], r"--iterations", needs=M),
    bad_line("depth_65", ["summary", "lenet5", "--depth", "65"], r"--depth"),
    bad_line("top_negative", PROFILE + ["--top", "-1"], r"--top", needs=M),
    bad_line("seed_negative", ["bench", "lenet5", "--seed", "-1"] + FAST_RUN, r"--seed", finding=8),
    bad_line("seed_beyond_64_bits", ["bench", "lenet5", "--seed", "18446744073709551616"] + FAST_RUN, r"--seed",
             finding=8),
    bad_line("seed_letters", ["bench", "lenet5", "--seed", "abc"] + FAST_RUN, r"--seed"),
    bad_line("profile_seed_negative", PROFILE + ["--seed", "-1"], r"--seed", needs=M, finding=8),
    bad_line("calibrate_threads_zero", ["calibrate", "--threads", "0"], r"--threads"),
    Case("calibrate_more_threads_than_cores", ["calibrate", "--quick", "--threads", "4096", "-o", "m.json"], rc=1,
         stderr=[r"physical cores"], expect=[], timeout=15),

    # --- real numbers ---
    bad_line("min_time_nan", PROFILE + ["--min-time", "nan"], r"--min-time", needs=M, finding=8),
    bad_line("min_time_infinite", PROFILE + ["--min-time", "inf"], r"--min-time", needs=M, finding=8),
    bad_line("min_time_negative", PROFILE + ["--min-time", "-1"], r"--min-time", needs=M),
    bad_line("learning_rate_zero", PROFILE + ["--train", "--lr", "0"], r"--lr", needs=M),
    bad_line("learning_rate_nan", PROFILE + ["--train", "--lr", "nan"], r"--lr|learning.rate", rc=(1, 2), needs=M),

    # --- choices ---
    bad_line("summary_format_xml", ["summary", "lenet5", "--format", "xml"], r"--format", r"xml"),
    bad_line("report_format_xml", ["report", "p.json", "--format", "xml"], r"--format"),
    bad_line("info_format_xml", ["info", "--format", "xml"], r"--format"),
    bad_line("stat_format_csv", ["stat", "--format", "csv", "--", "true"], r"--format"),
    bad_line("summary_optimizer_rmsprop", ["summary", "lenet5", "--optimizer", "rmsprop"], r"rmsprop"),
    bad_line("bench_optimizer_momentum", ["bench", "lenet5", "--optimizer", "momentum"], r"--optimizer"),
    bad_line("profile_sort_colour", PROFILE + ["--sort", "colour"], r"--sort", needs=M),
    bad_line("profile_backend_unknown", PROFILE + ["--backend", "magic"], r"--backend", needs=M),
    bad_line("stat_backend_unknown", ["stat", "--backend", "magic", "--", "true"], r"--backend"),
    bad_line("calibrate_precision_fp8", ["calibrate", "--precision", "fp8"], r"--precision"),

    # --- input shapes ---
    bad_line("input_shape_letters", ["summary", "lenet5", "--input-shape", "3,x,4"], r"--input-shape", rc=2),
    bad_line("input_shape_negative", ["summary", "lenet5", "--input-shape=-1,32,32"], r"--input-shape", rc=2),
    bad_line("input_shape_double_comma", ["summary", "lenet5", "--input-shape", "3,,4"], r"--input-shape", rc=2),
    bad_line("input_shape_zero", ["summary", "lenet5", "--input-shape", "0,32,32"], r"must be positive", rc=(1, 2)),
    bad_line("input_shape_17_dimensions", ["summary", "lenet5", "--input-shape", ",".join(["1"] * 17)], r"16",
             rc=(1, 2)),
    Case("input_shape_of_the_wrong_rank", ["summary", "lenet5", "--input-shape", "32,32"], rc=1, stderr=[r"conv1"]),
    Case("input_shape_too_small_for_a_kernel", ["bench", "lenet5", "--input-shape", "1,4,4"] + FAST_RUN, rc=1,
         stderr=[r"conv1"]),
]
