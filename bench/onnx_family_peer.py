#!/usr/bin/python3
"""hwprof's engine against PyTorch on one example model per family of ONNX exports, on the same
machine, in the same run, with the same threads (docs/onnx.md, "What was checked").

For each family the model is built with torch.nn / torchvision (random weights, seed 0, evaluation
mode), exported to ONNX (opset 14) into a temporary folder, and then:

- `hwprof run` of the file on the same input: its largest difference from PyTorch's output divided
  by PyTorch's largest magnitude (docs/onnx.md's measure);
- PyTorch's forward latency (under torch.inference_mode(), torch.set_num_threads) and `hwprof bench`'s,
  alternating for --rounds rounds, each the median of --iterations after --warmup.

Printed per family: every round's medians, the ratio hwprof/PyTorch of the medians over the rounds,
of the best rounds and of the fastest single iterations (on a shared machine another process's
burst lands on some rounds; the fastest are nearest a quiet machine's), and the load average.

  bench/onnx_family_peer.py [--hwprof build/release/bin/hwprof] [--families video,shuffle,...]
                            [--threads 2] [--rounds 3] [--iterations 10] [--warmup 3] [--json FILE]
                            [--native-blas]

OpenBLAS's kernel is the one OPENBLAS_CORETYPE names where it is set (Haswell: AVX2, on a CPU
that may have AVX-512), for hwprof's GEMMs and PyTorch's matrix products alike; PyTorch's
convolutions run oneDNN, which it does not restrict. --native-blas runs both without it (the
script restarts itself without the variable, before OpenBLAS is loaded). Every result says which
kernel ran ("openblas_coretype").

Families (goal: hwprof <= 1.5x PyTorch): """
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

# Before OpenBLAS is loaded (torch and numpy load it): OPENBLAS_CORETYPE is read once, there.
if "--native-blas" in sys.argv[1:] and "OPENBLAS_CORETYPE" in os.environ:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import numpy as np
import torch
from torch import nn


class Recurrent(nn.Module):
    """A 2-layer batch_first LSTM or GRU and a linear head on the last step."""

    def __init__(self, cell, inputs=128, hidden=256, layers=2):
        super().__init__()
        self.rnn = cell(inputs, hidden, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(hidden, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class HandAttention(nn.Module):
    """Attention written out with torch.matmul (its scale is not 1/sqrt(d), so it is not
    hwprof's attention layer but matmul, softmax and matmul), as models that bring their own
    attention variant do."""

    def __init__(self, d=256, heads=4, tokens=196):
        super().__init__()
        self.heads, self.tokens = heads, tokens
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.scale = 0.1

    def forward(self, x):
        n, t, d = x.shape
        q, k, v = (f(x).view(n, t, self.heads, d // self.heads).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.proj((a @ v).transpose(1, 2).reshape(n, t, d))


class Decoder3d(nn.Module):
    """A volumetric decoder's upsampling path: two strided nn.ConvTranspose3d doubling D, H, W."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose3d(64, 32, 3, stride=2, padding=1, output_padding=1)
        self.up2 = nn.ConvTranspose3d(32, 16, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.up2(torch.relu(self.up1(x)))


class M5(nn.Module):
    """An audio classifier over raw 16 kHz waveforms (Dai et al. 2017's M5, as PyTorch's speech
    command tutorial writes it): four Conv1d + BatchNorm1d + MaxPool1d stages, global average."""

    def __init__(self, channels=128, classes=35):
        super().__init__()
        c = channels
        layers = []
        for i, (cin, cout, k, s) in enumerate([(1, c, 80, 4), (c, c, 3, 1), (c, 2 * c, 3, 1), (2 * c, 4 * c, 3, 1)]):
            layers += [nn.Conv1d(cin, cout, k, stride=s), nn.BatchNorm1d(cout), nn.ReLU(), nn.MaxPool1d(4)]
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.fc = nn.Linear(4 * c, classes)

    def forward(self, x):
        return self.fc(self.features(x))


class DilatedPool(nn.Module):
    """Dilated max pooling alone (nn.MaxPool2d(3, stride=1, padding=1, dilation=2), as context
    aggregation modules use it), after a ReLU: the kernel's own time, no GEMM beside it."""

    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=1, padding=1, dilation=2)

    def forward(self, x):
        return self.pool(torch.relu(x))


def torchvision_model(name, **kwargs):
    import torchvision
    module = torchvision.models
    for part in name.split(".")[:-1]:
        module = getattr(module, part)
    return getattr(module, name.split(".")[-1])(weights=None, **kwargs)


# name: (what, model factory, input shape with the batch)
FAMILIES = {
    "recurrent": ("2-layer nn.LSTM 128->256, 64 steps, batch 8", lambda: Recurrent(nn.LSTM), (8, 64, 128)),
    "gru": ("2-layer nn.GRU 128->256, 64 steps, batch 8", lambda: Recurrent(nn.GRU), (8, 64, 128)),
    "video": ("torchvision r3d_18, 8 frames of 112x112, batch 1", lambda: torchvision_model("video.r3d_18"), (1, 3, 8, 112, 112)),
    "shuffle": ("torchvision shufflenet_v2_x1_0, 224x224, batch 8", lambda: torchvision_model("shufflenet_v2_x1_0"), (8, 3, 224, 224)),
    "segmentation": ("torchvision lraspp_mobilenet_v3_large, 224x224, batch 1",
                     lambda: torchvision_model("segmentation.lraspp_mobilenet_v3_large", weights_backbone=None), (1, 3, 224, 224)),
    "dilated": ("torchvision deeplabv3_mobilenet_v3_large (dilated convolutions, Resize), 224x224, batch 1",
                lambda: torchvision_model("segmentation.deeplabv3_mobilenet_v3_large", weights_backbone=None, aux_loss=False),
                (1, 3, 224, 224)),
    "decoder3d": ("a 3-D decoder: ConvTranspose3d 64->32 and 32->16 (kernel 3, stride 2, output_padding 1), ReLU, "
                  "from 64x4x14x14, batch 1", lambda: Decoder3d(), (1, 64, 4, 14, 14)),
    "matmul": ("attention written with torch.matmul, 196 tokens of 256, 4 heads, batch 8", HandAttention, (8, 196, 256)),
    "windowed": ("torchvision swin_t (shifted windows, relative position bias), 224x224, batch 1", lambda: torchvision_model("swin_t"),
                 (1, 3, 224, 224)),
    "audio": ("M5 over 1 s of 16 kHz audio (Conv1d, BatchNorm1d, MaxPool1d), batch 8", M5, (8, 1, 16000)),
    "dilated_pool": ("ReLU and MaxPool2d(3, stride 1, padding 1, dilation 2), 64x56x56, batch 8", DilatedPool, (8, 64, 56, 56)),
}
__doc__ += ", ".join(f"{name} ({what})" for name, (what, _, _) in FAMILIES.items()) + "."


class Output(nn.Module):
    """torchvision's segmentation models return a dict: its 'out'."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        y = self.model(x)
        return y["out"] if isinstance(y, dict) else y


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


def measure(family, a, tmp):
    what, factory, shape = FAMILIES[family]
    torch.manual_seed(0)
    model = Output(factory()).eval()
    x = torch.randn(*shape)
    path = os.path.join(tmp, family + ".onnx")
    torch.onnx.export(model, x, path, opset_version=14, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    with torch.no_grad():
        want = model(x).numpy()
    np.save(os.path.join(tmp, family + "_x.npy"), x.numpy())
    out = os.path.join(tmp, family + "_y.npy")
    run = subprocess.run([a.hwprof, "run", path, "-i", os.path.join(tmp, family + "_x.npy"), "-o", out, "-t", str(a.threads)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return {"family": family, "model": what, "error": run.stderr.strip()[-2000:]}
    difference = float(np.abs(np.load(out) - want).max() / np.abs(want).max())
    peer, ours, peer_fastest, ours_fastest = [], [], [], []
    for _ in range(a.rounds):
        median, fastest = torch_latency(model, x, a.threads, a.warmup, a.iterations)
        peer.append(median)
        peer_fastest.append(fastest)
        report = subprocess.run([a.hwprof, "bench", path, "--batch", str(shape[0]), "--input-shape", ",".join(map(str, shape[1:])),
                                 "--threads", str(a.threads), "--warmup", str(a.warmup), "-n", str(a.iterations), "-f", "json"],
                                check=True, capture_output=True, text=True).stdout
        latency = json.loads(report)["latency_ms"]
        ours.append(latency["median"])
        ours_fastest.append(latency["min"])
    return {"family": family, "model": what, "threads": a.threads, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "run_vs_pytorch": difference,
            "pytorch_ms": [round(v, 3) for v in peer], "hwprof_ms": [round(v, 3) for v in ours],
            "ratio_of_medians": round(statistics.median(ours) / statistics.median(peer), 3),
            "ratio_of_best": round(min(ours) / min(peer), 3),
            "ratio_of_fastest_iterations": round(min(ours_fastest) / min(peer_fastest), 3), "load": round(os.getloadavg()[0], 2)}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hwprof", default="build/release/bin/hwprof")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--native-blas", action="store_true", help="run without OPENBLAS_CORETYPE (OpenBLAS picks its kernel for the CPU)")
    a = p.parse_args()
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print(f"OpenBLAS kernel: {'OPENBLAS_CORETYPE=' + coretype + ' (held to it)' if coretype else 'chosen by OpenBLAS for this CPU'}", flush=True)
    unknown = [f for f in a.families.split(",") if f not in FAMILIES]
    if unknown:
        sys.exit(f"onnx_family_peer.py: unknown families {unknown}; known: {', '.join(FAMILIES)}")
    warnings.filterwarnings("ignore")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for family in a.families.split(","):
            r = measure(family, a, tmp)
            results.append(r)
            print(json.dumps(r), flush=True)
    print(f"\n{'family':<13} {'run vs PyTorch':>14} {'PyTorch ms':>11} {'hwprof ms':>10} {'ratio':>6} {'best':>6} {'fastest':>8}")
    for r in results:
        if "error" in r:
            print(f"{r['family']:<13} does not run: {r['error'].splitlines()[0] if r['error'] else '?'}")
            continue
        print(f"{r['family']:<13} {r['run_vs_pytorch']:>14.1e} {statistics.median(r['pytorch_ms']):>11.2f} {statistics.median(r['hwprof_ms']):>10.2f} "
              f"{r['ratio_of_medians']:>6.2f} {r['ratio_of_best']:>6.2f} {r['ratio_of_fastest_iterations']:>8.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
