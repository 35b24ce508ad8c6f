#!/usr/bin/env python3
"""The house checks themselves (docs/design.md, "House rules"): scripts/references.py,
scripts/layering.py and scripts/counter-families.py run on small made-up trees, each with one
problem, must name it (and a tree without problems must pass), so that a check that silently
stopped checking is caught.

  tests/house/house_scripts_test.py      (ctest house.scripts; the standard library only)
"""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")

DESIGN = """# Design

## Where things are

| folder | holds |
|---|---|
| `include/hwprof/` | `export.hpp`, `engine/graph.hpp`, `engine/report.hpp`, `regions.h`, `hwprof.hpp` |

## House rules: what a change keeps

Text.
"""
CLEAN = {
    "docs/design.md": DESIGN,
    "README.md": "# Tool\n\n## Model specs\n\n```\n# not a heading\n```\n",
    "include/hwprof/export.hpp": "#pragma once\n",
    "include/hwprof/engine/graph.hpp": '#pragma once\n#include "hwprof/export.hpp"\nenum class OpKind { a, b };\n',
    "include/hwprof/engine/report.hpp": '#pragma once\n#include "hwprof/engine/graph.hpp"\n',
    "include/hwprof/regions.h": '#include "hwprof/export.hpp"\n',
    "include/hwprof/hwprof.hpp": '#pragma once\n#include "hwprof/export.hpp"\n#include "hwprof/engine/graph.hpp"\n'
                                 '#include "hwprof/engine/report.hpp"\n',
    "src/common/a.cpp": '#include "hwprof/export.hpp"\n// docs/design.md, "House rules" and docs/design.md, "Where\n'
                        '// things are"; README.md "Model specs"; docs/design.md#where-things-are.\n',
    "src/graph/g.cpp": ('#include "common/a.hpp"\n#include "hwprof/engine/graph.hpp"\n'
                        "int f(OpKind k, int i) {\n  switch (k) {\n    case OpKind::a:\n      switch (i) {\n"
                        "        default:\n          return 1;\n      }\n    case OpKind::b:  // default: in a comment\n"
                        "      return 2;\n  }\n  return 0;\n}\n"),
    "src/report/r.cpp": '#include "ops/o.hpp"\n#include "hwprof/engine/report.hpp"\n',
    "counters/README.md": "# Counter event groups\n\n[The design](../docs/design.md#house-rules-what-a-change-keeps)\n",
    "docs/guide.md": ("# Guide\n\n## Two words\n\n## Two words\n\n[d](design.md#where-things-are), [r](../README.md#model-specs), "
                      "[t](#two-words-1), [s](../src/common/a.cpp), [w](https://example.org/x.md#y);\n[d](design.md), \"House\n"
                      "rules\"; docs/design.md, \"Where things are\".\n\n```\n[x](nothing.md), issue #3\n```\n"),
    "counters/zen9/cpus.match": "vendor AuthenticAMD family 0x1A models 0x00-0x2F\n",
    "counters/zen9/ipc.txt": "TITLE IPC\n",
    "counters/generic/ipc.txt": "TITLE IPC\n",
    "counters/software/software.txt": "TITLE Software\n",
}


def run(script, root, *args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, script), *args], cwd=root, capture_output=True,
                          text=True, timeout=60)


class Tree:
    """A made-up repository: CLEAN with some files changed (None removes one)."""

    def __init__(self, changes=None):
        self.dir = tempfile.TemporaryDirectory()
        files = dict(CLEAN)
        files.update(changes or {})
        for name, text in files.items():
            if text is None:
                continue
            path = os.path.join(self.dir.name, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

    def references(self):
        with self.dir:
            return run("references.py", self.dir.name, "--root", self.dir.name)

    def layering(self):
        with self.dir:
            return run("layering.py", self.dir.name, "--root", os.path.join(self.dir.name, "src"))

    def counter_families(self):
        with self.dir:
            return run("counter-families.py", self.dir.name, "--root", self.dir.name)


class References(unittest.TestCase):
    def expect(self, changes, *lines):
        r = Tree(changes).references()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for line in lines:
            self.assertIn(line, r.stdout)

    def test_a_clean_tree_passes(self):
        r = Tree().references()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_notes_outside_the_repository(self):
        self.expect({"src/common/b.cpp": "// As DESIGN.md says.\n"}, "src/common/b.cpp:1: cites DESIGN.md")
        self.expect({"CMakeLists.txt": "\n# (STYLE.md)\n"}, "CMakeLists.txt:2: cites STYLE.md")

    def test_tracker_numbers(self):
        self.expect({"tests/t.py": "# see issue #12\n"}, "tests/t.py:1: \"issue #12\" names a tracker")
        self.expect({"bench/b.sh": "# Issue 15's goal\n"}, "bench/b.sh:1:")

    def test_a_page_that_does_not_exist(self):
        self.expect({"src/common/b.cpp": "// docs/nothing.md\n"}, "src/common/b.cpp:1: cites docs/nothing.md, which the repository")

    def test_a_section_that_is_not_a_heading(self):
        self.expect({"src/common/b.cpp": '// docs/design.md, "Stages"\n'}, 'cites docs/design.md, "Stages", which is not a heading')
        self.expect({"src/common/b.cpp": '// docs/design.md, "Hou"\n'}, '"Hou", which is not a heading')  # a word's start
        self.expect({"src/common/b.cpp": '// README.md, "not a heading"\n'}, "which is not a heading")  # in a code block
        self.expect({"src/common/b.cpp": "// docs/design.md#stages\n"}, "an anchor none of its headings has")

    def test_the_pages_links_and_citations(self):
        self.expect({"docs/a.md": "[x](nothing.md)\n"}, "docs/a.md:1: links to nothing.md, but docs/nothing.md is not in the repository")
        self.expect({"docs/a.md": "\n[x](design.md#stages)\n"}, "docs/a.md:2: links to design.md#stages, an anchor none of")
        self.expect({"README.md": "# Tool\n\n[x](#nowhere)\n"}, "README.md:3: links to #nowhere, an anchor none of its own")
        self.expect({"docs/a.md": "[two](guide.md#two-words-2)\n"}, "links to guide.md#two-words-2")  # only one repeat
        self.expect({"docs/a.md": '[d](design.md), "Stages"\n'}, 'docs/a.md:1: cites design.md, "Stages", which is not a heading')
        self.expect({"docs/a.md": 'as docs/design.md, "Stages" says\n'}, 'docs/a.md:1: cites docs/design.md, "Stages"')
        self.expect({"models/README.md": "[r](../README.md#counting-convention)\n"}, "models/README.md:1: links to ../README.md#")
        self.expect({"docs/a.md": "see issue #3\n"}, "docs/a.md:1: \"issue #3\" names a tracker")

    def test_public_headers_in_the_umbrella_and_the_list(self):
        self.expect({"include/hwprof/cpu.hpp": "#pragma once\n"}, "hwprof.hpp: does not include hwprof/cpu.hpp",
                    "the `include/hwprof/` row does not name cpu.hpp")

    def test_a_default_in_a_switch_over_opkind(self):
        code = "int f(OpKind k) {\n  switch (k) {\n    case OpKind::a:\n      return 1;\n    default:\n      return 0;\n  }\n}\n"
        self.expect({"src/graph/h.cpp": code}, "src/graph/h.cpp:2: a switch over OpKind with a default")


class Layering(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        r = Tree().layering()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_an_earlier_stage_including_a_later_ones_public_header(self):
        r = Tree({"src/common/a.cpp": '#include "hwprof/engine/report.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/common/a.cpp:1: common includes hwprof/engine/report.hpp of the later stage report", r.stdout)

    def test_the_regions_library_below_the_engine(self):
        r = Tree({"src/session/s.cpp": '#include "nn/tensor_ops.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("session includes nn/tensor_ops.hpp of the later stage nn", r.stdout)

    def test_a_public_header_including_a_later_stage(self):
        r = Tree({"include/hwprof/engine/graph.hpp": '#include "hwprof/engine/report.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("include/hwprof/engine/graph.hpp:1: ops includes hwprof/engine/report.hpp", r.stdout)

    def test_the_regions_library_includes_no_report_or_libdw_folder(self):
        r = Tree({"src/sampling/s.cpp": '#include "symbols/symbols.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/sampling/s.cpp:1: the regions library (sampling) includes symbols/symbols.hpp of the report library (symbols)",
                      r.stdout)

    def test_the_report_library_includes_no_engine_folder(self):
        # A later stage by the order, but of the engine: what the report module cannot link.
        r = Tree({"src/report/r.cpp": '#include "profile/workload.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("the report library (report) includes profile/workload.hpp of the engine library (profile)", r.stdout)

    def test_a_library_includes_no_system_header_of_what_it_does_not_link(self):
        r = Tree({"src/counters/c.cpp": "#include <elfutils/libdw.h>\n", "src/placement/p.cpp": "#include <cblas.h>\n"}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/counters/c.cpp:1: the regions library (counters) includes <elfutils/libdw.h>", r.stdout)
        self.assertIn("src/placement/p.cpp:1: the report library (placement) includes <cblas.h>", r.stdout)

    def test_the_regions_library_includes_only_its_public_face(self):
        r = Tree({"src/session/s.cpp": '#include "hwprof/session.hpp"\n#include "hwprof/engine/graph.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/session/s.cpp:2: the regions library (session) includes hwprof/engine/graph.hpp, which is not of its public face",
                      r.stdout)
        self.assertNotIn("s.cpp:1:", r.stdout)

    def test_only_the_observers_include_the_sessions_extension(self):
        r = Tree({"src/torch/t.cpp": '#include "session/observer_hooks.hpp"\n',
                  "src/placement/p.cpp": '#include "session/observer_hooks.hpp"\n'}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/placement/p.cpp:1: placement includes session/observer_hooks.hpp, which only mpi, session, torch may include",
                      r.stdout)
        self.assertNotIn("t.cpp", r.stdout)

    def test_a_stage_opens_its_own_namespace_only(self):
        r = Tree({"src/placement/own.cpp": "namespace hwprof::placement {\n}  // namespace hwprof::placement\n",
                  "src/placement/api.cpp": "namespace hwprof {\nnamespace placement {\n}\n}  // namespace hwprof\n",
                  "src/placement/other.cpp": "namespace hwprof::graph {\n}\n",
                  "src/placement/nested.cpp": "namespace hwprof {\nnamespace analysis {\n}\n}  // namespace hwprof\n",
                  "src/placement/old.cpp": "namespace hwprof::detail {\n}\n",
                  "src/analyze/a.cpp": "namespace hwprof::analysis::inner {\n}\n",
                  "src/session/d.cpp": "namespace hwprof {\nnamespace detail {\n}\n}  // namespace hwprof\n"}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/placement/other.cpp:1: placement opens hwprof::graph, the namespace of graph; "
                      "its code belongs in hwprof::placement", r.stdout)
        self.assertIn("src/placement/nested.cpp:2: placement opens hwprof::analysis, the namespace of analyze", r.stdout)
        self.assertIn("src/placement/old.cpp:1: placement opens hwprof::detail, a namespace of no stage", r.stdout)
        for fine in ("placement/own.cpp", "placement/api.cpp", "analyze/a.cpp", "session/d.cpp"):
            self.assertNotIn(fine, r.stdout)

    def test_the_stages_namespaces_open_each_other_in_order(self):
        chain = "".join(f"namespace hwprof::{a} {{\nusing namespace {b};\n}}\n" for a, b in (("counters", "common"),))
        r = Tree({"src/common/stages.hpp": chain}).layering()
        self.assertEqual(r.returncode, 1)
        self.assertIn("stages.hpp: the namespaces do not open each other in the order common < counters <", r.stdout)
        self.assertIn("want counters opens common, sampling opens counters", r.stdout)

    def test_a_public_header_without_a_stage(self):
        r = Tree({"include/hwprof/new_thing.hpp": "#pragma once\n"}).layering()
        self.assertEqual(r.returncode, 2)
        self.assertIn("new_thing.hpp: a public header that PUBLIC", r.stderr)


class CounterFamilies(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        r = Tree().counter_families()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_family_folder_without_a_match_file(self):
        r = Tree({"counters/zen9/cpus.match": None}).counter_families()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("counters/zen9/: a family folder without cpus.match", r.stdout)

    def test_a_match_file_in_generic_or_software(self):
        for folder in ("generic", "software"):
            r = Tree({f"counters/{folder}/cpus.match": "vendor AuthenticAMD family 0x1A models 0x02\n"}).counter_families()
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn(f"counters/{folder}/cpus.match: {folder}/ fits every CPU", r.stdout)

    def test_a_tree_without_counters(self):
        files = {name: None for name in CLEAN if name.startswith("counters/")}
        r = Tree(files).counter_families()
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
