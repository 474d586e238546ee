// tool_choice "required" or a named function: a grammar that makes the reply one tool call, in
// the call syntax the model's template taught it, with arguments its tool's JSON schema
// accepts (docs/SERVER.md).
#pragma once

#include <memory>

#include "request_parse.h"
#include "server_context.h"
#include "vkllm.h"

namespace serve {

// Refuses (RequestError on tool_choice) a reply format whose calls are not JSON objects
// (Mistral's [TOOL_CALLS] control token, harmony's channels) and tools whose parameters the
// schema converter cannot enforce.
std::shared_ptr<const vkllm_grammar> tool_call_grammar(const ServerContext &ctx,
                                                       const ChatRequest &request);

}  // namespace serve
