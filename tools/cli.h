// Commands of the vkllm tool that live in their own files.
#pragma once

#include "vkllm.h"

// vkllm run: generate from a prompt. argv[0] is "run".
int cmd_run(int argc, char **argv);
// vkllm chat: an interactive conversation through the model's chat template.
int cmd_chat(int argc, char **argv);
// vkllm template: render a conversation with a chat template. argv[0] is "template".
int cmd_template(int argc, char **argv);
// vkllm quantize: rewrite a GGUF model with its matrices in another ggml type. argv[0] is
// "quantize".
int cmd_quantize(int argc, char **argv);
// vkllm make-model: write a random-weight GGUF with a real model's shape. argv[0] is
// "make-model".
int cmd_make_model(int argc, char **argv);
// vkllm bench: prompt-processing and generation speed, like llama-bench. argv[0] is "bench".
int cmd_bench(int argc, char **argv);
// vkllm bench-grammar: a grammar constraint's cost per token on a real vocabulary. argv[0] is
// "bench-grammar".
int cmd_bench_grammar(int argc, char **argv);
// vkllm embed: the embeddings of texts as JSON lines. argv[0] is "embed".
int cmd_embed(int argc, char **argv);
// vkllm similarity: the lines of a file ranked by cosine similarity with a query. argv[0] is
// "similarity".
int cmd_similarity(int argc, char **argv);
// vkllm serve: runs vkllm-serve from the directory of `program` (vkllm's argv[0]) with these
// arguments; argv[0] is "serve". Its help is printed here, whether or not the server was built.
int cmd_serve(int argc, char **argv, const char *program);
// vkllm tune: vkllm_runtime_tune on the model at model_path, on the runtime params' device,
// printing the tuner's log and a summary.
int cmd_tune(const char *model_path, vkllm_runtime_params params);
