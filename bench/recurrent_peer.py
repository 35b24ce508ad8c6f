#!/usr/bin/python3
"""hwprof's lstm and gru layers against PyTorch on the same machine, in the same run, with the
same threads: a recurrent example model (by default a 2-layer nn.LSTM, hidden 256, input 128,
batch_first, and a Linear on the last step; --gru for nn.GRU) exported to ONNX, then

- PyTorch's forward latency: evaluation mode under torch.inference_mode(), torch.set_num_threads,
  the median of the timed iterations after the warm-ups;
- `hwprof run` of the same file on the same input: its largest difference from PyTorch's output
  divided by PyTorch's largest magnitude (docs/onnx.md's measure);
- `hwprof bench` of the file: its median latency, and the ratio to PyTorch's.

The two alternate for --rounds rounds (PyTorch, then hwprof, each its median of --iterations
after --warmup); printed: every round's medians, and the ratio of the medians over the rounds
and of the best rounds, and of the fastest single iterations (on a shared machine another
process's burst lands on some rounds and iterations; the fastest are nearest a quiet machine's).

  bench/recurrent_peer.py [--hwprof build/release/bin/hwprof] [--gru] [--batch 8] [--steps 64]
                          [--input 128] [--hidden 256] [--layers 2] [--threads 2] [--rounds 3]

Needs Debian's PyTorch (/usr/bin/python3); prints one JSON object.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import warnings

import numpy as np
import torch
from torch import nn


class Recurrent(nn.Module):
    def __init__(self, cell, inputs, hidden, layers):
        super().__init__()
        self.rnn = cell(inputs, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def torch_latency(model, x, threads, warmup, iterations):
    torch.set_num_threads(threads)
    times = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        for _ in range(iterations):
            start = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hwprof", default="build/release/bin/hwprof")
    p.add_argument("--gru", action="store_true")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--input", type=int, default=128)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    model = Recurrent(nn.GRU if a.gru else nn.LSTM, a.input, a.hidden, a.layers).eval()
    x = torch.randn(a.batch, a.steps, a.input)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "recurrent.onnx")
        torch.onnx.export(model, x, path, opset_version=14, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        with torch.no_grad():
            want = model(x).numpy()
        np.save(os.path.join(tmp, "x.npy"), x.numpy())
        out = os.path.join(tmp, "y.npy")
        subprocess.run([a.hwprof, "run", path, "-i", os.path.join(tmp, "x.npy"), "-o", out, "-t", str(a.threads)],
                       check=True, stdout=subprocess.DEVNULL)
        got = np.load(out)
        difference = float(np.abs(got - want).max() / np.abs(want).max())
        peer, ours, peer_fastest, ours_fastest = [], [], [], []
        for _ in range(a.rounds):
            median, fastest = torch_latency(model, x, a.threads, a.warmup, a.iterations)
            peer.append(median)
            peer_fastest.append(fastest)
            report = subprocess.run([a.hwprof, "bench", path, "--batch", str(a.batch), "--threads", str(a.threads), "--warmup",
                                     str(a.warmup), "-n", str(a.iterations), "-f", "json"],
                                    check=True, capture_output=True, text=True).stdout
            ours.append(json.loads(report)["latency_ms"]["median"])
            ours_fastest.append(json.loads(report)["latency_ms"]["min"])
    print(json.dumps({"model": ("gru" if a.gru else "lstm"), "batch": a.batch, "steps": a.steps, "input": a.input,
                      "hidden": a.hidden, "layers": a.layers, "threads": a.threads, "run_vs_pytorch": difference,
                      "pytorch_ms": [round(v, 3) for v in peer], "hwprof_ms": [round(v, 3) for v in ours],
                      "ratio_of_medians": round(statistics.median(ours) / statistics.median(peer), 3),
                      "ratio_of_best": round(min(ours) / min(peer), 3),
                      "ratio_of_fastest_iterations": round(min(ours_fastest) / min(peer_fastest), 3),
                      "fastest_ms": [round(min(peer_fastest), 3), round(min(ours_fastest), 3)], "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
