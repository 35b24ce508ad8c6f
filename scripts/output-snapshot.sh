#!/bin/bash
# Every report hwprof renders from stored files, written into one folder, so that two builds
# can be compared byte for byte (a redesign that should not change outputs: `diff -r`).
#   scripts/output-snapshot.sh HWPROF INPUTS OUT
# INPUTS holds lenet5-a.json, lenet5-b.json, mlp-train.json (profiles), calibration-a.json,
# calibration-b.json (machine reports) and ranks/rank-*/profile.json (a launched regions run).
set -u
hwprof=$1 in=$2 out=$3
rm -rf "$out" && mkdir -p "$out"
run() {  # NAME ARGS...: stdout, stderr and exit status of one command
  local name=$1; shift
  "$hwprof" "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
}
for p in lenet5-a mlp-train ranks/rank-00000; do
  f=$in/$p.json; [ -f "$f" ] || f=$in/$p/profile.json
  n=${p//\//_}
  for fmt in table json csv; do run "report-$n-$fmt" report "$f" --format "$fmt" --all; done
  run "report-$n-op" report "$f" --by op
  run "report-$n-block" report "$f" --by block --depth 1 --format json
  run "report-$n-counters" report "$f" --counters --sort time --top 5
  run "report-$n-files" report "$f" --svg "$out/$n.svg" --html "$out/$n.html" --trace "$out/$n.trace.json"
done
for fmt in table json; do
  run "compare-profiles-$fmt" compare "$in/lenet5-a.json" "$in/lenet5-b.json" --format "$fmt" --all
  run "compare-machines-$fmt" compare "$in/calibration-a.json" "$in/calibration-b.json" --format "$fmt"
done
run compare-profiles-html compare "$in/lenet5-a.json" "$in/lenet5-b.json" --html "$out/compare.html"
run compare-machines-svg compare "$in/calibration-a.json" "$in/calibration-b.json" --svg "$out/fleet.svg"
run compare-mixed compare "$in/lenet5-a.json" "$in/calibration-b.json"
for fmt in table json html; do run "merge-$fmt" merge "$in/ranks" --format "$fmt" --all; done
run merge-files merge "$in/ranks" --html "$out/merge.html"
run merge-bad merge "$in/lenet5-a.json" "$in/calibration-a.json"
sed -i -e "s|$out|OUT|g" -e "s|$in|IN|g" "$out"/*  # the folders differ between runs
