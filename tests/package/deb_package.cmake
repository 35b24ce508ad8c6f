# Builds the Debian package of this build (`cpack -G DEB`) and checks it without installing it:
# dpkg-deb --info declares the runtime packages hwprof needs (BLAS, PAPI, libpfm4, ONNX,
# protobuf and libdw), dpkg-deb --contents holds the binary, libraries, headers, .pc files,
# report module and data. Then, in place of `apt install` (which would change this machine), the package is
# unpacked into a scratch root, a prefix it was never configured for: its hwprof must find its
# models there, and a C program built with its `pkg-config hwprof-regions` must write its
# reports with the report module found there, without HWPROF_REPORT_MODULE.
cmake_minimum_required(VERSION 3.25)

set(run_what "deb package test")
include("${CMAKE_CURRENT_LIST_DIR}/run_checked.cmake")

find_program(DPKG_DEB dpkg-deb)
find_program(PKG_CONFIG pkg-config)
if(NOT DPKG_DEB OR NOT PKG_CONFIG)
  message(STATUS "SKIPPED: dpkg-deb or pkg-config is not installed (a Debian machine has both)")
  return()
endif()

file(REMOVE_RECURSE "${SCRATCH_DIR}")
file(MAKE_DIRECTORY "${SCRATCH_DIR}")
run("${CPACK_COMMAND}" -G DEB --config "${HWPROF_BUILD_DIR}/CPackConfig.cmake" -B "${SCRATCH_DIR}")
file(GLOB debs "${SCRATCH_DIR}/hwprof_${VERSION}_*.deb")
list(LENGTH debs count)
if(NOT count EQUAL 1)
  file(GLOB made "${SCRATCH_DIR}/*")
  message(FATAL_ERROR "deb package test: expected one hwprof_${VERSION}_<arch>.deb in ${SCRATCH_DIR}, found: ${made}")
endif()
message(STATUS "deb package test: ${debs}")

# The control file: name, version and the runtime packages.
run("${DPKG_DEB}" --field "${debs}" Package Version Depends)
set(info "${run_output}")
set(wanted "Package: hwprof" "Version: ${VERSION}" "libopenblas0" "libpfm4" "libfmt9" "libgomp1")
if(WITH_PAPI)
  list(APPEND wanted "libpapi7.0")
endif()
if(WITH_ONNX)
  list(APPEND wanted "libonnx1" "libprotobuf32")
endif()
if(WITH_LIBDW)
  list(APPEND wanted "libdw1" "libelf1")
endif()
foreach(text IN LISTS wanted)
  string(FIND "${info}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "deb package test: the control file does not declare '${text}':\n${info}")
  endif()
endforeach()

# The files (installed under /usr, the DEB generator's prefix).
run("${DPKG_DEB}" --contents "${debs}")
set(contents "${run_output}")
set(lib "usr/${LIBDIR}")
foreach(path usr/bin/hwprof "${lib}/libhwprof_regions." "${lib}/libhwprof." "${lib}/hwprof/libhwprof-report.so"
             usr/include/hwprof/regions.h usr/include/hwprof/regions.hpp usr/include/hwprof/hwprof.hpp usr/include/hwprof/version.hpp
             "${lib}/pkgconfig/hwprof.pc" "${lib}/pkgconfig/hwprof-regions.pc" "${lib}/cmake/hwprof/hwprofConfig.cmake"
             usr/share/hwprof/models/resnet18.json usr/share/hwprof/counters/)
  string(FIND "${contents}" " ./${path}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "deb package test: the package holds no ${path}:\n${contents}")
  endif()
endforeach()

# `apt install` stand-in: unpack it into a scratch root.
set(root "${SCRATCH_DIR}/root")
run("${DPKG_DEB}" -x "${debs}" "${root}")
run("${CMAKE_COMMAND}" -E env --unset=HWPROF_MODEL_PATH "${root}/usr/bin/hwprof" summary resnet18)
string(FIND "${run_output}" "(${root}/usr/share/hwprof/models/resnet18.json)" at)
if(at EQUAL -1)
  message(FATAL_ERROR "deb package test: the unpacked hwprof did not read its own models/resnet18.json:\n${run_output}")
endif()

# A C program built with the unpacked tree's pkg-config file, run without HWPROF_REPORT_MODULE.
set(ENV{PKG_CONFIG_PATH} "${root}/usr/${LIBDIR}/pkgconfig")
run("${PKG_CONFIG}" --cflags --libs hwprof-regions)
string(STRIP "${run_output}" regions_flags)
string(FIND "${regions_flags}" "${root}/usr/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "deb package test: pkg-config hwprof-regions does not point into the unpacked tree ${root}: ${regions_flags}")
endif()
separate_arguments(regions_flags UNIX_COMMAND "${regions_flags}")
separate_arguments(extra_flags UNIX_COMMAND "${C_FLAGS} ${LINKER_FLAGS}")
run("${C_COMPILER}" -std=c11 ${extra_flags} "${HWPROF_SOURCE_DIR}/tests/package/consumer/regions_consumer.c" ${regions_flags}
    -o "${SCRATCH_DIR}/regions_consumer_c")
set(out "${SCRATCH_DIR}/out")
run("${CMAKE_COMMAND}" -E env --unset=HWPROF_REPORT_MODULE "HWPROF_OUTPUT=${out}" HWPROF_THREADS=1 "${SCRATCH_DIR}/regions_consumer_c")
if(NOT EXISTS "${out}/profile.json")
  file(GLOB written "${out}/*")
  message(FATAL_ERROR "deb package test: the C program built against the unpacked package wrote no profile.json "
                      "(its report module in ${root}/usr/${LIBDIR}/hwprof was not found); it wrote: ${written}")
endif()
message(STATUS "deb package test: the package declares its dependencies, holds its files, and works unpacked at ${root}")
