#!/usr/bin/env python3
"""Checks that every file in src/<stage>/ and include/hwprof/ includes headers of its own stage
or of an earlier one only (docs/design.md, "House rules"), so that a helper that several
stages need lives below them instead of reaching up into a later stage, and so that the
regions library (common, counters, session) includes nothing of the engine above it. A public
header (hwprof/X.hpp) belongs to the stage that implements it (PUBLIC below) and is checked
like an internal one; run by `ctest -L house`.

  scripts/layering.py [--root DIR] [--include DIR]

Exit status: 0 when every include goes the right way, 1 otherwise (each wrong one is listed
with its file and line), 2 for a bad command line, a folder the order does not name or a
public header the table does not name.
"""

import argparse
import os
import re
import sys

# The order of the stages: a stage may include its own headers and those of the stages
# before it. common, counters and session are the regions library (docs/design.md, "Two
# libraries and a module"): first, so that nothing of the engine reaches a program that only
# marks regions. ops defines each op (its table and the element-wise definitions) over the
# model's vocabulary, hwprof/graph.hpp, which is why that header is its. mpi is an add-on
# library over the report module; cli is the last.
ORDER = ["common", "counters", "session", "ops", "graph", "cost", "nn", "calibrate", "profile", "analyze", "report", "mpi", "torch", "cli"]

# The stage each public header belongs to: the stage whose sources implement it.
PUBLIC = {
    "export.hpp": "common",
    "result.hpp": "common",
    "source_text.hpp": "common",
    "statistics.hpp": "common",
    "version.hpp": "common",  # made by CMake from cmake/version.hpp.in
    "atomic_file.hpp": "common",
    "compute_roof.hpp": "common",
    "counters.hpp": "counters",
    "cpu.hpp": "counters",
    "event_group.hpp": "counters",
    "session.hpp": "session",
    "regions.hpp": "session",
    "regions.h": "session",
    "torch.h": "torch",
    "graph.hpp": "ops",  # OpKind, Node, Attributes: what every op definition is written in
    "cost.hpp": "cost",
    "optimizer.hpp": "cost",
    "tensor.hpp": "nn",
    "executor.hpp": "nn",
    "machine.hpp": "calibrate",
    "roofline.hpp": "profile",
    "profile.hpp": "profile",
    "profiler.hpp": "profile",
    "report.hpp": "report",
    "hwprof.hpp": "cli",  # all of the API: for users, never for the library's own sources
}
INCLUDE = re.compile(r'\s*#\s*include\s+["<](\w+)/([\w.]+)[">]')


def stage_of(folder, name):
    """The stage of `#include "folder/name"`, None for a folder that is no stage, or "?" for
    a public header that PUBLIC does not name."""
    if folder == "hwprof":
        return PUBLIC.get(name, "?")
    return folder


def check_file(path, stage, rank, shown, wrong, unknown):
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = stage_of(m.group(1), m.group(2))
            if target == "?":
                unknown.append(f"{shown}:{number}: {m.group(1)}/{m.group(2)} is a public header that PUBLIC in {__file__} "
                               "does not name; add it with the stage that implements it")
            elif target in rank and rank[target] > rank[stage]:
                wrong.append(f"{shown}:{number}: {stage} includes {m.group(1)}/{m.group(2)} of the later stage {target}")


def files_of(root, include, rank):
    """(path, shown path, stage) of every file to check, or an error for a folder without a stage."""
    out = []
    top = os.path.join(root, "..")
    for stage in sorted(os.listdir(root)):
        folder = os.path.join(root, stage)
        if not os.path.isdir(folder):
            continue
        if stage not in rank:
            return None, f"layering.py: {folder}: a stage the order does not name; add it to ORDER in {__file__}"
        for dirpath, _, files in os.walk(folder):
            out += [(os.path.join(dirpath, n), os.path.relpath(os.path.join(dirpath, n), top), stage) for n in sorted(files)]
    if include and os.path.isdir(include):
        for name in sorted(os.listdir(include)):
            path = os.path.join(include, name)
            stage = PUBLIC.get(name)
            if stage is None:
                return None, f"layering.py: {path}: a public header that PUBLIC in {__file__} does not name; add it with its stage"
            out.append((path, os.path.relpath(path, os.path.join(include, "..", "..")), stage))
    return out, None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(here, "..", "src"))
    parser.add_argument("--include", help="the public headers (default: ROOT/../include/hwprof)")
    args = parser.parse_args()
    include = args.include or os.path.join(args.root, "..", "include", "hwprof")
    rank = {stage: i for i, stage in enumerate(ORDER)}
    files, error = files_of(args.root, include, rank)
    if error:
        print(error, file=sys.stderr)
        return 2
    wrong, unknown = [], []
    for path, shown, stage in files:
        check_file(path, stage, rank, shown, wrong, unknown)
    for w in wrong + unknown:
        print(w)
    if unknown:
        print(f"layering.py: {len(unknown)} include(s) of public headers without a stage", file=sys.stderr)
        return 2
    if wrong:
        print(f"layering.py: {len(wrong)} include(s) against the order {' < '.join(ORDER)}; "
              "move what both stages need to the earlier stage (src/common/ for what all share)", file=sys.stderr)
        return 1
    print(f"layering.py: every include in src/ and include/hwprof/ follows {' < '.join(ORDER)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
