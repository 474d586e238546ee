#include "chat/builtin_templates.h"

namespace vkllm::chat {

namespace {

constexpr std::string_view kChatml =
    "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + (m.content or '') + "
    "'<|im_end|>\\n' }}{% endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

constexpr std::string_view kLlama3 =
    "{{- bos_token or '' }}{%- for m in messages %}{{ '<|start_header_id|>' + m.role + "
    "'<|end_header_id|>\\n\\n' + (m.content or '') | trim + '<|eot_id|>' }}{% endfor %}"
    "{%- if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{% endif %}";

// GPT-OSS's system header with today's date; a first system or developer turn becomes the
// developer's instructions; assistant turns are final-channel answers.
constexpr std::string_view kHarmony =
    "{{- '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\\n"
    "Knowledge cutoff: 2024-06\\nCurrent date: ' + strftime_now('%Y-%m-%d') + '\\n\\nReasoning: "
    "' + (reasoning_effort or 'medium') + '\\n\\n# Valid channels: analysis, commentary, final. "
    "Channel must be included for every message.<|end|>' }}"
    "{%- set first = 0 %}{%- if messages and messages[0].role in ['system', 'developer'] %}"
    "{{- '<|start|>developer<|message|># Instructions\\n\\n' + messages[0].content + "
    "'\\n\\n<|end|>' }}{%- set first = 1 %}{%- endif %}"
    "{%- for m in messages[first:] %}"
    "{%- if m.role == 'assistant' %}{{ '<|start|>assistant<|channel|>final<|message|>' + "
    "(m.content or '') }}{{ '<|return|>' if loop.last and not add_generation_prompt else "
    "'<|end|>' }}"
    "{%- else %}{{ '<|start|>' + m.role + '<|message|>' + (m.content or '') + '<|end|>' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|start|>assistant' }}{% endif %}";

}  // namespace

std::string_view builtin_template(std::string_view name) {
    if (name == "chatml" || name == "qwen" || name == "qwen2") return kChatml;
    if (name == "llama3") return kLlama3;
    if (name == "harmony" || name == "gpt-oss") return kHarmony;
    return {};
}

}  // namespace vkllm::chat
