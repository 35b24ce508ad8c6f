#!/usr/bin/env bash
# Compares hwprof's calibrated ceilings with independent peers measured in the same run, at
# the same thread count and sizes (issue #4):
#   - DRAM triad and copy against likwid-bench's stream and copy kernels (normal and
#     non-temporal stores) for the ISA at hand; goal >= 0.97
#   - FMA peak SP and DP against likwid-bench peakflops(_sp)_*_fma; goal >= 0.97
#   - GEMM SP and DP against OpenBLAS called directly (bench/gemm_peer.cpp); goal >= 0.98
#   - two hwprof calibrations agree within 5 %, and how long each took
#   bench/run-calibration-bench.sh [BUILD_DIR] [THREADS]     (default build/release, the most threads calibrated)
set -euo pipefail
build="${1:-build/release}"
hwprof="$build/bin/hwprof"
peer="$build/bin/hwprof_gemm_peer"
for tool in "$hwprof" "$peer"; do
  [ -x "$tool" ] || { echo "run-calibration-bench.sh: $tool not found; build the release preset first" >&2; exit 1; }
done
command -v likwid-bench >/dev/null || { echo "run-calibration-bench.sh: likwid-bench not found (apt-get install likwid)" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
elapsed() { python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$1" "$EPOCHREALTIME"; }

# Two default calibrations (all the thread counts hwprof picks), then one --quick.
for i in 1 2; do
  start=$EPOCHREALTIME
  "$hwprof" calibrate -o "$out/run$i.json" --svg "$out/run$i.svg" > /dev/null
  elapsed "$start" > "$out/seconds$i"
done
start=$EPOCHREALTIME
"$hwprof" calibrate --quick -o "$out/quick.json" --svg "$out/quick.svg" > /dev/null
elapsed "$start" > "$out/quick_seconds"
# Compare at the largest thread count calibrated, unless one is given.
threads="${2:-$(python3 -c "import json; print(max(r['threads'] for r in json.load(open('$out/run1.json'))['runs']))")}"

# The widest ISA likwid-bench has kernels for on this CPU, as hwprof's FMA kernel chose.
run_of() { python3 -c "import json; print(next(r for r in json.load(open('$out/run1.json'))['runs'] if r['threads'] == $threads)$1)"; }
isa=$(run_of "['compute']['fma_sp_variant']")
case "$isa" in
  avx512f) suffix=avx512 ;;
  avx2_fma|avx2) suffix=avx ;;
  *) suffix=sse ;;
esac
dram_bytes=$(run_of "['bandwidth']['dram']['triad_bytes']")
dram_mb=$(( dram_bytes / 1000000 ))
likwid() {  # kernel, working set, MByte|MFlops → that line's value (likwid prints both)
  likwid-bench -t "$1" -W "N:$2:$threads" 2>/dev/null | awk -F'[: \t]+' -v what="$3/s" '$1 == what {print $2}'
}
{
  echo "stream $(likwid stream_$suffix "${dram_mb}MB" MByte)"
  echo "stream_mem $(likwid stream_mem_$suffix "${dram_mb}MB" MByte)"
  echo "copy $(likwid copy_$suffix "${dram_mb}MB" MByte)"
  echo "copy_mem $(likwid copy_mem_$suffix "${dram_mb}MB" MByte)"
  if [ "$suffix" = sse ]; then
    echo "peak_dp $(likwid peakflops_sse 32kB MFlops)"; echo "peak_sp $(likwid peakflops_sp_sse 32kB MFlops)"
  else
    echo "peak_dp $(likwid peakflops_${suffix}_fma 32kB MFlops)"; echo "peak_sp $(likwid peakflops_sp_${suffix}_fma 32kB MFlops)"
  fi
} > "$out/likwid.txt"
gemm_n="$(run_of "['compute']['gemm_sp_n']") $(run_of "['compute'].get('gemm_dp_n', '')")"
"$peer" "$threads" $gemm_n > "$out/gemm.jsonl"

python3 - "$out" "$threads" <<'PY'
import json, sys
out, threads = sys.argv[1], int(sys.argv[2])
runs = [json.load(open(f"{out}/run{i}.json"))["runs"] for i in (1, 2)]
mine = [next(r for r in rs if r["threads"] == threads) for rs in runs]
peers = dict(line.split() if len(line.split()) == 2 else (line.split()[0], "nan") for line in open(f"{out}/likwid.txt"))
gemm = {}
for line in open(f"{out}/gemm.jsonl"):
    g = json.loads(line)
    gemm[g["precision"]] = max(gemm.get(g["precision"], 0), g["best_gflops"])
def ratio(label, ours, peer, goal, unit):
    try:
        peer = float(peer)
    except ValueError:
        print(f"{label:<34} ours {ours:8.1f} {unit:<8} peer unavailable"); return
    r = ours / peer
    print(f"{label:<34} ours {ours:8.1f} / peer {peer:8.1f} {unit:<8} = {r:5.3f}  (goal >= {goal}: {'meets' if r >= goal else 'MISSES'})")
bw, cp = mine[0]["bandwidth"]["dram"], mine[0]["compute"]
print(f"{threads} thread(s); likwid-bench at {bw['triad_bytes'] / 1e6:.0f} MB; OpenBLAS direct at hwprof's best GEMM size")
ratio("DRAM triad vs likwid stream", bw["triad_gbps"], float(peers["stream"]) / 1000, 0.97, "GB/s")
if "triad_nt_gbps" in bw: ratio("DRAM triad NT vs likwid stream_mem", bw["triad_nt_gbps"], float(peers["stream_mem"]) / 1000, 0.97, "GB/s")
ratio("DRAM copy vs likwid copy", bw["copy_gbps"], float(peers["copy"]) / 1000, 0.97, "GB/s")
if "copy_nt_gbps" in bw: ratio("DRAM copy NT vs likwid copy_mem", bw["copy_nt_gbps"], float(peers["copy_mem"]) / 1000, 0.97, "GB/s")
ratio("FMA peak DP vs likwid peakflops", cp["fma_dp_gflops"], float(peers["peak_dp"]) / 1000, 0.97, "GFLOP/s")
ratio("FMA peak SP vs likwid peakflops_sp", cp["fma_sp_gflops"], float(peers["peak_sp"]) / 1000, 0.97, "GFLOP/s")
ratio("GEMM SP vs OpenBLAS direct", cp["gemm_sp_gflops"], gemm.get("sp", float("nan")), 0.98, "GFLOP/s")
if "gemm_dp_gflops" in cp: ratio("GEMM DP vs OpenBLAS direct", cp["gemm_dp_gflops"], gemm.get("dp", float("nan")), 0.98, "GFLOP/s")
def values(run):
    v = {f"{lvl}.{k}": x for lvl, b in run["bandwidth"].items() for k, x in b.items() if k.endswith("_gbps") and "median" not in k}
    v.update({k: x for k, x in run["compute"].items() if k.endswith("_gflops") and "median" not in k})
    return v
a, b = values(mine[0]), values(mine[1])
worst = max(((abs(a[k] - b[k]) / max(a[k], b[k]), k) for k in a if k in b), default=(0, "-"))
print(f"repeatability: the two runs differ by at most {worst[0] * 100:.1f}% ({worst[1]}; goal <= 5%)")
secs = [float(open(f"{out}/seconds{i}").read()) for i in (1, 2)]
print(f"calibration wall time (default thread counts): {secs[0]:.1f} s and {secs[1]:.1f} s (goal <= 20 s); --quick: {float(open(f'{out}/quick_seconds').read()):.1f} s (goal <= 5 s)")
PY
