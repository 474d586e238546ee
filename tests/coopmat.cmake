# The cooperative-matrix path on Debian 13's lavapipe (Mesa 26, VK_KHR_cooperative_matrix 8x8x8)
# under Debian 13's validation layer: scripts/mesa26 runs the test binaries with that driver as
# the only one and VK_LAYER_PATH on its layers, and VKLLM_COOPMAT=on makes the library take the
# coopmat kernels on that CPU device (auto takes them on GPUs only). Registered where
# cmake/coopmat.cmake found the cache of scripts/mesa26 and built the *_coopmat shaders with a
# glslang that compiles them; elsewhere Mesa 22's suites run alone, as before.
#
# Only what the coopmat path changes runs here: its kernels, and the model tests whose prefill
# goes through them. Decode, the tokenizer, the API and the host code are the same on both
# drivers and run once, on the system's lavapipe.
if(NOT VKLLM_MESA26_FOUND OR NOT VKLLM_HAVE_COOPMAT_SHADERS)
  return()
endif()

set(VKLLM_MESA26_RUN ${PROJECT_SOURCE_DIR}/scripts/mesa26 run --)
set(VKLLM_COOPMAT_ENV "VKLLM_COOPMAT=on;VKLLM_MESA26_DIR=${VKLLM_MESA26_DIR}")

# name: Coopmat.<name>; binary: a test target; filter: its gtest filter. A filter that selects no
# test fails the test (gtest itself would pass it): a renamed suite must not pass unseen.
function(vkllm_coopmat_test name binary filter)
  add_test(NAME Coopmat.${name}
           COMMAND ${VKLLM_MESA26_RUN} $<TARGET_FILE:${binary}> --gtest_brief=1
                   --gtest_filter=${filter})
  set_tests_properties(Coopmat.${name} PROPERTIES ENVIRONMENT "${VKLLM_COOPMAT_ENV}"
                       FAIL_REGULAR_EXPRESSION "\\[==========\\] 0 tests from" TIMEOUT 900 ${ARGN})
endfunction()

# The loader names the layer it loads: Debian 13's, from the cache, not the system's. self-check
# compares every kernel the device takes, the coopmat ones among them, with the CPU.
if(TARGET vkllm_cli)
  add_test(NAME Coopmat.SelfCheckUnderDebian13sValidationLayer
           COMMAND sh -c "VK_LOADER_DEBUG=layer ${PROJECT_SOURCE_DIR}/scripts/mesa26 run -- $<TARGET_FILE:vkllm_cli> self-check --validate 2>&1; echo \"exit $?\"")
  set_tests_properties(Coopmat.SelfCheckUnderDebian13sValidationLayer PROPERTIES
    ENVIRONMENT "${VKLLM_COOPMAT_ENV}"
    PASS_REGULAR_EXPRESSION "${VKLLM_MESA26_DIR}/root/usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so.*kernels checked, 0 failed.*validation: 0 errors.*\nexit 0\n$")
endif()

# The coopmat kernel suites (tests/test_kernels_*.cpp): the matmul of every weight type on
# ragged shapes, the flash attention over tile edges, windows, sinks, KV types, the expert
# matmuls of mixture-of-experts prefill.
vkllm_coopmat_test(KernelSuites test_kernels "MatmulCoopmat*:AttentionCoopmat*:MoeCoopmat*")
# What a device with cooperative matrices reports, VKLLM_COOPMAT's choice and the mask that
# hides them (on Mesa 22 these tests skip: its lavapipe has none).
vkllm_coopmat_test(DevicesReportAndChooseThem test_coopmat_choice "Coopmat*")

# Every tiny model of the test data prefilled (its whole teacher-forced sequence in one
# chunk, so every matrix product and the attention take the coopmat kernels): logits within
# the f16-operand bound of the float64 reference and the same greedy ids.
vkllm_coopmat_test(TinyModelsMatchTheFloat64Reference test_generation
                   "SharedReference.EveryTinyModelPrefilled*")
# The tiny model of every architecture (Gemma's, Phi-3's, OLMo's ... beside the shared ones),
# prompts of 7 and 30 ids prefilled: greedy ids as llama.cpp's or the float64 pass's.
vkllm_coopmat_test(TinyArchitecturesMatchLlamaCpp test_tiny_llamacpp
                   "EveryArchitecture/TinyArchAgainstLlamaCpp.*")
# The real Gemma 3 270M (Q4_K_M: Q4_K, Q5_0, Q6_K, Q8_0 weights, heads of 256) against
# llama.cpp: its 1,480-token prompt past its sliding window. The short prompts of Gemma and of
# SmolLM2 (Q4_1, heads of 64) are left to Mesa 22: each is a prompt of a few dozen tokens and 64
# decode steps (640 per model, 1-2 min here), whose decode kernels are the same on both drivers;
# their prefill's coopmat products are the kernel suites' (every weight type, Q4_1 included)
# and the tiny architectures' (llama's among them) above.
vkllm_coopmat_test(RealModelsMatchLlamaCpp test_real_model_generation
                   "RealModelGeneration.Gemma3LongPrompt*")

# The GPU script's QUICK dry run (tools/llamacpp_reference/side_by_side.sh): devices, the coopmat
# kernel tests listed, self-check, a one-layer Qwen2.5-0.5B-shaped file benched at pp64/tg16
# (llama.cpp's columns empty: no llama_bench here), its JSON and Markdown written and read back.
if(TARGET vkllm_cli AND Python3_FOUND)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/gpu_script)
  add_test(NAME GpuScript.QuickDryRunOnLavapipe26
           COMMAND sh -c "rm -rf ${out} && QUICK=1 OUT=${out}/out WORK=${out}/work VKLLM_CLI=$<TARGET_FILE:vkllm_cli> VKLLM_TEST_KERNELS=$<TARGET_FILE:test_kernels> VKLLM_RUNNER='${PROJECT_SOURCE_DIR}/scripts/mesa26 run --' bash ${PROJECT_SOURCE_DIR}/tools/llamacpp_reference/side_by_side.sh > /dev/null 2>&1; rc=$?; cat ${out}/out/side_by_side.md; ${Python3_EXECUTABLE} -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"runs\"][0]; p=r[\"vkllm\"][0]; print(\"json:\", p[\"test\"], p[\"flops_per_token\"] > 0, \"tune rc\", r[\"tune\"][\"rc\"], r[\"vkllm_tg_tuned_chained\"][\"test\"])' ${out}/out/side_by_side.json; rm -rf ${out}/work; echo \"exit $rc\"")
  set_tests_properties(GpuScript.QuickDryRunOnLavapipe26 PROPERTIES
    ENVIRONMENT "${VKLLM_COOPMAT_ENV}" TIMEOUT 420
    PASS_REGULAR_EXPRESSION "^Device: llvmpipe [^\n]*\nCoopmat kernel tests: rc 0, [0-9]+ coopmat kernel tests listed[^\n]*self-check: rc 0.\n\n\\| file \\|[^\n]*\n[^\n]*\n\\| q05-Q8_0 \\| [0-9.e+-]+ \\| [0-9]+ ± [0-9]+ \\| [0-9.e+-]+ \\| +\\| +\\| +\\| [0-9]+ ± [0-9]+ \\| +\\| +\\|\n\n\\| file \\| tg16 [^\n]*\n[^\n]*\n\\| q05-Q8_0 \\| [0-9]+ ± [0-9]+ \\| [0-9]+ ± [0-9]+ \\| [0-9]+ ± [0-9]+ \\| [0-9]+ ± [0-9]+ \\| +\\| +\\| +\\| [0-9.]+ us -> [0-9.]+ us \\|\n.*json: pp64 True tune rc 0 tg16 chain16\nexit 0\n$")
endif()
