// vkllm's own chat templates, for model files that carry none: ChatML (Qwen), Llama 3 and
// GPT-OSS's harmony, as Jinja run by the same interpreter as a model's own template.
#pragma once

#include <string_view>

namespace vkllm::chat {

// The template's Jinja text, or empty for an unknown name ("qwen", "qwen2" and "gpt-oss" name
// ChatML and harmony too).
std::string_view builtin_template(std::string_view name);

}  // namespace vkllm::chat
