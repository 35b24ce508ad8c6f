#!/usr/bin/env bash
# Installs every Debian 12 package hwprof needs to build, test and benchmark.
# Idempotent: packages already present are left alone; safe to run again.
# Run as root (or with sudo). Nothing is downloaded except Debian packages.
set -euo pipefail

packages=(
  # toolchain
  build-essential g++ cmake ninja-build pkg-config git ca-certificates
  # libraries, each with what hwprof uses it for
  libopenblas-dev        # GEMM kernels and the GEMM ceiling
  libpapi-dev            # PAPI counter backend
  libpfm4-dev            # event name -> perf_event encoding
  libdw-dev              # sampled addresses -> function names (elfutils' libdwfl: ELF symbols)
  libcli11-dev           # command line
  nlohmann-json3-dev     # model specs, reports, calibration files
  libfmt-dev             # formatting (GCC 12 has no <format>)
  libgtest-dev libgmock-dev  # tests
  libbenchmark-dev       # microbenchmarks
  libonnx-dev libprotobuf-dev  # .onnx models (protobuf types, checker, shape inference)
  libopenmpi-dev openmpi-bin   # hwprof::mpi (merged ranks at MPI_Finalize) and its mpirun tests
  python3-torch libtorch-dev python3-torchvision  # hwprof::torch (the PyTorch observer), its example and tests
  python3-dev            # hwprof.torch._native: the Python package's module calls in C
  # tools used by tests and benchmarks
  likwid                 # likwid-bench: independent peer for calibration
  linux-perf             # perf stat: peer for counter checks
  stress-ng              # a busy neighbour: calibration must say it was contended
  python3                # peer-comparison scripts
  python3-pytest python3-mypy  # the Python package's units and type hints (tests/python, python/pyproject.toml)
  python3-venv python3-pip python3-setuptools python3-wheel  # `pip install ./python` offline (package.python_pip)
  gfortran               # the package test builds a Fortran program against the C API
  # fuzzing (scripts/fuzz.sh, docs/fuzzing.md): clang++; libFuzzer and the sanitizer runtimes
  # (libclang-rt-dev: clang only recommends them, and recommendations are not installed here);
  # lld; llvm-symbolizer (package llvm) for readable stacks
  clang libclang-rt-dev lld llvm
  clang-format           # the layout of the sources (.clang-format, scripts/format.sh, ctest -L house)
)

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then exec sudo -E bash "$0" "$@"; fi
  echo "install-deps.sh: must run as root (apt-get install needs it)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
