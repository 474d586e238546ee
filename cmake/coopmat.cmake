# Finds a glslang that compiles GL_KHR_cooperative_matrix and a spirv-val that validates its
# output, for the cooperative-matrix shaders (shaders/*/*_coopmat.comp). Debian 12's glslang 11
# cannot; Debian 13's, Ubuntu 24.04's, Fedora's and Arch's can. In order:
#   1. VKLLM_COOPMAT_GLSLANG / VKLLM_COOPMAT_SPIRV_VAL given on the command line (a command,
#      as a list: a program and its leading arguments);
#   2. glslang or glslangValidator on the PATH, if it compiles the probe below;
#   3. Debian 13's glslang in the cache of scripts/mesa26 ($VKLLM_MESA26_DIR, else
#      ~/.cache/vkllm/mesa26), run through Debian 13's dynamic loader.
# Without one the library is built without those shaders and runs the tiled kernels on every
# device (VKLLM_HAVE_COOPMAT_SHADERS off; the configure step says so). VKLLM_COOPMAT=OFF
# leaves them out on purpose.
option(VKLLM_COOPMAT "Build the cooperative-matrix shaders where a glslang can compile them" ON)
set(VKLLM_HAVE_COOPMAT_SHADERS OFF)

# The cache of scripts/mesa26, and the command that runs one of its programs.
if(DEFINED ENV{VKLLM_MESA26_DIR})
  set(VKLLM_MESA26_DIR "$ENV{VKLLM_MESA26_DIR}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(VKLLM_MESA26_DIR "$ENV{XDG_CACHE_HOME}/vkllm/mesa26")
else()
  set(VKLLM_MESA26_DIR "$ENV{HOME}/.cache/vkllm/mesa26")
endif()
set(VKLLM_MESA26_FOUND OFF)
if(EXISTS "${VKLLM_MESA26_DIR}/complete")
  set(VKLLM_MESA26_FOUND ON)
  set(mesa26_lib "${VKLLM_MESA26_DIR}/root/usr/lib/x86_64-linux-gnu")
  set(mesa26_exec "${mesa26_lib}/ld-linux-x86-64.so.2" --library-path
                  "${mesa26_lib}:${VKLLM_MESA26_DIR}/root/lib/x86_64-linux-gnu")
endif()

# Whether `compiler` (a command list) turns the probe into SPIR-V that `validator` accepts.
function(vkllm_coopmat_probe compiler validator out)
  set(dir ${PROJECT_BINARY_DIR}/coopmat_probe)
  file(MAKE_DIRECTORY ${dir})
  file(WRITE ${dir}/probe.comp "#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint TM = 16;
layout(binding = 0) buffer B { float b[]; };
shared float16_t s[TM * TM];
void main() {
    coopmat<float16_t, gl_ScopeSubgroup, TM, TM, gl_MatrixUseA> a;
    coopmat<float16_t, gl_ScopeSubgroup, TM, TM, gl_MatrixUseB> m;
    coopmat<float, gl_ScopeSubgroup, TM, TM, gl_MatrixUseAccumulator> c =
        coopmat<float, gl_ScopeSubgroup, TM, TM, gl_MatrixUseAccumulator>(0.0);
    coopMatLoad(a, s, 0, TM, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(m, s, 0, TM, gl_CooperativeMatrixLayoutColumnMajor);
    c = coopMatMulAdd(a, m, c);
    coopMatStore(c, b, 0, TM, gl_CooperativeMatrixLayoutRowMajor);
}
")
  execute_process(COMMAND ${compiler} --quiet -V --target-env vulkan1.1 -o ${dir}/probe.spv ${dir}/probe.comp
                  RESULT_VARIABLE r1 OUTPUT_QUIET ERROR_QUIET)
  set(ok OFF)
  if(r1 EQUAL 0)
    execute_process(COMMAND ${validator} --target-env vulkan1.1 ${dir}/probe.spv
                    RESULT_VARIABLE r2 OUTPUT_QUIET ERROR_QUIET)
    if(r2 EQUAL 0)
      set(ok ON)
    endif()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

if(VKLLM_COOPMAT)
  set(candidates "")
  if(VKLLM_COOPMAT_GLSLANG)
    list(APPEND candidates "given")
  else()
    find_program(VKLLM_SYSTEM_GLSLANG NAMES glslang glslangValidator)
    if(VKLLM_SYSTEM_GLSLANG)
      list(APPEND candidates "system")
    endif()
    if(VKLLM_MESA26_FOUND)
      list(APPEND candidates "mesa26")
    endif()
  endif()
  foreach(c ${candidates})
    if(c STREQUAL "given")
      set(compiler ${VKLLM_COOPMAT_GLSLANG})
      set(validator ${VKLLM_COOPMAT_SPIRV_VAL})
      if(NOT validator)
        set(validator ${SPIRV_VAL})
      endif()
    elseif(c STREQUAL "system")
      set(compiler ${VKLLM_SYSTEM_GLSLANG})
      set(validator ${SPIRV_VAL})
    else()
      set(compiler ${mesa26_exec} "${VKLLM_MESA26_DIR}/root/usr/bin/glslang")
      set(validator ${mesa26_exec} "${VKLLM_MESA26_DIR}/root/usr/bin/spirv-val")
    endif()
    vkllm_coopmat_probe("${compiler}" "${validator}" works)
    if(works)
      set(VKLLM_HAVE_COOPMAT_SHADERS ON)
      set(VKLLM_COOPMAT_COMPILER ${compiler})
      set(VKLLM_COOPMAT_VALIDATOR ${validator})
      break()
    endif()
  endforeach()
  if(VKLLM_HAVE_COOPMAT_SHADERS)
    list(JOIN VKLLM_COOPMAT_COMPILER " " shown)
    message(STATUS "vkllm cooperative-matrix shaders: built with ${shown}")
  else()
    message(STATUS "vkllm cooperative-matrix shaders: NOT built: no glslang here compiles "
                   "GL_KHR_cooperative_matrix (Debian 12's cannot; `scripts/mesa26 fetch` "
                   "provides Debian 13's). Prefill runs the tiled kernels on every device.")
  endif()
else()
  message(STATUS "vkllm cooperative-matrix shaders: off (VKLLM_COOPMAT=OFF)")
endif()
