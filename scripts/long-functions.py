#!/usr/bin/env python3
"""Lists the functions in src/ longer than N lines (default 80), and fails when one of them has
no reason: a comment just above it that says "Long:" and why (a dispatch over every op, a
reader of every field of a documented format). docs/design.md, "House rules"; run by `ctest -L house`.

  scripts/long-functions.py [--max N] [--root DIR]

A function is a line that opens a brace at column 0 (free functions; namespaces are not
indented here) or column 2 (members defined inside a class) and is not a namespace, type,
lambda or statement, up to the '}' at the same column. Its length counts both braces.
Exit status: 0 when every long function has its reason, 1 otherwise, 2 for a bad command line.
"""

import argparse
import os
import re
import sys

SKIP = re.compile(r'\s*(namespace|struct|class|enum|union|extern "C" \{|HWPROF|if |for |while |switch|else|do |try|catch|case |'
                  r'default:|return |static const|const |constexpr |auto |inline constexpr|\[)')


def long_functions(path, limit):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if indent in (0, 2) and line.strip() and line.rstrip().endswith("{") and "(" in line and not SKIP.match(line) \
                and " = " not in line.split("(")[0]:
            close = " " * indent + "}"
            j = i + 1
            while j < len(lines) and not (lines[j].startswith(close) and (len(lines[j]) == indent + 1 or lines[j][indent + 1] in " ;/")):
                j += 1
            length = j - i + 1
            if length > limit:
                k = i - 1
                reason = False
                while k >= 0 and (lines[k].lstrip().startswith("//") or not lines[k].strip() or lines[k].lstrip().startswith("template")):
                    reason = reason or "Long:" in lines[k]
                    k -= 1
                yield length, i + 1, line.strip(), reason
            if indent == 0:
                i = j
        i += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
    args = parser.parse_args()
    found = []
    for folder, _, files in os.walk(args.root):
        for name in sorted(files):
            if name.endswith((".cpp", ".hpp", ".h", ".c")):
                path = os.path.join(folder, name)
                found += [(n, os.path.relpath(path, os.path.dirname(args.root)), line, sig, why)
                          for n, line, sig, why in long_functions(path, args.max)]
    found.sort(reverse=True)
    missing = [f for f in found if not f[4]]
    for n, path, line, sig, why in found:
        print(f"{n:5d} {path}:{line} {'' if why else 'NO REASON '}{sig[:100]}")
    print(f"{len(found)} functions over {args.max} lines; {len(missing)} without a reason (a '// Long: why' comment above it)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
