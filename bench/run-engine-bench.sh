#!/usr/bin/env bash
# The engine's peer comparison, one run, 2 threads on both sides: forward latency of ResNet-18
# (batch 8, 224x224) and GPT-2 small (batch 1, context 256) in `hwprof bench` against Debian's
# PyTorch 1.13 (bench/torch_peer.py, the same structures from torch.nn/torchvision), as ratios
# hwprof/PyTorch (goals: ResNet-18 <= 1.0, GPT-2 <= 1.3); and the memory ratio: hwprof's peak
# allocated bytes for ResNet-18 batch-8 inference (parameters excluded, workspaces included)
# over the analytic inference activation bytes of `hwprof summary resnet18 --batch 8`
# (goal <= 1.5).
#   bench/run-engine-bench.sh [BUILD_DIR]     (default build/release)
# python3-torch and python3-torchvision are installed with apt-get when absent; they are not a
# build or test dependency. Set PYTHON to use another interpreter that has them.
#
# Kernels: both sides run with OPENBLAS_CORETYPE removed from the environment, so each library
# uses the kernels it picks for this CPU (PyTorch's convolutions run on its own oneDNN, which
# ignores that variable; its linear layers on the same OpenBLAS). Where the environment sets
# OPENBLAS_CORETYPE (this project's machines set Haswell, OpenBLAS's AVX2 kernels, on an
# AVX-512 CPU), ResNet-18 is timed a second time in hwprof with it, against the same PyTorch
# figure, and that ratio is printed too. Each side's OpenBLAS core is printed.
set -euo pipefail
build="${1:-build/release}"
hwprof="$build/bin/hwprof"
[ -x "$hwprof" ] || { echo "run-engine-bench.sh: $hwprof not found; build the release preset first" >&2; exit 1; }
here="$(cd "$(dirname "$0")" && pwd)"
# Debian's interpreter: its dist-packages hold python3-torch (a pyenv or venv python3 would not).
python="${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || command -v python3 )}"
threads=2
warmup=3
iterations=10

if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "run-engine-bench.sh: installing python3-torch and python3-torchvision (the peer; not a build dependency)" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y python3-torch python3-torchvision >&2
fi

env_core="${OPENBLAS_CORETYPE:-}"
unset OPENBLAS_CORETYPE
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "load before the run: $(uptime)"
"$hwprof" bench resnet18 --batch 8 --threads "$threads" --warmup "$warmup" --iterations "$iterations" --format json -o "$out/hw_resnet18.json"
"$python" "$here/torch_peer.py" resnet18 --batch 8 --threads "$threads" --warmup "$warmup" --iterations "$iterations" > "$out/pt_resnet18.json"
"$hwprof" bench gpt2_small --batch 1 --input-shape 256 --threads "$threads" --warmup "$warmup" --iterations "$iterations" --format json -o "$out/hw_gpt2.json"
"$python" "$here/torch_peer.py" gpt2_small --batch 1 --context 256 --threads "$threads" --warmup "$warmup" --iterations "$iterations" > "$out/pt_gpt2.json"
"$hwprof" summary resnet18 --batch 8 --format json -o "$out/summary_resnet18.json"
if [ -n "$env_core" ]; then
  OPENBLAS_CORETYPE="$env_core" "$hwprof" bench resnet18 --batch 8 --threads "$threads" --warmup "$warmup" --iterations "$iterations" --format json -o "$out/hw_resnet18_env.json" 2>/dev/null
fi
echo "load after the run:  $(uptime)"

"$python" - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
load = lambda name: json.load(open(os.path.join(d, name)))
print(f"median of {load('hw_resnet18.json')['latency_ms']['n']} iterations after the warm-ups; measured wall time; "
      f"{load('hw_resnet18.json')['threads']} hwprof threads, {load('pt_resnet18.json')['threads']} torch threads "
      f"({load('pt_resnet18.json')['framework']})")
def ratio(label, hw, pt, goal):
    a, b = hw["latency_ms"]["median"], pt["latency_ms"]["median"]
    verdict = "meets" if a / b <= goal else "MISSES"
    print(f"{label:<40} hwprof {a:9.2f} ms   PyTorch {b:9.2f} ms   ratio {a / b:5.2f}  (goal <= {goal}: {verdict})")
ratio("ResNet-18 forward, batch 8, 224x224", load("hw_resnet18.json"), load("pt_resnet18.json"), 1.0)
ratio("GPT-2 small forward, batch 1, T=256", load("hw_gpt2.json"), load("pt_gpt2.json"), 1.3)
blas = load("hw_resnet18.json")["blas"]
print(f"hwprof's OpenBLAS core: {blas['core']} ({blas['core_source']}); PyTorch: {load('pt_resnet18.json').get('blas', 'see torch_peer.py')}")
if os.path.exists(os.path.join(d, "hw_resnet18_env.json")):
    env = load("hw_resnet18_env.json")
    ratio(f"  same, hwprof on {env['blas']['core']} (environment)", env, load("pt_resnet18.json"), 1.0)
measured = load("hw_resnet18.json")["memory"]["peak_activation_bytes"]["value"]
analytic = load("summary_resnet18.json")["memory"]["inference_activation_bytes"]
verdict = "meets" if measured / analytic <= 1.5 else "MISSES"
print(f"{'ResNet-18 batch-8 inference memory':<40} measured peak {measured / 1e6:8.2f} MB / analytic {analytic / 1e6:8.2f} MB "
      f"= {measured / analytic:4.2f}  (goal <= 1.5: {verdict})")
PY
