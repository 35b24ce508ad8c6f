"""What tests/torch/realistic_check.py holds hwprof.torch's reports to, counted by the script
itself, independently of hwprof: one global forward hook (PyTorch's own
`register_module_forward_hook`) and explicit counts of the ops the script calls directly.

It is off unless REALISTIC_TRUTH names a file: the check runs each script twice, plain with
REALISTIC_TRUTH set (this module counts) and under `python3 -m hwprof.torch` without it (no hook
of ours in the measured run). The scripts are seeded and their shapes do not depend on the
data, so both runs make the same calls.

Per module path (`named_modules()` under the model's class name, as hwprof.torch names them,
docs/torch.md "Modules"):
- calls: forward calls outside the backward pass; recompute_calls: forward calls made during
  it (activation checkpointing recomputing a block);
- grad_calls: calls made with grad enabled whose output requires grad, in either pass: the
  calls whose backward runs (a reentrant checkpoint's first pass runs under no_grad, its
  recompute with grad);
- params: sum(p.numel()) over module.parameters() (a shared parameter once);
- scripted: a torch.jit.script-ed module (called from Python, so hooked); in_script: a module
  inside one, which TorchScript calls without Python: no hook sees it, and the check skips it;
- for nn.Linear, nn.Conv1d and nn.Conv2d: flops_forward (over `calls`), flops_recompute and
  flops_backward (over `grad_calls`) by hwprof's convention (docs/cost.md "Counting convention",
  docs/torch.md "Who counts what"): forward 2·MACs + the bias adds; backward the weights'
  gradient (2·MACs + bias adds) where the weight requires grad, plus the input's (2·MACs)
  where the input does.
Ops called directly (`torch.bmm`, `torch.matmul`, bilinear `F.interpolate`): calls and FLOPs
per op name and pass.
"""

import atexit
import ctypes
import json
import os
from contextlib import contextmanager

import torch
from torch import nn

_COUNTED = (nn.Linear, nn.Conv1d, nn.Conv2d)


def _first_tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _first_tensor(item)
            if found is not None:
                return found
    return None


def _any_requires_grad(value):
    if isinstance(value, torch.Tensor):
        return value.requires_grad
    if isinstance(value, (tuple, list)):
        return any(_any_requires_grad(item) for item in value)
    return False


def _product(values):
    result = 1
    for v in values:
        result *= int(v)
    return result


def module_flops(module, x, y):
    """(forward FLOPs, MACs, bias adds) of one call of a Linear or Conv1d/2d."""
    if isinstance(module, nn.Linear):
        rows = x.numel() // module.in_features
        macs = rows * module.in_features * module.out_features
        bias = rows * module.out_features if module.bias is not None else 0
    else:
        n = y.numel()
        macs = n * (module.in_channels // module.groups) * _product(module.kernel_size)
        bias = n if module.bias is not None else 0
    return 2 * macs + bias, macs, bias


def blas_threads():
    """The thread pool of the OpenBLAS PyTorch runs its matrix products on (Debian's PyTorch links
    it as libblas.so.3, loaded local), or 0 where the process has no OpenBLAS."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.split()[-1]})
    for path in paths:
        try:
            return ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).openblas_get_num_threads()
        except (OSError, AttributeError):
            continue
    return 0


class Truth:
    """Counts the calls of the modules given to `watch` (the ones the script calls itself: its
    model, its loss) and of everything under them. Does nothing unless REALISTIC_TRUTH is set;
    create it before the model, so that forward methods can count their direct ops."""

    def __init__(self):
        self.path = os.environ.get("REALISTIC_TRUTH")
        self.pid = os.getpid()
        self.in_backward = False
        self.steps = 0
        self.batch = None
        self.names = {}
        self.modules = {}
        self.ops = {}
        if self.path:
            torch.nn.modules.module.register_module_forward_hook(self._hook)
            atexit.register(self._write)

    def watch(self, *roots, batch=None):
        """The script's top-level modules, each named by its class, and its batch size."""
        self.batch = batch
        if not self.path:
            return
        for root in roots:
            cls = type(root).__name__
            scripted = set()
            for name, sub in root.named_modules():
                if id(sub) in self.names:
                    continue
                path = f"{cls}.{name}" if name else cls
                self.names[id(sub)] = path
                # A scripted module's submodules run inside TorchScript: no Python call, no hook.
                in_script = any(path.startswith(s + ".") for s in scripted)
                if isinstance(sub, torch.jit.ScriptModule) and not in_script:
                    scripted.add(path)
                self.modules[path] = {"type": type(sub).__name__, "calls": 0, "recompute_calls": 0, "grad_calls": 0,
                                      "params": sum(p.numel() for p in sub.parameters()),
                                      "scripted": path in scripted, "in_script": in_script}
                if isinstance(sub, _COUNTED) and not in_script:
                    self.modules[path].update(flops_forward=0, flops_recompute=0, flops_backward=0)

    @property
    def enabled(self):
        return bool(self.path)

    def _hook(self, module, inputs, output):
        path = self.names.get(id(module))
        if path is None:
            return
        row = self.modules[path]
        row["recompute_calls" if self.in_backward else "calls"] += 1
        grad = torch.is_grad_enabled() and _any_requires_grad(output)
        if grad:
            row["grad_calls"] += 1
        if "flops_forward" in row:
            x, y = _first_tensor(inputs), _first_tensor(output)
            flops, macs, bias = module_flops(module, x, y)
            row["flops_recompute" if self.in_backward else "flops_forward"] += flops
            if grad:
                backward = 2 * macs + bias if module.weight.requires_grad else 0
                backward += 2 * macs if x.requires_grad else 0
                row["flops_backward"] += backward

    def _op(self, name, flops):
        key = f"{name} (recompute)" if self.in_backward else name
        entry = self.ops.setdefault(key, {"calls": 0, "flops": 0})
        entry["calls"] += 1
        entry["flops"] += flops

    def bmm(self, a, b):
        """After `torch.bmm(a, b)`: 2·B·N·K·M."""
        if self.enabled:
            self._op("aten::bmm", 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2])

    def matmul(self, a, out):
        """After `out = torch.matmul(a, b)`: every output element is K multiply-adds."""
        if self.enabled:
            self._op("aten::matmul", 2 * out.numel() * a.shape[-1])

    def bilinear(self, out):
        """After a bilinear `F.interpolate`: 7 FLOPs per output element (docs/cost.md, "Counting
        convention": 4 multiplies and 3 adds)."""
        if self.enabled:
            self._op("aten::upsample_bilinear2d", 7 * out.numel())

    @contextmanager
    def backward(self):
        """Around `loss.backward()`: module calls inside it are recomputations."""
        self.in_backward = True
        try:
            yield
        finally:
            self.in_backward = False

    def step(self):
        """After each optimizer step."""
        self.steps += 1

    def _write(self):
        if os.getpid() != self.pid:  # a forked DataLoader worker
            return
        with open(self.path, "w") as f:
            json.dump({"modules": self.modules, "ops": self.ops, "steps": self.steps, "batch": self.batch,
                       "torch_threads": torch.get_num_threads(), "blas_threads": blas_threads()}, f, indent=1, sort_keys=True)
