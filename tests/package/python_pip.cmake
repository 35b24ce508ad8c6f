# The Python package as pip installs it (python/pyproject.toml), offline as on Debian 12: a
# venv with the system's site packages (torch from python3-torch; setuptools and wheel, the
# build backend, from python3-setuptools and python3-wheel) and `pip install
# --no-build-isolation` of a copy of python/ (setuptools builds in place: the source tree
# stays clean). The installed package has no _library.py: it must say where it looked when
# the library is nowhere, and find this build's library through LD_LIBRARY_PATH and profile a
# script with it.
cmake_minimum_required(VERSION 3.25)

set(run_what "pip package test")
include("${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake")

set(python /usr/bin/python3)
execute_process(COMMAND "${python}" -c "import ensurepip, venv, setuptools, wheel" RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0)
  message(STATUS "SKIPPED: ${python} cannot make a venv and build a wheel offline (python3-venv, python3-pip, "
                 "python3-setuptools, python3-wheel: scripts/install-deps.sh)")
  return()
endif()

file(REMOVE_RECURSE "${SCRATCH_DIR}")
file(MAKE_DIRECTORY "${SCRATCH_DIR}")
file(COPY "${HWPROF_SOURCE_DIR}/python" DESTINATION "${SCRATCH_DIR}" PATTERN "build" EXCLUDE PATTERN "*.egg-info" EXCLUDE)
set(venv "${SCRATCH_DIR}/venv")
run("${python}" -m venv --system-site-packages "${venv}")
run("${venv}/bin/python" -m pip install --no-index --no-build-isolation --no-deps --disable-pip-version-check "${SCRATCH_DIR}/python")
# One statement a line: a ';' would split CMake's argument.
run("${venv}/bin/python" -c "import hwprof, hwprof.torch, os\nprint(hwprof.__version__)\nprint(os.path.dirname(hwprof.__file__))")
string(REPLACE "\n" ";" answers "${run_output}")
list(GET answers 0 version)
list(GET answers 1 installed)
if(NOT version STREQUAL VERSION OR NOT installed MATCHES "^${venv}/" OR NOT EXISTS "${installed}/py.typed")
  message(FATAL_ERROR "pip package test: the venv's hwprof is ${version} in ${installed}, expected ${VERSION} in ${venv} with py.typed")
endif()

# Nowhere to be found (unless installed on this machine): the error names the places it tried.
set(clean --unset=HWPROF_TORCH_LIBRARY --unset=HWPROF_REPORT_MODULE --unset=LD_LIBRARY_PATH)
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${clean} "${venv}/bin/python" -c "import hwprof.torch\nprint(hwprof.torch.library_path())"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  if(NOT out MATCHES "^/usr/")
    message(FATAL_ERROR "pip package test: the pip-installed package found a library outside the system's folders: ${out}")
  endif()
  message(STATUS "pip package test: this machine has hwprof installed (${out}): the not-found message is not checked")
else()
  string(FIND "${err}" "libhwprof-torch.so not found; tried HWPROF_TORCH_LIBRARY (not set); hwprof/torch/_library.py (none" said)
  string(FIND "${err}" "${venv}/lib" named)
  if(said EQUAL -1 OR named EQUAL -1)
    message(FATAL_ERROR "pip package test: the not-found error does not name the places tried:\n${err}")
  endif()
endif()

# Through LD_LIBRARY_PATH, a script profiled by the pip-installed launcher. In a sanitized
# build, python3 loads the instrumented library with the ASan runtime preloaded (as the torch
# tests do).
set(preload)
if(CXX_FLAGS MATCHES "sanitize=address")
  execute_process(COMMAND "${CXX_COMPILER}" -print-file-name=libasan.so OUTPUT_VARIABLE asan OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND "${CXX_COMPILER}" -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE cxx OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(preload "LD_PRELOAD=${asan}:${cxx}" "ASAN_OPTIONS=detect_leaks=0")
endif()
get_filename_component(library_dir "${TORCH_LIBRARY}" DIRECTORY)
file(WRITE "${SCRATCH_DIR}/script.py" "import torch\nlayer = torch.nn.Linear(16, 8)\nfor _ in range(3):\n    layer(torch.randn(4, 16))\n")
set(out "${SCRATCH_DIR}/out")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env ${clean} "LD_LIBRARY_PATH=${library_dir}" "HWPROF_REPORT_MODULE=${REPORT_MODULE}"
                        HWPROF_BACKEND=timer ${preload} "${venv}/bin/python" -m hwprof.torch -o "${out}" "${SCRATCH_DIR}/script.py"
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
if(NOT rc EQUAL 0 OR NOT EXISTS "${out}/profile.json")
  message(FATAL_ERROR "pip package test: python -m hwprof.torch from the venv failed (${rc}):\n${stdout}\n${stderr}")
endif()
file(READ "${out}/profile.json" profile)
string(FIND "${profile}" "\"name\": \"Linear\"" at)
if(at EQUAL -1)
  message(FATAL_ERROR "pip package test: the pip-installed hwprof.torch wrote a profile without the Linear module's row")
endif()
message(STATUS "pip package test: pip installed hwprof ${version} into a venv; it named the places it looked, and found and ran ${library_dir}")
