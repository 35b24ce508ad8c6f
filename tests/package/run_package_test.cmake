# Installs the build into a scratch prefix and builds tests/package/consumer against it,
# once through find_package(hwprof) and once through pkg-config, then runs both.
cmake_minimum_required(VERSION 3.25)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "package test: '${cmd}' failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE "${SCRATCH_DIR}")
set(prefix "${SCRATCH_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${HWPROF_BUILD_DIR}" --prefix "${prefix}")

foreach(required include/hwprof/hwprof.hpp include/hwprof/version.hpp bin/hwprof
                 share/hwprof/models/resnet18.json lib/cmake/hwprof/hwprofConfig.cmake)
  if(NOT EXISTS "${prefix}/${required}")
    file(GLOB_RECURSE installed RELATIVE "${prefix}" "${prefix}/*")
    message(FATAL_ERROR "package test: ${required} was not installed; installed:\n${installed}")
  endif()
endforeach()

# 1. find_package(hwprof)
run("${CMAKE_COMMAND}" -S "${HWPROF_SOURCE_DIR}/tests/package/consumer" -B "${SCRATCH_DIR}/consumer"
    -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}")
run("${CMAKE_COMMAND}" --build "${SCRATCH_DIR}/consumer")
run("${SCRATCH_DIR}/consumer/consumer")

# 2. pkg-config (the .pc file points at the install prefix it was configured with, so give
#    pkg-config the scratch prefix explicitly).
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
execute_process(COMMAND "${PKG_CONFIG}" --define-variable=prefix=${prefix} --cflags --libs hwprof
                OUTPUT_VARIABLE pc_flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "package test: pkg-config does not know hwprof")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS} ${LINKER_FLAGS}")
run("${CXX_COMPILER}" -std=c++17 ${extra_flags} "${HWPROF_SOURCE_DIR}/tests/package/consumer/consumer.cpp"
    "-DHWPROF_MODEL=\"${prefix}/share/hwprof/models/lenet5.json\"" ${pc_flags} -o "${SCRATCH_DIR}/consumer_pc")
run("${SCRATCH_DIR}/consumer_pc")
message(STATUS "package test: find_package and pkg-config consumers both work")
