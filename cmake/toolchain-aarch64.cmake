# Cross build for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu; target binaries run on
# this machine through qemu-user (CMAKE_CROSSCOMPILING_EMULATOR, also used by GoogleTest's test
# discovery). Used by tests/arm for the kernels-only build:
#   cmake -S . -B build/arm -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DEDGEINFER_KERNELS_ONLY=ON -DEDGEINFER_BUILD_BENCH=OFF
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(EDGEINFER_CROSS_TRIPLE aarch64-linux-gnu)
set(EDGEINFER_CROSS_SYSROOT /usr/${EDGEINFER_CROSS_TRIPLE} CACHE PATH "Target libraries (Debian's cross sysroot)")

find_program(EDGEINFER_CROSS_CXX ${EDGEINFER_CROSS_TRIPLE}-g++)
find_program(EDGEINFER_CROSS_CC ${EDGEINFER_CROSS_TRIPLE}-gcc)
if(NOT EDGEINFER_CROSS_CXX OR NOT EDGEINFER_CROSS_CC)
  message(FATAL_ERROR "aarch64 cross compiler not found (${EDGEINFER_CROSS_TRIPLE}-g++/-gcc): "
                      "install g++-aarch64-linux-gnu (scripts/setup.sh does)")
endif()
set(CMAKE_C_COMPILER ${EDGEINFER_CROSS_CC})
set(CMAKE_CXX_COMPILER ${EDGEINFER_CROSS_CXX})

find_program(EDGEINFER_QEMU_AARCH64 qemu-aarch64)
if(EDGEINFER_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EDGEINFER_QEMU_AARCH64} -L ${EDGEINFER_CROSS_SYSROOT})
endif()

# Libraries and headers from the target's sysroot only; programs (pkg-config, python) from the host.
set(CMAKE_FIND_ROOT_PATH ${EDGEINFER_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
