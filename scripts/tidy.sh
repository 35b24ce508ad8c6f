#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over hwprof's sources (src/, and the
# headers of include/ and src/ they include). Too slow for CI on two cores (a few seconds per
# file); run it before a commit, on the files the commit touches or on the whole tree.
#   scripts/tidy.sh                 every source file in src/
#   scripts/tidy.sh FILE...         these files
#   scripts/tidy.sh --changed [REV] the .cpp files changed since REV (default: origin/main, else HEAD~1)
#   scripts/tidy.sh --analyzer ...  also the Clang static analyzer's core, C++ and Unix checks
#                                   (about ten times slower)
# Exit 0 when clang-tidy reports nothing, 1 when it does, 77 when clang-tidy is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-tidy >/dev/null; then
  echo "tidy.sh: clang-tidy is not installed (apt-get install clang-tidy; scripts/install-deps.sh does)" >&2
  exit 77
fi
extra=()
if [ "${1:-}" = "--analyzer" ]; then
  extra=(--checks='clang-analyzer-core.*,clang-analyzer-cplusplus.*,clang-analyzer-deadcode.*,clang-analyzer-unix.*')
  shift
fi
# A compilation database without unity batches, so that each file is checked as itself.
db=build/tidy
if [ ! -f "$db/compile_commands.json" ] || [ CMakeLists.txt -nt "$db/compile_commands.json" ]; then
  cmake -S . -B "$db" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_UNITY_BUILD=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi
if [ "${1:-}" = "--changed" ]; then
  base=${2:-$(git rev-parse -q --verify origin/main || git rev-parse HEAD~1)}
  mapfile -t files < <(git diff --name-only --diff-filter=d "$base" -- 'src/*.cpp')
elif [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.cpp')
fi
[ ${#files[@]} -eq 0 ] && { echo "tidy.sh: no files to check"; exit 0; }
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -n 4 clang-tidy -p "$db" --quiet "${extra[@]}" >"$log" 2>/dev/null || true
if grep -q "warning:\|error:" "$log"; then
  grep -A3 "warning:\|error:" "$log"
  echo "tidy.sh: $(grep -c 'warning:\|error:' "$log") findings in ${#files[@]} files" >&2
  exit 1
fi
echo "tidy.sh: ${#files[@]} files, no findings"
