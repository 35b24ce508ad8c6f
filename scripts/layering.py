#!/usr/bin/env python3
"""Checks that every file in src/<stage>/ includes internal headers of its own stage or of an
earlier one only (docs/design.md, "The stages"), so that a helper that several stages need
lives below them (in src/common/) instead of reaching back into a later stage. Issue #19's
rule; run by `ctest -L house`. Public headers (hwprof/...) are the API and not checked.

  scripts/layering.py [--root DIR]

Exit status: 0 when every include goes the right way, 1 otherwise (each wrong one is listed
with its file and line), 2 for a bad command line or a folder the order does not name.
"""

import argparse
import os
import re
import sys

# The order of the stages: a stage may include its own headers and those of the stages
# before it. mpi is an add-on library over the report module; cli is the last.
ORDER = ["common", "graph", "cost", "nn", "counters", "session", "calibrate", "profile", "report", "mpi", "cli"]
INCLUDE = re.compile(r'\s*#\s*include\s+"(\w+)/')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    args = parser.parse_args()
    rank = {stage: i for i, stage in enumerate(ORDER)}
    wrong = []
    for stage in sorted(os.listdir(args.root)):
        folder = os.path.join(args.root, stage)
        if not os.path.isdir(folder):
            continue
        if stage not in rank:
            print(f"layering.py: {folder}: a stage the order does not name; add it to ORDER in {__file__}", file=sys.stderr)
            return 2
        for dirpath, _, files in os.walk(folder):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in rank and rank[m.group(1)] > rank[stage]:
                            wrong.append(f"{os.path.relpath(path, os.path.join(args.root, '..'))}:{number}: {stage} includes "
                                         f"{line.strip()[len('#include '):]} of the later stage {m.group(1)}")
    for w in wrong:
        print(w)
    if wrong:
        print(f"layering.py: {len(wrong)} include(s) against the order {' < '.join(ORDER)}; "
              "move what both stages need to src/common/ (or the earlier stage)", file=sys.stderr)
        return 1
    print(f"layering.py: every include in src/ follows {' < '.join(ORDER)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
