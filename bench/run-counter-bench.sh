#!/usr/bin/env bash
# Runs bench/counter_read_bench.cpp once and prints hwprof's read cost as ratios against its
# peers measured in the same run (the goals: read <= 1.15x a raw group read(2);
# read pair <= 0.5x a PAPI_hl_region_begin/end pair).
#   bench/run-counter-bench.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
build="${1:-build/release}"
bin="$build/bin/hwprof_counter_bench"
[ -x "$bin" ] || { echo "run-counter-bench.sh: $bin not found; build the release preset first" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export PAPI_EVENTS="perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES"
export PAPI_OUTPUT_DIRECTORY="$out"   # PAPI_hl writes its own report there at exit
export PAPI_REPORT=0
taskset -c 0 "$bin" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_format=json --benchmark_out="$out/result.json" --benchmark_out_format=json > /dev/null
python3 - "$out/result.json" <<'PY'
import json, sys
runs = {b["run_name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("aggregate_name") == "median"}
def ns(name):
    b = runs.get(name)
    return None if b is None else b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
def ratio(label, a, b, goal):
    x, y = ns(a), ns(b)
    if x is None or y is None:
        print(f"{label:<48} unavailable ({a if x is None else b} did not run)")
        return
    verdict = "meets" if x / y <= goal else "MISSES"
    print(f"{label:<48} {x:8.1f} ns / {y:8.1f} ns = {x / y:5.2f}  (goal <= {goal}: {verdict})")
print("median of 5 repetitions, one process pinned to CPU 0, events task-clock, page-faults, context-switches")
ratio("hwprof read / raw group read(2)", "BM_HwprofRead", "BM_RawGroupRead", 1.15)
ratio("hwprof read / PAPI_read", "BM_HwprofRead", "BM_PapiRead", 1.0)
ratio("hwprof read pair / PAPI_hl region pair", "BM_HwprofReadPair", "BM_PapiHlRegionPair", 0.5)
base = ns("BM_HwprofReadWithIdleThreads/0")
for n in (1, 2, 4, 8):
    t = ns(f"BM_HwprofReadWithIdleThreads/{n}")
    if base is not None and t is not None:
        print(f"read with {n} extra attached thread(s): {t:8.1f} ns  (+{(t - base) / n:6.1f} ns per thread)")
PY
