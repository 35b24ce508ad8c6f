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
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "not formatted: $f"; bad=1; fi
  done
  exit $bad
fi
clang-format --style=file -i "${files[@]}"
