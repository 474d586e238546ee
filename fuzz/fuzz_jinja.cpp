// The Jinja interpreter (src/chat) on arbitrary templates. The input is split at its first NUL
// byte: a template, then the JSON text of its variables (ignored when it does not parse). A
// render may fail, but only with vkllm::Error: anything else escaping, a crash, a leak or a
// hang is a bug. The budget is smaller than the library's default so that runs stay fast.
#include <cstddef>
#include <cstdint>
#include <string>

#include "chat/jinja.h"
#include "chat/json_value.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string input(reinterpret_cast<const char *>(data), size);
    size_t nul = input.find('\0');
    std::string source = input.substr(0, nul);
    vkllm::chat::Value context = vkllm::chat::make_dict();
    if (nul != std::string::npos) {
        try {
            context = vkllm::chat::parse_json(input.substr(nul + 1));
        } catch (const vkllm::Error &) {
        }
    }
    vkllm::chat::RenderOptions options;
    options.now = 1768478400;
    options.max_steps = 200000;
    options.max_output_bytes = 1 << 20;
    try {
        vkllm::chat::render_template(source, context, options);
    } catch (const vkllm::Error &) {
    }
    return 0;
}
