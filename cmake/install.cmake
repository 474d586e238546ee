# `cmake --install`: the header, the shared library with its SONAME links (and libvkllm.a with
# VKLLM_STATIC), a pkg-config file and a CMake package:
#
#   include/vkllm.h
#   lib/libvkllm.so -> libvkllm.so.0.3 -> libvkllm.so.0.3.0   (libvkllm.a)
#   lib/pkgconfig/vkllm.pc               pkg-config --cflags --libs vkllm
#   (Windows with VKLLM_STATIC: lib/pkgconfig/vkllm-static.pc, for libvkllm.a)
#   lib/cmake/vkllm/vkllmConfig.cmake    find_package(vkllm) -> vkllm::vkllm (vkllm::vkllm_static)
#
# Both are relocatable: they find the prefix from their own location, so an install tree
# moved elsewhere, or installed with `cmake --install build --prefix DIR`, still works.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(VKLLM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkllm)

install(TARGETS vkllm EXPORT vkllmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/vkllm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(VKLLM_STATIC)
  install(TARGETS vkllm_static EXPORT vkllmTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()

# CMake package: vkllm::vkllm (the shared library) and, with VKLLM_STATIC, vkllm::vkllm_static.
install(EXPORT vkllmTargets NAMESPACE vkllm:: DESTINATION ${VKLLM_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkllmConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/vkllmConfig.cmake
                              INSTALL_DESTINATION ${VKLLM_CMAKE_DIR})
# The same major version is compatible (0.x included: bindings refuse another major only).
# While the major version is 0 a minor version may break the ABI (the SONAME carries it too), so
# find_package(vkllm 0.3) accepts 0.3.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkllmConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkllmConfig.cmake ${PROJECT_BINARY_DIR}/vkllmConfigVersion.cmake
        DESTINATION ${VKLLM_CMAKE_DIR})

# pkg-config: the prefix is computed from the .pc file's own directory (${pcfiledir}, known
# to pkg-config and pkgconf), so that it is right whatever --prefix the install used.
if(IS_ABSOLUTE ${CMAKE_INSTALL_LIBDIR})
  set(VKLLM_PC_LIBDIR ${CMAKE_INSTALL_LIBDIR})
  set(VKLLM_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
else()
  set(VKLLM_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH VKLLM_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
  string(REGEX REPLACE "/$" "" VKLLM_PC_UP "${VKLLM_PC_UP}")
  set(VKLLM_PC_PREFIX "\${pcfiledir}/${VKLLM_PC_UP}")
endif()
if(IS_ABSOLUTE ${CMAKE_INSTALL_INCLUDEDIR})
  set(VKLLM_PC_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
else()
  set(VKLLM_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# Windows: users of vkllm.dll import its functions (vkllm.h's VKLLM_SHARED); the mingw runtime
# is linked into the DLL, and a static link needs winpthread's only.
if(WIN32)
  set(VKLLM_PC_CFLAGS " -DVKLLM_SHARED")
  set(VKLLM_PC_LIBS_PRIVATE "-lstdc++ -lpthread")
else()
  set(VKLLM_PC_CFLAGS "")
  set(VKLLM_PC_LIBS_PRIVATE "-lstdc++ -lm -ldl -lpthread")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkllm.pc.in ${PROJECT_BINARY_DIR}/vkllm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkllm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# Windows with libvkllm.a: vkllm.pc's VKLLM_SHARED would make a program linked with the archive
# look for the DLL's __imp_ symbols, and -lvkllm finds the import library first; vkllm-static.pc
# names the archive itself and declares the functions plainly.
if(WIN32 AND VKLLM_STATIC)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/vkllm-static.pc.in ${PROJECT_BINARY_DIR}/vkllm-static.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/vkllm-static.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
