# Installs the build into a scratch prefix, given at install time and other than the prefix it
# was configured for (the install must be relocatable: `cmake --install --prefix P`), and
# builds tests/package/consumer against it: the
# full library once through find_package(hwprof) and once through pkg-config hwprof; the
# regions library from C++ through find_package (hwprof::regions) and from C through
# pkg-config hwprof-regions. The region programs run with HWPROF_OUTPUT, and their reports
# must hold every region once, the FLOPs and bytes given to set_work, and a roofline point for
# each region with work. Every program finds the report module in the scratch prefix without
# HWPROF_REPORT_MODULE, through what find_package or pkg-config told its build.
cmake_minimum_required(VERSION 3.25)

set(run_what "package test")
set(run_echo ON)
include("${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake")

file(REMOVE_RECURSE "${SCRATCH_DIR}")
set(prefix "${SCRATCH_DIR}/prefix")
if(prefix STREQUAL CONFIGURED_PREFIX)
  message(FATAL_ERROR "package test: the scratch prefix is the configured one (${prefix}): it would not test a relocated install")
endif()
run("${CMAKE_COMMAND}" --install "${HWPROF_BUILD_DIR}" --prefix "${prefix}")

foreach(required include/hwprof/hwprof.hpp include/hwprof/version.hpp include/hwprof/regions.hpp include/hwprof/regions.h
                 bin/hwprof lib/hwprof/libhwprof-report.so lib/pkgconfig/hwprof-regions.pc
                 share/hwprof/models/resnet18.json lib/cmake/hwprof/hwprofConfig.cmake
                 # Each family's match file (counters/README.md), without which no CPU chooses it.
                 share/hwprof/counters/skylake-sp/cpus.match share/hwprof/counters/icelake-sp/cpus.match
                 share/hwprof/counters/sapphire-rapids/cpus.match share/hwprof/counters/granite-rapids/cpus.match
                 share/hwprof/counters/zen2/cpus.match share/hwprof/counters/zen3/cpus.match
                 share/hwprof/counters/zen4/cpus.match share/hwprof/counters/zen5/cpus.match)
  if(NOT EXISTS "${prefix}/${required}")
    file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
    message(FATAL_ERROR "package test: ${required} was not installed; installed:\n${installed}")
  endif()
endforeach()

# The installed code holds no path into this build tree, from which it could load a report
# module (docs/regions.md, "Where the report module is loaded from"): the libraries' strings
# must not name the build tree's module folder. (The build folder itself may appear in the
# debug information of a build with -g; its lib/ may not.)
file(GLOB installed_code "${prefix}/lib/libhwprof*" "${prefix}/lib/hwprof/*.so" "${prefix}/bin/hwprof")
if(NOT installed_code)
  message(FATAL_ERROR "package test: no library was installed in ${prefix}/lib")
endif()
string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" build_lib_regex "${HWPROF_BUILD_DIR}/lib")
foreach(code IN LISTS installed_code)
  if(IS_SYMLINK "${code}")
    continue()
  endif()
  file(STRINGS "${code}" build_paths REGEX "${build_lib_regex}")
  if(build_paths)
    message(FATAL_ERROR "package test: the installed ${code} names the build tree (${HWPROF_BUILD_DIR}/lib): ${build_paths}")
  endif()
endforeach()
# Nor does the installed report module need OpenBLAS, OpenMP, ONNX or protobuf.
execute_process(COMMAND "${CMAKE_COMMAND}" "-DMODULE=${prefix}/lib/hwprof/libhwprof-report.so" -P "${CMAKE_CURRENT_LIST_DIR}/module_needs.cmake"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "package test: the installed report module: ${out}${err}")
endif()

# The installed CLI reads the models of its own prefix.
execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=HWPROF_MODEL_PATH "${prefix}/bin/hwprof" summary lenet5
                RESULT_VARIABLE rc OUTPUT_VARIABLE summary ERROR_VARIABLE err)
string(FIND "${summary}" "(${prefix}/share/hwprof/models/lenet5.json)" at)
if(NOT rc EQUAL 0 OR at EQUAL -1)
  message(FATAL_ERROR "package test: the installed hwprof did not read ${prefix}/share/hwprof/models/lenet5.json (${rc}):\n${summary}\n${err}")
endif()

# 1. find_package(hwprof)
run("${CMAKE_COMMAND}" -S "${HWPROF_SOURCE_DIR}/tests/package/consumer" -B "${SCRATCH_DIR}/consumer"
    -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run("${CMAKE_COMMAND}" --build "${SCRATCH_DIR}/consumer")
run("${SCRATCH_DIR}/consumer/consumer")

# 2. pkg-config: the .pc files find the prefix from their own folder, so their flags point
#    at the scratch prefix with nothing else said. Programs are built as users build them, by
#    a shell that splits `$(pkg-config ...)` into words without reading quotes: the flags may
#    hold no quoted define (a `\"` reaches the compiler as it is: "stray '\' in program").
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs hwprof
                OUTPUT_VARIABLE pc_flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "package test: pkg-config does not know hwprof")
endif()
foreach(wanted "-I${prefix}/lib/pkgconfig/../../include" "-L${prefix}/lib/pkgconfig/../../lib")
  string(FIND "${pc_flags}" "${wanted}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "package test: pkg-config hwprof gives no ${wanted} (the installed prefix is ${prefix}): ${pc_flags}")
  endif()
endforeach()
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS} ${LINKER_FLAGS}")
string(JOIN " " extra_words ${extra_flags})
# Runs its arguments, joined, as a script of sh -e in the scratch folder, PKG_CONFIG_PATH set
# to the prefix's.
function(run_shell)
  string(JOIN "" script ${ARGN})
  file(WRITE "${SCRATCH_DIR}/build.sh" "${script}\n")
  execute_process(COMMAND sh -e "${SCRATCH_DIR}/build.sh" WORKING_DIRECTORY "${SCRATCH_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: `${script}` failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()
run_shell("${CXX_COMPILER} -std=c++17 ${extra_words} '${HWPROF_SOURCE_DIR}/tests/package/consumer/consumer.cpp' "
          "'-DHWPROF_MODEL=\"${prefix}/share/hwprof/models/lenet5.json\"' $(pkg-config --cflags --libs hwprof) -o consumer_pc")
run("${SCRATCH_DIR}/consumer_pc")
# 3. The regions programs. A calibration of this CPU (made-up ceilings) from the consumer.
set(calibration "${SCRATCH_DIR}/machine.json")
run("${SCRATCH_DIR}/consumer/consumer" --test-calibration "${calibration}")
execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs hwprof-regions
                OUTPUT_VARIABLE regions_flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "package test: pkg-config does not know hwprof-regions")
endif()
foreach(unwanted openblas gomp fopenmp fmt "\\\\" "\"")
  if(regions_flags MATCHES "${unwanted}")
    message(FATAL_ERROR "package test: pkg-config hwprof-regions brings ${unwanted}: ${regions_flags}")
  endif()
endforeach()
separate_arguments(regions_flags UNIX_COMMAND "${regions_flags}")
# As a C user builds it: `cc prog.c $(pkg-config --cflags --libs hwprof-regions)`; and with the
# include and library folders alone (`-lhwprof_regions`), run with LD_LIBRARY_PATH.
run_shell("${C_COMPILER} -std=c11 ${extra_words} '${HWPROF_SOURCE_DIR}/tests/package/consumer/regions_consumer.c' "
          "$(pkg-config --cflags --libs hwprof-regions) -o regions_consumer_c")
run_shell("${C_COMPILER} -std=c11 ${extra_words} '${HWPROF_SOURCE_DIR}/tests/package/consumer/regions_consumer.c' "
          "-I'${prefix}/include' -L'${prefix}/lib' -lhwprof_regions -o regions_consumer_c_plain")
# The archive, linked into the program (its own dependencies from `pkg-config --static`): the
# library is then the program, which looks beside itself and in the configured prefix only.
run_shell("${C_COMPILER} -std=c11 ${extra_words} '${HWPROF_SOURCE_DIR}/tests/package/consumer/regions_consumer.c' "
          "-I'${prefix}/include' '${prefix}/lib/libhwprof_regions.a' "
          "$(pkg-config --static --libs-only-l hwprof-regions | sed 's/-lhwprof_regions//') -o regions_consumer_c_unhinted")

# Neither program may need OpenBLAS or OpenMP.
find_program(READELF readelf REQUIRED)
foreach(program consumer/regions_consumer regions_consumer_c)
  execute_process(COMMAND "${READELF}" -d "${SCRATCH_DIR}/${program}" OUTPUT_VARIABLE dynamic)
  if(dynamic MATCHES "openblas|gomp")
    message(FATAL_ERROR "package test: ${program} links OpenBLAS or OpenMP:\n${dynamic}")
  endif()
endforeach()

# Runs a regions program with HWPROF_OUTPUT (and the given variables) and checks its report:
# `expected` is a list of name=flops=bytes, with flops and bytes empty for a region without work.
function(check_regions program out expected)
  file(REMOVE_RECURSE "${out}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "HWPROF_OUTPUT=${out}" "HWPROF_CALIBRATION=${calibration}" HWPROF_THREADS=1
                          ${ARGN} "${program}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: ${program} failed (${rc}):\n${stdout}\n${stderr}")
  endif()
  foreach(file profile.json profile.txt profile.csv roofline.svg report.html trace.json)
    if(NOT EXISTS "${out}/${file}")
      message(FATAL_ERROR "package test: ${program} wrote no ${file} into ${out}:\n${stderr}")
    endif()
  endforeach()
  file(READ "${out}/profile.json" profile)
  string(JSON count LENGTH "${profile}" layers)
  list(LENGTH expected wanted)
  if(NOT count EQUAL wanted)
    message(FATAL_ERROR "package test: ${program}: ${count} regions in profile.json, expected ${wanted} (${expected})")
  endif()
  foreach(entry IN LISTS expected)
    string(REPLACE "=" ";" entry "${entry}")
    list(GET entry 0 name)
    list(GET entry 1 flops)
    list(GET entry 2 bytes)
    set(found 0)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON layer_name GET "${profile}" layers ${i} name)
      if(NOT layer_name STREQUAL name)
        continue()
      endif()
      math(EXPR found "${found} + 1")
      string(JSON roofline TYPE "${profile}" layers ${i} roofline)
      if(flops STREQUAL "")
        if(NOT roofline STREQUAL "NULL")
          message(FATAL_ERROR "package test: ${program}: ${name} has no work but a roofline point")
        endif()
        continue()
      endif()
      string(JSON layer_flops GET "${profile}" layers ${i} flops)
      string(JSON layer_bytes GET "${profile}" layers ${i} bytes value)
      if(NOT layer_flops EQUAL flops OR NOT layer_bytes EQUAL bytes)
        message(FATAL_ERROR "package test: ${program}: ${name} has ${layer_flops} FLOPs and ${layer_bytes} bytes, set_work gave ${flops} and ${bytes}")
      endif()
      if(NOT roofline STREQUAL "OBJECT")
        string(JSON why GET "${profile}" layers ${i} roofline_error)
        message(FATAL_ERROR "package test: ${program}: ${name} has no roofline point: ${why}")
      endif()
    endforeach()
    if(NOT found EQUAL 1)
      message(FATAL_ERROR "package test: ${program}: region ${name} is in profile.json ${found} times, expected once")
    endif()
  endforeach()
  message(STATUS "package test: ${program}: ${count} regions, each once, with its work and roofline point")
endfunction()

# 16384 elements: axpy 2 FLOPs and 12 bytes each, layerN 1 and 8, the C scale 1 and 8.
# With an event group by name that only the installed share/hwprof/counters holds (a copy of
# the software group): found there, in a prefix the library was not configured for, from a
# program outside it, with no variable (src/common/data_paths.cpp).
file(COPY_FILE "${prefix}/share/hwprof/counters/software/software.txt" "${prefix}/share/hwprof/counters/software/package_only.txt")
function(check_group out)
  file(READ "${out}/profile.json" profile)
  string(JSON group GET "${profile}" group)
  if(NOT group STREQUAL "package_only")
    message(FATAL_ERROR "package test: HWPROF_GROUP=package_only was not found in the installed tree (${out}: group '${group}')")
  endif()
endfunction()
check_regions("${SCRATCH_DIR}/consumer/regions_consumer" "${SCRATCH_DIR}/out-cpp"
              "step==;axpy=32768=196608;layer0=16384=131072;layer1=16384=131072;layer2=16384=131072"
              HWPROF_GROUP=package_only)
check_group("${SCRATCH_DIR}/out-cpp")
# The C programs link the prefix's shared library, which finds the module beside itself (a
# prefix other than the configured one; docs/regions.md): no variable, no define.
check_regions("${SCRATCH_DIR}/regions_consumer_c" "${SCRATCH_DIR}/out-c" "c_step==;c_scale=16384=131072"
              --unset=HWPROF_REPORT_MODULE HWPROF_GROUP=package_only)
check_group("${SCRATCH_DIR}/out-c")
check_regions("${SCRATCH_DIR}/regions_consumer_c_plain" "${SCRATCH_DIR}/out-c-plain" "c_step==;c_scale=16384=131072"
              --unset=HWPROF_REPORT_MODULE "LD_LIBRARY_PATH=${prefix}/lib")
# With the archive linked in and no HWPROF_REPORT_MODULE, the C program looks beside itself
# and in the prefix hwprof was configured for, never in this build tree, whose module it
# would otherwise load: where neither holds one, it writes regions.txt, with where it looked.
if(NOT EXISTS "${CONFIGURED_MODULE}")
  set(out "${SCRATCH_DIR}/out-c-no-module")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=HWPROF_REPORT_MODULE "HWPROF_OUTPUT=${out}" "${SCRATCH_DIR}/regions_consumer_c_unhinted"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: without a report module, regions_consumer_c_unhinted failed (${rc}) instead of ending as it does:\n${stderr}")
  endif()
  if(EXISTS "${out}/profile.json" OR NOT EXISTS "${out}/regions.txt")
    message(FATAL_ERROR "package test: regions_consumer_c_unhinted found a report module it was not given (only the build tree has one):\n${stderr}")
  endif()
  file(READ "${out}/regions.txt" table)
  string(FIND "${table}" "${HWPROF_BUILD_DIR}/lib" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "package test: the installed regions library looked in the build tree:\n${table}")
  endif()
endif()
# Fortran through bind(C) (scripts/install-deps.sh installs gfortran): it includes no regions.h,
# and the shared library finds the module as for C.
find_program(GFORTRAN gfortran)
if(NOT GFORTRAN)
  message(FATAL_ERROR "package test: no gfortran, so the Fortran consumer cannot be built: run scripts/install-deps.sh")
else()
  run("${GFORTRAN}" ${extra_flags} "${HWPROF_SOURCE_DIR}/tests/package/consumer/regions_consumer.f90" ${regions_flags}
      -o "${SCRATCH_DIR}/regions_consumer_f")
  check_regions("${SCRATCH_DIR}/regions_consumer_f" "${SCRATCH_DIR}/out-f" "f_step==;f_saxpy=32768=196608"
                --unset=HWPROF_REPORT_MODULE)
endif()
# 4. hwprof::torch, where it was built: the Python package finds the installed library from its
#    own folder (PYTHON_DIR/hwprof/torch/_library.py: HWPROF_INSTALL_PYTHONDIR, relative to the
#    prefix), and find_package(hwprof COMPONENTS torch) gives the target. In a sanitized build,
#    Debian's python3 loads the instrumented library with the ASan runtime preloaded (as the
#    torch tests do).
if(WITH_TORCH)
  set(python_dir "${PYTHON_DIR}")
  if(NOT IS_ABSOLUTE "${python_dir}")
    set(python_dir "${prefix}/${python_dir}")
  endif()
  file(GLOB torch_library "${prefix}/lib/libhwprof-torch.so*")
  if(NOT torch_library OR NOT EXISTS "${python_dir}/hwprof/torch/__init__.py" OR NOT EXISTS "${python_dir}/hwprof/torch/_library.py"
     OR NOT EXISTS "${python_dir}/hwprof/py.typed")
    message(FATAL_ERROR "package test: hwprof::torch was built but libhwprof-torch.so or the Python package (${python_dir}/hwprof) was not installed")
  endif()
  set(preload)
  if(CXX_FLAGS MATCHES "sanitize=address")
    execute_process(COMMAND "${CXX_COMPILER}" -print-file-name=libasan.so OUTPUT_VARIABLE asan OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND "${CXX_COMPILER}" -print-file-name=libstdc++.so.6 OUTPUT_VARIABLE cxx OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(preload "LD_PRELOAD=${asan}:${cxx}" "ASAN_OPTIONS=detect_leaks=0")  # libstdc++ after ASan: tests/CMakeLists.txt
  endif()
  file(WRITE "${SCRATCH_DIR}/torch_script.py" "import torch\nlayer = torch.nn.Linear(16, 8)\nfor _ in range(3):\n    layer(torch.randn(4, 16))\n")
  set(out "${SCRATCH_DIR}/out-torch")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env --unset=HWPROF_TORCH_LIBRARY --unset=HWPROF_REPORT_MODULE "PYTHONPATH=${python_dir}" HWPROF_BACKEND=timer
                          ${preload} /usr/bin/python3 -m hwprof.torch -o "${out}" "${SCRATCH_DIR}/torch_script.py"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 0 OR NOT EXISTS "${out}/profile.json")
    message(FATAL_ERROR "package test: python3 -m hwprof.torch from the installed package failed (${rc}):\n${stdout}\n${stderr}")
  endif()
  file(READ "${out}/profile.json" profile)
  string(JSON kind GET "${profile}" kind)
  string(FIND "${profile}" "\"name\": \"Linear\"" at)
  if(NOT kind STREQUAL "torch" OR at EQUAL -1)
    message(FATAL_ERROR "package test: the installed hwprof.torch wrote a profile of kind ${kind} without the Linear module's row")
  endif()
  file(WRITE "${SCRATCH_DIR}/torch_consumer/CMakeLists.txt"
       "cmake_minimum_required(VERSION 3.25)\nproject(torch_consumer CXX)\nfind_package(hwprof REQUIRED COMPONENTS torch)\n"
       "if(NOT TARGET hwprof::torch)\n  message(FATAL_ERROR \"no hwprof::torch\")\nendif()\n")
  run("${CMAKE_COMMAND}" -S "${SCRATCH_DIR}/torch_consumer" -B "${SCRATCH_DIR}/torch_consumer/build" -G "${GENERATOR}"
      "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
message(STATUS "package test: find_package and pkg-config consumers, C++, C and Fortran, all work")
