"""ONNX models and .npy inputs (issue 16): truncated, empty, random and 3 GiB files, external
data that points outside the model's folder, cycles, shapes that overflow, opsets out of
range, unsupported nodes, and hostile .npy files for `hwprof run -i`. The ONNX files are
written here with a few lines of protobuf wire format (standard library only, like the rest
of the suite); field numbers are those of onnx/onnx.proto."""

import struct

from hostile_case import Case, Sparse

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


def model(nodes, inputs, outputs, initializers=(), opset=13):
    graph = (b"".join(fb(1, n) for n in nodes) + fb(2, "g") + b"".join(fb(5, t) for t in initializers)
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
         files={"m.onnx": model([node("Elu", ["x"], ["a"], "/act/Elu"), node("Erf", ["a"], ["y"], "/erf/Erf")],
                                [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])], opset=14)},
         stderr=[AT + r".*2 nodes cannot be mapped", r"Elu '/act/Elu' \(opset 14\)",
                 r"Erf '/erf/Erf' \(opset 14\)"]),
    # summary counts around them: both listed as not counted, the totals lower bounds.
    Case("onnx_unsupported_nodes_summary", ["summary", "m.onnx"], rc=0,
         files={"m.onnx": model([node("Elu", ["x"], ["a"], "/act/Elu"), node("Relu", ["a"], ["r"], "/relu/Relu"),
                                 node("Erf", ["r"], ["y"], "/erf/Erf")],
                                [value_info("x", ["batch", 4])], [value_info("y", ["batch", 4])], opset=14)},
         stdout=[r"act +Elu +\[4\] +not counted", r"erf +Erf +\[4\] +not counted", r"relu +relu +\[4\] +0 +0 +4",
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
