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
with hwprof.torch.profile(output=sys.argv[2], backend="timer", warmup=2) as prof:
    for _ in range(5):
        lin(torch.randn(4, 16))
        prof.step()
"""

# F.interpolate by a scale factor (upsample_*.vec with a float list) and to a size.
UPSAMPLE = """
import torch
import torch.nn.functional as F
x = torch.randn(2, 3, 5, 4, requires_grad=True)
y = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
z = F.interpolate(y, size=(7, 9), mode="nearest")
(y.sum() + z.sum()).backward()
"""


def profiled(env, tmp, name, text, what):
    """Runs `text` as a script under `python3 -m hwprof.torch -o DIR` and returns DIR; fails,
    naming `what`, when the script does not exit 0."""
    script, out = os.path.join(tmp, name + ".py"), os.path.join(tmp, name)
    with open(script, "w") as f:
        f.write(text)
    run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, script], env=env, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail(f"{what} exited {run.returncode}: {run.stderr[-2000:]}")
    return out


def check_upsample(env, tmp):
    """Upsampling is the op table's `upsample`: bilinear 7 FLOPs an output (10x8 from 5x4 by a
    scale factor of 2), nearest 0, each counted, not 'not counted'."""
    out = profiled(env, tmp, "upsample", UPSAMPLE, "the upsampling script")
    rows = [layer for layer in load(out)["layers"] if layer["phase"] == "forward" and layer["op"].startswith("aten::upsample")]
    bilinear = [layer for layer in rows if "bilinear" in layer["op"]]
    nearest = [layer for layer in rows if "nearest" in layer["op"]]
    if not bilinear or bilinear[0].get("work_note") or bilinear[0]["flops"] != 7 * 2 * 3 * 10 * 8:
        fail(f"F.interpolate(scale_factor=2, bilinear): {[(r['name'], r['flops'], r.get('work_note')) for r in bilinear]}, expected {7 * 2 * 3 * 10 * 8} FLOPs")
    if not nearest or nearest[0].get("work_note") or nearest[0]["flops"] != 0:
        fail(f"F.interpolate(size, nearest): {[(r['name'], r['flops'], r.get('work_note')) for r in nearest]}, expected 0 FLOPs, counted")


# nn.LSTM and nn.GRU given initial states computed from the input (an encoder's state) and a
# constant: aten::lstm / aten::gru with hx, as tests/fixtures/onnx/tiny_rnn's layers.
RECURRENT_STATES = """
import torch
from torch import nn
lstm, gru, h = nn.LSTM(6, 8, num_layers=2, batch_first=True), nn.GRU(8, 5, batch_first=True, bidirectional=True), nn.Linear(6, 16)
x = torch.randn(2, 7, 6)
h0 = torch.tanh(h(x[:, 0])).view(-1, 2, 8).transpose(0, 1).contiguous()
y, _ = lstm(x, (h0, 0.5 * h0))
z, _ = gru(y, torch.ones(2, 2, 5))
z.sum().backward()
"""


def check_recurrent_states(env, tmp):
    """The layers given h0 (and c0) count what they count from zero states: per sample LSTM
    7,952 + 8,848 FLOPs, GRU 7,070 (`hwprof summary` of tiny_rnn), at batch 2, and hx's bytes."""
    out = profiled(env, tmp, "states", RECURRENT_STATES, "the recurrent script")
    rows = {layer["op"]: layer for layer in load(out)["layers"] if layer["phase"] == "forward" and layer["op"] in ("aten::lstm", "aten::gru")}
    for op, flops in (("aten::lstm", 2 * (7952 + 8848)), ("aten::gru", 2 * 7070)):
        row = rows.get(op)
        if row is None or row.get("work_note") or row["flops"] != flops:
            fail(f"{op} given hx: {row and (row['flops'], row.get('work_note'))}, expected {flops} FLOPs, counted")


EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "torch_train.py")

# Two intra-op threads on one convolution: the calling thread's own CPU time around each call,
# summed, is written to argv[1] for the check to hold the module's task-clock against.
THREADS = """
import sys, time, torch
torch.set_num_threads(2)
conv = torch.nn.Conv2d(64, 64, 3, padding=1)
x = torch.randn(8, 64, 56, 56)
own = 0
with torch.no_grad():
    for _ in range(12):
        start = time.thread_time_ns()
        conv(x)
        own += time.thread_time_ns() - start
open(sys.argv[1], "w").write(str(own))
"""


# Two forward threads, each training its own model at once. PyTorch numbers autograd's
# sequences per thread, both from 0: a backward function must find its own thread's forward op.
TWO_THREADS = """
import threading
import torch
from torch import nn

class Dense(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(torch.tanh(self.conv(x))).flatten(1)

# In lockstep, so that the sequence numbers meet every step: both forward passes (each numbering
# its own ops from the same count up), then both backward passes.
torch.set_num_threads(1)
forward_done = [threading.Barrier(2) for _ in range(2)]
def train(model, x, steps):
    for _ in range(steps):
        model.zero_grad()
        loss = model(x).sum()
        forward_done[0].wait()
        forward_done[1].wait()
        loss.backward()

torch.manual_seed(0)
workers = [threading.Thread(target=train, args=(Dense(), torch.randn(16, 32), 20)),
           threading.Thread(target=train, args=(Conv(), torch.randn(4, 3, 12, 12), 20))]
for w in workers:
    w.start()
for w in workers:
    w.join()
"""


def check_two_forward_threads(env, tmp):
    """Each model's backward rows hold only its own ops' backward functions, and each module has
    as many backward calls as forward calls, while two threads train two models at once."""
    out = profiled(env, tmp, "two_threads", TWO_THREADS, "the two threads' script")
    profile = load(out)
    own = {"Dense": ("aten::linear", "aten::relu"), "Conv": ("aten::conv2d", "aten::tanh", "aten::adaptive_avg_pool2d", "aten::flatten")}
    for p in profile["call_paths"]:
        steps = p["path"].split("/")
        model = steps[0].split(".")[0].split(" ")[0]
        if model not in own or not steps[0].endswith("(backward)"):
            continue
        # A backward function's region is named after its forward op: the other model's ops
        # must not appear under this model's backward regions.
        foreign = [s for s in steps[1:] if s.startswith(tuple(o for m, ops in own.items() if m != model for o in ops))]
        if foreign:
            fail(f"{steps[0]} holds another thread's op: {p['path']}")
    rows = {(layer["name"], layer["phase"]): layer for layer in profile["layers"]}
    for module in ("Dense", "Dense.fc1", "Dense.fc2", "Conv", "Conv.conv", "Conv.pool"):
        forward, backward = rows.get((module, "forward")), rows.get((module, "backward"))
        if forward is None or backward is None:
            fail(f"module {module}: forward row {forward is not None}, backward row {backward is not None}")
        if backward["time_ms"]["n"] != forward["time_ms"]["n"]:
            fail(f"{module}: {backward['time_ms']['n']} backward calls for {forward['time_ms']['n']} forward calls (two forward threads)")
    print("two forward threads: each model's backward rows hold its own ops, one backward call per forward call")


# A module whose forward raises every other call, caught inside the model (a fallback) and at
# the top (a retry): no forward hook runs after the exception, so the module's end never comes.
RAISES = """
import torch
from torch import nn

class Flaky(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        y = self.fc(x)
        if self.calls % 2 == 0:
            raise RuntimeError("flaky")
        return y

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.flaky = Flaky()
        self.after = nn.Linear(8, 4)

    def forward(self, x):
        try:
            x = self.flaky(x)
        except RuntimeError:
            pass
        return self.after(x)

class Top(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Flaky()

    def forward(self, x):
        return self.inner(x)

model, top, x = Model(), Top(), torch.randn(2, 8)
with torch.no_grad():
    for _ in range(6):
        model(x)
        try:
            top(x)
        except RuntimeError:
            pass
        nn.Linear(8, 2)(x)  # a model of its own, after the raise
"""


def check_raising_forward(env, tmp):
    """A module whose forward raised is not left open: the modules after it are not nested in
    it, and each module has as many rows' calls as it was called."""
    out = profiled(env, tmp, "raises", RAISES, "the raising script")
    profile = load(out)
    paths = [p["path"] for p in profile["call_paths"]]
    nested = [p for p in paths if "Model.flaky/Model.after" in p or "Top.inner/Linear" in p or "Top/Linear" in p or "Top.inner/Model" in p]
    if nested:
        fail(f"a module ran after a raise is nested in the module that raised: {nested[:5]}")
    rows = {layer["name"]: layer for layer in profile["layers"] if layer["phase"] == "forward"}
    for module, calls in (("Model", 6), ("Model.flaky", 6), ("Model.after", 6), ("Top", 6), ("Top.inner", 6), ("Linear", 6)):
        if module not in rows or rows[module]["time_ms"]["n"] != calls:
            fail(f"module {module}: {rows[module]['time_ms']['n'] if module in rows else 'no'} calls measured, expected {calls}")
    print("a raising forward: its module ends with the module around it or at its next call, nothing nested in it")


def check_threads(build_python, tmp):
    """The module's task-clock (perf, counting every thread of the process) covers the intra-op
    pool's threads: over its calls, more than 1.3x the calling thread's own CPU time (~2 on 2
    idle cores; counting the calling thread alone gives at most 1). Skipped, with the reason,
    where task-clock cannot be counted or one core is all."""
    if (os.cpu_count() or 1) < 2:
        print("note: one CPU: the threads' check is skipped")
        return
    script, own_file, out = os.path.join(tmp, "threads.py"), os.path.join(tmp, "own_ns"), os.path.join(tmp, "threads")
    with open(script, "w") as f:
        f.write(THREADS)
    env = dict(os.environ, PYTHONPATH=build_python, HWPROF_BACKEND="perf", HWPROF_EVENTS="task-clock")
    run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, script, own_file], env=env, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        fail(f"the threads' script exited {run.returncode}: {run.stderr[-2000:]}")
    with open(own_file) as f:
        own_ns = float(f.read())
    conv = [layer for layer in load(out)["layers"] if layer["name"] == "Conv2d" and layer["phase"] == "forward"]
    if not conv:
        fail("no Conv2d row in the threads' run")
    clock = conv[0]["counters"].get("task-clock", {})
    if clock.get("status") != "ok" or clock.get("value") is None:
        print(f"note: task-clock is not counted here ({clock.get('status')}: {clock.get('reason')}): the threads' check is skipped")
        return
    ratio = clock["value"] * conv[0]["time_ms"]["n"] / own_ns
    print(f"threads: Conv2d's task-clock is {ratio:.2f}x the calling thread's own CPU time (2 intra-op threads)")
    if ratio < 1.3:
        fail(f"Conv2d's task-clock is {ratio:.2f}x the calling thread's CPU time: the intra-op pool's thread is not counted")


def check_example(env, tmp):
    """examples/torch_train.py, a plain training script, under `python3 -m hwprof.torch`: each
    module has a forward and a backward row, the optimizer's step its own, and the loss (computed
    outside every module) a row of its own."""
    out = os.path.join(tmp, "example")
    run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, EXAMPLE, "--steps", "3"], env=env, capture_output=True, text=True,
                         timeout=300)
    if run.returncode != 0 or "mean step after the first" not in run.stdout:
        fail(f"examples/torch_train.py exited {run.returncode}: {run.stdout[-1000:]}{run.stderr[-2000:]}")
    rows = {(layer["name"], layer["phase"]): layer for layer in load(out)["layers"]}
    for module in ("SmallCnn", "SmallCnn.conv1", "SmallCnn.bn1", "SmallCnn.conv2", "SmallCnn.fc"):
        for phase in ("forward", "backward"):
            if (module, phase) not in rows or not rows[(module, phase)]["flops"]:
                fail(f"examples/torch_train.py: no {phase} row with FLOPs for {module}")
    if not any(phase == "optimizer" and name.startswith("Optimizer.step#SGD.step") for name, phase in rows):
        fail("examples/torch_train.py: no optimizer row")
    if not any(name.startswith("aten::cross_entropy_loss") and not rows[(name, phase)].get("nested_op") for name, phase in rows):
        fail("examples/torch_train.py: the loss, run outside every module, has no row of its own")


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
        rows = [layer for layer in profile["layers"] if layer["name"] == "aten::conv2d" and layer["phase"] == "forward"]
        if rows and [s["shape"] for s in rows[0].get("shapes", [])] != ["2x1x8x8, 4x1x3x3, 4"]:
            fail(f"conv2d's shapes {rows[0].get('shapes')}, expected its one call's: 2x1x8x8, 4x1x3x3, 4")
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
        total = lambda layer: layer["flops"] * layer["calls"]  # noqa: E731
        # One backward call per forward call: the module's backward functions run as one.
        for module in ("Net", "Net.conv1", "Net.fc"):
            if backward[module]["calls"] != by_name[module]["calls"]:
                fail(f"{module}: {backward[module]['calls']} backward calls for {by_name[module]['calls']} forward calls")
        # A module's backward work is that of the ops on its backward call paths (its ops'
        # backward, and the gradient accumulation of its parameters), each counted at one path.
        for module in ("Net", "Net.conv1", "Net.fc"):
            prefix = ("Net (backward)/" if module != "Net" else "") + module + " (backward)/"
            ops = sum(p.get("flops", 0) for p in profile["call_paths"] if p["path"].startswith(prefix))
            # Per call, a row's FLOPs are rounded to a whole number: over n calls, within n.
            if ops == 0 or abs(total(backward[module]) - ops) > backward[module]["calls"]:
                fail(f"{module}'s backward work {total(backward[module])} is not its backward ops' {ops}")
        # conv1's op's backward carries its op-table backward: the input needs no gradient,
        # so its weight and bias gradients, 2·MACs + n: the forward conv's FLOPs.
        conv_function = [layer for name, layer in backward.items() if name == "aten::conv2d"]
        if len(conv_function) != 1 or conv_function[0]["flops"] != expected:
            fail(f"conv1's backward function carries {[c['flops'] for c in conv_function]}, the op table {expected}")
        # The optimizer's step is its own phase; the ops run by no module are rows of their own.
        if not any(layer["phase"] == "optimizer" and layer["name"].startswith("Optimizer.step#SGD.step") for layer in profile["layers"]):
            fail("no optimizer row for Optimizer.step#SGD.step")
        # The block form writes its folder when the block ends.
        block_out = os.path.join(tmp, "block")
        run = subprocess.run(["/usr/bin/python3", "-c", BLOCK, build_python, block_out], env=env, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            fail(f"the block form exited {run.returncode}: {run.stderr[-2000:]}")
        block = load(block_out)
        linear = [layer for layer in block["layers"] if layer["name"] == "Linear"]
        if not linear:
            fail("the block's Linear module has no row")
        if linear[0]["calls"] != 3:
            fail(f"the block's Linear has {linear[0]['calls']} calls measured; 5 steps, 2 of warm-up forgotten, leave 3")
        if block.get("steps") != 3:
            fail(f"the block says {block.get('steps')} steps; 5 steps, 2 of warm-up forgotten, leave 3")
        check_example(env, tmp)
        check_upsample(env, tmp)
        check_recurrent_states(env, tmp)
        check_two_forward_threads(env, tmp)
        check_raising_forward(env, tmp)
        check_threads(build_python, tmp)
    print("ok: modules as rows with their ops' FLOPs, ops nested under them with exact FLOPs, exit status kept, block form written")


if __name__ == "__main__":
    main()
