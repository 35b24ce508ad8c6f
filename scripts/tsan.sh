#!/usr/bin/env bash
# Runs hwprof's threaded tests under ThreadSanitizer: the session and regions (thread slots,
# call paths, 400 threads on 4 slots, the default session), the counter backends (a counter set
# per thread, threads that start and end while it opens) and the calibration workers (pinned
# STREAM and FMA threads). Not part of CI: the TSan build of the library takes about 10 minutes
# on 2 cores, which CI's 20 minutes cannot spare beside the ASan build.
#
#   scripts/tsan.sh [--build-dir DIR]      (default build/tsan)
#
# Tests that run OpenMP or OpenBLAS kernels are left out: neither library is built with TSan,
# so it reports their (correct) synchronisation as races. What the script judges is TSan's
# verdict: a data race, a lock-order inversion or a crash. Assertions on timing and bandwidth
# ratios (a 2-thread SGEMM's CPU time, cache over DRAM bandwidth) do not hold under TSan's 5-15x
# slowdown, so a failed test is listed as a note, not a failure. Exit status: 0 when TSan
# reported nothing and nothing crashed, 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_dir="$root/build/tsan"
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="${2:?--build-dir takes a folder}"; shift 2 ;;
    -h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "tsan.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
cd "$root"
cmake --preset tsan -B "$build_dir" > /dev/null
targets=(hwprof_unit_session_tests hwprof_unit_counters_tests hwprof_session_integration_tests hwprof_integration_tests hwprof_bandwidth_tests
         hwprof_regions_env_tests)
cmake --build "$build_dir" --target "${targets[@]}"

# halt_on_error: the first race fails the test that found it, with both stacks.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
status=0
races=0
run() {
  local name="$1" rc=0 log="$build_dir/$1.log"
  shift
  echo "tsan.sh: $name"
  "$@" > "$log" 2>&1 || rc=$?
  grep -E '^\[  (PASSED|SKIPPED) ' "$log" | sed 's/^/  /' || true
  if grep -q 'WARNING: ThreadSanitizer\|ERROR: ThreadSanitizer' "$log" || [ "$rc" -gt 1 ]; then
    status=1
    echo "tsan.sh: $name: ThreadSanitizer reported, or the tests crashed (exit status $rc); the end of $log:"
    grep -A40 'ThreadSanitizer' "$log" | head -80 | sed 's/^/  /'
    [ "$rc" -gt 1 ] && tail -30 "$log" | sed 's/^/  /'
  elif [ "$rc" -ne 0 ]; then
    echo "tsan.sh: $name: no report from TSan; these tests failed their own (timing) assertions under its slowdown:"
    grep -E '^\[  FAILED  \] [A-Za-z].* \([0-9]+ ms\)$' "$log" | sed 's/^/  /'
  fi
  races=$((races + $(grep -c 'WARNING: ThreadSanitizer' "$log" || true)))
}
bin="$build_dir/bin"
run session-unit "$bin/hwprof_unit_session_tests" --gtest_filter='Session*:*Lifecycle*'
run counters-unit "$bin/hwprof_unit_counters_tests" --gtest_filter='PerfBackend*:*PerfBackendErrno*:MmapRead*'
run session-integration "$bin/hwprof_session_integration_tests"
run counters-integration "$bin/hwprof_integration_tests"
run calibration-workers "$bin/hwprof_bandwidth_tests"
run regions-env "$bin/hwprof_regions_env_tests"
echo "tsan.sh: ThreadSanitizer reports: $races"
exit $status
