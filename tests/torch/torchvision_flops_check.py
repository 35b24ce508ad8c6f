#!/usr/bin/env python3
"""hwprof.torch's FLOPs against `hwprof summary`'s on real torchvision models: one convention,
exactly (docs/torch.md, "Exactness").

For each model: the model (eval mode, each nn.Dropout kept as a training dropout so that the
export has its node) is exported with torch.onnx.export and `hwprof summary` counts the export;
the same model runs one forward under `python3 -m hwprof.torch` in eval mode (no_grad), and one
forward and backward in training mode (batch norm on batch statistics, dropout masking).
Checks, eval against summary's `flops` and training against its `train_forward_flops` (both
per sample, times the batch):
- every module of the model (named_modules) has a row, named by its path under the model's class;
- each module's FLOPs over its calls equal summary's layers of that module: the layer of its own
  path, the layers `path_1`, `path_2`, ... of its further calls (a ReLU module called twice) and
  the layers under it (`path.add`, a block's own functional ops);
- the model's row equals summary's total;
- in training, each module's backward row over its calls equals summary's `backward_flops` of
  its layers, once the gradient sums autograd's engine makes inside it (a tensor that fed two
  ops) are taken out: summary's per-layer convention has none;
- nothing is counted twice: no op with FLOPs runs inside another op with FLOPs, and the model's
  row is the sum of its leaf modules' FLOPs and of the ops run directly by the modules above
  them (a residual add, a functional pool), no more.
Small inputs (batch 2, 64x64) keep it inside a minute on two cores; FLOPs do not depend on the
weights, so none are loaded.

Usage: torchvision_flops_check.py HWPROF_CLI BUILD_PYTHON_DIR [--models resnet18,mobilenet_v2]
Exit status: 0 every check holds, 1 one failed, 77 (skipped) where PyTorch or torchvision is not
importable by /usr/bin/python3.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

try:
    import torch
    import torchvision
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"skipped: {e.name} is not importable by {sys.executable} (apt-get install python3-torch python3-torchvision)")
    sys.exit(77)

BATCH = 2
IMAGE = 64

# The program hwprof.torch runs: the model built outside the measured modules' forward, then one
# eval forward (no_grad) or one training forward and backward.
CHILD = """
import sys
import torch
import torchvision
name, mode, batch, image = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.manual_seed(0)
model = getattr(torchvision.models, name)(weights=None)
x = torch.randn(batch, 3, image, image)
if mode == "eval":
    model.eval()
    with torch.no_grad():
        model(x)
else:
    model.train()
    model(x).sum().backward()
"""


class CheckFailed(Exception):
    pass


def export_and_summarize(name, hwprof, workdir):
    """summary's JSON of the model's ONNX export: batch norm as a node of its own (eval mode,
    TrainingMode.PRESERVE), dropouts as training dropouts (eval mode would drop their nodes,
    and with them the training forward's mask)."""
    model = getattr(torchvision.models, name)(weights=None).eval()
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.train()
    path = os.path.join(workdir, name + ".onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PRESERVE's advice about constant folding: folding is off
        torch.onnx.export(model, torch.randn(BATCH, 3, IMAGE, IMAGE), path, opset_version=17, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.PRESERVE, input_names=["input"], output_names=["output"])
    run = subprocess.run([hwprof, "summary", path, "-f", "json"], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise CheckFailed(f"hwprof summary {path} exited {run.returncode}: {run.stderr.strip()}")
    summary = json.loads(run.stdout)
    if not summary["totals"]["complete"]:
        missing = [f"{l['name']} ({l['op']})" for l in summary["layers"] if not l["counted"]]
        raise CheckFailed(f"summary did not count every layer of {name}: {missing}")
    return summary


def profile(name, mode, build_python, workdir):
    script = os.path.join(workdir, "child.py")
    with open(script, "w") as f:
        f.write(CHILD)
    out = os.path.join(workdir, f"{name}-{mode}")
    env = dict(os.environ, PYTHONPATH=build_python, HWPROF_BACKEND="timer")
    run = subprocess.run(["/usr/bin/python3", "-m", "hwprof.torch", "-o", out, script, name, mode, str(BATCH), str(IMAGE)], env=env,
                         capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise CheckFailed(f"{name} ({mode}) under hwprof.torch exited {run.returncode}: {run.stderr[-2000:]}")
    with open(os.path.join(out, "profile.json")) as f:
        return json.load(f)


def summary_flops_of(module_path, layers, key):
    """Per sample: the summary layers of one module (its path, its further calls `path_K`, and
    the layers under it); the whole model for the root ("")."""
    if not module_path:
        return sum(l[key] for l in layers)
    own = re.compile(re.escape(module_path) + r"(_\d+)?$")
    return sum(l[key] for l in layers if own.match(l["name"]) or l["name"].startswith(module_path + "."))


def calls_by_region(prof):
    calls = {}
    for p in prof["call_paths"]:
        last = p["path"].rsplit("/", 1)[-1]
        calls[last] = calls.get(last, 0) + p["calls"]
    return calls


def shared_op_rows(prof, cls, modules):
    """Op rows the model's forward enters from more than one module: a row is named by the
    op and its input shapes only, so a stride-1 and a stride-2 depthwise convolution on one
    input share it, and each module is given the row's mean (docs/torch.md, "Exactness")."""
    owners = {}
    for p in prof["call_paths"]:
        steps = p["path"].split("/")
        if steps[0] == cls and steps[-1].startswith("aten::"):
            owner = next((s for s in reversed(steps[:-1]) if s in modules), None)
            owners.setdefault(steps[-1], set()).add(owner)
    return {op for op, who in owners.items() if len(who) > 1}


def ops_under(prof, region):
    return {p["path"].rsplit("/", 1)[-1] for p in prof["call_paths"] if f"/{region}/" in "/" + p["path"]}


def check_run(name, mode, model, prof, summary):
    """Raises CheckFailed; returns (the model's FLOPs or None, the known gaps that kept a check
    from running)."""
    key = "flops" if mode == "eval" else "train_forward_flops"
    cls = type(model).__name__
    rows = {l["name"]: l for l in prof["layers"] if l["phase"] != "backward"}  # a module's backward row has its name too
    region = {path: f"{cls}.{path}" if path else cls for path, _ in model.named_modules()}
    missing = [r for r in region.values() if r not in rows]
    if missing:
        raise CheckFailed(f"{name} ({mode}): no row for {len(missing)} modules, e.g. {missing[:5]}")
    expected_total = BATCH * summary["totals"][key]
    dropped = [h for h in prof["hints"] if "call paths" in h]
    if dropped:
        # Known gap: with calls off the call tree, module rows carry no work. The ops' own rows
        # still hold every call: in eval (no backward) they sum to the model.
        gap = f"the call tree is incomplete, so module rows carry no work ({dropped[0]})"
        if mode != "eval":
            return None, [gap]
        ops = sum(p.get("flops", 0) for p in prof["call_paths"])  # each op call's work, on its path
        if round(ops) != expected_total:
            raise CheckFailed(f"{name} ({mode}): its ops' rows sum to {ops:.0f} FLOPs, summary {BATCH} x {summary['totals'][key]}")
        return round(ops), [gap]
    calls = calls_by_region(prof)
    shared = shared_op_rows(prof, cls, set(region.values()))
    problems, averaged = [], []
    for path, r in region.items():
        measured = rows[r]["flops"] * calls.get(r, 0)
        expected = BATCH * summary_flops_of(path, summary["layers"], key)
        if round(measured) != expected:
            line = f"{r}: {rows[r]['flops']:.0f} FLOPs x {calls.get(r, 0)} calls = {measured:.0f}, summary {expected}"
            (averaged if ops_under(prof, r) & shared else problems).append(line)
    if problems:
        raise CheckFailed(f"{name} ({mode}): {len(problems)} modules differ from summary:\n  " + "\n  ".join(problems[:20]))
    total = rows[cls]["flops"]
    if round(total) != expected_total:
        raise CheckFailed(f"{name} ({mode}): model {total:.0f} FLOPs, summary {BATCH} x {summary['totals'][key]}")
    check_counted_once(name, mode, model, prof, rows, region, calls)
    gaps = []
    if averaged:
        gaps.append(f"{len(averaged)} modules run ops whose row other modules share with another cost, and are given its mean, "
                    f"e.g. " + "; ".join(averaged[:2]))
    return round(total), gaps


def gradient_sums(prof, cls):
    """Per module backward region: the FLOPs of the gradient sums autograd's engine makes inside
    it where a tensor fed two ops (`aten::add` run by the engine itself, its parent a module's
    backward region, not a backward function): counted by hwprof.torch, not by summary's
    per-layer convention (docs/torch.md, "Exactness"). Each is also its ancestors'."""
    sums = {}
    for p in prof["call_paths"]:
        steps = p["path"].split("/")
        if len(steps) < 2 or not steps[-1].startswith("aten::add") or not steps[-2].endswith(" (backward)"):
            continue
        # In a module's backward region, or in the backward of one of its ops still open there.
        owner = steps[-2] if not steps[-2].startswith("aten::") else (steps[-3] if len(steps) >= 3 else "")
        if not (owner == f"{cls} (backward)" or owner.startswith(cls + ".")):
            continue
        for module in steps[:-1]:
            sums[module] = sums.get(module, 0) + p.get("flops", 0)
    return sums


def check_backward(name, model, prof, summary):
    """Training: each module's backward FLOPs over its calls equal summary's backward_flops of
    its layers, less the engine's gradient sums inside it; the model's likewise."""
    cls = type(model).__name__
    rows = {l["name"]: l for l in prof["layers"] if l["phase"] == "backward"}
    sums = gradient_sums(prof, cls)
    problems = []
    for path, module in model.named_modules():
        r = f"{cls}.{path}" if path else cls
        expected = BATCH * summary_flops_of(path, summary["layers"], "backward_flops")
        if r not in rows:
            if expected != 0:
                problems.append(f"{r}: no backward row, summary {expected}")
            continue
        measured = rows[r]["flops"] * rows[r]["calls"] - sums.get(r + " (backward)", 0)
        # Per call, a row's FLOPs are rounded to a whole number: over n calls, within n.
        if abs(measured - expected) > rows[r]["calls"]:
            problems.append(f"{r}: {measured:.0f} backward FLOPs (gradient sums taken out), summary {expected}")
    if problems:
        raise CheckFailed(f"{name} (train): {len(problems)} modules' backward differ from summary:\n  " + "\n  ".join(problems[:20]))
    total = rows[cls]["flops"] * rows[cls]["calls"]
    return round(total), round(sums.get(cls + " (backward)", 0))


def check_counted_once(name, mode, model, prof, rows, region, calls):
    """No op with FLOPs inside another one, on any call path of the model's forward, and the
    model's row the work of every op call under it (each path's work as it was counted)."""
    cls = type(model).__name__
    work = {p["path"]: p.get("flops", 0) for p in prof["call_paths"]}
    under = 0
    for path, flops in work.items():
        steps = path.split("/")
        if steps[0] != cls or not flops:
            continue
        under += flops
        for k in range(1, len(steps)):
            if steps[k - 1].startswith("aten::") and work.get("/".join(steps[:k]), 0) > 0:
                raise CheckFailed(f"{name} ({mode}): {steps[-1]} carries FLOPs inside {steps[k - 1]}, which carries them too: counted twice")
    # Per call, a row's FLOPs are rounded to a whole number: over n calls, within n.
    if abs(under - rows[cls]["flops"] * calls.get(cls, 0)) > calls.get(cls, 0):
        raise CheckFailed(f"{name} ({mode}): the model's row {rows[cls]['flops']:.0f} FLOPs x {calls.get(cls, 0)} calls, "
                          f"its ops' calls under it {under:.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hwprof", help="the hwprof CLI")
    parser.add_argument("build_python", help="BUILD/python, where CMake copied the hwprof package")
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    options = parser.parse_args()
    build_python = os.path.abspath(options.build_python)
    failed, gaps = False, []
    with tempfile.TemporaryDirectory() as tmp:
        for name in options.models.split(","):
            try:
                summary = export_and_summarize(name, options.hwprof, tmp)
                model = getattr(torchvision.models, name)(weights=None)
                figures = []
                for mode, key in (("eval", "flops"), ("train", "train_forward_flops")):
                    prof = profile(name, mode, build_python, tmp)
                    total, known = check_run(name, mode, model, prof, summary)
                    gaps += [f"{name} ({mode}): {g}" for g in known]
                    shown = "not checked" if total is None else str(total)
                    figures.append(f"{mode} {shown} (summary {BATCH} x {summary['totals'][key]})")
                    if mode == "train":
                        backward, sums = check_backward(name, model, prof, summary)
                        figures.append(f"backward {backward}, of which gradient sums {sums} (summary {BATCH} x {summary['totals']['backward_flops']})")
                print(f"{name} (batch {BATCH}, {IMAGE}x{IMAGE}): " + "; ".join(figures))
            except CheckFailed as e:
                print(f"FAIL: {e}")
                failed = True
    for gap in gaps:
        print(f"FAIL: {gap}")
    if failed or gaps:  # a module without its work, or given another call's, is a failure
        sys.exit(1)
    print("ok: every module's FLOPs equal summary's, eval and training forward and backward, each op counted once")


if __name__ == "__main__":
    main()
