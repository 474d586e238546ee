# Cross-builds vkllm for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu:
#
#   cmake -S . -B build-arm64 -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
#
# ctest runs each test program through qemu-user (scripts/test-arm64), whose -L names the cross
# toolchain's C and C++ runtimes as the target's root.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(VKLLM_ARM64_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${VKLLM_ARM64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${VKLLM_ARM64_TRIPLE}-g++)

# Libraries and headers come from the cross toolchain's root only; programs (glslc, spirv-val,
# python) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${VKLLM_ARM64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config likewise: the host's .pc files (libedit's) describe libraries of the host.
set(ENV{PKG_CONFIG_LIBDIR} ${CMAKE_FIND_ROOT_PATH}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

# The dynamic loader and the C library must come from one build of glibc: LD_LIBRARY_PATH puts
# the toolchain's libc.so.6 ahead of an arm64 libc6 that Debian multiarch may have installed in
# /lib/aarch64-linux-gnu (another build, with which the toolchain's loader hangs in the first
# pthread_create).
find_program(VKLLM_QEMU_AARCH64 qemu-aarch64)
if(VKLLM_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKLLM_QEMU_AARCH64} -L ${CMAKE_FIND_ROOT_PATH} -E
                                    LD_LIBRARY_PATH=${CMAKE_FIND_ROOT_PATH}/lib)
endif()
