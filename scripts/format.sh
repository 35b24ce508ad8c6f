#!/usr/bin/env bash
# Formats hwprof's C and C++ sources with clang-format and the repository's .clang-format.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "format.sh: clang-format is not installed (apt-get install clang-format; scripts/install-deps.sh does)" >&2
  [ "${1:-}" = "--check" ] && exit 77  # skipped, as ctest counts it
  exit 2
fi
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.hpp' 'include/*.hpp' 'include/*.h' 'tests/*.cpp' 'tests/*.hpp' 'tests/*.c' \
                                  'examples/*.cpp' 'examples/*.c' 'bench/*.cpp' 'bench/*.hpp')
if [ "${1:-}" = "--check" ]; then
  # One clang-format for every file (one process per file took a minute of CI): --dry-run says
  # "FILE:LINE:COL: error: code should be clang-formatted" for each place to change.
  report=$(clang-format --style=file --dry-run --Werror "${files[@]}" 2>&1) && exit 0
  bad=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error: code should be clang-formatted' <<<"$report" | cut -d: -f1 | sort -u)
  if [ -z "$bad" ]; then
    echo "format.sh: clang-format failed: $report" >&2
    exit 1
  fi
  sed 's/^/not formatted: /' <<<"$bad"
  exit 1
fi
clang-format --style=file -i "${files[@]}"
