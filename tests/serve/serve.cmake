# vkllm serve end to end (tests/serve/), when it is built: the real openai client, 32 streaming
# clients at once, hostile HTTP on raw sockets, and the chat page in headless chromium. Each
# test starts its own `vkllm-serve --port 0 --validate` on SmolLM2 (skipped, exit 77, where the
# model cache lacks it) and writes the server's stderr, and the page's screenshot, to
# build/tests/serve. The openai package and playwright-core come from scripts/deps.sh's
# vkllm_install_serve_deps (build/pydeps-serve, build/node-serve); jsonschema and gguf-py from
# vkllm_install_pydeps.
if(TARGET vkllm_serve AND TARGET vkllm_cli AND VKLLM_SYSTEM_PYTHON)
  set(VKLLM_SERVE_TEST_OUT ${CMAKE_CURRENT_BINARY_DIR}/serve)
  # NAME:SCRIPT:COST, the cost being the test's seconds on the 2-core lavapipe machine (ctest
  # starts the longest first; see the COST list at the end of tests/CMakeLists.txt).
  foreach(serve_test OpenAiClient:test_openai_client:50 Load:test_load:65
          HostileHttp:test_hostile_http:25 ChatPageInChromium:test_chat_page:12)
    string(REPLACE ":" ";" serve_pair ${serve_test})
    list(GET serve_pair 0 serve_name)
    list(GET serve_pair 1 serve_script)
    list(GET serve_pair 2 serve_cost)
    add_test(NAME Serve.${serve_name}
             COMMAND ${VKLLM_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/serve/${serve_script}.py
                     $<TARGET_FILE:vkllm_serve> $<TARGET_FILE:vkllm_cli> ${VKLLM_SERVE_TEST_OUT})
    set_tests_properties(Serve.${serve_name} PROPERTIES
      ENVIRONMENT "PYTHONPATH=${VKLLM_PYDEPS}:${CMAKE_BINARY_DIR}/pydeps-serve;VKLLM_NODE_SERVE=${CMAKE_BINARY_DIR}/node-serve;PYTHONDONTWRITEBYTECODE=1"
      SKIP_RETURN_CODE 77 TIMEOUT 400 COST ${serve_cost})
  endforeach()
endif()
