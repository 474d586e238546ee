# Tests of the command-line tool (tools/), when it is built: each command's help and options,
# its output against the library's and independent references, and its errors. include()d from
# tests/CMakeLists.txt, where VKLLM_TEST_DATA_DIR and the test helpers are set.
if(TARGET vkllm_cli)
  add_test(NAME Tool.SelfCheckUnderValidation COMMAND vkllm_cli self-check --validate)
  # Every command has its own help; --version and -V print the version.
  foreach(cmd run chat devices info tokenize bench-tokenizer bench-grammar self-check quantize make-model bench
              embed similarity version)
    add_test(NAME Tool.HelpOf.${cmd}
             COMMAND sh -c "$<TARGET_FILE:vkllm_cli> ${cmd} --help; echo \"exit $?\"")
    set_tests_properties(Tool.HelpOf.${cmd} PROPERTIES PASS_REGULAR_EXPRESSION
                         "^usage: vkllm ${cmd}[ \n].*\nexit 0\n$")
  endforeach()
  add_test(NAME Tool.HelpCommandIsTheCommandsHelp
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> help bench; echo \"exit $?\"")
  set_tests_properties(Tool.HelpCommandIsTheCommandsHelp PROPERTIES PASS_REGULAR_EXPRESSION
                       "^usage: vkllm bench .*--chain N .*\nexit 0\n$")
  add_test(NAME Tool.VersionFlagsPrintTheVersion
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> --version && $<TARGET_FILE:vkllm_cli> -V")
  set_tests_properties(Tool.VersionFlagsPrintTheVersion PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm ${PROJECT_VERSION}\nvkllm ${PROJECT_VERSION}\n$")
  # Command lines refused before anything loads (the model file need not exist): exit status
  # 2 and a message naming the option, never a value read as 0 or a flag silently ignored.
  set(VKLLM_RUN_NOTHING "$<TARGET_FILE:vkllm_cli> run -m ${CMAKE_CURRENT_BINARY_DIR}/none.gguf -p hi")
  add_test(NAME Tool.RunRefusesValuesThatAreNotNumbersInRange
           COMMAND sh -c "for a in '-n abc' '--temp abc' '-c -1' '--prompt-ids 1,abc' '--top-p 0.9x' '--seed -2' '-b 0'; do ${VKLLM_RUN_NOTHING} $a; echo \"exit $?\"; done 2>&1")
  set_tests_properties(Tool.RunRefusesValuesThatAreNotNumbersInRange PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "^vkllm: run: -n expects a whole number from 0 to 4294967295, not \"abc\"\nexit 2\nvkllm: run: --temp expects a number, not \"abc\"\nexit 2\nvkllm: run: -c expects a whole number from 0 to 4294967295, not \"-1\"\nexit 2\nvkllm: run: --prompt-ids expects token ids [^\n]*, not \"1,abc\"\nexit 2\nvkllm: run: --top-p expects a number, not \"0.9x\"\nexit 2\nvkllm: run: --seed expects [^\n]*, not \"-2\"\nexit 2\nvkllm: run: -b expects a whole number from 1 to [0-9]+, not \"0\"\nexit 2\n$")
  add_test(NAME Tool.RunRefusesChatOptionsWithoutChat
           COMMAND sh -c "${VKLLM_RUN_NOTHING} --system 'be brief'; echo \"exit $?\"; ${VKLLM_RUN_NOTHING} --template chatml; echo \"exit $?\"")
  set_tests_properties(Tool.RunRefusesChatOptionsWithoutChat PROPERTIES PASS_REGULAR_EXPRESSION
                       "--system applies to the chat template: add --chat\nexit 2\n.*--template applies to the chat template: add --chat\nexit 2")
  add_test(NAME Tool.ErrorsNameFlagsNotMacros
           COMMAND sh -c "${VKLLM_RUN_NOTHING} --kv-f32 --kv-q8; echo \"exit $?\"")
  set_tests_properties(Tool.ErrorsNameFlagsNotMacros PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm: run: --kv-f32 and --kv-q8 exclude each other\nexit 2\n$")
  add_test(NAME Tool.ChatRefusesRunsPromptOptions
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> chat -m ${CMAKE_CURRENT_BINARY_DIR}/none.gguf -p hi; echo \"exit $?\"")
  set_tests_properties(Tool.ChatRefusesRunsPromptOptions PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm: chat: -p is an option of vkllm run; chat reads its turns from stdin\nexit 2\n$")
  add_test(NAME Tool.UnknownOptionsAndMissingValuesNameTheCommand
           COMMAND sh -c "${VKLLM_RUN_NOTHING} -n; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> info --bogus; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> devices --device 0; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> bench -m x -r 0; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> make-model --preset gpt2-124m --layers abc x.gguf; echo \"exit $?\"")
  set_tests_properties(Tool.UnknownOptionsAndMissingValuesNameTheCommand PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "vkllm: run: -n is missing its value[^\n]*\nexit 2\nvkllm: info: unknown option --bogus [^\n]*\nexit 2\nvkllm: devices: unknown option --device [^\n]*\nexit 2\nvkllm: bench: -r expects a whole number from 1 to [0-9]+, not \"0\"\n[^\n]*\nexit 2\nvkllm: make-model: --layers expects a whole number from 1 to 4096, not \"abc\"\nexit 2\n$")
  # Which stage failed: the device before the model file.
  add_test(NAME Tool.RunSaysWhichStageFailed
           COMMAND sh -c "${VKLLM_RUN_NOTHING} --device no-such-device; echo \"exit $?\"; ${VKLLM_RUN_NOTHING}; echo \"exit $?\"")
  set_tests_properties(Tool.RunSaysWhichStageFailed PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm: opening the device: [^\n]*no-such-device[^\n]*\nexit 1\nvkllm: loading the model: [^\n]*none.gguf[^\n]*\nexit 1\n$")
  # A directory where a file belongs: refused with its name, and no errno left over from an
  # earlier call ("Inappropriate ioctl for device" came from isatty).
  add_test(NAME Tool.DirectoriesAreRefusedByName
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> run -m ${CMAKE_CURRENT_BINARY_DIR} -p hi; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> run -m none.gguf -f ${CMAKE_CURRENT_BINARY_DIR}; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> tokenize -m none.gguf --file ${CMAKE_CURRENT_BINARY_DIR}; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> bench-tokenizer -m none.gguf --file ${CMAKE_CURRENT_BINARY_DIR}; echo \"exit $?\"")
  set_tests_properties(Tool.DirectoriesAreRefusedByName PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm: loading the model: I/O error: [^\n]*/tests is not a regular file\nexit 1\nvkllm: run: -f: [^\n]*/tests is not a regular file\nexit 2\nvkllm: tokenize: [^\n]*/tests is not a regular file\nexit 1\nvkllm: bench-tokenizer: [^\n]*/tests is not a regular file\nexit 1\n$")
  # bench-grammar on the GPT-2 vocabulary: the JSON text replayed under the JSON grammar, a
  # choice of labels, and a text the grammar refuses, named by its token (fields, never times).
  set(VKLLM_GPT2_VOCAB ${VKLLM_TEST_DATA_DIR}/tokenizer/llama.cpp-vocab/ggml-vocab-gpt-2.gguf)
  set(VKLLM_GRAMMAR_DATA ${CMAKE_CURRENT_SOURCE_DIR}/data/grammar)
  add_test(NAME Tool.BenchGrammarReplaysATextAndReportsEachCost
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench-grammar -m ${VKLLM_GPT2_VOCAB} --grammar-file ${VKLLM_GRAMMAR_DATA}/json.gbnf --text ${VKLLM_GRAMMAR_DATA}/sample.json -r 1; echo \"exit $?\"; $<TARGET_FILE:vkllm_cli> bench-grammar -m ${VKLLM_GPT2_VOCAB} --choices 200 -r 1; echo \"exit $?\"")
  set(VKLLM_BENCH_GRAMMAR_FIELDS "vocabulary: 50257 tokens, trie of [0-9]+ nodes \\([0-9.]+ MiB\\), built in [0-9]+ ms\ngrammar: [^\n]*\ntext: [0-9]+ bytes, [0-9]+ tokens replayed\ncheck-first per token \\(token_allowed \\+ advance\\): mean [0-9.]+ us, median [0-9.]+ us, max [0-9.]+ us\nmask per token: mean [0-9.]+ ms, median [0-9.]+ ms, max [0-9.]+ ms \\(before token [0-9]+, '[^\n]*'\\)\nallowed tokens per mask: mean [0-9]+, median [0-9]+, min [0-9]+, max [0-9]+\ntimes: best of 1 replays per token, each replay from a fresh state\nexit 0\n")
  set_tests_properties(Tool.BenchGrammarReplaysATextAndReportsEachCost PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "^${VKLLM_BENCH_GRAMMAR_FIELDS}${VKLLM_BENCH_GRAMMAR_FIELDS}$")
  add_test(NAME Tool.BenchGrammarNamesTheTokenWhereTheGrammarRefusesTheText
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench-grammar -m ${VKLLM_GPT2_VOCAB} --grammar-file ${VKLLM_GRAMMAR_DATA}/json.gbnf --text ${VKLLM_GRAMMAR_DATA}/json.gbnf; echo \"exit $?\"" )
  set_tests_properties(Tool.BenchGrammarNamesTheTokenWhereTheGrammarRefusesTheText PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "^vkllm: bench-grammar: the grammar refuses the text at token 0 \\(id [0-9]+, '#'\\) after 0 bytes; the text must be one the grammar accepts\nexit 1\n$")
  # README's command-line block names every option of every command's --help, and nothing else.
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    add_test(NAME Tool.ReadmeListsEveryOptionOfEveryCommand
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_cli_readme.py
                     $<TARGET_FILE:vkllm_cli> ${PROJECT_SOURCE_DIR}/README.md)
  endif()
  # vkllm serve runs vkllm-serve from beside it, whose argument errors come before anything
  # loads (exit 2, the option named).
  if(TARGET vkllm_serve)
    add_test(NAME Tool.ServeRunsTheServerBesideItAndRefusesBadCommandLines
             COMMAND sh -c "for a in '-m x --parallel 0' '--port 8080' '-m x --port 65536' '-m x --api-key a --api-key-file f' '-m x --api-key-file ${CMAKE_CURRENT_BINARY_DIR}/no-key' '-m x --bogus 1'; do $<TARGET_FILE:vkllm_cli> serve $a 2>&1; echo \"exit $?\"; done")
    set_tests_properties(Tool.ServeRunsTheServerBesideItAndRefusesBadCommandLines PROPERTIES
                         PASS_REGULAR_EXPRESSION
                         "^vkllm serve: --parallel 0: expected a whole number from 1 to 256\nexit 2\nvkllm serve: -m MODEL is required \\(vkllm serve --help\\)\nexit 2\nvkllm serve: --port 65536: expected a whole number from 0 to 65535\nexit 2\nvkllm serve: --api-key and --api-key-file: give one of them\nexit 2\nvkllm serve: --api-key-file: cannot read [^\n]*/no-key\nexit 2\nvkllm serve: --bogus: unknown option \\(vkllm serve --help lists them\\)\nexit 2\n$")
  endif()
  # vkllm embed and similarity: argument errors before anything loads (exit 2, the option named).
  set(VKLLM_NO_MODEL ${CMAKE_CURRENT_BINARY_DIR}/none.gguf)
  add_test(NAME Tool.EmbedRefusesBadCommandLines
           COMMAND sh -c "for a in '-m ${VKLLM_NO_MODEL} --pooling max x' '-m ${VKLLM_NO_MODEL} --max-tokens -1 x' '-m ${VKLLM_NO_MODEL}' 'x' '-m ${VKLLM_NO_MODEL} -f f x'; do out=$($<TARGET_FILE:vkllm_cli> embed $a 2>&1); rc=$?; echo \"$out\" | head -1; echo \"exit $rc\"; done; out=$($<TARGET_FILE:vkllm_cli> similarity -m ${VKLLM_NO_MODEL} --query q -f f --pooling none 2>&1); rc=$?; echo \"$out\" | head -1; echo \"exit $rc\"")
  set_tests_properties(Tool.EmbedRefusesBadCommandLines PROPERTIES PASS_REGULAR_EXPRESSION
                       "^vkllm: embed: --pooling expects none, mean, cls or last, not \"max\"\nexit 2\nvkllm: embed: --max-tokens expects a whole number from 0 to 4294967295, not \"-1\"\nexit 2\nvkllm: embed: no input: give TEXT arguments or -f FILE\nexit 2\nvkllm: embed: -m FILE is required\nexit 2\nvkllm: embed: TEXT and -f FILE exclude each other\nexit 2\nvkllm: similarity: --pooling none gives no single vector to compare\nexit 2\n$")
  # ... and their output on the tiny bert encoder (tests/check_embed_cli.py).
  if(Python3_FOUND)
    add_test(NAME Tool.EmbedAndSimilarity
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_embed_cli.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-bert-mean-f32.gguf
                     ${CMAKE_CURRENT_BINARY_DIR}/embed_cli)
  endif()
  # vkllm template: the 720 template x conversation pairs as jinja2 renders them, and the
  # template's own message with status 1 when it raises or does not parse.
  set(VKLLM_CHAT_TEMPLATES ${VKLLM_TEST_DATA_DIR}/chat-templates)
  if(Python3_FOUND)
    add_test(NAME Tool.TemplateRendersEveryPairAsJinja2
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_template_cli.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_CHAT_TEMPLATES})
  endif()
  add_test(NAME Tool.InfoDescribesARealModel
           COMMAND vkllm_cli info -m ${VKLLM_TEST_DATA_DIR}/models/stories260K-plctlab.gguf)
  set_tests_properties(Tool.InfoDescribesARealModel PROPERTIES PASS_REGULAR_EXPRESSION
                       "architecture +llama.*layers +5.*blk.4.ffn_up.weight +F32 +64 x 172")
  add_test(NAME Tool.TokenizePrintsIdsLikeLlamaTokenize
           COMMAND vkllm_cli tokenize -m
                   ${VKLLM_TEST_DATA_DIR}/tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf
                   "Hello world")
  set_tests_properties(Tool.TokenizePrintsIdsLikeLlamaTokenize PROPERTIES
                       PASS_REGULAR_EXPRESSION "^\\[1, 15043, 3186\\]")
  add_test(NAME Tool.TokenizeJsonWithPiecesWithoutBos
           COMMAND vkllm_cli tokenize --json --pieces --no-bos -m
                   ${VKLLM_TEST_DATA_DIR}/tokenizer/llama.cpp-vocab/ggml-vocab-llama-spm.gguf
                   "Hello world")
  set_tests_properties(Tool.TokenizeJsonWithPiecesWithoutBos PROPERTIES PASS_REGULAR_EXPRESSION
                       "^{\"ids\": \\[15043, 3186\\], \"pieces\": \\[\" Hello\", \" world\"\\]}")
  # A real Llama 2 file (random weights): text streams after the prompt; statistics go to stderr.
  add_test(NAME Tool.RunStreamsTextFromLlama2TinyRandom
           COMMAND vkllm_cli run -m ${VKLLM_TEST_DATA_DIR}/models/llama-2-tiny-random.gguf
                   -p "Hello world" -n 8 --temp 0 --validate)
  set_tests_properties(Tool.RunStreamsTextFromLlama2TinyRandom PROPERTIES PASS_REGULAR_EXPRESSION
                       "^Hello world [^\n]+\n.*decode 8 tokens .*command buffers recorded 2")
  add_test(NAME Tool.RunPrintsGeneratedIdsForScripts
           COMMAND vkllm_cli run -m ${VKLLM_TEST_DATA_DIR}/models/stories260K-plctlab.gguf
                   --prompt-ids 1 -n 8 --temp 0 --kv-f32 --print-ids)
  # llama2.c's run.c greedy ids from BOS (reference-stories260K-plctlab.json).
  set_tests_properties(Tool.RunPrintsGeneratedIdsForScripts PROPERTIES PASS_REGULAR_EXPRESSION
                       "461,461,401,401,401,461,378,455\n")
  add_test(NAME Tool.ChatReusesTheCacheBetweenTurns
           COMMAND sh -c "printf 'hello there\\nand again\\n' | $<TARGET_FILE:vkllm_cli> chat -m ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf --template chatml -n 8 --temp 0")
  set_tests_properties(Tool.ChatReusesTheCacheBetweenTurns PROPERTIES PASS_REGULAR_EXPRESSION
                       "prefilled 20 new tokens of 20;.*prefilled [0-9] new tokens of [0-9][0-9];")
  set(VKLLM_RUN_QWEN2
      "$<TARGET_FILE:vkllm_cli> run -m ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf --temp 0")
  # The tiny model's greedy continuation of token 89 ends at <|im_end|> (318) after a few
  # tokens; with --ignore-eos the same tokens come, then 318, then more, up to -n.
  add_test(NAME Tool.RunIgnoreEosGeneratesThroughTheEndToken
           COMMAND sh -c "a=$(${VKLLM_RUN_QWEN2} --print-ids --prompt-ids 89 -n 8 2>/dev/null) && b=$(${VKLLM_RUN_QWEN2} --print-ids --prompt-ids 89 -n 8 --ignore-eos 2>/dev/null) && echo \"stopped $a\" && echo \"through $b\" && case $b in $a,318,*) echo 'the same tokens, then the end token' ;; esac")
  set_tests_properties(Tool.RunIgnoreEosGeneratesThroughTheEndToken PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "stopped [0-9,]+\nthrough [0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+\nthe same tokens, then the end token")
  # -f FILE: the file's text but its final newline is the prompt, as llama.cpp reads it.
  set(VKLLM_PROMPT_FILE ${CMAKE_CURRENT_BINARY_DIR}/prompt.txt)
  add_test(NAME Tool.RunReadsThePromptFromAFileLikeLlamaCpp
           COMMAND sh -c "printf 'Hello world\\n' > ${VKLLM_PROMPT_FILE} && a=$(${VKLLM_RUN_QWEN2} -f ${VKLLM_PROMPT_FILE} -n 4 2>/dev/null) && b=$(${VKLLM_RUN_QWEN2} -p 'Hello world' -n 4 2>/dev/null) && rm -f ${VKLLM_PROMPT_FILE} && [ \"$a\" = \"$b\" ] && echo \"the same as -p: $a\"")
  set_tests_properties(Tool.RunReadsThePromptFromAFileLikeLlamaCpp PROPERTIES
                       PASS_REGULAR_EXPRESSION "^the same as -p: Hello world.")
  # --pipeline-cache, listed for every device command, works with run (the file is written).
  set(VKLLM_RUN_CACHE ${CMAKE_CURRENT_BINARY_DIR}/run-pipeline-cache.bin)
  add_test(NAME Tool.RunKeepsPipelinesInTheCacheFile
           COMMAND sh -c "rm -f ${VKLLM_RUN_CACHE}; ${VKLLM_RUN_QWEN2} -p hi -n 2 --pipeline-cache ${VKLLM_RUN_CACHE} > /dev/null 2>&1; echo \"exit $?\"; [ -s ${VKLLM_RUN_CACHE} ] && echo 'cache written'; rm -f ${VKLLM_RUN_CACHE}")
  set_tests_properties(Tool.RunKeepsPipelinesInTheCacheFile PROPERTIES PASS_REGULAR_EXPRESSION
                       "^exit 0\ncache written\n$")
  add_test(NAME Tool.RunNamesAMissingPromptFile
           COMMAND sh -c "${VKLLM_RUN_QWEN2} -f ${CMAKE_CURRENT_BINARY_DIR}/missing-prompt.txt; echo \"exit $?\"")
  set_tests_properties(Tool.RunNamesAMissingPromptFile PROPERTIES PASS_REGULAR_EXPRESSION
                       "vkllm: run: -f: cannot open .*missing-prompt.txt: No such file.*exit 2")
  # A context beyond the model's is refused naming the flag, not the API's field.
  add_test(NAME Tool.RunRefusesAContextBeyondTheModelsNamingTheFlag
           COMMAND sh -c "${VKLLM_RUN_QWEN2} -p hi -c 100000; echo \"exit $?\"")
  set_tests_properties(Tool.RunRefusesAContextBeyondTheModelsNamingTheFlag PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "vkllm: -c 100000 is more than the 256 positions the model was trained for\nexit 1\n$")
  # A full context ends the text: a final newline, the statistics, a note, exit status 0.
  set(VKLLM_RUN_FULL ${CMAKE_CURRENT_BINARY_DIR}/run-full-context)
  add_test(NAME Tool.RunEndsCleanlyWhenTheContextFills
           COMMAND sh -c "${VKLLM_RUN_QWEN2} -p hi -c 16 -n 100 --ignore-eos > ${VKLLM_RUN_FULL}.out 2> ${VKLLM_RUN_FULL}.err; echo \"exit $?\"; tail -c 1 ${VKLLM_RUN_FULL}.out | od -An -c; cat ${VKLLM_RUN_FULL}.err; rm -f ${VKLLM_RUN_FULL}.out ${VKLLM_RUN_FULL}.err")
  set_tests_properties(Tool.RunEndsCleanlyWhenTheContextFills PROPERTIES PASS_REGULAR_EXPRESSION
                       "^exit 0\n +\\\\n\n.*prefill 2 tokens [^\n]*decode 15 tokens [^\n]*\nvkllm: run: the context of 16 tokens is full; the answer ends after 15 tokens")
  # ^C during an answer, a full context, /reset, /exit, multi-line input, ^C at the prompt,
  # ^D and --context-shift, typed into a pseudo-terminal; line editing where built.
  if(Python3_FOUND)
    add_test(NAME Tool.RunOptionsOfLlamaCppWork
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_run_options.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    add_test(NAME Tool.RunFollowsGrammarsAndJsonSchemasAndNamesTheirErrors
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_grammar_cli.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    add_test(NAME Tool.RunUnderAGrammarPrintsACompleteAnswerOrExits3
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_unfinished_grammar.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    add_test(NAME Tool.RunSeedsRandomlyChecksSamplingRangesAndBenchTakesLists
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_run_surprises.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    add_test(NAME Tool.RunJsonlPrintsEachTokensLogprobsAsJsonLines
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli_logprobs_json.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    # Template and --tools problems at startup, the chatml fallback (the tiny model and
    # Gemma 3 270M have no template), -n unlimited unless given.
    add_test(NAME Tool.ChatChecksItsTemplateAndToolsAtStartupAndAnswersToTheEnd
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/chat_template_cli.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
    set_tests_properties(Tool.ChatChecksItsTemplateAndToolsAtStartupAndAnswersToTheEnd
                         PROPERTIES PASS_REGULAR_EXPRESSION "chat templates at startup: 0 failures")
    add_test(NAME Tool.ChatSurvivesCtrlCAndAFullContextInATerminal
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/chat_pty.py
                     $<TARGET_FILE:vkllm_cli> ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf)
  endif()
  vkllm_gtest(test_quantize_tool test_quantize_tool.cpp)
  target_compile_definitions(test_quantize_tool PRIVATE VKLLM_CLI="$<TARGET_FILE:vkllm_cli>")
  add_dependencies(test_quantize_tool vkllm_cli)
  add_test(NAME Tool.QuantizePrintsEachTensorAndASummary
           COMMAND vkllm_cli quantize ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f32.gguf
                   ${CMAKE_CURRENT_BINARY_DIR}/tiny-qwen2-q4_k_m.gguf Q4_K_M)
  set_tests_properties(Tool.QuantizePrintsEachTensorAndASummary PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "blk.1.attn_v.weight +256 x 128 +F32 +-> Q6_K\n.*blk.1.ffn_down.weight .*-> Q8_0 .*output.weight +256 x 320 +F32 +-> Q6_K\nquantized 16 of 27 tensors to Q4_K_M: 4604288 bytes .* -> [0-9]+ bytes .* in [0-9.]+ s")
  # tune prints the tuner's log (each shape's candidates with their times, the default marked,
  # and its pick) and a summary, and keeps the winners in the tune file beside
  # --pipeline-cache; bench with the same --pipeline-cache runs them and says so. The tiny
  # model's decode multiplies by 5 shapes of matrix.
  set(VKLLM_TUNE_MODEL ${VKLLM_TEST_DATA_DIR}/models/tiny-qwen2-f16.gguf)
  set(VKLLM_TUNE_CACHE ${CMAKE_CURRENT_BINARY_DIR}/tune-pipelines.bin)
  add_test(NAME Tool.TuneKeepsTheWinnersBesideThePipelineCacheAndBenchRunsThem
           COMMAND sh -c "rm -f ${VKLLM_TUNE_CACHE} ${VKLLM_TUNE_CACHE}.tune; $<TARGET_FILE:vkllm_cli> tune -m ${VKLLM_TUNE_MODEL} --pipeline-cache ${VKLLM_TUNE_CACHE} --validate; echo \"exit $?\"; test -s ${VKLLM_TUNE_CACHE}.tune && echo 'the tune file is there'; $<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_TUNE_MODEL} --pipeline-cache ${VKLLM_TUNE_CACHE} -p 4 -n 2 -r 1; echo \"exit $?\"; rm -f ${VKLLM_TUNE_CACHE} ${VKLLM_TUNE_CACHE}.tune")
  set_tests_properties(Tool.TuneKeepsTheWinnersBesideThePipelineCacheAndBenchRunsThem PROPERTIES
                       PASS_REGULAR_EXPRESSION
                       "tuning [^\n]*tiny-qwen2-f16.gguf on device [0-9]+: [^\n]+\n(tune: [^\n]+\n)*tune: matvec F16 256x384 \\(2 per step\\):   wg=[0-9]+ rows=[0-9]+ (subgroup|shared) +[0-9.]+ us  \\(default\\)\n(tune: [^\n]+\n)*tune: matvec F16 512x256 \\(2 per step\\): picked wg=[0-9]+ rows=[0-9]+ (subgroup|shared): [0-9.]+ us \\(default [0-9.]+ us\\)\ntuned 5 shapes: [1-9][0-9]* candidates timed, 0 rejected, [0-9]+ shapes changed\ndecode matrix-vector time per token: [0-9.]+ us -> [0-9.]+ us \\([0-9.]+x as fast\\), tuning took [0-9]+ ms\ntune file: [^\n]*tune-pipelines.bin.tune \\(read by run, chat and bench [^\n]*\nvalidation: 0 errors, [0-9]+ warnings\nexit 0\nthe tune file is there\n.*\\| [^|\n]*, tuned [1-9][0-9]* shapes +\\| pp4 .*\\| tg2 .*\nexit 0\n$")
  add_test(NAME Tool.TuneNeedsAModel COMMAND sh -c "$<TARGET_FILE:vkllm_cli> tune; echo \"exit $?\"")
  set_tests_properties(Tool.TuneNeedsAModel PROPERTIES PASS_REGULAR_EXPRESSION
                       "vkllm: tune: -m FILE is required\nusage: vkllm tune -m FILE .*exit 2\n$")
  # make-model and bench. One layer and a few tokens keep each test short on lavapipe; the
  # embeddings keep their real size. A test that ends with `echo "exit $?"` checks the exit
  # status too (with PASS_REGULAR_EXPRESSION ctest ignores it).
  set(VKLLM_MADE_GPT2 ${CMAKE_CURRENT_BINARY_DIR}/made-gpt2-124m-1l-q8_0.gguf)
  add_test(NAME Tool.MakeModelWritesGpt2Shape
           COMMAND vkllm_cli make-model --preset gpt2-124m --layers 1 --type Q8_0 --seed 7
                   ${VKLLM_MADE_GPT2})
  set_tests_properties(Tool.MakeModelWritesGpt2Shape PROPERTIES FIXTURES_SETUP VkllmMadeGpt2
                       PASS_REGULAR_EXPRESSION
                       "gpt2-124m with 1 of 12 layers, Q8_0, 16 tensors, 46473216 parameters")
  add_test(NAME Tool.MakeModelIsReproducible
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset gpt2-124m --layers 1 --type Q8_0 --seed 7 ${VKLLM_MADE_GPT2}.again > /dev/null && cmp ${VKLLM_MADE_GPT2} ${VKLLM_MADE_GPT2}.again; rc=$?; rm -f ${VKLLM_MADE_GPT2}.again; exit $rc")
  add_test(NAME Tool.InfoDescribesAMadeModel COMMAND vkllm_cli info -m ${VKLLM_MADE_GPT2})
  set_tests_properties(Tool.InfoDescribesAMadeModel PROPERTIES PASS_REGULAR_EXPRESSION
                       "architecture +gpt2.*layers +1\n.*gpt2.attention.layer_norm_epsilon +1e-05.*position_embd.weight +Q8_0 +768 x 1024.*blk.0.attn_qkv.weight +Q8_0 +768 x 2304")
  # The built-in vocabulary: bytes, then the merged tokens (" the" is the sixth).
  add_test(NAME Tool.MakeModelByteVocabularyTokenizes
           COMMAND vkllm_cli tokenize -m ${VKLLM_MADE_GPT2} " the")
  set_tests_properties(Tool.MakeModelByteVocabularyTokenizes PROPERTIES PASS_REGULAR_EXPRESSION
                       "^\\[261\\]")
  add_test(NAME Tool.BenchPrintsATableRow
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 8 -n 4 -r 1; echo \"exit $?\"")
  set_tests_properties(Tool.BenchPrintsATableRow PROPERTIES PASS_REGULAR_EXPRESSION
                       "\\| model +\\| type +\\| +size \\| +params \\| backend +\\| test +\\| +t/s \\|\n.*\\| gpt2 46M +\\| Q8_0 +\\| +47.12 MiB \\| +46.47 M \\| .*\\| pp8 +\\| +[0-9.]+ ± [0-9.]+ \\|\n.*\\| tg4 +\\| +[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  add_test(NAME Tool.BenchWithoutKvCache
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 8 -n 4 -r 1 --no-kv-cache; echo \"exit $?\"")
  set_tests_properties(Tool.BenchWithoutKvCache PROPERTIES PASS_REGULAR_EXPRESSION
                       "tg4 no-kv .*[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  # Batched decode: 3 sequences decoded together, tokens/s over all of them.
  add_test(NAME Tool.BenchBatchedDecode
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 4 -n 3 -r 1 -s 3; echo \"exit $?\"")
  set_tests_properties(Tool.BenchBatchedDecode PROPERTIES PASS_REGULAR_EXPRESSION
                       "\\| pp4 x3 +\\| +[0-9.]+ ± [0-9.]+ \\|\n.*\\| tg3 x3 +\\| +[0-9.]+ ± [0-9.]+ \\|")
  # --profile: a table of device time per kernel for each test, the matrix products in it.
  add_test(NAME Tool.BenchProfilesKernels
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 4 -n 2 -r 1 --profile; echo \"exit $?\"")
  set_tests_properties(Tool.BenchProfilesKernels PROPERTIES PASS_REGULAR_EXPRESSION
                       "tg2: device time per token, by kernel\n\n\\| kernel \\| dispatches/token \\| ms/token .*\\| matvec[_a-z]* \\| [0-9.]+ \\| [0-9.]+ \\|.*\\| all kernels \\| \\| [0-9.]+ \\| of [0-9.]+ ms/token wall-clock")
  add_test(NAME Tool.BenchJson
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 4 -n 2 -r 2 --json --no-warmup; echo \"exit $?\"")
  set_tests_properties(Tool.BenchJson PROPERTIES PASS_REGULAR_EXPRESSION
                       "^{\"model\": \"gpt2 46M\", \"type\": \"Q8_0\", \"size\": [0-9]+, \"params\": 46473216, \"test\": \"pp4\", \"n_prompt\": 4, \"n_gen\": 0, \"kv_cache\": true, \"samples_ts\": \\[[0-9.e+-]+, [0-9.e+-]+\\], \"avg_ts\": [0-9.e+-]+, \"stddev_ts\": [0-9.e+-]+, \"device\": \"[^\"]+\", \"coopmat\": (null|\"[0-9]+x[0-9]+x[0-9]+ f16\\*f16\\+f32->f32\"), \"tuned_shapes\": 0, \"flops_per_token\": [0-9]+, \"tflops\": [0-9.e+-]+}\n{\"model\": .*\"test\": \"tg2\", \"n_prompt\": 4, \"n_gen\": 2, \"kv_cache\": true, .*}\nexit 0")
  add_test(NAME Tool.BenchRefusesMoreThanTheTrainedContext
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> bench -m ${VKLLM_MADE_GPT2} -p 1000 -n 100; echo \"exit $?\"")
  set_tests_properties(Tool.BenchRefusesMoreThanTheTrainedContext PROPERTIES
                       PASS_REGULAR_EXPRESSION "1100 tokens is more than the 1024 positions.*exit 1")
  set_tests_properties(Tool.MakeModelIsReproducible Tool.InfoDescribesAMadeModel
                       Tool.MakeModelByteVocabularyTokenizes Tool.BenchPrintsATableRow
                       Tool.BenchWithoutKvCache Tool.BenchJson Tool.BenchBatchedDecode
                       Tool.BenchProfilesKernels
                       Tool.BenchRefusesMoreThanTheTrainedContext
                       PROPERTIES FIXTURES_REQUIRED VkllmMadeGpt2)
  # The other presets load and run (their files are large even with one layer: removed after).
  # gemma3-1b is gemma3-270m's architecture in another shape: not run here.
  foreach(preset qwen2.5-0.5b qwen2.5-1.5b llama-3.2-1b gemma2-2b gemma3-270m olmo2-1b
                 smollm3-3b granite-3.3-2b)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/made-${preset}-1l.gguf)
    add_test(NAME Tool.MakeModelRuns.${preset}
             COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset ${preset} --layers 1 --type Q8_0 ${out} && $<TARGET_FILE:vkllm_cli> bench -m ${out} -p 4 -n 2 -r 1; rc=$?; rm -f ${out}; echo \"exit $rc\"")
    set_tests_properties(Tool.MakeModelRuns.${preset} PROPERTIES PASS_REGULAR_EXPRESSION
                         "with 1 of [0-9]+ layers, Q8_0.*\\| tg2 +\\| +[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  endforeach()
  # Mixture of experts: Qwen1.5-MoE's layer (60 experts of 1408 and a shared expert) loads and
  # runs; Q4_0 keeps the 151936-row embedding and head small (~25 s in all). gpt-oss-20b and
  # gpt-oss-20b-dense are not run here: with one layer their files are still 1-2 GiB (a 201088
  # x 2880 embedding and head whatever the vocabulary), ~50 s to write and run.
  set(out ${CMAKE_CURRENT_BINARY_DIR}/made-qwen2moe-a2.7b-1l.gguf)
  add_test(NAME Tool.MakeModelRuns.qwen2moe-a2.7b
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset qwen2moe-a2.7b --layers 1 --type Q4_0 ${out} && $<TARGET_FILE:vkllm_cli> info -m ${out} && $<TARGET_FILE:vkllm_cli> bench -m ${out} -p 4 -n 2 -r 1; rc=$?; rm -f ${out}; echo \"exit $rc\"")
  set_tests_properties(Tool.MakeModelRuns.qwen2moe-a2.7b PROPERTIES PASS_REGULAR_EXPRESSION
                       "with 1 of 24 layers, Q4_0, 20 tensors.*experts +60, 4 used per token.*qwen2moe.expert_shared_feed_forward_length 5632.*blk.0.ffn_gate_inp.weight +F32 +2048 x 60.*blk.0.ffn_down_exps.weight +Q4_0 +1408 x 2048 x 60.*output.weight +Q4_0 +2048 x 151936.*\\| tg2 +\\| +[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  # Qwen3-30B-A3B's layer (128 experts of 768, 8 per token, per-head q/k norms of 128) loads
  # and runs, in Q4_0 as above.
  set(out ${CMAKE_CURRENT_BINARY_DIR}/made-qwen3-30b-a3b-1l.gguf)
  add_test(NAME Tool.MakeModelRuns.qwen3-30b-a3b
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset qwen3-30b-a3b --layers 1 --type Q4_0 ${out} && $<TARGET_FILE:vkllm_cli> info -m ${out} && $<TARGET_FILE:vkllm_cli> bench -m ${out} -p 4 -n 2 -r 1; rc=$?; rm -f ${out}; echo \"exit $rc\"")
  set_tests_properties(Tool.MakeModelRuns.qwen3-30b-a3b PROPERTIES PASS_REGULAR_EXPRESSION
                       "with 1 of 48 layers, Q4_0, .*experts +128, 8 used per token.*qwen3moe.expert_feed_forward_length +768\n.*blk.0.attn_q_norm.weight +F32 +128 .*blk.0.ffn_down_exps.weight +Q4_0 +768 x 2048 x 128.*\\| tg2 +\\| +[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  # --type MXFP4 (GPT-OSS's scheme, make-model's own): FFN matrices MXFP4, the rest F16; the
  # library runs the file.
  set(out ${CMAKE_CURRENT_BINARY_DIR}/made-gpt2-mxfp4.gguf)
  add_test(NAME Tool.MakeModelMxfp4PutsTheFfnInMxfp4
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset gpt2-124m --layers 1 --type mxfp4 ${out} && $<TARGET_FILE:vkllm_cli> info -m ${out} && $<TARGET_FILE:vkllm_cli> bench -m ${out} -p 4 -n 2 -r 1; rc=$?; rm -f ${out}; echo \"exit $rc\"")
  set_tests_properties(Tool.MakeModelMxfp4PutsTheFfnInMxfp4 PROPERTIES PASS_REGULAR_EXPRESSION
                       "with 1 of 12 layers, MXFP4,.*general.file_type +38\n.*token_embd.weight +F16 .*blk.0.attn_qkv.weight +F16 .*blk.0.ffn_up.weight +MXFP4 +768 x 3072.*blk.0.ffn_down.weight +MXFP4 +3072 x 768.*\\| tg2 +\\| +[0-9.]+ ± [0-9.]+ \\|\n\n(pp[^\n]* TFLOPS\n)+\ntime to first token: [0-9.]+ ms [^\n]*\nexit 0")
  add_test(NAME Tool.MakeModelListsPresetsAndTypes COMMAND vkllm_cli make-model --help)
  set_tests_properties(Tool.MakeModelListsPresetsAndTypes PROPERTIES PASS_REGULAR_EXPRESSION
                       "NAME: gpt2-124m .*gpt-oss-20b qwen2moe-a2.7b qwen3-30b-a3b smollm3-3b granite-3.3-2b gpt-oss-20b-dense phi-4-mini gemma2-2b gemma3-270m gemma3-1b olmo2-1b\nTYPE: .* MXFP4\n")
  # --vocab copies the real tokenizer: "Hello world" is GPT-2's [15496, 995].
  set(out ${CMAKE_CURRENT_BINARY_DIR}/made-gpt2-vocab.gguf)
  add_test(NAME Tool.MakeModelCopiesARealVocabulary
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset gpt2-124m --layers 1 --vocab ${VKLLM_TEST_DATA_DIR}/tokenizer/llama.cpp-vocab/ggml-vocab-gpt-2.gguf ${out} && $<TARGET_FILE:vkllm_cli> tokenize -m ${out} 'Hello world'; rc=$?; rm -f ${out}; echo \"exit $rc\"")
  set_tests_properties(Tool.MakeModelCopiesARealVocabulary PROPERTIES PASS_REGULAR_EXPRESSION
                       "vocabulary of 50257 tokens.*\n\\[15496, 995\\]\nexit 0")
  add_test(NAME Tool.MakeModelRefusesAVocabularyLargerThanTheEmbedding
           COMMAND sh -c "$<TARGET_FILE:vkllm_cli> make-model --preset gpt2-124m --layers 1 --vocab ${VKLLM_TEST_DATA_DIR}/tokenizer/generated-vocab/ggml-vocab-qwen2.5.gguf ${CMAKE_CURRENT_BINARY_DIR}/made-refused.gguf; echo \"exit $?\"")
  set_tests_properties(Tool.MakeModelRefusesAVocabularyLargerThanTheEmbedding PROPERTIES
                       PASS_REGULAR_EXPRESSION "has 151936 tokens, more than the 50257 rows.*exit 1")
  add_test(NAME Tool.ListsDevices COMMAND vkllm_cli devices)
  set_tests_properties(Tool.ListsDevices PROPERTIES PASS_REGULAR_EXPRESSION "0: ")
  # Each device's cooperative matrices: used (with the kernels' shape), none, or why not; the
  # mask hides them and says so.
  add_test(NAME Tool.DevicesSayWhetherPrefillRunsOnCooperativeMatrices COMMAND vkllm_cli devices)
  set_tests_properties(Tool.DevicesSayWhetherPrefillRunsOnCooperativeMatrices PROPERTIES
    PASS_REGULAR_EXPRESSION "\n   cooperative matrix: (used, [0-9]+x[0-9]+x[0-9]+ f16\\*f16\\+f32->f32|none|not used: [^\n]+)\n")
  add_test(NAME Tool.DevicesSayTheMaskHidesCooperativeMatrices COMMAND vkllm_cli devices)
  set_tests_properties(Tool.DevicesSayTheMaskHidesCooperativeMatrices PROPERTIES
    ENVIRONMENT "VKLLM_VULKAN_MASK_FEATURES=VK_KHR_cooperative_matrix"
    PASS_REGULAR_EXPRESSION "\n   cooperative matrix: none \\(hidden by VKLLM_VULKAN_MASK_FEATURES\\)\n"
    FAIL_REGULAR_EXPRESSION "cooperative matrix: (used|not used)")
  add_test(NAME Tool.DevicesRefuseAMisspeltVkllmCoopmat
           COMMAND sh -c "VKLLM_COOPMAT=yes $<TARGET_FILE:vkllm_cli> devices; echo \"exit $?\"")
  set_tests_properties(Tool.DevicesRefuseAMisspeltVkllmCoopmat PROPERTIES PASS_REGULAR_EXPRESSION
    "^vkllm: listing devices: invalid argument: VKLLM_COOPMAT is \"yes\"; it takes auto, on or off\nexit 1\n$")
endif()
