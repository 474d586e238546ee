// Renders a Hugging Face chat template (Jinja) the way transformers' apply_chat_template does
// with jinja2: an immutable sandbox with trim_blocks, lstrip_blocks, loop controls, the
// {% generation %} tag, Python's tojson, and the globals raise_exception, strftime_now, dict,
// namespace and range. Nothing reaches files, the environment or the clock unless asked
// (strftime_now without a fixed time reads the clock), and every render is bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_value.h"

namespace vkllm::chat {

struct RenderOptions {
    // What strftime_now formats: seconds since the epoch, read as UTC. None: the clock, local time.
    std::optional<int64_t> now;
    size_t max_output_bytes = size_t(16) << 20;  // also any one string or JSON text
    uint64_t max_steps = 10'000'000;  // statements, expressions, loop iterations, values compared
    int max_nesting = 100;            // brackets, operators and blocks in the source
    int max_call_depth = 100;         // macros calling macros
};

// Renders source with context (a dict: the template's variables). Throws vkllm::Error
// (VKLLM_ERR_INVALID_ARGUMENT) whose message is the template's raise_exception text, or
// "line L, column C: ..." for a syntax error, or Python's message for a failure on the data
// ("TypeError: ...", "UndefinedError: ..."), or names the limit a render ran into; out of
// memory is VKLLM_ERR_OUT_OF_HOST_MEMORY. No other exception escapes.
std::string render_template(std::string_view source, const Value &context,
                            const RenderOptions &options = {});

}  // namespace vkllm::chat
