#!/usr/bin/env python3
"""HWPROF_SAMPLE under hwprof::torch (docs/sampling.md, "Regions programs and PyTorch:
HWPROF_SAMPLE"): a small convolutional script run under `python3 -m hwprof.torch -o DIR` with
HWPROF_SAMPLE set, and without any other hwprof variable of its own.

Checks: the script's exit status is its own (it exits 3); profile.json has a "sampling" object
whose rows are the report's rows (modules and ops, named as its layers are), measured in
windows ("cost_from": "windows"); the convolution op's row has samples and named functions; the
library user's sampling files (flamegraph.svg, samples.folded, samples.speedscope.json) and
the table's section are written too.
Usage: sample_check.py BUILD_PYTHON_DIR   (BUILD/python, where CMake copied the package)
Exit 77 (skipped) where PyTorch is not importable or this machine does not let a process
sample itself.
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

torch.set_num_threads(1)
torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(8, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1))
x = torch.randn(4, 8, 48, 48)
with torch.no_grad():
    for _ in range(40):
        net(x)
sys.exit(3)
"""


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    build_python = os.path.abspath(sys.argv[1])
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: PyTorch is not importable by /usr/bin/python3 (python3-torch: scripts/install-deps.sh)")
        sys.exit(77)
    env = dict(os.environ, PYTHONPATH=build_python, HWPROF_BACKEND="timer", HWPROF_SAMPLE="cpu-clock@2000")
    with tempfile.TemporaryDirectory() as tmp:
        script, out = os.path.join(tmp, "convs.py"), os.path.join(tmp, "out")
        with open(script, "w") as f:
            f.write(SCRIPT)
        run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, script], env=env, capture_output=True, text=True,
                             timeout=300)
        if run.returncode != 3:
            fail(f"the script's exit status 3 became {run.returncode}: {run.stderr[-2000:]}")
        if "the program runs unsampled" in run.stderr:
            print("skipped: this machine does not let the program sample itself: " + run.stderr[-1000:])
            sys.exit(77)
        for name in ("profile.json", "profile.txt", "flamegraph.svg", "samples.folded", "samples.speedscope.json", "report.html"):
            if not os.path.isfile(os.path.join(out, name)):
                fail(f"{out}/{name} was not written; stderr: {run.stderr[-2000:]}")
        with open(os.path.join(out, "profile.json")) as f:
            profile = json.load(f)
        sampling = profile.get("sampling")
        if not sampling:
            fail(f"profile.json has no sampling object; stderr: {run.stderr[-2000:]}")
        if sampling["cost_from"] != "windows" or sampling["samples"] < 100:
            fail(f"cost_from {sampling['cost_from']!r}, {sampling['samples']} samples: expected windows and at least 100")
        # A row outside the forward phase is its region's name without the phase's suffix
        # ("aten::normal_" in the setup phase is the region "aten::normal_ (setup)").
        layer_names = {layer["name"] for layer in profile["layers"]}
        layer_names |= {f"{layer['name']} ({layer['phase']})" for layer in profile["layers"] if layer["phase"] != "forward"}
        rows = [row for row in sampling["layers"] if row["layer"] >= 0]
        strangers = [row["name"] for row in rows if row["name"] not in layer_names]
        if strangers:
            fail(f"sampling rows that are no row of the report: {strangers[:5]}")
        convs = [row for row in rows if row["name"].startswith("aten::conv2d") or row["name"].startswith("aten::convolution") or
                 row["name"].startswith("aten::mkldnn_convolution") or row["name"].startswith("aten::_convolution")]
        if not convs or not any(row["top"] and row["top"][0]["function"] and row["samples"] > 0 for row in convs):
            fail(f"no convolution row with samples and named functions: {[(r['name'], r['samples']) for r in rows][:10]}")
        with open(os.path.join(out, "profile.txt")) as f:
            if "Where inside the regions the time went" not in f.read():
                fail("profile.txt has no sampling section")
        print(f"ok: {sampling['samples']} samples; rows: " + ", ".join(f"{r['name'][:40]} {r['samples']}" for r in sampling["layers"][:6]))


if __name__ == "__main__":
    main()
