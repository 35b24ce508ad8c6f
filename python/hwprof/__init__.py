"""hwprof's Python side: `hwprof.torch` profiles a PyTorch program (docs/torch.md)."""

# The C++ project's version (CMakeLists.txt, project()): pyproject.toml reads it from here, and
# tests/python checks that the two agree.
__version__ = "0.1.0"
