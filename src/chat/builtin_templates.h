// vkllm's own chat templates, for model files that carry none or for a caller who names one:
// the formats of the common model families, each as Jinja run by the same interpreter as a
// model's own template, and each rendering as the real template it stands for renders
// (tests/test_builtin_templates.cpp compares them with jinja2's renders of those).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace vkllm::chat {

struct BuiltinTemplate {
    std::string_view name;
    std::string_view stands_for;  // the models whose template it renders as
    std::string_view source;      // Jinja
};

// Every built-in template, in the order they are listed to users.
const BuiltinTemplate *builtin_templates(size_t &count);

// The template's Jinja text, or empty for an unknown name. Aliases: "qwen" and "qwen2" name
// ChatML, "gpt-oss" harmony.
std::string_view builtin_template(std::string_view name);

// The names, comma-separated, for messages.
std::string builtin_template_names();

}  // namespace vkllm::chat
