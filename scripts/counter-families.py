#!/usr/bin/env python3
"""Checks that every counter family folder says which CPUs it fits (counters/README.md, "Which
CPUs a family fits"): each folder of counters/ holds a match file, cpus.match, except generic/
and software/, which fit every CPU and must hold none. Without it no CPU would ever choose the
folder's groups; hwprof says so at run time too, but only where it runs. docs/design.md, "House
rules"; run by `ctest -L house`. Whether the files parse is the unit tests' part
(tests/unit/counters/counter_family_test.cpp).

  scripts/counter-families.py [--root DIR]     (DIR: the repository; counters/ is looked at)

Exit status: 0 when every folder is right, 1 otherwise (each folder named), 2 for a bad
command line or a tree without counters/.
"""

import argparse
import os
import sys

MATCH_FILE = "cpus.match"
EVERY_CPU = {"generic", "software"}


def problems_in(counters):
    problems = []
    for name in sorted(os.listdir(counters)):
        folder = os.path.join(counters, name)
        if not os.path.isdir(folder):
            continue
        has_match = os.path.isfile(os.path.join(folder, MATCH_FILE))
        shown = os.path.join("counters", name)
        if name in EVERY_CPU and has_match:
            problems.append(f"{shown}/{MATCH_FILE}: {name}/ fits every CPU and is never chosen by CPUID; remove the match file")
        elif name not in EVERY_CPU and not has_match:
            problems.append(f"{shown}/: a family folder without {MATCH_FILE}, so no CPU would choose its groups; "
                            f"add one naming the family's CPUs (counters/README.md)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    counters = os.path.join(args.root, "counters")
    if not os.path.isdir(counters):
        print(f"counter-families.py: {counters} is not a folder", file=sys.stderr)
        return 2
    problems = problems_in(counters)
    for p in problems:
        print(p)
    if problems:
        print(f"counter-families.py: {len(problems)} folder(s) of counters/ wrong", file=sys.stderr)
        return 1
    print(f"counter-families.py: every family folder of counters/ has its {MATCH_FILE}; generic/ and software/ have none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
