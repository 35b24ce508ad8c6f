#!/usr/bin/python3
"""Regenerates tests/fixtures/onnx/: small models exported with Debian's PyTorch, each with an
input (x.npy), PyTorch's output for it (y.npy) and its exact params and MACs (expected.json),
so that CI checks the ONNX import, the counts and `hwprof run` without PyTorch installed.

  lenet5        LeNet-5 (conv, tanh, avg pool, linear), 1x32x32
  tiny_vit      a 2-block ViT (patch conv, class token, position embedding, nn.MultiheadAttention,
                LayerNorm, GELU MLP), 3x16x16, width 16, 2 heads
  tiny_gpt      a 2-block GPT-2-style decoder (token embedding, position embedding, causal
                nn.MultiheadAttention, GELU tanh MLP), 8 tokens, width 16, 2 heads

Run it from the repository root: scripts/make_onnx_fixtures.py
"""
import json
import os

import numpy as np
import torch
from torch import nn

from onnx_torchvision_check import count_macs  # the same hook count as the torchvision check

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "onnx")


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.pool1 = nn.AvgPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.pool2 = nn.AvgPool2d(2)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool1(torch.tanh(self.conv1(x)))
        x = self.pool2(torch.tanh(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc3(torch.tanh(self.fc2(torch.tanh(self.fc1(x)))))


class Block(nn.Module):
    def __init__(self, d, heads, gelu="none"):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate=gelu), nn.Linear(4 * d, d))

    def forward(self, x, mask=None):
        h = self.ln_1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class TinyViT(nn.Module):
    def __init__(self, d=16, heads=2, patch=4, image=16, classes=10):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, d, patch, stride=patch)
        t = (image // patch) ** 2 + 1
        self.class_token = nn.Parameter(torch.zeros(1, 1, d))
        self.pos_embedding = nn.Parameter(torch.zeros(1, t, d))
        self.blocks = nn.Sequential(Block(d, heads), Block(d, heads))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        x = self.ln(self.blocks(x))
        return self.head(x[:, 0])


class TinyGPT(nn.Module):
    def __init__(self, vocab=50, d=16, heads=2, tokens=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Parameter(torch.zeros(1, tokens, d))
        self.h = nn.ModuleList([Block(d, heads, "tanh"), Block(d, heads, "tanh")])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab)
        mask = torch.triu(torch.full((tokens, tokens), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe
        for block in self.h:
            x = block(x, self.mask)
        return self.lm_head(self.ln_f(x))


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            t.copy_(torch.randn(t.shape, generator=g) * 0.2)


def export(name, model, x, dynamic=True):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    model.eval()
    randomize(model, 0)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None)
    with torch.no_grad():
        y = model(x).numpy()
    np.save(os.path.join(folder, "x.npy"), x.numpy())
    np.save(os.path.join(folder, "y.npy"), y)
    expected = {"params": sum(p.numel() for p in model.parameters()), "macs": count_macs(model, x),
                "torch": torch.__version__, "note": "written by scripts/make_onnx_fixtures.py"}
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")
    print(name, expected, os.path.getsize(path), "bytes")


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    export("lenet5", LeNet5(), torch.randn(2, 1, 32, 32, generator=g))
    export("tiny_vit", TinyViT(), torch.randn(2, 3, 16, 16, generator=g))
    export("tiny_gpt", TinyGPT(), torch.randint(0, 50, (2, 8), generator=g))


if __name__ == "__main__":
    main()
