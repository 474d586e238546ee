# The tests of the aarch64 cross build (tests/CMakeLists.txt includes this instead of the rest of
# its own list when cross-compiling for aarch64): run under qemu-user by scripts/test-arm64, each
# program through CMAKE_CROSSCOMPILING_EMULATOR. The host-only tests, those that need no Vulkan
# device, chosen for what an ARM build can break where x86-64 hides it: char is unsigned, and
# byte-level code (GGUF, quant blocks, UTF-8, the regex engine, GBNF, Jinja, JSON) that read a
# char as signed takes other branches there; floating-point contraction into fused multiply-adds
# (the samplers, the dequantizers).
# Left out: everything that opens a device (kernels, generation, sessions): Debian 12's arm64
# lavapipe is 13 times slower under qemu and its LLVM fails on the half-float shaders
# (docs/PLATFORMS.md has the measurements).

# One ctest per program, running all of its tests in one process: under qemu each start of a
# program costs a tenth of a second, and several programs load the same vocabularies or corpora
# for each of their tests (for the list here, 335 s one ctest per test against 145 s one per
# program, on one core).
function(vkllm_arm64_gtest name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE vkllm_reference GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${VKLLM_TEST_WARNINGS})
  add_test(NAME Arm64.${name} COMMAND ${name} --gtest_brief=1)
endfunction()

vkllm_arm64_gtest(test_format test_gguf.cpp)
vkllm_arm64_gtest(test_architecture_table test_architecture_table.cpp)
vkllm_arm64_gtest(test_quant test_quant.cpp test_gguf_writer.cpp)
vkllm_arm64_gtest(test_tokenizer test_tokenizer.cpp test_chat_template.cpp)
vkllm_arm64_gtest(test_tokenizer_spm test_tokenizer_spm.cpp)
vkllm_arm64_gtest(test_tokenizer_wordpiece test_tokenizer_wordpiece.cpp)
vkllm_arm64_gtest(test_tokenizer_text test_unicode.cpp test_pretokenize.cpp test_regex.cpp)
vkllm_arm64_gtest(test_tokenizer_llamacpp test_tokenizer_llamacpp.cpp)
vkllm_arm64_gtest(test_chat test_jinja.cpp test_jinja_json.cpp test_jinja_hostile.cpp
                  test_jinja_templates.cpp test_reply_parser.cpp)
vkllm_arm64_gtest(test_grammar test_grammar.cpp test_grammar_state.cpp test_grammar_vocab.cpp
                  test_grammar_sampling.cpp)
vkllm_arm64_gtest(test_json_schema test_json_schema.cpp test_json_schema_errors.cpp)
# GCC 12's false -Wmaybe-uninitialized inside libstdc++'s std::regex (tests/CMakeLists.txt).
set_source_files_properties(test_json_schema.cpp PROPERTIES
  COMPILE_OPTIONS "$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
# The samplers on host logits (test_sampler.cpp alone: its siblings in the native build's
# program run sessions). The CPU reference's own checks against numpy (test_reference_forward)
# are left out: they test the tests' reference, not the library, and take 150 s here.
vkllm_arm64_gtest(test_sampler test_sampler.cpp)
vkllm_arm64_gtest(test_tiny_archs test_tiny_archs.cpp)

# The C API through the shared library: files and tokenizers without a device, and the argument
# checks; the runtime itself only where no driver is found (there is none for aarch64 here).
foreach(name test_gguf_api test_tokenizer_api test_api test_no_device)
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE vkllm GTest::gtest_main)
  target_compile_options(${name} PRIVATE ${VKLLM_TEST_WARNINGS})
endforeach()
target_link_libraries(test_gguf_api PRIVATE vkllm_reference)
target_link_libraries(test_tokenizer_api PRIVATE vkllm_reference)
target_compile_definitions(test_api PRIVATE VKLLM_TEST_DATA_DIR="${VKLLM_TEST_DATA_DIR}")
add_test(NAME Arm64.test_gguf_api COMMAND test_gguf_api --gtest_brief=1)
add_test(NAME Arm64.test_tokenizer_api COMMAND test_tokenizer_api --gtest_brief=1)
add_test(NAME Arm64.test_api COMMAND test_api --gtest_brief=1
         --gtest_filter=Version.*:Status.*:Errors.*-Errors.SuccessClearsTheLastError)
add_test(NAME Arm64.test_no_device COMMAND test_no_device --gtest_brief=1)
set_tests_properties(Arm64.test_no_device PROPERTIES ENVIRONMENT
  "VK_DRIVER_FILES=/nonexistent/vkllm_no_driver.json;VK_ICD_FILENAMES=/nonexistent/vkllm_no_driver.json")

add_executable(test_abi_layout test_abi_layout.c)
set_target_properties(test_abi_layout PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_include_directories(test_abi_layout PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_options(test_abi_layout PRIVATE -std=c99 -pedantic -Wall -Wextra -Werror)
add_test(NAME Abi.PublicStructLayoutIsPinned COMMAND test_abi_layout)

# The fuzzers' seeds written on aarch64 are byte for byte those in fuzz/corpus.
add_executable(vkllm_write_fuzz_seeds ${PROJECT_SOURCE_DIR}/fuzz/write_seeds.cpp)
target_link_libraries(vkllm_write_fuzz_seeds PRIVATE vkllm_reference)
target_compile_options(vkllm_write_fuzz_seeds PRIVATE ${VKLLM_TEST_WARNINGS})
target_compile_definitions(vkllm_write_fuzz_seeds
                           PRIVATE VKLLM_JSON_SCHEMA_CORPUS="${CMAKE_CURRENT_SOURCE_DIR}/data/json_schema")
list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " emulator)
add_test(NAME Fuzz.SeedCorporaAreWhatTheSeedWriterWrites
         COMMAND sh -c "rm -rf seeds && ${emulator} $<TARGET_FILE:vkllm_write_fuzz_seeds> seeds && diff -r seeds ${PROJECT_SOURCE_DIR}/fuzz/corpus && echo same"
         WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(Fuzz.SeedCorporaAreWhatTheSeedWriterWrites PROPERTIES PASS_REGULAR_EXPRESSION "same")
