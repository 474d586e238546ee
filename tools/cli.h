// Commands of the vkllm tool that live in their own files.
#pragma once

// vkllm run: generate from a prompt. argv[0] is "run".
int cmd_run(int argc, char **argv);
// vkllm chat: an interactive conversation through the model's chat template.
int cmd_chat(int argc, char **argv);
