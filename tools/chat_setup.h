// What vkllm chat checks before its first prompt: the chat template (the model's, --template's
// or --chat-template-file's, else chatml with a notice) renders a first turn, and --tools is a
// JSON array of tools that the template writes into the prompt; --chat-template-kwargs is a
// JSON object. A problem is found here, named by the option that caused it, not after the user
// has typed a line.
#pragma once

#include <cstdio>

#include "generate_options.h"
#include "vkllm.h"

namespace vkllm_tool {

// What chat's --help adds to the options it shares with run: -n's default, the fallback
// template, and the built-in names (a "NAME: ..." line that tests/check_cli_readme.py checks
// README against).
void print_chat_notes(FILE *out);

// `--template help` (or `list`): prints each built-in template, what it stands for and whether
// it writes tools.
void print_builtin_templates(FILE *out);

// Picks and checks the template and the tools for `model`; argv is chat's, for the names of
// files in messages. 0 when the chat can start, else the exit status after a message on stderr:
// 2 for an option's template or tools, 1 when the model's own template fails.
int prepare_chat_template(Options &o, const vkllm_model *model, int argc, char **argv);

}  // namespace vkllm_tool
