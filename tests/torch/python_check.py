#!/usr/bin/env python3
"""The Python side of hwprof::torch (python/hwprof), checked from its files: an unmodified
script under `python3 -m hwprof.torch -o DIR` and a `with hwprof.torch.profile(...)` block.

Checks: the script's exit status is its own (it exits 3); every report file is written,
profile.json of kind torch; each module of the script's model is a region named by its path
(`Net`, `Net.conv1`, ...); the aten ops run inside a module are nested under it in the call
tree (`Net/Net.conv1/aten::conv2d [...]`), with the conv's exact FLOPs; each module's row
carries the FLOPs of the ops it ran, once each; the block form writes its folder when the
block ends.
Usage: python_check.py BUILD_PYTHON_DIR   (BUILD/python, where CMake copied the package)
Exit 77 (skipped) where PyTorch is not importable.
"""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = """
import sys
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.act = nn.ReLU()
        self.fc = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.act(self.conv1(x)), 1))

torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x = torch.randn(2, 1, 8, 8)
for _ in range(3):
    opt.zero_grad()
    net(x).sum().backward()
    opt.step()
sys.exit(3)
"""

BLOCK = """
import sys
import torch
sys.path.insert(0, sys.argv[1])
import hwprof.torch
lin = torch.nn.Linear(16, 8)
with hwprof.torch.profile(output=sys.argv[2], backend="timer"):
    for _ in range(2):
        lin(torch.randn(4, 16))
"""


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def load(out):
    for name in ("profile.json", "profile.txt", "profile.csv", "roofline.svg", "trace.json", "report.html"):
        if not os.path.isfile(os.path.join(out, name)):
            fail(f"{out}/{name} was not written")
    with open(os.path.join(out, "profile.json")) as f:
        return json.load(f)


def main():
    build_python = os.path.abspath(sys.argv[1])
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: PyTorch is not importable by /usr/bin/python3 (python3-torch: scripts/install-deps.sh)")
        sys.exit(77)
    env = dict(os.environ, PYTHONPATH=build_python, HWPROF_BACKEND="timer")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        out = os.path.join(tmp, "out")
        run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, script], env=env, capture_output=True, text=True,
                             timeout=300)
        if run.returncode != 3:
            fail(f"the script's exit status 3 became {run.returncode}: {run.stderr[-2000:]}")
        profile = load(out)
        if profile.get("kind") != "torch":
            fail(f"kind {profile.get('kind')!r}, expected 'torch'")
        names = {layer["name"] for layer in profile["layers"]}
        for module in ("Net", "Net.conv1", "Net.act", "Net.fc"):
            if module not in names:
                fail(f"no row for module {module}; rows: {sorted(names)[:20]}")
        paths = [p["path"] for p in profile["call_paths"]]
        conv = [p for p in paths if p.startswith("Net/Net.conv1/aten::conv2d")]
        if not conv:
            fail(f"no conv2d under Net/Net.conv1 in the call tree: {paths[:20]}")
        rows = [layer for layer in profile["layers"] if layer["name"].startswith("aten::conv2d [2x1x8x8")]
        expected = 2 * (2 * 4 * 6 * 6) * 9 + 2 * 4 * 6 * 6  # 2·MACs + bias, per call
        if not rows or rows[0]["flops"] != expected:
            fail(f"conv2d FLOPs {rows[0]['flops'] if rows else None}, expected {expected}")
        # A module's row carries the work of the ops it ran (each counted once): conv1 its
        # conv2d, the model its conv2d, ReLU and linear (flatten has none).
        by_name = {layer["name"]: layer for layer in profile["layers"] if layer["phase"] == "forward"}
        relu = 2 * 4 * 6 * 6
        linear = 2 * 2 * 144 * 10 + 2 * 10
        for module, flops in (("Net.conv1", expected), ("Net.act", relu), ("Net.fc", linear), ("Net", expected + relu + linear)):
            if by_name[module]["flops"] != flops or by_name[module]["op"] != "module":
                fail(f"module {module}: {by_name[module]['flops']} FLOPs per call, expected {flops} (the ops it ran, once each)")
        # Backward: each module has a backward row, with the work of the backward functions of
        # the ops it ran forward: conv1's is aten::convolution_backward's, over all calls.
        backward = {layer["name"]: layer for layer in profile["layers"] if layer["phase"] == "backward"}
        for module in ("Net", "Net.conv1", "Net.act", "Net.fc"):
            if module not in backward or backward[module]["op"] != "module":
                fail(f"no backward row for module {module}: {sorted(backward)[:20]}")
        total = lambda layer: layer["flops"] * layer["time_ms"]["n"]  # noqa: E731  (n: every call, this few)
        conv_backward = [layer for name, layer in backward.items() if name.startswith("aten::convolution_backward")]
        if len(conv_backward) != 1 or total(backward["Net.conv1"]) != total(conv_backward[0]) or total(conv_backward[0]) == 0:
            fail(f"Net.conv1's backward work {total(backward['Net.conv1'])} is not its convolution_backward's {[total(c) for c in conv_backward]}")
        children = sum(total(backward[m]) for m in ("Net.conv1", "Net.act", "Net.fc"))
        if total(backward["Net"]) != children:
            fail(f"Net's backward work {total(backward['Net'])} is not its modules' {children} (flatten's backward has none)")
        # The optimizer's step is its own phase; the ops run by no module are rows of their own.
        if not any(layer["phase"] == "optimizer" and layer["name"].startswith("Optimizer.step#SGD.step") for layer in profile["layers"]):
            fail("no optimizer row for Optimizer.step#SGD.step")
        # The block form writes its folder when the block ends.
        block_out = os.path.join(tmp, "block")
        run = subprocess.run(["/usr/bin/python3", "-c", BLOCK, build_python, block_out], env=env, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            fail(f"the block form exited {run.returncode}: {run.stderr[-2000:]}")
        block = load(block_out)
        if "Linear" not in {layer["name"] for layer in block["layers"]}:
            fail("the block's Linear module has no row")
    print("ok: modules as rows with their ops' FLOPs, ops nested under them with exact FLOPs, exit status kept, block form written")


if __name__ == "__main__":
    main()
