# The tests of the Windows build (tests/CMakeLists.txt includes this instead of the rest of its
# own list when WIN32): run under Wine by scripts/test-windows, each program through
# CMAKE_CROSSCOMPILING_EMULATOR. A subset, chosen for what a Windows build can break: the C API
# across a DLL boundary, the kernels on Wine's Vulkan, generation against llama.cpp's reference
# ids, tokenizers, chat templates, grammars, the files the library opens, maps and writes, the
# Vulkan 1.1 cap through winevulkan, and the install tree as a mingw program uses it.
# Left out: the command-line tool's tests (shell and Python drivers) but one, the native install
# and binding tests, and the slower model-family tests of test_generation.

# Each program runs through tests/wine_run.sh, which starts it again only when Wine exited
# before the program wrote anything (Harness.WineRunnerRetriesOnlyAFailureThatWroteNothing).
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_SOURCE_DIR}/wine_run.sh ${VKLLM_WINE})

# VK_LAYER_KHRONOS_validation cannot be loaded inside Wine: the tests ask for none
# (tests/validation.h) and scripts/test-windows runs the host's beneath winevulkan, whose
# messages (printed by the layer itself) fail the test.
set(VKLLM_WINDOWS_TEST_PROPERTIES ENVIRONMENT VKLLM_TEST_HOST_VALIDATION=1
    FAIL_REGULAR_EXPRESSION "Validation (Error|Warning)")
set(VKLLM_GTEST_PROPERTIES PROPERTIES ${VKLLM_WINDOWS_TEST_PROPERTIES})

# The kernels (every shader against the CPU reference) and the layers beneath the C API.
vkllm_gtest(test_kernels test_kernels_matmul.cpp test_kernels_norm.cpp test_kernels_rope.cpp
            test_kernels_elementwise.cpp test_kernels_attention.cpp test_kernels_argmax.cpp
            test_kernels_quant.cpp test_kernels_moe.cpp test_kernels_logprobs.cpp
            test_kernels_sampling.cpp)
vkllm_gtest(test_format test_gguf.cpp)
vkllm_gtest(test_architecture_table test_architecture_table.cpp)
vkllm_gtest(test_portability test_portability.cpp)
vkllm_gtest(test_vulkan11 test_vulkan11.cpp)
vkllm_gtest(test_session_state test_session_state.cpp)
vkllm_gtest(test_generation test_generation.cpp test_generation_loop.cpp
            test_generation_reference.cpp)
vkllm_gtest(test_tokenizer test_tokenizer.cpp test_chat_template.cpp)
vkllm_gtest(test_tokenizer_spm test_tokenizer_spm.cpp)
vkllm_gtest(test_tokenizer_wordpiece test_tokenizer_wordpiece.cpp)
vkllm_gtest(test_tokenizer_text test_unicode.cpp test_pretokenize.cpp test_regex.cpp)
vkllm_gtest(test_chat test_jinja.cpp test_jinja_json.cpp test_jinja_hostile.cpp
            test_jinja_templates.cpp test_builtin_templates.cpp test_reply_parser.cpp)
vkllm_gtest(test_grammar test_grammar.cpp test_grammar_state.cpp test_grammar_vocab.cpp
            test_grammar_sampling.cpp)
vkllm_gtest(test_json_schema test_json_schema.cpp test_json_schema_errors.cpp)
# GCC 12's false -Wmaybe-uninitialized inside libstdc++'s std::regex (tests/CMakeLists.txt).
set_source_files_properties(test_json_schema.cpp PROPERTIES
  COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")

# The C API through vkllm.dll, from C++ and from C, and from C through the static archive.
add_executable(test_api test_api.cpp)
target_link_libraries(test_api PRIVATE vkllm GTest::gtest_main)
target_compile_options(test_api PRIVATE ${VKLLM_TEST_WARNINGS})
target_compile_definitions(test_api PRIVATE VKLLM_TEST_DATA_DIR="${VKLLM_TEST_DATA_DIR}")
gtest_discover_tests(test_api DISCOVERY_MODE PRE_TEST ${VKLLM_GTEST_PROPERTIES})
foreach(name test_gguf_api test_tokenizer_api)
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE vkllm vkllm_reference GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${VKLLM_TEST_WARNINGS})
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST ${VKLLM_GTEST_PROPERTIES})
endforeach()
add_executable(test_c_api test_c_api.c)
target_link_libraries(test_c_api PRIVATE vkllm)
set_target_properties(test_c_api PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(test_c_api PRIVATE -std=c99 -pedantic -Wall -Wextra -Werror)
add_test(NAME CApi.HeaderIsC99AndApiWorksFromC COMMAND test_c_api)
add_executable(test_c_api_static test_c_api.c)
target_link_libraries(test_c_api_static PRIVATE vkllm_static)
target_compile_options(test_c_api_static PRIVATE -std=c99 -pedantic -Wall -Wextra -Werror)
set_target_properties(test_c_api_static PROPERTIES LINKER_LANGUAGE CXX)
add_test(NAME CApi.StaticLibraryWorksFromC COMMAND test_c_api_static)
add_executable(test_abi_compat test_abi_compat.c)
target_link_libraries(test_abi_compat PRIVATE vkllm)
set_target_properties(test_abi_compat PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(test_abi_compat PRIVATE -std=c99 -pedantic -Wall -Wextra -Werror)
add_test(NAME Abi.OlderSmallerParamsStructsKeepWorking
         COMMAND test_abi_compat ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)

# vkllm.dll exports vkllm_* and nothing else (its export table, read with objdump).
find_program(VKLLM_OBJDUMP NAMES ${CMAKE_CXX_COMPILER_TARGET}-objdump x86_64-w64-mingw32-objdump
             objdump)
add_test(NAME SharedLibrary.DllExportsOnlyVkllmSymbols
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_dll_exports.sh ${VKLLM_OBJDUMP}
                 $<TARGET_FILE:vkllm>)

# The example an application starts from, linked with vkllm.dll.
if(TARGET vkllm_example_generate)
  add_test(NAME Examples.GenerateStreamsText
           COMMAND vkllm_example_generate ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf
                   "Hello world" 8)
  set_tests_properties(Examples.GenerateStreamsText PROPERTIES PASS_REGULAR_EXPRESSION
                       "^Hello world[^\n]+\n.*8 generated in ")
endif()

set_tests_properties(CApi.HeaderIsC99AndApiWorksFromC CApi.StaticLibraryWorksFromC
                     Abi.OlderSmallerParamsStructsKeepWorking PROPERTIES
                     ${VKLLM_WINDOWS_TEST_PROPERTIES})

# The install tree as a mingw-w64 application uses it: vkllm.dll in bin/, libvkllm.dll.a,
# vkllm.pc and the CMake package in lib/, both defining VKLLM_SHARED for dllimport; a program
# built through each, with this build's toolchain file for find_package, runs under Wine, and
# so do the installed vkllm.exe and, with VKLLM_STATIC, a program linked through
# vkllm-static.pc, both without vkllm.dll (tests/install_consumer/mingw.sh). The
# toolchain file is named as given on the command line, from the source folder (its own comment).
get_filename_component(VKLLM_TOOLCHAIN_FILE ${CMAKE_TOOLCHAIN_FILE} ABSOLUTE
                       BASE_DIR ${PROJECT_SOURCE_DIR})
add_test(NAME Install.MingwConsumersBuildWithPkgConfigAndFindPackage
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer/mingw.sh ${CMAKE_COMMAND}
                 ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_consumer_mingw
                 ${CMAKE_C_COMPILER} ${VKLLM_TOOLCHAIN_FILE} ${CMAKE_INSTALL_LIBDIR}
                 ${PROJECT_VERSION} ${VKLLM_WINE} ${VKLLM_OBJDUMP} ${VKLLM_STATIC}
                 ${VKLLM_BUILD_TOOLS})

# The tool, given a model under a folder named "Zoë": its arguments are read as UTF-16 and
# passed on as UTF-8 (tools/os.h), and the library opens the file through the wide calls. Wine
# turns the UTF-8 bytes of the host's command line into UTF-16 by the host's locale: UTF-8.
set(VKLLM_TINY_QWEN2 ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
if(TARGET vkllm_cli)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/Zoë")
  file(COPY ${VKLLM_TINY_QWEN2} DESTINATION ${dir})
  add_test(NAME Tool.InfoReadsAModelUnderANonAsciiPath
           COMMAND vkllm_cli info -m ${dir}/tiny-qwen2-f32.gguf)
  set_tests_properties(Tool.InfoReadsAModelUnderANonAsciiPath PROPERTIES
                       ENVIRONMENT LC_ALL=C.UTF-8 PASS_REGULAR_EXPRESSION "architecture +qwen2")
  # The tool's own reads (prompts, texts, grammars, schemas) open their UTF-8 names wide too:
  # the ids are those of the text "Zoë says hello" in the tiny model's byte-level vocabulary.
  file(WRITE "${dir}/prompt.txt" "Zoë says hello")
  add_test(NAME Tool.TokenizeReadsATextFileUnderANonAsciiPath
           COMMAND vkllm_cli tokenize -m ${dir}/tiny-qwen2-f32.gguf --json --file ${dir}/prompt.txt)
  set_tests_properties(Tool.TokenizeReadsATextFileUnderANonAsciiPath PROPERTIES
                       ENVIRONMENT LC_ALL=C.UTF-8
                       PASS_REGULAR_EXPRESSION "ids.: .90, 111, 195, 171, 263, 97, 121, 115, 32, 257, 295, 111.")
endif()
