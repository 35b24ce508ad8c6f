#!/usr/bin/env python3
"""PyTorch's forward latency for the models of bench/run-engine-bench.sh: the peer that
`hwprof bench` is compared with, on the same machine, in the same run, with the same threads.

  torch_peer.py resnet18   --batch 8 --threads 2          (torchvision's ResNet-18, 224x224)
  torch_peer.py gpt2_small --batch 1 --context 256 --threads 2

GPT-2 small is built from torch.nn modules with the structure of models/gpt2_small.json:
token and position embeddings, 12 pre-norm blocks (LayerNorm, causal nn.MultiheadAttention,
residual add, LayerNorm, Linear 768->3072, GELU(tanh), Linear 3072->768, residual add), a final
LayerNorm and an lm_head whose weight is the token embedding's. Evaluation mode under
torch.inference_mode(); inputs random (images N(0, 1), token ids uniform); median of the timed
iterations after the warm-ups. Prints one JSON object.
"""
import argparse
import json
import statistics
import time

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d, d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, mask):
        h = self.ln_1(x)
        x = self.attn(h, h, h, attn_mask=mask, need_weights=False)[0] + x
        return self.dropout(self.c_proj(self.act(self.c_fc(self.ln_2(x))))) + x


class Gpt2Small(nn.Module):
    def __init__(self, vocab=50257, positions=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as models/gpt2_small.json's tied_to

    def forward(self, ids):
        t = ids.shape[1]
        # True above the diagonal: key j > query i is masked, as hwprof's causal attention.
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        x = self.drop(self.wte(ids) + self.wpe(torch.arange(t)))
        for block in self.h:
            x = block(x, mask)
        return self.lm_head(self.ln_f(x))


def build(args):
    torch.manual_seed(args.seed)
    if args.model == "resnet18":
        import torchvision

        model = torchvision.models.resnet18()
        x = torch.randn(args.batch, 3, args.image, args.image)
    elif args.model == "gpt2_small":
        model = Gpt2Small()
        x = torch.randint(0, 50257, (args.batch, args.context))
    else:
        raise SystemExit(f"torch_peer.py: unknown model {args.model!r} (resnet18, gpt2_small)")
    return model.eval(), x


def blas_description():
    """What PyTorch's dense layers run on: convolutions on its own oneDNN (MKL-DNN), which picks
    its ISA itself; linear layers on the system BLAS (libblas.so.3, OpenBLAS on Debian)."""
    import ctypes
    try:
        corename = ctypes.CDLL("libblas.so.3").openblas_get_corename
        corename.restype = ctypes.c_char_p
        core = f"OpenBLAS core {corename().decode()}"
    except (OSError, AttributeError):
        core = "a BLAS that is not OpenBLAS"
    return f"convolutions on oneDNN (mkldnn available: {torch.backends.mkldnn.is_available()}), linear layers on {core}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=["resnet18", "gpt2_small"])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--image", type=int, default=224)
    p.add_argument("--context", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    model, x = build(args)
    params = sum(t.numel() for t in model.parameters())  # a tied weight once
    times = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            model(x)
        for _ in range(args.iterations):
            start = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    n = len(times)

    def percentile(q):  # numpy's default (linear), as hwprof bench
        h = (n - 1) * q / 100.0
        lo = int(h)
        hi = min(lo + 1, n - 1)
        return times[lo] + (h - lo) * (times[hi] - times[lo])

    print(json.dumps({
        "blas": blas_description(),
        "model": args.model,
        "framework": f"torch {torch.__version__}",
        "batch": args.batch,
        "threads": torch.get_num_threads(),
        "input_shape": list(x.shape[1:]),
        "parameters": params,
        "latency_ms": {"median": percentile(50), "mean": statistics.fmean(times), "min": times[0], "max": times[-1],
                       "p95": percentile(95), "n": n},
        "latency_source": "measured: wall time (time.perf_counter) of each iteration after the warm-up",
    }))


if __name__ == "__main__":
    main()
