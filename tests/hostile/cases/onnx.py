"""ONNX models and .npy inputs (docs/onnx.md): truncated, empty, random and 3 GiB files, external
data that points outside the model's folder, cycles, shapes that overflow, opsets out of
range, unsupported nodes, and hostile .npy files for `hwprof run -i`. The ONNX files are
written here with a few lines of protobuf wire format (standard library only, like the rest
of the suite); field numbers are those of onnx/onnx.proto."""

import struct

import os
import re

from hostile_case import Case, Expect, Sparse, Symlink, Dir

AT = r"m\.onnx: "


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def fv(num, value):  # a varint field
    return varint(num << 3) + varint(value & 0xFFFFFFFFFFFFFFFF)


def fb(num, data):  # a length-delimited field
    if isinstance(data, str):
        data = data.encode()
    return varint((num << 3) | 2) + varint(len(data)) + data


def value_info(name, dims, elem=1):
    shape = b"".join(fb(1, fb(2, d) if isinstance(d, str) else fv(1, d)) for d in dims)
    return fb(1, name) + fb(2, fb(1, fv(1, elem) + fb(2, shape)))


def node(op, inputs, outputs, name=""):
    return b"".join(fb(1, i) for i in inputs) + b"".join(fb(2, o) for o in outputs) + fb(3, name or op) + fb(4, op)


def tensor(name, dims, floats=None, external=None):
    t = b"".join(fv(1, d) for d in dims) + fv(2, 1) + fb(8, name)
    if floats is not None:
        t += fb(9, struct.pack(f"<{len(floats)}f", *floats))
    if external is not None:
        t += b"".join(fb(13, fb(1, k) + fb(2, v)) for k, v in external.items()) + fv(14, 1)
    return t


def model(nodes, inputs, outputs, initializers=(), opset=13, name="g"):
    graph = (b"".join(fb(1, n) for n in nodes) + fb(2, name) + b"".join(fb(5, t) for t in initializers)
             + b"".join(fb(11, i) for i in inputs) + b"".join(fb(12, o) for o in outputs))
    return fv(1, 8) + fb(8, fb(1, "") + fv(2, opset)) + fb(7, graph)


LINEAR = model([node("MatMul", ["x", "w"], ["y"])], [value_info("x", ["batch", 4])], [value_info("y", ["batch", 2])],
               [tensor("w", [4, 2], floats=[0.5] * 8)])
RELU = model([node("Relu", ["x"], ["y"])], [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])])


def fixture_model(which, cut=None):
    def make(ctx):
        data = (ctx.source_dir / "tests" / "fixtures" / "onnx" / which / "model.onnx").read_bytes()
        return data if cut is None else data[:cut]
    return make


def npy(header, data=b""):
    h = header.encode()
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


F4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }"

CASES = [
    Case("onnx_a_relu_is_fine", ["summary", "m.onnx"], files={"m.onnx": RELU}, stdout=[r"relu", r"Total params:\s+0"]),
    Case("onnx_empty", ["summary", "m.onnx"], rc=1, files={"m.onnx": b""}, stderr=[AT + r".*empty"]),
    Case("onnx_truncated", ["summary", "m.onnx"], rc=1, files={"m.onnx": fixture_model("tiny_vit", cut=30000)},
         stderr=[AT + r".*(not a valid ONNX model|truncated)"]),
    Case("onnx_random_bytes", ["summary", "m.onnx"], rc=1, files={"m.onnx": b"\x08" + bytes(range(256)) * 64},
         stderr=[AT]),
    Case("onnx_json_named_onnx", ["summary", "m.onnx"], rc=1, files={"m.onnx": "{\"layers\": []}"},
         stderr=[AT + r".*not a valid ONNX model"]),
    Case("onnx_sparse_3GiB", ["summary", "m.onnx"], rc=1, files={"m.onnx": Sparse(3 * 1024**3)},
         stderr=[AT + r".*at most"], timeout=10, max_rss_mb=300, max_rss_mb_asan=1024),
    Case("onnx_external_data_outside_the_folder", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("MatMul", ["x", "w"], ["y"])], [value_info("x", ["batch", 4])],
                                [value_info("y", ["batch", 2])],
                                [tensor("w", [4, 2], external={"location": "../../../../etc/passwd"})])},
         stderr=[AT + r".*outside the model's folder"]),
    Case("onnx_external_data_absolute", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("MatMul", ["x", "w"], ["y"])], [value_info("x", ["batch", 4])],
                                [value_info("y", ["batch", 2])],
                                [tensor("w", [4, 2], external={"location": "/etc/passwd"})])},
         stderr=[AT + r".*relative to the model's folder"]),
    Case("onnx_cycle", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Add", ["x", "b"], ["a"], "n1"), node("Relu", ["a"], ["b"], "n2")],
                                [value_info("x", ["batch", 4])], [value_info("b", ["batch", 4])])},
         stderr=[AT + r".*(checker|topologically|cycle)"]),
    Case("onnx_shape_overflow", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Relu", ["x"], ["y"])], [value_info("x", ["batch", 2**40, 2**40, 2**40])],
                                [value_info("y", ["batch", 2**40, 2**40, 2**40])])},
         stderr=[AT + r".*(overflow|too large)"]),
    Case("onnx_opset_9", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Relu", ["x"], ["y"])], [value_info("x", ["batch", 4])],
                                [value_info("y", ["batch", 4])], opset=9)},
         stderr=[AT + r".*opset 9; hwprof reads opsets 11 to 17"]),
    Case("onnx_unsupported_nodes_all_listed", ["bench", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Selu", ["x"], ["a"], "/act/Selu"), node("Erf", ["a"], ["y"], "/erf/Erf")],
                                [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])], opset=14)},
         stderr=[AT + r".*2 nodes cannot be mapped", r"Selu '/act/Selu' \(opset 14\)",
                 r"Erf '/erf/Erf' \(opset 14\)"]),
    # summary counts around them: both listed as not counted, the totals lower bounds.
    Case("onnx_unsupported_nodes_summary", ["summary", "m.onnx"], rc=0,
         files={"m.onnx": model([node("Selu", ["x"], ["a"], "/act/Selu"), node("Relu", ["a"], ["r"], "/relu/Relu"),
                                 node("Erf", ["r"], ["y"], "/erf/Erf")],
                                [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])], opset=14)},
         stdout=[r"act +Selu +\[4\] +not counted", r"erf +Erf +\[4\] +not counted", r"relu +relu +\[4\] +0 +0 +4",
                 r"Incomplete: 2 layers are not counted", r"Total params: +≥ 0"]),
    Case("onnx_two_inputs", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Add", ["x", "z"], ["y"])], [value_info("x", ["batch", 4]), value_info("z", ["batch", 4])],
                                [value_info("y", ["batch", 4])])},
         stderr=[AT + r".*2 inputs"]),
    Case("onnx_symbolic_feature_axis", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Relu", ["x"], ["y"])], [value_info("x", ["batch", "features"])],
                                [value_info("y", ["batch", "features"])])},
         stderr=[AT + r".*symbolic \('features'\)"]),
    # hwprof run -i: hostile .npy inputs.
    Case("npy_truncated", ["run", "m.onnx", "-i", "x.npy"], rc=1, files={"m.onnx": RELU, "x.npy": npy(F4, b"\0" * 8)},
         stderr=[r"x\.npy: .*truncated"]),
    Case("npy_header_length_huge", ["run", "m.onnx", "-i", "x.npy"], rc=1,
         files={"m.onnx": RELU, "x.npy": b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**31) + b"{"},
         stderr=[r"x\.npy: .*header claims"]),
    Case("npy_fortran_order", ["run", "m.onnx", "-i", "x.npy"], rc=1,
         files={"m.onnx": RELU, "x.npy": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 4), }", b"\0" * 16)},
         stderr=[r"x\.npy: .*ascontiguousarray"]),
    Case("npy_float64", ["run", "m.onnx", "-i", "x.npy"], rc=1,
         files={"m.onnx": RELU, "x.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 4), }", b"\0" * 32)},
         stderr=[r"x\.npy: .*astype\(np\.float32\)"]),
    Case("npy_shape_overflow", ["run", "m.onnx", "-i", "x.npy"], rc=1,
         files={"m.onnx": RELU, "x.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }")},
         stderr=[r"x\.npy: .*overflows"]),
    Case("npy_wrong_shape_for_the_model", ["run", "m.onnx", "-i", "x.npy"], rc=1,
         files={"m.onnx": LINEAR, "x.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 5), }", b"\0" * 20)},
         stderr=[r"x\.npy: per-sample shape \[5\] does not fit"]),
    Case("npy_good_input_runs", ["run", "m.onnx", "-i", "x.npy", "-o", "y.npy"],
         files={"m.onnx": RELU, "x.npy": npy(F4, struct.pack("<4f", -1, 2, -3, 4))}, stdout=[r"output \[1, 4\] float32, written to y\.npy"]),
]

# --- attributes a formula divides by, sizes with or counts with: refused by name, before ONNX's
# shape inference (which divides by strides and group unchecked) and before the engine. ---------
# AttributeProto: name 1, f 2, i 3, s 4, t 5, floats 7, ints 8, type 20 (FLOAT 1, INT 2,
# STRING 3, TENSOR 4, INTS 7).


def attr_ints(name, values):
    return fb(1, name) + b"".join(fv(8, v) for v in values) + fv(20, 7)


def attr_int(name, value):
    return fb(1, name) + fv(3, value) + fv(20, 2)


def attr_float(name, value):
    return fb(1, name) + varint((2 << 3) | 5) + struct.pack("<f", value) + fv(20, 1)


def attr_string(name, value):
    return fb(1, name) + fb(4, value) + fv(20, 3)


def attr_tensor(name, t):
    return fb(1, name) + fb(5, t) + fv(20, 4)


def int64_tensor(name, values, dims=None):
    dims = [len(values)] if dims is None else dims
    return b"".join(fv(1, d) for d in dims) + fv(2, 7) + b"".join(fv(7, v) for v in values) + fb(8, name)


def anode(op, inputs, outputs, name, attrs=()):
    """A node with attributes."""
    return node(op, inputs, outputs, name) + b"".join(fb(5, a) for a in attrs)


IMAGE = ["batch", 3, 8, 8]
OUT4 = ["batch", "c", "h", "w"]


def conv_model(attrs, op="Conv", weight=(4, 3, 3, 3), name="conv1"):
    n = 1
    for d in weight:
        n *= d
    return model([anode(op, ["x", "w"], ["y"], name, attrs)], [value_info("x", IMAGE)], [value_info("y", OUT4)],
                 [tensor("w", list(weight), floats=[0.01] * n)])


def pool_model(op, attrs, name="pool1"):
    return model([anode(op, ["x"], ["y"], name, attrs)], [value_info("x", IMAGE)], [value_info("y", OUT4)])


def refused(name, command, data, node_name, op, attribute, extra=()):
    """A model whose node `node_name` has a bad `attribute`: exit 1, the message naming the file,
    the node, its op and the attribute; quick and small."""
    args = [command, "m.onnx"] + (["--threads", "1", "--iterations", "1", "--warmup", "0"] if command == "bench" else [])
    return Case(name, args, rc=1, files={"m.onnx": data},
                stderr=[AT + r"node '" + node_name + r"' \(" + op + r"\): .*" + attribute] + list(extra),
                timeout=10, max_rss_mb=400)


def refused_run(name, data, node_name, op, attribute):
    return Case(name, ["run", "m.onnx", "-i", "x.npy", "-o", "y.npy"], rc=1,
                files={"m.onnx": data, "x.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 8, 8), }", b"\0" * 768)},
                stderr=[AT + r"node '" + node_name + r"' \(" + op + r"\): .*" + attribute], expect=[Expect("y.npy", kind="absent")],
                timeout=10, max_rss_mb=400)


BIG = 2**62

CASES += [
    # class: window attributes (stride, dilation, kernel, group, pads) of Conv.
    refused("conv_strides_0_summary", "summary", conv_model([attr_ints("strides", [0, 0])]), "conv1", "Conv", r"strides has 0 at position 0; strides must be >= 1"),
    refused("conv_strides_0_bench", "bench", conv_model([attr_ints("strides", [1, 0])]), "conv1", "Conv", r"strides has 0 at position 1"),
    refused_run("conv_strides_0_run", conv_model([attr_ints("strides", [0, 0])]), "conv1", "Conv", r"strides"),
    refused("conv_strides_negative", "summary", conv_model([attr_ints("strides", [-1, 1])]), "conv1", "Conv", r"strides has -1"),
    refused("conv_strides_huge", "summary", conv_model([attr_ints("strides", [BIG, 1])]), "conv1", "Conv", r"strides has 4611686018427387904 .*at most"),
    refused("conv_group_0", "summary", conv_model([attr_int("group", 0)]), "conv1", "Conv", r"group is 0; group must be >= 1"),
    refused("conv_group_0_bench", "bench", conv_model([attr_int("group", 0)]), "conv1", "Conv", r"group is 0"),
    refused("conv_group_negative", "summary", conv_model([attr_int("group", -3)]), "conv1", "Conv", r"group is -3"),
    Case("conv_group_not_dividing_channels", ["summary", "m.onnx"], rc=1, files={"m.onnx": conv_model([attr_int("group", 2)])},
         stderr=[AT + r".*(conv1|Conv).*(group|channels)"], timeout=10),
    refused("conv_dilations_0", "summary", conv_model([attr_ints("dilations", [0, 0])]), "conv1", "Conv", r"dilations has 0"),
    refused("conv_dilations_negative", "bench", conv_model([attr_ints("dilations", [-2, -2])]), "conv1", "Conv", r"dilations has -2"),
    refused("conv_kernel_shape_0", "summary", conv_model([attr_ints("kernel_shape", [0, 0])]), "conv1", "Conv", r"kernel_shape has 0"),
    refused("conv_pads_negative", "summary", conv_model([attr_ints("pads", [-1, -1, -1, -1])]), "conv1", "Conv", r"pads has -1 .*>= 0"),
    refused("conv_pads_huge", "summary", conv_model([attr_ints("pads", [BIG] * 4)]), "conv1", "Conv", r"pads has 4611686018427387904"),
    refused("conv_pads_odd_count", "summary", conv_model([attr_ints("pads", [1, 1, 1])]), "conv1", "Conv", r"pads has 3 values"),
    refused("conv_strides_count", "summary", conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("strides", [1, 1, 1])]), "conv1", "Conv",
            r"strides has 3 values but kernel_shape has 2"),
    refused("conv_auto_pad_unknown", "summary", conv_model([attr_string("auto_pad", "SAME_SIDEWAYS")]), "conv1", "Conv", r"auto_pad is 'SAME_SIDEWAYS'"),
    # class: window attributes of ConvTranspose (which the engine's col2im divides by).
    refused("convtranspose_strides_0_summary", "summary", conv_model([attr_ints("strides", [0, 0])], op="ConvTranspose", weight=(3, 4, 3, 3)),
            "conv1", "ConvTranspose", r"strides has 0"),
    refused_run("convtranspose_strides_0_run", conv_model([attr_ints("strides", [0, 0])], op="ConvTranspose", weight=(3, 4, 3, 3)),
                "conv1", "ConvTranspose", r"strides has 0"),
    refused("convtranspose_group_0", "bench", conv_model([attr_int("group", 0)], op="ConvTranspose", weight=(3, 4, 3, 3)), "conv1",
            "ConvTranspose", r"group is 0"),
    refused("convtranspose_output_padding_negative", "summary",
            conv_model([attr_ints("output_padding", [-1, -1])], op="ConvTranspose", weight=(3, 4, 3, 3)), "conv1", "ConvTranspose",
            r"output_padding has -1"),
    refused("convtranspose_dilations_0", "summary", conv_model([attr_ints("dilations", [0, 1])], op="ConvTranspose", weight=(3, 4, 3, 3)),
            "conv1", "ConvTranspose", r"dilations has 0"),
    refused("convtranspose_output_shape_0", "summary", conv_model([attr_ints("output_shape", [0, 0])], op="ConvTranspose", weight=(3, 4, 3, 3)),
            "conv1", "ConvTranspose", r"output_shape has 0"),
    # class: window attributes of the pools (a 0 kernel was an empty window: -324 FLOPs, all NaN).
    refused("maxpool_kernel_0_summary", "summary", pool_model("MaxPool", [attr_ints("kernel_shape", [0, 0])]), "pool1", "MaxPool",
            r"kernel_shape has 0 at position 0; kernel_shape must be >= 1"),
    refused("maxpool_kernel_0_bench", "bench", pool_model("MaxPool", [attr_ints("kernel_shape", [2, 0])]), "pool1", "MaxPool", r"kernel_shape has 0 at position 1"),
    refused_run("maxpool_kernel_0_run", pool_model("MaxPool", [attr_ints("kernel_shape", [0, 0])]), "pool1", "MaxPool", r"kernel_shape"),
    refused("maxpool_strides_0", "summary", pool_model("MaxPool", [attr_ints("kernel_shape", [2, 2]), attr_ints("strides", [0, 0])]), "pool1",
            "MaxPool", r"strides has 0"),
    refused("maxpool_kernel_negative", "summary", pool_model("MaxPool", [attr_ints("kernel_shape", [-3, 3])]), "pool1", "MaxPool", r"kernel_shape has -3"),
    refused("maxpool_kernel_missing", "summary", pool_model("MaxPool", []), "pool1", "MaxPool", r"kernel_shape is missing"),
    refused("maxpool_pads_negative", "bench", pool_model("MaxPool", [attr_ints("kernel_shape", [2, 2]), attr_ints("pads", [0, -1, 0, -1])]), "pool1",
            "MaxPool", r"pads has -1"),
    refused("maxpool_dilations_0", "summary", pool_model("MaxPool", [attr_ints("kernel_shape", [2, 2]), attr_ints("dilations", [0, 0])]), "pool1",
            "MaxPool", r"dilations has 0"),
    refused("averagepool_strides_0_summary", "summary", pool_model("AveragePool", [attr_ints("kernel_shape", [2, 2]), attr_ints("strides", [0, 0])]),
            "pool1", "AveragePool", r"strides has 0"),
    Case("averagepool_strides_0_profile", ["profile", "m.onnx", "--calibration", "@{machine}"] + ["--threads", "1", "--iterations", "1", "--warmup", "0"],
         rc=1, needs={"machine"}, files={"m.onnx": pool_model("AveragePool", [attr_ints("kernel_shape", [2, 2]), attr_ints("strides", [0, 0])])},
         stderr=[AT + r"node 'pool1' \(AveragePool\): attribute strides has 0"], timeout=15),
    refused("averagepool_kernel_huge", "summary", pool_model("AveragePool", [attr_ints("kernel_shape", [BIG, BIG])]), "pool1", "AveragePool",
            r"kernel_shape has 4611686018427387904"),
    refused("lppool_kernel_0", "summary", pool_model("LpPool", [attr_ints("kernel_shape", [0, 0])]), "pool1", "LpPool", r"kernel_shape has 0"),
    # class: other counts and sizes (blocksize, LRN size, axes, perm, split, epsilon, ratio).
    refused("depthtospace_blocksize_0", "summary", pool_model("DepthToSpace", [attr_int("blocksize", 0)], name="d2s"), "d2s", "DepthToSpace",
            r"blocksize is 0"),
    refused("spacetodepth_blocksize_negative", "summary", pool_model("SpaceToDepth", [attr_int("blocksize", -2)], name="s2d"), "s2d",
            "SpaceToDepth", r"blocksize is -2"),
    refused("lrn_size_0", "summary", pool_model("LRN", [attr_int("size", 0)], name="lrn"), "lrn", "LRN", r"size is 0"),
    refused("softmax_axis_huge", "summary", pool_model("Softmax", [attr_int("axis", 1000)], name="sm"), "sm", "Softmax", r"axis is 1000"),
    refused("concat_axis_negative_huge", "summary",
            model([anode("Concat", ["x", "x"], ["y"], "cat", [attr_int("axis", -BIG)])], [value_info("x", IMAGE)], [value_info("y", OUT4)]),
            "cat", "Concat", r"axis is -4611686018427387904"),
    refused("flatten_axis_huge", "summary", pool_model("Flatten", [attr_int("axis", 99)], name="fl"), "fl", "Flatten", r"axis is 99"),
    refused("transpose_perm_out_of_range", "summary", pool_model("Transpose", [attr_ints("perm", [0, 1, 2, 99])], name="tr"), "tr", "Transpose",
            r"perm has 99"),
    refused("squeeze_axes_out_of_range", "summary",
            model([anode("Squeeze", ["x"], ["y"], "sq", [attr_ints("axes", [40])])], [value_info("x", IMAGE)], [value_info("y", OUT4)], opset=11),
            "sq", "Squeeze", r"axes has 40"),
    refused("batchnorm_epsilon_nan", "summary",
            model([anode("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], "bn", [attr_float("epsilon", float("nan"))])],
                  [value_info("x", IMAGE)], [value_info("y", OUT4)],
                  [tensor(t, [3], floats=[1.0] * 3) for t in ("s", "b", "m", "v")]),
            "bn", "BatchNormalization", r"epsilon is nan"),
    refused("layernorm_epsilon_negative", "summary",
            model([anode("LayerNormalization", ["x", "s", "b"], ["y"], "ln", [attr_float("epsilon", -1.0)])],
                  [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])], [tensor(t, [4], floats=[1.0] * 4) for t in ("s", "b")],
                  opset=17),
            "ln", "LayerNormalization", r"epsilon is -1"),
    refused("dropout_ratio_above_1", "bench",
            model([anode("Dropout", ["x"], ["y"], "drop", [attr_float("ratio", 1.5)])], [value_info("x", ["batch", 4])],
                  [value_info("y", ["batch", 4])], opset=11),
            "drop", "Dropout", r"ratio is 1\.5"),
    refused("gather_index_out_of_range", "summary",
            model([anode("Gather", ["x", "i"], ["y"], "pick", [attr_int("axis", 1)])], [value_info("x", ["batch", 4, 5])],
                  [value_info("y", ["batch", 5])], [int64_tensor("i", [7], dims=[])]),
            "pick", "Gather", r"index 7(\.0+)? is out of range for axis 1 of size 4"),
]


def folded(op, a, b, name="fold"):
    """Shape arithmetic the importer evaluates itself (fold_shape_computations): two int64
    constants and `op` of them, beside a Relu so that the model is otherwise fine."""
    return model([anode("Constant", [], ["a"], "ca", [attr_tensor("value", int64_tensor("ta", a))]),
                  anode("Constant", [], ["b"], "cb", [attr_tensor("value", int64_tensor("tb", b))]),
                  node(op, ["a", "b"], ["c"], name), node("Relu", ["x"], ["y"], "relu")],
                 [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])])


def shape_times(factor):
    """Shape(x) · factor: a dimension multiplied past 2^63."""
    return model([node("Shape", ["x"], ["s"], "shape"),
                  anode("Constant", [], ["k"], "ck", [attr_tensor("value", int64_tensor("tk", [factor]))]),
                  node("Mul", ["s", "k"], ["c"], "scale"), node("Relu", ["x"], ["y"], "relu")],
                 [value_info("x", [2, 4])], [value_info("y", [2, 4])])


INT64_MIN = -2**63
FOLD = r"overflows 64-bit integers"

CASES += [
    # class: shape arithmetic folded by the importer, checked for overflow.
    Case("fold_int64_min_div_minus_1", ["summary", "m.onnx"], rc=1, files={"m.onnx": folded("Div", [INT64_MIN], [-1])},
         stderr=[AT + r"node 'fold' \(Div\): the shape arithmetic -9223372036854775808 / -1 " + FOLD], timeout=10),
    Case("fold_mul_by_2_62", ["summary", "m.onnx"], rc=1, files={"m.onnx": shape_times(2**62)},
         stderr=[AT + r"node 'scale' \(Mul\): .*\* 4611686018427387904 " + FOLD], timeout=10),
    Case("fold_add_overflow", ["bench", "m.onnx", "--threads", "1", "--iterations", "1", "--warmup", "0"], rc=1,
         files={"m.onnx": folded("Add", [2**63 - 1], [1])}, stderr=[AT + r"node 'fold' \(Add\): .*" + FOLD], timeout=10),
    Case("fold_sub_overflow", ["summary", "m.onnx"], rc=1, files={"m.onnx": folded("Sub", [INT64_MIN], [1])},
         stderr=[AT + r"node 'fold' \(Sub\): .*" + FOLD], timeout=10),
    Case("fold_mul_broadcast_overflow", ["run", "m.onnx"], rc=1, files={"m.onnx": folded("Mul", [3, 2**62], [4])},
         stderr=[AT + r"node 'fold' \(Mul\): .*" + FOLD], timeout=10),
    # A division by zero is left to ONNX (not folded), and the model still reads.
    Case("fold_div_by_zero_is_not_folded", ["summary", "m.onnx"], files={"m.onnx": folded("Div", [6], [0])}, stdout=[r"relu"], timeout=10),
]



def regression(name):
    """An input the onnx fuzz harness found (tests/fuzz/regressions/onnx/)."""
    def make(ctx):
        return (ctx.source_dir / "tests" / "fuzz" / "regressions" / "onnx" / name).read_bytes()
    return make


CASES += [
    # class: ONNX's own shape inference never reached with what crashes it. Found by the fuzz
    # harness: ONNX 1.12's Shape (opset 15 on) reads the type of a value whose producer failed
    # (a Reshape to a propagated shape of -281474975858689), unchecked: SIGSEGV.
    Case("onnx_shape_of_a_value_whose_producer_failed", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": regression("shape-of-a-value-whose-producer-failed.onnx")},
         stderr=[AT + r"ONNX shape inference failed: .*Reshape"], timeout=10),
]

# class: control characters in names (node, op type, graph, values) never reach the terminal raw.
RAW_CONTROL = ["\x1b", "\x07", "\r", "\x00", "\x9b"]


def named_relu(node_name, op="Relu", graph_name="g", input_name="x"):
    return model([node(op, [input_name], ["y"], node_name)], [value_info(input_name, ["batch", 4])], [value_info("y", ["batch", 4])],
                 name=graph_name)


CASES += [
    Case("names_escape_in_summary", ["summary", "m.onnx"], files={"m.onnx": named_relu("/a\x1b[31mred\x07/Relu")},
         stdout=[r"\\x1b\[31mred\\x07"], stdout_not=RAW_CONTROL, stderr_not=RAW_CONTROL, timeout=10),
    Case("names_cr_and_nul_in_summary", ["summary", "m.onnx"], files={"m.onnx": named_relu("/over\rwrite\x00cut/Relu")},
         stdout=[r"over\\x0dwrite\\x00cut"], stdout_not=RAW_CONTROL, timeout=10),
    Case("names_nul_does_not_collide", ["summary", "m.onnx"],
         files={"m.onnx": model([node("Relu", ["x"], ["a"], "/r\x00x/Relu"), node("Relu", ["a"], ["y"], "/r/Relu")],
                                [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])])},
         stdout=[r"r\\x00x +relu", r"\br +relu"], stdout_not=RAW_CONTROL, timeout=10),
    Case("names_escape_in_errors", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": conv_model([attr_ints("strides", [0, 0])], name="c\x1b]0;pwned\x07")},
         stderr=[AT + r"node 'c\\x1b\]0;pwned\\x07' \(Conv\): attribute strides"], stderr_not=RAW_CONTROL, timeout=10),
    Case("names_escape_in_unsupported_op", ["bench", "m.onnx"], rc=1, files={"m.onnx": named_relu("/e/Bad", op="Ev\x1bil")},
         stderr=[AT + r".*Ev\\x1bil"], stderr_not=RAW_CONTROL, timeout=10),
    Case("names_escape_graph_name", ["summary", "m.onnx", "-f", "json"], files={"m.onnx": named_relu("/r/Relu", graph_name="net\x1b[2J")},
         stdout=[r"net\\\\x1b\[2J"], stdout_not=RAW_CONTROL, timeout=10),
    Case("names_escape_c1_csi", ["summary", "m.onnx"], files={"m.onnx": named_relu("/a\u009b31m/Relu")},
         stdout=[r"a\\u009b31m"], stdout_not=RAW_CONTROL, timeout=10),
    Case("names_escape_input_name", ["summary", "m.onnx"], rc=1,
         files={"m.onnx": model([node("Relu", ["x\x1b"], ["y"], "r")], [value_info("x\x1b", ["batch", "f\x1b"])], [value_info("y", ["batch", 4])])},
         stderr=[AT + r"input 'x\\x1b'"], stderr_not=RAW_CONTROL, timeout=10),
]

# class: `run -o` onto the model or the input (directly, through a link, by another spelling):
# refused before anything runs, both files unchanged.
X_NPY = npy(F4, struct.pack("<4f", -1, 2, -3, 4))
CLOBBER = r"the output file is the (model|input)"


def clobber(name, out, files=None, which="model", setup=None, extra_expect=()):
    laid = {"m.onnx": RELU, "x.npy": X_NPY}
    laid.update(files or {})
    return Case(name, ["run", "m.onnx", "-i", "x.npy", "-o", out], rc=2, files=laid, setup=setup,
                stderr=[r"-o " + re.escape(out).replace(re.escape("@{dir}"), "@{dir}") + ": the output file is the " + which],
                expect=[Expect("m.onnx", unchanged=True), Expect("x.npy", unchanged=True)] + list(extra_expect), timeout=10)


def hard_link(source, link):
    def make(ctx):
        os.link(ctx.dir / source, ctx.dir / link)
    return make


CASES += [
    clobber("run_output_is_the_model", "m.onnx"),
    clobber("run_output_is_the_input", "x.npy", which="input"),
    clobber("run_output_is_a_link_to_the_model", "link.onnx", files={"link.onnx": Symlink("m.onnx")},
            extra_expect=[Expect("link.onnx", kind="symlink", link_target="m.onnx")]),
    clobber("run_output_is_a_link_to_the_input", "y.npy", files={"y.npy": Symlink("x.npy")}, which="input",
            extra_expect=[Expect("y.npy", kind="symlink", link_target="x.npy")]),
    clobber("run_output_is_the_model_spelt_relatively", "./sub/../m.onnx", files={"sub": Dir()}),
    clobber("run_output_is_the_model_spelt_absolutely", "@{dir}/m.onnx"),
    clobber("run_output_is_a_hard_link_to_the_input", "h.npy", which="input", setup=hard_link("x.npy", "h.npy")),
]

# class: an input array too large for memory, refused from its header before it is read.


def sparse_npy(shape, data_bytes):
    def make(ctx):
        path = ctx.dir / "big.npy"
        with open(path, "wb") as f:
            f.write(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (" + ", ".join(map(str, shape)) + "), }"))
        os.truncate(path, path.stat().st_size + data_bytes)
    return make


# A Conv to 64 channels: at batch 4,000,000 its activations need 65 GB, more than any machine
# the suite runs on (with --asan, without an address-space limit, this is what refuses it).
WIDE_CONV = conv_model([attr_ints("pads", [1, 1, 1, 1])], weight=(64, 3, 3, 3))
TOO_BIG = [r"big\.npy|batch 4000000", r"(?i)memory", r"\d(\.\d)? ?(GiB|GB)"]

CASES += [
    Case("npy_sparse_3GB_run", ["run", "m.onnx", "-i", "big.npy"], rc=1, files={"m.onnx": WIDE_CONV},
         setup=sparse_npy((4000000, 3, 8, 8), 4000000 * 3 * 8 * 8 * 4), stderr=TOO_BIG, stderr_not=[r"bad_alloc"],
         timeout=10, max_rss_mb=300, max_rss_mb_asan=1024),
    Case("npy_sparse_3GB_run_with_output", ["run", "m.onnx", "-i", "big.npy", "-o", "y.npy"], rc=1, files={"m.onnx": WIDE_CONV},
         setup=sparse_npy((4000000, 3, 8, 8), 4000000 * 3 * 8 * 8 * 4), stderr=TOO_BIG, expect=[Expect("y.npy", kind="absent")],
         timeout=10, max_rss_mb=300, max_rss_mb_asan=1024),
    # The array itself fits; the model's activations at its batch (33 GB) do not: refused before it is read.
    Case("npy_sparse_1500MB_model_too_big_at_its_batch", ["run", "m.onnx", "-i", "big.npy"], rc=1, files={"m.onnx": WIDE_CONV},
         setup=sparse_npy((2000000, 3, 8, 8), 2000000 * 3 * 8 * 8 * 4), stderr=[r"(?i)memory", r"batch 2000000"], stderr_not=[r"bad_alloc"],
         timeout=10, max_rss_mb=300, max_rss_mb_asan=1024),
    # The header's size is not taken for the truth: a short file is a truncated one.
    Case("npy_header_claims_3GB_file_holds_1KB", ["run", "m.onnx", "-i", "big.npy"], rc=1, files={"m.onnx": WIDE_CONV},
         setup=sparse_npy((4000000, 3, 8, 8), 1024), stderr=[r"big\.npy: the \.npy data is 1024 bytes; .*truncated"],
         timeout=10, max_rss_mb=300, max_rss_mb_asan=1024),
]
