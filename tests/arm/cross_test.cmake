# Script mode (cmake -P), driven by tests/arm/CMakeLists.txt:
#   -DSTEP=build|run -DSOURCE_DIR=<repo> -DBINARY_DIR=<cross build dir> -DGENERATOR=<gen> -DSYSROOT=<dir>
#   [-DCROSS_CXX=aarch64-linux-gnu-g++] [-DQEMU=qemu-aarch64]
# Missing tools are failures, not skips: the NEON paths are only tested through this.
cmake_minimum_required(VERSION 3.22)

if(NOT DEFINED CROSS_CXX)
  set(CROSS_CXX aarch64-linux-gnu-g++)
endif()
if(NOT DEFINED QEMU)
  set(QEMU qemu-aarch64)
endif()

foreach(v STEP SOURCE_DIR BINARY_DIR GENERATOR SYSROOT)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "cross_test.cmake: -D${v}=... is required")
  endif()
endforeach()

set(test_binary ${BINARY_DIR}/tests/kernels/test_kernels)

# Both steps need qemu: the build runs the test binary to list its tests (GoogleTest discovery).
find_program(qemu ${QEMU})
if(NOT qemu)
  message(FATAL_ERROR "${QEMU} not found: the NEON kernels cannot be tested. "
                      "Install qemu-user (scripts/setup.sh does).")
endif()

if(STEP STREQUAL "build")
  find_program(cross_cxx ${CROSS_CXX})
  if(NOT cross_cxx)
    message(FATAL_ERROR "${CROSS_CXX} not found: the NEON kernels cannot be built or tested. "
                        "Install g++-aarch64-linux-gnu and qemu-user (scripts/setup.sh does).")
  endif()
  string(TIMESTAMP t0 "%s")
  if(NOT EXISTS ${BINARY_DIR}/CMakeCache.txt)
    execute_process(
      COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
              -DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/toolchain-aarch64.cmake
              -DCMAKE_BUILD_TYPE=Release -DEDGEINFER_KERNELS_ONLY=ON -DEDGEINFER_BUILD_BENCH=OFF
      RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      file(REMOVE ${BINARY_DIR}/CMakeCache.txt)  # configure again next time
      message(FATAL_ERROR "configuring the aarch64 cross build in ${BINARY_DIR} failed (${rc})")
    endif()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} --target test_kernels RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building the aarch64 test_kernels in ${BINARY_DIR} failed (${rc})")
  endif()
  string(TIMESTAMP t1 "%s")
  math(EXPR secs "${t1} - ${t0}")
  message(STATUS "aarch64 cross build up to date in ${secs} s: ${test_binary}")
  return()
endif()

if(NOT STEP STREQUAL "run")
  message(FATAL_ERROR "cross_test.cmake: unknown STEP '${STEP}'")
endif()

if(NOT EXISTS ${test_binary})
  message(FATAL_ERROR "${test_binary} is missing (did arm_cross_build run?)")
endif()

# 1. A CPU with NEON + dotprod + fp16 (qemu's "max"): both paths are tested, and the NEON
#    tests must actually have run.
execute_process(COMMAND ${qemu} -cpu max -L ${SYSROOT} ${test_binary}
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "aarch64 test_kernels failed under qemu-aarch64 -cpu max (exit ${rc})")
endif()
string(REGEX MATCHALL "\\[       OK \\] [^\n]*/neon " neon_ok "${out}")
list(LENGTH neon_ok n_neon)
if(n_neon EQUAL 0)
  message(FATAL_ERROR "no NEON test ran: qemu's CPU does not report dotprod (HWCAP_ASIMDDP)?")
endif()
message(STATUS "${n_neon} NEON tests passed under qemu-aarch64")

# 2. A CPU without the dot-product extension (Cortex-A72): the NEON path must be reported
#    unsupported, and nothing compiled for the base architecture may use a newer instruction
#    (that would be SIGILL here).
execute_process(COMMAND ${qemu} -cpu cortex-a72 -L ${SYSROOT} ${test_binary}
                OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "aarch64 test_kernels failed under qemu-aarch64 -cpu cortex-a72 (exit ${rc})")
endif()
if(out MATCHES "/neon ")
  message("${out}")
  message(FATAL_ERROR "the NEON path claims support on a CPU without dotprod")
endif()
message(STATUS "scalar-only run on a CPU without dotprod passed")
