# Cross-builds vkllm for 64-bit Windows with Debian's mingw-w64 (g++-mingw-w64-x86-64-posix):
#
#   cmake -S . -B build-windows -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw-w64-x86_64.cmake
#
# The posix thread model, because the library uses std::thread and std::mutex (the win32 model
# of GCC 12's mingw-w64 has neither). ctest runs each test program through Wine
# (scripts/test-windows; docs/PLATFORMS.md says what that needs).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(VKLLM_MINGW_TRIPLE x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${VKLLM_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${VKLLM_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${VKLLM_MINGW_TRIPLE}-windres)

# Libraries and headers come from the mingw sysroot only; programs (glslc, spirv-val, python)
# from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${VKLLM_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config likewise: the host's .pc files (libedit's) describe libraries of the host.
set(ENV{PKG_CONFIG_LIBDIR} ${CMAKE_FIND_ROOT_PATH}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

find_program(VKLLM_WINE wine)
if(VKLLM_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKLLM_WINE})
endif()
