# The report module (libhwprof-report.so), which every program linked with hwprof::regions
# loads at exit, needs no OpenBLAS, OpenMP, ONNX or protobuf (docs/regions.md, "What is
# written"): `readelf -d` must list none of them among its NEEDED libraries. Also run on the
# installed module by run_package_test.cmake.
#   cmake -DMODULE=path/to/libhwprof-report.so -P module_needs.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT EXISTS "${MODULE}")
  message(FATAL_ERROR "report module needs: ${MODULE} does not exist (build the target hwprof_report_module)")
endif()
find_program(READELF readelf)
if(NOT READELF)
  message(STATUS "SKIPPED: readelf is not installed (binutils), so what ${MODULE} needs cannot be read")
  return()
endif()
execute_process(COMMAND "${READELF}" -d "${MODULE}" RESULT_VARIABLE rc OUTPUT_VARIABLE dynamic ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "report module needs: readelf -d ${MODULE} failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*\\[[^]\n]*\\]" needed "${dynamic}")
if(needed STREQUAL "")
  message(FATAL_ERROR "report module needs: readelf -d ${MODULE} lists no NEEDED library at all:\n${dynamic}")
endif()
set(unwanted "")
foreach(entry IN LISTS needed)
  if(entry MATCHES "\\[(lib(openblas|blas|lapack|gomp|omp|iomp5|onnx|protobuf)[^]]*)\\]")
    list(APPEND unwanted "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(unwanted)
  string(JOIN ", " unwanted_text ${unwanted})
  message(FATAL_ERROR "report module needs: ${MODULE} needs ${unwanted_text}; the module must link only the report, "
                      "roofline and calibration-reading code (the report library's stages: CMakeLists.txt, \"the libraries\"):\n${dynamic}")
endif()
string(JOIN "\n  " needed_text ${needed})
message(STATUS "report module needs only:\n  ${needed_text}")
