#!/usr/bin/env python3
"""Checks the include graph of src/ and include/hwprof/ two ways (docs/design.md, "Where things
are" and "House rules"), run by `ctest -L house`:

- the order of the stages: every file in src/<stage>/ includes headers of its own stage or of
  an earlier one only, so that a helper several stages need lives below them instead of
  reaching up into a later stage;
- the libraries: each stage belongs to one library (LIBRARY), and a library's sources include
  the internal headers (src/<folder>/...) of its own stages and of the libraries it is built
  on (BUILT_ON) only, public headers of its face only where the library has one (the regions
  library: REGIONS_FACE), and none of the system headers of what it does not link
  (FORBIDDEN_SYSTEM: libdw, OpenBLAS, OpenMP, ONNX, libtorch, MPI, fmt). So the regions
  library never includes a report, libdw or engine folder, and the report module's code
  nothing of the engine; and an internal header meant for some stages only (ONLY_FOR: the
  observer's extension of a session) is included by those alone;
- the namespaces: the code of src/<folder>/ is in its stage's namespace, hwprof::<folder>
  (NAMESPACE names the three that differ), or in hwprof for the public API it implements; a
  stage opens no other stage's namespace (OTHER_NAMESPACES names the few outside namespaces a
  stage may open), and src/common/stages.hpp, which lets each stage's namespace see the one
  before it, follows ORDER.

A public header (hwprof/X.hpp) belongs to the stage that implements it (PUBLIC below) and is
checked like an internal one.

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
# before it. The regions library's stages come first, so that nothing of the report module or
# the engine reaches a program that only marks regions; then the report library's and the
# engine's, interleaved where the engine builds a stage that the report library's next stage
# reads (machine before calibrate, placement before profile). ops defines each op (its table
# and the element-wise definitions) over the model's vocabulary, hwprof/engine/graph.hpp, which is
# why that header is its. report_module, mpi, torch and cli are the composition roots.
ORDER = ["common", "counters", "sampling", "session",
         "ops", "symbols", "graph", "cost", "nn", "machine", "calibrate", "placement", "profile", "analyze", "report",
         "report_module", "mpi", "torch", "cli"]

# The library each stage is built into (CMakeLists.txt, "the libraries"), and what each
# library is built on. The composition roots are libraries of their own.
LIBRARY = {
    "common": "regions", "counters": "regions", "sampling": "regions", "session": "regions",
    "ops": "report", "symbols": "report", "machine": "report", "placement": "report", "analyze": "report", "report": "report",
    "graph": "engine", "cost": "engine", "nn": "engine", "calibrate": "engine", "profile": "engine",
    "report_module": "report_module", "mpi": "mpi", "torch": "torch", "cli": "cli",
}
BUILT_ON = {
    "regions": {"regions"},
    "report": {"regions", "report"},
    "engine": {"regions", "report", "engine"},
    "report_module": {"regions", "report", "report_module"},
    "mpi": {"regions", "mpi"},
    # The observer's analytic counts: the op definitions and the engine's graph and cost stages
    # (src/torch/CMakeLists.txt compiles those three files into it).
    "torch": {"regions", "report", "engine", "torch"},
    "cli": {"regions", "report", "engine", "cli"},
}
# Each stage's namespace (src/common/stages.hpp): the folder's name, except where the name is
# taken (hwprof::analyze() and hwprof::calibrate() are public functions; ::torch is libtorch's).
NAMESPACE = {stage: stage for stage in ORDER} | {"analyze": "analysis", "calibrate": "calibration", "torch": "pytorch"}
# Namespaces a stage may open besides its own and hwprof: the session stage defines the public
# headers' inline details (hwprof::detail, include/hwprof/regions.hpp) and the observer's hooks
# (hwprof::observer); the CLI forward-declares CLI11's classes.
OTHER_NAMESPACES = {"session": {"detail", "observer"}, "cli": {"CLI"}}
STAGES_HEADER = "common/stages.hpp"
# The public headers the regions library may include: its face, and what that needs. The other
# libraries may include any public header (the report library reads the engine face's types;
# its module's link, --no-undefined, proves it calls no engine code).
REGIONS_FACE = {"export.hpp", "result.hpp", "source_text.hpp", "statistics.hpp", "version.hpp", "atomic_file.hpp",
                "compute_roof.hpp", "counters.hpp", "cpu.hpp", "event_group.hpp", "session.hpp", "regions.hpp", "regions.h",
                "torch.h"}
# Internal headers that only some stages may include: the observer's extension of a session
# (the hooks hwprof::torch calls besides the public Session API) is for the observers.
ONLY_FOR = {"session/observer_hooks.hpp": {"session", "torch", "mpi"}}
# System headers by prefix that a library's sources may not include: what it does not link.
ENGINE_ONLY = ["cblas.h", "openblas", "omp.h", "onnx/", "google/protobuf"]
TORCH_ONLY = ["torch/", "ATen/", "c10/", "Python.h"]
FORBIDDEN_SYSTEM = {
    "regions": ["elfutils/", "dwarf.h", "libelf", "fmt/", "mpi.h"] + ENGINE_ONLY + TORCH_ONLY,
    "report": ["mpi.h"] + ENGINE_ONLY + TORCH_ONLY,
    "report_module": ["mpi.h"] + ENGINE_ONLY + TORCH_ONLY,
    "engine": ["mpi.h"] + TORCH_ONLY,
    "mpi": ["elfutils/", "fmt/"] + ENGINE_ONLY + TORCH_ONLY,
    "torch": ["elfutils/", "mpi.h"] + ENGINE_ONLY,
    "cli": ["mpi.h"] + TORCH_ONLY,
}

# The stage each public header belongs to: the stage whose sources implement it (the earliest
# where two do).
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
    "engine/graph.hpp": "ops",  # OpKind, Node, Attributes: what every op definition is written in
    "engine/optimizer.hpp": "ops",  # with optimizer_name and parse_optimizer (src/ops/optimizer_kind.cpp)
    "engine/cost.hpp": "cost",
    "engine/tensor.hpp": "nn",
    "engine/executor.hpp": "nn",
    "engine/machine.hpp": "machine",
    "engine/roofline.hpp": "placement",
    "engine/profile.hpp": "placement",
    "engine/profiler.hpp": "placement",  # profile_regions (placement) and the engine's profile() (profile)
    "engine/report.hpp": "report",
    "hwprof.hpp": "cli",  # all of the API: for users, never for the library's own sources
}
INCLUDE = re.compile(r'\s*#\s*include\s+["<](\w+)/([\w./]+)[">]')
ANY_INCLUDE = re.compile(r'\s*#\s*include\s+([<"])([^">]+)[">]')


def stage_of(folder, name):
    """The stage of `#include "folder/name"`, None for a folder that is no stage, or "?" for
    a public header that PUBLIC does not name."""
    if folder == "hwprof":
        return PUBLIC.get(name, "?")
    return folder


def library_rule(line, stage):
    """What is wrong with `line` for the library of `stage`, or None."""
    library = LIBRARY.get(stage)
    if library is None:
        return None
    m = ANY_INCLUDE.match(line)
    if not m:
        return None
    quote, target = m.group(1), m.group(2)
    folder, _, name = target.partition("/")
    if quote == '"' and target in ONLY_FOR and stage not in ONLY_FOR[target]:
        return f"{stage} includes {target}, which only {', '.join(sorted(ONLY_FOR[target]))} may include (ONLY_FOR)"
    if quote == '"' and folder in LIBRARY:
        other = LIBRARY[folder]
        if other not in BUILT_ON[library]:
            return f"the {library} library ({stage}) includes {target} of the {other} library ({folder})"
        return None
    if folder == "hwprof" and library == "regions" and name not in REGIONS_FACE:
        return f"the regions library ({stage}) includes {target}, which is not of its public face (REGIONS_FACE)"
    if quote == "<" or folder not in LIBRARY:
        for prefix in FORBIDDEN_SYSTEM.get(library, []):
            if target.startswith(prefix):
                return f"the {library} library ({stage}) includes <{target}>, a header of what it does not link"
    return None


OPENS = re.compile(r"^namespace (hwprof::)?(\w+)(::\w+)* \{")


def namespace_rule(line, stage, inside_hwprof):
    """What is wrong with the namespace `line` opens in a file of `stage`, or None."""
    m = OPENS.match(line)
    if not m or stage not in NAMESPACE:
        return None
    name = m.group(2)
    if not m.group(1) and name == "hwprof":
        return None
    if not m.group(1) and not inside_hwprof:
        if name in OTHER_NAMESPACES.get(stage, set()):
            return None
        return f"{stage} opens the namespace {name} outside hwprof"
    if name == NAMESPACE[stage] or name in OTHER_NAMESPACES.get(stage, set()):
        return None
    owner = next((s for s, n in NAMESPACE.items() if n == name), None)
    what = f"the namespace of {owner}" if owner else "a namespace of no stage"
    return f"{stage} opens hwprof::{name}, {what}; its code belongs in hwprof::{NAMESPACE[stage]} (src/{STAGES_HEADER})"


def stages_header_rule(path):
    """What is wrong with the order of src/common/stages.hpp, or None: each stage's namespace
    opens the one before it in ORDER."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    chain = re.findall(r"namespace hwprof::(\w+) \{\s*using namespace (\w+);", text)
    want = [NAMESPACE[s] for s in ORDER if s != "report_module"]
    pairs = list(zip(want[1:], want[:-1]))
    if chain != pairs:
        return (f"{path}: the namespaces do not open each other in the order {' < '.join(want)}; "
                f"want {', '.join(f'{a} opens {b}' for a, b in pairs)}")
    return None


def check_file(path, stage, rank, shown, wrong, unknown):
    inside_hwprof = False
    check_namespaces = not shown.replace(os.sep, "/").endswith(STAGES_HEADER)
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("namespace hwprof {"):
                inside_hwprof = True
            elif line.startswith("}  // namespace hwprof") and line.strip() == "}  // namespace hwprof":
                inside_hwprof = False
            problem = namespace_rule(line, stage, inside_hwprof) if check_namespaces else None
            if problem:
                wrong.append(f"{shown}:{number}: {problem}")
            problem = library_rule(line, stage)
            if problem:
                wrong.append(f"{shown}:{number}: {problem}")
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
        names = [n for n in sorted(os.listdir(include)) if os.path.isfile(os.path.join(include, n))]
        engine = os.path.join(include, "engine")
        if os.path.isdir(engine):
            names += ["engine/" + n for n in sorted(os.listdir(engine))]
        for name in names:
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
    stages_header = os.path.join(args.root, STAGES_HEADER)
    if os.path.isfile(stages_header):
        problem = stages_header_rule(stages_header)
        if problem:
            wrong.append(problem)
    for path, shown, stage in files:
        check_file(path, stage, rank, shown, wrong, unknown)
    for w in wrong + unknown:
        print(w)
    if unknown:
        print(f"layering.py: {len(unknown)} include(s) of public headers without a stage", file=sys.stderr)
        return 2
    if wrong:
        print(f"layering.py: {len(wrong)} include(s) against the order {' < '.join(ORDER)} or the libraries; "
              "move what both stages need to the earlier stage (src/common/ for what all share), "
              "and what a library needs of a library above it down into its own", file=sys.stderr)
        return 1
    print(f"layering.py: every include in src/ and include/hwprof/ follows {' < '.join(ORDER)} and the libraries' rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
