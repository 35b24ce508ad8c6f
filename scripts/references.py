#!/usr/bin/env python3
"""Checks that what the code and the pages cite, a reader can open (docs/design.md, "House
rules"); run by `ctest -L house`. It fails on

  - a file the repository does not have, or a tracker a reader cannot see: a mention of the
    design or style notes that are not in the repository, or of an "issue" with a number;
  - a citation of a page of docs/ (or README.md) that does not exist, or of a section that
    is not one of its headings: `docs/X.md, "Section"`, `docs/X.md "Section"`, `docs/X.md#anchor`
    (a section may be cited by the start of its heading: "Why" for "Why: the rule table");
  - in the pages themselves (README.md, docs/*.md and the other Markdown files of the
    repository): the same, and a link `[text](target)` whose file is not there (the path is
    the page's own folder's, as a Markdown viewer reads it), whose `#anchor` none of the
    target's headings has (`[x](#anchor)`: the page's own), or that a section in quotes
    follows (`[x](other.md), "Section"`) which is not a heading of the target; code blocks
    are not read, and links to web addresses are not followed;
  - a public header of include/hwprof/ that hwprof.hpp does not include (regions.hpp,
    regions.h and torch.h excepted: a program includes them where it marks regions, or
    links hwprof::torch) or that docs/design.md's
    list of public headers (its `include/hwprof/` row) does not name;
  - a `switch` with `case OpKind::...` labels and a `default:`, which keeps the compiler from
    naming an op the switch forgot (docs/adding-an-op.md).

  scripts/references.py [--root DIR]

Exit status: 0 when everything resolves, 1 otherwise (each problem with its file and line),
2 for a bad command line.
"""

import argparse
import os
import re
import sys

# Where code and build files are; tests/fixtures holds data, not prose.
FOLDERS = ["src", "include", "tests", "scripts", "bench", "examples", "cmake"]
TOP_FILES = ["CMakeLists.txt", "CMakePresets.json"]
# tests/house holds the checks' own tests: made-up trees with wrong references on purpose.
SKIP = {os.path.join("tests", "fixtures"), os.path.join("tests", "fuzz", "regressions"), os.path.join("tests", "house")}
EXTENSIONS = (".cpp", ".hpp", ".h", ".c", ".py", ".sh", ".txt", ".cmake", ".in", ".map", ".json", ".dict")
# The pages: README.md and the Markdown of these folders (docs/ first), outside SKIP.
PAGE_FOLDERS = ["docs", "counters", "models", "tests", "python", "examples", "bench", "scripts"]
# Built from parts so that this file does not match itself.
NOTES = re.compile("(" + "DESIGN" + r"|" + "STYLE" + r")\.md")
TRACKER = re.compile(r"\b[Ii]ssues?,? (?:#\d+|\d+\b)")
CITATION = re.compile(r"(?<![\w/.-])(docs/[\w.-]+\.md|README\.md)")
# What may follow a citation: an anchor, or a section in quotes (after a comma or a space).
SECTION = re.compile(r'#([\w-]+)|(?:,\s*|\s+)"([^"\n]+)"')
# A comment's continuation lines: the newline, the indentation and the comment leader.
CONTINUATION = re.compile(r"\s*\n\s*(?://|#|\*)?\s*")
NOT_IN_UMBRELLA = {"hwprof.hpp", "regions.hpp", "regions.h", "torch.h"}


# A Markdown link or image: [text](target) or [text](target "title"); the target has no space.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
WEB = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...


def headings(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a '#' line in a code block is no heading
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+)$", text, flags=re.M)]


def anchor(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(names):
    """Every heading's anchor; a repeated one gets -1, -2, ... after the first, as on GitHub."""
    seen, result = {}, []
    for name in names:
        a = anchor(name)
        result.append(a if a not in seen else f"{a}-{seen[a]}")
        seen[a] = seen.get(a, 0) + 1
    return result


def section_found(section, names):
    return any(h == section or (h.startswith(section) and not h[len(section)].isalnum()) for h in names)


def check_citations(text, shown, root, line_of, problems):
    for m in CITATION.finditer(text):
        target = os.path.join(root, m.group(1))
        if not os.path.isfile(target):
            problems.append(f"{shown}:{line_of(m.start())}: cites {m.group(1)}, which the repository does not have")
            continue
        if not target.endswith(".md"):
            continue
        # The section may go on in the comment's next line: read past the comment leaders.
        rest = CONTINUATION.sub(" ", text[m.end():m.end() + 300])
        s = SECTION.match(rest)
        if not s:
            continue
        names = headings(target)
        if s.group(1) is not None and s.group(1) not in anchors(names):
            problems.append(f"{shown}:{line_of(m.start())}: cites {m.group(1)}#{s.group(1)}, an anchor none of its headings has")
        elif s.group(2) is not None and not section_found(s.group(2).strip(), names):
            problems.append(f"{shown}:{line_of(m.start())}: cites {m.group(1)}, \"{s.group(2).strip()}\", "
                            f"which is not a heading there (headings: {'; '.join(names)})")


def switch_bodies(code):
    """(offset, body) of every switch statement's braces in `code` (comments already removed)."""
    for m in re.finditer(r"\bswitch\s*\(", code):
        start = code.find("{", m.end())
        if start < 0:
            return
        depth = 0
        for i in range(start, len(code)):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                yield m.start(), code[start + 1:i]
                break


def check_switches(text, shown, line_of, problems):
    # Blank out comments and strings, keeping offsets, so that line numbers stay right.
    code = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    for offset, body in switch_bodies(code):
        depth, top = 0, []
        for i, ch in enumerate(body):  # the labels of this switch, not of one nested in it
            depth += {"{": 1, "}": -1}.get(ch, 0)
            top.append(depth == 0)
        flat = "".join(ch if top[i] else " " for i, ch in enumerate(body))
        if re.search(r"\bcase\s+(?:hwprof::)?OpKind::", flat) and re.search(r"\bdefault\s*:", flat):
            problems.append(f"{shown}:{line_of(offset)}: a switch over OpKind with a default: list the ops instead, "
                            "so that the compiler names one it forgets (docs/adding-an-op.md)")


def code_files(root):
    for name in TOP_FILES:
        if os.path.isfile(os.path.join(root, name)):
            yield name
    for folder in FOLDERS:
        for dirpath, dirs, files in os.walk(os.path.join(root, folder)):
            rel = os.path.relpath(dirpath, root)
            dirs[:] = sorted(d for d in dirs if os.path.join(rel, d) not in SKIP and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(EXTENSIONS) or name == "CMakeLists.txt":
                    yield os.path.join(rel, name)


def line_finder(text):
    """line_of(offset): the 1-based line of `text` that holds the character at `offset`."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(offset):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if starts[mid] <= offset else (lo, mid - 1)
        return lo + 1

    return line_of


def check_file(root, shown, problems):
    with open(os.path.join(root, shown), encoding="utf-8", errors="replace") as f:
        text = f.read()
    line_of = line_finder(text)

    if os.path.abspath(os.path.join(root, shown)) == os.path.abspath(__file__):
        return  # its own examples
    for m in NOTES.finditer(text):
        problems.append(f"{shown}:{line_of(m.start())}: cites {m.group(0)}, which is not in the repository; cite the docs/ page that says it")
    for m in TRACKER.finditer(text):
        problems.append(f"{shown}:{line_of(m.start())}: \"{m.group(0)}\" names a tracker a reader cannot see; say what it was")
    check_citations(text, shown, root, line_of, problems)
    if shown.endswith((".cpp", ".hpp", ".h", ".c")):
        check_switches(text, shown, line_of, problems)


def page_files(root):
    if os.path.isfile(os.path.join(root, "README.md")):
        yield "README.md"
    for folder in PAGE_FOLDERS:
        for dirpath, dirs, files in os.walk(os.path.join(root, folder)):
            rel = os.path.relpath(dirpath, root)
            dirs[:] = sorted(d for d in dirs if os.path.join(rel, d) not in SKIP and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".md"):
                    yield os.path.join(rel, name)


def check_link(root, shown, target, after, own_names, line, problems):
    """One link of page `shown` to `target`, followed in the page by the text `after`."""
    path, _, fragment = target.partition("#")
    if path:
        full = os.path.normpath(os.path.join(root, os.path.dirname(shown), path))
        if not os.path.exists(full):
            problems.append(f"{shown}:{line}: links to {target}, but {os.path.relpath(full, root)} is not in the repository")
            return
        if not full.endswith(".md") or os.path.isdir(full):
            return
        names = headings(full)
    else:
        names = own_names
    if fragment and fragment not in anchors(names):
        problems.append(f"{shown}:{line}: links to {target}, an anchor none of {path or 'its own'} headings has")
    section = re.match(r',\s*"([^"\n]+)"', CONTINUATION.sub(" ", after))
    if path and not fragment and section and not section_found(section.group(1).strip(), names):
        problems.append(f"{shown}:{line}: cites {path}, \"{section.group(1).strip()}\", which is not a heading there "
                        f"(headings: {'; '.join(names)})")


def check_page(root, shown, problems):
    """A Markdown page: its citations as in code, and its links."""
    with open(os.path.join(root, shown), encoding="utf-8", errors="replace") as f:
        text = f.read()
    # Code blocks are examples, not references: blank them, keeping the lines where they are.
    text = re.sub(r"^(```+).*?^\1[ \t]*$", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S | re.M)
    line_of = line_finder(text)
    for m in NOTES.finditer(text):
        problems.append(f"{shown}:{line_of(m.start())}: cites {m.group(0)}, which is not in the repository; cite the docs/ page that says it")
    for m in TRACKER.finditer(text):
        problems.append(f"{shown}:{line_of(m.start())}: \"{m.group(0)}\" names a tracker a reader cannot see; say what it was")
    check_citations(text, shown, root, line_of, problems)
    own_names = headings(os.path.join(root, shown))
    for m in LINK.finditer(text):
        target = m.group(1)
        if WEB.match(target):
            continue
        check_link(root, shown, target, text[m.end():m.end() + 300], own_names, line_of(m.start()), problems)


def check_public_headers(root, problems):
    folder = os.path.join(root, "include", "hwprof")
    public = sorted(n for n in os.listdir(folder) if n.endswith((".hpp", ".h")))
    if os.path.isdir(os.path.join(folder, "engine")):  # the engine's face (docs/design.md, "Where things are")
        public += sorted("engine/" + n for n in os.listdir(os.path.join(folder, "engine")) if n.endswith((".hpp", ".h")))
    with open(os.path.join(folder, "hwprof.hpp"), encoding="utf-8") as f:
        umbrella = set(re.findall(r'#\s*include\s+"hwprof/([\w./]+)"', f.read()))
    for name in public:
        if name not in NOT_IN_UMBRELLA and name not in umbrella:
            problems.append(f"include/hwprof/hwprof.hpp: does not include hwprof/{name}, a public header")
    with open(os.path.join(root, "docs", "design.md"), encoding="utf-8") as f:
        row = next((line for line in f if line.startswith("| `include/hwprof/` |")), None)
    if row is None:
        problems.append("docs/design.md: no `include/hwprof/` row in \"Where things are\" to list the public headers")
        return
    for name in public:
        if f"`{name}`" not in row:
            problems.append(f"docs/design.md: the `include/hwprof/` row does not name {name}, a public header")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.root, "include", "hwprof")):
        print(f"references.py: {args.root}: not the repository's top folder (no include/hwprof/)", file=sys.stderr)
        return 2
    problems = []
    for shown in code_files(args.root):
        check_file(args.root, shown, problems)
    for shown in page_files(args.root):
        check_page(args.root, shown, problems)
    check_public_headers(args.root, problems)
    for p in problems:
        print(p)
    if problems:
        print(f"references.py: {len(problems)} reference(s) a reader cannot follow", file=sys.stderr)
        return 1
    print("references.py: every reference in the code and the pages resolves, and every public header is listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
