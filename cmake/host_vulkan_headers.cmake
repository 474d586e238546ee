# A cross build takes the Vulkan and volk headers (and volk.c) from the host, since they are the
# same for every target, but must not put the host's /usr/include on the compiler's path: its C
# library headers would shadow the target's (mingw-w64 fails on glibc's bits/*.h). A folder of
# links to just those headers stands in for it.
set(VKLLM_HOST_INCLUDE /usr/include CACHE PATH "Where the host's vulkan/ and volk.h are")
set(dir ${PROJECT_BINARY_DIR}/host_vulkan_include)
file(MAKE_DIRECTORY ${dir})
foreach(name vulkan vk_video volk.h volk.c)
  if(NOT EXISTS ${VKLLM_HOST_INCLUDE}/${name})
    message(FATAL_ERROR "${VKLLM_HOST_INCLUDE}/${name} is missing (Debian: libvulkan-dev, "
                        "libvulkan-volk-dev)")
  endif()
  file(CREATE_LINK ${VKLLM_HOST_INCLUDE}/${name} ${dir}/${name} SYMBOLIC)
endforeach()
set(VOLK_INCLUDE_DIR ${dir})
