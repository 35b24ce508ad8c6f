#!/usr/bin/env bash
# Fuzzes hwprof's input parsers with libFuzzer (docs/fuzzing.md): builds the harnesses with
# clang (`cmake --preset fuzz`, ASan + UBSan), then runs each target for a set time on a seed
# corpus made of the shipped files, and prints one line per target.
#
#   scripts/fuzz.sh [--seconds N] [--timeout N] [--parallel] [--build-dir DIR] [TARGET...]
#
# TARGET: spec, calibration, profile, event_group, onnx (default: all five, one after the other;
# with --parallel, all at once, each for the whole N seconds: for long runs on several cores).
# --seconds N: per target (default 60). --timeout N: the seconds one input may take before it
# is a finding (default 10; on a machine busy with other work, a starved run can pass 10 s). --build-dir DIR: default build/fuzz. Under DIR:
# corpus/TARGET (the working corpus, kept between runs), crashes/TARGET/ (crash, timeout, OOM
# and leak inputs), logs/TARGET.log (libFuzzer's output), seeds/TARGET (rebuilt every run).
# Exit status: 0 when no target crashed, 1 when one did (or the build failed), 2 for a bad
# argument, 77 when clang++, its libFuzzer or lld is missing (ctest shows the test skipped).
# libFuzzer's own exit status for a crash is also 77 (-error_exitcode's default, LLVM
# compiler-rt/lib/fuzzer/FuzzerFlags.def), so it is never passed on.
set -euo pipefail

readonly all_targets=(spec calibration profile event_group onnx)
readonly skip=77
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds=60
unit_timeout=10
build_dir="$root/build/fuzz"
targets=()

usage() { sed -n '2,18s/^# \{0,1\}//p' "$0"; }
parallel=0
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --timeout) unit_timeout="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --timeout=*) unit_timeout="${1#*=}"; shift ;;
    --build-dir) build_dir="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --build-dir=*) build_dir="${1#*=}"; shift ;;
    --parallel) parallel=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "fuzz.sh: unknown target '$1' (targets: ${all_targets[*]})" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds takes a positive whole number, not '$seconds'" >&2; exit 2; }
[[ "$unit_timeout" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --timeout takes a positive whole number, not '$unit_timeout'" >&2; exit 2; }
[ -n "$build_dir" ] || { echo "fuzz.sh: --build-dir takes a folder" >&2; exit 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
mkdir -p "$build_dir"
build_dir="$(cd "$build_dir" && pwd)"

# ---- clang, libFuzzer and lld, or skip with the reason ---------------------------------------
for tool in clang clang++ cmake ninja; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"; exit $skip; }
done
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf '%s\n' '#include <cstddef>' '#include <cstdint>' \
  'extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }' > "$probe/probe.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined -fuse-ld=lld "$probe/probe.cpp" -o "$probe/probe" 2> "$probe/err"; then
  echo "SKIP: clang++ cannot link a libFuzzer program: install Debian's clang, libclang-rt-dev and lld (scripts/install-deps.sh)"
  sed 's/^/  /' "$probe/err" | head -5
  exit $skip
fi

# ---- build -------------------------------------------------------------------------------------
started=$SECONDS
cd "$root"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake --preset fuzz -B "$build_dir" > "$probe/configure.log" 2>&1 ||
    { cat "$probe/configure.log"; echo "fuzz.sh: configuring $build_dir failed"; exit 1; }
fi
nice -n 10 cmake --build "$build_dir" || { echo "fuzz.sh: building $build_dir failed"; exit 1; }
echo "fuzz.sh: built $build_dir in $((SECONDS - started)) s"
bin="$build_dir/bin"

# ---- seeds: the shipped files, and the calibrations and profiles written by hwprof's writers ----
seeds="$build_dir/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{spec,calibration,profile,event_group,onnx}
"$bin/hwprof_fuzz_seeds" "$seeds/generated" > /dev/null
cp "$root"/models/*.json "$seeds/spec/"
cp "$seeds"/generated/calibration/*.json "$seeds/calibration/"
cp "$seeds"/generated/profile/*.json "$seeds/profile/"
for file in "$root"/tests/fixtures/profiles/v1/*.json; do
  cp "$file" "$seeds/profile/v1-$(basename "$file")"
done
for file in "$root"/tests/fixtures/machines/*/*.json; do
  if [ -f "$file" ]; then cp "$file" "$seeds/calibration/$(basename "$(dirname "$file")")-$(basename "$file")"; fi
done
for file in "$root"/counters/*/*.txt; do
  cp "$file" "$seeds/event_group/$(basename "$(dirname "$file")")-$(basename "$file")"
done
for file in "$root"/tests/fixtures/onnx/*/model.onnx; do
  cp "$file" "$seeds/onnx/$(basename "$(dirname "$file")").onnx"
done

dictionary() {
  case "$1" in
    event_group) echo "$root/tests/fuzz/event_group.dict" ;;
    onnx) echo "$root/tests/fuzz/onnx.dict" ;;
    *) echo "$root/tests/fuzz/json.dict" ;;
  esac
}

# ---- run ---------------------------------------------------------------------------------------
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# One target: runs it, then writes its summary line to $build_dir/logs/TARGET.line and its
# status (0, or 1 when it failed) to TARGET.status, and prints the end of a failed run's log.
run_target() {
  local target="$1" corpus crashes log before rc executions coverage after artefacts line
  corpus="$build_dir/corpus/$target"
  crashes="$build_dir/crashes/$target"
  log="$build_dir/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  if [ ! -x "$bin/hwprof_${target}_fuzz" ]; then
    # The onnx harness is built only where libonnx-dev is installed (tests/fuzz/CMakeLists.txt).
    echo "fuzz.sh: $target skipped: $bin/hwprof_${target}_fuzz was not built (libonnx-dev missing?)"
    printf '%-12s skipped (not built)' "$target" > "$build_dir/logs/$target.line"
    echo 0 > "$build_dir/logs/$target.status"
    return
  fi
  before=$(find "$corpus" -type f | wc -l)
  echo "fuzz.sh: $target for $seconds s (log: $log)"
  # The working corpus first: libFuzzer adds what it finds to the first folder only. The saved
  # regressions are read with the seeds, so one that fails again stops the run at once.
  rc=0
  nice -n 10 "$bin/hwprof_${target}_fuzz" -max_total_time="$seconds" -print_final_stats=1 -timeout="$unit_timeout" -rss_limit_mb=2048 \
    -dict="$(dictionary "$target")" -artifact_prefix="$crashes/" \
    "$corpus" "$seeds/$target" "$root/tests/fuzz/regressions/$target" > "$log" 2>&1 || rc=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | tr -d ':' || true)
  after=$(find "$corpus" -type f | wc -l)
  artefacts=$(grep -c 'Test unit written to' "$log" || true)
  if [ "$rc" -ne 0 ] && [ "$artefacts" -eq 0 ]; then artefacts=1; fi
  line=$(printf '%-12s %10s executions  %-20s corpus %5d (+%d)  crashes %d' "$target" "${executions:-?}" \
    "${coverage:-cov ? ft ?}" "$after" $((after - before)) "$artefacts")
  echo "$line" > "$build_dir/logs/$target.line"
  echo $((rc != 0)) > "$build_dir/logs/$target.status"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: $target failed (libFuzzer exit status $rc); the end of its log:"
    grep -v '^#[0-9]' "$log" | tail -60 | sed 's/^/  /'
    grep 'Test unit written to' "$log" | sed "s|^.*Test unit written to \(.*\)\$|  saved \1; reproduce: $bin/hwprof_${target}_fuzz \1|" || true
    echo "  Keep the input as a test: copy it into tests/fuzz/regressions/$target/ (docs/fuzzing.md)"
  fi
}

for target in "${targets[@]}"; do
  if [ "$parallel" -eq 1 ]; then
    run_target "$target" &
  else
    run_target "$target"
  fi
done
wait
summary=()
failed=0
for target in "${targets[@]}"; do
  summary+=("$(cat "$build_dir/logs/$target.line")")
  [ "$(cat "$build_dir/logs/$target.status")" -eq 0 ] || failed=1
done

echo "fuzz.sh: ${#targets[@]} targets, $seconds s each ($((SECONDS - started)) s in all, build included)"
for line in "${summary[@]}"; do echo "  $line"; done
exit $failed
