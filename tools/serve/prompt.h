// From a parsed request to the engine's input: the chat template's prompt tokenized as
// `vkllm run --chat` tokenizes it, a completion prompt, the grammar of a response_format, and
// max_tokens fitted to the context. Problems are RequestErrors naming the field.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "request_parse.h"
#include "server_context.h"

namespace serve {

std::vector<int32_t> tokenize(const vkllm_tokenizer *tokenizer, const std::string &text,
                              uint32_t flags);

// The text of tokens (special tokens rendered when `special`); "" for ids outside the
// vocabulary.
std::string detokenize(const vkllm_tokenizer *tokenizer, const std::vector<int32_t> &tokens,
                       bool special);

struct ChatPrompt {
    std::vector<int32_t> tokens;
    bool opens_reasoning = false;  // the template ended the prompt inside a reasoning block
};

ChatPrompt chat_prompt(const ServerContext &ctx, const ChatRequest &request);

// The prompt of /v1/completions, and its text (for echo).
std::vector<int32_t> completion_prompt(const ServerContext &ctx, const CompletionRequest &r,
                                       std::string *text);

// The grammar of a JSON schema for the model's vocabulary.
std::shared_ptr<const vkllm_grammar> schema_grammar(const ServerContext &ctx,
                                                    const std::string &schema);

// Refuses a prompt that leaves no room in a slot's context (code context_length_exceeded), or
// max_tokens asked beyond it; sets max_tokens to what fits when it was not asked.
void fit_to_context(const ServerContext &ctx, CommonFields &common, const char *prompt_param);

}  // namespace serve
