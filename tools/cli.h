// Commands of the vkllm tool that live in their own files.
#pragma once

// vkllm run: generate from a prompt. argv[0] is "run".
int cmd_run(int argc, char **argv);
// vkllm chat: an interactive conversation through the model's chat template.
int cmd_chat(int argc, char **argv);
// vkllm quantize: rewrite a GGUF model with its matrices in another ggml type. argv[0] is
// "quantize".
int cmd_quantize(int argc, char **argv);
