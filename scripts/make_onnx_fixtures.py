#!/usr/bin/python3
"""Regenerates tests/fixtures/onnx/: small models exported with Debian's PyTorch, each with an
input (x.npy), PyTorch's output for it (y.npy) and its exact params and MACs (expected.json),
so that CI checks the ONNX import, the counts and `hwprof run` without PyTorch installed.

  lenet5        LeNet-5 (conv, tanh, avg pool, linear), 1x32x32
  tiny_vit      a 2-block ViT (patch conv, class token, position embedding, nn.MultiheadAttention,
                LayerNorm, GELU MLP), 3x16x16, width 16, 2 heads
  tiny_gpt      a 2-block GPT-2-style decoder (token embedding, position embedding, causal
                nn.MultiheadAttention, GELU tanh MLP, output projection tied to the token
                embedding), 8 tokens, width 16, 2 heads
  tiny_decoder  an encoder-decoder with Hardswish, a squeeze-and-excitation gate (Hardsigmoid,
                broadcast Mul), ConvTranspose2d (strided, grouped, dilated), Sub and Div
  tiny_vit_opset14, tiny_gpt_opset11
                the same models exported at older opsets (LayerNorm decomposed)
  hf_gpt        a 2-block GPT-2 written as Hugging Face writes it (fused c_attn split three
                ways, torch.where causal mask, gelu_new written out, tied head)
  tiny_upsample conv → F.interpolate nearest ×2 → conv → F.interpolate bilinear to a size
                (align_corners False), as a decoder upsamples: Resize nodes
  tiny_reduce   conv → sum over channels (keepdim) gating x → mean over the last axis → linear:
                ReduceSum (opset 13: axes an input) and ReduceMean (axes an attribute)
  tiny_seg      a segmentation head in miniature: a strided stem, dilated 3x3 convolutions (rates
                2, 3) side by side, image pooling upsampled back (bilinear from 1x1), LR-ASPP's
                sigmoid gate multiplied into the features, a classifier, and bilinear
                upsampling to the input's size (F.interpolate(size=x.shape[-2:]))
  tiny_shuffle  ShuffleNet v2's unit (x.chunk(2, dim=1): Slices with bounds computed from the
                shape, a branch, Concat, the channel shuffle's Reshape/Transpose/Reshape), then
                torch.split (Split), reflect and constant F.pad (Pad layers), x[:, [0, 2, 2, 5]]
                (Gather of an activation), expand (Expand), a stepped and a reversed slice,
                torch.roll (Slice + Concat), repeat (Tile), masked_fill and torch.where with
                constant masks (Where)
  tiny_rnn      a 2-layer LSTM, a bidirectional GRU and a linear (batch_first), 7 steps of 6
                features: LSTM and GRU nodes, Y_h read by a Gather
  tiny_video    a small video network (Conv3d, BatchNorm3d, ReLU, a padded ceil_mode MaxPool3d,
                a (2+1)-D block of (1,3,3) and (3,1,1) kernels as r2plus1d_18 has, a strided,
                grouped, dilated Conv3d, a padded AvgPool3d, AdaptiveAvgPool3d to 1x1x1, Linear),
                3x6x10x9 (channels, frames, height, width)
  tiny_rnn_state a 2-layer GRU given h0 and a bidirectional LSTM given (h0, c0), each computed
                from the input's first step (an encoder's state): initial_h / initial_c as the
                Transpose [1, 0, 2] of a batch-first tensor, sliced per layer
  tiny_video_decoder  a 3-D encoder-decoder: Conv3d down (stride 2), BatchNorm3d, ReLU, a
                ConvTranspose3d up with stride 2 and output_padding, a grouped, dilated
                ConvTranspose3d and a depthwise (1, 2, 2) one with stride (1, 2, 2), a Conv3d
                head; 2x5x7x6 (channels, frames, height, width)
  tiny_swin     torchvision's Swin Transformer in miniature (2x2 patches, width 16, depths 2 and 2,
                2 and 4 heads, 4x4 windows), 3x24x24: window partition (the batch folded into
                the windows axis), cyclic shift (Slice + Concat), the shifted-window mask built
                in the graph (ConstantOfShape, ScatterND, Equal, Where), the relative position
                bias, padding to whole windows (Pad with computed pads) and the unpad Slice,
                patch merging; opset 14 (LayerNorm written out)
  untrained_bn  a CNN with BatchNorm as PyTorch initialises it (equal initializers merged)
  partial       a small CNN with two ops hwprof does not map (InstanceNorm2d, LogSoftmax), for
                `summary`'s counting around them; expected.json gives what is counted

Run it from the repository root: scripts/make_onnx_fixtures.py
"""
import json
import math
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
    """GPT-2's layout (Radford et al. 2019; Hugging Face's GPT2LMHeadModel): token and position
    embeddings, pre-LayerNorm blocks with tanh GELU, a final LayerNorm, and the output
    projection tied to the token embedding. GPT2(vocab=50257, d=768, heads=12, tokens=1024,
    layers=12) is GPT-2 small: 124,439,808 parameters."""

    def __init__(self, vocab=50, d=16, heads=2, tokens=8, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Parameter(torch.zeros(1, tokens, d))
        self.h = nn.ModuleList([Block(d, heads, "tanh") for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2
        mask = torch.triu(torch.full((tokens, tokens), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe
        for block in self.h:
            x = block(x, self.mask)
        return self.lm_head(self.ln_f(x))


class HFAttention(nn.Module):
    """GPT-2's attention as Hugging Face's GPT2Attention writes it: one fused c_attn projection
    split three ways, heads by view/permute, scores divided by sqrt(head width), the causal mask
    applied with torch.where from a boolean buffer sliced to T, softmax, the c_proj projection."""

    def __init__(self, d, heads, positions):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        mask = torch.tril(torch.ones(positions, positions, dtype=torch.bool)).view(1, 1, positions, positions)
        self.register_buffer("bias", mask, persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = (y.view(b, t, self.heads, hd).permute(0, 2, 1, 3) for y in self.c_attn(x).split(d, dim=2))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        w = torch.where(self.bias[:, :, :t, :t], w, torch.tensor(torch.finfo(w.dtype).min))
        a = torch.matmul(w.softmax(dim=-1), v).permute(0, 2, 1, 3).reshape(b, t, d)
        return self.c_proj(a)


class HFBlock(nn.Module):
    def __init__(self, d, heads, positions):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = HFAttention(d, heads, positions)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        h = self.c_fc(self.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))  # gelu_new
        return x + self.c_proj(h)


class HFGPT(nn.Module):
    """A 2-block GPT-2 written as Hugging Face's GPT2LMHeadModel is: learned position embedding
    looked up by position ids, HFAttention, gelu_new written out, lm_head tied to wte."""

    def __init__(self, vocab=50, d=16, heads=2, positions=8):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(positions, d)
        self.h = nn.ModuleList([HFBlock(d, heads, positions) for _ in range(2)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(positions)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class TinyDecoder(nn.Module):
    """A small encoder-decoder with MobileNetV3's pieces: Hardswish, a squeeze-and-excitation gate
    (Hardsigmoid, x * s broadcast over H and W), a learned layer scale, transposed convolutions
    (stride 2 with output_padding, grouped), Sub and Div of two activations and of constants."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.act = nn.Hardswish()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(8, 4, 1)
        self.fc2 = nn.Conv2d(4, 8, 1)
        self.gate = nn.Hardsigmoid()
        self.up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.up2 = nn.ConvTranspose2d(4, 4, 3, padding=2, dilation=2, groups=2)
        self.gamma = nn.Parameter(torch.ones(8, 1, 1))  # a layer scale, as ConvNeXt's

    def forward(self, x):
        x = (x - 0.5) * 2.0  # constants: Sub and Mul by scalars
        h = self.act(self.conv1(x))
        h = h * self.gate(self.fc2(torch.relu(self.fc1(self.pool(h)))))
        h = h * self.gamma
        u = self.up(h)
        u = u - u.mean([2, 3], keepdim=True)  # ReduceMean over H and W
        return self.up2(u) / torch.sigmoid(u)


class TinyUpsample(nn.Module):
    """A decoder's upsampling: nearest by a scale factor, then bilinear to a size (PyTorch 1.13
    writes Resize asymmetric/floor with constant scales, and linear/half_pixel with sizes
    computed from Shape, Slice and Concat)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        x = nn.functional.interpolate(self.conv1(x), scale_factor=2, mode="nearest")
        return nn.functional.interpolate(self.conv2(x), size=(11, 13), mode="bilinear", align_corners=False)


class TinySeg(nn.Module):
    """Segmentation heads (DeepLabV3's ASPP, LR-ASPP's gate) in miniature: dilated convolutions
    with computed output sizes, a Resize of a 1x1 map and of the logits to the input's size,
    and a sigmoid gate broadcast into the features."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.rate2 = nn.Conv2d(8, 6, 3, padding=2, dilation=2)
        self.rate3 = nn.Conv2d(8, 6, 3, padding=3, dilation=3)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 12, 1))
        self.gate = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(12, 12, 1), nn.Sigmoid())
        self.classifier = nn.Conv2d(12, 4, 1)

    def forward(self, x):
        f = self.stem(x)
        a = torch.cat([self.rate2(f), self.rate3(f)], dim=1)
        a = a + nn.functional.interpolate(self.pool(f), size=f.shape[-2:], mode="bilinear", align_corners=False)
        a = a * self.gate(a)
        return nn.functional.interpolate(self.classifier(a), size=x.shape[-2:], mode="bilinear", align_corners=False)


class TinyReduce(nn.Module):
    """Reductions that are not global pooling: a channel sum (ReduceSum, its axes a constant
    input at opset 13) that gates the features, then a mean over the last axis (ReduceMean,
    its axes an attribute, keepdims 0)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 6, 3)

    def forward(self, x):
        x = self.conv(x)
        s = x.sum(dim=1, keepdim=True)
        m = (x * s).mean(dim=-1)
        return self.fc(m.flatten(1))


class TinyShuffle(nn.Module):
    """Data movement between per-sample axes: ShuffleNet v2's channel split and shuffle, and the
    other ops PyTorch 1.13 exports as Slice, Split, Pad, Gather, Expand and Tile (opset 14)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.branch = nn.Sequential(nn.Conv2d(4, 4, 1), nn.BatchNorm2d(4), nn.ReLU(),
                                    nn.Conv2d(4, 4, 3, padding=1, groups=4))
        self.fc = nn.Linear(4 * 4 * 18, 3)
        g = torch.Generator().manual_seed(6)
        self.register_buffer("fill_mask", torch.rand(4, 1, 18, generator=g) < 0.3)
        self.register_buffer("pick_mask", torch.rand(1, 4, 1, generator=g) < 0.5)

    def forward(self, x):
        x = self.conv(x)
        x1, x2 = x.chunk(2, dim=1)
        x = torch.cat((x1, self.branch(x2)), dim=1)
        n, c, h, w = x.shape
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)  # channel shuffle
        a, b, c3 = torch.split(x, [3, 3, 2], dim=1)
        x = torch.cat([c3, a, b], dim=1)
        x = nn.functional.pad(x, (1, 2, 0, 1), mode="reflect")
        x = nn.functional.pad(x, (0, 1, 2, 0), value=0.5)
        x = x[:, [0, 2, 2, 5]]
        s = x.mean(dim=1, keepdim=True)
        x = x * s.expand(-1, 4, -1, -1)
        x = x[:, :, 1:-1:2].flip(3)
        x = torch.roll(x, 1, dims=3).repeat(1, 1, 1, 2)
        x = x.masked_fill(self.fill_mask, -1.0)  # Where(mask, constant, x)
        x = torch.where(self.pick_mask, x, x * 0.5)  # Where of two activations
        return self.fc(x.flatten(1))


class TinyRNN(nn.Module):
    """Recurrent layers as PyTorch exports them with batch_first: a 2-layer LSTM (two LSTM nodes
    between a Transpose and a Squeeze + Transpose back), a bidirectional GRU over its output
    (Transpose [0, 2, 1, 3] + Reshape of Y), its last step beside the reverse direction's final
    state h_n[-1] (a Gather of Y_h), and a linear."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, batch_first=True)
        self.gru = nn.GRU(8, 5, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * 5 + 5, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y)
        return self.fc(torch.cat([z[:, -1], h[-1]], dim=1))


class TinyVideo(nn.Module):
    """The layers of torchvision's video ResNets (r3d_18, mc3_18, r2plus1d_18) and the 3-D pools,
    small. The BatchNorm3d running statistics are set apart from their defaults so that the
    fixture checks they are read."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(5)
        self.stem = nn.Sequential(nn.Conv3d(3, 4, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2), bias=False),
                                  nn.BatchNorm3d(4), nn.ReLU())
        self.pool = nn.MaxPool3d((2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 1), ceil_mode=True)
        # (2+1)-D: a spatial (1, 3, 3) convolution, then a temporal (3, 1, 1) one.
        self.spatial = nn.Sequential(nn.Conv3d(4, 6, (1, 3, 3), padding=(0, 1, 1), bias=False), nn.BatchNorm3d(6), nn.ReLU())
        self.temporal = nn.Sequential(nn.Conv3d(6, 8, (3, 1, 1), padding=(1, 0, 0), bias=False), nn.BatchNorm3d(8), nn.ReLU())
        self.grouped = nn.Conv3d(8, 8, 3, stride=(2, 1, 1), padding=(1, 2, 2), dilation=(1, 2, 2), groups=2)
        self.avg = nn.AvgPool3d((2, 2, 2), stride=(1, 2, 2), padding=(1, 1, 1))
        self.head = nn.AdaptiveAvgPool3d(1)
        self.fc = nn.Linear(8, 5)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm3d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = self.temporal(self.spatial(x))
        x = self.avg(torch.relu(self.grouped(x)))
        return self.fc(self.head(x).flatten(1))


class TinyRNNState(nn.Module):
    """Recurrent layers given initial states computed in the model, as an encoder's state is: a
    2-layer GRU given h0 = tanh(linear(x[:, 0])) in [L, N, H] (PyTorch writes the transpose(0, 1)
    of the batch-first [N, L, H] and a Slice per layer), then a bidirectional LSTM given h0 and
    c0 of its own, the GRU's h_n[-1] beside the LSTM's last step, and a linear."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(6, 8, num_layers=2, batch_first=True)
        self.h = nn.Linear(6, 2 * 8)
        self.lstm = nn.LSTM(8, 5, batch_first=True, bidirectional=True)
        self.lstm_h = nn.Linear(6, 2 * 5)
        self.lstm_c = nn.Linear(6, 2 * 5)
        self.fc = nn.Linear(8 + 2 * 5, 4)

    def forward(self, x):
        first = x[:, 0]
        h0 = torch.tanh(self.h(first)).view(-1, 2, 8).transpose(0, 1).contiguous()
        y, h = self.gru(x, h0)
        h1 = torch.tanh(self.lstm_h(first)).view(-1, 2, 5).transpose(0, 1).contiguous()
        c1 = self.lstm_c(first).view(-1, 2, 5).transpose(0, 1).contiguous()
        z, _ = self.lstm(y, (h1, c1))
        return self.fc(torch.cat([h[-1], z[:, -1]], dim=1))


class TinyVideoDecoder(nn.Module):
    """A 3-D encoder-decoder (a volumetric U-Net's or a video generator's upsampling path):
    nn.ConvTranspose3d strided with output_padding, grouped and dilated, and depthwise."""

    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv3d(2, 6, 3, stride=2, padding=1), nn.BatchNorm3d(6), nn.ReLU())
        self.up = nn.ConvTranspose3d(6, 4, 3, stride=2, padding=1, output_padding=(0, 1, 1))
        self.mix = nn.ConvTranspose3d(4, 6, (2, 3, 3), padding=(0, 2, 1), dilation=(1, 2, 1), groups=2)
        self.fine = nn.ConvTranspose3d(6, 6, (1, 2, 2), stride=(1, 2, 2), groups=6, bias=False)
        self.head = nn.Conv3d(6, 3, 1)

    def forward(self, x):
        x = self.up(self.down(x))
        x = self.fine(torch.relu(self.mix(torch.relu(x))))
        return self.head(x)


class Partial(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.norm = nn.InstanceNorm2d(4, affine=True)  # InstanceNormalization: not mapped
        self.fc = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        x = torch.relu(self.norm(self.conv1(x)))
        return torch.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)  # LogSoftmax: not mapped


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in model.named_parameters():
            t.copy_(torch.randn(t.shape, generator=g) * 0.2)


def export(name, model, x, dynamic=True, not_counted=None, opset=17, random_weights=True):
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    model.eval()
    if random_weights:
        randomize(model, 0)
    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, x, path, opset_version=opset, training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None)
    with torch.no_grad():
        y = model(x).numpy()
    np.save(os.path.join(folder, "x.npy"), x.numpy())
    np.save(os.path.join(folder, "y.npy"), y)
    expected = {"params": sum(p.numel() for p in model.parameters()), "macs": count_macs(model, x),
                "torch": torch.__version__, "note": "written by scripts/make_onnx_fixtures.py"}
    if not_counted:
        # The modules hwprof cannot map: summary counts the rest (their params are not counted).
        expected["not_counted"] = sorted(t for t, _ in not_counted)
        expected["counted_params"] = expected["params"] - sum(p.numel() for _, m in not_counted if m for p in m.parameters())
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")
    print(name, expected, os.path.getsize(path), "bytes")


def tiny_seg():
    torch.manual_seed(7)
    export("tiny_seg", TinySeg(), torch.randn(2, 3, 10, 12, generator=torch.Generator().manual_seed(7)), opset=14)


def tiny_upsample():
    # Its own generator: the fixture does not move when the others are added to or removed.
    torch.manual_seed(3)
    export("tiny_upsample", TinyUpsample(), torch.randn(2, 3, 6, 5, generator=torch.Generator().manual_seed(3)))


def tiny_reduce():
    torch.manual_seed(4)
    export("tiny_reduce", TinyReduce(), torch.randn(2, 3, 6, 5, generator=torch.Generator().manual_seed(4)))


def tiny_shuffle():
    torch.manual_seed(5)
    export("tiny_shuffle", TinyShuffle(), torch.randn(2, 3, 6, 5, generator=torch.Generator().manual_seed(5)), opset=14)


def tiny_rnn():
    torch.manual_seed(5)
    export("tiny_rnn", TinyRNN(), torch.randn(2, 7, 6, generator=torch.Generator().manual_seed(5)))


def tiny_video():
    torch.manual_seed(5)
    # Opset 14, as torchvision's video models are exported in docs/onnx.md.
    export("tiny_video", TinyVideo(), torch.randn(2, 3, 6, 10, 9, generator=torch.Generator().manual_seed(5)), opset=14)


def tiny_rnn_state():
    torch.manual_seed(6)
    export("tiny_rnn_state", TinyRNNState(), torch.randn(3, 7, 6, generator=torch.Generator().manual_seed(6)))


def tiny_video_decoder():
    torch.manual_seed(6)
    export("tiny_video_decoder", TinyVideoDecoder(), torch.randn(2, 2, 5, 7, 6, generator=torch.Generator().manual_seed(6)), opset=14)


def tiny_swin():
    from torchvision.models.swin_transformer import SwinTransformer
    torch.manual_seed(8)
    # 12x12 tokens in 4x4 windows (shifted by 2), then 6x6 padded to 8x8 after patch merging.
    model = SwinTransformer(patch_size=[2, 2], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                            stochastic_depth_prob=0.0, num_classes=5)
    export("tiny_swin", model, torch.randn(2, 3, 24, 24, generator=torch.Generator().manual_seed(8)), opset=14)


def main():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    export("lenet5", LeNet5(), torch.randn(2, 1, 32, 32, generator=g))
    export("tiny_vit", TinyViT(), torch.randn(2, 3, 16, 16, generator=g))
    export("tiny_gpt", TinyGPT(), torch.randint(0, 50, (2, 8), generator=g))
    export("tiny_decoder", TinyDecoder(), torch.randn(2, 3, 16, 16, generator=g))
    # Before opset 17 (torch 1.13 exports opset 14 by default) LayerNorm is written out as
    # ReduceMean, Sub, Pow, Sqrt and Div; before 13 Softmax flattens its input.
    export("tiny_vit_opset14", TinyViT(), torch.randn(2, 3, 16, 16, generator=g), opset=14)
    export("tiny_gpt_opset11", TinyGPT(), torch.randint(0, 50, (2, 8), generator=g), opset=11)
    partial = Partial()
    export("partial", partial, torch.randn(2, 1, 8, 8, generator=g),
           not_counted=[("InstanceNormalization", partial.norm), ("LogSoftmax", None)])
    export("hf_gpt", HFGPT(), torch.randint(0, 50, (2, 8), generator=g))
    # As PyTorch initialises it: every BatchNorm's γ, β, mean and var are ones and zeros, which
    # the exporter writes once and refers to by Identity nodes.
    torch.manual_seed(2)
    export("untrained_bn", nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 4, 3),
                                         nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(4 * 4 * 4, 3)),
           torch.randn(2, 1, 8, 8, generator=g), random_weights=False)
    tiny_upsample()
    tiny_reduce()
    tiny_shuffle()
    tiny_rnn()
    tiny_seg()
    tiny_video()
    tiny_rnn_state()
    tiny_video_decoder()
    tiny_swin()


if __name__ == "__main__":
    main()
