# vkllm serve end to end (tests/serve/), when it is built: the real openai client, 32 streaming
# clients at once, hostile HTTP on raw sockets, and the chat page in headless chromium. Each
# test starts its own `vkllm-serve --port 0 --validate` on SmolLM2 (skipped, exit 77, where the
# model cache lacks it) and writes the server's stderr, and the page's screenshot, to
# build/tests/serve. The openai package and playwright-core come from scripts/deps.sh's
# vkllm_install_serve_deps (build/pydeps-serve, build/node-serve); jsonschema and gguf-py from
# vkllm_install_pydeps.
if(TARGET vkllm_serve AND TARGET vkllm_cli AND VKLLM_SYSTEM_PYTHON)
  set(VKLLM_SERVE_TEST_OUT ${CMAKE_CURRENT_BINARY_DIR}/serve)
  foreach(serve_test OpenAiClient:test_openai_client Load:test_load HostileHttp:test_hostile_http
          ChatPageInChromium:test_chat_page)
    string(REPLACE ":" ";" serve_pair ${serve_test})
    list(GET serve_pair 0 serve_name)
    list(GET serve_pair 1 serve_script)
    add_test(NAME Serve.${serve_name}
             COMMAND ${VKLLM_SYSTEM_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/serve/${serve_script}.py
                     $<TARGET_FILE:vkllm_serve> $<TARGET_FILE:vkllm_cli> ${VKLLM_SERVE_TEST_OUT})
    set_tests_properties(Serve.${serve_name} PROPERTIES
      ENVIRONMENT "PYTHONPATH=${VKLLM_PYDEPS}:${CMAKE_BINARY_DIR}/pydeps-serve;VKLLM_NODE_SERVE=${CMAKE_BINARY_DIR}/node-serve"
      SKIP_RETURN_CODE 77 TIMEOUT 400)
  endforeach()
endif()
