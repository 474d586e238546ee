# vkllm-serve's dependencies (tools/serve, docs/SERVER.md): Debian's nlohmann-json3-dev and
# libcpp-httplib-dev (a compiled library built with OpenSSL, zlib and brotli: its pkg-config
# flags say so). VKLLM_BUILD_SERVER: AUTO builds the server where both are found and not on
# Windows; ON requires them; OFF builds none of it.
set(VKLLM_BUILD_SERVER AUTO CACHE STRING "vkllm-serve: AUTO, ON or OFF")
set_property(CACHE VKLLM_BUILD_SERVER PROPERTY STRINGS AUTO ON OFF)

set(VKLLM_SERVER OFF)
if(NOT VKLLM_BUILD_SERVER STREQUAL "OFF")
  find_package(nlohmann_json 3 QUIET)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
  endif()
  # The request parser needs JSON only: its gtest and fuzz target are built wherever
  # nlohmann-json is, the fuzz build included.
  if(nlohmann_json_FOUND)
    add_library(vkllm_serve_request STATIC EXCLUDE_FROM_ALL tools/serve/request_parse.cpp
                                                            tools/serve/utf8.cpp)
    target_include_directories(vkllm_serve_request PUBLIC ${PROJECT_SOURCE_DIR}/include
                                                          ${PROJECT_SOURCE_DIR}/tools/serve)
    target_link_libraries(vkllm_serve_request PUBLIC nlohmann_json::nlohmann_json)
    target_compile_options(vkllm_serve_request PRIVATE ${VKLLM_WARNINGS})
  endif()
  if(VKLLM_BUILD_TOOLS AND nlohmann_json_FOUND AND HTTPLIB_FOUND AND NOT WIN32)
    set(VKLLM_SERVER ON)
  elseif(VKLLM_BUILD_SERVER STREQUAL "ON")
    message(FATAL_ERROR "VKLLM_BUILD_SERVER=ON needs VKLLM_BUILD_TOOLS, nlohmann-json "
                        "(nlohmann-json3-dev) and cpp-httplib (libcpp-httplib-dev), not on Windows")
  endif()
endif()
message(STATUS "vkllm serve: ${VKLLM_SERVER}")
