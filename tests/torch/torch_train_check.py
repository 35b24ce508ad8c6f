#!/usr/bin/env python3
"""The libtorch example (examples/torch_train.cpp) under hwprof::torch, checked from its files.

Runs the example with HWPROF_OUTPUT (time only, HWPROF_BACKEND=timer) and checks:
- its exit status is its own (0) and every report file is written, profile.json of kind torch;
- each conv2d and linear (addmm, in C++) row's forward FLOPs per call are the formula for the example's
  shapes (2·MACs + the bias adds: docs/torch.md), and their batch norm, ReLU and pool rows too;
- nothing is counted twice: the FLOPs over every forward row of the model's ops and the ops
  inside them (convolution, _convolution, mkldnn_convolution, addmm, t, ...) add up to the
  model's layers computed here, once each;
- backward rows exist, the convolutions' with FLOPs.
Usage: torch_train_check.py EXAMPLE
"""
import json
import os
import subprocess
import sys
import tempfile

BATCH = 8
STEPS = 3


def conv_flops(c_in, c_out, k, hw):
    out = BATCH * c_out * hw * hw
    return 2 * out * c_in * k * k + out  # 2·MACs + bias


def expected_layers():
    """Forward FLOPs per call of each layer of the example's CNN, training mode."""
    return {
        "aten::conv2d": [conv_flops(1, 8, 5, 28), conv_flops(8, 16, 5, 14)],
        "aten::batch_norm": [7 * BATCH * 8 * 28 * 28, 7 * BATCH * 16 * 14 * 14],
        "aten::relu": [BATCH * 8 * 28 * 28, BATCH * 16 * 14 * 14],
        "aten::max_pool2d": [3 * BATCH * 8 * 14 * 14, 3 * BATCH * 16 * 7 * 7],
        # libtorch's C++ Linear calls addmm (and t) itself: no aten::linear around them.
        "aten::addmm": [2 * BATCH * 784 * 10 + BATCH * 10],
    }


# The model's forward ops and what runs inside them (views count 0 FLOPs).
MODEL_FAMILY = (
    "aten::conv2d", "aten::convolution", "aten::_convolution", "aten::mkldnn_convolution",
    "aten::batch_norm", "aten::_batch_norm_impl_index", "aten::native_batch_norm",
    "aten::relu", "aten::max_pool2d", "aten::max_pool2d_with_indices",
    "aten::linear", "aten::t", "aten::addmm", "aten::matmul", "aten::mm",
    "aten::flatten", "aten::view", "aten::reshape", "aten::_reshape_alias",
)


def fail(message):
    print("FAILED: " + message)
    sys.exit(1)


def op_of(row_name):
    return row_name.split(" [")[0].split(" (")[0]


def main():
    example = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, HWPROF_OUTPUT=out, HWPROF_BACKEND="timer")
        run = subprocess.run([example, str(STEPS)], env=env, capture_output=True, text=True, timeout=500)
        print(run.stdout + run.stderr)
        if run.returncode != 0:
            fail(f"the example exited with {run.returncode}")
        for name in ("profile.json", "profile.txt", "profile.csv", "roofline.svg", "trace.json", "report.html"):
            if not os.path.isfile(os.path.join(out, name)):
                fail(f"{name} was not written (files: {sorted(os.listdir(out))})")
        with open(os.path.join(out, "profile.json"), encoding="utf-8") as f:
            profile = json.load(f)
    if profile.get("kind") != "torch":
        fail(f"profile.json's kind is {profile.get('kind')!r}, not 'torch'")
    rows = profile["layers"]
    forward = [r for r in rows if r["phase"] == "forward" and op_of(r["name"]) in MODEL_FAMILY]

    def per_shape(row):
        """An op row's FLOPs per call on each of its shapes (docs/torch.md, "Shapes")."""
        return [round(s["flops"] / s["calls"]) for s in row.get("shapes", []) if s["calls"] > 0 and not s["other"]]

    # Each op's row: one shape per layer, its FLOPs per call the formula (calls: one per step).
    for op, per_layer in expected_layers().items():
        got = sorted(f for r in forward if op_of(r["name"]) == op for f in per_shape(r))
        if got != sorted(per_layer):
            fail(f"{op}: its shapes have FLOPs per call {got}, the formula gives {sorted(per_layer)}")
    # No double counting: every forward row of the model's ops, inner ones included.
    total = round(sum((r.get("flops") or 0) * r["calls"] for r in forward))
    expected = sum(sum(v) for v in expected_layers().values()) * STEPS
    if total != expected:
        counted = [(r["name"], r.get("flops")) for r in forward if r.get("flops")]
        fail(f"the forward rows add up to {total} FLOPs, the model's layers to {expected}: {counted}")
    backward = [r for r in rows if r["phase"] == "backward"]
    # Each conv's backward function carries its op-table backward: conv1 (the model's input
    # needs no gradient) its weight and bias gradients, 2·MACs + n; conv2 also its input's,
    # 2·MACs more. The convolution_backward inside is counted in it.
    got = sorted(f for r in backward if r["op"] == "aten::conv2d" for f in per_shape(r))
    conv1, conv2 = expected_layers()["aten::conv2d"]
    conv2_input = conv2 - 8 * 16 * 14 * 14  # 2·MACs: conv2's forward less its n bias adds
    if got != sorted([conv1, conv2 + conv2_input]):
        fail(f"the conv2d backward functions carry {got}, the op table gives {sorted([conv1, conv2 + conv2_input])}: "
             + ", ".join(r["name"] for r in backward))
    if any(op_of(r["name"]) == "aten::convolution_backward" and r.get("flops") for r in backward):
        fail("aten::convolution_backward has FLOPs of its own: counted twice with its backward function")
    print(f"ok: {len(rows)} rows, {len(backward)} backward, forward FLOPs {total} as expected")


if __name__ == "__main__":
    main()
