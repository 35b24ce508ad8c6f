#!/usr/bin/env python3
"""hwprof.torch across ranks: torch.distributed (gloo) launched by torchrun, two ranks of a
DistributedDataParallel model, each under `python3 -m hwprof.torch -o DIR`, then `hwprof merge
DIR` (docs/torch.md, "Ranks and collectives").

Checks: each rank writes its own folder (DIR/rank-00000, DIR/rank-00001) with a profile of kind
torch naming its rank and the world size; each has the collectives as rows of their own (gloo's
`gloo:all_reduce` work and the `c10d::allreduce_` call DDP makes in backward); the model's
modules have forward and backward rows; `hwprof merge DIR` merges the two, naming a straggler
rank for every region both ranks have, and a backward row's times are its own, not its forward
row's (they share a name). No time is asserted: which rank is slower is printed, not checked.

Debian 12's torchrun (PyTorch 1.13.1 on Python 3.11) fails on its own default `--redirects 0
--tee 0` ('NoneType' object has no attribute 'get': Std.from_str("0") is None there); the run
passes `--redirects 1 --tee 1`, which torchrun reads correctly.

Usage: ranks_check.py HWPROF_CLI BUILD_PYTHON_DIR
Exit 77 (skipped) where PyTorch, torchrun or gloo is missing.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

SCRIPT = """
import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32 * (1 + 3 * rank), 64)  # rank 1 has four times the work
for _ in range(4):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
t = torch.ones(1000)
dist.all_reduce(t)
dist.destroy_process_group()
"""


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    hwprof, build_python = sys.argv[1], os.path.abspath(sys.argv[2])
    probe = subprocess.run(["/usr/bin/python3", "-c", "import torch.distributed as d; assert d.is_available() and d.is_gloo_available()"],
                           capture_output=True)
    torchrun = shutil.which("torchrun")
    if probe.returncode != 0 or torchrun is None:
        print("skipped: PyTorch with torch.distributed (gloo) and torchrun are needed (python3-torch: scripts/install-deps.sh)")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "ddp.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        out = os.path.join(tmp, "out")
        env = dict(os.environ, PYTHONPATH=build_python, HWPROF_BACKEND="timer", OMP_NUM_THREADS="1")
        command = [torchrun, "--nproc_per_node=2", f"--master_port={free_port()}", "--redirects", "1", "--tee", "1",
                   "--log_dir", os.path.join(tmp, "logs"), "-m", "hwprof.torch", "-o", out, script]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp)
        if run.returncode != 0:
            fail(f"torchrun exited {run.returncode}: {run.stdout[-2000:]}{run.stderr[-3000:]}")
        for rank in (0, 1):
            folder = os.path.join(out, f"rank-{rank:05d}")
            path = os.path.join(folder, "profile.json")
            if not os.path.isfile(path):
                fail(f"rank {rank} wrote no {path} (found: {sorted(os.listdir(out)) if os.path.isdir(out) else 'nothing'})")
            with open(path) as f:
                p = json.load(f)
            if p.get("kind") != "torch" or p.get("rank", {}).get("rank") != rank or p.get("rank", {}).get("size") != 2:
                fail(f"rank {rank}: kind {p.get('kind')!r}, rank {p.get('rank')}")
            names = {(layer["name"], layer["phase"]) for layer in p["layers"]}
            if not any(name.startswith("gloo:all_reduce") for name, _ in names):
                fail(f"rank {rank}: no gloo:all_reduce row: {sorted(names)[:30]}")
            if not any(name.startswith("c10d::allreduce_") and phase == "backward" for name, phase in names):
                fail(f"rank {rank}: no c10d::allreduce_ row in backward (DDP's gradient all-reduce): {sorted(names)[:30]}")
            for phase in ("forward", "backward"):
                if ("DistributedDataParallel.module.0", phase) not in names:
                    fail(f"rank {rank}: no {phase} row for DistributedDataParallel.module.0")
        merged = subprocess.run([hwprof, "merge", out, "--format", "json"], capture_output=True, text=True, timeout=120)
        if merged.returncode != 0:
            fail(f"hwprof merge exited {merged.returncode}: {merged.stderr[-2000:]}")
        m = json.loads(merged.stdout)
        if len(m["ranks"]) != 2:
            fail(f"the merge has {len(m['ranks'])} ranks")
        regions = {r["name"]: r for r in m["regions"]}
        for name in ("DistributedDataParallel", "DistributedDataParallel (backward)", "gloo:all_reduce"):
            if name not in regions or regions[name]["straggler_rank"] not in (0, 1):
                fail(f"the merge names no straggler for {name}: {regions.get(name)}")
        forward, backward = regions["DistributedDataParallel"], regions["DistributedDataParallel (backward)"]
        if forward["rank_ms"] == backward["rank_ms"]:
            fail(f"the backward row has its forward row's times {forward['rank_ms']}: looked up by the shared name")
        print(f"ok: 2 ranks merged; straggler of the model's forward: rank {forward['straggler_rank']} "
              f"({', '.join(f'{ms:.2f}' for ms in forward['rank_ms'])} ms), of gloo:all_reduce: rank {regions['gloo:all_reduce']['straggler_rank']}")


if __name__ == "__main__":
    main()
