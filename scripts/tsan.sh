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
# so it reports their (correct) synchronisation as races. Exit status: 0 when TSan reported
# nothing and every test passed, 1 otherwise.
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
targets=(hwprof_profile_tests hwprof_unit_tests hwprof_session_integration_tests hwprof_integration_tests hwprof_bandwidth_tests
         hwprof_regions_env_tests)
cmake --build "$build_dir" --target "${targets[@]}"

# halt_on_error: the first race fails the test that found it, with both stacks.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
status=0
run() {
  local name="$1"; shift
  echo "tsan.sh: $name"
  if ! "$@" > "$build_dir/$name.log" 2>&1; then
    status=1
    echo "tsan.sh: $name FAILED; the end of $build_dir/$name.log:"
    tail -60 "$build_dir/$name.log" | sed 's/^/  /'
  else
    grep -E '^\[  (PASSED|SKIPPED) ' "$build_dir/$name.log" | sed 's/^/  /' || true
  fi
}
bin="$build_dir/bin"
run session-unit "$bin/hwprof_profile_tests" --gtest_filter='Session*:*Lifecycle*:*Statistics*'
run counters-unit "$bin/hwprof_unit_tests" --gtest_filter='PerfBackend*:*PerfBackendErrno*:MmapRead*'
run session-integration "$bin/hwprof_session_integration_tests"
run counters-integration "$bin/hwprof_integration_tests"
run calibration-workers "$bin/hwprof_bandwidth_tests"
run regions-env "$bin/hwprof_regions_env_tests"
exit $status
