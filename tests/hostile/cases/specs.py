"""Model specs: malformed JSON, wrong types, unknown ops, bad shapes, limits, files that are
not files, deep nesting, and models too large for this machine's memory."""

import json

from hostile_case import (FAST_RUN, Case, Dir, Fifo, Sparse, Symlink, deep_nesting, esc, in_pipe, model_text,
                          spec)

NET = "net.json"
AT = r"net\.json:\d+:\d+: "  # every spec error names the file, line and column


def bad_spec(name, text, *words, where=AT, rc=1, **kw):
    """`hwprof summary net.json` refuses the spec: the location, then each of `words`."""
    return Case(name, ["summary", NET], rc=rc, files={NET: text}, stderr=[where] + [esc(w) for w in words], **kw)


def relu(name="a"):
    return {"name": name, "op": "relu"}


def nested_repeats(depth):
    layer = relu("x")
    for i in range(depth):
        layer = {"repeat": 1, "name": f"r{i}", "layers": [layer]}
    return layer


def nested_comment(depth):
    """A valid spec whose 'comment' is `depth` arrays deep (the whole document one deeper)."""
    return json.dumps({"comment": json.loads("[" * depth + "]" * depth), "input": {"shape": [4]},
                       "layers": [relu()]})


# 112 Linear layers of 16384 x 16384: each holds 1.07 GB of weights, the model 120 GB. This and
# lenet5 at batch 10,000,000 (188 GB of activations) assume a machine with less memory than that
# available; on a larger one hwprof would rightly start them, and fail under the 4 GiB limit.
HUGE_MODEL = spec({"repeat": 112, "name": "h", "layers": [{"name": "fc", "op": "linear", "out_features": 16384}]},
                  shape=(16384,))

# Refused for memory: quickly, with the figures, never by the allocator.
TOO_BIG = [r"(?i)memory", r"\d[\d,.]* ?(GiB|GB)"]
NOT_BAD_ALLOC = [r"bad_alloc", r"(?i)killed"]

CASES = [
    # --- malformed JSON ---
    bad_spec("json_trailing_comma",
             '{\n  "input": {"shape": [4]},\n  "layers": [\n    {"name": "a", "op": "relu"},\n  ]\n}\n',
             "invalid JSON", "unexpected ']'", where=r"net\.json:5:3: "),
    bad_spec("json_unterminated_string",
             '{\n  "input": {"shape": [4]},\n  "layers": [\n    {"name": "a", "op": "relu\n  ]\n}\n',
             "invalid JSON", "invalid string", where=r"net\.json:4:\d+: "),
    bad_spec("json_empty_file", "", "the file is empty", where=r"net\.json:1:1: "),
    bad_spec("json_only_white_space", "\n \t\r\n  ", "empty"),
    bad_spec("json_garbage_after_object", spec(relu()) + "{}\n", "expected end of input"),
    bad_spec("json_missing_colon", '{\n  "input" {"shape": [4]},\n  "layers": []\n}\n', "expected ':'",
             where=r"net\.json:2:\d+: "),
    bad_spec("json_number_too_large_for_a_double", spec({"name": "fc", "op": "linear", "out_features": 1}).replace(
        '"out_features": 1', '"out_features": 1e400'), "number overflow"),
    bad_spec("json_nan_literal", '{"input": {"shape": [NaN]}, "layers": [{"name": "a", "op": "relu"}]}',
             "invalid JSON", "invalid literal"),
    bad_spec("json_ill_formed_utf8", b'{"input": {"shape": [4]}, "layers": [{"name": "\xff\xfe", "op": "relu"}]}',
             "invalid JSON", "UTF-8"),
    Case("json_nul_byte", ["summary", NET], rc=1, files={NET: b'{"input": {"shape": [4]},\x00 "layers": []}'},
         stderr=[AT]),
    bad_spec("json_control_bytes_after_the_object", spec(relu()) + "\x01\x02", "invalid JSON", "expected end of input"),
    bad_spec("top_level_array", '[{"name": "a", "op": "relu"}]', "the model spec must be a JSON object"),
    bad_spec("duplicate_key", spec({"name": "a", "op": "relu"}).replace('"op": "relu"', '"op": "relu", "op": "gelu"'),
             'duplicate key "op"'),
    Case("byte_order_mark_accepted", ["summary", NET], files={NET: b"\xef\xbb\xbf" + spec(relu()).encode()},
         stdout=["hostile"]),
    Case("unicode_names_accepted", ["summary", NET, "--format", "json"],
         files={NET: spec({"name": "schicht_\u00fc_\u5c42", "op": "relu"})}, stdout=["schicht_"]),
    Case("comments_accepted", ["summary", NET], files={NET: spec({"name": "a", "op": "relu", "comment": "x"},
                                                                  comment="top")}, stdout=["relu"]),

    # --- the model and its input ---
    bad_spec("unknown_top_level_key", '{\n  "input": {"shape": [4]},\n  "layer": [{"name": "a", "op": "relu"}]\n}\n',
             'unknown key "layer"', "did you mean 'layers'"),
    bad_spec("model_name_not_a_string", spec(relu()).replace('"name": "hostile"', '"name": 7'),
             '"name" must be a non-empty string, got 7'),
    bad_spec("missing_input", '{"layers": [{"name": "a", "op": "relu"}]}', 'missing "input"'),
    bad_spec("input_shape_a_string", spec(relu()).replace('"shape": [\n      4\n    ]', '"shape": "3x8x8"'),
             "input shape must be a non-empty list of positive integers"),
    bad_spec("input_shape_zero", spec(relu(), shape=(3, 0, 8)), "dimension 1 must be a positive integer, got 0"),
    bad_spec("input_shape_negative", spec(relu(), shape=(-4,)), "dimension 0 must be a positive integer, got -4"),
    bad_spec("input_shape_fractional", spec(relu(), shape=(4.5,)), "must be a positive integer, got 4.5"),
    bad_spec("input_shape_overflows", spec(relu(), shape=(4294967296, 4294967296)), "overflow 64-bit integers"),
    bad_spec("input_17_dimensions", spec(relu(), shape=(1,) * 17), "17 dimensions", "at most 16"),
    bad_spec("input_dtype_int64", spec(relu(), dtype="int64"), '"dtype" must be "float32" or "int32"'),

    # --- layers ---
    bad_spec("missing_layers", '{"input": {"shape": [4]}}', 'missing "layers"'),
    bad_spec("empty_layers", '{"input": {"shape": [4]}, "layers": []}', '"layers" must be a non-empty array'),
    bad_spec("layers_null", '{"input": {"shape": [4]}, "layers": null}', "got null"),
    bad_spec("layer_a_number", spec(5), 'each layer must be an object with "name" and "op", got 5'),
    bad_spec("layer_without_op", spec({"name": "a"}), "layer 'a'", 'missing "op"'),
    bad_spec("layer_without_name", spec({"op": "relu"}), 'layer has no "name"'),
    bad_spec("unknown_op", spec({"name": "a", "op": "conv2"}), "unknown op 'conv2'", "did you mean 'conv2d'"),
    bad_spec("misspelled_attribute",
             spec({"name": "c", "op": "conv2d", "out_channels": 4, "kernal": 3}, shape=(1, 8, 8)),
             "unknown attribute 'kernal'", "did you mean 'kernel'"),
    bad_spec("negative_size", spec({"name": "a", "op": "linear", "out_features": -3}),
             "'out_features' must be a positive integer, got -3"),
    bad_spec("fractional_size", spec({"name": "a", "op": "linear", "out_features": 1.5}),
             "must be a positive integer, got 1.5"),
    bad_spec("size_a_string", spec({"name": "a", "op": "linear", "out_features": "10"}), 'got the string "10"'),
    bad_spec("size_1e30", spec({"name": "a", "op": "linear", "out_features": 10**30}), "must be a positive integer"),
    bad_spec("bias_a_string", spec({"name": "a", "op": "linear", "out_features": 3, "bias": "yes"}),
             "'bias' must be true or false"),
    bad_spec("dropout_p_above_one", spec({"name": "d", "op": "dropout", "p": 1.5}), "must be a probability"),
    bad_spec("gelu_unknown_approximation", spec({"name": "g", "op": "gelu", "approximate": "fast"}), "'approximate'"),
    bad_spec("kernel_larger_than_input", spec({"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 9},
                                              shape=(1, 4, 4)), "layer 'c' (conv2d)", "larger than the padded input"),
    bad_spec("conv_on_a_vector", spec({"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 1}),
             "expects a [C, H, W] input"),
    bad_spec("groups_not_dividing_channels", spec({"name": "c", "op": "conv2d", "out_channels": 4, "kernel": 1,
                                                   "groups": 3}, shape=(4, 4, 4)), "groups = 3 must divide"),
    bad_spec("pool_kernel_zero", spec({"name": "p", "op": "maxpool2d", "kernel": 0}, shape=(1, 4, 4)),
             "'kernel' must be a positive integer"),
    bad_spec("add_of_two_shapes", spec({"name": "a", "op": "linear", "out_features": 3},
                                       {"name": "s", "op": "add", "inputs": ["a", "$input"]}),
             "layer 's' (add)", "got [3] and [4]"),
    bad_spec("concat_axis_out_of_range", spec({"name": "a", "op": "linear", "out_features": 3},
                                              {"name": "c", "op": "concat", "inputs": ["a", "$input"], "axis": 1}),
             "axis 1 is out of range"),
    bad_spec("reshape_to_another_size", spec({"name": "a", "op": "reshape", "shape": [3]}), "cannot reshape [4]"),
    bad_spec("transpose_not_a_permutation", spec({"name": "a", "op": "transpose", "perm": [0, 0]}, shape=(2, 3)),
             "perm must be a permutation"),
    bad_spec("select_index_out_of_range", spec({"name": "a", "op": "select", "index": 5}, shape=(2, 3)),
             "index 5 is out of range"),
    bad_spec("embedding_of_floats", spec({"name": "e", "op": "embedding", "num_embeddings": 10, "embedding_dim": 4}),
             "expects int32 token ids"),
    bad_spec("attention_heads_not_dividing", spec({"name": "at", "op": "attention", "heads": 3}, shape=(4, 8)),
             "heads = 3 must divide the model width D = 8"),
    bad_spec("softmax_axis_out_of_range", spec({"name": "s", "op": "softmax", "axis": 5}), "axis 5 is out of range"),
    bad_spec("input_names_a_later_layer", spec({"name": "a", "op": "relu", "inputs": ["b"]}, relu("b")),
             "no earlier layer is named 'b'"),
    bad_spec("tied_to_unknown_layer", spec({"name": "fc", "op": "linear", "out_features": 4, "tied_to": "nosuch"}),
             "'tied_to'", "'nosuch'"),
    bad_spec("duplicate_layer_names", spec(relu("a"), relu("a")), "layer 'a' (relu): duplicate name",
             "first defined at net.json:"),
    bad_spec("repeat_zero", spec({"repeat": 0, "name": "h", "layers": [relu("x")]}),
             '"repeat" must be a positive integer'),
    bad_spec("repeat_negative", spec({"repeat": -1, "name": "h", "layers": [relu("x")]}), "got -1"),
    bad_spec("repeats_nested_33_deep", spec(nested_repeats(33)), "repeats nest more than 32 deep"),
    bad_spec("ten_million_layers", spec({"repeat": 10000000, "name": "h", "layers": [relu("x")]}),
             "more than 1000000 layers", timeout=10),
    bad_spec("name_of_100k_characters", spec(relu("n" * 100000)), "names are limited to 256 characters"),
    bad_spec("parameter_count_overflows", spec({"name": "a", "op": "linear", "out_features": 2**40}, shape=(2**40,)),
             "layer 'a' (linear)", "overflow 64-bit integers"),
    Case("spec_error_named_by_bench", ["bench", NET] + FAST_RUN, rc=1,
         files={NET: spec({"name": "a", "op": "conv2"})}, stderr=[AT + r".*unknown op 'conv2'"]),
    Case("spec_error_named_by_profile", ["profile", NET, "--calibration", "@{machine}"] + FAST_RUN, rc=1,
         files={NET: spec({"name": "a", "op": "conv2"})}, stderr=[AT + r".*unknown op 'conv2'"], needs={"machine"}),

    # --- files that are not regular files (finding 4, 8) ---
    Case("spec_is_a_directory", ["summary", "d.json"], rc=1, files={"d.json": Dir()},
         stderr=[r"d\.json: .*is a directory"]),
    Case("spec_missing", ["summary", "absent.json"], rc=1, stderr=[r"absent\.json: .*(?i:no such)"]),
    Case("spec_dev_zero", ["summary", "/dev/zero"], rc=1, stderr=[r"/dev/zero: .*character device"],
         timeout=15, finding=4),
    Case("spec_dev_urandom", ["summary", "/dev/urandom"], rc=1, stderr=[r"/dev/urandom: .*character device"],
         timeout=15, finding=8),
    Case("spec_link_to_dev_urandom", ["summary", "random.json"], rc=1, files={"random.json": Symlink("/dev/urandom")},
         stderr=[r"random\.json: .*character device"], timeout=15, finding=4),
    Case("spec_fifo_without_writer", ["summary", "fifo.json"], rc=1, files={"fifo.json": Fifo()},
         stderr=[r"fifo\.json: .*FIFO"], timeout=15, finding=4),
    Case("spec_sparse_3GiB", ["summary", "huge.json"], rc=1, files={"huge.json": Sparse(3 * 1024**3)},
         stderr=[r"huge\.json: .*at most"], timeout=10, max_rss_mb=300, max_rss_mb_asan=1024, finding=4),
    Case("spec_through_a_pipe", ["summary", "@{pipe}"], setup=in_pipe("pipe", model_text("lenet5")),
         stdout=[r"conv1", r"Total params:\s+61,706"], finding=8),
    Case("spec_through_a_pipe_bench", ["bench", "@{pipe}"] + FAST_RUN, setup=in_pipe("pipe", model_text("mlp_mnist")),
         stdout=[r"hwprof bench: mlp_mnist"], finding=8),

    # --- JSON nesting (finding 5) ---
    Case("nesting_100k_brackets", ["summary", NET], rc=1, files={NET: deep_nesting("[")},
         stderr=[r"net\.json\b", r"nesting", r"256"], timeout=10, finding=5),
    Case("nesting_100k_objects", ["summary", NET], rc=1, files={NET: deep_nesting('{"a":')},
         stderr=[r"net\.json\b", r"nesting", r"256"], timeout=10, finding=5),
    Case("nesting_100k_brackets_bench", ["bench", NET] + FAST_RUN, rc=1, files={NET: deep_nesting("[")},
         stderr=[r"net\.json\b", r"nesting", r"256"], timeout=10, finding=5),
    Case("nesting_200_in_a_comment_accepted", ["summary", NET], files={NET: nested_comment(200)}, stdout=["relu"]),
    Case("nesting_300_in_a_comment", ["summary", NET], rc=1, files={NET: nested_comment(300)},
         stderr=[r"net\.json\b", r"nesting", r"256"], finding=5),

    # --- memory: refused before anything is allocated (finding 3) ---
    Case("huge_model_summary_is_analytic", ["summary", NET], files={NET: HUGE_MODEL},
         stdout=[r"Parameters\s+1202\d\d\.\d\d MB"]),
    Case("huge_model_bench", ["bench", NET] + FAST_RUN, rc=1, files={NET: HUGE_MODEL},
         stderr=[r"net\.json|'hostile'"] + TOO_BIG, stderr_not=NOT_BAD_ALLOC, timeout=10, finding=3),
    Case("huge_model_bench_train", ["bench", NET, "--train"] + FAST_RUN, rc=1, files={NET: HUGE_MODEL},
         stderr=TOO_BIG, stderr_not=NOT_BAD_ALLOC, timeout=10, finding=3),
    Case("huge_model_profile", ["profile", NET, "--calibration", "@{machine}"] + FAST_RUN, rc=1,
         files={NET: HUGE_MODEL}, stderr=TOO_BIG, stderr_not=NOT_BAD_ALLOC, timeout=10, needs={"machine"}, finding=3),
    Case("batch_10M_profile", ["profile", "lenet5", "--batch", "10000000", "--calibration", "@{machine}"] + FAST_RUN,
         rc=1, stderr=TOO_BIG, stderr_not=NOT_BAD_ALLOC, timeout=10, needs={"machine"}, finding=3),
    Case("batch_10M_bench", ["bench", "lenet5", "--batch", "10000000"] + FAST_RUN, rc=1,
         stderr=TOO_BIG, stderr_not=NOT_BAD_ALLOC, timeout=10, finding=3),
]

# --- thousands of layers: what measuring them holds grows with the layers and the passes, not
# with a fixed reserve per layer (a 10,000-layer chain once took 6.4 GB for one pass) ---


def chain(layers, first="relu"):
    nodes = [{"name": "fc", "op": "linear", "out_features": 8}] + [{"name": f"l{i}", "op": first} for i in range(layers)]
    return json.dumps({"name": "chain", "input": {"shape": [8]}, "layers": nodes}) + "\n"


CASES += [
    Case(f"profile_{n}_layers_one_pass", ["profile", "chain.json", "--calibration", "@{machine}", "--backend", "timer"] + FAST_RUN,
         files={"chain.json": chain(n)}, stdout=[rf"Top 15 of {n + 1} layers"], needs={"machine"}, max_rss_mb=400, timeout=60)
    for n in (3000, 10000)
] + [
    Case("profile_2000_layers_training_ten_passes", ["profile", "chain.json", "--calibration", "@{machine}", "--backend", "timer", "--train",
                                                      "--threads", "1", "--iterations", "10", "--warmup", "0"],
         files={"chain.json": chain(2000, "tanh")}, stdout=[r"Top 15 of"], needs={"machine"}, max_rss_mb=400, timeout=60),
]
