#!/usr/bin/python3
"""Exports torchvision models to ONNX with Debian's PyTorch and checks hwprof against them.

For each model: params from the ONNX file (hwprof summary) against sum(p.numel()) and the
published torchvision figure; MACs against an exact count taken with forward hooks in PyTorch
(hwprof's convention, docs/cost.md, "Counting convention": conv2d, linear and attention, biases excluded) and the
published torchvision "GFLOPS" (which count multiply-accumulates, rounded to 2 decimals); and
the output of `hwprof run` on a random batch against PyTorch's, max |hwprof - torch| /
max |torch| <= 1e-4.

Every parameter and buffer is set to distinct random values first, so that the exporter cannot
merge equal initializers (an untrained model's are often all ones or zeros), and the model is
exported with training=TrainingMode.PRESERVE in eval mode, so that BatchNorm stays a node of its
own rather than being folded into the convolution before it.

Usage: scripts/onnx_torchvision_check.py --hwprof build/ci/bin/hwprof [--models resnet18,...]
Exit status: 0 all checks hold, 1 a check failed, 77 PyTorch or torchvision is not installed
(ctest shows the test as skipped).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: {e.name} is not installed (apt-get install python3-torch python3-torchvision)")
    sys.exit(77)

# torchvision's model documentation (the *_Weights enums' meta: num_params and GFLOPS).
PUBLISHED = {
    "resnet18": (11_689_512, 1.81),
    "resnet50": (25_557_032, 4.09),
    "mobilenet_v2": (3_504_872, 0.30),
    "vgg16": (138_357_544, 15.47),
    "alexnet": (61_100_840, 0.71),
    "densenet121": (7_978_856, 2.83),
    "squeezenet1_1": (1_235_496, 0.35),
    "vit_b_16": (86_567_656, 17.56),
    "mobilenet_v3_small": (2_542_856, 0.06),
    "mobilenet_v3_large": (5_483_032, 0.22),
    "efficientnet_b0": (5_288_548, 0.39),
    "convnext_tiny": (28_589_128, 4.46),
    "mnasnet0_5": (2_218_512, 0.10),
    "efficientnet_v2_s": (21_458_488, 8.37),
    "regnet_y_400mf": (4_344_144, 0.40),
    "resnext50_32x4d": (25_028_904, 4.23),
    "wide_resnet50_2": (68_883_240, 11.40),
    "shufflenet_v2_x0_5": (1_366_792, 0.04),
    "shufflenet_v2_x1_0": (2_278_604, 0.14),
    "swin_t": (28_288_354, 4.49),
    # Segmentation (torchvision.models.segmentation; 0.14's weights record no GFLOPS). The published
    # parameters of FCN and DeepLabV3 include the auxiliary classifier, which is built here without
    # (aux_loss=False: the export has only the "out" head), so only LR-ASPP's figure applies.
    "lraspp_mobilenet_v3_large": (3_221_538, None),
    "deeplabv3_mobilenet_v3_large": (None, None),
    "fcn_resnet50": (None, None),
    "deeplabv3_resnet50": (None, None),
    # The video ResNets (torchvision.models.video; their KINETICS400_V1 weights' documentation):
    # GFLOPS counted on 16 frames of 112x112, the input VIDEO_FRAMES gives them here.
    "r3d_18": (33_371_472, 40.70),
    "mc3_18": (11_695_440, 43.34),
    "r2plus1d_18": (31_505_325, 40.52),
    # GPT-2 small (Radford et al. 2019; Hugging Face's gpt2 card: 124,439,808 parameters with the
    # output projection tied to the token embedding), 1024 tokens; no published MAC figure.
    "gpt2_small": (124_439_808, None),
    # Recurrent: a 2-layer batch_first nn.LSTM / nn.GRU, 128 -> 256, 64 steps, a linear on the last
    # step (bench/onnx_family_peer.py's); nothing published.
    "lstm_2x256": (None, None),
    "gru_2x256": (None, None),
    # An audio classifier over raw waveforms (M5-like: Conv1d, BatchNorm1d, MaxPool1d) with a
    # transposed, grouped and dilated 1-D convolution, average and adaptive pooling, and an MLP head
    # with a BatchNorm1d over [N, C]; nothing published.
    "audio_1d": (None, None),
}
# The image size a model's published GFLOPS is taken at (its evaluation size), when not 224.
IMAGE_SIZE = {"efficientnet_v2_s": 384}
# Video models take [N, 3, frames, 112, 112]: the frames their published GFLOPS are counted on.
VIDEO_FRAMES = {"r3d_18": 16, "mc3_18": 16, "r2plus1d_18": 16}
DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0",
                  "vgg16", "alexnet", "densenet121", "squeezenet1_1", "vit_b_16", "convnext_tiny", "mnasnet0_5",
                  "regnet_y_400mf", "resnext50_32x4d", "wide_resnet50_2", "efficientnet_v2_s",
                  "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "r3d_18", "mc3_18", "r2plus1d_18", "swin_t"]
TOLERANCE = 1e-4


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.dtype.is_floating_point or name.endswith("mask"):  # a causal mask stays one
                continue
            if name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.05)
        if hasattr(model, "rescale"):  # a model whose signal the small random values would not carry
            model.rescale(g)


def count_macs(model, x):
    """Exact per-sample MACs by hwprof's convention (docs/cost.md, "Counting convention"), from forward hooks."""
    total = [0]

    def conv(m, inp, out):  # Conv1d, 2d and 3d: every output element, in/groups·kernel volume
        total[0] += out.numel() // out.shape[0] * (m.in_channels // m.groups) * math.prod(m.kernel_size)

    def conv_transpose(m, inp, out):
        # ConvTranspose1d, 2d and 3d: every input element meets out_channels/groups·kernel volume
        # weights (fvcore's count)
        x = inp[0]
        total[0] += x.numel() // x.shape[0] * (m.out_channels // m.groups) * math.prod(m.kernel_size)

    def linear(m, inp, out):
        total[0] += out.numel() // out.shape[0] * m.in_features

    def mha(m, inp, out):
        a = out[0]  # the attention output has the query's shape (inputs may come as keywords)
        t, d = (a.shape[1], a.shape[2]) if m.batch_first else (a.shape[0], a.shape[2])
        # in-projection (3·T·D·D), Q·Kᵀ and A·V (2·T·T·D); out_proj is an nn.Linear hooked on its own
        # only when called as a module, which MultiheadAttention does not do.
        total[0] += 3 * t * d * d + 2 * t * t * d + t * d * d

    def rnn(m, inp, out):
        # nn.LSTM / nn.GRU: W_ih·x and W_hh·h every step, each layer and direction (ptflops'
        # rnn_flops products; the gate arithmetic is FLOPs, not MACs): the weights' sizes times T.
        x = inp[0]
        steps = x.shape[1] if m.batch_first else x.shape[0]
        for name, w in m.named_parameters():
            if name.startswith("weight_"):
                total[0] += steps * w.numel()

    def hf_attention(m, inp, out):
        t, d = out.shape[1], out.shape[2]  # Q·Kᵀ and A·V (2·T·T·D); its projections are nn.Linear, hooked
        total[0] += 2 * t * t * d

    def swin_attention(m, inp, out):
        # torchvision's ShiftedWindowAttention on [N, H, W, C]: H and W padded to whole windows, then
        # per token the qkv (3·C·C) and proj (C·C) products (F.linear of the module's weights, which
        # no nn.Linear hook sees), and per window Q·Kᵀ and A·V (2·n·n·C for n tokens a window).
        _, h, w, c = inp[0].shape
        wh, ww = m.window_size
        tokens = -(-h // wh) * wh * (-(-w // ww) * ww)
        total[0] += tokens * 4 * c * c + 2 * tokens * wh * ww * c

    hooks = []
    for m in model.modules():
        if type(m).__name__ == "ShiftedWindowAttention":
            hooks.append(m.register_forward_hook(swin_attention))
        if type(m).__name__ == "HFAttention":  # scripts/make_onnx_fixtures.py's, as Hugging Face writes GPT-2's
            hooks.append(m.register_forward_hook(hf_attention))
        if isinstance(m, (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)):
            hooks.append(m.register_forward_hook(conv_transpose))
        elif isinstance(m, torch.nn.Linear) and not isinstance(m, torch.nn.modules.linear.NonDynamicallyQuantizableLinear):
            hooks.append(m.register_forward_hook(linear))
        elif isinstance(m, torch.nn.MultiheadAttention):
            hooks.append(m.register_forward_hook(mha))
        elif isinstance(m, (torch.nn.LSTM, torch.nn.GRU)):
            hooks.append(m.register_forward_hook(rnn))
    with torch.no_grad():
        model(x[:1])
    for h in hooks:
        h.remove()
    return total[0]


class SegmentationOutput(torch.nn.Module):
    """torchvision's segmentation models return a dict: its "out", the per-pixel classes."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class Recurrent(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(128, 256, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc(self.rnn(x)[0][:, -1])


class Audio1d(torch.nn.Module):
    """A small waveform classifier over [N, 1, 4000] (scripts/onnx_torchvision_check.py's audio_1d)."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.features = nn.Sequential(
            nn.Conv1d(1, 16, 80, stride=4, padding=38), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(16, 32, 3, padding=1), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True),
            nn.Conv1d(32, 32, 3, padding=2, dilation=2, groups=4), nn.BatchNorm1d(32), nn.ReLU(),
            nn.ConvTranspose1d(32, 16, 4, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.AvgPool1d(2), nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(16, 24), nn.BatchNorm1d(24), nn.ReLU(), nn.Linear(24, 10))

    def rescale(self, g):
        """Batch norms' scales near 1, as trained ones are: 0.05 would shrink the signal 20-fold
        at each of the four, and the output compared with PyTorch's would be the biases alone."""
        for m in self.modules():
            if isinstance(m, torch.nn.BatchNorm1d):
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=g))

    def forward(self, x):
        return self.head(self.features(x))


# Segmentation models, and how they are built: without the auxiliary head the export drops.
SEGMENTATION = {"lraspp_mobilenet_v3_large": {}, "deeplabv3_mobilenet_v3_large": {"aux_loss": False},
                "fcn_resnet50": {"aux_loss": False}, "deeplabv3_resnet50": {"aux_loss": False}}


def build(name, batch):
    """The model (eval mode) and a random input batch."""
    g = torch.Generator().manual_seed(1)
    if name in ("lstm_2x256", "gru_2x256"):
        model = Recurrent(torch.nn.LSTM if name.startswith("lstm") else torch.nn.GRU)
        return model.eval(), torch.randn(batch, 64, 128, generator=g)
    if name == "audio_1d":
        return Audio1d().eval(), torch.randn(batch, 1, 4000, generator=g)
    if name in SEGMENTATION:
        model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, **SEGMENTATION[name])
        size = IMAGE_SIZE.get(name, 224)
        return SegmentationOutput(model).eval(), torch.randn(batch, 3, size, size, generator=g)
    if name == "gpt2_small":
        # Imported here: make_onnx_fixtures imports this script's count_macs.
        from make_onnx_fixtures import TinyGPT
        model = TinyGPT(vocab=50257, d=768, heads=12, tokens=1024, layers=12).eval()
        return model, torch.randint(0, 50257, (batch, 1024), generator=g)
    if name in VIDEO_FRAMES:
        model = getattr(torchvision.models.video, name)(weights=None).eval()
        return model, torch.randn(batch, 3, VIDEO_FRAMES[name], 112, 112, generator=g)
    size = IMAGE_SIZE.get(name, 224)
    return getattr(torchvision.models, name)(weights=None).eval(), torch.randn(batch, 3, size, size, generator=g)


def check(name, hwprof, workdir, batch):
    model, x = build(name, batch)
    randomize(model, seed=0)
    params = sum(p.numel() for p in model.parameters())  # a tied weight is one parameter
    macs = count_macs(model, x)
    path = os.path.join(workdir, name + ".onnx")
    torch.onnx.export(model, x[:1], path, opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    summary = subprocess.run([hwprof, "summary", path, "-f", "json"], capture_output=True, text=True)
    if summary.returncode != 0:
        return {"model": name, "ok": False, "error": summary.stderr.strip()}
    totals = json.loads(summary.stdout)["totals"]
    if not totals["complete"]:
        not_counted = [f"{l['name']} ({l['not_counted']})" for l in json.loads(summary.stdout)["layers"] if not l["counted"]]
        return {"model": name, "ok": False, "error": "not counted: " + "; ".join(not_counted)}
    np.save(os.path.join(workdir, "x.npy"), x.numpy())
    with torch.no_grad():
        reference = model(x).numpy()
    run = subprocess.run([hwprof, "run", path, "-i", os.path.join(workdir, "x.npy"), "-o", os.path.join(workdir, "y.npy")],
                         capture_output=True, text=True)
    if run.returncode != 0:
        return {"model": name, "ok": False, "error": run.stderr.strip()}
    y = np.load(os.path.join(workdir, "y.npy"))
    relative = float(np.abs(y - reference).max() / np.abs(reference).max()) if y.shape == reference.shape else float("inf")
    published_params, published_gmacs = PUBLISHED[name]
    result = {
        "model": name,
        "params": totals["params"], "torch_params": params, "published_params": published_params,
        "macs": totals["macs"], "torch_macs": macs, "published_gmacs": published_gmacs,
        "max_relative_difference": relative,
    }
    result["ok"] = (totals["params"] == params and published_params in (None, params) and totals["macs"] == macs
                    and (published_gmacs is None or round(macs / 1e9, 2) == published_gmacs) and relative <= TOLERANCE)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hwprof", required=True, help="the hwprof binary")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated torchvision model names")
    parser.add_argument("--batch", type=int, default=2, help="batch of the random input compared with PyTorch")
    parser.add_argument("--json", help="write the results to this file as JSON")
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    results = []
    with tempfile.TemporaryDirectory(prefix="hwprof-onnx-") as workdir:
        for name in args.models.split(","):
            if name not in PUBLISHED:
                print(f"{name}: no published figures recorded in this script; known: {', '.join(PUBLISHED)}")
                return 1
            r = check(name, args.hwprof, workdir, args.batch)
            results.append(r)
            if "error" in r:
                print(f"{name:14} FAILED: {r['error']}")
                continue
            print(f"{name:14} params {r['params']:>12,} (torch {r['torch_params']:,}, published {format(r['published_params'], ',') if r['published_params'] else '-'})  "
                  f"MACs {r['macs']:>15,} (torch hooks {r['torch_macs']:,}, published {r['published_gmacs'] or '-'} G)  "
                  f"run vs torch {r['max_relative_difference']:.2e}  {'ok' if r['ok'] else 'MISMATCH'}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "torchvision": torchvision.__version__, "results": results}, f, indent=2)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
